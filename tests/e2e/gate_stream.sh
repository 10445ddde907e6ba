#!/usr/bin/env bash
# Backpressure on streamed answers: an upstream that streams 128 MiB as
# fast as it can, behind the gate, to a client that stops reading. The
# gate must hold the upstream (pause its transfer) instead of buffering
# the stream: the upstream stalls far short of the whole answer while the
# client sleeps, and once the client reads again every byte arrives, in
# order. A client that leaves mid-stream ends the upstream transfer.
T=$(mktemp -d)
. "$(dirname "$0")/gate_lib.bash"

# The upstream counts what it has handed to the kernel in $T/sent.
cat >"$T/up.py" <<'PY'
import http.server, os, sys
TOTAL = 128 << 20
CHUNK = b"".join(b"%07d\n" % i for i in range(8192))  # 64 KiB, numbered lines
sent_path = sys.argv[1]
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        sent = 0
        try:
            while sent < TOTAL:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(CHUNK), CHUNK))
                sent += len(CHUNK)
                with open(sent_path + ".tmp", "w") as f:
                    f.write(str(sent))
                os.replace(sent_path + ".tmp", sent_path)  # never read half-written
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            with open(sent_path + ".gone", "w") as f:
                f.write(str(sent))
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print("listening on port (port %d)" % srv.server_address[1], flush=True)
srv.serve_forever()
PY
python3 "$T/up.py" "$T/sent" >"$T/up.log" 2>&1 &
GATE_PIDS+=("$!")
UP=$(wait_port "$T/up.log" "listening on") || fail "the streaming upstream did not start"
start_gate st --upstream "http://127.0.0.1:$UP" --upstream-timeout 600s

# The client: read 1 MiB, stop, report when told to go on, then read the
# rest and check it is the upstream's stream byte for byte.
cat >"$T/client.py" <<'PY'
import hashlib, os, socket, sys, time
port, go, report = int(sys.argv[1]), sys.argv[2], sys.argv[3]
CHUNK = b"".join(b"%07d\n" % i for i in range(8192))
s = socket.create_connection(("127.0.0.1", port))
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
s.sendall(b"GET /stream HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
f = s.makefile("rb")
status = f.readline()
assert b" 200 " in status, status
while f.readline() not in (b"\r\n", b""):
    pass
h, n = hashlib.sha256(), 0
def chunk():
    size = int(f.readline().strip(), 16)
    data = f.read(size) if size else b""
    f.readline()
    return data
while n < (1 << 20):
    d = chunk()
    h.update(d)
    n += len(d)
open(report, "w").write("paused\n")
while not os.path.exists(go):
    time.sleep(0.05)
while True:
    d = chunk()
    if not d:
        break
    h.update(d)
    n += len(d)
want = hashlib.sha256(CHUNK * (128 << 4)).hexdigest()
assert n == 128 << 20, n
assert h.hexdigest() == want, "stream content differs"
print("ok %d" % n)
PY
python3 "$T/client.py" "$GATE_PORT" "$T/go" "$T/paused" >"$T/client.out" 2>&1 &
CLIENT=$!
for _ in $(seq 600); do [ -s "$T/paused" ] && break; sleep 0.1; done
[ -s "$T/paused" ] || fail "the client never got its first MiB: $(cat "$T/client.out")"
# Wait until the upstream stops advancing (or, without backpressure, ends).
last=-1
for _ in $(seq 300); do
	now=$(cat "$T/sent" 2>/dev/null || echo 0)
	[ "$now" -ge $((128 << 20)) ] && break
	[ "$now" = "$last" ] && break
	last=$now
	sleep 1
done
sent=$(cat "$T/sent")
echo "upstream sent $((sent >> 20)) MiB while the client held at 1 MiB"
# 1 MiB of gate buffer, curl's and the sockets' buffers: far below 128 MiB.
[ "$sent" -lt $((48 << 20)) ] || fail "the gate buffered the stream: the upstream sent $((sent >> 20)) MiB to a client that read 1 MiB"
rss=$(awk '/^VmRSS/ {print $2}' "/proc/$GATE_PID_st/status")
echo "gate RSS ${rss} KiB"
touch "$T/go"
wait "$CLIENT" || fail "the client did not get the whole stream intact: $(cat "$T/client.out")"
grep -q "^ok $((128 << 20))" "$T/client.out" || fail "client: $(cat "$T/client.out")"

# A client that leaves mid-stream (while the upstream is paused) ends the
# upstream's transfer: the upstream sees its connection closed.
rm -f "$T/sent" "$T/sent.gone"
python3 - "$GATE_PORT" <<'PY' || fail "second client"
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /stream HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
got = 0
while got < (4 << 20):
    d = s.recv(65536)
    assert d
    got += len(d)
s.close()
PY
for _ in $(seq 300); do [ -s "$T/sent.gone" ] && break; sleep 0.1; done
[ -s "$T/sent.gone" ] || fail "the upstream still streams to a client that left"
curl -fsS --max-time 10 "http://127.0.0.1:$METRICS_PORT/health" >/dev/null || fail "the gate is not healthy after the streams"
echo ok
