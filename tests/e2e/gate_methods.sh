#!/usr/bin/env bash
# Every method reaches the upstream as sent, with its body, whatever the
# request before it on the same loop was: the gate keeps curl's handles
# (and their options) from one transfer to the next, so a HEAD must not
# leave the next GET without a body, nor a POST leave its body on the
# GET after it. A transfer that failed (the upstream refused one) leaves
# the next ones as they should be.
T=$(mktemp -d)
. "$(dirname "$0")/gate_lib.bash"

# The upstream answers with what it received; /refuse drops the connection.
cat >"$T/echo.py" <<'PY'
import http.server, json
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def any(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        if self.path == "/refuse":
            self.close_connection = True
            self.connection.close()
            return
        out = json.dumps({"m": self.command, "p": self.path, "b": body.decode()}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(out)
    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = do_OPTIONS = any
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print("listening on port (port %d)" % srv.server_address[1], flush=True)
srv.serve_forever()
PY
python3 "$T/echo.py" >"$T/echo.log" 2>&1 &
GATE_PIDS+=("$!")
UP=$(wait_port "$T/echo.log" "listening on") || fail "the echo upstream did not start"
start_gate m --upstream "http://127.0.0.1:$UP" --workers 1
G="http://127.0.0.1:$GATE_PORT"

# got WANT CURL-ARGS...: the upstream saw WANT ("METHOD PATH BODY").
got() {
	local want=$1 out
	shift
	out=$(curl -s --max-time 30 "$@" | jq_py '"%s %s %s" % (d["m"], d["p"], d["b"])')
	[ "$out" = "$want" ] || fail "sent $*: the upstream saw '$out', not '$want'"
}
got "POST /a one" "$G/a" -d one
[ "$(curl -s -o /dev/null -w '%{http_code}' -I "$G/h")" = 200 ] || fail "HEAD"
got "GET /b " "$G/b"
got "PUT /c twelve" -X PUT "$G/c" -d twelve
got "DELETE /d " -X DELETE "$G/d"
got "GET /e?q=1 " "$G/e?q=1"
got "OPTIONS /f " -X OPTIONS "$G/f"
got "POST /g " -X POST "$G/g"
got "PATCH /h x" -X PATCH "$G/h" -d x
[ "$(code "$G/refuse")" = 502 ] || fail "a refused transfer is a 502"
got "GET /i " "$G/i"
got "POST /j two" "$G/j" -d two
echo "ok: methods and bodies pass through a reused handle"
