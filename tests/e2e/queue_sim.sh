#!/usr/bin/env bash
# gpuwhy queue on the simulated GPU: memory-aware concurrency on h100x1 and
# a100x4-pcie, CUDA_VISIBLE_DEVICES per task, peak GPU memory, a simulated
# out-of-memory retried with more headroom, and GPUs busy with foreign
# processes skipped.
. "$(dirname "$0")/queue_lib.bash"
sim_ok || { echo "simulated NVML not built: skipped"; exit 77; }

new_queue() {
	export GPUWHY_QUEUE=$T/$1
	DB=$GPUWHY_QUEUE/queue.db
	q config sample-interval 200ms >/dev/null
	q config kill-grace 1s >/dev/null
}
train() { echo "$GPUWHY" sim train --steps "$1" --gpu-ms 40 --cpu-ms 1 --mem-mib "$2"; }
# gate DIR: shell words that mark a task started in DIR and hold it until DIR/go
# exists, so how many run at once does not depend on how fast this machine is.
gate() { echo "touch $1/s.\$\$; until [ -e $1/go ]; do sleep 0.05; done;"; }
# open_gate DIR N: wait for N tasks held at DIR's gate, check no more came, open it.
open_gate() {
	until_true 120 sh -c "[ \$(ls $1 | grep -c '^s\.') -ge $2 ]" || fail "$2 tasks did not start together: $(ls "$1")"
	sleep 1
	[ "$(ls "$1" | grep -c '^s\.')" = "$2" ] || fail "more than $2 tasks at once: $(ls "$1")"
	touch "$1/go"
}

# --- h100x1 (80 GB): eight 30 GiB tasks, up to 8 per GPU -> two at a time
new_queue q1
mkdir "$T/g1"
for i in $(seq 8); do
	"$GPUWHY" --sim h100x1 queue add --mem 30G --per-gpu 8 -n "h$i" -- \
		sh -c "$(gate "$T/g1") echo visible=\$CUDA_VISIBLE_DEVICES order=\$CUDA_DEVICE_ORDER; exec $(train 12 30000)" >/dev/null
done
open_gate "$T/g1" 2
q wait $(seq 8) --timeout 120s || fail "h100x1 tasks did not all end done"
[ "$(max_overlap)" = 2 ] || fail "h100x1: $(max_overlap) tasks at once, not 2"
uuid=$(q gpus --json | json 'j["gpus"][0]["uuid"]')
case "$uuid" in GPU-*) ;; *) fail "no GPU UUID in the view: $uuid" ;; esac
q log 1 | grep -qx "visible=$uuid order=PCI_BUS_ID" || fail "task 1 environment: $(q log 1 | head -3)"
q show 1 --json | python3 -c '
import json, sys
t = json.load(sys.stdin)["task"]
assert t["gpus_used"] == "0", t
assert 29000 <= t["peak_gpu_mib"] <= 30720, t["peak_gpu_mib"]
' || fail "task 1 record: $(q show 1)"

# --- a100x4-pcie (4 x 80 GB): eight 50 GiB tasks -> four at a time, one per GPU
new_queue q2
mkdir "$T/g2"
for i in $(seq 8); do
	"$GPUWHY" --sim a100x4-pcie queue add --mem 50G --per-gpu 4 -n "a$i" -- \
		sh -c "$(gate "$T/g2") echo visible=\$CUDA_VISIBLE_DEVICES; exec $(train 12 50000)" >/dev/null
done
open_gate "$T/g2" 4
q wait $(seq 8) --timeout 120s || fail "a100x4 tasks did not all end done"
[ "$(max_overlap)" = 4 ] || fail "a100x4: $(max_overlap) tasks at once, not 4"
sqlite3 "$DB" "SELECT started, ended, gpu_idx, gpu_uuids FROM attempts" | python3 -c '
import sys
rows = [l.rstrip("\n").split("|") for l in sys.stdin]
assert len(rows) == 8, rows
assert {r[2] for r in rows} == {"0", "1", "2", "3"}, rows
for i, a in enumerate(rows):
    for b in rows[i + 1:]:
        overlap = float(a[0]) < float(b[1]) and float(b[0]) < float(a[1])
        assert not (overlap and a[2] == b[2]), ("two 50 GiB tasks shared a GPU", a, b)
' || fail "a100x4 placement"
for i in $(seq 8); do
	u=$(sqlite3 "$DB" "SELECT gpu_uuids FROM attempts WHERE task_id = $i")
	q log "$i" | grep -qx "visible=$u" || fail "task $i saw $(q log "$i" | grep visible=), placed on $u"
done

# --- simulated OOM: under-declared task fails, is retried with more headroom, succeeds
new_queue q3
q config per-gpu 4 >/dev/null
"$GPUWHY" --sim h100x1 queue add --mem 50G -n big -- $(train 150 50000) >/dev/null
# Started is not enough: the under-declared task must meet the big one's
# 50 GB already allocated, or a slow start lets it fit and never OOM.
until_true 30 sh -c "[ \"\$($GPUWHY queue gpus --json | python3 -c 'import json,sys; g = json.load(sys.stdin)[\"gpus\"][0]; print(g[\"tasks\"] == 1 and (g[\"free_mib\"] or 1e9) < 40000)' 2>/dev/null)\" = True ]" ||
	fail "the big task did not start and allocate its memory"
"$GPUWHY" --sim h100x1 queue add --mem 20G --retries 2 --retry-delay 500ms -n under -- $(train 5 40000) >/dev/null
q wait 2 --timeout 120s || fail "the OOM task did not end done: $(q show 2)"
q show 2 --json | python3 -c '
import json, sys
j = json.load(sys.stdin)
t, a = j["task"], j["attempts"]
assert t["attempts"] == 2 and t["oom_retries"] == 1, t
assert a[0]["oom"] == "gpu" and a[0]["exit_code"] == 1, a[0]
assert "CUDA out of memory" in a[0]["error"], a[0]
assert t["mem_hint_mib"] >= 40000, t
assert a[1]["reserved_mib"] == t["mem_hint_mib"] and a[1]["per_gpu"] == 2, a[1]
' || fail "OOM retry record: $(q show 2)"
r2=$(q show 2 --json | json 'j["attempts"][1]["reserved_mib"]')
q show 2 | grep -qx "  after OOM  attempt 2 reserved $(python3 -c "print('%.1fG' % ($r2 / 1024))"), at most 2 per GPU (1 OOM retry)" ||
	fail "OOM note: $(q show 2)"
big_end=$(q show 1 --json | json 'j["task"]["ended"]')
second=$(q show 2 --json | json 'j["attempts"][1]["started"]')
python3 -c "import sys; sys.exit(0 if $second >= $big_end - 0.05 else 1)" ||
	fail "the retry ran beside the task that left it no room ($second < $big_end)"

# --- a foreign process on GPU 0: the queue uses GPUs 1-3 and says why it waits
new_queue q4
GPUWHY_SIM_STATE=$GPUWHY_SIM_STATE "$GPUWHY" --sim a100x4-pcie sim train --gpu 0 --mem-mib 1000 \
	--steps 100000 --gpu-ms 50 --cpu-ms 1 >/dev/null 2>&1 &
EXTRA_PIDS="$!"
# The foreign job must hold its context on GPU 0 before the tasks come: on a
# loaded machine it can take seconds to get there.
until_true 60 sh -c "$GPUWHY --sim a100x4-pcie status --format json | python3 -c 'import json,sys; sys.exit(0 if any(p[\"gpu\"] == 0 for p in json.load(sys.stdin)[\"processes\"]) else 1)'" ||
	fail "the foreign process never showed on GPU 0: $("$GPUWHY" --sim a100x4-pcie status)"
for i in 1 2 3 4; do
	"$GPUWHY" --sim a100x4-pcie queue add -n "f$i" -- $(train 100000 1000) >/dev/null
done
until_true 30 sh -c "[ \$($GPUWHY queue ls --state running --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))') = 3 ]" ||
	fail "three tasks did not start beside the foreign process"
sleep 0.5
[ "$(state 4)" = queued ] || fail "task 4 should wait"
q show 4 --json | json 'j["task"]["waiting"]' | grep -q "GPU 0 has 1 foreign process" ||
	fail "task 4 wait reason: $(q show 4 --json | json 'j["task"]["waiting"]')"
used=$(sqlite3 "$DB" "SELECT group_concat(gpu_idx) FROM (SELECT gpu_idx FROM attempts ORDER BY gpu_idx)")
[ "$used" = "1,2,3" ] || fail "tasks went to GPUs $used"
q gpus --json | json '[g["foreign_processes"] for g in j["gpus"]]' | grep -qx "\[1, 0, 0, 0\]" ||
	fail "gpus view: $(q gpus)"
q cancel --all >/dev/null
kill "$EXTRA_PIDS"
echo "queue_sim: ok"
