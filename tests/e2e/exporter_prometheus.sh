#!/usr/bin/env bash
# A real Prometheus scrapes `gpuwhy --sim h100x8-nvlink exporter` every second:
# the target is up, each of the Grafana dashboard 12239 queries returns 8
# series with the simulator's values, and a second target running a scenario
# with a problem (rtx4090-throttle) shows gpuwhy_finding.
set -u
: "${GPUWHY:?GPUWHY must name the gpuwhy binary}"
T=$(mktemp -d /tmp/gpuwhy-exp-prom.XXXXXX)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$T/prom.log" ] && tail -5 "$T/prom.log" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
export GPUWHY_SIM_STATE="$T/simstate"
unset GPUWHY_NVML GPUWHY_SIM_SCENARIO GPUWHY_GPUS

command -v prometheus >/dev/null || skip "prometheus missing (scripts/install-deps --extra)"
command -v promtool >/dev/null || skip "promtool missing"
command -v curl >/dev/null || skip "curl missing"
command -v python3 >/dev/null || skip "python3 missing"
for s in h100x8-nvlink rtx4090-throttle; do
	"$GPUWHY" sim list 2>/dev/null | grep -qx "$s" || skip "simulated GPU scenario $s not built"
done

start_exporter() { # SCENARIO LOG -> PORT
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
H100=$PORT
start_exporter rtx4090-throttle "$T/rtx.log"
RTX=$PORT

# Prometheus on a free loopback port (bind, read, release: the kernel's choice).
PROM=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$T/prometheus.yml" <<YML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: gpu
    static_configs: [{targets: ['127.0.0.1:$H100']}]
  - job_name: throttle
    static_configs: [{targets: ['127.0.0.1:$RTX']}]
YML
promtool check config "$T/prometheus.yml" >/dev/null || fail "promtool check config"
prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/data" \
	--web.listen-address="127.0.0.1:$PROM" >"$T/prom.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do curl -fsS -o /dev/null "http://127.0.0.1:$PROM/-/ready" 2>/dev/null && break; sleep 0.1; done

# query EXPR: one line per series, "labels<TAB>value", labels as k=v sorted.
query() {
	curl -fsS --get "http://127.0.0.1:$PROM/api/v1/query" --data-urlencode "query=$1" |
		python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["status"] == "success", d
for r in d["data"]["result"]:
    m = r["metric"]
    print(",".join("%s=%s" % (k, m[k]) for k in sorted(m)) + "\t" + r["value"][1])'
}
value() { query "$1" | head -1 | cut -f2; }

for _ in $(seq 300); do
	[ "$(value 'up{job="gpu"}')" = 1 ] && [ "$(value 'up{job="throttle"}')" = 1 ] && break
	sleep 0.1
done
[ "$(value 'up{job="gpu"}')" = 1 ] || fail "gpu target not up: $(curl -fsS "http://127.0.0.1:$PROM/api/v1/targets")"
[ "$(value 'up{job="throttle"}')" = 1 ] || fail "throttle target not up"
# Let a few scrapes land.
for _ in $(seq 100); do
	[ "$(value 'count(DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{job="gpu"})')" = 8 ] && break
	sleep 0.1
done

# The simulator's values right now, per GPU index (what `gpuwhy query` reads).
"$GPUWHY" --sim h100x8-nvlink query --format=csv,noheader,nounits \
	--query-gpu=index,temperature.gpu,power.draw,clocks.sm,utilization.gpu,memory.used,gpm.tensor_active \
	>"$T/sim.csv" || fail "gpuwhy query"

# Grafana 12239's panel queries (instance/gpu variables match everything here).
# check EXPR COLUMN SCALE TOLERANCE: 8 series, each within TOLERANCE of the simulator's value.
check() {
	local expr=$1 col=$2 scale=$3 tol=$4
	query "$expr" >"$T/res"
	local n
	n=$(wc -l <"$T/res")
	[ "$n" = 8 ] || fail "$expr: $n series, expected 8: $(cat "$T/res")"
	python3 - "$T/res" "$T/sim.csv" "$col" "$scale" "$tol" "$expr" <<'PY' || exit 1
import sys
res, sim, col, scale, tol, expr = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
want = {}
for line in open(sim):
    f = [x.strip() for x in line.split(",")]
    want[f[0]] = float(f[col]) * scale
seen = set()
for line in open(res):
    labels, v = line.rstrip("\n").split("\t")
    lab = dict(kv.split("=", 1) for kv in labels.split(","))
    g = lab["gpu"]
    for k in ("UUID", "pci_bus_id", "device", "modelName", "Hostname", "DCGM_FI_DRIVER_VERSION", "instance", "job"):
        if k not in lab:
            sys.exit("FAIL: %s: series for GPU %s lacks label %s" % (expr, g, k))
    if lab["device"] != "nvidia" + g:
        sys.exit("FAIL: %s: device label %s for gpu %s" % (expr, lab["device"], g))
    got = float(v)
    if abs(got - want[g]) > tol * max(abs(want[g]), 1e-9) + 1e-6:
        sys.exit("FAIL: %s: GPU %s is %s, simulator says %s" % (expr, g, got, want[g]))
    seen.add(g)
if seen != set(want):
    sys.exit("FAIL: %s: GPUs %s, simulator has %s" % (expr, sorted(seen), sorted(want)))
PY
}
check 'DCGM_FI_DEV_GPU_TEMP{instance=~".*", gpu=~".*", job="gpu"}' 1 1 0.10
check 'DCGM_FI_DEV_POWER_USAGE{instance=~".*", gpu=~".*", job="gpu"}' 2 1 0.25
check 'DCGM_FI_DEV_SM_CLOCK{instance=~".*", gpu=~".*", job="gpu"} * 1000000' 3 1000000 0.25
check 'DCGM_FI_DEV_GPU_UTIL{instance=~".*", gpu=~".*", job="gpu"}' 4 1 0.35
check 'DCGM_FI_DEV_FB_USED{instance=~".*", gpu=~".*", job="gpu"}' 5 1 0.10
check 'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{instance=~".*", gpu=~".*", job="gpu"}' 6 0.01 0.35
# The two aggregate panels.
[ "$(query 'avg(DCGM_FI_DEV_GPU_TEMP{job="gpu"})' | wc -l)" = 1 ] || fail "avg(GPU_TEMP)"
[ "$(query 'sum(DCGM_FI_DEV_POWER_USAGE{job="gpu"})' | wc -l)" = 1 ] || fail "sum(POWER_USAGE)"
# The dashboard's variables.
n=$(curl -fsS "http://127.0.0.1:$PROM/api/v1/label/gpu/values" --data-urlencode 'match[]=DCGM_FI_DEV_GPU_TEMP{job="gpu"}' --get |
	python3 -c 'import json,sys; print(len(json.load(sys.stdin)["data"]))')
[ "$n" = 8 ] || fail "label_values(DCGM_FI_DEV_GPU_TEMP, gpu): $n values"

# The finding of the throttling scenario, as an alerting rule would see it.
for _ in $(seq 100); do
	[ -n "$(query 'gpuwhy_finding{job="throttle",rule="throttled"} == 1')" ] && break
	sleep 0.1
done
query 'gpuwhy_finding{job="throttle",rule="throttled"} == 1' | grep -q 'severity=' ||
	fail "gpuwhy_finding{rule=\"throttled\"} not in Prometheus: $(query 'gpuwhy_finding')"
[ -z "$(query 'gpuwhy_finding{job="gpu",rule="pcie_degraded"}')" ] || fail "pcie_degraded on the healthy node"
# gpuwhy's host series made it too.
[ -n "$(query 'gpuwhy_host_memory_total_bytes{job="gpu"}')" ] || fail "host series missing"
echo "exporter_prometheus: ok"
