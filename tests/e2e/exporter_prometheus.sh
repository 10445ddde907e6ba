#!/usr/bin/env bash
# A real Prometheus scrapes `gpuwhy --sim h100x8-nvlink exporter` every second
# while a synthetic training job loads all 8 simulated GPUs: the target is up,
# each of the Grafana dashboard 12239 queries returns 8 series with the
# simulator's values, and a second target running a scenario with a problem
# (rtx4090-throttle) shows gpuwhy_finding.
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
# Load on every simulated H100: a synthetic training job with one rank per GPU.
"$GPUWHY" --sim h100x8-nvlink sim train --ranks 8 --steps 1000000 --workers 0 --cpu-ms 2 \
	--gpu-ms 100 >"$T/train.log" 2>&1 &
PIDS+=($!)
start_exporter h100x8-nvlink "$T/h100.log"
H100=$PORT
# The throttling scenario pinned 45 s into its clock: inside a thermal slowdown.
GPUWHY_SIM_TIME=45 start_exporter rtx4090-throttle "$T/rtx.log"
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

# Grafana 12239's panel queries (its instance/gpu variables match everything here):
# each returns 8 series with dcgm-exporter's labels, and the values are the
# simulator's: every reading `gpuwhy query` takes during the window lies within
# what Prometheus scraped over it (the load moves, so a reading is compared with
# the range of scraped values, plus a small margin).
cat >"$T/check.py" <<'PY'
import json, subprocess, sys, time, urllib.parse, urllib.request
prom, gpuwhy = sys.argv[1], sys.argv[2]

def query(expr, at=None):
    args = {"query": expr}
    if at is not None:
        args["time"] = "%.3f" % at
    url = "http://127.0.0.1:%s/api/v1/query?%s" % (prom, urllib.parse.urlencode(args))
    d = json.load(urllib.request.urlopen(url, timeout=10))
    assert d["status"] == "success", d
    return [(r["metric"], float(r["value"][1])) for r in d["data"]["result"]]

fields = ["temperature.gpu", "power.draw", "clocks.sm", "utilization.gpu", "memory.used", "gpm.tensor_active"]
# panel query, query field, scale from the field to the series, margin (absolute)
panels = [
    ('DCGM_FI_DEV_GPU_TEMP{instance=~".*", gpu=~".*", job="gpu"}', 0, 1, 1),
    ('DCGM_FI_DEV_POWER_USAGE{instance=~".*", gpu=~".*", job="gpu"}', 1, 1, 35),
    ('DCGM_FI_DEV_SM_CLOCK{instance=~".*", gpu=~".*", job="gpu"} * 1000000', 2, 1e6, 0),
    ('DCGM_FI_DEV_GPU_UTIL{instance=~".*", gpu=~".*", job="gpu"}', 3, 1, 8),
    ('DCGM_FI_DEV_FB_USED{instance=~".*", gpu=~".*", job="gpu"}', 4, 1, 0),
    ('DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{instance=~".*", gpu=~".*", job="gpu"}', 5, 0.01, 0.08),
]
t0 = time.time()
time.sleep(2)
# gpuwhy query sampling once a second like the exporter (its first reading covers
# only 100 ms, a different window from the exporter's: skipped).
out = subprocess.run([gpuwhy, "--sim", "h100x8-nvlink", "query", "--format=csv,noheader,nounits",
                      "-l", "1", "--count", "5", "--query-gpu=index," + ",".join(fields)],
                     capture_output=True, text=True, check=True)
readings = []  # (gpu index, [values])
for line in out.stdout.splitlines()[8:]:
    f = [x.strip() for x in line.split(",")]
    readings.append((f[0], [float(x) for x in f[1:]]))
if len(readings) != 32:
    sys.exit("FAIL: gpuwhy query gave %d readings" % len(readings))
time.sleep(2)
t1 = time.time()
window = "%ds" % (int(t1 - t0) + 2)
busy = False
for expr, col, scale, margin in panels:
    series = query(expr, t1)
    if len(series) != 8:
        sys.exit("FAIL: %s: %d series, expected 8" % (expr, len(series)))
    for m, v in series:
        for k in ("gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname", "DCGM_FI_DRIVER_VERSION", "instance", "job"):
            if k not in m:
                sys.exit("FAIL: %s: series %s lacks label %s" % (expr, m, k))
        if m["device"] != "nvidia" + m["gpu"]:
            sys.exit("FAIL: %s: device %s for gpu %s" % (expr, m["device"], m["gpu"]))
    if sorted(m["gpu"] for m, _ in series) != [str(i) for i in range(8)]:
        sys.exit("FAIL: %s: gpu labels %s" % (expr, sorted(m["gpu"] for m, _ in series)))
    inner = expr.replace('instance=~".*", gpu=~".*", ', "")
    base, _, mult = inner.partition(" * ")
    for g in range(8):
        sel = base.replace('job="gpu"', 'job="gpu", gpu="%d"' % g)
        lo = query("min_over_time(%s[%s])" % (sel, window), t1)[0][1]
        hi = query("max_over_time(%s[%s])" % (sel, window), t1)[0][1]
        if mult:
            lo, hi = lo * float(mult), hi * float(mult)
        for idx, vals in readings:
            if idx != str(g):
                continue
            want = vals[col] * scale
            tol = margin * scale if mult else margin
            if not (lo - tol <= want <= hi + tol):
                sys.exit("FAIL: %s: GPU %d read %s by gpuwhy query, Prometheus scraped %s..%s" % (expr, g, want, lo, hi))
            if col == 3 and want > 0:
                busy = True
    print("ok", expr)
if not busy:
    sys.exit("FAIL: the simulated GPUs were idle: the comparison proves little")
PY
python3 "$T/check.py" "$PROM" "$GPUWHY" || fail "dashboard queries"
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
query 'gpuwhy_finding{job="throttle",rule="throttled"} == 1' | grep -q 'severity=error' ||
	fail "gpuwhy_finding{rule=\"throttled\"} not in Prometheus: $(query 'gpuwhy_finding')"
[ -z "$(query 'gpuwhy_finding{job="gpu",rule="pcie_degraded"}')" ] || fail "pcie_degraded on the healthy node"
# The untyped energy counter works with rate(): mJ/s over the window is the mean power in mW.
r=$(value 'rate(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{job="gpu",gpu="0"}[10s]) / 1000')
p=$(value 'avg_over_time(DCGM_FI_DEV_POWER_USAGE{job="gpu",gpu="0"}[10s])')
awk -v r="$r" -v p="$p" 'BEGIN{exit !(r > 0 && p > 0 && r / p > 0.75 && r / p < 1.33)}' ||
	fail "energy rate $r W against mean power $p W"
# Each training rank is a process on its GPU, with the 1 GiB it holds.
n=$(query 'gpuwhy_process_gpu_memory_bytes{job="gpu",command="gpuwhy"} == 1073741824' | wc -l)
[ "$n" = 8 ] || fail "process series of the 8 ranks: $(query 'gpuwhy_process_gpu_memory_bytes')"
# gpuwhy's host series made it too.
[ -n "$(query 'gpuwhy_host_memory_total_bytes{job="gpu"}')" ] || fail "host series missing"
echo "exporter_prometheus: ok"
