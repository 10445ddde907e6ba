#!/usr/bin/env bash
# gpuwhy fleet against a real Prometheus on loopback: a simulated fleet (`gpuwhy sim fleet`,
# nodes of 8 GPUs, on node01 a data-starved job, a thermal GPU and a lost GPU) of each size in
# FLEET_BENCH_GPUS (default "8 16 32 64") over FLEET_BENCH_HOURS (6) at FLEET_BENCH_STEP (15 s),
# loaded with promtool. For each: fetch, diagnosis and report time (gpuwhy's --timings), peak
# RSS (/usr/bin/time -v), at --parallel 1 and 4, and plain curl fetching the same series over
# the same range and step (one POST per metric and 10,000-step chunk, one at a time and 4 at a
# time), as ratios; then what growing linearly in GPUs x time gives for 1,000 GPUs over 24 h.
# Usage: bench/fleet.sh [BUILD_DIR]   (run it nice'd: it loads both cores)
set -euo pipefail
SRC=${GPUWHY_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
BUILD=${1:-${GPUWHY_BUILD:-$SRC/build}}
G=$BUILD/gpuwhy
SIZES=${FLEET_BENCH_GPUS:-8 16 32 64}
HOURS=${FLEET_BENCH_HOURS:-6}
STEP=${FLEET_BENCH_STEP:-15}
for t in prometheus promtool curl python3 /usr/bin/time; do
	command -v $t >/dev/null || { echo "bench/fleet.sh: $t missing (scripts/install-deps --extra)" >&2; exit 77; }
done
W=$(mktemp -d /tmp/gpuwhy-fleet-bench.XXXXXX)
PROM=
cleanup() { [ -n "$PROM" ] && kill "$PROM" 2>/dev/null; wait 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT
# Problems on node01 at fixed shares of the range, so every size has the same ones.
awk -v h="$HOURS" 'BEGIN {
	printf "{\"plants\": [\n"
	printf " {\"kind\": \"data-starved\", \"node\": \"node01\", \"gpus\": \"0-3\", \"from_h\": %g, \"to_h\": %g, \"job\": \"a\"},\n", h / 4, h / 2
	printf " {\"kind\": \"thermal\", \"node\": \"node01\", \"gpus\": \"5\", \"from_h\": %g, \"to_h\": %g},\n", h / 2, 3 * h / 4
	printf " {\"kind\": \"gpu-lost\", \"node\": \"node01\", \"gpus\": \"7\", \"at_h\": %g}\n", 3 * h / 4
	printf "]}\n" }' >"$W/plant.json"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now() { date +%s.%N; }
METRICS="DCGM_FI_DEV_GPU_UTIL DCGM_FI_DEV_FB_USED DCGM_FI_DEV_FB_FREE DCGM_FI_DEV_POWER_USAGE
DCGM_FI_DEV_GPU_TEMP DCGM_FI_DEV_SM_CLOCK DCGM_FI_DEV_CLOCK_THROTTLE_REASONS
DCGM_FI_DEV_XID_ERRORS DCGM_FI_PROF_SM_ACTIVE DCGM_FI_DEV_POWER_MGMT_LIMIT"

# curl_fetch URL FROM TO PAR: every metric, in 10,000-step chunks, PAR requests at a time.
curl_fetch() {
	local url=$1 from=$2 to=$3 par=$4
	for m in $METRICS; do
		for ((a = from; a <= to; a += 10000 * STEP)); do
			b=$((a + 9999 * STEP)); [ $b -gt "$to" ] && b=$to
			echo "$m $a $b"
		done
	done | xargs -P "$par" -L 1 sh -c \
		'curl -fsS -o /dev/null --data-urlencode "query=$0" --data-urlencode "start=$1" \
		--data-urlencode "end=$2" --data-urlencode "step='"$STEP"'" '"$url"'/api/v1/query_range'
}

printf '%-5s %5s %9s | %8s %8s %8s %8s | %7s %7s | %8s %7s %8s %8s\n' GPUs hours points \
	"fetch/1" "curl/1" "fetch/4" "curl/4" "ratio/1" "ratio/4" "diagnose" "report" "RSS/1" "RSS/4"
rows=()
for gpus in $SIZES; do
	nodes=$(((gpus + 7) / 8))
	start=$((($(date +%s) - HOURS * 3600 - 600) / STEP * STEP))
	end=$((start + HOURS * 3600))
	rm -rf "$W/data" "$W/fleet.om"
	"$G" sim fleet --nodes $nodes --gpus-per-node $((gpus < 8 ? gpus : 8)) --hours "$HOURS" \
		--step ${STEP}s --start $start --plant "$W/plant.json" -o "$W/fleet.om"
	promtool tsdb create-blocks-from openmetrics "$W/fleet.om" "$W/data" >/dev/null
	rm -f "$W/fleet.om"
	port=$(free_port)
	prometheus --config.file=/dev/null --storage.tsdb.path="$W/data" \
		--storage.tsdb.retention.time=30d --web.listen-address=127.0.0.1:$port >"$W/prom.log" 2>&1 &
	PROM=$!
	url=http://127.0.0.1:$port
	for _ in $(seq 600); do curl -fsS -o /dev/null "$url/-/ready" 2>/dev/null && break; sleep 0.2; done
	# one warm-up pass so that both sides read from the page cache
	curl_fetch "$url" $start $end 4
	declare -A fetch diag rep rss
	for par in 1 4; do
		/usr/bin/time -v "$G" fleet --prometheus "$url" --from $start --to $end --step ${STEP}s \
			--parallel $par --timings -o /dev/null 2>"$W/time$par" || [ $? = 1 ]
		read -r f d r < <(sed -n 's/.*fetch \([0-9.]*\) s, diagnosis \([0-9.]*\) s, report \([0-9.]*\) s/\1 \2 \3/p' "$W/time$par")
		fetch[$par]=$f diag[$par]=$d rep[$par]=$r
		rss[$par]=$(awk '/Maximum resident/ {printf "%.0f", $NF / 1024}' "$W/time$par")
	done
	t=$(now); curl_fetch "$url" $start $end 1; c1=$(echo "$(now) - $t" | bc -l)
	t=$(now); curl_fetch "$url" $start $end 4; c4=$(echo "$(now) - $t" | bc -l)
	kill $PROM; wait $PROM 2>/dev/null || true; PROM=
	points=$((gpus * (HOURS * 3600 / STEP + 1)))
	printf '%-5s %5s %9s | %8.2f %8.2f %8.2f %8.2f | %7.2f %7.2f | %8.3f %7.3f %6s MB %5s MB\n' \
		$gpus $HOURS $points ${fetch[1]} $c1 ${fetch[4]} $c4 \
		"$(echo "${fetch[1]} / $c1" | bc -l)" "$(echo "${fetch[4]} / $c4" | bc -l)" \
		${diag[1]} ${rep[1]} ${rss[1]} ${rss[4]}
	rows+=("$points ${fetch[1]} ${diag[1]} ${rss[1]}")
done
# Linear in GPUs x time: the slope between the two largest sizes, from the largest to 1,000
# GPUs over 24 h at the step.
[ ${#rows[@]} -ge 2 ] || exit 0
read -r p1 f1 d1 m1 <<<"${rows[-2]}"
read -r p2 f2 d2 m2 <<<"${rows[-1]}"
big=$((1000 * (86400 / STEP + 1)))
x() { echo "$2 + ($2 - $1) * ($big - $p2) / ($p2 - $p1)" | bc -l; }
echo
printf 'per 1,000 points of one metric (between the two largest): fetch %.3f s, diagnosis %.4f s, RSS %.2f MB\n' \
	"$(echo "($f2 - $f1) * 1000 / ($p2 - $p1)" | bc -l)" "$(echo "($d2 - $d1) * 1000 / ($p2 - $p1)" | bc -l)" \
	"$(echo "($m2 - $m1) * 1000 / ($p2 - $p1)" | bc -l)"
printf 'linear to 1,000 GPUs x 24 h (%d points per metric): fetch %.0f s, diagnosis %.1f s, RSS %.0f MB (--parallel 1)\n' \
	$big "$(x "$f1" "$f2")" "$(x "$d1" "$d2")" "$(x "$m1" "$m2")"
