# The labelled set: every diagnosis rule end to end. Synthetic jobs on a
# simulated GPU (sim train, scenario fixtures), recorded by `gpuwhy run` or
# `gpuwhy record`, diagnosed by `gpuwhy report`; each case asserts the top
# finding and that no wrong error-level finding appears, and the whole set
# prints a confusion matrix. Cases run a few at a time (GPUWHY_E2E_JOBS, 3 by
# default); the noisy-neighbour case runs alone, since it loads every core.
. "$(dirname "$0")/lib.bash"
have_sim || skip "simulated GPU not built"
command -v python3 >/dev/null || skip "python3 missing"
FIX=$(cd "$(dirname "$0")/../fixtures/scenarios" && pwd)
JOBS=${GPUWHY_E2E_JOBS:-3}

# bg NAME CMD...: run CMD in the background (at most $JOBS at once); its exit status lands in
# $T/NAME.rc.
bg() {
	local name=$1
	shift
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
	("$@" >"$T/$name.log" 2>&1; echo $? >"$T/$name.rc") &
}

# rec NAME SCENARIO [ENV=VALUE...] -- TRAIN ARGS: record a `sim train` run into $T/NAME.gpuwhy.
rec() {
	local name=$1 sc=$2
	shift 2
	local envs=()
	while [ "$1" != "--" ]; do envs+=("$1"); shift; done
	shift
	env GPUWHY_SIM_STATE="$T/state-$name" "${envs[@]}" \
		"$GPUWHY" --sim "$sc" run -o "$T/$name.gpuwhy" -i 200ms --no-summary -- \
		"$GPUWHY" sim train "$@"
}

# mrec NAME SCENARIO SECONDS: record the whole machine (no --pid) for a while.
mrec() {
	env GPUWHY_SIM_STATE="$T/state-$1" "$GPUWHY" --sim "$2" record -o "$T/$1.gpuwhy" \
		-i 200ms -d "$3s"
}

# cmdrec NAME SCENARIO CMD...: record any command with `gpuwhy run`.
cmdrec() {
	local name=$1 sc=$2
	shift 2
	env GPUWHY_SIM_STATE="$T/state-$name" "$GPUWHY" --sim "$sc" run -o "$T/$name.gpuwhy" \
		-i 200ms --no-summary -- "$@"
}

# A job printing its step lines through a block-buffered pipe (python's stdout, with the
# PYTHONUNBUFFERED=1 that `gpuwhy run` sets taken away), beside a training loop on the GPU
# whose own output is discarded.
buffered_job() {
	"$GPUWHY" sim train --workers 0 --cpu-ms 0 --gpu-ms 50 --steps 60 >/dev/null 2>&1 &
	PYTHONUNBUFFERED= python3 -c '
import time
for i in range(1500):
    print("step %d loss 0.5" % i)
    time.sleep(0.002)
'
	wait
}

# An inference server answering a request now and then: GPU work in short bursts, idle in
# between, hardly any CPU of its own.
inference_job() {
	for _ in 1 2 3 4 5 6 7 8; do
		"$GPUWHY" sim train --workers 0 --cpu-ms 1 --gpu-ms 20 --steps 3 >/dev/null 2>&1
		sleep 0.4
	done
}

# A job stopped at a breakpoint (SIGSTOP) for most of its run, holding 85 % of the GPU's
# memory (68 of 79.6 GiB): stopped once it has run ten steps, resumed 6 s later.
stopped_job() {
	local out
	out=$(mktemp)
	"$GPUWHY" sim train --workers 0 --cpu-ms 0 --gpu-ms 50 --steps 40 --mem-mib 69600 \
		>"$out" 2>&1 &
	local p=$!
	while kill -0 "$p" 2>/dev/null && ! grep -q '^step 10/' "$out"; do sleep 0.05; done
	kill -STOP "$p"
	echo "stopped PID $p"
	sleep 6
	kill -CONT "$p"
	wait "$p"
	local rc=$?
	tail -1 "$out" # (not the step lines: printed at once, they would read as bursts)
	rm -f "$out"
	return $rc
}

# --- the cases (name=expected top finding, in docs/rules.md's confusion matrix) ---
# Jobs without a data path (--workers 0 --cpu-ms 0) keep their cause however loaded the host
# is; the data-path cases make theirs far larger than any slowdown a busy host adds.
bg healthy rec healthy h100x1 -- --workers 0 --cpu-ms 0 --gpu-ms 50 --steps 40
bg starved rec starved h100x1 -- --workers 1 --cpu-ms 100 --gpu-ms 40 --steps 30
bg cheap rec cheap h100x1 -- --workers 1 --cpu-ms 0 --gpu-ms 40 --steps 30
bg tiny rec tiny h100x1 -- --workers 0 --cpu-ms 0 --gpu-ms 150 --kernel-us 5 --steps 20
bg oom rec oom h100x1 -- --workers 0 --cpu-ms 0 --gpu-ms 50 --steps 40 --oom-at 20
bg full rec full h100x1 -- --workers 0 --cpu-ms 0 --gpu-ms 50 --steps 40 --mem-mib 79000
# sync-wait over PCIe: rank 0 is 60 ms slower each step; the waiters' all-reduce spins
# (utilization reads busy), their power draw gives them away ...
bg sync_pcie rec sync_pcie a100x4-pcie -- --ranks 4 --workers 0 --cpu-ms 0 --gpu-ms 40 \
	--straggler 0 --straggler-ms 60 --steps 30
# ... also when the shortfall is small but steady (no GPM: power only, 18 %) ...
bg sync_steady rec sync_steady a100x4-pcie -- --ranks 4 --workers 0 --cpu-ms 0 --gpu-ms 80 \
	--straggler 0 --straggler-ms 60 --steps 50
# ... and over NVLink SM activity shows the straggler.
bg sync_nvl rec sync_nvl h100x8-nvlink -- --ranks 4 --workers 0 --cpu-ms 0 --gpu-ms 40 \
	--straggler 0 --straggler-ms 60 --steps 30
# Four ranks waiting for one data-loader worker each: starved, not launch-bound or sync-wait.
bg mstarved rec mstarved h100x8-nvlink -- --ranks 4 --workers 1 --cpu-ms 100 --gpu-ms 40 \
	--steps 25
bg mstarved_pcie rec mstarved_pcie a100x4-pcie -- --ranks 4 --workers 1 --cpu-ms 100 \
	--gpu-ms 40 --steps 25
# Two ranks of tiny kernels: launch-bound.
bg mtiny rec mtiny h100x8-nvlink -- --ranks 2 --workers 0 --cpu-ms 0 --gpu-ms 150 \
	--kernel-us 5 --steps 20
# throttled: scenario time pinned inside the thermal episode (an error), then the power cap
# at the default limit (info).
bg hot rec hot rtx4090-throttle GPUWHY_SIM_TIME=45 -- --workers 0 --cpu-ms 0 --gpu-ms 50 --steps 40
bg capped rec capped rtx4090-throttle GPUWHY_SIM_TIME=90 -- --workers 0 --cpu-ms 0 --gpu-ms 50 \
	--steps 40
# A power limit set at half the default holds the clocks: power-capped.
bg powercap rec powercap "$FIX/h100x1-capped.json" -- --workers 0 --cpu-ms 0 --gpu-ms 50 --steps 40
bg pcie rec pcie a100x2-pcie-degraded -- --workers 0 --cpu-ms 0 --gpu-ms 50 --steps 40
bg foreign rec foreign l4x2-foreign -- --workers 0 --cpu-ms 0 --gpu-ms 50 --steps 40
bg lost rec lost h100x1-lost -- --workers 0 --cpu-ms 0 --gpu-ms 50 --steps 200
bg xid rec xid "$FIX/h100x1-xid48.json" -- --workers 0 --cpu-ms 0 --gpu-ms 50 --steps 50
bg cpu cmdrec cpu h100x1 bash -c 'for i in $(seq 15); do echo "step $i"; sleep 0.1; done'
# Memory held while the job waits on something that is not the host's CPU (a remote
# service, a network read: --io-ms sleeps), so the GPU idles with its memory full.
bg fullidle rec fullidle h100x1 -- --workers 1 --cpu-ms 0 --io-ms 100 --gpu-ms 20 --steps 25 \
	--mem-mib 76000
# Stopped with its memory held: memory-full-compute-idle names the stopped process.
bg stopped cmdrec stopped h100x1 bash -c "$(declare -f stopped_job); stopped_job"
# The job in a container (its PID not ours, or not listed at all): GPU rules still run.
bg chot rec chot rtx4090-throttle GPUWHY_SIM_TIME=45 -- --hidden=pid --workers 0 --cpu-ms 0 \
	--gpu-ms 50 --steps 40
bg cpcie rec cpcie a100x2-pcie-degraded -- --hidden=none --workers 0 --cpu-ms 0 --gpu-ms 50 \
	--steps 40
# The whole machine recorded (no --pid) while someone else's job runs.
bg mhot mrec mhot "$FIX/h100x1-hot.json" 3
bg mpcie mrec mpcie "$FIX/h100x1-downtrained.json" 3
bg membound mrec membound "$FIX/h100x1-membound.json" 3
# Too little to judge, and nothing to judge.
bg short rec short h100x1 -- --workers 0 --cpu-ms 0 --gpu-ms 50 --steps 2
bg instant cmdrec instant h100x1 true
bg idle mrec idle h100x1 2
# Step lines in bursts.
bg bursty cmdrec bursty h100x1 bash -c "$(declare -f buffered_job); buffered_job"
wait
# The noisy neighbour, alone: other processes take both cores while an inference server
# waits for requests.
env GPUWHY_SIM_STATE="$T/state-hog" "$GPUWHY" sim hog --seconds 60 >"$T/hog.out" 2>&1 &
HOG=$!
PIDS_TO_KILL+=("$HOG")
sleep 0.5
bg noisy cmdrec noisy h100x1 bash -c "$(declare -f inference_job); inference_job"
while [ ! -e "$T/noisy.rc" ]; do sleep 0.2; done
kill "$HOG" 2>/dev/null
wait

# Exit statuses: the failing jobs fail, the others do not.
for n in healthy starved cheap tiny full sync_pcie sync_steady sync_nvl mstarved mstarved_pcie \
	mtiny hot capped powercap pcie foreign xid cpu fullidle stopped chot cpcie mhot mpcie membound \
	short instant idle bursty noisy; do
	assert_eq "$(cat "$T/$n.rc")" 0 "$n: recording exit status ($(tail -3 "$T/$n.log"))"
done
assert_eq "$(cat "$T/oom.rc")" 1 "oom run exit status"

# findings NAME: "severity id" per line, most severe and confident first (the report's order).
findings() {
	"$GPUWHY" report "$T/$1.gpuwhy" --format json |
		python3 -c 'import json,sys; [print(f["severity"], f["id"]) for f in json.load(sys.stdin)["findings"]]'
}

# expect NAME TOP-ID [absent-id...]: TOP-ID is the top finding; no other finding is an error;
# the absent ids do not fire at all.
expect() {
	local name=$1 want=$2
	shift 2
	local got top
	got=$(findings "$name")
	top=$(printf '%s\n' "$got" | head -1 | cut -d' ' -f2)
	if [ "$top" != "$want" ]; then
		"$GPUWHY" report "$T/$name.gpuwhy" | sed -n '1,/^GPUs:/p' >&2
		fail "$name: expected top finding '$want', got: $(echo $got)"
	fi
	printf '%s\n' "$got" | grep '^error ' | grep -vqx "error $want" &&
		fail "$name: a wrong error-level finding: $(echo $got)"
	for no in "$@"; do
		printf '%s\n' "$got" | grep -q " $no\$" && fail "$name: '$no' must not fire, got: $(echo $got)"
	done
	return 0
}

# A healthy job on a machine that other work keeps busy is slowed for real:
# then host-contention, naming the other processes, is the right answer
# (and the only one allowed besides healthy).
if findings healthy | head -1 | grep -q ' host-contention$'; then
	echo "note: the machine was busy: healthy recorded host-contention"
	expect healthy host-contention data-starved launch-bound low-utilization
	"$GPUWHY" report "$T/healthy.gpuwhy" | grep -q "idle .* while " ||
		fail "host-contention on the healthy run does not say what loaded the host"
else
	expect healthy healthy data-starved launch-bound low-utilization
fi
"$GPUWHY" report "$T/healthy.gpuwhy" >/dev/null
rc=$?
[ "$rc" = 0 ] || findings healthy | grep -q '^error ' || fail "healthy report exit status $rc without an error finding"

expect starved data-starved healthy host-contention
assert_contains "$("$GPUWHY" report "$T/starved.gpuwhy")" "DataLoader" "data-starved advice"
# ... and cheaper preparation (decoded offline) fixes it: compare says faster, with one
# change. (More workers need free cores; this machine may have two.)
out=$("$GPUWHY" compare "$T/starved.gpuwhy" "$T/cheap.gpuwhy")
# Faster, unless other load made a run's own halves disagree by more than
# the change (then compare must say the change is below that drift, not
# claim a speed-up it cannot tell from the machine's noise).
drift=$("$GPUWHY" compare "$T/starved.gpuwhy" "$T/cheap.gpuwhy" --format json | python3 -c '
import json, sys
c = json.load(sys.stdin)
d, m = c["step_mean_diff_pct"], c["min_meaningful_diff_pct"]
masked = d is not None and d < 0 and abs(d) < m and c["below_min_meaningful_diff"]
print(("masked-within" if c["within_min_meaningful_diff"] else "masked") if masked else "clear")')
case $drift in
masked-within)
	echo "note: a busy machine: the runs drift more than the change"
	assert_contains "$out" "No meaningful change" "compare under drift larger than the change"
	;;
masked)
	echo "note: a busy machine: the runs drift more than the change, and the interval is wide"
	assert_contains "$out" "Inconclusive" "compare under drift larger than the change"
	;;
*) assert_contains "$out" "The candidate is FASTER" "compare after cheaper preparation" ;;
esac
assert_contains "$out" "argument --cpu-ms                100 -> 0" "compare names the change"
# The fixed finding is listed as gone when it is gone: a host with no core to spare
# can still starve the cheaper run, and then compare must not claim it fixed.
if findings cheap | grep -q ' data-starved$'; then
	printf '%s' "$out" | grep -q "gone:  data-starved" && fail "compare claims data-starved gone while cheap has it"
else
	assert_contains "$out" "gone:  data-starved" "compare lists the fixed finding"
fi
assert_contains "$out" "analysed window" "compare prints the analysed windows"

expect tiny launch-bound healthy
expect oom oom
"$GPUWHY" report "$T/oom.gpuwhy" >/dev/null
assert_eq "$?" 1 "oom report exit status"
expect full oom-risk oom

# A host other work keeps busy delays the ranks' launches: host-contention naming
# the load is then a right answer too; launch-bound never is.
if findings sync_pcie | head -1 | grep -q ' host-contention$'; then
	echo "note: the machine was busy: sync_pcie recorded host-contention"
	expect sync_pcie host-contention launch-bound
	"$GPUWHY" report "$T/sync_pcie.gpuwhy" | grep -q "idle .* while " ||
		fail "host-contention on sync_pcie does not say what loaded the host"
else
	expect sync_pcie sync-wait launch-bound
	"$GPUWHY" report "$T/sync_pcie.gpuwhy" | grep -q "no NVLink" || fail "sync-wait over PCIe names the link"
fi
expect sync_steady sync-wait launch-bound data-starved
expect sync_nvl sync-wait launch-bound
"$GPUWHY" report "$T/sync_nvl.gpuwhy" | grep -q "imbalance, not bandwidth" || fail "sync-wait NVLink advice"
expect mstarved data-starved launch-bound sync-wait
expect mstarved_pcie data-starved launch-bound sync-wait
expect mtiny launch-bound data-starved

expect hot throttled
assert_eq "$(findings hot | sed -n 1p)" "error throttled" "thermal slowdown is an error"
expect capped throttled power-capped
assert_eq "$(findings capped | sed -n 1p)" "info throttled" "the power cap at the default limit"
expect powercap power-capped
out=$("$GPUWHY" report "$T/powercap.gpuwhy")
assert_contains "$out" "power limit 350 W is below its default 700 W" "power-capped title"
assert_contains "$out" "clocks.current.sm, mean while at the cap: 1350 MHz" "power-capped clocks"

expect pcie pcie-degraded
expect foreign contention
expect lost gpu-fault
expect xid gpu-fault
out=$("$GPUWHY" report "$T/xid.gpuwhy")
assert_contains "$out" "Xid 48 on GPU 0 at" "the Xid's number and time"
assert_contains "$out" "double-bit ECC error" "the Xid's meaning"
[ "$(sqlite3 "$T/xid.gpuwhy" "select count(*) from events where kind='xid' and value=48" 2>/dev/null || echo 1)" -ge 1 ] ||
	fail "the Xid is an event of the recording"
expect cpu not-on-gpu healthy
expect fullidle memory-full-compute-idle data-starved
expect stopped memory-full-compute-idle low-utilization data-starved host-contention
# (from the JSON: the text report wraps its lines)
out=$("$GPUWHY" report "$T/stopped.gpuwhy" --format json | python3 -c '
import json, sys
r = json.load(sys.stdin)
f = [f for f in r["findings"] if f["id"] == "memory-full-compute-idle"][0]
print(f["title"]); print(f["note"]); print(f["advice"]); print(r["gpus"][0]["quadrant"])')
pid=$(sed -n 's/^stopped PID //p' "$T/stopped.log")
assert_contains "$out" "PID $pid (.*sim train" "the stopped process is named"
assert_contains "$out" "was stopped (state T) for [0-9]* s" "how long it was stopped"
assert_contains "$out" "; a job process stopped for" "the title says it"
assert_contains "$out" "kill -CONT" "the advice resumes it"
assert_contains "$out" "idle-full" "the quadrant"

expect chot throttled not-on-gpu
assert_contains "$(findings chot)" "info not-checked" "container: what was not checked"
expect cpcie pcie-degraded not-on-gpu
expect mhot throttled healthy
assert_contains "$("$GPUWHY" report "$T/mhot.gpuwhy")" "not visible" "machine-wide: processes not visible"
expect mpcie pcie-degraded healthy
expect membound memory-bound launch-bound healthy

expect short too-little-data healthy
assert_contains "$("$GPUWHY" report "$T/short.gpuwhy")" "too short to judge" "short job"
expect instant too-little-data healthy
expect idle gpu-idle healthy
expect bursty step-bursts
assert_contains "$("$GPUWHY" report "$T/bursty.gpuwhy")" "PYTHONUNBUFFERED=1" "bursty advice"
expect noisy host-contention data-starved
assert_contains "$("$GPUWHY" report "$T/noisy.gpuwhy")" "other processes load the host: PID" "the neighbours are named"

# The confusion matrix: expected rule (row) against the top finding (column).
confusion() {
	python3 - "$@" <<'PY'
import json, subprocess, sys
gpuwhy, tdir = sys.argv[1], sys.argv[2]
cases = [c.split("=") for c in sys.argv[3:]]
rows, cols = [], []
for name, want in cases:
    r = json.loads(subprocess.run([gpuwhy, "report", "%s/%s.gpuwhy" % (tdir, name), "--format", "json"],
                                  capture_output=True, text=True).stdout)
    got = r["findings"][0]["id"] if r["findings"] else "none"
    rows.append((want, got))
    if got not in cols:
        cols.append(got)
print("confusion matrix (rows: the case's cause, columns: top finding; counts)")
wanted = []
for w, _ in rows:
    if w not in wanted:
        wanted.append(w)
w = max(len(c) for c in cols + wanted)
print(" " * (w + 1) + " ".join(c[:8].rjust(8) for c in cols))
for want in wanted:
    print(want.ljust(w + 1) + " ".join(str(sum(1 for a, g in rows if a == want and g == c) or ".").rjust(8) for c in cols))
ok = sum(1 for want, got in rows if want == got)
print("%d of %d cases diagnosed as their cause" % (ok, len(rows)))
PY
}
confusion "$GPUWHY" "$T" healthy=healthy starved=data-starved tiny=launch-bound oom=oom \
	full=oom-risk sync_pcie=sync-wait sync_steady=sync-wait sync_nvl=sync-wait \
	mstarved=data-starved mstarved_pcie=data-starved mtiny=launch-bound hot=throttled \
	capped=throttled powercap=power-capped pcie=pcie-degraded foreign=contention lost=gpu-fault \
	xid=gpu-fault cpu=not-on-gpu fullidle=memory-full-compute-idle \
	stopped=memory-full-compute-idle chot=throttled \
	cpcie=pcie-degraded mhot=throttled mpcie=pcie-degraded membound=memory-bound \
	short=too-little-data instant=too-little-data idle=gpu-idle bursty=step-bursts \
	noisy=host-contention

# The findings never contradict the quadrant (docs/report.md, "Findings and the quadrant"), on
# every recording of the set. For each GPU of the job, with enough samples to judge:
# idle-full is memory-full-compute-idle, or data-starved citing the GPU's memory (a
# saturated loader); memory-full-compute-idle only on idle-full GPUs of the job;
# low-utilization on no GPU in a busy corner or idle-full; healthy (throughput goal)
# only with every such GPU in a busy corner; too-little-data with no corner at all.
consistency() {
	python3 - "$@" <<'PY'
import json, subprocess, sys
gpuwhy, tdir = sys.argv[1], sys.argv[2]
bad = []
for name in sys.argv[3:]:
    r = json.loads(subprocess.run([gpuwhy, "report", "%s/%s.gpuwhy" % (tdir, name), "--format",
                                   "json"], capture_output=True, text=True).stdout)
    fs = r["findings"]
    ids = [f["id"] for f in fs]
    def on(rule, i, memory=False):
        return any(f["id"] == rule and i in f["gpus"] and
                   (not memory or any(e["metric"] == "memory.used" and e["gpu"] == i
                                      for e in f["evidence"])) for f in fs)
    for g in r["gpus"]:
        i, q = g["index"], g["quadrant"]
        busy = q in ("busy-full", "busy-roomy")
        why = None
        if on("memory-full-compute-idle", i) and not (g["job"] and q == "idle-full"):
            why = "memory-full-compute-idle in %s" % q
        elif not g["job"]:
            continue
        elif "too-little-data" in ids and q != "unknown":
            why = "too-little-data, yet %s" % q
        elif q == "idle-full" and not on("memory-full-compute-idle", i) and \
                not on("data-starved", i, memory=True):
            why = "idle-full, explained by nothing"
        elif on("low-utilization", i) and (busy or q == "idle-full"):
            why = "low-utilization in %s" % q
        elif "healthy" in ids and r["goal"] == "throughput" and not busy and q != "unknown":
            why = "healthy, yet %s" % q
        if why:
            bad.append("%s GPU %d: %s (findings: %s)" % (name, i, why, " ".join(ids)))
print("\n".join(bad) if bad else "findings and quadrants agree on %d recordings" % (len(sys.argv) - 3))
sys.exit(1 if bad else 0)
PY
}
out=$(consistency "$GPUWHY" "$T" healthy starved cheap tiny oom full sync_pcie sync_steady \
	sync_nvl mstarved mstarved_pcie mtiny hot capped powercap pcie foreign lost xid cpu fullidle \
	stopped chot cpcie mhot mpcie membound short instant idle bursty noisy) ||
	fail "findings contradict the quadrant: $out"
echo "$out"

# The HTML report of a real recording is self-contained.
"$GPUWHY" report "$T/sync_pcie.gpuwhy" --format html -o "$T/sync.html" 2>/dev/null
grep -Eq 'https?:|src="[^d#]|href="[^#]' "$T/sync.html" && fail "external reference in the html report"
grep -q 'id="chart-util"' "$T/sync.html" || fail "utilization chart missing"
exit 0
