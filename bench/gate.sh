#!/usr/bin/env bash
# bench/gate.sh [BUILD] [SECONDS]: `gpuwhy gate` in one run on this machine.
#
# 1. Proxy overhead: GET /health on `gpuwhy sim serve` (no simulated work)
#    with wrk, directly, through the gate (pass-through; its default
#    workers, and --workers 1) and through Debian's nginx (one worker,
#    proxy_pass to a keepalive upstream).
#    One connection gives the added latency (p50, p99 minus direct); 16
#    connections give requests/s.
# 2. Batching: POST /v1/embeddings (one input each) on sim serve with
#    --batch-ms 20 --item-ms 2 (one batch on the GPU at a time) from 1, 8
#    and 64 closed-loop clients, pass-through vs --goal latency vs --goal
#    throughput: requests/s, p50/p99 latency, mean inputs per upstream batch
#    and the simulated GPU's utilization and SM activity while it ran.
# GATE_BENCH_ONLY=overhead runs part 1 alone.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
SECS=${2:-5}
G=$(realpath "$BUILD/gpuwhy")
command -v wrk >/dev/null || { echo "wrk missing: scripts/install-deps --extra"; exit 77; }
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || { echo "nginx missing: scripts/install-deps --extra"; exit 77; }
W=$(mktemp -d /tmp/gw-bench-gate-XXXXXX)
export GPUWHY_SIM_STATE=$W/sim
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT
port_of() {
	local i p
	for i in $(seq 100); do
		p=$(sed -n "s|.*$2.*(port \([0-9]*\)).*|\1|p" "$1" | head -1)
		[ -n "$p" ] && { echo "$p"; return; }
		sleep 0.1
	done
	echo "no port in $1" >&2
	exit 1
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
sim() { # sim NAME OPTIONS...: sets PORT
	local n=$1
	shift
	"$G" --sim h100x1 sim serve --listen 127.0.0.1:0 "$@" >/dev/null 2>"$W/sim-$n.log" &
	PIDS+=($!)
	PORT=$(port_of "$W/sim-$n.log" "listening on")
}
gate() { # gate NAME OPTIONS...: sets PORT
	local n=$1
	shift
	"$G" --sim h100x1 gate --listen 127.0.0.1:0 --metrics-listen off --access-log off \
		--user-concurrency 256 --user-queue 1024 --max-inflight 256 \
		--max-inflight-per-upstream 256 "$@" >/dev/null 2>"$W/gate-$n.log" &
	PIDS+=($!)
	PORT=$(port_of "$W/gate-$n.log" "serving")
}
# cpu_ticks PID...: user+system clock ticks of those processes so far
cpu_ticks() {
	local t=0 p
	for p in "$@"; do
		t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
	done
	echo "$t"
}
# wrk_run URL CONNS [LUA [PID...]]: "rps p50 p99 non2xx ok cpu_us_per_request"
# (p50/p99 in ms; the CPU is that of the PIDs, the proxy's, during the run:
# a figure another process on the machine cannot inflate, unlike req/s).
wrk_run() {
	local url=$1 c=$2 lua=${3:-}
	shift 3 2>/dev/null || shift $#
	local t0
	t0=$(cpu_ticks "$@")
	wrk -t1 -c"$c" -d"${SECS}s" --latency ${lua:+-s "$lua"} "$url" >"$W/wrk.out" 2>&1
	local t1
	t1=$(cpu_ticks "$@")
	python3 - "$W/wrk.out" "$((t1 - t0))" "$(getconf CLK_TCK)" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
ticks, hz = int(sys.argv[2]), int(sys.argv[3])
def ms(v):
    m = re.match(r"([\d.]+)(us|ms|s)", v)
    return float(m.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[m.group(2)]
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", t).group(1))
p50 = ms(re.search(r"^\s+50%\s+(\S+)", t, re.M).group(1))
p99 = ms(re.search(r"^\s+99%\s+(\S+)", t, re.M).group(1))
non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", t)
errs = re.search(r"Socket errors: (.*)", t)
n = int(re.search(r"(\d+) requests in", t).group(1))
cpu_us = ticks * 1e6 / hz / n if n else 0
print("%.1f %.4f %.4f %s %s %.1f" % (rps, p50, p99, non2xx.group(1) if non2xx else 0, "err" if errs else "ok", cpu_us))
PY
}

echo "machine: $(nproc) CPUs, $(uname -r), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo); $(date -u +%F)"

# ---------------------------------------------------------------- overhead
sim fast --batch-ms 0 --item-ms 0
UP=$PORT
gate pass --upstream "http://127.0.0.1:$UP@0"
GP=$PORT
GATE_PID=${PIDS[-1]}
gate pass1 --upstream "http://127.0.0.1:$UP@0" --workers 1
GP1=$PORT
GATE1_PID=${PIDS[-1]}
WORKERS=$(sed -n 's/.*gate: \([0-9]*\) event loops*$/\1/p' "$W/gate-pass.log" | head -1)
NP=$(free_port)
mkdir -p "$W/nginx"
cat >"$W/nginx/nginx.conf" <<NGX
worker_processes 1;
daemon off;
user root;
pid $W/nginx/nginx.pid;
error_log $W/nginx/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $W/nginx/cb;
  proxy_temp_path $W/nginx/pt;
  fastcgi_temp_path $W/nginx/ft;
  uwsgi_temp_path $W/nginx/ut;
  scgi_temp_path $W/nginx/st;
  upstream up { server 127.0.0.1:$UP; keepalive 64; }
  server {
    listen 127.0.0.1:$NP;
    location / {
      proxy_pass http://up;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}
NGX
"$NGINX" -c "$W/nginx/nginx.conf" -p "$W/nginx" >/dev/null 2>&1 &
PIDS+=($!)
for i in $(seq 50); do curl -fsS -o /dev/null "http://127.0.0.1:$NP/health" 2>/dev/null && break; sleep 0.1; done
# The master and its worker (whose command line does not name the config).
NGINX_MASTER=$(pgrep -f "$W/nginx/nginx.conf" | head -1)
NGINX_PIDS="$NGINX_MASTER $(pgrep -P "$NGINX_MASTER" | tr '\n' ' ')"

echo
echo "## proxy overhead: GET /health, wrk -t1, ${SECS}s each"
echo
echo "| path | conns | requests/s | p50 ms | p99 ms | added p50 us | added p99 us | vs nginx req/s | proxy CPU us/req | vs nginx CPU |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for c in 1 16; do
	read -r d_rps d_p50 d_p99 _ _ _ < <(wrk_run "http://127.0.0.1:$UP/health" $c "")
	# shellcheck disable=SC2086
	read -r n_rps n_p50 n_p99 _ _ n_cpu < <(wrk_run "http://127.0.0.1:$NP/health" $c "" $NGINX_PIDS)
	read -r g_rps g_p50 g_p99 g_bad _ g_cpu < <(wrk_run "http://127.0.0.1:$GP/health" $c "" "$GATE_PID")
	read -r h_rps h_p50 h_p99 h_bad _ h_cpu < <(wrk_run "http://127.0.0.1:$GP1/health" $c "" "$GATE1_PID")
	python3 - "$c" "${WORKERS:-?}" "$d_rps $d_p50 $d_p99" "$n_rps $n_p50 $n_p99 $n_cpu" "$g_rps $g_p50 $g_p99 $g_cpu" "$h_rps $h_p50 $h_p99 $h_cpu" <<'PY'
import sys
c, workers = sys.argv[1], sys.argv[2]
d, n, g, h = ([float(x) for x in a.split()] for a in sys.argv[3:])
print("| direct | %s | %.0f | %.3f | %.3f | - | - | - | - | - |" % (c, d[0], d[1], d[2]))
print("| nginx proxy_pass | %s | %.0f | %.3f | %.3f | %.0f | %.0f | 1.00x | %.1f | 1.00x |" % (c, n[0], n[1], n[2], (n[1] - d[1]) * 1000, (n[2] - d[2]) * 1000, n[3]))
for name, x in (("gpuwhy gate (%s loops)" % workers, g), ("gpuwhy gate --workers 1", h)):
    print("| %s | %s | %.0f | %.3f | %.3f | %.0f | %.0f | %.2fx | %.1f | %.2fx |" % (name, c, x[0], x[1], x[2], (x[1] - d[1]) * 1000, (x[2] - d[2]) * 1000, x[0] / n[0], x[3], x[3] / n[3] if n[3] else 0))
PY
done

# GATE_BENCH_ONLY=overhead stops here (the quick check while tuning the proxy path).
[ "${GATE_BENCH_ONLY:-}" = overhead ] && exit 0

# ---------------------------------------------------------------- batching
cat >"$W/post.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model":"m","input":["one sentence to embed"]}'
LUA
sim batch --batch-ms 20 --item-ms 2
BP=$PORT
# Two requests (or batches) at the GPU at a time, the rest wait in the gate.
gate b-pass --upstream "http://127.0.0.1:$BP@0" --max-inflight-per-upstream 2
G0=$PORT
gate b-lat --upstream "http://127.0.0.1:$BP@0" --max-inflight-per-upstream 2 --goal latency \
	--batch /v1/embeddings
G1=$PORT
gate b-thr --upstream "http://127.0.0.1:$BP@0" --max-inflight-per-upstream 2 --goal throughput \
	--batch /v1/embeddings
G2=$PORT
stats() { curl -fsS "http://127.0.0.1:$BP/stats" | python3 -c "import json,sys; d=json.load(sys.stdin); print(d['batches'], d['items'])"; }
gpu_mean() { # mean utilization.gpu and gpm.sm_active over the samples in FILE
	python3 - "$1" <<'PY'
import sys
u, s = [], []
for line in open(sys.argv[1]):
    f = [x.strip() for x in line.split(",")]
    try:
        u.append(float(f[0])); s.append(float(f[1]))
    except (ValueError, IndexError):
        pass
print("%.0f %.0f" % (sum(u) / len(u), sum(s) / len(s)) if u else "n/a n/a")
PY
}
echo
echo "## batching: POST /v1/embeddings, one input each; upstream 20 ms + 2 ms per input, one batch at a time; ${SECS}s each"
echo
echo "| clients | mode | requests/s | vs pass-through | p50 ms | p99 ms | inputs per batch | GPU util % | SM active % |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for c in 1 8 64; do
	base=
	for mode in pass latency throughput; do
		case $mode in pass) port=$G0 ;; latency) port=$G1 ;; throughput) port=$G2 ;; esac
		read -r b0 i0 < <(stats)
		"$G" --sim h100x1 query --query-gpu=utilization.gpu,gpm.sm_active \
			--format=csv,noheader,nounits -lms 500 >"$W/gpu.csv" 2>/dev/null </dev/null &
		QP=$!
		read -r rps p50 p99 bad _ _ < <(wrk_run "http://127.0.0.1:$port/v1/embeddings" $c "$W/post.lua")
		kill $QP 2>/dev/null || true
		wait $QP 2>/dev/null || true
		read -r b1 i1 < <(stats)
		read -r util sm < <(gpu_mean "$W/gpu.csv")
		base=${base:-$rps}
		python3 -c "
b, i = $b1 - $b0, $i1 - $i0
print('| $c | $mode | %.0f | %.2fx | %.1f | %.1f | %.1f | $util | $sm |' % ($rps, $rps / $base, $p50, $p99, i / b if b else 0))"
		[ "$bad" = 0 ] || echo "(!) $mode with $c clients: $bad non-2xx answers"
	done
done
