# Each diagnosis rule end to end: a synthetic training job on a simulated GPU,
# recorded by `gpuwhy run`, diagnosed by `gpuwhy report`; then the fix proven
# by `gpuwhy compare`.
. "$(dirname "$0")/lib.bash"
have_sim || skip "simulated GPU not built"
command -v python3 >/dev/null || skip "python3 missing"

# rec NAME SCENARIO [ENV=VALUE...] -- TRAIN ARGS: record a `sim train` run into $T/NAME.gpuwhy.
rec() {
	local name=$1 sc=$2
	shift 2
	local envs=()
	while [ "$1" != "--" ]; do envs+=("$1"); shift; done
	shift
	env GPUWHY_SIM_STATE="$T/state-$name" "${envs[@]}" \
		"$GPUWHY" --sim "$sc" run -o "$T/$name.gpuwhy" -i 200ms --no-summary -- \
		"$GPUWHY" sim train "$@" >"$T/$name.log" 2>&1
}

# findings NAME: "severity id" per line, from the JSON report.
findings() {
	"$GPUWHY" report "$T/$1.gpuwhy" --format json |
		python3 -c 'import json,sys; [print(f["severity"], f["id"]) for f in json.load(sys.stdin)["findings"]]'
}

# expect NAME "severity id" [absent-id...]
expect() {
	local name=$1 want=$2
	shift 2
	local got
	got=$(findings "$name")
	printf '%s\n' "$got" | grep -qx "$want" || fail "$name: expected '$want', got: $(echo $got)"
	for no in "$@"; do
		printf '%s\n' "$got" | grep -q " $no\$" && fail "$name: '$no' must not fire, got: $(echo $got)"
	done
	return 0
}

# A healthy job: fast data, long GPU phases.
rec healthy h100x1 -- --workers 2 --cpu-ms 5 --gpu-ms 50 --steps 40 || fail "healthy run"
expect healthy "info healthy" data-starved launch-bound low-utilization
"$GPUWHY" report "$T/healthy.gpuwhy" >/dev/null
assert_eq "$?" 0 "healthy report exit status"

# data-starved: one worker needs 100 ms of CPU per batch for 40 ms of GPU work...
rec starved h100x1 -- --workers 1 --cpu-ms 100 --gpu-ms 40 --steps 30 || fail "starved run"
expect starved "warn data-starved" healthy
out=$("$GPUWHY" report "$T/starved.gpuwhy")
assert_contains "$out" "DataLoader" "data-starved advice"
# ... and cheaper preparation (decoded offline) fixes it: compare says faster, with one
# change. (More workers need free cores; this machine may have two.)
rec cheap h100x1 -- --workers 1 --cpu-ms 5 --gpu-ms 40 --steps 30 || fail "cheap run"
out=$("$GPUWHY" compare "$T/starved.gpuwhy" "$T/cheap.gpuwhy")
assert_contains "$out" "The candidate is FASTER" "compare after cheaper preparation"
assert_contains "$out" "argument --cpu-ms                100 -> 5" "compare names the change"
# The fixed finding is listed as gone when it is gone: a host with no core to spare
# still starves the cheaper run, and then compare must not claim it fixed.
if findings cheap | grep -q ' data-starved$'; then
	printf '%s' "$out" | grep -q "gone:  data-starved" && fail "compare claims data-starved gone while cheap has it"
else
	assert_contains "$out" "gone:  data-starved" "compare lists the fixed finding"
fi

# launch-bound: tiny kernels keep utilization high with few SMs active.
rec tiny h100x1 -- --workers 2 --cpu-ms 5 --gpu-ms 50 --kernel-us 5 --steps 40 || fail "tiny run"
expect tiny "warn launch-bound" healthy

# oom: the job dies of CUDA out of memory; the report exits 1.
rec oom h100x1 -- --workers 2 --cpu-ms 5 --gpu-ms 50 --steps 40 --oom-at 20
assert_eq "$?" 1 "oom run exit status"
expect oom "error oom"
"$GPUWHY" report "$T/oom.gpuwhy" >/dev/null
assert_eq "$?" 1 "oom report exit status"

# oom-risk: memory held within 5 % of capacity.
rec full h100x1 -- --workers 2 --cpu-ms 5 --gpu-ms 50 --steps 40 --mem-mib 79000 || fail "full run"
expect full "warn oom-risk" oom

# sync-wait over PCIe: rank 0 is 60 ms slower each step; the waiters' all-reduce spins
# (utilization reads busy), their power draw gives them away.
rec sync_pcie a100x4-pcie -- --ranks 4 --workers 1 --cpu-ms 5 --gpu-ms 40 --straggler 0 \
	--straggler-ms 60 --steps 30 || fail "sync pcie run"
expect sync_pcie "warn sync-wait" launch-bound
"$GPUWHY" report "$T/sync_pcie.gpuwhy" | grep -q "no NVLink" || fail "sync-wait over PCIe names the link"
# ... and over NVLink, SM activity shows the straggler; the advice is about imbalance.
rec sync_nvl h100x8-nvlink -- --ranks 4 --workers 1 --cpu-ms 5 --gpu-ms 40 --straggler 0 \
	--straggler-ms 60 --steps 30 || fail "sync nvlink run"
expect sync_nvl "warn sync-wait" launch-bound
"$GPUWHY" report "$T/sync_nvl.gpuwhy" | grep -q "imbalance, not bandwidth" || fail "sync-wait NVLink advice"

# throttled: scenario time pinned inside the thermal episode (an error), then the power cap (info).
rec hot rtx4090-throttle GPUWHY_SIM_TIME=45 -- --workers 2 --cpu-ms 5 --gpu-ms 50 --steps 40 ||
	fail "thermal run"
expect hot "error throttled"
rec capped rtx4090-throttle GPUWHY_SIM_TIME=90 -- --workers 2 --cpu-ms 5 --gpu-ms 50 --steps 40 ||
	fail "power cap run"
expect capped "info throttled"

# pcie-degraded: a link trained at Gen3 x8 of Gen4 x16.
rec pcie a100x2-pcie-degraded -- --workers 2 --cpu-ms 5 --gpu-ms 50 --steps 40 || fail "pcie run"
expect pcie "warn pcie-degraded"

# contention: another user's process on the job's GPU.
rec foreign l4x2-foreign -- --workers 2 --cpu-ms 5 --gpu-ms 50 --steps 40 || fail "foreign run"
expect foreign "warn contention"

# gpu-fault: the GPU falls off the bus 5 s into the scenario.
rec lost h100x1-lost -- --workers 2 --cpu-ms 5 --gpu-ms 50 --steps 200
expect lost "error gpu-fault"

# not-on-gpu: the watched command never touches the GPU (a CPU-only build).
env GPUWHY_SIM_STATE="$T/state-cpu" "$GPUWHY" --sim h100x1 run -o "$T/cpu.gpuwhy" -i 200ms --no-summary -- \
	bash -c 'for i in $(seq 15); do echo "step $i"; sleep 0.1; done' >/dev/null 2>&1 || fail "cpu-only run"
expect cpu "error not-on-gpu" healthy

# memory-full-compute-idle: 93 % of the memory held while the GPU mostly waits.
rec fullidle h100x1 -- --workers 1 --cpu-ms 100 --gpu-ms 20 --steps 25 --mem-mib 76000 || fail "full idle run"
expect fullidle "warn memory-full-compute-idle"

# The confusion matrix: expected rule (row) against the most severe finding (column).
confusion() {
	python3 - "$@" <<'PY'
import json, subprocess, sys
gpuwhy, tdir = sys.argv[1], sys.argv[2]
cases = [c.split("=") for c in sys.argv[3:]]
rank = {"error": 2, "warn": 1, "info": 0}
rows, cols = [], []
for name, want in cases:
    r = json.loads(subprocess.run([gpuwhy, "report", "%s/%s.gpuwhy" % (tdir, name), "--format", "json"],
                                  capture_output=True, text=True).stdout)
    fs = sorted(r["findings"], key=lambda f: -rank[f["severity"]])
    ids = [f["id"] for f in fs if rank[f["severity"]] == rank[fs[0]["severity"]]] if fs else ["none"]
    got = want if want in ids else ids[0]
    rows.append((want, got))
    if got not in cols:
        cols.append(got)
print("confusion matrix (rows: the case's cause, columns: top finding)")
w = max(len(c) for c in cols + [want for want, _ in rows])
print(" " * (w + 2) + " ".join(c[:12].rjust(12) for c in cols))
for want, got in rows:
    print(want.ljust(w + 2) + " ".join(("1" if got == c else ".").rjust(12) for c in cols))
ok = sum(1 for want, got in rows if want == got)
print("%d of %d cases diagnosed as their cause" % (ok, len(rows)))
PY
}
confusion "$GPUWHY" "$T" healthy=healthy starved=data-starved tiny=launch-bound oom=oom full=oom-risk \
	sync_pcie=sync-wait sync_nvl=sync-wait hot=throttled capped=throttled pcie=pcie-degraded \
	foreign=contention lost=gpu-fault cpu=not-on-gpu fullidle=memory-full-compute-idle

# The HTML report of a real recording is self-contained.
"$GPUWHY" report "$T/sync_pcie.gpuwhy" --format html -o "$T/sync.html" 2>/dev/null
grep -Eq 'https?:|src="[^d#]|href="[^#]' "$T/sync.html" && fail "external reference in the html report"
grep -q 'id="chart-util"' "$T/sync.html" || fail "utilization chart missing"
exit 0
