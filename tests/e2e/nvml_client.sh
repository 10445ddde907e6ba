#!/usr/bin/env bash
# Other NVML programs on the simulated GPU: our own client, written against the
# public NVML prototypes, looks up every entry point nvtop, nvitop, gpustat,
# pynvml and nvidia-ml-py look up and calls each on every GPU of every shipped
# scenario (the lost GPU before and after it falls off), at pinned times and
# live; any missing symbol or unexpected return code fails. Then the
# simulator's own promises to such clients: pinned sample timestamps are
# recent, process names are paths, power stays under the enforced limit.
. "$(dirname "$0")/lib.bash"
have_sim || skip "simulated GPU not built"
CLIENT="${GPUWHY_BUILD:-$(dirname "$GPUWHY")}/tests/nvml_client"
LIB="$(dirname "$GPUWHY")/sim/libnvidia-ml.so.1"
[ -x "$CLIENT" ] || fail "nvml_client not built ($CLIENT)"
SCN="${GPUWHY_SRC:?}/sim/scenarios"

run_client() { # SCENARIO [TIME]: the client's output; fails the test on its failure
	local out rc
	local env=(GPUWHY_SIM_SCENARIO="$SCN/$1.json")
	[ -n "${2:-}" ] && env+=(GPUWHY_SIM_TIME="$2")
	out=$(env "${env[@]}" "$CLIENT" "$LIB" 2>&1)
	rc=$?
	[ $rc -eq 0 ] || fail "nvml_client on $1${2:+ at t=$2} (exit $rc): $out"
	printf '%s\n' "$out"
}

for f in "$SCN"/*.json; do
	s=$(basename "$f" .json)
	# NVML serves a scenario's NVIDIA GPUs; one of AMD GPUs alone has none for it
	nv=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); v=d.get("gpu_defaults", {}).get("vendor", "nvidia"); print(sum(1 for g in d["gpus"] if g.get("vendor", v) != "amd"))' "$f")
	for t in 2 40 90 ""; do
		run_client "$s" "$t" >"$T/$s.$t.out"
		n=$(grep -c '^gpu [0-9]*: ' "$T/$s.$t.out")
		if [ "$nv" = 0 ]; then
			assert_eq "$n" 0 "GPUs the client saw on $s (AMD GPUs only)"
		else
			assert_ge "$n" 1 "GPUs the client saw on $s"
		fi
	done
	echo "ok: $s ($n GPUs)"
done

# The lost GPU: reachable at 2 s, off the bus at 40 s, and every call said so cleanly.
grep -q '^gpu 0: lost=0' "$T/h100x1-lost.2.out" || fail "h100x1-lost at 2 s should be on the bus"
grep -q '^gpu 0: lost=1' "$T/h100x1-lost.40.out" || fail "h100x1-lost at 40 s should be lost"

# Pinned time: samples are stamped near the wall clock, so "since a second ago" finds them.
out=$(run_client h100x1-lost 2)
assert_contains "$out" "procs=[1-9]" "h100x1-lost process list at 2 s"
pu=$(printf '%s\n' "$out" | sed -n 's/^gpu 0: .* procutil=\([0-9]*\) .*/\1/p')
sa=$(printf '%s\n' "$out" | sed -n 's/^gpu 0: .* samples=\([0-9]*\)$/\1/p')
assert_ge "$pu" 1 "per-process samples since now-1s with GPUWHY_SIM_TIME=2"
assert_ge "$sa" 1 "driver samples since now-1s with GPUWHY_SIM_TIME=2"
echo "ok: pinned time gives $pu per-process and $sa driver samples from the last second"

# MIG devices answer per instance: BAR1 (the instance's share, nothing mapped, as
# nvidia-smi 590 shows "0MiB / 24739MiB") and the processes running on each.
out=$(run_client h100x1-mig 300)
assert_contains "$out" "mig 0.0: procs=3 bar1=0/24739" "MIG 3g.40gb: its three processes and BAR1"
assert_contains "$out" "mig 0.1: procs=0 bar1=0/12369" "MIG 2g.20gb: no processes"
assert_contains "$(run_client h100x1-mig 100)" "mig 0.0: procs=0 bar1=0/24739" "MIG before the processes start"
echo "ok: MIG devices answer BAR1 and their own process lists"

# Pinned time, polled as nvtop and DCGM poll (no pause between calls): each call
# for per-process samples newer than the last one seen finds one, and GPM samples
# taken at the same pinned instant give that instant's steady rates.
out=$(run_client h100x1-lost 2)
assert_contains "$out" "gpu 0: repoll=[1-9][0-9]*,[1-9]" "per-process samples on the second poll at a pinned time"
gpm=$(printf '%s\n' "$out" | sed -n 's/^gpu 0: repoll=.* gpm=\([0-9.]*\),.*/\1/p')
util=$(GPUWHY_SIM_TIME=2 "$GPUWHY" --sim h100x1-lost query --query-gpu=utilization.gpu --format=csv,noheader,nounits)
[ -n "$gpm" ] || fail "no GPM rates at a pinned time: $(printf '%s\n' "$out" | grep repoll)"
awk -v a="$gpm" -v b="$util" 'BEGIN { d = a - b; exit !(d <= 1 && d >= -1) }' ||
	fail "GPM graphics utilization $gpm % is not utilization.gpu $util % at the same pinned time"
echo "ok: pinned time polls find per-process samples and GPM rates ($gpm %)"
