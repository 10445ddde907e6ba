#!/usr/bin/env bash
# A request whose Content-Length cannot be read (not a number, past 2^64)
# or is past --max-body, followed on the same connection by a second
# request: the client gets exactly one well-formed answer and a close, or
# two well-formed answers; never a head written twice, never bytes after
# the answer that a keep-alive client would read as the next one.
set -u
T=$(mktemp -d /tmp/gpuwhy-gate-framing.XXXXXX)
. "$(dirname "$0")/gate_lib.bash"
export PYTHONPATH="$(dirname "$0")${PYTHONPATH:+:$PYTHONPATH}"

start_sim f --batch-ms 0 --item-ms 0
start_gate f --upstream "http://127.0.0.1:$SIM_PORT@0" --max-body 1K
MP=$METRICS_PORT

python3 - "$GATE_PORT" <<'PY' || fail "a bad Content-Length desynchronised the connection"
import sys
from gate_raw import exchange
port = int(sys.argv[1])
second = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
cases = [
    ("abc", 400), ("-1", 400), ("1e3", 400), ("0x10", 400), ("12abc", 400),
    ("99999999999999999999999", 413), ("18446744073709551616", 413),
    ("1000000000000", 413),  # a number, past --max-body: the gate's own 413
]
for value, want in cases:
    for body in (b"", b'{"input":["x"]}'):
        req = (b"POST /v1/embeddings HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               b"Content-Length: " + value.encode() + b"\r\n\r\n" + body + second)
        rs, trailing, closed = exchange(port, req, want=2)
        shape = [r[0] for r in rs]
        print("Content-Length: %-24s body %2d bytes -> %s closed=%s trailing=%d" %
              (value, len(body), shape, closed, len(trailing)))
        assert rs and rs[0][0] == want, (value, rs)
        assert b'"type":"gpuwhy_gate"' in rs[0][2], (value, rs[0][2][:200])
        if len(rs) == 1:
            assert closed and trailing == b"", (value, closed, trailing[:200])
            assert [v.lower() for v in rs[0][1].get("connection", [])] == ["close"], rs[0][1]
        else:
            assert len(rs) == 2 and rs[1][0] == 200 and rs[1][2] == b'{"status":"ok"}', rs
            assert trailing == b"", trailing[:200]
# The connection after all that: the gate still serves.
rs, trailing, closed = exchange(port, second + second, want=2)
assert [r[0] for r in rs] == [200, 200] and trailing == b"", rs
PY
n=$(metric "$MP" 'gpuwhy_gate_rejected_total{reason="bad_content_length"}')
[ "${n:-0}" = 14 ] || fail "bad Content-Length refusals counted: ${n:-none} (expected 14)"
grep -q '"status":400,.*"reason":"the request'"'"'s Content-Length is not a number' "$T/access-f.jsonl" ||
	fail "no access log line for a bad Content-Length"
echo "gate_framing: ok"
