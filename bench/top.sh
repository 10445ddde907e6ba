#!/usr/bin/env bash
# `gpuwhy top` against nvtop, per screen refresh, in one run: both at a 1 s
# interval on the same 8 simulated GPUs (h100x8-nvlink) with a training job on
# two of them, each in its own 160x50 pseudo-terminal, side by side for
# SECONDS (default 70: past the 60 s findings window, so memory is at its
# steady state) after a 3 s warm-up.
#   bench/top.sh [BUILD_DIR] [SECONDS]
# A refresh is a burst of screen output (bench/top_pty.py); CPU is utime+stime
# of /proc/PID/stat (every thread); memory is the peak RSS (VmHWM). nvtop waits
# on NVML's 20 ms PCIe throughput call twice per GPU and refresh, so it makes
# fewer refreshes in the same time: the figures compare per refresh.
# Then (when valgrind is installed and CALLGRIND is not 0) the same pair under
# callgrind, counting instructions from the end of a 10 s warm-up: a per-refresh
# figure that other load on the machine cannot change.
# nvtop is $NVTOP, the one in PATH, or built once from the peers' sources
# ($SHARED_DIR/peers/nvtop, default ../shared beside the project) into
# BUILD_DIR/peers/nvtop (as tests/peers/nvtop.sh does); without one (or with
# NVTOP=none), procps top (a host-only monitor) is the peer.
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$src/build}" && pwd)"
secs="${2:-70}"
G="$build/gpuwhy"
SCEN=h100x8-nvlink
COLS=160 ROWS=50
PTY="python3 $src/bench/top_pty.py"
command -v python3 >/dev/null || { echo "bench/top.sh: python3 is not installed; skipped"; exit 0; }
[ -x "$G" ] || { echo "bench/top.sh: $G is not built"; exit 3; }

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
			echo "bench/top.sh: nvtop did not build (see $build/peers-nvtop-build.log)" >&2
	fi
	[ -x "$nv" ] && echo "$nv"
	return 0
}
NV="$(find_nvtop)"
if [ -n "$NV" ]; then
	peer="nvtop -d 10"
	peer_cmd=("$NV" -d 10)
	peer_ver="$("$NV" --version 2>/dev/null | head -1 || true)"
else
	command -v top >/dev/null || { echo "bench/top.sh: neither nvtop nor procps top; skipped"; exit 0; }
	peer="procps top -d 1 (no nvtop)"
	peer_cmd=(top -d 1)
	peer_ver="$(top -v 2>/dev/null | head -1 || true)"
fi

work="$(mktemp -d)"
export GPUWHY_SIM_STATE="$work/sim" XDG_CONFIG_HOME="$work/config" LANG=C.UTF-8 TERM=xterm-256color
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

"$G" --sim $SCEN sim train --steps 10000000 --ranks 2 --workers 2 --cpu-ms 30 --gpu-ms 20 \
	>"$work/train.log" 2>&1 &
pids+=($!)
sleep 2
kill -0 "${pids[0]}" 2>/dev/null || { echo "bench/top.sh: the training job did not start:"; cat "$work/train.log"; exit 3; }

# The libraries gpuwhy maps only because it links libcurl and libmicrohttpd
# (theirs and their dependencies, less what the other linked libraries need):
# their share of top's RSS is reported apart.
libpath() { ldconfig -p | awk -v n="$1" '$1 == n { print $NF; exit }'; }
closure() { [ -n "$1" ] && { realpath "$1"; ldd "$1" 2>/dev/null | awk '/=> \// { print $3 }' | xargs -r realpath; }; }
heavy="" base=""
for n in $(readelf -d "$G" 2>/dev/null | awk '/NEEDED/ { gsub(/[][]/, "", $5); print $5 }'); do
	case $n in
	libcurl* | libmicrohttpd*) heavy+=" $(closure "$(libpath "$n")")" ;;
	*) base+=" $(closure "$(libpath "$n")")" ;;
	esac
done
SPLIT_LIBS=$(comm -23 <(tr ' ' '\n' <<<"$heavy" | sed '/^$/d' | sort -u) \
	<(tr ' ' '\n' <<<"$base" | sed '/^$/d' | sort -u) | paste -sd: -)
export SPLIT_LIBS
nheavy=$(tr ':' '\n' <<<"$SPLIT_LIBS" | sed '/^$/d' | wc -l)

# Both in one run: gpuwhy top and the peer side by side, then wait for both.
pair() { # WARMUP SECS PREFIX... (the command in front of each tool, e.g. valgrind)
	local warm=$1 len=$2
	shift 2
	$PTY $COLS $ROWS "$warm" "$len" -- "$@" "$G" --sim $SCEN top -i 1s >"$work/g.json" &
	local a=$!
	LD_LIBRARY_PATH="$build/sim" GPUWHY_SIM_SCENARIO="$src/sim/scenarios/$SCEN.json" \
		$PTY $COLS $ROWS "$warm" "$len" -- "$@" "${peer_cmd[@]}" >"$work/p.json" &
	local b=$!
	wait $a
	wait $b
}
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$@"; }
div() { awk -v a="$1" -v b="$2" -v f="${3:-%.3f}" 'BEGIN { if (b > 0) printf f, a / b; else print "n/a" }'; }

pair 3 "$secs"
for t in g p; do
	eval "fr_$t=$(field "$work/$t.json" frames) cpu_$t=$(field "$work/$t.json" cpu_s)"
	eval "run_$t=$(field "$work/$t.json" run_s) hwm_$t=$(field "$work/$t.json" hwm_kib)"
	eval "anon_$t=$(field "$work/$t.json" anon_kib) file_$t=$(field "$work/$t.json" file_kib)"
	eval "wall_$t=$(field "$work/$t.json" wall_s) split_$t=$(field "$work/$t.json" split_kib)"
done
procs=(/proc/[0-9]*)
nprocs=${#procs[@]}
ms_g=$(div "$cpu_g" "$fr_g" "%.4f") ms_p=$(div "$cpu_p" "$fr_p" "%.4f")

ir_g="" ir_p=""
if command -v valgrind >/dev/null && command -v callgrind_control >/dev/null && [ "${CALLGRIND:-1}" != 0 ]; then
	ON_CMD='callgrind_control -i on $PID' OFF_CMD='callgrind_control -d $PID' \
		pair 10 "$secs" valgrind --tool=callgrind --instr-atstart=no \
		--callgrind-out-file="$work/cg.%p" -q
	ir() { awk '/^summary:/ { print $2 }' "$work/cg.$(field "$work/$1.json" pid).1"; }
	ir_g=$(ir g) ir_p=$(ir p)
	cfr_g=$(field "$work/g.json" frames) cfr_p=$(field "$work/p.json" frames)
fi

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "n/a" }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
echo "### top vs $peer ($(date -u +%Y-%m-%d), $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1 /proc/loadavg))"
echo
echo "8 simulated H100 ($SCEN), a 2-rank training job on GPUs 0-1 with 4 data workers,"
echo "$nprocs processes on the host; both at 1 s in ${COLS}x${ROWS} terminals, side by side,"
echo "${wall_g} s measured after a 3 s warm-up. Peer: ${peer_ver:-$peer}."
echo
echo "| | refreshes | CPU s (utime+stime) | CPU ms / refresh | vs peer | peak RSS MiB | vs peer | anon / file MiB |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
echo "| gpuwhy top -i 1s | $fr_g | $cpu_g | $(div "$cpu_g" "$((fr_g))e-3" "%.2f") | $(ratio "$ms_g" "$ms_p") | $(mib "$hwm_g") | $(ratio "$hwm_g" "$hwm_p") | $(mib "$anon_g") / $(mib "$file_g") |"
echo "| $peer | $fr_p | $cpu_p | $(div "$cpu_p" "$((fr_p))e-3" "%.2f") | 1.00x | $(mib "$hwm_p") | 1.00x | $(mib "$anon_p") / $(mib "$file_p") |"
echo
if [ "$nheavy" -gt 0 ]; then
	echo "Of gpuwhy top's resident memory, $(mib "$split_g") MiB are the $nheavy libraries that only libcurl and"
	echo "libmicrohttpd bring (linked into every gpuwhy command); without them: $(mib "$((hwm_g - split_g))") MiB peak."
	echo
fi
echo "Thread run time (schedstat, ns resolution) per refresh: gpuwhy $(div "$run_g" "$fr_g" "%.5f") s, peer $(div "$run_p" "$fr_p" "%.5f") s ($(ratio "$(div "$run_g" "$fr_g" "%.6f")" "$(div "$run_p" "$fr_p" "%.6f")"))."
if [ -n "$ir_g" ] && [ -n "$ir_p" ]; then
	echo
	echo "callgrind, the same pair again, ${secs} s after a 10 s warm-up (instructions of every thread, user space):"
	echo
	echo "| | refreshes | instructions | per refresh | vs peer |"
	echo "| --- | --- | --- | --- | --- |"
	pg=$(div "$ir_g" "$cfr_g" "%.0f") pp=$(div "$ir_p" "$cfr_p" "%.0f")
	echo "| gpuwhy top -i 1s | $cfr_g | $ir_g | $pg | $(ratio "$pg" "$pp") |"
	echo "| $peer | $cfr_p | $ir_p | $pp | 1.00x |"
fi
