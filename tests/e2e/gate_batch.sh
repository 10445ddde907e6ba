#!/usr/bin/env bash
# Dynamic batching against sim serve: answers split back in order and
# equal to direct answers; many sparse clients are merged into batches
# (counted by the upstream and in /metrics) for more throughput at no
# worse latency; a batch failed with a 5xx fails each member with the upstream's
# status; streamed answers pass through chunk by chunk.
set -u
T=$(mktemp -d /tmp/gpuwhy-gate-batch.XXXXXX)
. "$(dirname "$0")/gate_lib.bash"

start_sim b --batch-ms 20 --item-ms 2
S="http://127.0.0.1:$SIM_PORT"
start_gate pass --upstream "$S@0" --user-concurrency 64
PASS="http://127.0.0.1:$GATE_PORT/v1/embeddings"
start_gate batch --upstream "$S@0" --user-concurrency 64 --max-inflight-per-upstream 2 \
	--goal throughput --batch /v1/embeddings
BATCH="http://127.0.0.1:$GATE_PORT/v1/embeddings"
BM=$METRICS_PORT

# Split in order: 16 concurrent requests of 1-3 inputs, each answer equal
# to the upstream's direct answer for the same body.
python3 - "$S/v1/embeddings" "$BATCH" <<'PY' || fail "batched answers differ from direct ones"
import json, sys, threading, urllib.request
direct, gate = sys.argv[1], sys.argv[2]
def post(url, body):
    req = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)
bodies = [{"model": "m", "input": ["in%d-%d" % (i, k) for k in range(1 + i % 3)]} for i in range(16)]
want = [post(direct, b) for b in bodies]
got = [None] * 16
def run(i):
    got[i] = post(gate, bodies[i])
th = [threading.Thread(target=run, args=(i,)) for i in range(16)]
[t.start() for t in th]; [t.join() for t in th]
for w, g in zip(want, got):
    assert [d["embedding"] for d in w["data"]] == [d["embedding"] for d in g["data"]], (w, g)
    assert [d["index"] for d in g["data"]] == list(range(len(w["data"]))), g
    assert g["model"] == "m"
# A single string input is a list of one.
assert len(post(gate, {"model": "m", "input": "one"})["data"]) == 1
PY
[ "$(metric "$BM" gpuwhy_gate_batches_total)" -ge 1 ] || fail "no merged batch for 16 concurrent requests"

stats() { curl -fsS "$S/stats" | jq_py "d['$1']"; }
# Pass-through: every request is one upstream batch.
b0=$(stats batches)
$LOAD "$PASS" --clients 64 --requests 3 --body '{"model":"m","input":["p{c}-{i}"]}' >"$T/pass.json"
b1=$(stats batches)
grep -q '"status": {"200": 192}' "$T/pass.json" || fail "pass-through: $(cat "$T/pass.json")"
[ $((b1 - b0)) = 192 ] || fail "pass-through sent $((b1 - b0)) batches for 192 requests"
# Batching: the same load in far fewer upstream batches.
$LOAD "$BATCH" --clients 64 --requests 3 --body '{"model":"m","input":["b{c}-{i}"]}' >"$T/batch.json"
b2=$(stats batches)
grep -q '"status": {"200": 192}' "$T/batch.json" || fail "batching: $(cat "$T/batch.json")"
nb=$((b2 - b1))
[ "$nb" -le 48 ] || fail "192 sparse requests went in $nb batches (expected at most 48)"
big=$(curl -fsS "http://127.0.0.1:$BM/metrics" | awk '$1 == "gpuwhy_gate_batch_size_bucket{le=\"8\"}" {a=$2} $1 == "gpuwhy_gate_batch_size_count" {c=$2} END {print c - a}')
[ "$big" -ge 1 ] || fail "no batch larger than 8 in the batch-size histogram"
python3 - "$T/pass.json" "$T/batch.json" <<'PY' || fail "batching gave no throughput gain"
import json, sys
p, b = (json.load(open(f)) for f in sys.argv[1:])
print("pass-through %.0f req/s p50 %.0f ms; batching %.0f req/s p50 %.0f ms" % (p["rps"], p["p50_ms"], b["rps"], b["p50_ms"]))
# Generous margins: the expected gain is about 8x (bench/gate.sh measures it).
sys.exit(0 if b["rps"] >= 2 * p["rps"] and b["p50_ms"] <= 2 * p["p50_ms"] else 1)
PY

# A batch failed with a 5xx (out of memory) fails every member with the upstream's status.
start_sim oom --batch-ms 5 --item-ms 1 --mem-mib 1280 --model-mib 1024 --item-mib 32
start_gate oom --upstream "http://127.0.0.1:$SIM_PORT@0" --user-concurrency 64 \
	--batch /v1/embeddings --max-batch 16 --preferred 16 --batch-delay 3s
$LOAD "http://127.0.0.1:$GATE_PORT/v1/embeddings" --clients 16 --requests 1 \
	--body '{"input":["o{c}"]}' >"$T/oom.json"
python3 - "$T/oom.json" "$T/access-oom.jsonl" <<'PY' || fail "failed batch: $(cat "$T/oom.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"].get("500", 0) >= 9, r
assert all("CUDA out of memory" in e for e in r["errors"]), r
batched = [json.loads(l) for l in open(sys.argv[2])]
assert any(x["status"] == 500 and x.get("batch_size", 0) > 8 for x in batched)
PY

# Streaming: server-sent events arrive one by one, not at the end. The
# upstream sleeps 150 ms before each event, so they leave it at least
# 750 ms apart in all; a buffering proxy would deliver them together.
start_sim slowstream --batch-ms 0 --item-ms 150
start_gate stream --upstream "http://127.0.0.1:$SIM_PORT@0" --batch /v1/embeddings
python3 - "http://127.0.0.1:$GATE_PORT/v1/completions" <<'PY' || fail "streaming was buffered"
import http.client, sys, time, urllib.parse
u = urllib.parse.urlsplit(sys.argv[1])
c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
c.request("POST", u.path, body='{"stream": true, "max_tokens": 6}', headers={"Content-Type": "application/json"})
r = c.getresponse()
assert r.status == 200 and r.getheader("Content-Type").startswith("text/event-stream")
times, events = [], []
while True:
    line = r.readline()
    if not line:
        break
    if line.startswith(b"data:"):
        times.append(time.monotonic()); events.append(line.strip())
assert events[:6] == [b'data: {"index":%d,"token":"tok%d"}' % (i, i) for i in range(6)], events
assert events[-1] == b"data: [DONE]" and len(events) == 7, events
spread = times[-1] - times[0]
print("streamed 7 events over %.2f s" % spread)
assert spread >= 0.5, spread
PY
echo "gate_batch: ok"
