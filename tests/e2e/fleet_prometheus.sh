#!/usr/bin/env bash
# `gpuwhy fleet` against a real Prometheus on loopback: a simulated cluster
# (4 nodes x 8 GPUs x 6 h at 30 s, problems planted by
# tests/fixtures/fleet_plant.json) written by `gpuwhy sim fleet`, loaded with
# promtool, then read back through the HTTP API. Every planted problem must
# be found on its node, GPUs, job and hours, nothing on the healthy GPUs, and
# the PromQL a finding cites must return its evidence. Then the failures:
# nothing listening, a matcher matching nothing, a 5xx, a server that hangs.
. "$(dirname "$0")/lib.bash"
command -v prometheus >/dev/null || skip "prometheus missing (scripts/install-deps --extra)"
command -v promtool >/dev/null || skip "promtool missing (scripts/install-deps --extra)"
command -v python3 >/dev/null || skip "python3 missing"
command -v curl >/dev/null || skip "curl missing"
SRC=${GPUWHY_SRC:-$(dirname "$0")/../..}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Six hours ending about now (Prometheus drops blocks beyond its retention).
STEP=30
START=$((($(date +%s) - 6 * 3600) / STEP * STEP))
END=$((START + 6 * 3600))
"$GPUWHY" sim fleet --nodes 4 --gpus-per-node 8 --hours 6 --step ${STEP}s --start $START \
	--plant "$SRC/tests/fixtures/fleet_plant.json" -o "$T/fleet.om" || fail "sim fleet"
[ "$(tail -1 "$T/fleet.om")" = "# EOF" ] || fail "no # EOF at the end"
promtool tsdb create-blocks-from openmetrics "$T/fleet.om" "$T/data" >"$T/promtool.log" 2>&1 ||
	fail "promtool: $(tail -3 "$T/promtool.log")"
PORT=$(free_port)
prometheus --config.file=/dev/null --storage.tsdb.path="$T/data" \
	--web.listen-address="127.0.0.1:$PORT" >"$T/prom.log" 2>&1 &
PIDS_TO_KILL+=($!)
URL=http://127.0.0.1:$PORT
for _ in $(seq 300); do curl -fsS -o /dev/null "$URL/-/ready" 2>/dev/null && break; sleep 0.2; done
curl -fsS -o /dev/null "$URL/-/ready" || fail "prometheus did not start: $(tail -3 "$T/prom.log")"

"$GPUWHY" fleet --prometheus "$URL" --from $START --to $END --step ${STEP}s --format json \
	-o "$T/fleet.json"
rc=$?
[ "$rc" = 1 ] || fail "fleet exit $rc, expected 1 (findings)"
"$GPUWHY" fleet --prometheus "$URL" --from $START --to $END --step ${STEP}s --by job --format json \
	-o "$T/byjob.json"
"$GPUWHY" fleet --prometheus "$URL" --from $START --to $END --step ${STEP}s >"$T/fleet.txt"
# Kubernetes: dcgm-exporter's namespace and pod labels (node01's job runs in pod ml/train-a-0).
for by in namespace pod; do
	"$GPUWHY" fleet --prometheus "$URL" --from $START --to $END --step ${STEP}s --by $by \
		--format json -o "$T/by$by.json"
done
python3 - "$T/bynamespace.json" "$T/bypod.json" <<'PY' || fail "fleet --by namespace|pod"
import json, sys
for path, by, name, other in ((sys.argv[1], "namespace", "ml", "(no namespace)"),
                              (sys.argv[2], "pod", "ml/train-a-0", "(no pod)")):
    d = json.load(open(path))
    g = {x["name"]: x["hours"] for x in d["groups"]}
    if d["by"] != by or sorted(g) != sorted([name, other]):
        sys.exit("FAIL: --by %s: %s groups %s" % (by, d["by"], sorted(g)))
    # node01's 8 GPUs over 6 h, idle (holding memory) while data-starved
    tot = lambda h: sum(v for k, v in h.items() if k not in ("not-busy",))
    if abs(tot(g[name]) - 48) > 0.1 or g[name]["idle-holding-memory"] < 5:
        sys.exit("FAIL: --by %s: %s %s" % (by, name, g[name]))
    if abs(tot(g[other]) + tot(g[name]) - tot(d["hours"])) > 0.01:
        sys.exit("FAIL: --by %s: groups do not add up to the fleet" % by)
PY
grep -q 'PromQL: DCGM_FI_DEV_CLOCK_THROTTLE_REASONS{Hostname="node02",gpu="3"}' "$T/fleet.txt" ||
	fail "text report lacks the throttled finding's PromQL: $(cat "$T/fleet.txt")"

python3 - "$T/fleet.json" "$T/byjob.json" "$START" "$URL" <<'PY' || fail "fleet report"
import json, sys, urllib.parse, urllib.request
d = json.load(open(sys.argv[1])); bj = json.load(open(sys.argv[2]))
start, url = float(sys.argv[3]), sys.argv[4]
H = 3600.0
def bad(msg): sys.exit("FAIL: " + msg + "\n" + json.dumps(d["findings"], indent=1))
found = {(f["node"], tuple(f["gpus"]), f["rule"]): f for f in d["findings"]}
# planted: node, GPUs, rule, job, from/to in hours after the start
# (node01's node_exporter shows its data loader's core saturated: data-starved, not only low)
want = [("node01", tuple(range(8)), "data-starved", "train-a", 2, 4),
        ("node02", (3,), "throttled", None, 1, 3),
        ("node02", (6,), "throttled", None, 3, 5),
        ("node03", (5,), "gpu-fault", None, 3, 6),
        ("node03", (1,), "memory-full-compute-idle", "notebook-bob", 1, 6),
        ("node04", tuple(range(8)), "sync-wait", "llm-8gpu", 0, 3),
        ("node04", tuple(range(8)), "gpu-idle", "reserved-x", 3, 6)]
for node, gpus, rule, job, a, b in want:
    f = found.get((node, gpus, rule))
    if not f: bad("no %s on %s GPUs %s" % (rule, node, gpus))
    if f["job"] != job: bad("%s on %s: job %s, expected %s" % (rule, node, f["job"], job))
    if abs(f["from_epoch"] - (start + a * H)) > 1 or abs(f["to_epoch"] - (start + b * H)) > 1:
        bad("%s on %s: %s .. %s, expected hours %d .. %d" % (rule, node, f["from"], f["to"], a, b))
# nothing else: node01 only in its starved hours, node02 only GPUs 3 and 6,
# node03 only GPUs 1 and 5 (oom-risk beside the full memory is true and allowed)
for f in d["findings"]:
    k = (f["node"], tuple(f["gpus"]), f["rule"])
    if k in found and any(k == (w[0], w[1], w[2]) for w in want): continue
    if k == ("node03", (1,), "oom-risk"): continue
    bad("unexpected finding %s" % (k,))
# GPU-hours by state, per GPU
def hours(groups, name):
    for g in groups:
        if g["name"] == name: return g["hours"]
    bad("no group " + name)
total = d["hours"]
if abs(total["throttled"] - 2) > 0.05 or abs(total["power-capped"] - 2) > 0.05: bad("throttled/capped hours %s" % total)
if not 2.8 <= total["lost"] <= 3.05: bad("lost hours %s" % total["lost"])
if abs(total["idle-empty"] - 24) > 0.1: bad("idle-empty hours %s" % total["idle-empty"])
if abs(hours(bj["groups"], "reserved-x")["idle-empty"] - 24) > 0.1: bad("by job: reserved-x")
if abs(hours(bj["groups"], "notebook-bob")["idle-holding-memory"] - 5) > 0.1: bad("by job: notebook-bob")
# the worst node first
if d["groups"][0]["name"] != "node04": bad("worst node %s" % d["groups"][0]["name"])
# the cited PromQL over the cited range returns the evidence
f = found[("node02", (3,), "throttled")]
q = urllib.parse.urlencode({"query": f["promql"], "start": f["from_epoch"], "end": f["to_epoch"], "step": f["step"]})
r = json.load(urllib.request.urlopen(url + "/api/v1/query_range?" + q, timeout=30))
vals = [float(v) for s in r["data"]["result"] for _, v in s["values"]]
# (the range's last point is the next window's first)
if len(r["data"]["result"]) != 1 or len(vals) < 200 or min(vals[:-1]) < 32: bad("the cited PromQL: %s" % r)
# the power-capped GPU: its draw against the limit someone lowered to 350 W, and a PromQL of
# the two that gives their ratio; the thermal one has no power figures
if not d["queries"]["DCGM_FI_DEV_POWER_MGMT_LIMIT"]["present"]: bad("no power limit series")
f = found[("node02", (6,), "throttled")]
if f.get("power_limit_w") != 350 or not 340 <= f.get("power_w", 0) <= 352: bad("power-capped: %s" % f)
if "power_w" in found[("node02", (3,), "throttled")]: bad("thermal finding with power figures")
if f["promql"] != 'DCGM_FI_DEV_POWER_USAGE{Hostname="node02",gpu="6"} / DCGM_FI_DEV_POWER_MGMT_LIMIT{Hostname="node02",gpu="6"}': bad("power PromQL %s" % f["promql"])
q = urllib.parse.urlencode({"query": f["promql"], "start": f["from_epoch"], "end": f["to_epoch"] - f["step"], "step": f["step"]})
r = json.load(urllib.request.urlopen(url + "/api/v1/query_range?" + q, timeout=30))
vals = [float(v) for s in r["data"]["result"] for _, v in s["values"]]
if len(r["data"]["result"]) != 1 or len(vals) < 200 or not all(0.97 <= v <= 1.01 for v in vals): bad("power/limit PromQL: %s" % r)
PY
grep -q 'power 3[45][0-9] W against its 350 W limit' "$T/fleet.txt" || fail "text: no power against the limit"

# HTML and CSV of the same range say what the JSON says; the lost GPU (node03 GPU 5, row
# 2 * 8 + 5) is lost in the heat map from the column holding hour 3 to the end, and no
# other GPU is.
"$GPUWHY" fleet --prometheus "$URL" --from $START --to $END --step ${STEP}s --format html \
	-o "$T/fleet.html"
rc=$?
[ "$rc" = 1 ] || fail "fleet --format html exit $rc, expected 1"
"$GPUWHY" fleet --prometheus "$URL" --from $START --to $END --step ${STEP}s --format csv \
	>"$T/fleet.csv" || [ $? = 1 ] || fail "fleet --format csv"
"$GPUWHY" fleet --prometheus "$URL" --from $START --to $END --step ${STEP}s --csv findings \
	>"$T/findings.csv" || [ $? = 1 ] || fail "fleet --csv findings"
python3 - "$T/fleet.json" "$T/fleet.html" "$T/fleet.csv" "$STEP" "$T/findings.csv" <<'PY' || fail "html/csv report"
import csv, json, re, sys
d = json.load(open(sys.argv[1])); html = open(sys.argv[2]).read(); step = float(sys.argv[4])
def bad(msg): sys.exit("FAIL: " + msg)
if not html.startswith("<!DOCTYPE html>") or not html.rstrip().endswith("</html>"): bad("not a page")
for ext in ("http:", "https:", "<script", "url(", "@import", " src=", " href="):
    if ext in html: bad("external reference " + ext)
m = re.search(r'data-cols="(\d+)" data-rows="(\d+)" data-per="(\d+)"', html)
if not m: bad("no heat map")
cols, rows, per = map(int, m.groups())
n = int(round((d["to"] - d["from"]) / step)) + 1
if rows != 32 or cols > 288 or cols != -(-n // per): bad("heat map %d x %d per %d, %d samples" % (rows, cols, per, n))
runs = {}
for st, dd in re.findall(r'<path class="s-([a-z-]+)" stroke="[^"]+" d="([^"]+)"', html):
    for c, r, l in re.findall(r"M(\d+) (\d+)\.5h(\d+)", dd):
        runs.setdefault((st, int(r)), []).append((int(c), int(c) + int(l)))
for r in range(rows):
    if sum(b - a for (st, rr), v in runs.items() if rr == r for a, b in v) != cols: bad("row %d not covered" % r)
lost = {r: v for (st, r), v in runs.items() if st == "lost"}
at = int(3 * 3600 / step) // per
if list(lost) != [21] or len(lost[21]) != 1 or abs(lost[21][0][0] - at) > 1 or lost[21][0][1] != cols:
    bad("lost cells %s, expected row 21 from column %d" % (lost, at))
if html.count('<tr class="f-') != len(d["findings"]): bad("findings rows")
for f in d["findings"]:
    promql = f["promql"].replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
    if promql not in html: bad("PromQL %s not on the page" % f["promql"])
rows = list(csv.reader(open(sys.argv[3], newline="")))
if rows[0] != ["group_by", "group", "state", "gpu_hours", "share"]: bad("csv header %s" % rows[0])
if len(rows) != 1 + 7 * (1 + len(d["groups"])): bad("csv rows %d" % len(rows))
for by, g, st, h, share in rows[1:]:
    want = d["hours"] if by == "fleet" else next(x["hours"] for x in d["groups"] if x["name"] == g)
    if abs(float(h) - want[st]) > 0.001: bad("csv %s %s %s: %s, json %s" % (by, g, st, h, want[st]))
# the findings table: one row per finding, in the JSON's order, each field as the JSON has it
rows = list(csv.DictReader(open(sys.argv[5], newline="")))
if len(rows) != len(d["findings"]) or not rows: bad("findings csv rows %d" % len(rows))
for i, (r, f) in enumerate(zip(rows, d["findings"])):
    got = (int(r["rank"]), r["node"], [int(g) for g in r["gpus"].split(";")], r["job"] or None,
           r["rule"], float(r["from_epoch"]), float(r["to_epoch"]), r["promql"], r["title"])
    if got != (i + 1, f["node"], f["gpus"], f["job"], f["rule"], f["from_epoch"], f["to_epoch"], f["promql"], f["title"]):
        bad("findings csv row %d: %s, json %s" % (i, got, f))
    if abs(float(r["gpu_hours_lost"]) - f["gpu_hours_lost"]) > 0.001: bad("findings csv hours %s" % r)
    if (r["power_limit_w"] != "") != ("power_limit_w" in f): bad("findings csv power %s" % r)
    if [r["host_promql_%d" % k] for k in (1, 2, 3) if r["host_promql_%d" % k]] != f["host_promql"]:
        bad("findings csv host PromQL %s" % r)
PY

# A matcher that matches nothing: one line, exit 3.
out=$("$GPUWHY" fleet --prometheus "$URL" --from $START --to $END --step 60s \
	--match '{Hostname="no-such-node"}' 2>&1)
rc=$?
assert_eq "$rc" 3 "no series: exit"
assert_eq "$(printf '%s\n' "$out" | wc -l)" 1 "no series: lines"
assert_contains "$out" 'no series' "no series"
# Nothing listening.
DEAD=$(free_port)
out=$("$GPUWHY" fleet --prometheus "http://127.0.0.1:$DEAD" --since 1h --retries 1 2>&1)
rc=$?
assert_eq "$rc" 3 "unreachable: exit"
assert_eq "$(printf '%s\n' "$out" | wc -l)" 1 "unreachable: lines"
assert_contains "$out" "^gpuwhy: http://127.0.0.1:$DEAD" "unreachable"
# A 5xx with Prometheus's error body, and a server that never answers.
cat >"$T/fake_prom.py" <<'PY'
import http.server, sys, time
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        if sys.argv[2] == "hang":
            time.sleep(30)
        body = b'{"status":"error","errorType":"internal","error":"tsdb on fire"}'
        self.send_response(503); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H)
s.serve_forever()
PY
for mode in 5xx hang; do
	P=$(free_port)
	python3 "$T/fake_prom.py" "$P" $mode &
	PIDS_TO_KILL+=($!)
	for _ in $(seq 100); do python3 -c "import socket; socket.create_connection(('127.0.0.1', $P))" 2>/dev/null && break; sleep 0.1; done
	out=$("$GPUWHY" fleet --prometheus "http://127.0.0.1:$P" --since 1h --timeout 2s --retries 1 2>&1)
	rc=$?
	assert_eq "$rc" 3 "$mode: exit"
	assert_eq "$(printf '%s\n' "$out" | wc -l)" 1 "$mode: lines"
	[ $mode = 5xx ] && assert_contains "$out" 'HTTP 503: internal: tsdb on fire' "5xx"
	[ $mode = hang ] && assert_contains "$out" 'timed out' "hang"
done
echo "ok: fleet"
