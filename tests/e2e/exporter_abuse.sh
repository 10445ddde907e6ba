#!/usr/bin/env bash
# gpuwhy exporter under abuse: oversized headers, slowloris, thousands of
# connections, other methods, path traversal, garbage. After each attack the
# exporter must still be running and answer a normal scrape.
set -u
: "${GPUWHY:?GPUWHY must name the gpuwhy binary}"
T=$(mktemp -d /tmp/gpuwhy-exp-abuse.XXXXXX)
EXP=
cleanup() {
	[ -n "$EXP" ] && kill "$EXP" 2>/dev/null && wait "$EXP" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$T/exp.log" ] && tail -5 "$T/exp.log" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
export GPUWHY_SIM_STATE="$T/simstate"
unset GPUWHY_NVML GPUWHY_SIM_SCENARIO GPUWHY_GPUS

command -v curl >/dev/null || skip "curl missing"
command -v python3 >/dev/null || skip "python3 missing"
"$GPUWHY" sim list 2>/dev/null | grep -qx h100x8-nvlink || skip "simulated GPU scenario h100x8-nvlink not built"

# Start on an ephemeral loopback port; the exporter prints the one it got.
"$GPUWHY" --sim h100x8-nvlink exporter --listen 127.0.0.1:0 --request-timeout 2 \
	2>"$T/exp.log" &
EXP=$!
PORT=
for _ in $(seq 100); do
	PORT=$(sed -n 's|.*serving http://127\.0\.0\.1:\([0-9]*\)/metrics.*|\1|p' "$T/exp.log")
	[ -n "$PORT" ] && break
	kill -0 "$EXP" 2>/dev/null || fail "exporter exited at start"
	sleep 0.1
done
[ -n "$PORT" ] || fail "exporter did not report its port"
URL="http://127.0.0.1:$PORT"

scrape_ok() {
	kill -0 "$EXP" 2>/dev/null || fail "exporter died after: $1"
	local n
	n=$(curl -fsS --max-time 10 "$URL/metrics" | grep -c '^DCGM_FI_DEV_GPU_TEMP{') ||
		fail "no normal scrape after: $1"
	[ "$n" = 8 ] || fail "after $1: $n GPU_TEMP series, expected 8"
	[ "$(curl -fsS --max-time 5 "$URL/health")" = OK ] || fail "/health after: $1"
}
scrape_ok "start"

# One python3 helper does the socket work; each mode prints what it saw.
cat >"$T/abuse.py" <<'PY'
import resource, socket, sys, time
host, port, mode = "127.0.0.1", int(sys.argv[1]), sys.argv[2]

def conn():
    s = socket.create_connection((host, port), timeout=10)
    return s

def exchange(raw, wait=5.0):
    s = conn()
    try:
        s.sendall(raw)
    except OSError:
        pass  # the server may refuse before reading it all
    s.settimeout(wait)
    data = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
    except OSError:
        pass
    s.close()
    return data

def status(data):
    try:
        return int(data.split(b" ", 2)[1])
    except Exception:
        return 0

if mode == "bigheader":
    # 1 MiB in one header, then 10000 small headers, then a 100 KiB path.
    r1 = exchange(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (1 << 20) + b"\r\n\r\n")
    r2 = exchange(b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: v\r\n" % i for i in range(10000)) + b"\r\n")
    r3 = exchange(b"GET /" + b"a" * 100000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    for r in (r1, r2, r3):
        print(status(r), b"# TYPE" in r)

elif mode == "slowloris":
    # 100 clients each trickle a header line every 0.5 s and never finish.
    socks = []
    for _ in range(100):
        s = conn()
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        s.setblocking(False)
        socks.append(s)
    start = time.time()
    closed = set()
    while time.time() - start < 8 and len(closed) < len(socks):
        for i, s in enumerate(socks):
            if i in closed:
                continue
            try:
                s.send(b"X-Slow: 1\r\n")
                if s.recv(1024) == b"":
                    closed.add(i)
            except BlockingIOError:
                pass
            except OSError:
                closed.add(i)
        # A real scrape in the middle of the attack is answered at once.
        if abs(time.time() - start - 1.0) < 0.3 and not hasattr(sys, "probed"):
            sys.probed = True
            r = exchange(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            print("during", status(r))
        time.sleep(0.5)
    print("closed", len(closed), "of", len(socks), "after %.1f s" % (time.time() - start))

elif mode == "flood":
    # Thousands of connections at once, held open for a second, then dropped.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
    socks, failed = [], 0
    for _ in range(3000):
        try:
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex((host, port))
            socks.append(s)
        except OSError:
            failed += 1
    time.sleep(1.0)
    for s in socks:
        s.close()
    print("opened", len(socks), "failed", failed)

elif mode == "methods":
    for m in (b"POST", b"PUT", b"DELETE", b"PATCH", b"OPTIONS", b"TRACE", b"PROPFIND", b"BREW"):
        r = exchange(m + b" /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello")
        print(m.decode(), status(r), b"Allow: GET, HEAD" in r)
    r = exchange(b"CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    print("CONNECT", status(r), b"SSH" not in r)

elif mode == "traversal":
    for p in (b"/../../../../etc/passwd", b"/%2e%2e/%2e%2e/etc/passwd", b"//etc/passwd",
              b"/metrics/../../../etc/passwd", b"/..%2f..%2fetc%2fpasswd", b"/etc/passwd",
              b"http://127.0.0.1/etc/passwd", b"/metrics%00.html", b"/./metrics",
              b"/proc/self/environ", b"/.git/config"):
        r = exchange(b"GET " + p + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        leak = b"root:" in r or b"PATH=" in r or b"[core]" in r
        print(p.decode(), status(r), "LEAK" if leak else "clean")

elif mode == "garbage":
    for raw in (b"\x00\x01\x02\xff" * 1000, b"GET\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n",
                b"G\x00T /metrics HTTP/1.1\r\n\r\n", b"\r\n" * 5000, b"GET /metrics HTTP/1.1\r\n"):
        r = exchange(raw, wait=4)
        print(status(r))
PY
abuse() { timeout 60 python3 "$T/abuse.py" "$PORT" "$1" 2>&1; }

# Oversized request headers and paths: refused, never served.
out=$(abuse bigheader)
while read -r st served; do
	case "$st" in 400|413|414|431|0) ;; *) fail "oversized request got status $st" ;; esac
	[ "$served" = False ] || fail "oversized request was served /metrics"
done <<<"$out"
scrape_ok "oversized headers"

# Slowloris: a scrape during the attack works, and every trickling client is
# cut off after --request-timeout (2 s), though each keeps sending.
out=$(abuse slowloris)
echo "$out" | grep -qx "during 200" || fail "no scrape during slowloris: $out"
echo "$out" | grep -q "^closed 100 of 100" || fail "slowloris clients not all closed: $out"
scrape_ok "slowloris"

# Thousands of connections at once.
out=$(abuse flood)
echo "$out" | grep -q "^opened" || fail "flood helper: $out"
for _ in $(seq 30); do curl -fsS --max-time 2 -o /dev/null "$URL/health" 2>/dev/null && break; sleep 0.5; done
scrape_ok "3000 connections"

# Methods other than GET/HEAD: 405 with Allow, the body never read.
out=$(abuse methods)
while read -r m st allow; do
	if [ "$m" = CONNECT ]; then
		case "$st" in 400|405) ;; *) fail "CONNECT got status $st" ;; esac
		[ "$allow" = True ] || fail "CONNECT reached another port"
		continue
	fi
	[ "$st" = 405 ] || fail "$m got status $st, expected 405"
	[ "$allow" = True ] || fail "$m: no Allow: GET, HEAD"
done <<<"$out"
scrape_ok "other methods"

# Path traversal: 404 (or 400), never a file.
out=$(abuse traversal)
echo "$out" | grep -q LEAK && fail "a path reached the file system: $out"
while read -r p st _; do
	case "$st" in 400|404) ;; *) fail "$p got status $st" ;; esac
done <<<"$out"
scrape_ok "path traversal"

# Garbage bytes and malformed request lines.
abuse garbage >/dev/null
scrape_ok "garbage requests"

# HEAD works and has no body.
hdr=$(curl -fsS -I "$URL/metrics") || fail "HEAD /metrics"
echo "$hdr" | grep -qi '^content-type: text/plain; version=0.0.4; charset=utf-8' || fail "HEAD content type: $hdr"

# Still the same process, and it stops cleanly on SIGTERM.
kill -TERM "$EXP"
for _ in $(seq 50); do kill -0 "$EXP" 2>/dev/null || break; sleep 0.1; done
kill -0 "$EXP" 2>/dev/null && fail "exporter did not stop on SIGTERM"
wait "$EXP"
rc=$?
EXP=
[ "$rc" = 0 ] || fail "exit status $rc after SIGTERM"
echo "exporter_abuse: ok"
