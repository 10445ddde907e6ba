# Exporter labels and types: MIG GPU-instance series with GPU_I_PROFILE and GPU_I_ID, no
# whole-GPU utilization under MIG; Kubernetes pod/namespace/container from a fixture
# cgroup tree; --counter-type counter; a CSV selects non-default fields.
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
# DCGM floors bytes to MiB (nvidia-smi rounds up): 25.5 MiB used is 25, 9975.5 MiB free 9975
assert_eq "$(echo "$m" | grep 'GPU_I_ID="2"' | awk '{print $NF}')" 25 "3g.40gb used MiB"
assert_eq "$(echo "$m" | grep -c 'GPU_I_PROFILE="1g.10gb"')" 2 "two 1g.10gb instances"
assert_eq "$(grep 'GPU_I_ID="10"' "$T/m" | grep '^DCGM_FI_DEV_FB_FREE' | awk '{print $NF}')" 9975 "1g.10gb free MiB"
# the whole GPU too: 58.5 MiB used is 58 in DCGM_FI_DEV_FB_USED, where nvidia-smi shows 59
assert_eq "$(echo "$m" | grep -v GPU_I_ID | awk '{print $NF}')" 58 "whole-GPU used MiB"
smi=$("$GPUWHY" --sim h100x1-mig query --query-gpu=memory.used --format=csv,noheader,nounits)
assert_eq "$smi" 59 "nvidia-smi's view keeps its rounding"
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
# Kubernetes: l4x2-foreign's GPU 0 runs PID 1, GPU 1 PID 4194001; only PID 1 is in a pod
R=$T/host
CID=3f9a1c2b4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8
mkdir -p "$R/proc/1" "$R/proc/4194001" "$R/var/log/containers"
echo "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod7c0e5a1b_2d3f_4e6a_9b8c_1d2e3f4a5b6c.slice/cri-containerd-$CID.scope" >"$R/proc/1/cgroup"
echo "0::/system.slice/foreign.service" >"$R/proc/4194001/cgroup"
touch "$R/var/log/containers/trainer-0_ml-team_pytorch-$CID.log"
start_exporter "$T/k8s.log" --sim l4x2-foreign exporter --kubernetes-root "$R"
assert_contains "$(grep '^DCGM_FI_DEV_FB_USED{gpu="0"' "$T/m")" 'container="pytorch",namespace="ml-team",pod="trainer-0"}' "GPU 0 pod labels"
grep '^DCGM_FI_DEV_FB_USED{gpu="1"' "$T/m" | grep -q 'pod=' && fail "GPU 1 is not in a pod"
assert_contains "$(grep '^gpuwhy_process_gpu_memory_bytes{gpu="0"' "$T/m")" 'pod="trainer-0"}' "process pod labels"
# without --kubernetes there are no pod labels
start_exporter "$T/nok8s.log" --sim l4x2-foreign exporter
grep -q 'pod=' "$T/m" && fail "pod labels without --kubernetes"
echo "exporter_labels: ok"
