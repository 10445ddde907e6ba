#!/usr/bin/env bash
# gpuwhy exporter's exposition on the simulated 8 x H100: promtool accepts it
# (gpuwhy_* families lint-clean; DCGM families only get the camelCase label
# lint that dcgm-exporter's own labels get), dcgm-exporter's label set and
# order, value formats, identities matching `gpuwhy query`, gzip, and the
# findings of a scenario with a problem.
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
for s in h100x8-nvlink rtx4090-throttle; do
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

# promtool on everything: parse errors (exit 1) never; lint only camelCase labels on DCGM families.
promtool check metrics <"$T/m" >"$T/lint" 2>&1
rc=$?
[ "$rc" = 1 ] && fail "promtool cannot parse the exposition: $(cat "$T/lint")"
bad=$(grep -v "^DCGM_FI_[A-Z_]* label names should be written in 'snake_case' not 'camelCase'$" "$T/lint" | grep .)
[ -z "$bad" ] || fail "promtool complaints beyond the camelCase label lint: $bad"
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
	names=$(grep -m1 "^$fam{" "$T/m" | sed 's/{\(.*\)}.*/\1/' | grep -o '[A-Za-z_]*="' | tr -d '="' | tr '\n' ,)
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
gzip -dc "$T/m.gz" | promtool check metrics 2>&1 | grep -v camelCase | grep -q . && fail "gzip body"
gzip -dc "$T/m.gz" | grep -c '^DCGM_FI_DEV_GPU_UTIL{' | grep -qx 8 || fail "gzip body content"

# Healthy H100s: no throttling, full PCIe links (whatever findings there are, none of those).
grep -q '^gpuwhy_finding{.*rule="pcie_degraded"' "$T/m" && fail "pcie_degraded on healthy H100s"

# A GPU with a problem: the throttling scenario shows it as a finding.
start_exporter rtx4090-throttle "$T/rtx.log"
URL2="http://127.0.0.1:$PORT/metrics"
found=
for _ in $(seq 60); do
	curl -fsS "$URL2" >"$T/r"
	grep -q '^gpuwhy_finding{gpu="[0-9]*",rule="throttled",severity="\(info\|warn\|error\)"} 1$' "$T/r" &&
		found=1 && break
	sleep 0.5
done
[ -n "$found" ] || fail "no throttled finding for rtx4090-throttle: $(grep -E 'finding|throttle_reason.*1$' "$T/r")"
grep -q '^gpuwhy_gpu_throttle_reason{gpu="[0-9]*",reason="[a-z_]*"} 1$' "$T/r" ||
	fail "no active throttle reason series"
# No GPM before Hopper: the Hopper-only ratios are absent, never 0.
grep -q '^DCGM_FI_PROF_PIPE_TENSOR_ACTIVE' "$T/r" && fail "tensor ratio exported without GPM"
awk '/^# HELP /{keep = ($3 ~ /^gpuwhy_/)} keep' "$T/r" | promtool check metrics >"$T/lint" 2>&1 ||
	fail "promtool on rtx4090 gpuwhy_ families: $(cat "$T/lint")"
echo "exporter_promtool: ok"
