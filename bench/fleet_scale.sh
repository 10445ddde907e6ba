#!/usr/bin/env bash
# gpuwhy fleet at scale: a day of 125 to 1,000 simulated GPUs at 15 s, served through
# Prometheus's query_range API by bench/fleet_serve.c, which answers from the same description
# `gpuwhy sim fleet` writes (bench/fleet_agree.sh checks it against a real Prometheus: loading
# 58 M points a metric into one with promtool takes hours here). Per size (FLEET_SCALE_NODES,
# default "16 32 63 125" nodes of 8 GPUs, over FLEET_SCALE_HOURS (24) at FLEET_SCALE_STEP
# (15 s)): a first `gpuwhy fleet` run while the server computes its answers (kept, --cache),
# then `gpuwhy fleet --timings` under /usr/bin/time -v at --parallel 1 and 4 (fetch, diagnosis
# and report time, peak RSS), and curl asking exactly the requests gpuwhy made (the server's
# log, one curl process, one at a time and 4 at a time), as ratios.
# Usage: nice -n 15 bench/fleet_scale.sh [BUILD_DIR]
set -euo pipefail
SRC=${GPUWHY_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
BUILD=${1:-${GPUWHY_BUILD:-$SRC/build}}
G=$BUILD/gpuwhy
SIZES=${FLEET_SCALE_NODES:-16 32 63 125}
HOURS=${FLEET_SCALE_HOURS:-24}
STEP=${FLEET_SCALE_STEP:-15}
for t in curl python3 pkg-config /usr/bin/time; do
	command -v $t >/dev/null || { echo "bench/fleet_scale.sh: $t missing" >&2; exit 77; }
done
W=$(mktemp -d /tmp/gpuwhy-fleet-scale.XXXXXX)
SERVE=
cleanup() { [ -n "$SERVE" ] && kill "$SERVE" 2>/dev/null; wait 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT
"$SRC/bench/fleet_build_serve.sh" "$BUILD" "$W/fleet_serve"
# Problems at fixed shares of the range on node01 and node02, the same at every size.
awk -v h="$HOURS" 'BEGIN {
	printf "{\"plants\": [\n"
	printf " {\"kind\": \"idle-holding-memory\", \"node\": \"node01\", \"gpus\": \"0-3\", \"from_h\": %g, \"to_h\": %g, \"job\": \"nb\"},\n", h / 4, h / 2
	printf " {\"kind\": \"thermal\", \"node\": \"node01\", \"gpus\": \"5\", \"from_h\": %g, \"to_h\": %g},\n", h / 2, 3 * h / 4
	printf " {\"kind\": \"gpu-lost\", \"node\": \"node01\", \"gpus\": \"7\", \"at_h\": %g},\n", 3 * h / 4
	printf " {\"kind\": \"straggler\", \"node\": \"node02\", \"gpus\": \"0-7\", \"from_h\": %g, \"to_h\": %g, \"rank\": 3, \"job\": \"b\", \"pod\": \"train-0\", \"namespace\": \"ml\"},\n", h / 8, 7 * h / 8
	printf " {\"kind\": \"power-capped\", \"node\": \"node02\", \"gpus\": \"6\", \"from_h\": %g, \"to_h\": %g}\n", 0.9 * h, h
	printf "]}\n" }' >"$W/plant.json"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now() { date +%s.%N; }
# curl_all URL PAR: every request in $W/asked, PAR at a time, one curl process.
curl_all() {
	awk -v u="$1/api/v1/query_range" '{ if (NR > 1) print "next"; printf "url = \"%s\"\ndata-binary = \"%s\"\noutput = \"/dev/null\"\n", u, $0 }' \
		"$W/asked" >"$W/curl.cfg"
	if [ "$2" = 1 ]; then curl -fsS -K "$W/curl.cfg"; else curl -fsS --no-progress-meter --parallel --parallel-max "$2" -K "$W/curl.cfg"; fi
}
timings() { sed -n 's/.*fetch \([0-9.]*\) s, diagnosis \([0-9.]*\) s, report \([0-9.]*\) s/\1 \2 \3/p' "$1"; }
rss() { awk '/Maximum resident/ {printf "%.0f", $NF / 1024}' "$1"; }
cpu() { awk '/User time|System time/ {s += $NF} END {printf "%.2f", s}' "$1"; }

printf '%-5s %9s %8s | %8s %8s %8s %8s | %7s %7s | %7s %7s | %8s %7s %6s %6s | %9s\n' GPUs points requests \
	"fetch/1" "curl/1" "fetch/4" "curl/4" "ratio/1" "ratio/4" "CPU/1" "curlCPU" "diagnose" "report" "RSS/1" "RSS/4" "computed"
for nodes in $SIZES; do
	gpus=$((nodes * 8))
	start=$((($(date +%s) - HOURS * 3600 - 600) / STEP * STEP))
	end=$((start + HOURS * 3600))
	port=$(free_port)
	url=http://127.0.0.1:$port
	"$W/fleet_serve" --port "$port" --nodes "$nodes" --gpus-per-node 8 --hours "$HOURS" --step "$STEP" \
		--start $start --plant "$W/plant.json" --log "$W/requests" --cache 1 &
	SERVE=$!
	for _ in $(seq 100); do curl -fsS -o /dev/null "$url/-/ready" 2>/dev/null && break; sleep 0.1; done
	fleet() {
		/usr/bin/time -v "$G" fleet --prometheus "$url" --from $start --to $end --step ${STEP}s \
			--parallel "$1" --timings -o /dev/null 2>"$2" || [ $? = 1 ]
	}
	# the first run makes the server compute (and keep) every answer
	fleet 4 "$W/time0"
	read -r f0 _ <<<"$(timings "$W/time0")"
	cp "$W/requests" "$W/asked"
	fleet 1 "$W/time1"
	fleet 4 "$W/time4"
	read -r f1 d1 r1 <<<"$(timings "$W/time1")"
	read -r f4 d4 r4 <<<"$(timings "$W/time4")"
	t=$(now); /usr/bin/time -v -o "$W/curl1" bash -c "$(declare -f curl_all); W=$W; curl_all $url 1"; c1=$(echo "$(now) - $t" | bc -l)
	t=$(now); /usr/bin/time -v -o "$W/curl4" bash -c "$(declare -f curl_all); W=$W; curl_all $url 4"; c4=$(echo "$(now) - $t" | bc -l)
	kill $SERVE; wait $SERVE 2>/dev/null || true; SERVE=
	points=$((gpus * (HOURS * 3600 / STEP + 1)))
	printf '%-5s %9s %8s | %8.2f %8.2f %8.2f %8.2f | %7.2f %7.2f | %7s %7s | %8.3f %7.3f %6s %6s | %9.2f\n' \
		$gpus $points "$(wc -l <"$W/asked")" "$f1" "$c1" "$f4" "$c4" \
		"$(echo "$f1 / $c1" | bc -l)" "$(echo "$f4 / $c4" | bc -l)" "$(cpu "$W/time1")" "$(cpu "$W/curl1")" "$d1" "$r1" \
		"$(rss "$W/time1")" "$(rss "$W/time4")" "$f0"
done
echo "(points: GPU-samples, one per GPU and step, of each of the 10 metrics; RSS in MB; CPU/1 and" \
	"curlCPU: user + system seconds of the whole gpuwhy run at --parallel 1 and of curl one at a time;" \
	"computed: the first run's fetch while the server computed the answers)"
