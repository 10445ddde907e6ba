# A real Prometheus on loopback holding a simulated cluster's history, for the
# tests of gpuwhy's Prometheus faces (sourced after lib.bash). fleet_prom_up
# writes 4 nodes x 8 GPUs x 6 h at 30 s with the problems of
# tests/fixtures/fleet_plant.json, loads them with promtool and starts
# Prometheus; it sets START, END, STEP and URL. PLANT names another plant
# file. Skips (77) without
# prometheus, promtool, python3 or curl.
command -v prometheus >/dev/null || skip "prometheus missing (scripts/install-deps --extra)"
command -v promtool >/dev/null || skip "promtool missing (scripts/install-deps --extra)"
command -v python3 >/dev/null || skip "python3 missing"
command -v curl >/dev/null || skip "curl missing"
SRC=${GPUWHY_SRC:-$(dirname "$0")/../..}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

fleet_prom_up() {
	# Six hours ending about now (Prometheus drops blocks beyond its retention).
	STEP=30
	START=$((($(date +%s) - 6 * 3600) / STEP * STEP))
	END=$((START + 6 * 3600))
	"$GPUWHY" sim fleet --nodes 4 --gpus-per-node 8 --hours 6 --step ${STEP}s --start $START \
		--plant "${PLANT:-$SRC/tests/fixtures/fleet_plant.json}" -o "$T/fleet.om" || fail "sim fleet"
	promtool tsdb create-blocks-from openmetrics "$T/fleet.om" "$T/data" >"$T/promtool.log" 2>&1 ||
		fail "promtool: $(tail -3 "$T/promtool.log")"
	local port
	port=$(free_port)
	prometheus --config.file=/dev/null --storage.tsdb.path="$T/data" \
		--web.listen-address="127.0.0.1:$port" >"$T/prom.log" 2>&1 &
	PIDS_TO_KILL+=($!)
	URL=http://127.0.0.1:$port
	for _ in $(seq 300); do curl -fsS -o /dev/null "$URL/-/ready" 2>/dev/null && break; sleep 0.2; done
	curl -fsS -o /dev/null "$URL/-/ready" || fail "prometheus did not start: $(tail -3 "$T/prom.log")"
}
