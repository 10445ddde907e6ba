#!/usr/bin/env bash
# `gpuwhy fleet` on a live cluster: four `gpuwhy exporter`s on loopback, each a node of its
# own ($NODE_NAME sets their Hostname label) on a different simulated GPU, scraped every
# second by a real Prometheus for about a minute. fleet must find each node's problem on
# that node: the throttled RTX 4090 (thermal from its 30th second), the H100 that fell off
# the bus (Xid 79 at 5 s) before Prometheus started, the L4 holding 9 GiB while idle, and
# nothing severe on the healthy busy node; and beside them, what each exporter found itself
# (gpuwhy_finding). Nothing here is timed: it waits until Prometheus holds the samples.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/prom_lab.bash"
have_sim || skip "simulated GPU not built"
command -v prometheus >/dev/null || skip "prometheus missing (scripts/install-deps --extra)"
command -v python3 >/dev/null || skip "python3 missing"
command -v curl >/dev/null || skip "curl missing"
SRC=${GPUWHY_SRC:-$(dirname "$0")/../..}
# The healthy busy node: the RTX 4090's steady load without its throttle episodes.
python3 - "$SRC/sim/scenarios/rtx4090-throttle.json" "$T/busy.json" <<'PY' || fail "busy scenario"
import json, sys
d = json.load(open(sys.argv[1]))
d["name"] = "rtx4090-busy"
for g in d["gpus"]:
    g.pop("episodes", None)
json.dump(d, open(sys.argv[2], "w"))
PY

NODES=(throttled:rtx4090-throttle lost:h100x1-lost memory:l4x2-foreign busy:"$T/busy.json")
declare -A PORT
for n in "${NODES[@]}"; do PORT[${n%%:*}]=$(free_port); done
prom_config $(for node in "${!PORT[@]}"; do echo "127.0.0.1:${PORT[$node]}"; done) >"$T/prom.yml"
# The exporters, each with its own simulator state: a machine of its own. The lost H100 has
# fallen off the bus before Prometheus starts: Prometheus never sees its utilization, only
# the Xid 79 it keeps.
START=$(date +%s)
for n in "${NODES[@]}"; do
	node=${n%%:*} scen=${n#*:}
	mkdir -p "$T/$node"
	GPUWHY_SIM_STATE="$T/$node/state" NODE_NAME="$node" "$GPUWHY" --sim "$scen" exporter \
		--listen "127.0.0.1:${PORT[$node]}" --interval 1s 2>"$T/$node/log" &
	PIDS_TO_KILL+=($!)
	wait_line "$T/$node/log" 'serving http://127.0.0.1:' $!
done
for _ in $(seq 600); do
	curl -fsS "http://127.0.0.1:${PORT[lost]}/metrics" | grep -q '^gpuwhy_gpu_lost{gpu="0"} 1$' && break
	sleep 0.2
done
curl -fsS "http://127.0.0.1:${PORT[lost]}/metrics" | grep -q '^gpuwhy_gpu_lost{gpu="0"} 1$' ||
	fail "the H100 did not fall off the bus"
prom_start


# Until every target has 65 scrapes (the throttled GPU's thermal episode runs from its 30th
# to 60th second). At most 15 min.
q() { prom_q "$@"; }
# And until the thermal episode is in it (a slow start may have missed the first one).
hot='max_over_time(gpuwhy_gpu_throttle_reason{reason="hw_thermal_slowdown"}[10m]) == 1'
for _ in $(seq 900); do
	read -r nt least < <(q 'count_over_time(up[10m])')
	read -r nh _ < <(q "$hot")
	[ "${nt:-0}" = 4 ] && [ "${nh:-0}" = 1 ] && awk -v a="$least" 'BEGIN{exit !(a >= 65)}' && break
	sleep 1
done
read -r nh _ < <(q "$hot")
assert_eq "$nh" 1 "thermal slowdown seen by Prometheus"
read -r nt least < <(q 'count_over_time(up[10m])')
assert_eq "$nt" 4 "targets scraped"
assert_ge "$least" 65 "scrapes of the least scraped target"
# The exporters' own diagnosis, every raw sample up to TQ: fleet reads up to the same TQ, so
# both see the same samples (a finding that rose in the last second is in both or neither).
TQ=$(date +%s)
curl -fsS --data-urlencode 'query=max_over_time(gpuwhy_finding[10m])' --data-urlencode "time=$TQ" \
	"$URL/api/v1/query" >"$T/own.json"

"$GPUWHY" fleet --prometheus "$URL" --from "$START" --to "$TQ" --step 1s --format json \
	-o "$T/fleet.json" 2>"$T/fleet.err"
rc=$?
[ "$rc" = 1 ] || fail "fleet exit $rc, expected 1 (findings): $(cat "$T/fleet.err")"
python3 - "$T/fleet.json" "$T/own.json" "$URL" "$(for n in "${!PORT[@]}"; do echo "$n=${PORT[$n]}"; done)" \
	<<'PY' || fail "fleet on the live nodes"
import json, sys, urllib.parse, urllib.request
d = json.load(open(sys.argv[1])); own = json.load(open(sys.argv[2]))["data"]["result"]
node_of = {"127.0.0.1:" + p: n for n, p in (x.split("=") for x in sys.argv[4].split())}
def bad(msg):
    sys.exit("FAIL: %s\nfleet: %s\nexporters: %s" % (msg, json.dumps(d["findings"], indent=1),
             sorted((s["metric"].get("instance"), s["metric"]["rule"]) for s in own)))
found = {}
for f in d["findings"]:
    found.setdefault(f["node"], []).append(f)
nodes = sorted(g["name"] for g in d["groups"])
if nodes != ["busy", "lost", "memory", "throttled"]: bad("nodes %s" % nodes)
def has(node, rule, gpu):
    for f in found.get(node, []):
        if f["rule"] == rule and gpu in f["gpus"]:
            return f
    bad("no %s on %s GPU %s" % (rule, node, gpu))
# the RTX 4090's clocks held by its thermal slowdown: the DCGM mask is not exported by
# default, gpuwhy exporter's per-reason series are, and the finding cites them
f = has("throttled", "throttled", 0)
if not f["promql"].startswith('gpuwhy_gpu_throttle_reason{instance="127.0.0.1:'): bad("PromQL %s" % f["promql"])
q = urllib.parse.urlencode({"query": f["promql"], "start": f["from_epoch"], "end": f["to_epoch"], "step": f["step"]})
r = json.load(urllib.request.urlopen(sys.argv[3] + "/api/v1/query_range?" + q, timeout=30))["data"]["result"]
held = {s["metric"]["reason"] for s in r if any(v == "1" for _, v in s["values"])}
if not {"sw_thermal_slowdown", "hw_thermal_slowdown"} <= held: bad("the cited PromQL: %s" % held)
# the H100 that fell off the bus, which Prometheus saw only after its fall
has("lost", "gpu-fault", 0)
# the L4 whose 9 GiB are held by a process of another host while it idles (which process,
# only the exporter itself sees: it says contention)
has("memory", "low-utilization", 1)
for f in found.get("busy", []):
    if f["severity"] in ("warn", "error"): bad("%s on the healthy node" % f["rule"])
for node in ("throttled", "memory"):
    for f in found.get(node, []):
        if f["rule"] == "gpu-fault": bad("gpu-fault on %s" % node)
# what the exporters found themselves, each on its node: all Prometheus held before fleet ran,
# and each node's problem as the exporter names it
theirs = {(f["node"], f["gpu"], f["rule"], f["severity"]) for f in d["exporter_findings"]}
for s in own:
    m = s["metric"]
    k = (node_of[m["instance"]], int(m["gpu"]), m["rule"], m["severity"])
    if k not in theirs: bad("exporter's finding %s not listed: %s" % (k, sorted(theirs)))
for node, gpu, rule in (("throttled", 0, "throttled"), ("lost", 0, "gpu_lost"), ("memory", 1, "contention")):
    if not any(k[:3] == (node, gpu, rule) for k in theirs): bad("exporter's %s on %s not listed" % (rule, node))
for f in d["exporter_findings"]:
    if f["node"] == "busy" and f["severity"] in ("warn", "error") and f["rule"] != "host_contention":
        bad("exporter's %s on the healthy node" % f["rule"])
    if not (d["from"] <= f["from_epoch"] <= f["to_epoch"] <= d["to"]) or f["samples"] < 1: bad("exporter's %s" % f)
hours = {g["name"]: g["hours"] for g in d["groups"]}
if hours["throttled"]["throttled"] <= 0: bad("no throttled hours on the throttled node")
if hours["lost"]["lost"] <= 0: bad("no lost hours on the lost node")
if hours["memory"]["idle-holding-memory"] <= 0: bad("memory node %s" % hours["memory"])
if hours["busy"]["busy"] <= 0 or hours["busy"]["throttled"] + hours["busy"]["lost"] > 0: bad("busy node %s" % hours["busy"])
PY
"$GPUWHY" fleet --prometheus "$URL" --from "$START" --to "$(date +%s)" --step 1s >"$T/fleet.txt"
grep -q '^Found by gpuwhy exporter itself (gpuwhy_finding):$' "$T/fleet.txt" &&
	grep -q '^  lost GPU 0: gpu_lost \[error\] ' "$T/fleet.txt" ||
	fail "text: the exporters' own findings: $(cat "$T/fleet.txt")"
echo "ok: fleet_live"
