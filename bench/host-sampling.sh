#!/usr/bin/env bash
# Host sampling cost: one full host snapshot with 200 sleeping children followed,
# at 1 Hz and 10 Hz, against naive readers of the same files in the same run.
#   bench/host-sampling.sh [BUILD_DIR] [CHILDREN] [SECONDS_1HZ] [SECONDS_10HZ]
# Prints a Markdown table (for bench/README.md, "host-sampling.sh").
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$src/build}"
children="${2:-200}"
[ -f "$build/gpuwhy-archives.txt" ] || cmake --build "$build" --target gpuwhy >/dev/null
out="$build/bench"
mkdir -p "$out"
cc -std=c11 -O2 -D_GNU_SOURCE -I"$src/src" -I"$src/include" "$src/bench/host_bench.c" $(cat "$build/gpuwhy-archives.txt") \
	-o "$out/host_bench" -lm
command -v python3 >/dev/null || echo "host-sampling: python3 missing, its row will be n/a" >&2
echo "### host sampling ($(date -u +%Y-%m-%d), $(nproc) CPUs, $(uname -r))"
echo
"$out/host_bench" "$children" "${3:-20}" "${4:-10}"
