#!/usr/bin/env bash
# Device layer cost: CPU time and peak RSS per sample of the 8 simulated GPUs
# (h100x8-nvlink) with the full metric set, at 1 Hz and 10 Hz, against a bare
# loop of the core NVML getters on the same library; and one-shot `gpuwhy query`
# of every field against `gpuwhy --version` (process start) in the same run.
#   bench/gpu-sampling.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$src/build}"
secs="${2:-10}"
out="$build/bench"
mkdir -p "$out"
cc -std=c11 -O2 -D_GNU_SOURCE -I"$src/src" -I"$src/include" "$src/bench/gpu_bench.c" $(cat "$build/gpuwhy-archives.txt") \
	-o "$out/gpu_bench" $(pkg-config --libs sqlite3 jansson yajl libmicrohttpd ncursesw zlib) -ldl -lpthread -lm
export GPUWHY_NVML="$build/sim/libnvidia-ml.so.1"
export GPUWHY_SIM_SCENARIO="$src/sim/scenarios/h100x8-nvlink.json"
export GPUWHY_SIM_STATE="$(mktemp -d)"
trap 'rm -rf "$GPUWHY_SIM_STATE"' EXIT
echo "### device layer, 8 simulated GPUs ($(date -u +%Y-%m-%d), $(nproc) CPUs, $(uname -r))"
echo
echo "| loop | rate | ticks | CPU per tick (ms) | CPU (% of one core) | peak RSS (MiB) | vs bare |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for hz in 1 10; do
	read -r _ _ bt bms bpct bk < <("$out/gpu_bench" bare "$hz" "$secs")
	read -r _ _ lt lms lpct lk < <("$out/gpu_bench" layer "$hz" "$secs")
	echo "| bare NVML getters | ${hz} Hz | $bt | $bms | $bpct | $(awk -v k="$bk" 'BEGIN{printf "%.1f", k/1024}') | 1.0x |"
	echo "| gpuwhy device layer, all metrics + processes | ${hz} Hz | $lt | $lms | $lpct | $(awk -v k="$lk" 'BEGIN{printf "%.1f", k/1024}') | $(awk -v a="$lms" -v b="$bms" 'BEGIN{printf "%.1fx", a/b}') |"
done
fields=$("$build/gpuwhy" query --help-query | awk 'NR>2 && $1 != "" {print $1}' | paste -sd, -)
one() { /usr/bin/time -f "%e %U %S %M" "$@" >/dev/null 2>"$out/time.txt"; tail -1 "$out/time.txt"; }
read -r w1 u1 s1 m1 < <(one "$build/gpuwhy" --version)
read -r w2 u2 s2 m2 < <(one "$build/gpuwhy" query --query-gpu="$fields" --format=csv)
echo
echo "| one-shot | wall (s) | CPU (s) | peak RSS (MiB) |"
echo "| --- | --- | --- | --- |"
echo "| gpuwhy --version (process start) | $w1 | $(awk -v a="$u1" -v b="$s1" 'BEGIN{print a+b}') | $(awk -v k="$m1" 'BEGIN{printf "%.1f", k/1024}') |"
echo "| gpuwhy query, all $(echo "$fields" | tr ',' '\n' | wc -l) fields, 8 GPUs | $w2 | $(awk -v a="$u2" -v b="$s2" 'BEGIN{print a+b}') | $(awk -v k="$m2" 'BEGIN{printf "%.1f", k/1024}') |"
