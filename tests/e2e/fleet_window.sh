#!/usr/bin/env bash
# `gpuwhy report` and `gpuwhy compare` on windows of a real Prometheus on
# loopback (fleet_prom_lib.bash: a simulated cluster with planted problems):
# a throttled GPU's window and a job's window (found by its hpc_job label)
# give the report of a recording, with what Prometheus lacks absent; a
# compare of a node's healthy hours with its data-starved hours says what
# changed; bad combinations of options are one usage line (exit 2).
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/fleet_prom_lib.bash"
fleet_prom_up
H=3600

# node02 GPU 3 ran hot in hours 1..3 (thermal plant): throttled, on that GPU, at that time.
"$GPUWHY" report --prometheus "$URL" --node node02 --gpu 3 --from $START --to $END \
	--format json -o "$T/gpu.json" 2>"$T/err" || fail "report exit $?: $(cat "$T/err")"
"$GPUWHY" report --prometheus "$URL" --node node02 --gpu 3 --from $START --to $END >"$T/gpu.txt" ||
	fail "report text"
assert_contains "$(head -1 "$T/gpu.txt")" "node02 GPU 3 (Prometheus $URL)" "text header"
assert_contains "$(cat "$T/gpu.txt")" "driver n/a" "text: the driver is not in Prometheus"
"$GPUWHY" report --prometheus "$URL" --node node02 --gpu 3 --since 6h --format html \
	-o "$T/gpu.html" 2>/dev/null || fail "report html"
grep -q '<svg' "$T/gpu.html" || fail "html report has no chart"
grep -q 'node02 GPU 3' "$T/gpu.html" || fail "html report does not say which window"

# node01 starved in hours 2..4 while node_exporter saw a core saturated: data-starved cites it.
"$GPUWHY" report --prometheus "$URL" --node node01 --from $((START + 2 * H)) --to $((START + 4 * H)) \
	--format json -o "$T/starved.json" 2>"$T/err" || [ $? = 1 ] || fail "starved report: $(cat "$T/err")"

# notebook-bob held node03 GPU 1's memory idle in hours 1..6: its window from its label alone.
"$GPUWHY" report --prometheus "$URL" --job notebook-bob --format json -o "$T/job.json" \
	2>"$T/err" || fail "job report exit $?: $(cat "$T/err")"

python3 - "$T/gpu.json" "$T/job.json" "$START" "$T/starved.json" <<'PY' || fail "reports"
import json, sys
g = json.load(open(sys.argv[1])); j = json.load(open(sys.argv[2])); start = float(sys.argv[3])
st = json.load(open(sys.argv[4]))
H = 3600.0
def bad(msg, d): sys.exit("FAIL: " + msg + "\n" + json.dumps(d["findings"], indent=1)[:3000])
ids = {f["id"]: f for f in g["findings"]}
if [x["index"] for x in g["gpus"]] != [3]: bad("gpu: GPUs %s" % [x["index"] for x in g["gpus"]], g)
if g["recording"]["hostname"] != "node02" or g["recording"]["driver"] is not None: bad("gpu: recording %s" % g["recording"], g)
if g["recording"]["start_wall"] != start: bad("gpu: starts at %s" % g["recording"]["start_wall"], g)
t = ids.get("throttled")
if not t or t["gpus"] != [3]: bad("gpu: no throttled finding on GPU 3", g)
r = t["ranges"][0]
if abs(r["from_wall"] - (start + H)) > 120 or abs(r["to_wall"] - (start + 3 * H)) > 120: bad("gpu: throttled at %s" % r, g)
f = {f["id"]: f for f in st["findings"]}.get("data-starved")
if not f or f["gpus"] != list(range(8)): bad("node01: no data-starved on its 8 GPUs", st)
core = [e for e in f["evidence"] if e["metric"] == "cpu.busy.max"]
if not core or core[0]["value"] < 90: bad("node01: data-starved cites no busy core", st)
# node02 has no node_exporter: its host stays absent, nothing cites it
if "cpu.busy" in json.dumps(g["findings"]): bad("gpu: a host value without node_exporter", g)
# only GPU counters: the host rules say not checked, none of them fires
if "not-checked" not in ids: bad("gpu: no not-checked", g)
for rule in ("data-starved", "host-contention", "host-swap", "low-utilization", "gpu-idle"):
    if rule in ids: bad("gpu: %s found without its inputs or on a busy GPU" % rule, g)
if j["recording"]["hostname"] != "node03": bad("job: host %s" % j["recording"]["hostname"], j)
ids = {f["id"]: f for f in j["findings"]}
m = ids.get("memory-full-compute-idle")
if not m or m["gpus"] != [1]: bad("job: no memory-full-compute-idle on GPU 1", j)
# the job's window is its hours 1..6 (Prometheus keeps a series 5 min after its last sample)
w0 = j["recording"]["start_wall"]; w1 = w0 + j["recording"]["duration_s"]
if abs(w0 - (start + H)) > 60 or not start + 6 * H - 60 <= w1 <= start + 6 * H + 360: bad("job window %s .. %s" % (w0, w1), j)
PY

# node01's job was busy in hours 0..2 and data-starved in 2..4: compare says so.
"$GPUWHY" compare --prometheus "$URL" "node=node01,from=$START,to=$((START + 2 * H))" \
	"node=node01,from=$((START + 2 * H)),to=$((START + 4 * H)),step=60s" --format json \
	>"$T/cmp.json" 2>"$T/err" || fail "compare exit $?: $(cat "$T/err")"
# node02's GPU 0 was busy and healthy all along: two of its windows are the same.
"$GPUWHY" compare --prometheus "$URL" "node=node02,gpu=0,from=$START,to=$((START + 2 * H))" \
	"node=node02,gpu=0,from=$((START + 4 * H)),to=$((START + 6 * H))" --format json \
	>"$T/cmpsame.json" 2>"$T/err" || fail "compare same exit $?: $(cat "$T/err")"
"$GPUWHY" compare --prometheus "$URL" "node=node01,from=$START,to=$((START + 2 * H))" \
	"node=node01,from=$((START + 2 * H)),to=$((START + 4 * H)),step=60s" >"$T/cmp.txt" ||
	fail "compare text"
assert_contains "$(cat "$T/cmp.txt")" "GPU busy share: the candidate's GPUs were LESS BUSY" "compare text: busy share"
"$GPUWHY" compare --prometheus "$URL" --job notebook-bob --job train-a --format json \
	>"$T/cmpjob.json" 2>"$T/err" || fail "compare --job exit $?: $(cat "$T/err")"
"$GPUWHY" compare --prometheus "$URL" --job notebook-bob --job train-a >"$T/cmpjob.txt" ||
	fail "compare --job text"
assert_contains "$(head -1 "$T/cmpjob.txt")" "job=notebook-bob -> job=train-a" "compare header"
python3 - "$T/cmp.json" "$T/cmpjob.json" "$T/cmpsame.json" <<'PY' || fail "compare"
import json, sys
c = json.load(open(sys.argv[1])); cj = json.load(open(sys.argv[2])); cs = json.load(open(sys.argv[3]))
def bad(msg, d): sys.exit("FAIL: " + msg + "\n" + json.dumps({k: d[k] for k in ("base_run", "candidate_run", "findings_gone", "findings_new")}, indent=1))
b, k = c["base_run"], c["candidate_run"]
if not (b["util_mean"] > 90 and k["util_mean"] < 50): bad("utilization %s -> %s" % (b["util_mean"], k["util_mean"]), c)
if b["job_gpus"] != 8 or k["job_gpus"] != 8: bad("GPUs", c)
if "data-starved" not in json.dumps(c["findings_new"]): bad("the starved hours' finding is not new", c)
if c["findings_gone"]: bad("findings gone from the healthy hours", c)
# two windows of equal length: their length is no run time, so no speed claim
if c["verdict"] != "not-compared" or cj["verdict"] != "not-compared": bad("verdict %s" % c["verdict"], c)
if "memory-full-compute-idle" not in json.dumps(cj["findings_gone"]): bad("--job: the notebook's finding did not go", cj)
# ... but how busy the GPUs were is compared, with an interval over blocks of samples
def busy(d, verdict, lo, hi):
    b = d["busy_share"]
    if not b or b["verdict"] != verdict or not lo <= b["diff_points"] <= hi or \
       not b["ci95_lo"] <= b["diff_points"] <= b["ci95_hi"] or b["judged_by"] != "busy-share-block-bootstrap-ci95":
        sys.exit("FAIL: busy share %s, expected %s in %s .. %s" % (json.dumps(b), verdict, lo, hi))
    return b
b = busy(c, "less-busy", -90, -40)
# node01's 8 GPUs, 2 h each side; the starved hours lost most of theirs
if abs(b["base"]["gpu_hours"] - 16) > 0.3 or b["candidate"]["not_busy_gpu_hours"] < 6: sys.exit("FAIL: GPU-hours %s" % b)
if b["candidate"]["block"] < 2: sys.exit("FAIL: the starved hours' sawtooth is no independent samples: %s" % b)
# the GPU-hours under each finding: data-starved only in the starved hours, most of their 16
fh = {x["rule"]: (x["base"], x["candidate"]) for x in b["findings_gpu_hours"]}
if fh.get("data-starved", (1, 0))[0] != 0 or not 8 <= fh["data-starved"][1] <= 16.2: sys.exit("FAIL: findings' GPU-hours %s" % fh)
busy(cs, "same-busy-share", -2, 2)
if cs["verdict"] != "not-compared": sys.exit("FAIL: same windows: verdict %s" % cs["verdict"])
b = busy(cj, "busier", 40, 100)
fh = {x["rule"]: (x["base"], x["candidate"]) for x in b["findings_gpu_hours"]}
if abs(fh.get("memory-full-compute-idle", (0, 1))[0] - 5) > 0.1 or fh["memory-full-compute-idle"][1] != 0: sys.exit("FAIL: --job findings' GPU-hours %s" % fh)
if cj["base"] != "job=notebook-bob" or cj["candidate"] != "job=train-a": bad("--job: sides %s %s" % (cj["base"], cj["candidate"]), cj)
PY

# Bad combinations: one usage line, exit 2, before anything is asked.
usage() {
	local out rc
	out=$("$GPUWHY" "$@" 2>&1)
	rc=$?
	assert_eq "$rc" 2 "$* exit"
	assert_eq "$(printf '%s\n' "$out" | wc -l)" 1 "$* lines"
	assert_contains "$out" "^gpuwhy: " "$*"
}
usage report --node node01 --since 1h
usage report --prometheus "$URL" --node node01 --job x --since 1h
usage report --prometheus "$URL" --gpu 1 --job x
usage report --prometheus "$URL" --node node01
usage report --prometheus "$URL" --job x --from $START --since 1h
usage report --prometheus "$URL" run.gpuwhy --node node01 --since 1h
usage compare --prometheus "$URL" --job 1
usage compare --prometheus "$URL" --job 1 --job 2 job=3
usage compare job=1 job=2
usage compare --prometheus "$URL" node=node01,colour=red job=2
usage compare --prometheus "$URL" job=1 node=node01
# A window with no series: one line, exit 3.
out=$("$GPUWHY" report --prometheus "$URL" --node no-such-node --since 1h 2>&1)
assert_eq "$?" 3 "no such node: exit"
assert_eq "$(printf '%s\n' "$out" | wc -l)" 1 "no such node: lines"
assert_contains "$out" "no-such-node: no GPU series" "no such node"
echo "ok: fleet windows"
