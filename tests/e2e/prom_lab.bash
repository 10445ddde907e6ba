# A real Prometheus on loopback for the e2e tests of exporters and fleet, sourced after
# lib.bash: free_port, prom_start (scraping given targets every second) and prom_q.

# free_port: a TCP port free on 127.0.0.1 now.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# prom_config HOST:PORT...: a configuration scraping them every second, one job, on stdout.
prom_config() {
	echo "global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}"
	echo "scrape_configs:"
	echo "  - job_name: gpu"
	echo "    static_configs:"
	local t
	for t in "$@"; do echo "      - targets: ['$t']"; done
}

# prom_start: Prometheus with $T/prom.yml and its data in $T/data, killed at exit; sets URL
# once it answers ready (waits on the answer, not on time; fails after about 2 min of tries).
prom_start() {
	local pp
	pp=$(free_port)
	prometheus --config.file="$T/prom.yml" --storage.tsdb.path="$T/data" \
		--web.listen-address="127.0.0.1:$pp" >"$T/prom.log" 2>&1 &
	PIDS_TO_KILL+=($!)
	URL=http://127.0.0.1:$pp
	for _ in $(seq 600); do curl -fsS -o /dev/null "$URL/-/ready" 2>/dev/null && break; sleep 0.2; done
	curl -fsS -o /dev/null "$URL/-/ready" || fail "prometheus did not start: $(tail -3 "$T/prom.log")"
}

# prom_q PROMQL: how many series the instant query gives, and the least value (0 when none).
prom_q() {
	curl -fsS --data-urlencode "query=$1" "$URL/api/v1/query" |
		python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(len(r), min([float(x["value"][1]) for x in r] or [0]))'
}
