#!/usr/bin/env bash
# Where the gate connects: only to its upstream. Request-targets that would
# name another host (@host, //host, absolute- and authority-form, escapes,
# control bytes, long and IPv6 authorities) get 400 while a canary server
# on another loopback port counts 0 connections; origin-form targets reach
# the upstream byte for byte, and the access log names the URL fetched.
# An upstream's redirect to the canary is passed back, not followed.
set -u
T=$(mktemp -d /tmp/gpuwhy-gate-target.XXXXXX)
. "$(dirname "$0")/gate_lib.bash"
export PYTHONPATH="$(dirname "$0")${PYTHONPATH:+:$PYTHONPATH}"

start_sim t --batch-ms 0 --item-ms 0
SP=$SIM_PORT
start_gate t --upstream "http://127.0.0.1:$SP@0"
GP=$GATE_PORT
MP=$METRICS_PORT

python3 - "$GP" "$MP" "$SP" "$T/access-t.jsonl" <<'PY' || fail "a request-target reached another host"
import json, socket, sys, time
from gate_raw import Canary, exchange
gp, mp, sp, log = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
can = Canary()
A = "127.0.0.1:%d" % can.port
V6 = "[::1]:%d" % can.port
M = "127.0.0.1:%d" % mp
refused = [
    ("GET", "@%s/s.txt" % A), ("GET", "@%s/metrics" % M), ("GET", "@%s/" % V6),
    ("GET", "@[::ffff:127.0.0.1]:%d/" % can.port), ("GET", "@127.1:%d/" % can.port),
    ("GET", "@2130706433:%d/" % can.port), ("GET", "@0x7f000001:%d/" % can.port),
    ("GET", "\\@%s/" % A), ("GET", "\\\\%s\\" % A), ("GET", "/\\\\%s/" % A),
    ("GET", "//%s/" % A), ("GET", "///%s/" % A), ("GET", "//%s/" % V6),
    ("GET", "http://%s/" % A), ("GET", "HTTP://%s/" % A), ("GET", "http://%s/" % V6),
    ("GET", "http://%s@%s/" % (A, A)), ("GET", "file:///etc/passwd"),
    ("GET", "gopher://%s/_x" % A), ("CONNECT", A), ("GET", A), ("GET", V6 + "/"),
    ("GET", "%%40%s/" % A), ("GET", "%%2F%%2F%s/" % A),
    ("GET", "/a\t@%s/" % A), ("GET", "\t@%s/" % A), ("GET", "/a\x0b@%s/" % A),
    ("GET", "/a\r\nHost: %s" % A), ("GET", "/a\n@%s/" % A),
    ("GET", "/#@%s/" % A), ("GET", "@%s#/x" % A), ("GET", "/a @%s/" % A),
    ("GET", "/\xef\xbc\xa0%s/" % A), ("GET", "/\x7f@%s/" % A),
    ("GET", "@" + "a" * 5000 + "@%s/" % A), ("GET", "@" + "x:" * 6000 + A + "/"),
    ("GET", "@[" + "1:" * 2000 + ":1]:%d/" % can.port), ("OPTIONS", "*"),
    ("POST", "@%s/v1/embeddings" % A), ("GET", "@%s/ws" % A),
]
# Origin-form: forwarded, to the upstream only, and fetched as sent.
forwarded = [
    "/%2F%2F" + A + "/", "/@" + A + "/", "/?@" + A + "/", "/x?next=http://" + A + "/",
    "/x/..%2F..%2F@" + A + "/", "/%00@" + A + "/", "/%40" + A + "/%3a%3A", "/;@" + A,
    "/health",
]
# The HTTP library ends the target at a NUL: "/a" goes, nothing after it.
cut = [("/a\x00@" + A + "/", "/a")]


def send(method, target):
    extra = ""
    if method == "POST":
        extra = "Content-Type: application/json\r\nContent-Length: 13\r\n"
    if target.endswith("/ws"):
        extra = ("Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                 "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n")
    # The Host header names the canary too: it must not matter either.
    data = ("%s %s HTTP/1.1\r\nHost: %s\r\n%s\r\n" % (method, target, A, extra)).encode("latin1")
    if method == "POST":
        data += b'{"input":"x"}'
    rs, trailing, closed = exchange(gp, data, timeout=30)
    for st, hd, body in rs:
        assert Canary.BODY not in body and b"gpuwhy_gate_" not in body, (target, body[:200])
    return rs, trailing, closed


bad = 0
for method, target in refused:
    rs, trailing, closed = send(method, target)
    st = rs[0][0] if rs else None
    code = ""
    if rs and rs[0][2].startswith(b"{"):
        code = json.loads(rs[0][2])["error"].get("code", "")
        bad += code == "bad_target"
    print("%-8s %-52r %s %s canary=%d" % (method, target[:52], st, code, can.connections()))
    assert st == 400, (method, target, rs)
    assert can.connections() == 0, (method, target)
for target in forwarded:
    rs, trailing, closed = send("GET", target)
    print("%-8s %-52r %s (forwarded) canary=%d" % ("GET", target[:52], rs[0][0], can.connections()))
    assert rs and rs[0][0] in (200, 404, 405), (target, rs)
    assert can.connections() == 0, target
for target, sent in cut:
    rs, trailing, closed = send("GET", target)
    print("%-8s %-52r %s (as %r) canary=%d" % ("GET", target[:52], rs[0][0], sent, can.connections()))
    assert can.connections() == 0, target
    forwarded.append(sent)
assert bad >= len(refused) - 4, bad  # all but the ones the HTTP library itself refuses

# The access log names the URL fetched: the upstream's, with the target as sent.
time.sleep(0.5)
lines = [json.loads(l) for l in open(log)]
urls = {l["path"]: l["url"] for l in lines if "url" in l}
base = "http://127.0.0.1:%d" % sp
for target in forwarded:
    assert urls.get(target) == base + target, (target, urls.get(target))
assert all(u.startswith(base + "/") for u in urls.values()), urls
assert all("url" not in l for l in lines if l["status"] == 400), "a refused target was fetched"
print("canary connections: %d" % can.connections())
PY
n=$(metric "$MP" 'gpuwhy_gate_rejected_total{reason="bad_target"}')
[ "${n:-0}" -ge 30 ] || fail "bad_target refusals counted: ${n:-none}"

# A redirect from the upstream is the client's to follow, never the gate's.
python3 - "$T/redir.port" <<'PY' &
import http.server, os, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(302)
        self.send_header("Location", open(sys.argv[1] + ".to").read())
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1] + ".tmp", "w").write(str(s.server_port))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.serve_forever()
PY
GATE_PIDS+=($!)
python3 - "$T/redir.port" "$T" <<'PY' || fail "redirect: setup"
import sys, time, os
for _ in range(100):
    if os.path.exists(sys.argv[1]):
        sys.exit(0)
    time.sleep(0.1)
sys.exit(1)
PY
RP=$(cat "$T/redir.port")
start_gate redir --upstream "http://127.0.0.1:$RP@none"
python3 - "$GATE_PORT" "$T/redir.port.to" <<'PY' || fail "the gate followed a redirect"
import sys
from gate_raw import Canary, exchange
can = Canary()
open(sys.argv[2], "w").write("http://127.0.0.1:%d/s.txt" % can.port)
rs, trailing, closed = exchange(int(sys.argv[1]), b"GET /x HTTP/1.1\r\nHost: x\r\n\r\n")
assert rs and rs[0][0] == 302, rs
assert rs[0][1]["location"] == ["http://127.0.0.1:%d/s.txt" % can.port], rs[0][1]
assert can.connections() == 0
print("302 passed back, canary connections: 0")
PY
echo "gate_target: ok"
