#!/usr/bin/env bash
# The simulated GPU through the gpuwhy binary: scenario listing and checking,
# `sim show` values, `sim train` output, failures (out of memory, --fail-exit,
# signals), ranks, and the coupling between a running workload and what the
# simulated NVML reports.
set -u
GPUWHY=${GPUWHY:?set GPUWHY to the gpuwhy binary}
SRC=${GPUWHY_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v awk >/dev/null || exit 77

T=$(mktemp -d /tmp/gpuwhy-e2e-sim.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$T"' EXIT
export GPUWHY_SIM_STATE=$T/state
unset GPUWHY_SIM_SCENARIO GPUWHY_SIM_TIME GPUWHY_NVML
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
expect_eq() { [ "$1" = "$2" ] || fail "$3: got '$1', want '$2'"; }

# ---- list and check ----
list=$("$GPUWHY" sim list)
for s in h100x1 h100x8-nvlink a100x4-pcie rtx4090-throttle a100x2-pcie-degraded l4x2-foreign h100x1-lost h100x1-mig; do
  grep -qx "$s" <<<"$list" || fail "sim list lacks $s"
done
"$GPUWHY" sim check "$SRC"/sim/scenarios/*.json >"$T/check.out" || fail "shipped scenarios do not check"
expect_eq "$(grep -c ': ok, ' "$T/check.out")" "$(ls "$SRC"/sim/scenarios/*.json | wc -l)" "sim check ok lines"
printf '{\n  "schema": 1,\n  "gpuz": []\n}\n' >"$T/bad.json"
"$GPUWHY" sim check "$T/bad.json" 2>"$T/err" >/dev/null
expect_eq "$?" 1 "sim check of an invalid file"
grep -q "^gpuwhy: $T/bad.json:3:3: gpuz: unknown key \"gpuz\"" "$T/err" || fail "check message: $(cat "$T/err")"
"$GPUWHY" sim check "$T/missing.json" 2>/dev/null
expect_eq "$?" 3 "sim check of a missing file"

# ---- show at pinned times ----
line=$("$GPUWHY" --sim h100x1 sim show --at 10)
expect_eq "$line" "gpu=0 util=0 mem_util=0 mem_used_mib=0 mem_total_mib=81559 power_w=71.00 temp_c=33 sm_mhz=345 reasons=0x1 pcie=gen5x16 replay=0 procs=-" "h100x1 at 10 s"
expect_eq "$("$GPUWHY" --sim h100x1-lost sim show --at 4 | grep -o 'util=[0-9]*' | head -1)" "util=85" "h100x1-lost before 5 s"
expect_eq "$("$GPUWHY" --sim h100x1-lost sim show --at 6)" "gpu=0 lost" "h100x1-lost after 5 s"
expect_eq "$("$GPUWHY" --sim a100x2-pcie-degraded sim show --at 10 --gpu 0 | grep -o 'pcie=[^ ]* replay=[0-9]*')" "pcie=gen3x8 replay=1400" "degraded link"
expect_eq "$("$GPUWHY" --sim l4x2-foreign sim show --at 1 --gpu 1 | grep -o 'procs=.*')" "procs=4194001:9216" "foreign dead PID"
expect_eq "$("$GPUWHY" --sim rtx4090-throttle sim show --at 45 | grep -o 'sm_mhz=[0-9]* reasons=0x[0-9a-f]*')" "sm_mhz=1650 reasons=0x60" "thermal episode"
"$GPUWHY" --sim h100x1 sim show --gpu 3 2>/dev/null
expect_eq "$?" 2 "show of a GPU that does not exist"

# ---- train: output, exit codes ----
out=$("$GPUWHY" --sim h100x1 sim train --steps 5 --cpu-ms 2 --gpu-ms 2)
expect_eq "$?" 0 "train exit"
expect_eq "$(grep -cE '^step [1-5]/5 loss [0-9]+\.[0-9]{4} time [0-9]+\.[0-9]{3}s$' <<<"$out")" 5 "step lines"
# A finished workload is no longer listed nor holds memory; its history stays (SIM_WL_KEEP_NS).
expect_eq "$("$GPUWHY" --sim h100x1 sim show | grep -o 'mem_used_mib=[0-9]* .*procs=.*' | sed 's/ .*procs=/ procs=/')" "mem_used_mib=0 procs=-" "finished workload is not listed"

# Out of memory as memory grows: 15360 MiB of another user's process, 434 reserved.
"$GPUWHY" --sim l4x2-foreign sim train --mem-mib 4000 --mem-growth-mib 1000 --steps 10 \
  --cpu-ms 1 --gpu-ms 1 >"$T/oom.out" 2>"$T/oom.err"
expect_eq "$?" 1 "out-of-memory exit"
expect_eq "$(grep -c '^step' "$T/oom.out")" 3 "steps before the out-of-memory error"
grep -q '^torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1000.00 MiB. GPU 0 has a total capacity of 22.49 GiB of which 240.00 MiB is free.' "$T/oom.err" ||
  fail "out-of-memory message: $(cat "$T/oom.err")"
"$GPUWHY" --sim h100x1 sim train --mem-mib 90000 --steps 3 >/dev/null 2>"$T/oom2.err"
expect_eq "$?" 1 "allocation larger than the GPU"
grep -q 'Tried to allocate 87.89 GiB' "$T/oom2.err" || fail "big allocation message: $(cat "$T/oom2.err")"
"$GPUWHY" --sim h100x1 sim train --oom-at 2 --steps 4 --cpu-ms 1 --gpu-ms 1 >"$T/o.out" 2>/dev/null
expect_eq "$?" 1 "--oom-at exit"
expect_eq "$(grep -c '^step' "$T/o.out")" 1 "steps before --oom-at"
"$GPUWHY" --sim h100x1 sim train --fail-exit 7 --steps 3 --cpu-ms 1 --gpu-ms 1 >"$T/f.out" 2>/dev/null
expect_eq "$?" 7 "--fail-exit exit code"
"$GPUWHY" --sim h100x1 sim train --fail-at 2 --fail-exit 5 --steps 3 --cpu-ms 1 --gpu-ms 1 >"$T/f.out" 2>/dev/null
expect_eq "$?" 5 "--fail-at exit code"
expect_eq "$(grep -c '^step' "$T/f.out")" 1 "steps before --fail-at"

# Usage errors.
for args in "--workers -1" "--steps 0" "--cpu-ms abc" "--ranks 2" "--straggler 3 --ranks 2" "--oom-at 9 --steps 3" "--bogus" "extra"; do
  # shellcheck disable=SC2086
  "$GPUWHY" --sim h100x1 sim train $args >/dev/null 2>&1
  expect_eq "$?" 2 "train $args"
done
"$GPUWHY" sim train --steps 1 2>"$T/nosim.err" >/dev/null
expect_eq "$?" 2 "train without a simulated GPU"
grep -q 'needs the simulated GPU' "$T/nosim.err" || fail "no-sim message: $(cat "$T/nosim.err")"
"$GPUWHY" sim train --help | grep -q -- '--mem-growth-mib' || fail "train --help"

# Signals: SIGTERM stops cleanly (128+15), SIGKILL leaves a file the next reader reaps.
"$GPUWHY" --sim h100x1 sim train --steps 1000 --cpu-ms 5 --gpu-ms 5 >/dev/null &
pid=$!
sleep 0.5
kill -TERM $pid
wait $pid
expect_eq "$?" 143 "train stopped by SIGTERM"
expect_eq "$("$GPUWHY" --sim h100x1 sim show | grep -o 'procs=.*')" "procs=-" "a workload stopped by SIGTERM is not listed"
"$GPUWHY" --sim h100x1 sim train --steps 1000 --cpu-ms 5 --gpu-ms 5 --mem-mib 512 >/dev/null &
pid=$!
sleep 0.5
exec 3>&2 2>/dev/null # no "Killed" job report
kill -KILL $pid
wait $pid
exec 2>&3 3>&-
sleep 0.2 # its workers die with it (parent-death signal)
ls "$GPUWHY_SIM_STATE"/h100x1/w$pid-g0.state >/dev/null 2>&1 || fail "SIGKILL should leave a state file"
expect_eq "$("$GPUWHY" --sim h100x1 sim show | grep -o 'mem_used_mib=[0-9]* .*procs=.*' | sed 's/ .*procs=/ procs=/')" "mem_used_mib=0 procs=-" "killed workload is not listed"
ls "$GPUWHY_SIM_STATE"/h100x1/w$pid-g0.state >/dev/null 2>&1 || fail "the killed workload's recent history was dropped"

# ---- ranks: rank 0 waits in the all-reduce for the straggler, busy but not computing ----
# (data is prepared by the ranks themselves at no cost: a busy host must not starve them)
"$GPUWHY" --sim h100x8-nvlink sim train --ranks 2 --straggler 1 --straggler-ms 40 --gpu-ms 10 \
  --workers 0 --cpu-ms 0 --steps 60 --mem-mib 2048 >"$T/ranks.out" &
pid=$!
sleep 0.8
"$GPUWHY" --sim h100x8-nvlink sim show --count 5 --interval 200ms >"$T/ranks.show"
wait $pid
expect_eq "$?" 0 "two-rank run"
expect_eq "$(grep -c '^step' "$T/ranks.out")" 60 "only rank 0 prints steps"
grep -q '^gpu=1 .*procs=[0-9]*:2048$' "$T/ranks.show" || fail "rank 1 not on GPU 1: $(cat "$T/ranks.show")"
u0=$(awk '/^gpu=0 /{split($2,a,"="); s+=a[2]; n++} END{print int(s/n)}' "$T/ranks.show")
[ "$u0" -ge 60 ] || fail "GPU 0 waiting in the all-reduce should count as busy (util $u0)"

# ---- coupling: utilization follows the workload's own step rate ----
# Mean utilization over ~1.6 s of `sim show`, and what the steps printed meanwhile imply.
coupling() { # workers -> "measured implied"
  "$GPUWHY" --sim h100x1 sim train --workers "$1" --cpu-ms 40 --gpu-ms 10 --steps 1000 >"$T/c$1.out" &
  local p=$! n0 n1 t0 t1
  sleep 0.6
  n0=$(grep -c '^step' "$T/c$1.out"); t0=$(date +%s%N)
  "$GPUWHY" --sim h100x1 sim show --count 9 --interval 200ms >"$T/c$1.show"
  n1=$(grep -c '^step' "$T/c$1.out"); t1=$(date +%s%N)
  kill -TERM $p; wait $p
  awk -v n=$((n1 - n0)) -v dt=$((t1 - t0)) '{split($2,a,"="); s+=a[2]; k++}
    END{printf "%d %d\n", s/k, 100*n*10e6/dt}' "$T/c$1.show"
}
read -r m1 i1 < <(coupling 1)
read -r m4 i4 < <(coupling 4)
echo "utilization: 1 worker $m1 % (steps imply $i1), 4 workers $m4 % (steps imply $i4)"
[ "$m1" -lt 35 ] || fail "one worker at 40 ms per 10 ms step should starve the GPU (util $m1)"
[ $((m1 - i1)) -le 12 ] && [ $((i1 - m1)) -le 12 ] || fail "1 worker: util $m1 vs $i1 implied"
[ $((m4 - i4)) -le 12 ] && [ $((i4 - m4)) -le 12 ] || fail "4 workers: util $m4 vs $i4 implied"
# Only a clear difference in what the steps imply says more than the +-12 points
# each measurement is allowed (a busy host gives four workers little more CPU).
if [ $((i4 - i1)) -ge 25 ]; then
  [ "$m4" -gt "$m1" ] || fail "4 workers ($m4 %) should beat 1 ($m1 %)"
else
  echo "(the host ran four workers no faster than one: CPU saturated)"
fi

# ---- reset ----
"$GPUWHY" sim reset h100x1 | grep -q 'clock restarted' || fail "sim reset"

[ "$fails" -eq 0 ] || { echo "$fails failure(s)" >&2; exit 1; }
echo "sim_train: all checks passed"
