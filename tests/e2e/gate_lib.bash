# Shared by the gate_*.sh tests: start sim serve and the gate on free
# loopback ports and stop them at exit. Source after setting T (a temp dir).
: "${GPUWHY:?GPUWHY must name the gpuwhy binary}"
export GPUWHY_SIM_STATE="$T/simstate"
unset GPUWHY_NVML GPUWHY_SIM_SCENARIO GPUWHY_GPUS
GATE_PIDS=()
LOAD="python3 $(dirname "${BASH_SOURCE[0]}")/gate_load.py"

gate_cleanup() {
	local p
	for p in "${GATE_PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${GATE_PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
	# Under the sanitizers, a report at any process's exit fails the test.
	local bad
	bad=$(grep -l 'ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error:' "$T"/*.log 2>/dev/null)
	if [ -n "$bad" ]; then
		echo "FAIL: sanitizer report in $bad" >&2
		grep -h -A8 'ERROR: \|runtime error:' $bad >&2
		rm -rf "$T"
		exit 1
	fi
	rm -rf "$T"
}
trap gate_cleanup EXIT
fail() {
	echo "FAIL: $*" >&2
	for f in "$T"/*.log; do
		[ -f "$f" ] && { echo "--- $f" >&2; tail -5 "$f" >&2; }
	done
	exit 1
}
skip() { echo "SKIP: $*" >&2; exit 77; }
command -v curl >/dev/null || skip "curl missing"
command -v python3 >/dev/null || skip "python3 missing"
"$GPUWHY" sim list 2>/dev/null | grep -qx h100x1 || skip "simulated GPU scenario h100x1 not built"

# wait_port LOG PATTERN: print the port a process announced in LOG.
wait_port() {
	local log=$1 what=$2 port= i
	for i in $(seq 150); do
		port=$(sed -n "s|.*$what.*(port \([0-9]*\)).*|\1|p" "$log" | head -1)
		[ -n "$port" ] && { echo "$port"; return 0; }
		sleep 0.1
	done
	return 1
}

# start_sim NAME [sim serve options]: sets SIM_PORT and SIM_PID_<NAME>.
start_sim() {
	local name=$1
	shift
	"$GPUWHY" --sim "${SCEN:-h100x1}" sim serve --listen 127.0.0.1:0 "$@" 2>"$T/sim-$name.log" &
	local pid=$!
	GATE_PIDS+=("$pid")
	eval "SIM_PID_$name=$pid"
	SIM_PORT=$(wait_port "$T/sim-$name.log" "listening on") || fail "sim serve $name did not start"
}

# start_gate NAME [gate options]: sets GATE_PORT, METRICS_PORT, GATE_PID_<NAME>.
start_gate() {
	local name=$1
	shift
	"$GPUWHY" --sim "${SCEN:-h100x1}" gate --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 \
		--access-log "$T/access-$name.jsonl" "$@" 2>"$T/gate-$name.log" &
	local pid=$!
	GATE_PIDS+=("$pid")
	eval "GATE_PID_$name=$pid"
	GATE_PORT=$(wait_port "$T/gate-$name.log" "serving") || fail "gate $name did not start"
	METRICS_PORT=$(wait_port "$T/gate-$name.log" "metrics on") || fail "gate $name: no metrics port"
}

# metric PORT SERIES: the value of one series (exact name and labels).
metric() {
	curl -fsS --max-time 10 "http://127.0.0.1:$1/metrics" | awk -v s="$2" '$1 == s { print $2 }'
}

# code URL [curl args]: the HTTP status only.
code() {
	local url=$1
	shift
	curl -s -o /dev/null -w '%{http_code}' --max-time 30 "$@" "$url"
}

jq_py() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
