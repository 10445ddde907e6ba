#!/usr/bin/env bash
# `gpuwhy fleet` reads node_exporter's disk and pressure series beside its CPU
# series (a real Prometheus on loopback, tests/fixtures/fleet_plant_io.json):
# node02's GPUs starve while its disk is saturated and its tasks stall on I/O,
# so its data-starved finding says storage and cites the disk's and the
# pressure's PromQL for node02 alone; node01's GPUs starve on a saturated core
# while a loop device and a device-mapper volume read 100 % busy, which must
# not be taken for a busy disk; node03 is healthy with a node_exporter and gets
# nothing; node04 has none, and the report says which series were not there
# only when no node has them.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/fleet_prom_lib.bash"
PLANT="$SRC/tests/fixtures/fleet_plant_io.json"
fleet_prom_up
"$GPUWHY" fleet --prometheus "$URL" --from $START --to $END --step ${STEP}s --format json \
	-o "$T/fleet.json"
rc=$?
[ "$rc" = 1 ] || fail "fleet exit $rc, expected 1 (findings)"
"$GPUWHY" fleet --prometheus "$URL" --from $START --to $END --step ${STEP}s >"$T/fleet.txt"
grep -q 'PromQL (node_exporter): max by (instance) (rate(node_disk_io_time_seconds_total{.*instance=~"node02(:\[0-9\]+)?"}' \
	"$T/fleet.txt" || fail "text: node02's finding cites no disk PromQL: $(cat "$T/fleet.txt")"
python3 - "$T/fleet.json" "$START" "$URL" <<'PY' || fail "fleet host I/O"
import json, sys, urllib.parse, urllib.request
d = json.load(open(sys.argv[1])); start, url = float(sys.argv[2]), sys.argv[3]
H = 3600.0
def bad(msg): sys.exit("FAIL: " + msg + "\n" + json.dumps(d["findings"], indent=1))
q = d["queries"]
for name in ("node_cpu_seconds_total", "node_disk_io_time_seconds_total",
             "node_pressure_io_waiting_seconds_total", "node_pressure_io_stalled_seconds_total",
             "node_pressure_cpu_waiting_seconds_total", "node_pressure_memory_waiting_seconds_total"):
    if not q.get(name, {}).get("present"): bad("%s not read: %s" % (name, q.get(name)))
found = {f["node"]: f for f in d["findings"]}
if sorted(found) != ["node01", "node02"] or len(d["findings"]) != 2: bad("findings on %s" % sorted(found))
io, cpu = found["node02"], found["node01"]
for f, a, b in ((io, 2, 4), (cpu, 1, 3)):
    if f["rule"] != "data-starved" or f["gpus"] != list(range(8)): bad("%s: %s on %s" % (f["node"], f["rule"], f["gpus"]))
    if abs(f["from_epoch"] - (start + a * H)) > 1 or abs(f["to_epoch"] - (start + b * H)) > 1:
        bad("%s: %s .. %s, expected hours %d .. %d" % (f["node"], f["from"], f["to"], a, b))
# storage on node02: iowait, the disk and I/O pressure held, each with its query
for key in ("cpu.iowait", "disk.busy.max", "psi.io.some"):
    if key not in io["host_held"]: bad("node02: %s did not hold: %s" % (key, io["host_held"]))
if "disk is 97 % busy" not in io["title"]: bad("node02 title: " + io["title"])
# a saturated core on node01; its loop device and dm volume are no busy disk
if cpu["host_held"] != ["cpu.busy.max"]: bad("node01 held %s" % cpu["host_held"])
if "disk" in cpu["title"] or "I/O" in cpu["title"]: bad("node01 title: " + cpu["title"])
disk = [p for p in io["host_promql"] if "node_disk_io_time_seconds_total" in p]
psi = [p for p in io["host_promql"] if "node_pressure_io_waiting_seconds_total" in p]
if not disk or not psi: bad("node02 cites %s" % io["host_promql"])
# the cited queries, over the finding's range, give node02's busy disk and its stalls only
for expr, lo, hi in ((disk[0], 0.95, 0.99), (psi[0], 0.6, 0.64)):
    qs = urllib.parse.urlencode({"query": expr, "start": io["from_epoch"] + 300,
                                 "end": io["to_epoch"] - 300, "step": io["step"]})
    r = json.load(urllib.request.urlopen(url + "/api/v1/query_range?" + qs, timeout=30))
    res = r["data"]["result"]
    vals = [float(v) for s in res for _, v in s["values"]]
    if len(res) != 1 or not res[0]["metric"]["instance"].startswith("node02:") or not vals or \
       not all(lo <= v <= hi for v in vals): bad("the cited %s: %s" % (expr, str(r)[:600]))
PY
# A fleet without node_exporter says which series were not there and what that leaves unchecked.
"$GPUWHY" fleet --prometheus "$URL" --from $START --to $END --step ${STEP}s \
	--match '{Hostname="node04"}' >"$T/n04.txt"
rc=$?
[ "$rc" = 0 ] || fail "node04 exit $rc: $(cat "$T/n04.txt")"
for s in node_cpu_seconds_total node_disk_io_time_seconds_total node_pressure_io_waiting_seconds_total; do
	grep -q "^  $s: " "$T/n04.txt" || fail "node04: $s not said absent: $(cat "$T/n04.txt")"
done
grep -q "^  node_disk_io_time_seconds_total: " "$T/fleet.txt" && fail "disk series said absent while read"
echo "ok: fleet host I/O"
