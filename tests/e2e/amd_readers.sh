#!/usr/bin/env bash
# gpuwhy's amdgpu values against a second reader of the same files: amdgpu_files.py, written
# from the kernel's documented formats alone, on the fixture trees and on the trees the
# simulated AMD scenarios write, at pinned scenario times. Every field both read
# (utilization, VRAM, power and its cap, temperatures, fan, clocks, PCIe link, the clock event
# reasons of gpu_metrics' indep_throttle_status) must agree to the digit, and a field one
# reader finds absent the other must find absent too; gpu_metrics alone must give what it
# holds when the other files are gone. (nvtop, the
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
# an APU whose firmware reports throttling (gpu_metrics v2.2, as Renoir's and Van Gogh's):
# apu-780m with that table and a power-limit and PROCHOT episode at 20-30 s
python3 - "$HERE/../../sim/scenarios/apu-780m.json" "$T/apu-v22.json" <<'PY' || fail "apu-v22 scenario"
import json, sys
s = json.load(open(sys.argv[1]))
s["name"] = "apu-v22"
g = s["gpus"][0]
g["amdgpu"]["gpu_metrics"] = "2.2"
g["episodes"] = [{"kind": "throttle", "start_s": 20, "end_s": 30,
                  "reasons": ["sw_power_cap", "hw_slowdown"], "sm_clock_mhz": 1600}]
json.dump(s, open(sys.argv[2], "w"))
PY
# FIELDS end with the reasons: active, sw_power_cap, sw_thermal, hw_thermal, hw_slowdown
reasons_of() { echo "$1" | awk -F', ' '{print $(NF-4)", "$(NF-3)", "$(NF-2)", "$(NF-1)", "$NF}'; }
NONE="0x0000000000000000, Not Active, Not Active, Not Active, Not Active"
declare -A WANT_REASONS=(
	[rx7900xtx:3]=$NONE
	[rx7900xtx-throttle:10]=$NONE
	[rx7900xtx-throttle:25]="0x0000000000000020, Not Active, Active, Not Active, Not Active"
	[rx7900xtx-throttle:45]="0x0000000000000004, Active, Not Active, Not Active, Not Active"
	[mi300x8:5]="[N/A], [N/A], [N/A], [N/A], [N/A]"
	[apu-780m:3]="[N/A], [N/A], [N/A], [N/A], [N/A]"
	[apu-v22:5]=$NONE
	[apu-v22:25]="0x000000000000000C, Active, Not Active, Not Active, Active"
)
for st in mi300x8:5 mi300x8:9 rx7900xtx:3 rx7900xtx:12 rx7900xtx-throttle:10 \
	rx7900xtx-throttle:25 rx7900xtx-throttle:45 apu-780m:3 apu-780m:8 apu-v22:5 apu-v22:25; do
	scn=${st%%:*} t=${st#*:}
	src=$scn
	[ "$scn" = apu-v22 ] && src=$T/apu-v22.json
	export GPUWHY_SIM_STATE=$T/state-$scn-$t
	GPUWHY_SIM_TIME=$t "$GPUWHY" --sim "$src" exporter --listen 127.0.0.1:0 --interval 1s 2>"$T/e.log" &
	pid=$!
	PIDS_TO_KILL+=("$pid")
	wait_line "$T/e.log" 'serving http://127.0.0.1:' "$pid"
	tree=$GPUWHY_SIM_STATE/$scn/amd-$pid
	[ -d "$tree/sys/class/drm" ] || fail "no simulated tree at $tree: $(ls -R "$GPUWHY_SIM_STATE")"
	rm -rf "$T/copy" && cp -a "$tree" "$T/copy" || fail "copy of $tree"
	kill "$pid" && wait "$pid" 2>/dev/null
	want=$(python3 "$READ" "$T/copy")
	g=$(GPUWHY_SIM_TIME=$t "$GPUWHY" --sim "$src" query --query-gpu="$Q" --format=csv,noheader,nounits) ||
		fail "query --sim $scn: exit $?"
	same "$scn at t=$t s" "$g" "$want"
	# the reasons the scenario holds at that moment, as the second reader decodes them
	if [ -n "${WANT_REASONS[$st]:-}" ]; then
		assert_eq "$(reasons_of "$(echo "$want" | head -1)")" "${WANT_REASONS[$st]}" "$scn at t=$t s: reasons"
	fi
	if [ ! -e /dev/nvidiactl ]; then
		g=$(GPUWHY_SYSFS_ROOT=$T/copy "$GPUWHY" query --query-gpu="$Q" --format=csv,noheader,nounits)
		same "$scn at t=$t s, read from the copy" "$g" "$want"
		# without sysfs' and hwmon's readings, gpu_metrics stands in for them where it can
		case $scn in rx7900xtx-throttle | apu-*)
			for d in "$T"/copy/sys/class/drm/card*/device/; do
				rm -rf "$d"hwmon/* "$d"gpu_busy_percent "$d"mem_busy_percent "$d"pp_dpm_sclk "$d"pp_dpm_mclk
			done
			want=$(python3 "$READ" "$T/copy")
			g=$(GPUWHY_SYSFS_ROOT=$T/copy "$GPUWHY" query --query-gpu="$Q" --format=csv,noheader,nounits)
			same "$scn at t=$t s, gpu_metrics alone" "$g" "$want"
			# utilization, power, temperature and SM clock come from the table alone
			echo "$want" | awk -F', ' '$2 == "[N/A]" || $6 == "[N/A]" || $8 == "[N/A]" || $11 == "[N/A]" {exit 1}' ||
				fail "$scn at t=$t s: gpu_metrics gave nothing: $want"
			;;
		esac
	fi
done
# the pinned times differ where the scenario says they do (busy at 5 s, waiting at 9 s), so
# the comparisons above covered both states
exit 0
