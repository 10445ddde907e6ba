#!/usr/bin/env bash
# The simulated NVML's own cost per query round of 8 GPUs (h100x8-nvlink),
# idle and with 8 live workloads publishing (gpuwhy sim train --ranks 8),
# against the cheapest entry point in the same run.
#   bench/sim-nvml.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$src/build}"
rounds="${2:-300}"
out="$build/bench"
mkdir -p "$out"
cc -std=c11 -O2 -D_GNU_SOURCE -I"$src/include" "$src/bench/sim_nvml_bench.c" -o "$out/sim_nvml_bench" -ldl
export GPUWHY_NVML="$build/sim/libnvidia-ml.so.1"
export GPUWHY_SIM_SCENARIO="$src/sim/scenarios/h100x8-nvlink.json"
export GPUWHY_SIM_STATE="$(mktemp -d)"
train=""
trap 'if [ -n "$train" ]; then kill "$train" 2>/dev/null || true; wait "$train" 2>/dev/null || true; fi; rm -rf "$GPUWHY_SIM_STATE"' EXIT
read -r g c f0 k0 fl0 < <("$out/sim_nvml_bench" "$rounds")
# Eight ranks that mostly wait for their (simulated) GPU: little CPU of their own.
"$build/gpuwhy" sim train --ranks 8 --workers 0 --cpu-ms 0 --gpu-ms 20 --steps 1000000 >/dev/null &
train=$!
sleep 2
read -r _ _ f1 k1 fl1 < <("$out/sim_nvml_bench" "$rounds")
echo "### simulated NVML, $g GPUs, $c calls per round ($(date -u +%Y-%m-%d), $(nproc) CPUs, $(uname -r))"
echo
echo "| state | CPU us per round, recomputed | per call | CPU % of one core at 1 Hz | vs idle | CPU us per round, same period (cached) | cheapest call (us) |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
row() {
  awk -v s="$1" -v f="$2" -v k="$3" -v fl="$4" -v c="$c" -v base="$f0" 'BEGIN{
    printf "| %s | %.0f | %.2f | %.3f %% | %.2fx | %.0f | %.2f |\n", s, f, f/c, f/1e4, f/base, k, fl}'
}
row "idle (no workloads)" "$f0" "$k0" "$fl0"
row "8 live workloads (sim train --ranks 8)" "$f1" "$k1" "$fl1"
