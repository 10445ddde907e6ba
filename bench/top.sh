#!/usr/bin/env bash
# CPU and memory of `gpuwhy top` at 1 Hz on 8 simulated GPUs (h100x8-nvlink) with
# a training job on two of them, drawn in a 160x50 tmux terminal, over SECONDS
# (default 60); and the same at 10 Hz. Baselines run at the same time, on the same GPUs:
#   - gpuwhy query -l 1 of the GPU fields top shows (the same NVML reads, no host, no screen)
#   - gpuwhy record -i 1s (the same sampler, writing SQLite instead of drawing)
#   - top -b -d 1 of procps (a 1 Hz host monitor printing every process)
# CPU is the run time of each process's threads (/proc/PID/task/*/schedstat,
# nanoseconds) between the end of a warm-up and the end; memory is VmHWM.
#   bench/top.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$src/build}"
secs="${2:-60}"
G="$build/gpuwhy"
command -v tmux >/dev/null || { echo "bench/top.sh: tmux is not installed; skipped"; exit 0; }
command -v top >/dev/null || { echo "bench/top.sh: procps top is not installed; skipped"; exit 0; }
work="$(mktemp -d)"
export GPUWHY_SIM_STATE="$work/sim"
SOCK="-L gwbench-$$"
pids=()
cleanup() {
	tmux $SOCK kill-server 2>/dev/null || true
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

SCEN=h100x8-nvlink
"$G" --sim $SCEN sim train --steps 100000000 --ranks 2 --workers 2 --cpu-ms 30 --gpu-ms 20 \
	>"$work/train.log" 2>&1 &
pids+=($!)
sleep 2

tmux $SOCK -f /dev/null new-session -d -s b -x 160 -y 50 -e LANG=C.UTF-8 \
	-e GPUWHY_SIM_STATE="$GPUWHY_SIM_STATE" "exec $G --sim $SCEN top -i 1s"
top_pid=$(tmux $SOCK display -p -t b '#{pane_pid}')
# the fastest interval, for scale
tmux $SOCK new-session -d -s f -x 160 -y 50 -e LANG=C.UTF-8 \
	-e GPUWHY_SIM_STATE="$GPUWHY_SIM_STATE" "exec $G --sim $SCEN top -i 100ms"
fast_pid=$(tmux $SOCK display -p -t f '#{pane_pid}')
fields=utilization.gpu,gpm.sm_active,memory.used,memory.total,power.draw,enforced.power.limit
fields=$fields,temperature.gpu,clocks.current.sm,clocks.max.sm,clocks.current.memory,pstate
fields=$fields,pcie.link.gen.current,pcie.link.width.current,pcie.rx,pcie.tx,fan.speed
fields=$fields,clocks_event_reasons.active,ecc.errors.uncorrected.volatile.total,pcie.replay_counter
"$G" --sim $SCEN query --query-gpu=$fields --format=csv -l 1 >/dev/null &
query_pid=$!
pids+=($query_pid)
"$G" --sim $SCEN record -o "$work/r.gpuwhy" -i 1s 2>/dev/null &
record_pid=$!
pids+=($record_pid)
top -b -d 1 >/dev/null &
procps_pid=$!
pids+=($procps_pid)

# CPU nanoseconds of every thread of a process
ticks() { cat /proc/"$1"/task/*/schedstat | awk '{ s += $1 } END { printf "%.0f", s }'; }
hwm() { awk '/^VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
sleep 3 # warm-up: start-up, the first snapshots
declare -A t0
for p in $top_pid $fast_pid $query_pid $record_pid $procps_pid; do t0[$p]=$(ticks "$p"); done
start=$(date +%s.%N)
sleep "$secs"
end=$(date +%s.%N)
wall=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
cpu() { awk -v a="${t0[$1]}" -v b="$(ticks "$1")" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'; }
c_top=$(cpu $top_pid) c_fast=$(cpu $fast_pid) c_query=$(cpu $query_pid) c_record=$(cpu $record_pid) c_procps=$(cpu $procps_pid)
m_top=$(hwm $top_pid) m_fast=$(hwm $fast_pid) m_query=$(hwm $query_pid) m_record=$(hwm $record_pid) m_procps=$(hwm $procps_pid)
nprocs=$(ls -d /proc/[0-9]* | wc -l)
screen=$(tmux $SOCK capture-pane -p -t b)
tmux $SOCK send-keys -t b q
tmux $SOCK send-keys -t f q

pct() { awk -v c="$1" -v w="$wall" 'BEGIN { printf "%.3f %%", 100 * c / w }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "n/a" }'; }
echo "### top ($(date -u +%Y-%m-%d), $(nproc) CPUs, $(uname -r))"
echo
echo "8 simulated H100 ($SCEN), a 2-rank training job on GPUs 0-1 with 4 data workers,"
echo "$nprocs processes on the host; 1 Hz; ${wall} s measured after a 3 s warm-up."
echo
echo "| process (all at once) | CPU s | CPU (% of one core) | vs query | vs procps top | peak RSS (MiB) |"
echo "| --- | --- | --- | --- | --- | --- |"
row() { echo "| $1 | $2 | $(pct "$2") | $(ratio "$2" "$c_query") | $(ratio "$2" "$c_procps") | $3 |"; }
row "gpuwhy top -i 1s, 160x50 tmux" "$c_top" "$m_top"
row "gpuwhy query -l 1, the same GPU fields, CSV" "$c_query" "$m_query"
row "gpuwhy record -i 1s" "$c_record" "$m_record"
row "procps top -b -d 1" "$c_procps" "$m_procps"
row "gpuwhy top -i 100ms (10 Hz), for scale" "$c_fast" "$m_fast"
echo
echo "Status line at the end: $(printf '%s\n' "$screen" | tail -2 | head -1 | sed 's/ *$//')"
