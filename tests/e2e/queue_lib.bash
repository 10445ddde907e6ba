# Shared by tests/e2e/queue_*.sh (sourced, not a test itself).
# Each test gets its own queue directory and simulated-GPU state under one
# temporary folder; on exit the worker is stopped and any process still
# running from that folder is ended and reported, so no test leaves strays.
set -euo pipefail
: "${GPUWHY:?GPUWHY must point at the gpuwhy binary}"
command -v python3 >/dev/null || { echo "python3 missing: skipped"; exit 77; }
command -v sqlite3 >/dev/null || { echo "sqlite3 missing: skipped"; exit 77; }

T=$(mktemp -d /tmp/gw-queue-XXXXXX)
export GPUWHY_QUEUE=$T/q GPUWHY_SIM_STATE=$T/sim
unset CUDA_VISIBLE_DEVICES GPUWHY_GPUS
DB=$GPUWHY_QUEUE/queue.db

q() { "$GPUWHY" queue "$@"; }

# PIDs of processes whose command line mentions our folder (our workers, shims, tasks).
our_pids() {
	local p
	for p in /proc/[0-9]*; do
		[ "${p#/proc/}" = "$$" ] && continue
		tr '\0' ' ' 2>/dev/null <"$p/cmdline" | grep -qF "$T" && echo "${p#/proc/}"
	done
	return 0
}

dump() {
	echo "--- queue ls"; q ls 2>&1 || true
	echo "--- worker log"; cat "$GPUWHY_QUEUE/worker.log" "$T/worker.out" 2>/dev/null | tail -40 || true
}

fail() {
	echo "FAIL: $*" >&2
	dump >&2
	exit 1
}

# Processes a test starts outside the queue (kill by PID at the end).
EXTRA_PIDS=""

cleanup() {
	local rc=$?
	local d
	for d in "$T"/q*; do
		[ -d "$d" ] || continue
		GPUWHY_QUEUE=$d "$GPUWHY" queue cancel --all >/dev/null 2>&1 || true
		GPUWHY_QUEUE=$d "$GPUWHY" queue stop >/dev/null 2>&1 || true
	done
	[ -n "$EXTRA_PIDS" ] && kill $EXTRA_PIDS 2>/dev/null || true
	local left
	for _ in $(seq 50); do
		left=$(our_pids)
		[ -z "$left" ] && break
		sleep 0.1
	done
	# Workers, shims and gpuwhy tasks write sanitizer reports to these logs.
	if grep -rlE "ERROR: (Address|Leak)Sanitizer|runtime error:" "$T"/q*/worker.log \
		"$T"/q*/logs "$T"/worker.out 2>/dev/null; then
		echo "sanitizer reports in the files above:" >&2
		grep -rhE -A12 "ERROR: (Address|Leak)Sanitizer|runtime error:" "$T"/q*/worker.log \
			"$T"/q*/logs "$T"/worker.out 2>/dev/null | head -60 >&2
		[ $rc -eq 0 ] && rc=1
	fi
	if [ -n "$left" ]; then
		echo "stray processes after the test:" >&2
		for p in $left; do echo "  $p $(tr '\0' ' ' </proc/$p/cmdline 2>/dev/null)" >&2; done
		kill -KILL $left 2>/dev/null || true
		[ $rc -eq 0 ] && rc=1
	fi
	[ -n "${GPUWHY_KEEP_TMP:-}" ] && echo "kept $T" >&2 || rm -rf "$T"
	exit $rc
}
trap cleanup EXIT

# json EXPR: evaluate a Python expression over the JSON on stdin (bound to j).
json() { python3 -c "import json,sys; j=json.load(sys.stdin); print($1)"; }
state() { q show "$1" --json | json 'j["task"]["state"]'; }
attempts() { q show "$1" --json | json 'j["task"]["attempts"]'; }

# until_true SECONDS CMD...: poll CMD every 0.1 s.
until_true() {
	local limit=$1; shift
	local end=$((SECONDS + limit))
	until "$@"; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.1
	done
}

# Greatest number of attempts running at the same time, from the attempt records.
max_overlap() {
	sqlite3 "$DB" "SELECT started, 1 FROM attempts WHERE started IS NOT NULL
	               UNION ALL SELECT ended, -1 FROM attempts WHERE ended IS NOT NULL
	               ORDER BY 1, 2;" |
		awk -F'|' '{ n += $2; if (n > m) m = n } END { print m + 0 }'
}

sim_ok() { [ -e "${GPUWHY_BUILD:-$(dirname "$GPUWHY")}/sim/libnvidia-ml.so.1" ]; }
