#!/usr/bin/env bash
# WebSockets through the gate: the upgrade reaches the upstream with the
# client's key and comes back (101, the right Sec-WebSocket-Accept), bytes
# flow both ways unchanged (a greeting sent with the 101, a 300 KB
# message), closes pass on; an upstream's refusal keeps its status; an
# unreachable upstream is a 502; user_websockets (429) and
# websocket_idle_ms apply; plain requests still go through; metrics and
# the access log count them.
set -u
T=$(mktemp -d /tmp/gpuwhy-gate-ws.XXXXXX)
. "$(dirname "$0")/gate_lib.bash"
WS="python3 $(dirname "$0")/gate_ws.py"

$WS serve "$T/up.port" 2>"$T/up.log" &
GATE_PIDS+=($!)
for i in $(seq 100); do [ -s "$T/up.port" ] && break; sleep 0.1; done
UP=$(cat "$T/up.port" 2>/dev/null) || fail "the WebSocket upstream did not start"

start_gate w --upstream "http://127.0.0.1:$UP@none" --user-websockets 2
GP=$GATE_PORT
MP=$METRICS_PORT
[ "$($WS echo "$GP" /ws 5)" = ok ] || fail "echo through the gate"
[ "$($WS echo "$GP" "/ws?clientId=abc" 3)" = ok ] || fail "echo with a query string"
[ "$($WS status "$GP" /nows)" = 404 ] || fail "the upstream's 404 to an upgrade is passed on"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$GP/health")" = 200 ] ||
	fail "a plain request through the same gate"

# Two at once are allowed, a third is refused while they stay open.
$WS hold "$GP" /ws 20 >"$T/h1" &
H1=$!
$WS hold "$GP" /ws 20 >"$T/h2" &
H2=$!
for i in $(seq 100); do
	[ "$(metric "$MP" gpuwhy_gate_websockets_open)" = 2 ] && break
	sleep 0.1
done
[ "$(metric "$MP" gpuwhy_gate_websockets_open)" = 2 ] || fail "two WebSockets open"
[ "$($WS status "$GP" /ws)" = 429 ] || fail "a third WebSocket is refused with 429"
[ "$(metric "$MP" 'gpuwhy_gate_rejected_total{reason="user_websockets"}')" = 1 ] ||
	fail "the refusal is counted"
kill "$H1" "$H2" 2>/dev/null
wait "$H1" "$H2" 2>/dev/null
for i in $(seq 100); do
	[ "$(metric "$MP" gpuwhy_gate_websockets_open)" = 0 ] && break
	sleep 0.1
done
[ "$(metric "$MP" gpuwhy_gate_websockets_open)" = 0 ] || fail "closed WebSockets are let go"
[ "$($WS echo "$GP" /ws 1)" = ok ] || fail "a WebSocket after the others closed"
grep -q '"status":101.*"websocket":true' "$T/access-w.jsonl" || fail "access log line"
bytes=$(python3 -c '
import json, sys
ls = [json.loads(l) for l in open(sys.argv[1]) if "\"websocket\"" in l]
print(max(l["bytes_in"] for l in ls), max(l["bytes_out"] for l in ls))' "$T/access-w.jsonl")
read -r bin bout <<<"$bytes"
[ "$bin" -gt 300000 ] && [ "$bout" -gt 300000 ] || fail "bytes relayed in the log: $bytes"
kill -0 "$GATE_PID_w" || fail "the gate died"

# Idle WebSockets are closed; a busy one would not be (the echo above).
start_gate idle --upstream "http://127.0.0.1:$UP@none" --websocket-idle 1s
[ "$($WS hold "$GATE_PORT" /ws 30)" = closed ] || fail "an idle WebSocket is closed"
grep -q '"reason":"idle timeout"' "$T/access-idle.jsonl" || fail "idle close in the access log"

# An upstream that is not there.
DEAD=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
start_gate dead --upstream "http://127.0.0.1:$DEAD@none"
[ "$($WS status "$GATE_PORT" /ws)" = 502 ] || fail "502 when the upstream is unreachable"
kill -0 "$GATE_PID_dead" || fail "the gate died"

# A gate stopped with WebSockets open ends them and exits cleanly.
$WS hold "$GP" /ws 30 >"$T/h3" &
H3=$!
for i in $(seq 100); do
	[ "$(metric "$MP" gpuwhy_gate_websockets_open)" = 1 ] && break
	sleep 0.1
done
kill -TERM "$GATE_PID_w"
wait "$GATE_PID_w"
rc=$?
wait "$H3"
[ "$(cat "$T/h3")" = closed ] || fail "the open WebSocket is closed when the gate stops"
[ $rc = 0 ] || fail "the gate exits 0 after SIGTERM, got $rc"
echo PASS
