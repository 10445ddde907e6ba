#!/usr/bin/env bash
# `gpuwhy top` per screen refresh on 8 simulated AMD MI300X (mi300x8: the
# amdgpu sysfs tree rewritten and read at every sample) beside 8 simulated
# H100 (h100x8-nvlink: the simulated NVML), both at 1 s in 160x50
# pseudo-terminals, side by side for SECONDS (default 60) after a 3 s warm-up
# (bench/top_pty.py counts refreshes, CPU and peak RSS). Then both again under
# callgrind (instructions per refresh, which other load cannot change) when
# valgrind is installed and CALLGRIND is not 0. The simulated AMD tree's cost
# (writing ~30 small files per GPU and refresh) is part of gpuwhy's figure
# there, as the simulated NVML's is on the H100 side; so a third run reads a
# still copy of that tree through GPUWHY_SYSFS_ROOT (no simulator: the
# reader's own cost, as on a real machine whose kernel serves the files).
#   bench/top-amd.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$src/build}" && pwd)"
secs="${2:-60}"
G="$build/gpuwhy"
PTY="python3 $src/bench/top_pty.py"
command -v python3 >/dev/null || { echo "bench/top-amd.sh: python3 is not installed; skipped"; exit 0; }
work="$(mktemp -d)"
export GPUWHY_SIM_STATE="$work/sim" XDG_CONFIG_HOME="$work/config" LANG=C.UTF-8 TERM=xterm-256color
trap 'rm -rf "$work"' EXIT
pair() { # WARMUP SECS PREFIX...
	local warm=$1 len=$2
	shift 2
	$PTY 160 50 "$warm" "$len" -- "$@" "$G" --sim mi300x8 top -i 1s >"$work/a.json" &
	local a=$!
	$PTY 160 50 "$warm" "$len" -- "$@" "$G" --sim h100x8-nvlink top -i 1s >"$work/n.json" &
	local b=$!
	[ -d "$work/tree" ] || { sleep 5 && cp -a "$GPUWHY_SIM_STATE"/mi300x8/amd-* "$work/tree"; }
	wait $a
	wait $b
}
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$@"; }
row() { # NAME JSON
	local fr cpu hwm
	fr=$(field "$2" frames) cpu=$(field "$2" cpu_s) hwm=$(field "$2" hwm_kib)
	echo "| $1 | $fr | $cpu | $(awk -v c="$cpu" -v f="$fr" 'BEGIN{printf "%.2f", f ? 1000*c/f : 0}') | $(awk -v k="$hwm" 'BEGIN{printf "%.1f", k/1024}') |"
}
pair 3 "$secs"
echo "### top on 8 MI300X vs 8 H100, simulated ($(date -u +%Y-%m-%d), $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1 /proc/loadavg))"
echo
echo "| | refreshes | CPU s | CPU ms / refresh | peak RSS MiB |"
echo "| --- | --- | --- | --- | --- |"
row "gpuwhy --sim mi300x8 top -i 1s" "$work/a.json"
row "gpuwhy --sim h100x8-nvlink top -i 1s" "$work/n.json"
GPUWHY_SYSFS_ROOT="$work/tree" $PTY 160 50 3 "$secs" -- "$G" top -i 1s >"$work/s.json"
row "GPUWHY_SYSFS_ROOT=(still copy of mi300x8's tree) gpuwhy top -i 1s, run after" "$work/s.json"
if command -v valgrind >/dev/null && command -v callgrind_control >/dev/null && [ "${CALLGRIND:-1}" != 0 ]; then
	ON_CMD='callgrind_control -i on $PID' OFF_CMD='callgrind_control -d $PID' \
		pair 10 "$secs" valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$work/cg.%p" -q
	ir() { awk '/^summary:/ { print $2 }' "$work/cg.$(field "$work/$1.json" pid).1"; }
	echo
	echo "| callgrind | refreshes | instructions | per refresh |"
	echo "| --- | --- | --- | --- |"
	for t in a n; do
		fr=$(field "$work/$t.json" frames) i=$(ir $t)
		echo "| $([ $t = a ] && echo mi300x8 || echo h100x8-nvlink) | $fr | $i | $(awk -v i="$i" -v f="$fr" 'BEGIN{printf "%.0f", f ? i/f : 0}') |"
	done
fi
