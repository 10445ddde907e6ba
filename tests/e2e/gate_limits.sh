#!/usr/bin/env bash
# gpuwhy gate against sim serve: every limit and the status code it gives
# (413, 431, 429 + Retry-After, 503 queue full / queue timeout, 504, 502,
# 401), slow clients cut off, and nothing listening beyond loopback.
set -u
T=$(mktemp -d /tmp/gpuwhy-gate-limits.XXXXXX)
. "$(dirname "$0")/gate_lib.bash"

# A slow upstream: each request takes the GPU for 400 ms.
start_sim slow --batch-ms 400 --item-ms 0
SLOW=$SIM_PORT
start_gate lim --upstream "http://127.0.0.1:$SLOW@0" --max-body 1K --max-header 1K \
	--client-timeout 2s
G="http://127.0.0.1:$GATE_PORT"

[ "$(code "$G/health")" = 200 ] || fail "pass-through GET /health"

# 413: by Content-Length, and by counting a chunked body.
head -c 2000 /dev/zero | tr '\0' a >"$T/big"
[ "$(code "$G/v1/embeddings" --data-binary @"$T/big")" = 413 ] || fail "413 by Content-Length"
[ "$(code "$G/v1/embeddings" -H 'Transfer-Encoding: chunked' --data-binary @"$T/big")" = 413 ] ||
	fail "413 for a chunked body"
[ "$(code "$G/v1/embeddings" -d '{"input":["ok"]}')" = 200 ] || fail "a small body passes"

# 431: headers beyond --max-header, also far beyond MHD's buffer.
[ "$(code "$G/health" -H "X-Big: $(head -c 1500 "$T/big")")" = 431 ] || fail "431"
python3 - "$GATE_PORT" <<'PY' || fail "431 for 200 kB of headers"
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
try:
    s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 200000 + b"\r\n\r\n")
except OSError:
    pass
sys.exit(0 if s.recv(100).startswith(b"HTTP/1.1 431") else 1)
PY

# The largest --max-header the HTTP library honours: headers just under it
# pass; a larger limit is refused at start (flag and config), not answered
# with the library's own 431 below the limit the user set.
start_gate big --upstream "http://127.0.0.1:$SLOW@0" --max-header 31K
[ "$(code "http://127.0.0.1:$GATE_PORT/health" -H "X-Big: $(head -c 31000 /dev/zero | tr '\0' a)")" = 200 ] ||
	fail "a 31000-byte header under --max-header 31K"
"$GPUWHY" --sim h100x1 gate --upstream "http://127.0.0.1:$SLOW" --listen 127.0.0.1:0 \
	--max-header 64K >/dev/null 2>"$T/mh64.err"
[ $? = 2 ] && grep -q 'max-header 64K.*at most 31K' "$T/mh64.err" || fail "--max-header 64K not refused: $(cat "$T/mh64.err")"
echo '{"limits": {"max_header_bytes": 65536}}' >"$T/mh64.json"
"$GPUWHY" --sim h100x1 gate --upstream "http://127.0.0.1:$SLOW" --listen 127.0.0.1:0 \
	--config "$T/mh64.json" >/dev/null 2>"$T/mh64c.err"
[ $? != 0 ] && grep -q 'max_header_bytes.*31744' "$T/mh64c.err" || fail "max_header_bytes 65536 not refused: $(cat "$T/mh64c.err")"

# 429 + Retry-After: one user, concurrency 1, queue 1, four at once. The
# upstream takes 3 s a request, so all four are there before the first ends.
start_sim slower --batch-ms 3000 --item-ms 0
start_gate u429 --upstream "http://127.0.0.1:$SIM_PORT@0" --user-concurrency 1 --user-queue 1
G4="http://127.0.0.1:$GATE_PORT"
PIDS=()
wait_n() {
	local p
	for p in "${PIDS[@]}"; do wait "$p"; done
	PIDS=()
}
for i in 1 2 3 4; do
	curl -s -D "$T/h429.$i" -o /dev/null -w '%{http_code}\n' --max-time 30 -H 'X-Api-Key: alice' \
		-d '{"input":["x"]}' "$G4/v1/embeddings" >"$T/c429.$i" &
	PIDS+=($!)
done
wait_n
n429=$(cat "$T"/c429.* | grep -c 429)
n200=$(cat "$T"/c429.* | grep -c 200)
[ "$n429" = 2 ] && [ "$n200" = 2 ] || fail "429: expected 2 x 429 and 2 x 200, got $(cat "$T"/c429.* | tr '\n' ' ')"
grep -qi '^Retry-After: [0-9]' $(grep -l 429 "$T"/c429.* | sed 's/c429/h429/') ||
	fail "429 without Retry-After"

# 503: five users at once; one request at the upstream (20 s), two may wait,
# and only for 5 s: two are refused as queue_full, two time out. The five are
# started 0.1 s apart; 5 s, not 1, for all of them to reach the gate: on a
# loaded machine starting a curl can take a second.
start_sim slowest --batch-ms 20000 --item-ms 0
start_gate u503 --upstream "http://127.0.0.1:$SIM_PORT@0" --max-inflight-per-upstream 1 \
	--queue-size 2 --queue-timeout 5s
G5="http://127.0.0.1:$GATE_PORT"
for i in 1 2 3 4 5; do
	curl -s -D "$T/h503.$i" -o "$T/b503.$i" -w '%{http_code}\n' --max-time 60 -H "X-Api-Key: u$i" \
		-d '{"input":["x"]}' "$G5/v1/embeddings" >"$T/c503.$i" &
	PIDS+=($!)
	sleep 0.1
done
wait_n
[ "$(cat "$T"/c503.* | grep -c 503)" = 4 ] || fail "503s: $(cat "$T"/c503.* | tr '\n' ' ')"
[ "$(grep -l '"code":"queue_full"' "$T"/b503.* | wc -l)" = 2 ] ||
	fail "two 503 queue_full: $(cat "$T"/b503.* | head -c 900)"
[ "$(grep -l '"code":"queue_timeout"' "$T"/b503.* | wc -l)" = 2 ] ||
	fail "two 503 queue_timeout: $(cat "$T"/b503.* | head -c 900)"
grep -qi '^Retry-After:' $(grep -l 503 "$T"/c503.* | sed 's/c503/h503/') || fail "503 without Retry-After"
[ "$(metric "$METRICS_PORT" 'gpuwhy_gate_rejected_total{reason="queue_full"}')" = 2 ] ||
	fail "rejections by reason in /metrics"

# Slow client: a request trickled byte by byte is cut off at --client-timeout.
python3 - "$GATE_PORT" <<'PY' || fail "slow client not cut off"
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
t = time.monotonic()
try:
    for i in range(300):
        s.send(b"GET /health HTTP/1.1\r\n"[i:i + 1] or b"x")
        time.sleep(0.1)
        if s.recv(1, socket.MSG_DONTWAIT) == b"":
            break
except BlockingIOError:
    pass
except OSError:
    pass
sys.exit(0 if time.monotonic() - t < 25 else 1)
PY
[ "$(code "$G/health")" = 200 ] || fail "the gate serves after a slow client"

# 504: the upstream takes longer than --upstream-timeout.
start_gate t504 --upstream "http://127.0.0.1:$SLOW@0" --upstream-timeout 100ms
[ "$(code "http://127.0.0.1:$GATE_PORT/v1/embeddings" -d '{"input":["x"]}')" = 504 ] || fail "504"

# 502: nothing listens at the upstream.
python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' >"$T/freeport"
start_gate t502 --upstream "http://127.0.0.1:$(cat "$T/freeport")"
[ "$(code "http://127.0.0.1:$GATE_PORT/health")" = 502 ] || fail "502"
[ "$(metric "$METRICS_PORT" "gpuwhy_gate_upstream_errors_total{upstream=\"http://127.0.0.1:$(cat "$T/freeport")\",kind=\"connect\"}")" -ge 1 ] ||
	fail "upstream errors in /metrics"

# 401: keys required; a known key passes and is named in the access log.
printf '{"keys": {"sk-alice": {"name": "alice", "concurrency": 2}}}\n' >"$T/keys.json"
start_gate keys --upstream "http://127.0.0.1:$SLOW@0" --keys "$T/keys.json" --require-keys
K="http://127.0.0.1:$GATE_PORT"
[ "$(code "$K/health")" = 401 ] || fail "401 without a key"
[ "$(code "$K/health" -H 'Authorization: Bearer sk-bob')" = 401 ] || fail "401 for an unknown key"
[ "$(code "$K/health" -H 'Authorization: Bearer sk-alice')" = 200 ] || fail "a known key"
grep -q '"user":"alice"' "$T/access-keys.jsonl" || fail "access log names the key's user"
grep -q 'sk-alice' "$T/access-keys.jsonl" "$T/gate-keys.log" && fail "the key itself was logged"

# Loopback only unless told: refused with one line and exit 2.
out=$("$GPUWHY" gate --upstream http://127.0.0.1:1 --listen 0.0.0.0:0 2>&1)
[ $? = 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && printf '%s' "$out" | grep -q allow-remote ||
	fail "a non-loopback --listen is refused: $out"
out=$("$GPUWHY" gate --upstream http://127.0.0.1:1 --listen 0.0.0.0:0 --allow-remote 2>&1)
[ $? = 2 ] && printf '%s' "$out" | grep -q -- '--allow' || fail "--allow-remote needs --allow: $out"
"$GPUWHY" gate --upstream http://127.0.0.1:1 --max-body lots >/dev/null 2>&1
[ $? = 2 ] || fail "a bad --max-body is a usage error"
# A port in use is refused, even for a gate whose loops share theirs
# with SO_REUSEPORT (another such gate would otherwise join in).
start_gate busy --upstream http://127.0.0.1:1@none --workers 2
out=$("$GPUWHY" gate --upstream http://127.0.0.1:1@none --listen "127.0.0.1:$GATE_PORT" \
	--metrics-listen off --workers 2 2>&1)
[ $? = 3 ] && printf '%s' "$out" | grep -q 'cannot listen' ||
	fail "a second gate on port $GATE_PORT is refused: $out"
grep -q '2 event loops' "$T/gate-busy.log" || fail "--workers 2 runs two loops"
# Every socket the gates opened is on 127.0.0.1.
if command -v ss >/dev/null; then
	for p in "${GATE_PIDS[@]}"; do
		ss -ltnp 2>/dev/null | grep "pid=$p," | awk '{print $4}' | grep -v '^127\.0\.0\.1:' &&
			fail "pid $p listens beyond loopback"
	done
fi
echo "gate_limits: ok"
