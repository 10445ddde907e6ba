#!/usr/bin/env bash
# bench/queue.sh [BUILD] [N]: N (default 1000) no-op tasks through `gpuwhy
# queue` (local back end, one task at a time) and through Debian's
# task-spooler (`tsp`, one slot), in the same run on the same machine.
#
# task-spooler keeps one client process per queued job and serves about 1000
# of them at most, so both systems get the tasks in batches of 100, each
# queued behind a blocker task and then released. The batches alternate
# between the two systems (gpuwhy's, then task-spooler's, then gpuwhy's...),
# so a change in the machine's load from other work reaches both alike.
# Measured for each:
#   submit   sequential `gpuwhy queue add` / `tsp` calls from a shell (tasks/s)
#   drain    `true` tasks: tasks / (end of the batch's last task - release) (tasks/s)
#   gap      tasks that print $EPOCHREALTIME as their first and last action:
#            one task's last stamp to the next task's first stamp (ms): the
#            runner noticing the end, its bookkeeping and starting the next
#            (bash starts in both, so both pay the same for the stamps)
# Raw stamps go to bench/out/queue-*-stamps.txt.
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

B=$((N < 100 ? N : 100))
BATCHES=$(((N + B - 1) / B))

now() { date +%s.%N; }
wait_file() { until [ -s "$1" ]; do sleep 0.02; done; }
calc() { python3 -c "print($1)"; }

# Gap statistics (median, p95, mean in ms, count) from lines "TIME s|e BATCH";
# only pairs within a batch count.
gaps() {
	python3 - "$1" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
g = sorted(float(b[0]) - float(a[0]) for a, b in zip(rows, rows[1:])
           if a[1] == "e" and b[1] == "s" and a[2] == b[2])
n = len(g)
print("%.2f %.2f %.2f %d" % (g[n // 2] * 1e3, g[int(n * 0.95)] * 1e3, sum(g) / n * 1e3, n))
PY
}

declare -A SUB_T DRAIN_T
# batch NAME KIND K SUBMIT...: B tasks of KIND (drain: `true`; gap: stamping) through
# SUBMIT (called as SUBMIT CMD ARGS), queued behind a blocker, then released.
batch() {
	local name=$1 kind=$2 k=$3 i t0 t1 rel
	shift 3
	rm -f "$W/go" "$W/end"
	"$@" sh -c "until [ -e $W/go ]; do sleep 0.01; done"
	t0=$(now)
	for i in $(seq "$B"); do
		if [ "$kind" = drain ]; then
			"$@" true
		else
			"$@" bash -c "printf '%s s $k\n' \$EPOCHREALTIME >>$W/$name-stamps; printf '%s e $k\n' \$EPOCHREALTIME >>$W/$name-stamps"
		fi
	done
	t1=$(now)
	"$@" bash -c "echo \$EPOCHREALTIME >$W/end"
	rel=$(now)
	touch "$W/go"
	wait_file "$W/end"
	if [ "$kind" = drain ]; then
		SUB_T[$name]=$(calc "${SUB_T[$name]:-0} + $t1 - $t0")
		DRAIN_T[$name]=$(calc "${DRAIN_T[$name]:-0} + $(cat "$W/end") - $rel")
	fi
}

gq() { "$G" queue add --gpus 0 -- "$@" >/dev/null; }
tq() { tsp "$@" >/dev/null; }

# Both systems up, each idle while the other runs a batch.
"$G" queue config cpu-slots 1 >/dev/null
"$G" queue worker >"$W/worker.log" 2>&1 &
until "$G" queue gpus --json 2>/dev/null | grep -q '"worker_pid": *[0-9]'; do sleep 0.05; done
tsp -S 1 >/dev/null
for kind in drain gap; do
	for k in $(seq "$BATCHES"); do
		batch gpuwhy "$kind" "$k" gq
		batch tsp "$kind" "$k" tq
	done
done
# results NAME: the figures of one system into SUBMIT DRAIN MED P95 MEAN NGAPS
results() {
	SUBMIT=$(calc "'%.1f' % ($B * $BATCHES / ${SUB_T[$1]})")
	DRAIN=$(calc "'%.1f' % ($B * $BATCHES / ${DRAIN_T[$1]})")
	read -r MED P95 MEAN NGAPS < <(gaps "$W/$1-stamps")
	cp "$W/$1-stamps" "$OUT/queue-$1-stamps.txt"
}
results gpuwhy
g_submit=$SUBMIT g_drain=$DRAIN g_med=$MED g_p95=$P95 g_mean=$MEAN g_n=$NGAPS
results tsp
t_submit=$SUBMIT t_drain=$DRAIN t_med=$MED t_p95=$P95 t_mean=$MEAN

# --from: N tasks in one call
for i in $(seq "$N"); do echo true; done >"$W/tasks.txt"
t0=$(now)
"$G" queue add --gpus 0 --no-worker --from "$W/tasks.txt" >/dev/null
t1=$(now)
g_from=$(calc "'%.0f' % ($N / ($t1 - $t0))")
"$G" queue wait --timeout 600s >/dev/null
"$G" queue stop >/dev/null

ratio() { calc "'%.2f' % ($1 / $2)"; }
cat <<EOF
### gpuwhy queue vs task-spooler ($(date +%Y-%m-%d))
Machine: $(nproc)-core VM, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), Debian $(cat /etc/debian_version).
Peer: task-spooler $(dpkg-query -W -f='${Version}' task-spooler 2>/dev/null) (\`tsp -S 1\`). gpuwhy: \`queue\` local back end, \`config cpu-slots 1\`, \`--gpus 0\` tasks.
$((B * BATCHES)) tasks per measure and system ($BATCHES batches of $B behind a blocker, alternating between the systems); $g_n gaps.

| measure | gpuwhy queue | tsp | gpuwhy / tsp |
| --- | ---: | ---: | ---: |
| submit, one call per task (tasks/s) | $g_submit | $t_submit | $(ratio "$g_submit" "$t_submit") |
| drain of \`true\` tasks (tasks/s) | $g_drain | $t_drain | $(ratio "$g_drain" "$t_drain") |
| end -> next start, median (ms) | $g_med | $t_med | $(ratio "$g_med" "$t_med") |
| end -> next start, p95 (ms) | $g_p95 | $t_p95 | $(ratio "$g_p95" "$t_p95") |
| end -> next start, mean (ms) | $g_mean | $t_mean | $(ratio "$g_mean" "$t_mean") |

gpuwhy \`add --from\` with $N commands in one file: $g_from tasks/s submitted.
EOF
