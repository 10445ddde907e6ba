# Exporter on a MIG GPU: GPU-instance series with GPU_I_PROFILE and GPU_I_ID labels,
# no whole-GPU utilization; --counter-type counter; a CSV selects non-default fields.
. "$(dirname "$0")/lib.bash"
have_sim || skip "simulated GPU not built"
command -v curl >/dev/null || skip "curl missing"
export GPUWHY_SIM_TIME=100

start_exporter() { # LOG ARGS... -> PORT
	local log=$1
	shift
	"$GPUWHY" "$@" --listen 127.0.0.1:0 --interval 200ms 2>"$log" &
	PIDS_TO_KILL+=($!)
	PORT=
	for _ in $(seq 100); do
		PORT=$(sed -n 's|.*serving http://127\.0\.0\.1:\([0-9]*\)/metrics.*|\1|p' "$log")
		[ -n "$PORT" ] && break
		sleep 0.1
	done
	[ -n "$PORT" ] || fail "exporter did not start: $(cat "$log")"
	# the first sample is in once /metrics has a DCGM series
	for _ in $(seq 100); do
		curl -s "127.0.0.1:$PORT/metrics" >"$T/m" && grep -q '^DCGM_FI_DEV_FB_USED' "$T/m" && return 0
		sleep 0.1
	done
	fail "no sample: $(cat "$log")"
}

start_exporter "$T/mig.log" --sim h100x1-mig exporter
m=$(grep '^DCGM_FI_DEV_FB_USED' "$T/m")
assert_eq "$(echo "$m" | wc -l)" 5 "whole GPU plus 4 instances"
assert_contains "$m" 'modelName="NVIDIA H100 80GB HBM3",GPU_I_PROFILE="3g.40gb",GPU_I_ID="2",Hostname=' "3g.40gb series labels"
assert_eq "$(echo "$m" | grep 'GPU_I_ID="2"' | awk '{print $NF}')" 26 "3g.40gb used MiB"
assert_eq "$(echo "$m" | grep -c 'GPU_I_PROFILE="1g.10gb"')" 2 "two 1g.10gb instances"
assert_eq "$(grep 'GPU_I_ID="10"' "$T/m" | grep '^DCGM_FI_DEV_FB_FREE' | awk '{print $NF}')" 9975 "1g.10gb free MiB"
# MIG mode: the driver has no whole-GPU utilization, so there is no series, never a 0
grep -q '^DCGM_FI_DEV_GPU_UTIL' "$T/m" && fail "GPU_UTIL exported under MIG"
grep -q '^DCGM_FI_DEV_POWER_USAGE{' "$T/m" || fail "power still exported under MIG"

start_exporter "$T/ctr.log" --sim h100x1 exporter --counter-type counter
assert_contains "$(cat "$T/m")" "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter" "energy counter"
assert_contains "$(cat "$T/m")" "# TYPE DCGM_FI_DEV_PCIE_REPLAY_COUNTER counter" "replays counter"
assert_contains "$(cat "$T/m")" "# TYPE DCGM_FI_DEV_FB_USED gauge" "gauges stay gauges"
"$GPUWHY" --sim h100x1 exporter --counter-type nope 2>/dev/null
assert_eq "$?" 2 "bad --counter-type"

printf 'DCGM_FI_DEV_FB_USED, gauge, Framebuffer memory used (in MiB).\nDCGM_FI_DEV_POWER_MGMT_LIMIT, gauge, Power management limit (in W).\nDCGM_FI_DEV_CLOCK_THROTTLE_REASONS, gauge, Clock throttle reasons.\nDCGM_FI_DEV_PCIE_LINK_GEN, gauge, PCIe link generation.\n' >"$T/c.csv"
start_exporter "$T/csv.log" --sim h100x1 exporter --collectors "$T/c.csv"
assert_eq "$(grep '^DCGM_FI_DEV_POWER_MGMT_LIMIT' "$T/m" | awk '{print $NF}')" 700.000000 "power limit"
assert_eq "$(grep '^DCGM_FI_DEV_CLOCK_THROTTLE_REASONS' "$T/m" | awk '{print $NF}')" 1 "idle reason bitmask"
assert_eq "$(grep '^DCGM_FI_DEV_PCIE_LINK_GEN' "$T/m" | awk '{print $NF}')" 5 "link generation"
grep -q '^DCGM_FI_DEV_GPU_TEMP' "$T/m" && fail "a CSV exports only its fields"
echo "exporter_mig: ok"
