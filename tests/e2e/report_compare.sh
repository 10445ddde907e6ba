# report and compare through the real recorder (host side, no GPU needed):
# findings and exit codes, the three formats, compare's verdict and changes, bad input.
. "$(dirname "$0")/lib.bash"
command -v python3 >/dev/null || skip "python3 missing"

# Two recordings of a CPU-only job printing steps: 60 ms per step, then 20 ms.
job() { echo "for i in \$(seq 1 $1); do echo \"step \$i\"; sleep $2; done"; }
"$GPUWHY" run -o "$T/base.gpuwhy" -i 100ms --no-summary -- bash -c "$(job 40 0.06)" --workers 1 >/dev/null ||
	fail "base run"
"$GPUWHY" run -o "$T/cand.gpuwhy" -i 100ms --no-summary -- bash -c "$(job 40 0.02)" --workers 4 >/dev/null ||
	fail "candidate run"

# report (text): the job never touched a GPU, an error finding, exit 1.
out=$(LC_ALL=C "$GPUWHY" report "$T/base.gpuwhy")
rc=$?
assert_eq "$rc" 1 "report exit status with an error finding"
assert_contains "$out" "ERROR not-on-gpu" "text report"
assert_contains "$out" "The seven-step chain" "text report"
assert_contains "$out" "  1 !! Is the process really using the GPU?" "ASCII chain under LC_ALL=C"
printf '%s' "$out" | LC_ALL=C grep -q '[^ -~]' && fail "non-ASCII output under LC_ALL=C"
out=$(LC_ALL=C.UTF-8 "$GPUWHY" report "$T/base.gpuwhy")
assert_contains "$out" "✗ Is the process really using the GPU?" "UTF-8 chain"

# report (json): parseable, the same finding and exit code.
"$GPUWHY" report "$T/base.gpuwhy" --format json >"$T/r.json"
assert_eq "$?" 1 "json report exit status"
python3 - "$T/r.json" <<'PY' || fail "json report content"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["report_version"] == 1 and r["exit_code"] == 1, r
ids = [f["id"] for f in r["findings"]]
assert ids[0] == "not-on-gpu", ids
f = r["findings"][0]
assert f["severity"] == "error" and f["evidence"][0]["value"] == 0, f
assert len(r["chain"]) == 7 and r["chain"][0]["status"] == "problem", r["chain"][0]
assert r["steps"]["intervals"] >= 30, r["steps"]
# Each step sleeps 60 ms: a loaded host stretches steps, never shortens them much.
assert r["steps"]["p50_s"] >= 0.05, r["steps"]
assert "--workers 1" in r["recording"]["command"], r["recording"]
PY

# report (html): one self-contained page written with -o.
"$GPUWHY" report "$T/base.gpuwhy" --format html -o "$T/r.html" 2>"$T/err"
assert_eq "$?" 1 "html report exit status"
assert_contains "$(cat "$T/err")" "report written to" "html -o message"
head -c 15 "$T/r.html" | grep -q '<!DOCTYPE html>' || fail "html doctype"
grep -Eq 'https?:|src="[^d#]|href="[^#]' "$T/r.html" && fail "external reference in the html report"
grep -q 'id="chart-host"' "$T/r.html" || fail "host chart missing"

# An out-of-memory message in the job's output becomes an error finding.
"$GPUWHY" run -o "$T/oom.gpuwhy" -i 100ms --no-summary -- \
	bash -c 'sleep 0.5; echo "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB" >&2; exit 1' \
	>/dev/null 2>&1
out=$("$GPUWHY" report "$T/oom.gpuwhy" --format json)
assert_eq "$?" 1 "oom report exit status"
printf '%s' "$out" | python3 -c 'import json,sys; r=json.load(sys.stdin); assert "oom" in [f["id"] for f in r["findings"]], r["findings"]' ||
	fail "oom finding"

# Thresholds: listed, and an override changes nothing here but is accepted.
out=$("$GPUWHY" report --thresholds)
assert_eq "$?" 0 "--thresholds"
assert_contains "$out" "starved_idle_pct" "--thresholds"
"$GPUWHY" report "$T/base.gpuwhy" --set starved_idle_pct=40 --goal latency >/dev/null
assert_eq "$?" 1 "report with --set and --goal"

# compare: the candidate is faster; one argument changed.
out=$("$GPUWHY" compare "$T/base.gpuwhy" "$T/cand.gpuwhy")
assert_eq "$?" 0 "compare exit status"
assert_contains "$out" "The candidate is FASTER" "compare verdict"
assert_contains "$out" "argument --workers" "compare changes"
"$GPUWHY" compare "$T/base.gpuwhy" "$T/cand.gpuwhy" --format json >"$T/c.json" || fail "compare json"
python3 - "$T/c.json" <<'PY' || fail "compare json content"
import json, sys
c = json.load(open(sys.argv[1]))
assert c["verdict"] == "faster", c["verdict"]
d = c["step_p50"]
# 60 ms against 20 ms steps: faster with certainty; by how much depends on the host's load.
assert d["diff_s"] < 0 and d["ci95_high_s"] < 0, d
assert c["bootstrap"]["resamples"] == 2000, c["bootstrap"]
whats = [x["what"] for x in c["changes"]]
assert "argument --workers" in whats, whats
PY
# The same file twice: no difference, nothing changed.
out=$("$GPUWHY" compare "$T/base.gpuwhy" "$T/base.gpuwhy")
# No claim either way. By step times, "no meaningful change" only when the whole interval is
# within the threshold, which a short run's few steps may not give (then: inconclusive, and
# why). A loaded machine can deliver the step lines in bursts: then the run time judges.
judged=$("$GPUWHY" compare "$T/base.gpuwhy" "$T/base.gpuwhy" --format json | python3 -c '
import json, sys
c = json.load(sys.stdin)
s = c["step_comparison"]
m = c["min_meaningful_diff_pct"]
assert c["compare_version"] == 3
if c["judged_by"] == "step-time-mean-ci95":
    within = -m < s["lo_pct"] and s["hi_pct"] < m
    assert c["within_min_meaningful_diff"] == within, c
    assert c["verdict"] == ("no-difference" if within else "inconclusive"), c["verdict"]
else:
    assert c["steps_bursty"] and c["verdict"] == "no-difference", c
    assert not c["within_min_meaningful_diff"], c
print(c["judged_by"])') || fail "compare with itself: the JSON verdict disagrees with its figures"
case "$judged:$(grep -m1 -E "^(No |Inconclusive|The candidate|Speed)" <<<"$out")" in
"step-time-mean-ci95:No meaningful change: mean step time +0.0 ms"*) ;;
"step-time-mean-ci95:Inconclusive: mean step time +0.0 ms"*)
	assert_contains "$out" "the interval reaches past 2.0 %" "compare with itself: why inconclusive"
	;;
"run-time:No significant difference (step lines came in bursts"*)
	echo "note: a loaded machine delivered the step lines in bursts: judged by run time"
	;;
*) fail "compare with itself ($judged): $out" ;;
esac
[ "$judged" = run-time ] ||
	assert_not_contains "$out" "judged by run time" "compare with itself: by step times alone"
assert_contains "$out" "nothing recorded differs" "compare with itself"

# Bad input: one line, documented exit codes, never a crash.
"$GPUWHY" report "$T/none.gpuwhy" 2>"$T/err"
assert_eq "$?" 3 "missing recording"
assert_eq "$(wc -l <"$T/err")" 1 "one error line"
echo "not a recording" >"$T/junk.gpuwhy"
"$GPUWHY" report "$T/junk.gpuwhy" 2>/dev/null
assert_eq "$?" 3 "junk recording"
"$GPUWHY" compare "$T/base.gpuwhy" "$T/junk.gpuwhy" 2>/dev/null
assert_eq "$?" 3 "compare with junk"
"$GPUWHY" report "$T/base.gpuwhy" --format xml 2>/dev/null
assert_eq "$?" 2 "bad format"
"$GPUWHY" report 2>/dev/null
assert_eq "$?" 2 "no recording"
"$GPUWHY" report "$T/base.gpuwhy" --set bogus=1 2>/dev/null
assert_eq "$?" 2 "unknown threshold"
"$GPUWHY" report "$T/base.gpuwhy" --goal speed 2>/dev/null
assert_eq "$?" 2 "bad goal"
"$GPUWHY" compare "$T/base.gpuwhy" 2>/dev/null
assert_eq "$?" 2 "compare with one file"
"$GPUWHY" report "$T/base.gpuwhy" --format html -o /proc/nope/r.html 2>/dev/null
assert_eq "$?" 3 "unwritable output"
"$GPUWHY" report --help | grep -q -- "--goal" || fail "report --help"
"$GPUWHY" compare --help | grep -q "bootstrap" || fail "compare --help"
exit 0
