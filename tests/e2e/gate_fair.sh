#!/usr/bin/env bash
# Fair queueing: a heavy user with 50 requests at once and a light user
# with one at a time. The light user's queue wait (the gate's own
# measurement, in the access log) stays within 2 upstream request
# durations, while the heavy user waits far longer.
set -u
T=$(mktemp -d /tmp/gpuwhy-gate-fair.XXXXXX)
. "$(dirname "$0")/gate_lib.bash"

BATCH_MS=200
start_sim fair --batch-ms $BATCH_MS --item-ms 0
# One request at the upstream at a time: the queue is in the gate.
start_gate fair --upstream "http://127.0.0.1:$SIM_PORT@0" --max-inflight-per-upstream 1 \
	--user-concurrency 1 --user-queue 100
G="http://127.0.0.1:$GATE_PORT/v1/embeddings"

$LOAD "$G" --clients 50 --requests 1 --header 'X-Api-Key: heavy' --body '{"input":["h{c}"]}' \
	>"$T/heavy.json" &
HEAVY=$!
sleep 0.5
$LOAD "$G" --clients 1 --requests 8 --header 'X-Api-Key: light' --body '{"input":["l{i}"]}' \
	>"$T/light.json"
wait $HEAVY
grep -q '"status": {"200": 8}' "$T/light.json" || fail "light user: $(cat "$T/light.json")"
grep -q '"status": {"200": 50}' "$T/heavy.json" || fail "heavy user: $(cat "$T/heavy.json")"

python3 - "$T/access-fair.jsonl" "$BATCH_MS" <<'PY' || fail "fairness: light user's queue wait"
import json, sys
users = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    users.setdefault(r["user"], []).append(r["queue_ms"])
# Users are named by a hash of their key; the light one sent 8 requests.
light = next(v for v in users.values() if len(v) == 8)
heavy = next(v for v in users.values() if len(v) == 50)
light.sort(); heavy.sort()
p99 = light[min(len(light) - 1, int(0.99 * len(light)))]
budget = 2 * float(sys.argv[2])
print("light p99 queue wait %.1f ms (budget %.0f), heavy p50 %.1f ms" % (p99, budget, heavy[len(heavy) // 2]))
sys.exit(0 if p99 <= budget and heavy[len(heavy) // 2] > p99 else 1)
PY
echo "gate_fair: ok"
