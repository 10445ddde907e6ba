#!/usr/bin/env bash
# Whether bench/fleet_serve.c answers as a real Prometheus does: one simulated fleet (2 nodes of
# 8 GPUs over FLEET_AGREE_HOURS (2) at 15 s, with a job that starts and ends, a pod, a lost GPU,
# thermal and power-capped GPUs) written by `gpuwhy sim fleet` and loaded with promtool into a
# Prometheus on loopback, and served by fleet_serve from the same description. `gpuwhy fleet`
# runs against both; every request it made (the server's log) is asked of both with curl and
# the answers compared point by point (labels, timestamps, values, the order of the series),
# and so are both runs' JSON reports. Exit 0 when all agree.
# Usage: bench/fleet_agree.sh [BUILD_DIR]
set -euo pipefail
SRC=${GPUWHY_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
BUILD=${1:-${GPUWHY_BUILD:-$SRC/build}}
G=$BUILD/gpuwhy
HOURS=${FLEET_AGREE_HOURS:-2}
STEP=15
for t in prometheus promtool curl python3 pkg-config; do
	command -v $t >/dev/null || { echo "bench/fleet_agree.sh: $t missing (scripts/install-deps --extra)" >&2; exit 77; }
done
W=$(mktemp -d /tmp/gpuwhy-fleet-agree.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; [ -n "${FLEET_AGREE_KEEP:-}" ] || rm -rf "$W"; }
trap cleanup EXIT
"$SRC/bench/fleet_build_serve.sh" "$BUILD" "$W/fleet_serve"
awk -v h="$HOURS" 'BEGIN {
	printf "{\"plants\": [\n"
	printf " {\"kind\": \"idle-holding-memory\", \"node\": \"node01\", \"gpus\": \"0-3\", \"from_h\": %g, \"to_h\": %g, \"job\": \"nb\"},\n", h / 4, h / 2
	printf " {\"kind\": \"thermal\", \"node\": \"node01\", \"gpus\": \"5\", \"from_h\": %g, \"to_h\": %g},\n", h / 2, 3 * h / 4
	printf " {\"kind\": \"gpu-lost\", \"node\": \"node01\", \"gpus\": \"7\", \"at_h\": %g},\n", 3 * h / 4
	printf " {\"kind\": \"straggler\", \"node\": \"node02\", \"gpus\": \"0-7\", \"from_h\": %g, \"to_h\": %g, \"rank\": 3, \"job\": \"b\", \"pod\": \"train-0\", \"namespace\": \"ml\"},\n", h / 8, 7 * h / 8
	printf " {\"kind\": \"power-capped\", \"node\": \"node02\", \"gpus\": \"6\", \"from_h\": %g, \"to_h\": %g}\n", 0.9 * h, h
	printf "]}\n" }' >"$W/plant.json"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
start=$((($(date +%s) - HOURS * 3600 - 600) / STEP * STEP))
end=$((start + HOURS * 3600))
sim=(--nodes 2 --gpus-per-node 8 --hours "$HOURS" --start $start --plant "$W/plant.json")
"$G" sim fleet "${sim[@]}" --step ${STEP}s -o "$W/fleet.om"
promtool tsdb create-blocks-from openmetrics "$W/fleet.om" "$W/data" >/dev/null
pp=$(free_port)
prometheus --config.file=/dev/null --storage.tsdb.path="$W/data" --storage.tsdb.retention.time=30d \
	--web.listen-address=127.0.0.1:$pp >"$W/prom.log" 2>&1 &
PIDS+=($!)
sp=$(free_port)
"$W/fleet_serve" --port "$sp" "${sim[@]}" --step $STEP --log "$W/requests" &
PIDS+=($!)
for u in "http://127.0.0.1:$pp" "http://127.0.0.1:$sp"; do
	for _ in $(seq 600); do curl -fsS -o /dev/null "$u/-/ready" 2>/dev/null && break; sleep 0.2; done
done
run() { "$G" fleet --prometheus "$1" --from $start --to $end --step ${STEP}s --format json -o "$2" || [ $? = 1 ]; }
run "http://127.0.0.1:$pp" "$W/prom.json"
run "http://127.0.0.1:$sp" "$W/serve.json"
# the server logs the replay too: read a copy
cp "$W/requests" "$W/asked"
echo "requests of gpuwhy fleet: $(wc -l <"$W/asked")"
n=0
while read -r form; do
	n=$((n + 1))
	for side in prom serve; do
		port=$pp; [ $side = serve ] && port=$sp
		curl -sS -o "$W/$side.$n" -w '%{http_code}\n' --data-binary "$form" \
			"http://127.0.0.1:$port/api/v1/query_range" >"$W/$side.$n.code"
	done
done <"$W/asked"
python3 - "$W" "$n" <<'PY'
import json, math, sys, urllib.parse
w, n = sys.argv[1], int(sys.argv[2])
bad = 0
def series(path):
    d = json.load(open(path))
    return [(tuple(sorted(s["metric"].items())),
             [(float(t), float(v)) for t, v in s["values"]]) for s in d["data"]["result"]]
def same(a, b):
    return a == b or (math.isnan(a) and math.isnan(b))
points = 0
for i in range(1, n + 1):
    q = urllib.parse.parse_qs(open(f"{w}/asked").read().splitlines()[i - 1])["query"][0]
    codes = [open(f"{w}/{s}.{i}.code").read().strip() for s in ("prom", "serve")]
    if codes != ["200", "200"]:
        print(f"request {i} ({q[:60]}): HTTP {codes}"); bad += 1; continue
    p, s = series(f"{w}/prom.{i}"), series(f"{w}/serve.{i}")
    if [x[0] for x in p] != [x[0] for x in s]:
        print(f"request {i} ({q[:60]}): series differ or in another order: {len(p)} vs {len(s)}")
        bad += 1; continue
    for (lab, a), (_, b) in zip(p, s):
        points += len(a)
        if len(a) != len(b) or any(x[0] != y[0] or not same(x[1], y[1]) for x, y in zip(a, b)):
            print(f"request {i} ({q[:60]}): points differ for {dict(lab)}"); bad += 1; break
r = [json.load(open(f"{w}/{s}.json")) for s in ("prom", "serve")]
for k in ("timings",):
    for x in r: x.pop(k, None)
if r[0] != r[1]:
    print("the JSON reports differ"); bad += 1
print(f"{n} requests, {points} points compared: {'all agree' if not bad else f'{bad} differ'}")
sys.exit(1 if bad else 0)
PY
