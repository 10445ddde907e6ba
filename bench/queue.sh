#!/usr/bin/env bash
# bench/queue.sh [BUILD] [N]: N (default 1000) no-op tasks through `gpuwhy
# queue` (local back end, one task at a time) and through Debian's
# task-spooler (`tsp`, one slot), in the same run on the same machine.
#
# Measured for each:
#   submit   N sequential `add` / `tsp` calls from a shell (tasks/s)
#   drain    N `true` tasks queued behind a blocker, released at once:
#            N / (end of the last task - release) (tasks/s)
#   gap      N tasks that print $EPOCHREALTIME as their first and last action:
#            from one task's last stamp to the next task's first stamp (ms):
#            the runner noticing the end, its bookkeeping and starting the next
#            (bash starts in both, so both pay the same for the stamp itself)
# Raw stamps go to bench/out/queue-*.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
N=${2:-1000}
G=$(realpath "$BUILD/gpuwhy")
command -v tsp >/dev/null || { echo "tsp (task-spooler) missing: scripts/install-deps --extra"; exit 77; }
OUT=bench/out
mkdir -p "$OUT"
W=$(mktemp -d /tmp/gw-bench-queue-XXXXXX)
export GPUWHY_QUEUE=$W/q TS_SOCKET=$W/tsp.sock TMPDIR=$W TS_MAXFINISHED=$((3 * N + 10))
cleanup() {
	"$G" queue stop >/dev/null 2>&1 || true
	tsp -K >/dev/null 2>&1 || true
	rm -rf "$W"
}
trap cleanup EXIT

now() { date +%s.%N; }
rate() { python3 -c "print('%.1f' % ($1 / ($3 - $2)))"; }
wait_file() { until [ -s "$1" ]; do sleep 0.02; done; }
stamp_cmd='printf "%s s\n" $EPOCHREALTIME >>'"$W"'/STAMPS; printf "%s e\n" $EPOCHREALTIME >>'"$W"'/STAMPS'

# gap statistics from a stamps file: median, p95, mean in ms
gaps() {
	python3 - "$1" <<'EOF'
import sys
rows = [l.split() for l in open(sys.argv[1])]
gaps = [float(b[0]) - float(a[0]) for a, b in zip(rows, rows[1:]) if a[1] == "e" and b[1] == "s"]
gaps.sort()
n = len(gaps)
print("%.2f %.2f %.2f %d" % (gaps[n // 2] * 1e3, gaps[int(n * 0.95)] * 1e3, sum(gaps) / n * 1e3, n))
EOF
}

# ---- gpuwhy queue ----
"$G" queue config cpu-slots 1 >/dev/null
"$G" queue worker >"$W/worker.log" 2>&1 &
until "$G" queue gpus --json 2>/dev/null | grep -q '"worker_pid": *[0-9]'; do sleep 0.05; done
"$G" queue add --gpus 0 -- sh -c "until [ -e $W/go1 ]; do sleep 0.01; done" >/dev/null
t0=$(now)
for i in $(seq "$N"); do "$G" queue add --gpus 0 -- true >/dev/null; done
t1=$(now)
g_submit=$(rate "$N" "$t0" "$t1")
"$G" queue add --gpus 0 -- bash -c "echo \$EPOCHREALTIME > $W/g-drain-end" >/dev/null
rel=$(now)
touch "$W/go1"
wait_file "$W/g-drain-end"
g_drain=$(rate "$N" "$rel" "$(cat "$W/g-drain-end")")
for i in $(seq "$N"); do
	"$G" queue add --gpus 0 -- bash -c "${stamp_cmd//STAMPS/g-stamps}" >/dev/null
done
"$G" queue wait --timeout 600s >/dev/null
read -r g_med g_p95 g_mean g_n < <(gaps "$W/g-stamps")
# --from: the same N tasks in one call
for i in $(seq "$N"); do echo true; done >"$W/tasks.txt"
t0=$(now)
"$G" queue add --gpus 0 --no-worker --from "$W/tasks.txt" >/dev/null
t1=$(now)
g_from=$(rate "$N" "$t0" "$t1")
"$G" queue wait --timeout 600s >/dev/null
"$G" queue stop >/dev/null
cp "$W/g-stamps" "$OUT/queue-gpuwhy-stamps.txt"

# ---- task-spooler ----
tsp -S 1 >/dev/null
tsp sh -c "until [ -e $W/go2 ]; do sleep 0.01; done" >/dev/null
t0=$(now)
for i in $(seq "$N"); do tsp true >/dev/null; done
t1=$(now)
t_submit=$(rate "$N" "$t0" "$t1")
tsp bash -c "echo \$EPOCHREALTIME > $W/t-drain-end" >/dev/null
rel=$(now)
touch "$W/go2"
wait_file "$W/t-drain-end"
t_drain=$(rate "$N" "$rel" "$(cat "$W/t-drain-end")")
for i in $(seq "$N"); do tsp bash -c "${stamp_cmd//STAMPS/t-stamps}" >/dev/null; done
tsp -w >/dev/null 2>&1 || true
until [ "$(grep -c ' e$' "$W/t-stamps" 2>/dev/null)" = "$N" ]; do sleep 0.05; done
read -r t_med t_p95 t_mean t_n < <(gaps "$W/t-stamps")
cp "$W/t-stamps" "$OUT/queue-tsp-stamps.txt"

ratio() { python3 -c "print('%.2f' % ($1 / $2))"; }
cat <<EOF
### gpuwhy queue vs task-spooler ($(date +%Y-%m-%d))
Machine: $(nproc)-core VM, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), Debian $(cat /etc/debian_version).
Peer: task-spooler $(dpkg-query -W -f='${Version}' task-spooler 2>/dev/null) (\`tsp -S 1\`). gpuwhy: \`queue\` local back end, \`config cpu-slots 1\`, \`--gpus 0\` tasks.
N = $N tasks each.

| measure | gpuwhy queue | tsp | gpuwhy / tsp |
| --- | ---: | ---: | ---: |
| submit, one call per task (tasks/s) | $g_submit | $t_submit | $(ratio "$g_submit" "$t_submit") |
| drain of \`true\` tasks (tasks/s) | $g_drain | $t_drain | $(ratio "$g_drain" "$t_drain") |
| end -> next start, median (ms) | $g_med | $t_med | $(ratio "$g_med" "$t_med") |
| end -> next start, p95 (ms) | $g_p95 | $t_p95 | $(ratio "$g_p95" "$t_p95") |
| end -> next start, mean (ms) | $g_mean | $t_mean | $(ratio "$g_mean" "$t_mean") |

gpuwhy \`add --from\` with the $N commands in one file: $g_from tasks/s submitted.
EOF
