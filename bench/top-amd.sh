#!/usr/bin/env bash
# `gpuwhy top` per screen refresh on 8 simulated AMD MI300X (mi300x8: the
# amdgpu sysfs tree rewritten and read at every sample) beside 8 simulated
# H100 (h100x8-nvlink: the simulated NVML, a training job on two of them),
# both at 1 s in 160x50
# pseudo-terminals, side by side for SECONDS (default 60) after a 3 s warm-up
# (bench/top_pty.py counts refreshes, CPU and peak RSS). Then both again under
# callgrind (instructions per refresh, which other load cannot change) when
# valgrind is installed and CALLGRIND is not 0. The simulated AMD tree's cost
# (writing ~30 small files per GPU and refresh) is part of gpuwhy's figure
# there, as the simulated NVML's is on the H100 side; so a third run reads a
# still copy of that tree through GPUWHY_SYSFS_ROOT (no simulator: the
# reader's own cost, as on a real machine whose kernel serves the files).
# nvtop runs beside them where it can be driven: on the simulated H100
# (its NVIDIA back end loads the simulated NVML), `nvtop -d 10`, found as
# bench/top.sh finds it ($NVTOP, PATH, or built from the peers' sources;
# NVTOP=none leaves it out). It cannot read the simulated MI300X: its amdgpu
# back end keeps a card only after the kernel's amdgpu driver has answered
# its ioctls, and takes most values from them (docs/amd.md).
#   bench/top-amd.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$src/build}" && pwd)"
secs="${2:-60}"
G="$build/gpuwhy"
PTY="python3 $src/bench/top_pty.py"
command -v python3 >/dev/null || { echo "bench/top-amd.sh: python3 is not installed; skipped"; exit 0; }
find_nvtop() {
	local nv="${NVTOP:-$(command -v nvtop || true)}" srcdir="${SHARED_DIR:-$src/../shared}/peers/nvtop"
	[ "$nv" = none ] && return 0
	[ -n "$nv" ] && [ -x "$nv" ] && { echo "$nv"; return; }
	nv="$build/peers/nvtop/src/nvtop"
	if [ ! -x "$nv" ] && [ -f "$srcdir/CMakeLists.txt" ]; then
		local off=() v
		for v in AMDGPU RADEON INTEL MSM APPLE PANFROST PANTHOR ASCEND V3D TPU ROCKCHIP METAX \
			ENFLAME TENSTORRENT; do off+=("-D${v}_SUPPORT=OFF"); done
		{ cmake -S "$srcdir" -B "$build/peers/nvtop" -DNVIDIA_SUPPORT=ON -DIXML_SUPPORT=OFF "${off[@]}" &&
			make -C "$build/peers/nvtop" -j2; } >"$build/peers-nvtop-build.log" 2>&1 ||
			echo "bench/top-amd.sh: nvtop did not build (see $build/peers-nvtop-build.log)" >&2
	fi
	[ -x "$nv" ] && echo "$nv"
	return 0
}
NV="$(find_nvtop)"
work="$(mktemp -d)"
export GPUWHY_SIM_STATE="$work/sim" XDG_CONFIG_HOME="$work/config" LANG=C.UTF-8 TERM=xterm-256color
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$work"' EXIT
# A training job on two of the H100 (as bench/top.sh runs), so their screens change as
# mi300x8's do with its scenario's job: a curses program that finds nothing changed writes
# nothing, and an idle screen would count no refreshes.
"$G" --sim h100x8-nvlink sim train --steps 10000000 --ranks 2 --workers 2 --cpu-ms 30 --gpu-ms 20 \
	>"$work/train.log" 2>&1 &
pids+=($!)
sleep 2
kill -0 "${pids[0]}" 2>/dev/null || { echo "bench/top-amd.sh: the training job did not start:"; cat "$work/train.log"; exit 3; }
pair() { # WARMUP SECS PREFIX...
	local warm=$1 len=$2
	shift 2
	$PTY 160 50 "$warm" "$len" -- "$@" "$G" --sim mi300x8 top -i 1s >"$work/a.json" &
	local a=$!
	$PTY 160 50 "$warm" "$len" -- "$@" "$G" --sim h100x8-nvlink top -i 1s >"$work/n.json" &
	local b=$! c=
	# nvtop only in the plain pass: the callgrind pass compares gpuwhy with itself
	if [ -n "$NV" ] && [ $# = 0 ]; then
		LD_LIBRARY_PATH="$build/sim" GPUWHY_SIM_SCENARIO="$src/sim/scenarios/h100x8-nvlink.json" \
			$PTY 160 50 "$warm" "$len" -- "$NV" -d 10 >"$work/v.json" &
		c=$!
	fi
	if [ ! -d "$work/tree" ]; then # the AMD tree of the running top, once it has one
		local i
		for i in $(seq 600); do
			compgen -G "$GPUWHY_SIM_STATE/mi300x8/amd-*/sys/class/drm/card7" >/dev/null && break
			sleep 0.1
		done
		sleep 1 && cp -a "$GPUWHY_SIM_STATE"/mi300x8/amd-* "$work/tree"
	fi
	wait $a
	wait $b
	[ -z "$c" ] || wait $c
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
if [ -n "$NV" ]; then
	row "nvtop -d 10 on h100x8-nvlink ($("$NV" --version 2>/dev/null | head -1))" "$work/v.json"
else
	echo "| nvtop: none (no \$NVTOP, none in PATH, no peer sources) | | | | |"
fi
echo "| nvtop on mi300x8: cannot be driven (its amdgpu back end needs the kernel driver's ioctls) | | | | |"
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
