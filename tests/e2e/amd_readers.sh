#!/usr/bin/env bash
# gpuwhy's amdgpu values against a second reader of the same files: amdgpu_files.py, written
# from the kernel's documented formats alone, on the fixture trees and on the trees the
# simulated AMD scenarios write, at pinned scenario times. Every field both read
# (utilization, VRAM, power and its cap, temperatures, fan, clocks, PCIe link) must agree to
# the digit, and a field one reader finds absent the other must find absent too. (nvtop, the
# other reader of amdgpu's files, cannot be pointed at a file tree: docs/amd.md says why.)
. "$(dirname "$0")/lib.bash"
command -v python3 >/dev/null || skip "python3 missing"
HERE=$(cd "$(dirname "$0")" && pwd)
FIX=$HERE/../fixtures/amdgpu
READ=$HERE/amdgpu_files.py
unset GPUWHY_SYSFS_ROOT GPUWHY_SIM_TIME
Q=$(python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import amdgpu_files; print(amdgpu_files.FIELDS)' "$HERE")

# same WHAT GPUWHY_OUTPUT READER_OUTPUT
same() {
	[ -n "$3" ] || fail "$1: the second reader found no AMD card"
	[ "$2" = "$3" ] || fail "$1: gpuwhy and the second reader differ ($Q)
gpuwhy:
$2
second reader:
$3"
	echo "ok: $1 ($(echo "$3" | wc -l) GPUs)"
}

# --- the fixture trees (a real NVIDIA driver's GPUs would come first in gpuwhy's list)
if [ ! -e /dev/nvidiactl ]; then
	for t in mi300x rx7900xtx apu; do
		g=$(GPUWHY_SYSFS_ROOT=$FIX/$t "$GPUWHY" query --query-gpu="$Q" --format=csv,noheader,nounits) ||
			fail "query on the $t tree: exit $?"
		same "fixture $t" "$g" "$(python3 "$READ" "$FIX/$t")"
	done
fi

# --- the simulated trees: a running exporter keeps its scenario's tree (written before it
# serves, rewritten at each sample with the pinned time, so it holds still); a copy of it is
# read by the second reader, and a separate `gpuwhy --sim` at the same pinned time must say
# the same, as must gpuwhy reading the copy.
have_sim || skip "the simulated GPU is not built"
for st in mi300x8:5 mi300x8:9 rx7900xtx:3 rx7900xtx:12; do
	scn=${st%%:*} t=${st#*:}
	export GPUWHY_SIM_STATE=$T/state-$scn-$t
	GPUWHY_SIM_TIME=$t "$GPUWHY" --sim "$scn" exporter --listen 127.0.0.1:0 --interval 1s 2>"$T/e.log" &
	pid=$!
	PIDS_TO_KILL+=("$pid")
	wait_line "$T/e.log" 'serving http://127.0.0.1:' "$pid"
	tree=$GPUWHY_SIM_STATE/$scn/amd-$pid
	[ -d "$tree/sys/class/drm" ] || fail "no simulated tree at $tree: $(ls -R "$GPUWHY_SIM_STATE")"
	rm -rf "$T/copy" && cp -a "$tree" "$T/copy" || fail "copy of $tree"
	kill "$pid" && wait "$pid" 2>/dev/null
	want=$(python3 "$READ" "$T/copy")
	g=$(GPUWHY_SIM_TIME=$t "$GPUWHY" --sim "$scn" query --query-gpu="$Q" --format=csv,noheader,nounits) ||
		fail "query --sim $scn: exit $?"
	same "$scn at t=$t s" "$g" "$want"
	if [ ! -e /dev/nvidiactl ]; then
		g=$(GPUWHY_SYSFS_ROOT=$T/copy "$GPUWHY" query --query-gpu="$Q" --format=csv,noheader,nounits)
		same "$scn at t=$t s, read from the copy" "$g" "$want"
	fi
done
# the pinned times differ where the scenario says they do (busy at 5 s, waiting at 9 s), so
# the comparisons above covered both states
exit 0
