#!/usr/bin/env bash
# Benchmark: `gpuwhy --sim h100x8-nvlink exporter` against Debian's
# prometheus-node-exporter serving its own metrics, in the same run, on
# loopback: wrk requests/s and p99 latency (plain and gzip, as Prometheus
# asks), response size, RSS, CPU per request, and the exporter's own CPU
# while it only samples (1 Hz, nobody scraping).
#
#   GPUWHY=build/gpuwhy bash bench/exporter.sh      (bench/run-all sets GPUWHY)
#
# Prints a results block for bench/README.md; raw wrk output goes to bench/out/.
set -euo pipefail
: "${GPUWHY:?set GPUWHY to the gpuwhy binary}"
DUR=${DUR:-10}     # seconds per wrk run
CONNS=${CONNS:-32} # wrk connections
OUT=${OUT:-bench/out}
mkdir -p "$OUT"
for t in wrk prometheus-node-exporter curl python3; do
	command -v "$t" >/dev/null || { echo "bench/exporter.sh: $t missing (scripts/install-deps --extra)" >&2; exit 77; }
done
T=$(mktemp -d /tmp/gpuwhy-bench-exp.XXXXXX)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$T"
}
trap cleanup EXIT
export GPUWHY_SIM_STATE="$T/simstate"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

"$GPUWHY" --sim h100x8-nvlink exporter --listen 127.0.0.1:0 2>"$T/gw.log" &
GW=$!
PIDS+=($GW)
GW_PORT=
for _ in $(seq 100); do
	GW_PORT=$(sed -n 's|.*serving http://127\.0\.0\.1:\([0-9]*\)/metrics.*|\1|p' "$T/gw.log")
	[ -n "$GW_PORT" ] && break
	sleep 0.1
done
[ -n "$GW_PORT" ] || { echo "gpuwhy exporter did not start: $(cat "$T/gw.log")" >&2; exit 1; }
NE_PORT=$(free_port)
prometheus-node-exporter --web.listen-address="127.0.0.1:$NE_PORT" >"$T/ne.log" 2>&1 &
NE=$!
PIDS+=($NE)
for _ in $(seq 100); do curl -fsS -o /dev/null "http://127.0.0.1:$NE_PORT/metrics" 2>/dev/null && break; sleep 0.1; done

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rss_kb() { awk "/^$2:/{print \$2}" "/proc/$1/status"; }
hz=$(getconf CLK_TCK)

# The exporter alone, sampling 8 GPUs + host at 1 Hz, nobody scraping: CPU share of one core.
IDLE=${IDLE:-30}
c0=$(cpu_ticks "$GW")
sleep "$IDLE"
c1=$(cpu_ticks "$GW")
idle_pct=$(awk -v d=$((c1 - c0)) -v hz="$hz" -v s="$IDLE" 'BEGIN{printf "%.2f", 100*d/hz/s}')

size() { curl -fsS $2 "http://127.0.0.1:$1/metrics" | wc -c; }
declare -A R
# run NAME PORT PID [curl-header]: wrk results into R[NAME,*]
run() {
	local name=$1 port=$2 pid=$3 hdr=${4:-}
	local c0 c1 args=()
	[ -n "$hdr" ] && args=(-H "$hdr")
	curl -fsS -o /dev/null "http://127.0.0.1:$port/metrics" # warm up
	c0=$(cpu_ticks "$pid")
	wrk -t2 -c"$CONNS" -d"${DUR}s" --latency "${args[@]}" "http://127.0.0.1:$port/metrics" >"$OUT/exporter-wrk-$name.txt"
	c1=$(cpu_ticks "$pid")
	R[$name,rps]=$(awk '/^Requests\/sec:/{printf "%.0f", $2}' "$OUT/exporter-wrk-$name.txt")
	R[$name,p99]=$(awk '$1=="99%"{print $2}' "$OUT/exporter-wrk-$name.txt")
	local reqs
	reqs=$(awk '/requests in/{print $1}' "$OUT/exporter-wrk-$name.txt")
	R[$name,cpu_us]=$(awk -v d=$((c1 - c0)) -v hz="$hz" -v n="$reqs" 'BEGIN{printf "%.0f", 1e6*d/hz/n}')
	R[$name,errors]=$(awk '/Non-2xx|Socket errors/{print}' "$OUT/exporter-wrk-$name.txt" | tr '\n' ' ')
}
run gpuwhy "$GW_PORT" "$GW"
run gpuwhy_gzip "$GW_PORT" "$GW" "Accept-Encoding: gzip"
run node "$NE_PORT" "$NE"
run node_gzip "$NE_PORT" "$NE" "Accept-Encoding: gzip"

gw_size=$(size "$GW_PORT" "")
gw_zsize=$(curl -fsS -H 'Accept-Encoding: gzip' "http://127.0.0.1:$GW_PORT/metrics" | wc -c)
ne_size=$(size "$NE_PORT" "")
ne_zsize=$(curl -fsS -H 'Accept-Encoding: gzip' "http://127.0.0.1:$NE_PORT/metrics" | wc -c)
gw_series=$(curl -fsS "http://127.0.0.1:$GW_PORT/metrics" | grep -vc '^#')
ne_series=$(curl -fsS "http://127.0.0.1:$NE_PORT/metrics" | grep -vc '^#')
gw_rss=$(rss_kb "$GW" VmRSS) gw_hwm=$(rss_kb "$GW" VmHWM)
ne_rss=$(rss_kb "$NE" VmRSS) ne_hwm=$(rss_kb "$NE" VmHWM)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1f", (b > 0 ? a / b : 0)}'; }

cat <<EOF
### gpuwhy exporter vs prometheus-node-exporter ($(date -u +%Y-%m-%d))
Machine: $(nproc)-core VM, $(lscpu | sed -n 's/^Model name: *//p'), Debian $(cat /etc/debian_version),
$(prometheus-node-exporter --version 2>&1 | head -1), $(wrk --version 2>&1 | head -1 | cut -d' ' -f1-2).
gpuwhy: \`--sim h100x8-nvlink exporter\` (8 simulated H100, GPM, sampling every 1 s, top 5 processes).
node-exporter: default collectors. Load: \`wrk -t2 -c$CONNS -d${DUR}s --latency\` on 127.0.0.1, one
server at a time (wrk shares the 2 cores with the server).

| | gpuwhy exporter | node-exporter | ratio |
|---|---|---|---|
| series per scrape | $gw_series | $ne_series | |
| body, plain / gzip (bytes) | $gw_size / $gw_zsize | $ne_size / $ne_zsize | |
| requests/s, plain | ${R[gpuwhy,rps]} | ${R[node,rps]} | $(ratio "${R[gpuwhy,rps]}" "${R[node,rps]}")x |
| p99 latency, plain | ${R[gpuwhy,p99]} | ${R[node,p99]} | |
| requests/s, gzip | ${R[gpuwhy_gzip,rps]} | ${R[node_gzip,rps]} | $(ratio "${R[gpuwhy_gzip,rps]}" "${R[node_gzip,rps]}")x |
| p99 latency, gzip | ${R[gpuwhy_gzip,p99]} | ${R[node_gzip,p99]} | |
| server CPU per request, plain / gzip (µs) | ${R[gpuwhy,cpu_us]} / ${R[gpuwhy_gzip,cpu_us]} | ${R[node,cpu_us]} / ${R[node_gzip,cpu_us]} | |
| RSS after the runs / peak (MB) | $(awk -v a="$gw_rss" 'BEGIN{printf "%.1f", a/1024}') / $(awk -v a="$gw_hwm" 'BEGIN{printf "%.1f", a/1024}') | $(awk -v a="$ne_rss" 'BEGIN{printf "%.1f", a/1024}') / $(awk -v a="$ne_hwm" 'BEGIN{printf "%.1f", a/1024}') | $(ratio "$ne_hwm" "$gw_hwm")x smaller peak |
| CPU while sampling, no scrapes (${IDLE} s) | ${idle_pct} % of one core | | |
EOF
for k in gpuwhy gpuwhy_gzip node node_gzip; do
	[ -n "${R[$k,errors]}" ] && echo "wrk errors ($k): ${R[$k,errors]}"
done
true
