#!/usr/bin/env bash
# Recorder cost: `gpuwhy record` of 8 simulated GPUs (h100x8-nvlink) plus a
# followed tree of 200 processes, at 1 Hz and 10 Hz; CPU per tick, peak RSS and
# bytes per GPU-sample on disk. Baseline in the same run: GPU-only CSV logging
# of every field with `gpuwhy query -lms` (what people do with nvidia-smi -l).
#   bench/recorder.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$src/build}"
secs="${2:-20}"
G="$build/gpuwhy"
W=$(mktemp -d)
export GPUWHY_SIM_STATE="$W/state"
# 200 sleeping processes under one parent: the followed tree
bash -c 'for i in $(seq 200); do sleep 1000 & done; wait' &
tree=$!
trap 'pkill -P $tree 2>/dev/null; kill $tree 2>/dev/null; rm -rf "$W"' EXIT
sleep 1
fields=$("$G" query --help-query | awk 'NR>2 && $1 != "" {print $1}' | paste -sd, -)
measure() { # label hz cmd... -> prints "cpu_s rss_kib"
	/usr/bin/time -f "%U %S %M" -o "$W/t" "$@" >/dev/null 2>&1 || true
	awk '{printf "%.3f %d\n", $1+$2, $3}' "$W/t"
}
echo "### recorder, 8 simulated GPUs + 200 followed processes ($(date -u +%Y-%m-%d), $(nproc) CPUs, $(uname -r), ${secs} s each)"
echo
echo "| what | rate | CPU per tick (ms) | CPU (% of one core) | peak RSS (MiB) | file bytes per GPU-sample (all tables) | vs baseline CPU |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for hz in 1 10; do
	ms=$((1000 / hz))
	ticks=$((secs * hz))
	read -r bc br < <(measure "$G" --sim h100x8-nvlink query --query-gpu="$fields" -lms "$ms" --count "$ticks" --format=csv)
	"$G" --sim h100x8-nvlink query --query-gpu="$fields" -lms "$ms" --count "$ticks" --format=csv >"$W/q.csv" 2>/dev/null
	qb=$(stat -c %s "$W/q.csv")
	read -r rc rr < <(measure "$G" --sim h100x8-nvlink record -o "$W/r.gpuwhy" -i "${ms}ms" -d "${secs}s" --pid "$tree")
	rows=$(sqlite3 "$W/r.gpuwhy" 'SELECT count(*) FROM gpu_samples')
	rb=$(stat -c %s "$W/r.gpuwhy")
	nt=$(sqlite3 "$W/r.gpuwhy" 'SELECT count(*) FROM host_samples')
	np=$(sqlite3 "$W/r.gpuwhy" 'SELECT max(tree_nproc) FROM host_samples')
	echo "| baseline: gpuwhy query, all fields, CSV | ${hz} Hz | $(awk -v c="$bc" -v t="$ticks" 'BEGIN{printf "%.2f", c/t*1000}') | $(awk -v c="$bc" -v s="$secs" 'BEGIN{printf "%.2f", c/s*100}') | $(awk -v k="$br" 'BEGIN{printf "%.1f", k/1024}') | $(awk -v b="$qb" -v t="$ticks" 'BEGIN{printf "%.0f", b/t/8}') | 1.0x |"
	echo "| gpuwhy record (GPUs + host + ${np%.*} processes) | ${hz} Hz | $(awk -v c="$rc" -v t="$nt" 'BEGIN{printf "%.2f", c/t*1000}') | $(awk -v c="$rc" -v s="$secs" 'BEGIN{printf "%.2f", c/s*100}') | $(awk -v k="$rr" 'BEGIN{printf "%.1f", k/1024}') | $(awk -v b="$rb" -v r="$rows" 'BEGIN{printf "%.0f", b/r}') | $(awk -v a="$rc" -v b="$bc" 'BEGIN{if (b > 0) printf "%.1fx", a/b; else print "n/a"}') |"
done
