#!/usr/bin/env bash
# What one member of a merged batch sees of the others: no other caller's
# usage as its own (its items' own usage where the upstream gives it per
# item, else none, with the batch's total and member count in headers),
# and no other caller's failure: a batch the upstream refuses with a 4xx
# is sent again member by member, so each gets its own answer. A batch is
# never merged past max_batch_size inputs.
set -u
T=$(mktemp -d /tmp/gpuwhy-gate-members.XXXXXX)
. "$(dirname "$0")/gate_lib.bash"

# post_pair URL BODY1 BODY2: both at once; one JSON line per answer
# (status, headers in lower case, body) in $T/pair.json.
post_pair() {
	python3 - "$@" >"$T/pair.json" <<'PY'
import json, sys, threading, urllib.error, urllib.request
url, bodies = sys.argv[1], sys.argv[2:]
out = [None] * len(bodies)
def post(i):
    req = urllib.request.Request(url, bodies[i].encode(), {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            st, hd, body = r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        st, hd, body = e.code, dict(e.headers), e.read()
    out[i] = {"status": st, "headers": {k.lower(): v for k, v in hd.items()},
              "body": json.loads(body)}
th = [threading.Thread(target=post, args=(i,)) for i in range(len(bodies))]
[t.start() for t in th]
[t.join() for t in th]
json.dump(out, sys.stdout)
PY
}
check() { python3 - "$T/pair.json" "$@" <<<"$PY_CHECK"; }

ONE='{"model":"m","input":["one"]}'
THREE='{"model":"m","input":["a b","c d e","f"]}'

# Usage: the upstream reports only the batch's total (1 + 6 tokens).
start_sim u --batch-ms 0 --item-ms 0
start_gate u --upstream "http://127.0.0.1:$SIM_PORT@0" --batch /v1/embeddings \
	--max-batch 16 --preferred 16 --batch-delay 3s
post_pair "http://127.0.0.1:$GATE_PORT/v1/embeddings" "$ONE" "$THREE"
PY_CHECK='
import json, sys
a, b = json.load(open(sys.argv[1]))
for m, n in ((a, 1), (b, 3)):
    assert m["status"] == 200, m
    assert len(m["body"]["data"]) == n, m
    assert m["headers"].get("x-gpuwhy-batch-members") == "2", m["headers"]
    assert "usage" not in m["body"], "a member was told the batch usage as its own: %s" % m["body"]["usage"]
    assert json.loads(m["headers"]["x-gpuwhy-batch-usage"]) == {"prompt_tokens": 7, "total_tokens": 7}, m["headers"]
'
check || fail "batch usage given to a member: $(cat "$T/pair.json")"

# Per item: each member gets exactly its own.
start_sim i --batch-ms 0 --item-ms 0 --item-usage
start_gate i --upstream "http://127.0.0.1:$SIM_PORT@0" --batch /v1/embeddings \
	--max-batch 16 --preferred 16 --batch-delay 3s
post_pair "http://127.0.0.1:$GATE_PORT/v1/embeddings" "$ONE" "$THREE"
PY_CHECK='
import json, sys
a, b = json.load(open(sys.argv[1]))
assert a["headers"].get("x-gpuwhy-batch-members") == "2", a["headers"]
assert a["body"]["usage"] == {"prompt_tokens": 1, "total_tokens": 1}, a["body"]["usage"]
assert b["body"]["usage"] == {"prompt_tokens": 6, "total_tokens": 6}, b["body"]["usage"]
'
check || fail "per-item usage not given exactly: $(cat "$T/pair.json")"

# 250 inputs beside 10, upstream limit 256 (sim serve's default). With
# max_batch_size at that limit they are never merged past it.
start_sim lim --batch-ms 0 --item-ms 0 --item-mib 1
LIM=$SIM_PORT
big() { python3 -c "import json; print(json.dumps({'model': 'm', 'input': ['x%d' % i for i in range($1)]}))"; }
B250=$(big 250)
B10=$(big 10)
B300=$(big 300)
start_gate at --upstream "http://127.0.0.1:$LIM@0" --batch /v1/embeddings \
	--max-batch 256 --preferred 256 --batch-delay 1s
post_pair "http://127.0.0.1:$GATE_PORT/v1/embeddings" "$B250" "$B10"
PY_CHECK='
import json, sys
a, b = json.load(open(sys.argv[1]))
assert (a["status"], b["status"]) == (200, 200), (a, b)
assert (len(a["body"]["data"]), len(b["body"]["data"])) == (250, 10)
'
check || fail "max_batch_size at the upstream limit: $(head -c 600 "$T/pair.json")"
[ "$(curl -fsS "http://127.0.0.1:$LIM/stats" | jq_py "d['max_batch']")" -le 256 ] ||
	fail "a batch went past max_batch_size"
[ "$(metric "$METRICS_PORT" gpuwhy_gate_batch_retries_total)" = 0 ] || fail "retries without a 4xx"

# max_batch_size above what the upstream takes: the merged 260 inputs get
# 400, and each member is sent again alone and gets its own answer.
start_gate over --upstream "http://127.0.0.1:$LIM@0" --batch /v1/embeddings \
	--max-batch 1024 --preferred 1024 --batch-delay 3s
OVER_M=$METRICS_PORT
post_pair "http://127.0.0.1:$GATE_PORT/v1/embeddings" "$B250" "$B10"
PY_CHECK='
import json, sys
a, b = json.load(open(sys.argv[1]))
assert (a["status"], b["status"]) == (200, 200), "one caller failed the other: %s %s" % (a["body"], b["body"])
assert (len(a["body"]["data"]), len(b["body"]["data"])) == (250, 10)
assert "x-gpuwhy-batch-members" not in a["headers"], a["headers"]
'
check || fail "a 4xx batch failed its members: $(head -c 600 "$T/pair.json")"
# One member the upstream refuses on its own: that one gets the 400, the other 200.
post_pair "http://127.0.0.1:$GATE_PORT/v1/embeddings" "$B300" "$B10"
PY_CHECK='
import json, sys
a, b = json.load(open(sys.argv[1]))
assert a["status"] == 400 and "1 to 256" in a["body"]["error"]["message"], a
assert b["status"] == 200 and len(b["body"]["data"]) == 10, b
'
check || fail "the refused member did not get its own answer: $(head -c 600 "$T/pair.json")"
[ "$(metric "$OVER_M" gpuwhy_gate_batch_retries_total)" = 4 ] ||
	fail "retries counted: $(metric "$OVER_M" gpuwhy_gate_batch_retries_total) (expected 4)"
python3 - "$T/access-over.jsonl" <<'PY' || fail "the access log does not show the retries"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
retried = [l for l in lines if l.get("batch_retry")]
assert len(retried) == 4 and all("batch_id" not in l for l in retried), lines
assert sorted(l["status"] for l in retried) == [200, 200, 200, 400], retried
PY
echo "gate_batch_members: ok"
