#!/usr/bin/env bash
# `sim train` meets the GPU's state the way a real job does: throttled clocks,
# a trained-down PCIe link and another process on the same GPU lengthen its
# steps; a GPU that falls off the bus fails it; --hidden runs it as if in
# another PID namespace. `sim hog` loads the host. Only relations between runs
# of the same job are asserted, never how fast this machine is.
. "$(dirname "$0")/lib.bash"
have_sim || skip "simulated GPU not built"

# Seconds a run took, from its last line ("training finished: N steps in X s").
took() { sed -n 's/^training finished: [0-9]* steps in \([0-9.]*\)s$/\1/p' "$1"; }
# assert_ratio SLOW FAST MIN what: SLOW >= MIN * FAST
assert_ratio() {
	awk -v s="$1" -v f="$2" -v m="$3" 'BEGIN{exit !(f > 0 && s >= m * f)}' ||
		fail "$4: $1 s should be at least $3 x $2 s"
}

# ---- throttling: the same job at a pinned time inside and outside the thermal episode ----
# rtx4090-throttle: thermal slowdown 30-60 s of every 120 s holds SM at 1650 of 2745 MHz.
GPUWHY_SIM_TIME=10 "$GPUWHY" --sim rtx4090-throttle sim show | grep -q 'sm_mhz=2745 reasons=0x0' ||
	fail "t=10 should be unthrottled"
GPUWHY_SIM_TIME=40 "$GPUWHY" --sim rtx4090-throttle sim show | grep -q 'sm_mhz=1650 reasons=0x60' ||
	fail "t=40 should be in thermal slowdown"
job=(sim train --workers 0 --cpu-ms 0 --gpu-ms 60 --h2d-mib 0 --steps 6)
GPUWHY_SIM_TIME=10 "$GPUWHY" --sim rtx4090-throttle "${job[@]}" >"$T/cool.out" || fail "cool run"
GPUWHY_SIM_TIME=40 "$GPUWHY" --sim rtx4090-throttle "${job[@]}" >"$T/hot.out" || fail "hot run"
cool=$(took "$T/cool.out") hot=$(took "$T/hot.out")
echo "throttle: unthrottled $cool s, thermal slowdown $hot s (clock ratio 1.66)"
assert_ratio "$hot" "$cool" 1.25 "throttled run"

# ---- PCIe: the same copy-heavy job on GPU 0 (Gen3 x8) and GPU 1 (Gen4 x16) ----
job=(sim train --workers 0 --cpu-ms 0 --gpu-ms 2 --h2d-mib 512 --steps 4)
"$GPUWHY" --sim a100x2-pcie-degraded "${job[@]}" --gpu 0 >"$T/narrow.out" || fail "narrow run"
"$GPUWHY" --sim a100x2-pcie-degraded "${job[@]}" --gpu 1 >"$T/wide.out" || fail "wide run"
narrow=$(took "$T/narrow.out") wide=$(took "$T/wide.out")
echo "pcie: gen3x8 $narrow s, gen4x16 $wide s (bandwidth ratio 4)"
assert_ratio "$narrow" "$wide" 2 "run over the degraded link"

# ---- contention: a GPU-bound job alone, then next to another one on the same GPU ----
job=(sim train --workers 0 --cpu-ms 0 --gpu-ms 50 --h2d-mib 0 --steps 10)
"$GPUWHY" --sim h100x1 "${job[@]}" >"$T/alone.out" || fail "alone run"
"$GPUWHY" --sim h100x1 sim train --workers 0 --cpu-ms 0 --gpu-ms 50 --steps 100000 >/dev/null &
other=$!
PIDS_TO_KILL+=("$other")
sleep 1.2 # the neighbour has been busy for the last second
"$GPUWHY" --sim h100x1 "${job[@]}" >"$T/shared.out" || fail "shared run"
kill -TERM "$other"
wait "$other" 2>/dev/null
alone=$(took "$T/alone.out") shared=$(took "$T/shared.out")
echo "contention: alone $alone s, sharing the GPU $shared s"
assert_ratio "$shared" "$alone" 1.4 "run sharing its GPU"

# ---- a GPU that falls off the bus fails the job like CUDA does ----
# h100x1-lost: the GPU is lost at t = 5 s.
"$GPUWHY" sim reset h100x1-lost >/dev/null
"$GPUWHY" --sim h100x1-lost sim train --workers 0 --cpu-ms 1 --gpu-ms 50 --steps 100000 \
	>"$T/lost.out" 2>"$T/lost.err"
assert_eq "$?" 1 "exit status after the GPU was lost"
assert_contains "$(cat "$T/lost.err")" "RuntimeError: CUDA error: unspecified launch failure" "stderr"
grep -q '^training finished' "$T/lost.out" && fail "a job whose GPU was lost finished"
steps=$(grep -c '^step ' "$T/lost.out")
assert_ge "$steps" 1 "steps before the loss"
# A job started after the loss fails at its first GPU call.
"$GPUWHY" --sim h100x1-lost sim train --steps 3 >/dev/null 2>"$T/lost2.err"
assert_eq "$?" 1 "exit status on a lost GPU"

# show_while_training TRAIN_OPTION...: `sim show` on h100x1 0.6 s into a long
# `sim train` with these options, in $show; the job (its PID in $job_pid) is ended.
show_while_training() {
	"$GPUWHY" --sim h100x1 sim train "$@" --steps 100000 >/dev/null &
	job_pid=$!
	PIDS_TO_KILL+=("$job_pid")
	sleep 0.6
	show=$("$GPUWHY" --sim h100x1 sim show)
	kill -TERM "$job_pid"
	wait "$job_pid" 2>/dev/null
}

# ---- hidden: the GPU shows the work, not the process ----
for mode in pid none; do
	show_while_training --hidden=$mode --workers 0 --cpu-ms 0 --gpu-ms 50 --mem-mib 2048
	util=$(sed -n 's/.* util=\([0-9]*\) .*/\1/p' <<<"$show")
	used=$(sed -n 's/.* mem_used_mib=\([0-9]*\) .*/\1/p' <<<"$show")
	procs=$(sed -n 's/.* procs=\(.*\)$/\1/p' <<<"$show")
	assert_ge "$util" 50 "utilization of a hidden ($mode) job"
	assert_ge "$used" 2048 "memory of a hidden ($mode) job"
	case $mode in
	none) assert_eq "$procs" "-" "process list with --hidden=none" ;;
	pid)
		shown=${procs%%:*}
		[ "$shown" != "-" ] && [ "$shown" != "$job_pid" ] || fail "--hidden=pid lists '$procs' (job $job_pid)"
		kill -0 "$shown" 2>/dev/null && fail "--hidden=pid lists PID $shown, which exists here"
		assert_eq "${procs#*:}" 2048 "memory of the listed foreign PID"
		;;
	esac
done
GPUWHY_SIM_HIDDEN=sideways "$GPUWHY" --sim h100x1 sim train --steps 1 2>/dev/null
assert_eq "$?" 2 "bad GPUWHY_SIM_HIDDEN"
"$GPUWHY" --sim h100x1 sim train --hidden=maybe --steps 1 2>/dev/null
assert_eq "$?" 2 "bad --hidden mode"

# ---- memory-bound kernels: DRAM bandwidth at --dram-pct of the busy time ----
show_while_training --workers 0 --cpu-ms 0 --gpu-ms 100 --kernel-us 60 --dram-pct 85
util=$(sed -n 's/.* util=\([0-9]*\) .*/\1/p' <<<"$show")
mem=$(sed -n 's/.* mem_util=\([0-9]*\) .*/\1/p' <<<"$show")
echo "memory-bound: util $util %, memory interface $mem %"
assert_ge "$util" 10 "utilization of the memory-bound job"
# the same period: mem_util = 0.85 x util, give or take rounding
awk -v u="$util" -v m="$mem" 'BEGIN{exit !(m >= 0.85 * u - 1.5 && m <= 0.85 * u + 1.5)}' ||
	fail "memory interface $mem % should be 85 % of utilization $util %"
"$GPUWHY" --sim h100x1 sim train --dram-pct 101 --steps 1 2>/dev/null
assert_eq "$?" 2 "--dram-pct 101"

# ---- --buffered: step lines in one burst, as Python prints into a pipe; gpuwhy run fixes it ----
if command -v sqlite3 >/dev/null; then
	burst=(sim train --workers 0 --cpu-ms 0 --gpu-ms 20 --h2d-mib 0 --steps 40 --buffered)
	PYTHONUNBUFFERED= "$GPUWHY" --sim h100x1 run -o "$T/burst.gpuwhy" --no-summary -- "$GPUWHY" "${burst[@]}" \
		>/dev/null 2>&1 || fail "buffered run"
	"$GPUWHY" --sim h100x1 run -o "$T/paced.gpuwhy" --no-summary -- "$GPUWHY" "${burst[@]}" \
		>/dev/null 2>&1 || fail "run of a buffered job"
	span() { sqlite3 "$1" 'SELECT count(*) || " " || (max(t) - min(t)) FROM steps'; }
	read -r n s <<<"$(span "$T/burst.gpuwhy")"
	assert_eq "$n" 40 "steps of the buffered run"
	assert_le "$s" 0.05 "span of step times arriving in one burst"
	read -r n s <<<"$(span "$T/paced.gpuwhy")"
	assert_eq "$n" 40 "steps under gpuwhy run's PYTHONUNBUFFERED=1"
	assert_ge "$s" 0.7 "span of 39 steps of at least 20 ms each"
fi

# ---- hog: busy processes that are not the job ----
"$GPUWHY" sim hog --cores 2 --seconds 30 >"$T/hog.out" &
hog=$!
PIDS_TO_KILL+=("$hog")
for _ in $(seq 50); do [ -s "$T/hog.out" ] && break; sleep 0.1; done
read -r -a kids <<<"$(sed -n 's/.*PIDs \(.*\)$/\1/p' "$T/hog.out")"
assert_eq "${#kids[@]}" 2 "hog processes"
sleep 0.5
for k in "${kids[@]}"; do
	assert_eq "$(cat /proc/"$k"/comm)" "gpuwhy-hog" "hog process name"
	# utime + stime in ticks: it has been computing.
	ticks=$(awk '{sub(/.*\) /, ""); print $12 + $13}' /proc/"$k"/stat)
	assert_ge "$ticks" 1 "CPU time of hog $k"
done
kill -TERM "$hog"
wait "$hog"
assert_eq "$?" 143 "hog stopped by SIGTERM"
for k in "${kids[@]}"; do kill -0 "$k" 2>/dev/null && fail "hog $k outlived its parent"; done
"$GPUWHY" sim hog --cores 0 2>/dev/null
assert_eq "$?" 2 "hog --cores 0"
echo "sim_gpu_state: all checks passed"
