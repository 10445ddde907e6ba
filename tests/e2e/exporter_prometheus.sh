#!/usr/bin/env bash
# A real Prometheus scrapes `gpuwhy --sim h100x8-nvlink exporter` every second
# while a synthetic training job loads all 8 simulated GPUs: the target is up,
# each of the Grafana dashboard 12239 queries returns 8 series with
# dcgm-exporter's labels, and a target running a scenario with a problem
# (rtx4090-throttle) shows gpuwhy_finding. The values are compared on targets
# whose readings cannot move between two moments (a steady load, the clock
# pinned), so `gpuwhy query` and Prometheus must agree exactly however late
# a loaded machine runs either of them.
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
# The same 8 GPUs under a load fixed by the scenario (no noise), in a state
# directory of their own: pinned at 300 s (temperature settled) for the
# readings, and on a running clock for GPM, which needs time to pass.
python3 - "${GPUWHY_SRC:-.}/sim/scenarios/h100x8-nvlink.json" "$T/steady.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["name"] = "h100x8-steady"
d["gpu_defaults"]["load"] = [{"start_s": 0, "level": {"util": 83, "sm_active": 0.61, "tensor_active": 0.37}}]
json.dump(d, open(sys.argv[2], "w"))
PY
GPUWHY_SIM_STATE="$T/steadystate" GPUWHY_SIM_TIME=300 start_exporter "$T/steady.json" "$T/steady.log"
STEADY=$PORT
GPUWHY_SIM_STATE="$T/steadystate" start_exporter "$T/steady.json" "$T/prof.log"
PROF=$PORT

# Prometheus on a free loopback port (bind, read, release: the kernel's choice).
PROM=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$T/prometheus.yml" <<YML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: gpu
    static_configs: [{targets: ['127.0.0.1:$H100']}]
  - job_name: throttle
    static_configs: [{targets: ['127.0.0.1:$RTX']}]
  - job_name: steady
    static_configs: [{targets: ['127.0.0.1:$STEADY']}]
  - job_name: prof
    static_configs: [{targets: ['127.0.0.1:$PROF']}]
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

all_up() {
	for j in gpu throttle steady prof; do [ "$(value "up{job=\"$j\"}")" = 1 ] || return 1; done
}
for _ in $(seq 600); do all_up && break; sleep 0.1; done
[ "$(value 'up{job="gpu"}')" = 1 ] || fail "gpu target not up: $(curl -fsS "http://127.0.0.1:$PROM/api/v1/targets")"
all_up || fail "a target is not up: $(curl -fsS "http://127.0.0.1:$PROM/api/v1/targets")"
# Let a few scrapes land.
for _ in $(seq 600); do
	[ "$(value 'count(DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{job="gpu"})')" = 8 ] &&
		[ "$(value 'count(DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{job="prof"})')" = 8 ] && break
	sleep 0.1
done

# Grafana 12239's panel queries (its instance/gpu variables match everything here):
# each returns 8 series with dcgm-exporter's labels on the loaded node, and on
# the steady targets each series holds exactly what `gpuwhy query` reads there.
cat >"$T/check.py" <<'PY'
import json, os, subprocess, sys, urllib.parse, urllib.request
prom, gpuwhy, scenario, state = sys.argv[1:5]

def query(expr):
    url = "http://127.0.0.1:%s/api/v1/query?%s" % (prom, urllib.parse.urlencode({"query": expr}))
    d = json.load(urllib.request.urlopen(url, timeout=30))
    assert d["status"] == "success", d
    return [(r["metric"], float(r["value"][1])) for r in d["data"]["result"]]

def read(fields, pinned):
    env = dict(os.environ, GPUWHY_SIM_STATE=state)
    env.pop("GPUWHY_SIM_TIME", None)
    if pinned:
        env["GPUWHY_SIM_TIME"] = "300"
    # Two readings a second apart: the second covers a whole second of the steady load.
    out = subprocess.run([gpuwhy, "--sim", scenario, "query", "--format=csv,noheader,nounits",
                          "-l", "1", "--count", "2", "--query-gpu=index," + ",".join(fields)],
                         env=env, capture_output=True, text=True, check=True)
    rows = {}
    for line in out.stdout.splitlines()[8:]:
        f = [x.strip() for x in line.split(",")]
        rows[f[0]] = [float(x) for x in f[1:]]
    if sorted(rows) != [str(i) for i in range(8)]:
        sys.exit("FAIL: gpuwhy query gave GPUs %s" % sorted(rows))
    return rows

pinned = read(["temperature.gpu", "power.draw", "clocks.sm", "utilization.gpu", "memory.used"], True)
running = read(["gpm.tensor_active"], False)
# panel query, job holding the exact values, readings, column, scale from the field, tolerance
panels = [
    ('DCGM_FI_DEV_GPU_TEMP{instance=~".*", gpu=~".*", job="%s"}', "steady", pinned, 0, 1, 0),
    ('DCGM_FI_DEV_POWER_USAGE{instance=~".*", gpu=~".*", job="%s"}', "steady", pinned, 1, 1, 0.01),
    ('DCGM_FI_DEV_SM_CLOCK{instance=~".*", gpu=~".*", job="%s"} * 1000000', "steady", pinned, 2, 1e6, 0),
    ('DCGM_FI_DEV_GPU_UTIL{instance=~".*", gpu=~".*", job="%s"}', "steady", pinned, 3, 1, 0),
    ('DCGM_FI_DEV_FB_USED{instance=~".*", gpu=~".*", job="%s"}', "steady", pinned, 4, 1, 0),
    ('DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{instance=~".*", gpu=~".*", job="%s"}', "prof", running, 0, 0.01, 0.0001),
]
if not all(v[3] > 0 for v in pinned.values()):
    sys.exit("FAIL: the steady GPUs read idle: the comparison proves little")
for expr, job, rows, col, scale, tol in panels:
    for j in ("gpu", job):
        series = query(expr % j)
        if len(series) != 8:
            sys.exit("FAIL: %s: %d series, expected 8" % (expr % j, len(series)))
        for m, v in series:
            for k in ("gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname", "DCGM_FI_DRIVER_VERSION", "instance", "job"):
                if k not in m:
                    sys.exit("FAIL: %s: series %s lacks label %s" % (expr % j, m, k))
            if m["device"] != "nvidia" + m["gpu"]:
                sys.exit("FAIL: %s: device %s for gpu %s" % (expr % j, m["device"], m["gpu"]))
        if sorted(m["gpu"] for m, _ in series) != [str(i) for i in range(8)]:
            sys.exit("FAIL: %s: gpu labels %s" % (expr % j, sorted(m["gpu"] for m, _ in series)))
    for m, v in query(expr % job):
        want = rows[m["gpu"]][col] * scale
        if abs(v - want) > tol * scale + 1e-9:
            sys.exit("FAIL: %s: GPU %s read %s by gpuwhy query, Prometheus scraped %s" % (expr % job, m["gpu"], want, v))
    print("ok", expr % job)
PY
python3 "$T/check.py" "$PROM" "$GPUWHY" "$T/steady.json" "$T/steadystate" || fail "dashboard queries"
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
# The untyped energy counter agrees with the power: the steady node has drawn its
# power since the scenario began, so at the pinned 300 s the counter (mJ) is 300 s
# of it. (A rate() over scrapes would mix the exporter's sampling moments with
# Prometheus' scrape stamps, which a loaded machine pulls apart.)
e=$(value 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{job="steady",gpu="0"}')
p=$(value 'DCGM_FI_DEV_POWER_USAGE{job="steady",gpu="0"}')
awk -v e="$e" -v p="$p" 'BEGIN{r = e / 1000 / 300 / p; exit !(p > 0 && r > 0.99 && r < 1.01)}' ||
	fail "energy $e mJ at 300 s against the steady power $p W"
[ -n "$(query 'rate(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{job="gpu"}[30s]) > 0')" ] ||
	fail "the loaded node's energy counter does not grow"
# Each training rank is a process on its GPU, with the 1 GiB it holds.
n=$(query 'gpuwhy_process_gpu_memory_bytes{job="gpu",command="gpuwhy"} == 1073741824' | wc -l)
[ "$n" = 8 ] || fail "process series of the 8 ranks: $(query 'gpuwhy_process_gpu_memory_bytes')"
# gpuwhy's host series made it too.
[ -n "$(query 'gpuwhy_host_memory_total_bytes{job="gpu"}')" ] || fail "host series missing"
echo "exporter_prometheus: ok"
