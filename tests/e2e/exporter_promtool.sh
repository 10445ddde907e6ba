#!/usr/bin/env bash
# gpuwhy exporter's exposition on the simulated 8 x H100: promtool accepts it
# (gpuwhy_* families lint-clean; DCGM families only get the camelCase label
# lint that dcgm-exporter's own labels get), dcgm-exporter's label set and
# order, value formats, identities matching `gpuwhy query`, gzip, and the
# findings of scenarios with a problem (throttling, a degraded PCIe link, a
# lost GPU), and per-process series.
set -u
: "${GPUWHY:?GPUWHY must name the gpuwhy binary}"
T=$(mktemp -d /tmp/gpuwhy-exp-promtool.XXXXXX)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
export GPUWHY_SIM_STATE="$T/simstate"
unset GPUWHY_NVML GPUWHY_SIM_SCENARIO GPUWHY_GPUS

command -v promtool >/dev/null || skip "promtool missing (scripts/install-deps --extra)"
command -v curl >/dev/null || skip "curl missing"
for s in h100x8-nvlink rtx4090-throttle a100x2-pcie-degraded l4x2-foreign h100x1-lost; do
	"$GPUWHY" sim list 2>/dev/null | grep -qx "$s" || skip "simulated GPU scenario $s not built"
done

# start_exporter SCENARIO LOG: PORT is set from the exporter's first line.
start_exporter() {
	"$GPUWHY" --sim "$1" exporter --listen 127.0.0.1:0 2>"$2" &
	PIDS+=($!)
	PORT=
	for _ in $(seq 100); do
		PORT=$(sed -n 's|.*serving http://127\.0\.0\.1:\([0-9]*\)/metrics.*|\1|p' "$2")
		[ -n "$PORT" ] && return 0
		sleep 0.1
	done
	fail "exporter did not start: $(cat "$2")"
}

start_exporter h100x8-nvlink "$T/h100.log"
URL="http://127.0.0.1:$PORT/metrics"
curl -fsS -D "$T/headers" -o "$T/m" "$URL" || fail "GET /metrics"
grep -qi '^content-type: text/plain; version=0.0.4; charset=utf-8' "$T/headers" ||
	fail "content type: $(cat "$T/headers")"

# promtool on everything: parse errors (exit 1) never. On DCGM families the only
# complaints are the ones dcgm-exporter's own names and labels cannot avoid: the
# camelCase labels (UUID, modelName, Hostname), and DCGM_FI_DEV_PCIE_REPLAY_COUNTER,
# whose name contains a type whatever its TYPE line says.
# lint_beyond_dcgm FILE: promtool's complaints other than those; fails on a parse error.
lint_beyond_dcgm() {
	promtool check metrics <"$1" >"$T/lint" 2>&1
	[ $? = 1 ] && fail "promtool cannot parse $1: $(cat "$T/lint")"
	grep -v -e "^DCGM_FI_[A-Z_]* label names should be written in 'snake_case' not 'camelCase'$" \
		-e "^DCGM_FI_DEV_PCIE_REPLAY_COUNTER metric name should not include type 'counter'$" \
		"$T/lint" | grep .
}
bad=$(lint_beyond_dcgm "$T/m")
[ -z "$bad" ] || fail "promtool complaints beyond dcgm-exporter's own names: $bad"
grep -q "camelCase" "$T/lint" || fail "expected the camelCase lint on dcgm-exporter's labels"
# gpuwhy's own families alone: exit 0, nothing said.
awk '/^# HELP /{keep = ($3 ~ /^gpuwhy_/)} keep' "$T/m" >"$T/own"
[ -s "$T/own" ] || fail "no gpuwhy_ families"
promtool check metrics <"$T/own" >"$T/lint" 2>&1 || fail "promtool on gpuwhy_ families: $(cat "$T/lint")"
[ -s "$T/lint" ] && fail "promtool said something about gpuwhy_ families: $(cat "$T/lint")"

# dcgm-exporter's label set, in its order, on every DCGM series; 8 GPUs each.
host=$(hostname)
"$GPUWHY" --sim h100x8-nvlink query --query-gpu=index,uuid,pci.bus_id,name --format=csv,noheader >"$T/ids" ||
	fail "gpuwhy query"
[ "$(wc -l <"$T/ids")" = 8 ] || fail "query lists $(wc -l <"$T/ids") GPUs"
driver=$("$GPUWHY" --sim h100x8-nvlink query --query-gpu=driver_version --format=csv,noheader | head -1)
while IFS=', ' read -r idx uuid bus name; do
	name=$(sed -n "$((idx + 1))p" "$T/ids" | cut -d, -f4- | sed 's/^ *//')
	labels="gpu=\"$idx\",UUID=\"$uuid\",pci_bus_id=\"$bus\",device=\"nvidia$idx\",modelName=\"$name\",Hostname=\"$host\",DCGM_FI_DRIVER_VERSION=\"$driver\""
	for fam in DCGM_FI_DEV_GPU_TEMP DCGM_FI_DEV_POWER_USAGE DCGM_FI_DEV_SM_CLOCK DCGM_FI_DEV_GPU_UTIL \
		DCGM_FI_DEV_FB_USED DCGM_FI_PROF_PIPE_TENSOR_ACTIVE; do
		grep -qF "$fam{$labels} " "$T/m" || fail "$fam for GPU $idx lacks labels {$labels}"
	done
done <"$T/ids"
for fam in $(grep '^# TYPE DCGM_' "$T/m" | awk '{print $3}'); do
	n=$(grep -c "^$fam{" "$T/m")
	[ "$n" = 8 ] || fail "$fam has $n series, expected 8"
	# Label names exactly as dcgm-exporter, in order.
	names=$(grep -m1 "^$fam{" "$T/m" | sed 's/^[^{]*{\(.*\)}.*/\1/' | grep -o '[A-Za-z_]*="' | tr -d '="' | tr '\n' ,)
	[ "$names" = "gpu,UUID,pci_bus_id,device,modelName,Hostname,DCGM_FI_DRIVER_VERSION," ] ||
		fail "$fam label names: $names"
done

# Values: doubles with six decimals (power, profiling ratios 0..1), integers elsewhere.
grep '^DCGM_FI_DEV_POWER_USAGE{' "$T/m" | grep -vqE '\} [0-9]+\.[0-9]{6}$' && fail "POWER_USAGE format"
grep '^DCGM_FI_PROF_\(GR_ENGINE\|SM\|PIPE_TENSOR\|DRAM\)_[A-Z]*{' "$T/m" >"$T/ratios"
[ "$(wc -l <"$T/ratios")" -ge 16 ] || fail "profiling ratios missing on Hopper (GPM)"
awk '{v=$NF; if (v !~ /^[01]\.[0-9][0-9][0-9][0-9][0-9][0-9]$/ || v > 1) {print; exit 1}}' "$T/ratios" ||
	fail "a profiling ratio is not 0..1 with six decimals"
for fam in DCGM_FI_DEV_GPU_TEMP DCGM_FI_DEV_SM_CLOCK DCGM_FI_DEV_GPU_UTIL DCGM_FI_DEV_FB_USED \
	DCGM_FI_PROF_PCIE_TX_BYTES; do
	grep "^$fam{" "$T/m" | grep -vqE '\} [0-9]+$' && fail "$fam is not an integer"
done
# The values are the simulator's: compare GPU temperature and memory with `gpuwhy query`.
"$GPUWHY" --sim h100x8-nvlink query --query-gpu=index,temperature.gpu,memory.used \
	--format=csv,noheader,nounits >"$T/q"
curl -fsS "$URL" >"$T/m2"
while IFS=', ' read -r idx temp used; do
	got=$(sed -n "s/^DCGM_FI_DEV_GPU_TEMP{gpu=\"$idx\",.*} //p" "$T/m2")
	awk -v a="$got" -v b="$temp" 'BEGIN{d=a-b; exit !(d <= 5 && d >= -5)}' ||
		fail "GPU $idx temperature $got, query says $temp"
	got=$(sed -n "s/^DCGM_FI_DEV_FB_USED{gpu=\"$idx\",.*} //p" "$T/m2")
	awk -v a="$got" -v b="$used" 'BEGIN{d=a-b; exit !(d <= 0.1*b+64 && d >= -0.1*b-64)}' ||
		fail "GPU $idx memory used $got MiB, query says $used"
done <"$T/q"

# gzip when asked, the same exposition.
curl -fsS -H 'Accept-Encoding: gzip' -D "$T/gzh" -o "$T/m.gz" "$URL" || fail "gzip GET"
grep -qi '^content-encoding: gzip' "$T/gzh" || fail "no gzip: $(cat "$T/gzh")"
gzip -dc "$T/m.gz" >"$T/m.unz" || fail "gzip body does not decompress"
bad=$(lint_beyond_dcgm "$T/m.unz")
[ -z "$bad" ] || fail "gzip body: $bad"
gzip -dc "$T/m.gz" | grep -c '^DCGM_FI_DEV_GPU_UTIL{' | grep -qx 8 || fail "gzip body content"

# Healthy H100s: no throttling, full PCIe links (whatever findings there are, none of those).
grep -q '^gpuwhy_finding{.*rule="pcie_degraded"' "$T/m" && fail "pcie_degraded on healthy H100s"

# A GPU with a problem: the throttling scenario, pinned 45 s into its clock
# (inside a thermal slowdown episode), shows it as a finding.
GPUWHY_SIM_TIME=45 start_exporter rtx4090-throttle "$T/rtx.log"
curl -fsS "http://127.0.0.1:$PORT/metrics" >"$T/r" || fail "scrape rtx4090-throttle"
grep -q '^gpuwhy_finding{gpu="0",rule="throttled",severity="error"} 1$' "$T/r" ||
	fail "no throttled finding for rtx4090-throttle: $(grep -E 'finding|throttle_reason.*1$' "$T/r")"
grep -q '^gpuwhy_gpu_throttle_reason{gpu="0",reason="hw_thermal_slowdown"} 1$' "$T/r" ||
	fail "hw_thermal_slowdown not active: $(grep throttle_reason "$T/r")"
# No GPM before Hopper: the Hopper-only ratios are absent, never 0.
grep -q '^DCGM_FI_PROF_PIPE_TENSOR_ACTIVE' "$T/r" && fail "tensor ratio exported without GPM"
grep -q '^# HELP DCGM_FI_PROF_SM_ACTIVE' "$T/r" && fail "SM_ACTIVE family without GPM"
awk '/^# HELP /{keep = ($3 ~ /^gpuwhy_/)} keep' "$T/r" | promtool check metrics >"$T/lint" 2>&1 ||
	fail "promtool on rtx4090 gpuwhy_ families: $(cat "$T/lint")"

# A degraded PCIe link (Gen3 x8 of Gen4 x16) on GPU 0 only.
start_exporter a100x2-pcie-degraded "$T/a100.log"
curl -fsS "http://127.0.0.1:$PORT/metrics" >"$T/a" || fail "scrape a100x2-pcie-degraded"
[ "$(grep '^gpuwhy_finding{' "$T/a")" = 'gpuwhy_finding{gpu="0",rule="pcie_degraded",severity="warn"} 1' ] ||
	fail "pcie_degraded findings: $(grep '^gpuwhy_finding' "$T/a")"
grep -q '^gpuwhy_gpu_pcie_link_width_current{gpu="0"} 8$' "$T/a" || fail "link width series"
grep -q '^gpuwhy_gpu_pcie_link_gen_max{gpu="0"} 4$' "$T/a" || fail "link generation series"

# Processes: another user's process on GPU 0, a PID this host does not have on GPU 1.
start_exporter l4x2-foreign "$T/l4.log"
# Per-process SM use comes from NVML's process samples since the previous reading:
# wait for a sample that has some.
for _ in $(seq 30); do
	curl -fsS "http://127.0.0.1:$PORT/metrics" >"$T/l" || fail "scrape l4x2-foreign"
	grep -q '^gpuwhy_process_sm_utilization_ratio{gpu="0",.*} 0.400000$' "$T/l" && break
	sleep 0.2
done
grep -q '^gpuwhy_process_gpu_memory_bytes{gpu="0",pid="1",command="[^"]*"} 16106127360$' "$T/l" ||
	fail "process memory on GPU 0: $(grep '^gpuwhy_process' "$T/l")"
grep -q '^gpuwhy_process_gpu_memory_bytes{gpu="1",pid="4194001",command=""} 9663676416$' "$T/l" ||
	fail "process memory on GPU 1: $(grep '^gpuwhy_process' "$T/l")"
grep -q '^gpuwhy_process_sm_utilization_ratio{gpu="0",pid="1",command="[^"]*"} 0.400000$' "$T/l" ||
	fail "process SM ratio: $(grep '^gpuwhy_process' "$T/l")"
grep -q '^gpuwhy_gpu_processes{gpu="1"} 1$' "$T/l" || fail "process count"

# A GPU that falls off the bus 5 s into the scenario: its DCGM series go, the
# exporter stays, the identity stays, and the finding says so.
start_exporter h100x1-lost "$T/lost.log"
LOST_URL="http://127.0.0.1:$PORT/metrics"
curl -fsS "$LOST_URL" | grep -q '^DCGM_FI_DEV_GPU_UTIL{gpu="0"' || fail "h100x1-lost: no series before the loss"
for _ in $(seq 100); do
	curl -fsS "$LOST_URL" >"$T/x" || fail "scrape after the GPU was lost"
	grep -q '^gpuwhy_gpu_lost{gpu="0"} 1$' "$T/x" && break
	sleep 0.2
done
grep -q '^gpuwhy_finding{gpu="0",rule="gpu_lost",severity="error"} 1$' "$T/x" ||
	fail "no gpu_lost finding: $(grep -E 'lost|finding' "$T/x")"
# a lost GPU keeps only its last Xid (79: fallen off the bus), for alerting
grep '^DCGM_FI_' "$T/x" | grep -qv '^DCGM_FI_DEV_XID_ERRORS{' &&
	fail "DCGM series of a lost GPU: $(grep -m3 '^DCGM_FI_' "$T/x")"
grep -q '^DCGM_FI_DEV_XID_ERRORS{gpu="0",.*} 79$' "$T/x" || fail "no last Xid of the lost GPU"
grep -q '^gpuwhy_gpu_info{gpu="0",uuid="GPU-' "$T/x" || fail "identity of the lost GPU"
echo "exporter_promtool: ok"
