# gpuwhy run on the simulated GPU: steps, exit status, the workload on the GPU, the host side.
. "$(dirname "$0")/lib.bash"
have_sim || skip "simulated GPU not built"
command -v sqlite3 >/dev/null || skip "sqlite3 missing"

"$GPUWHY" --sim h100x1 run -o "$T/a.gpuwhy" -i 200ms --no-summary -- \
	"$GPUWHY" sim train --workers 1 --cpu-ms 40 --gpu-ms 10 --steps 50 >"$T/out" 2>&1
assert_eq "$?" 0 "run exit"
sq() { sqlite3 "$T/a.gpuwhy" "$1"; }
assert_eq "$(sq 'SELECT count(*) FROM steps')" 50 "every step recorded"
assert_eq "$(sq 'SELECT min(step) || "-" || max(step) FROM steps')" "1-50" "step numbers"
assert_eq "$(sq "SELECT value FROM meta WHERE key='exit_status'")" 0 "exit status"
assert_eq "$(sq 'SELECT count(*) FROM gpus')" 1 "one GPU"
# the workload process on GPU 0, with the memory it holds (default 1024 MiB)
assert_eq "$(sq 'SELECT max(gpu_mem_mib) FROM process_samples WHERE gpu = 0 AND in_tree = 1')" 1024.0 "workload on the GPU"
# the data worker burned 50 x 40 ms of its CPU time, and that shows on the host side:
# the tree's CPU time over the samples (a share of a core times each interval), less
# at most the two edge intervals, whatever share of a core a loaded host gave it
tree=$(sq 'SELECT sum(tree_cpu / 100.0 * interval) FROM host_samples')
assert_ge "$tree" 1.4 "tree CPU seconds"
core=$(sq 'SELECT max(cpu_busy_max) FROM host_samples')
assert_ge "$core" 90 "busiest core"
# a data-starved GPU: mostly idle between phases, and the driver samples show the swings
util=$(sq 'SELECT avg(utilization_gpu) FROM gpu_samples')
assert_le "$util" 50 "mean utilization of a one-worker run"
# with phases longer than the driver's 1/6 s sample period, its samples swing 0<->100
# even though we poll at 1 Hz
"$GPUWHY" --sim h100x1 run -o "$T/s.gpuwhy" -i 1s --no-summary -- \
	"$GPUWHY" sim train --workers 1 --cpu-ms 500 --gpu-ms 400 --steps 5 >/dev/null 2>&1 || fail "long phases run"
assert_eq "$(sqlite3 "$T/s.gpuwhy" 'SELECT max(utilization_gpu_samples_max) >= 90 AND min(utilization_gpu_samples_min) <= 10 FROM gpu_samples')" 1 "driver samples swing 0<->100"
# export round-trips the table
rows=$("$GPUWHY" export "$T/a.gpuwhy" --table gpu | tail -n +2 | wc -l)
assert_eq "$rows" "$(sq 'SELECT count(*) FROM gpu_samples')" "export rows"
"$GPUWHY" export "$T/a.gpuwhy" --table gpu --format jsonl | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin]
assert all(r["gpu"] == 0 and r["memory_total"] == 81559 for r in rows), rows[0]
' || fail "export jsonl"

# a failing job: run exits with its status, and the recording says so
"$GPUWHY" --sim h100x1 run -o "$T/b.gpuwhy" --no-summary -- "$GPUWHY" sim train --steps 3 --gpu-ms 5 --cpu-ms 5 --fail-exit 5 >/dev/null 2>&1
assert_eq "$?" 5 "failing job"
assert_eq "$(sqlite3 "$T/b.gpuwhy" "SELECT value FROM meta WHERE key='exit_status'")" 5 "recorded status"
# an out-of-memory job: the message becomes an oom event
"$GPUWHY" --sim h100x1 run -o "$T/c.gpuwhy" --no-summary -- "$GPUWHY" sim train --steps 20 --gpu-ms 5 --cpu-ms 5 --oom-at 3 >/dev/null 2>&1
assert_eq "$?" 1 "oom job exit"
assert_eq "$(sqlite3 "$T/c.gpuwhy" "SELECT count(*) > 0 FROM events WHERE kind = 'oom'")" 1 "oom event"
# a full disk (here a 300 KiB file-size limit) stops the recording with one line;
# the command runs on to its end and its status is kept; what was committed stays
(ulimit -f 300; "$GPUWHY" --sim h100x8-nvlink run -o "$T/full.gpuwhy" -i 50ms --no-summary -- \
	bash -c 'for i in $(seq 40); do echo step $i; sleep 0.1; done; exit 4' >"$T/full.out" 2>"$T/full.err")
assert_eq "$?" 4 "status of a command whose recording filled the disk"
assert_eq "$(wc -l <"$T/full.out")" 40 "its output, whole"
assert_contains "$(cat "$T/full.err")" "recording stopped" "the one error line"
kept=$(sqlite3 "$T/full.gpuwhy" 'SELECT count(*) FROM gpu_samples')
assert_ge "$kept" 8 "samples committed before the disk filled"
# the summary
"$GPUWHY" --sim h100x1 run -o "$T/d.gpuwhy" -- "$GPUWHY" sim train --steps 5 --gpu-ms 5 --cpu-ms 5 >/dev/null 2>"$T/err"
assert_contains "$(cat "$T/err")" "steps      5, step time p50" "summary"
assert_contains "$(cat "$T/err")" "GPU 0      util mean" "summary GPU line"
echo "1 passed, 0 failed"
