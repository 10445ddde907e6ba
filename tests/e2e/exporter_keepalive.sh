#!/usr/bin/env bash
# gpuwhy exporter over one connection: two requests on a keep-alive
# connection, a pipelined pair, SIGHUP not stopping it, and the last Xid of a
# GPU that fell off the bus kept on DCGM_FI_DEV_XID_ERRORS with gpuwhy_gpu_lost 1.
. "$(dirname "$0")/lib.bash"
EXP=
stop_exp() { [ -n "$EXP" ] && kill "$EXP" 2>/dev/null && wait "$EXP" 2>/dev/null; EXP=; }
trap 'stop_exp; cleanup' EXIT
command -v curl >/dev/null || skip "curl missing"
command -v python3 >/dev/null || skip "python3 missing"
have_sim || skip "simulated GPU not built"

# start_exp SCENARIO: start an exporter on an ephemeral port, set PORT
start_exp() {
	"$GPUWHY" --sim "$1" exporter --listen 127.0.0.1:0 --interval 200ms 2>"$T/exp.log" &
	EXP=$!
	PIDS_TO_KILL+=("$EXP")
	PORT=
	for _ in $(seq 300); do
		PORT=$(sed -n 's|.*serving http://127\.0\.0\.1:\([0-9]*\)/metrics.*|\1|p' "$T/exp.log")
		[ -n "$PORT" ] && break
		kill -0 "$EXP" 2>/dev/null || fail "exporter exited at start: $(cat "$T/exp.log")"
		sleep 0.1
	done
	[ -n "$PORT" ] || fail "exporter did not report its port"
	# the first sample is published before /health says OK
	for _ in $(seq 300); do
		[ "$(curl -s --max-time 5 "http://127.0.0.1:$PORT/health")" = OK ] && return
		sleep 0.1
	done
	fail "exporter never healthy"
}

start_exp h100x1

# Two requests, one after the other, on one connection: curl reuses it only
# when the first response kept it open.
curl -sv -o /dev/null -o /dev/null --max-time 20 "http://127.0.0.1:$PORT/metrics" \
	"http://127.0.0.1:$PORT/health" 2>"$T/curl.log" || fail "curl failed: $(cat "$T/curl.log")"
assert_eq "$(grep -ci '^< connection: close' "$T/curl.log")" 0 "responses saying Connection: close"
assert_contains "$(cat "$T/curl.log")" "Re-using existing connection" "curl log"
assert_eq "$(grep -c '^< HTTP/1.1 200' "$T/curl.log")" 2 "200 responses on one connection"

# A pipelined pair sent in one write: both answered, in order, on one connection.
cat >"$T/pipe.py" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20)
s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
          b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
data = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    data += b
s.close()
# split the stream into responses by Content-Length
out, rest = [], data
while rest:
    head, _, rest = rest.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    n = 0
    for l in lines[1:]:
        k, _, v = l.partition(b":")
        if k.strip().lower() == b"content-length":
            n = int(v)
    body, rest = rest[:n], rest[n:]
    out.append((lines[0].decode(), body))
for status, body in out:
    first = body.split(b"\n", 1)[0].decode(errors="replace")
    print(status, "|", first)
PY
python3 "$T/pipe.py" "$PORT" >"$T/pipe.out" || fail "pipelined requests: python failed"
assert_eq "$(wc -l <"$T/pipe.out" | tr -d ' ')" 2 "responses to a pipelined pair ($(cat "$T/pipe.out"))"
assert_eq "$(sed -n 1p "$T/pipe.out" | cut -d'|' -f1)" "HTTP/1.1 200 OK " "first pipelined response"
assert_contains "$(sed -n 1p "$T/pipe.out")" "# HELP" "first pipelined body is /metrics"
assert_eq "$(sed -n 2p "$T/pipe.out")" "HTTP/1.1 200 OK | OK" "second pipelined response is /health"

# A request that announces a body is still answered, and its connection closed.
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -X GET --data 'x=1' \
	"http://127.0.0.1:$PORT/metrics") || true
assert_eq "$code" 200 "GET with a body"

# SIGHUP: the exporter says it ignores it and keeps serving.
kill -HUP "$EXP"
for _ in $(seq 100); do
	grep -q 'SIGHUP ignored' "$T/exp.log" && break
	kill -0 "$EXP" 2>/dev/null || fail "SIGHUP stopped the exporter"
	sleep 0.1
done
kill -0 "$EXP" 2>/dev/null || fail "SIGHUP stopped the exporter"
assert_contains "$(cat "$T/exp.log")" "SIGHUP ignored" "exporter log"
assert_eq "$(curl -s --max-time 10 "http://127.0.0.1:$PORT/health")" OK "/health after SIGHUP"
kill -TERM "$EXP"
wait "$EXP"
assert_eq "$?" 0 "exit status after SIGTERM"
EXP=

# h100x1-lost falls off the bus 5 s into its clock with Xid 79. Once a scrape
# shows the GPU lost, that scrape and every later one still carry the Xid.
start_exp h100x1-lost
seen=
for _ in $(seq 600); do
	curl -s --max-time 10 "http://127.0.0.1:$PORT/metrics" >"$T/m.txt" || true
	if grep -q '^gpuwhy_gpu_lost{gpu="0"} 1$' "$T/m.txt"; then
		seen=1
		break
	fi
	sleep 0.1
done
[ -n "$seen" ] || fail "GPU never reported lost"
assert_contains "$(grep '^DCGM_FI_DEV_XID_ERRORS{' "$T/m.txt")" '^DCGM_FI_DEV_XID_ERRORS{gpu="0",.*} 79$' "Xid series of the scrape that saw the loss"
curl -s --max-time 10 "http://127.0.0.1:$PORT/metrics" >"$T/m2.txt"
assert_eq "$(grep -c '^gpuwhy_gpu_lost{gpu="0"} 1$' "$T/m2.txt")" 1 "GPU still lost"
assert_contains "$(grep '^DCGM_FI_DEV_XID_ERRORS{' "$T/m2.txt")" '} 79$' "Xid kept on a later scrape"
assert_eq "$(grep -c '^DCGM_FI_DEV_GPU_UTIL{' "$T/m2.txt")" 0 "no utilization for a lost GPU"
echo "exporter_keepalive: ok"
