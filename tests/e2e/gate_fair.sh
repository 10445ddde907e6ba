#!/usr/bin/env bash
# Fair queueing: a heavy user with 50 requests at once and a light user
# with one at a time. The light user's queue wait (the gate's own
# measurement, in the access log) stays within 2 upstream request
# durations (at most one other request runs whole while it waits), while the
# heavy user waits far longer.
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

python3 - "$T/access-fair.jsonl" <<'PY' || fail "fairness: light user's queue wait"
import json, sys
# Each request's wait [queued, sent] and upstream interval [sent, done], from
# the log line's time (written as it completes) and its measured parts.
reqs = []
for line in open(sys.argv[1]):
    r = json.loads(line)
    done = r["ts"] * 1000.0
    sent = done - r["upstream_ms"]
    reqs.append((r["user"], sent - r["queue_ms"], sent, done))
users = {}
for q in reqs:
    users.setdefault(q[0], []).append(q)
# Users are named by a hash of their key; the light one sent 8 requests.
light = next(v for v in users.values() if len(v) == 8)
heavy = next(v for v in users.values() if len(v) == 50)
# Within 2 upstream request durations, counted in requests so that a loaded
# machine (which stretches every request alike) cannot fail it: while a light
# request waits, the upstream finishes what it holds and at most one more,
# never the heavy user's backlog.
worst = max(sum(1 for h in heavy if h[2] >= l[1] and h[3] <= l[2]) for l in light)
waits = sorted(l[2] - l[1] for l in light)
hwait = sorted(h[2] - h[1] for h in heavy)
print("light: at most %d heavy requests ran whole while one waited; light max wait %.1f ms, "
      "heavy p50 %.1f ms" % (worst, waits[-1], hwait[len(hwait) // 2]))
sys.exit(0 if worst <= 1 and hwait[len(hwait) // 2] > waits[-1] else 1)
PY
echo "gate_fair: ok"
