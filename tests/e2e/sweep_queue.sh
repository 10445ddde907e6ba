#!/usr/bin/env bash
# gpuwhy sweep --queue on the simulated 8-GPU machine: each configuration is a
# queue task with a GPU of its own, its recording is where the sweep reads it,
# and the results are those of a sweep run here.
source "$(dirname "$0")/lib.bash"
have_sim || skip "simulated GPU not built"
G=$GPUWHY
export GPUWHY_QUEUE=$T/q
trap '"$G" queue stop >/dev/null 2>&1; cleanup' EXIT
D=$T/qs
# Each task waits (up to 60 s) until all five have started, so they run at
# the same time and the queue must give each a GPU of its own.
mkdir -p "$T/bar"
"$G" --sim h100x8-nvlink sweep -o "$D" --queue --vary seed=1,2,3,4 --vary fail=0,5 \
	--interval 100ms -- sh -c 'touch "$1/{seed}-{fail}"; i=0
	while [ "$(ls "$1" | wc -l)" -lt 5 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	"$0" sim train --steps 40 --gpu-ms 20 --cpu-ms 1 --seed {seed} && exit {fail}' \
	"$G" "$T/bar" >"$T/out" 2>"$T/err"
assert_eq "$?" 1 "queue sweep with a failing configuration: $(cat "$T/err")"
python3 - "$D/sweep.json" "$D/results.json" <<'PY' || fail "queue sweep state/results"
import json, sys
st = json.load(open(sys.argv[1])); res = json.load(open(sys.argv[2]))
tasks = [r["queue_task"] for r in st["runs"]]
assert len(tasks) == 5 and all(isinstance(t, int) for t in tasks), st["runs"]
assert len(set(tasks)) == 5, tasks
by = {c["name"]: c for c in res["configurations"]}
for s in (1, 2, 3, 4):
    c = by["seed=%d,fail=0" % s]
    assert c["status"] == "done" and c["steps_timed"] >= 5, c
    assert c["mem_peak_mib"] == 1024, c
f = by["seed=1,fail=5"]
assert f["status"] == "failed" and f["exit_code"] == 5, f
PY
# every task had a GPU of its own (8 GPUs, 5 tasks running at once)
"$G" queue ls --json | python3 -c '
import json, sys
t = json.load(sys.stdin)
g = [tuple(x["gpus_used"]) for x in t]
assert len(t) == 5 and all(len(x) == 1 for x in g), t
assert len(set(g)) == 5, g
assert all(x["name"].startswith("sweep seed=") for x in t), t
' || fail "queue tasks: $("$G" queue ls)"
for f in "$D"/seed=*-r1.gpuwhy; do
	"$G" report "$f" >/dev/null 2>&1
	[ $? -le 1 ] || fail "cannot report on $f"
done
echo ok
