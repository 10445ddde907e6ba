#!/usr/bin/env bash
# compare on the simulated GPU with loaders that wait on I/O (sim train --io-ms), so that the
# gain of more workers does not depend on free cores: identical runs claim no change in any
# pair; a job 10 % slower is found; 1 -> 2 and 1 -> 4 workers are found faster, with one run a
# side and with three; and the same while two busy loops take the cores, where a claim that is
# withheld must name the busy processes. Nothing here asserts a speed: only directions that
# the jobs' own definitions fix (60 ms of I/O per batch against a 20 ms GPU phase).
. "$(dirname "$0")/lib.bash"
have_sim || skip "simulated GPU not built"
command -v python3 >/dev/null || skip "python3 missing"

# rec NAME WORKERS GPU_MS [IO_MS]: a data-loading job (I/O-bound loaders), recorded.
rec() {
	env GPUWHY_SIM_STATE="$T/state-$1" "$GPUWHY" --sim h100x1 run -o "$T/$1.gpuwhy" -i 200ms \
		--no-summary -- "$GPUWHY" sim train --workers "$2" --cpu-ms 0 --cpu-ms-per-item 0 \
		--gpu-ms-per-item 0 --io-ms "${4:-60}" --gpu-ms "$3" --steps 30 \
		>"$T/$1.log" 2>&1 || fail "$1: recording failed: $(tail -2 "$T/$1.log")"
}

# verdict FILES...: "VERDICT DIFF% WITHHELD HOGS" of `compare FILES --format json`.
verdict() {
	"$GPUWHY" compare "$@" --format json | python3 -c '
import json, sys
c = json.load(sys.stdin)
s = c["step_comparison"]
# The verdict is the interval and the threshold, and load only in the direction it can fake.
d, lo, hi = s["diff_pct"], s["lo_pct"], s["hi_pct"]
m = c["min_meaningful_diff_pct"]
if c["judged_by"] != "step-time-mean-ci95":
    # a loaded machine delivered the step lines in bursts: the run time judged, no interval
    assert c["steps_bursty"] and c["judged_by"] == "run-time", c
    print(c["verdict"], "run-time", c["withheld_by_host_load"], 0, "nan nan")
    sys.exit(0)
claim = s["significant"] and abs(d) >= m
within = -m < lo and hi < m
# No change only when the whole interval is within the threshold; else no claim is inconclusive.
want = ("faster" if d < 0 else "slower") if claim else "no-difference" if within else "inconclusive"
if c["withheld_by_host_load"]:
    want = "no-difference"
if c["within_min_meaningful_diff"] != within:
    sys.exit("within=%s, interval %.2f..%.2f" % (c["within_min_meaningful_diff"], lo, hi))
if c["verdict"] != want:
    sys.exit("verdict %s, want %s from its own figures" % (c["verdict"], want))
if s["significant"] != (lo > 0 or hi < 0):
    sys.exit("significant=%s, interval %.2f..%.2f" % (s["significant"], lo, hi))
if c["min_meaningful_diff_pct"] != 2:
    sys.exit("the threshold moved: %s" % c["min_meaningful_diff_pct"])
loads = c["host_load"]
hogs = sum(len(loads[k]["busiest_other_processes"]) for k in ("base", "candidate"))
print(c["verdict"], "%.2f" % d, c["withheld_by_host_load"], hogs, "%.2f %.2f" % (lo, hi))' || fail "compare $*: its verdict disagrees with its figures"
}

for i in 1 2 3; do rec "one$i" 1 20; done
rec slower 0 22 0
rec base0 0 20 0
for i in 1 2 3; do rec "two$i" 2 20; done
rec four 4 20

# Identical configurations: no claim in any pair, one run a side.
for p in "1 2" "1 3" "2 3"; do
	set -- $p
	v=$(verdict "$T/one$1.gpuwhy" "$T/one$2.gpuwhy")
	echo "one$1 -> one$2: $v"
	case "$v" in no-difference* | inconclusive*) ;; *) fail "one$1 -> one$2: identical runs, got $v" ;; esac
done
v=$(verdict "$T/base0.gpuwhy" "$T/slower.gpuwhy")
echo "GPU phase 20 -> 22 ms: $v"
# Found, unless the run's own noise hides it: a machine loaded while these ran can stretch the
# steps' CPU part so much that the interval is wider than the change, and "inconclusive" is
# then what the figures say. An interval narrower than the change that still holds 0, "no
# change", or a claim the wrong way, is a fault.
case "$v" in
slower*) ;;
"inconclusive "*)
	read -r _ _ _ _ lo hi <<<"$v"
	awk -v lo="$lo" -v hi="$hi" 'BEGIN { exit !(lo < 0 && hi > 0 && hi - lo > 10) }' ||
		fail "a job 10 % slower: got $v"
	echo "note: the 10 % change is within this run's noise (interval $lo .. $hi %)"
	;;
*) fail "a job 10 % slower: got $v" ;;
esac
v=$(verdict "$T/one1.gpuwhy" "$T/two1.gpuwhy")
echo "workers 1 -> 2: $v"
case "$v" in faster*) ;; *) fail "workers 1 -> 2: got $v" ;; esac
v=$(verdict "$T/one1.gpuwhy" "$T/four.gpuwhy")
echo "workers 1 -> 4: $v"
case "$v" in faster*) ;; *) fail "workers 1 -> 4: got $v" ;; esac

# Three runs a side: the run means are the observations.
v=$(verdict "$T"/one{1,2,3}.gpuwhy -- "$T"/two{1,2,3}.gpuwhy)
echo "3 x workers 1 -> 3 x workers 2: $v"
case "$v" in faster*) ;; *) fail "three runs a side, workers 1 -> 2: got $v" ;; esac
v=$(verdict "$T/one1.gpuwhy" "$T/one2.gpuwhy" -- "$T/one3.gpuwhy" "$T/one1.gpuwhy")
case "$v" in no-difference* | inconclusive*) ;; *) fail "runs of one configuration on both sides: got $v" ;; esac
out=$("$GPUWHY" compare "$T"/one{1,2,3}.gpuwhy -- "$T"/two{1,2,3}.gpuwhy)
assert_contains "$out" "method: 3 and 3 runs, each run's mean one observation" "three runs a side"
assert_contains "$out" "base runs (mean step, ms):" "the runs' means are listed"
# One run a side says what one run can show, and how to measure more.
out=$("$GPUWHY" compare "$T/one1.gpuwhy" "$T/two1.gpuwhy")
assert_contains "$out" "one run per side measures the noise within a run" "what one run can show"
assert_contains "$out" "threshold: changes under 2.0 %" "the threshold, one line"
# A threshold of 0 leaves only the interval: nothing else is added to it.
v=$("$GPUWHY" compare "$T/one1.gpuwhy" "$T/one2.gpuwhy" --set compare_min_diff_pct=0 --format json |
	python3 -c 'import json,sys; c=json.load(sys.stdin); s=c["step_comparison"]; print(float(c["min_meaningful_diff_pct"]), c["verdict"] == ("inconclusive" if not s["significant"] else "faster" if s["diff_pct"] < 0 else "slower"))')
assert_eq "$v" "0.0 True" "compare_min_diff_pct=0: the interval alone"

# Two busy loops take the cores while the candidates run.
"$GPUWHY" sim hog --cores 2 --seconds 60 >"$T/hog.out" 2>&1 &
HOG=$!
PIDS_TO_KILL+=("$HOG")
sleep 0.5
rec hogone 1 20
rec hogtwo 2 20
rec hogfour 4 20
kill "$HOG" 2>/dev/null
wait "$HOG" 2>/dev/null
# A loaded candidate can only look slower: a faster one stands; no change may be called
# slower only within what the load explains, and then the busy processes are named.
for c in hogtwo hogfour; do
	v=$(verdict "$T/one1.gpuwhy" "$T/$c.gpuwhy")
	echo "workers 1 -> $c under two busy loops: $v"
	case "$v" in
	faster*) ;;
	"no-difference "*" True "[1-9]*) echo "note: withheld, with the busy processes named" ;;
	*) fail "one1 -> $c under load: got $v" ;;
	esac
done
v=$(verdict "$T/one1.gpuwhy" "$T/hogone.gpuwhy")
echo "identical job under two busy loops: $v"
case "$v" in
faster*) fail "a loaded identical run called faster: $v" ;;
slower*" False "*)
	# Called slower although the candidate was loaded: only when the load could not
	# explain it (its bound is printed in the text).
	"$GPUWHY" compare "$T/one1.gpuwhy" "$T/hogone.gpuwhy" | grep -q "that load explains changes up to" ||
		echo "note: slower beyond what the load explains"
	;;
esac
out=$("$GPUWHY" compare "$T/one1.gpuwhy" "$T/hogone.gpuwhy")
if grep -q "load: other processes loaded the host" <<<"$out"; then
	assert_contains "$out" "PID [0-9]* [^ ]*gpuwhy sim hog" "the busy loops are named"
	grep -q "()" <<<"$out" && fail "empty list of processes: $out"
fi
exit 0
