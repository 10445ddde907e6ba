#!/usr/bin/env bash
# gpuwhy exporter's command line: help, every bad value gets one line and the
# documented exit code, --collectors files (good, bad, unknown fields), a port
# already in use, and no GPU library at all.
set -u
: "${GPUWHY:?GPUWHY must name the gpuwhy binary}"
T=$(mktemp -d /tmp/gpuwhy-exp-cli.XXXXXX)
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

# expect CODE MESSAGE-FRAGMENT ARGS...: exit code and one line on stderr naming the input.
expect() {
	local code=$1 msg=$2
	shift 2
	"$GPUWHY" "$@" >"$T/out" 2>"$T/err" </dev/null
	local rc=$?
	[ "$rc" = "$code" ] || fail "gpuwhy $*: exit $rc, expected $code ($(cat "$T/err"))"
	grep -qF -- "$msg" "$T/err" || fail "gpuwhy $*: stderr lacks '$msg': $(cat "$T/err")"
	[ "$(wc -l <"$T/err")" -le 2 ] || fail "gpuwhy $*: more than one message: $(cat "$T/err")"
}

"$GPUWHY" exporter --help >"$T/out" || fail "--help exit status"
for flag in --listen --interval --hostname-label --collectors --processes --max-connections \
	--request-timeout; do
	grep -q -- "$flag" "$T/out" || fail "--help does not mention $flag"
done
"$GPUWHY" --help | grep -q '^  exporter ' || fail "gpuwhy --help does not list exporter"

expect 2 "--listen: ':9400': no address before the port" exporter --listen :9400
expect 2 "--listen: '9400': expected ADDRESS:PORT" exporter --listen 9400
expect 2 "port '70000' is not a number from 0 to 65535" exporter --listen 127.0.0.1:70000
expect 2 "'example.com' is not a numeric IPv4 address" exporter --listen example.com:9400
expect 2 "--interval: invalid interval '10ms'" exporter --interval 10ms
expect 2 "--interval: invalid interval 'soon'" exporter --interval soon
expect 2 "--hostname-label: unknown value 'HOSTNAME'" exporter --hostname-label HOSTNAME
expect 2 "--processes: invalid value '33'" exporter --processes 33
expect 2 "--max-connections: invalid value '0'" exporter --max-connections 0
expect 2 "--request-timeout: invalid value '1.5'" exporter --request-timeout 1.5
expect 2 "extra: unexpected argument" exporter extra
expect 3 "$T/none.csv: cannot open" exporter --collectors "$T/none.csv"
printf 'DCGM_FI_DEV_GPU_TEMP, gauge, t\nDCGM_FI_DEV_SM_CLOCK gauge\n' >"$T/bad.csv"
expect 2 "$T/bad.csv: line 2: expected 'FIELD, prom_type, help'" exporter --collectors "$T/bad.csv"
printf 'DCGM_FI_DEV_GPU_TEMP, summary, t\n' >"$T/bad2.csv"
expect 2 "line 1: prom_type 'summary' of DCGM_FI_DEV_GPU_TEMP is not gauge, counter or label" \
	exporter --collectors "$T/bad2.csv"
# No GPU library: one line, exit 3, before anything listens.
expect 3 "" --nvml "$T/no-such-libnvidia-ml.so.1" exporter --listen 127.0.0.1:0

"$GPUWHY" sim list 2>/dev/null | grep -qx h100x8-nvlink || skip "simulated GPU scenario h100x8-nvlink not built"

# start_exporter LOG ARGS...: run it in the background; PORT is set from its first line.
start_exporter() {
	local log=$1
	shift
	"$GPUWHY" --sim h100x8-nvlink exporter --listen 127.0.0.1:0 "$@" 2>"$log" &
	PIDS+=($!)
	PORT=
	for _ in $(seq 100); do
		PORT=$(sed -n 's|.*serving http://127\.0\.0\.1:\([0-9]*\)/metrics.*|\1|p' "$log")
		[ -n "$PORT" ] && return 0
		sleep 0.1
	done
	fail "exporter did not start: $(cat "$log")"
}

# A dcgm-exporter counters CSV: only its fields, unknown ones named in one warning line.
cat >"$T/counters.csv" <<'CSV'
# Format
# DCGM FIELD, Prometheus metric type, help message

DCGM_FI_DEV_GPU_TEMP, gauge, GPU temperature (in C).
DCGM_FI_DEV_POWER_USAGE, gauge, Power draw (in W).
DCGM_FI_DEV_XID_ERRORS, gauge, Value of the last XID error encountered.
DCGM_FI_DEV_VGPU_LICENSE_STATUS, gauge, vGPU License status
DCGM_FI_DRIVER_VERSION, label, Driver Version
CSV
start_exporter "$T/csv.log" --collectors "$T/counters.csv" --hostname-label none
grep -q "warning: fields gpuwhy cannot supply: DCGM_FI_DEV_VGPU_LICENSE_STATUS" \
	"$T/csv.log" || fail "no warning naming the unknown fields: $(cat "$T/csv.log")"
curl -fsS "http://127.0.0.1:$PORT/metrics" >"$T/m" || fail "scrape with --collectors"
fams=$(grep '^# TYPE DCGM_' "$T/m" | awk '{print $3}' | tr '\n' ' ')
[ "$fams" = "DCGM_FI_DEV_GPU_TEMP DCGM_FI_DEV_POWER_USAGE DCGM_FI_DEV_XID_ERRORS " ] || fail "DCGM families with --collectors: $fams"
grep -q 'ostname=' "$T/m" && fail "--hostname-label none still has a hostname label"
grep -q '^DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="[^"]*",pci_bus_id="[^"]*",device="nvidia0",modelName="[^"]*",DCGM_FI_DRIVER_VERSION="[^"]*"} [0-9]*$' "$T/m" ||
	fail "label set with --hostname-label none: $(grep -m1 '^DCGM_FI_DEV_GPU_TEMP' "$T/m")"

# The port is now taken: a second exporter on it fails with exit 3 and one line.
expect 3 "cannot listen: Address already in use" --sim h100x8-nvlink exporter --listen "127.0.0.1:$PORT"

# hostname label: NODE_NAME wins, as in dcgm-exporter.
NODE_NAME=node-e2e start_exporter "$T/h.log" --hostname-label hostname
curl -fsS "http://127.0.0.1:$PORT/metrics" | grep -q '^DCGM_FI_DEV_GPU_UTIL{.*,modelName="[^"]*",hostname="node-e2e",DCGM_FI_DRIVER_VERSION=' ||
	fail "hostname label from NODE_NAME"
NODE_NAME=node-e2e start_exporter "$T/H.log"
curl -fsS "http://127.0.0.1:$PORT/metrics" | grep -q '^DCGM_FI_DEV_GPU_UTIL{.*,Hostname="node-e2e",' ||
	fail "Hostname is the default label name"
echo "exporter_cli: ok"
