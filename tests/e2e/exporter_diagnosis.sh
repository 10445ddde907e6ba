# The exporter's gpuwhy_finding series carries the diagnosis rules: a one-worker
# job on the simulated GPU shows data_starved; an idle healthy GPU shows nothing.
. "$(dirname "$0")/lib.bash"
have_sim || skip "simulated GPU not built"
command -v curl >/dev/null || skip "curl missing"
start() { # LOG -> PORT
	"$GPUWHY" --sim h100x1 exporter --listen 127.0.0.1:0 2>"$1" &
	PIDS_TO_KILL+=($!)
	for _ in $(seq 100); do
		PORT=$(sed -n 's|.*serving http://127\.0\.0\.1:\([0-9]*\)/metrics.*|\1|p' "$1")
		[ -n "$PORT" ] && return 0
		sleep 0.1
	done
	fail "exporter did not start: $(cat "$1")"
}
start "$T/idle.log"
sleep 5
idle=$(curl -fsS "http://127.0.0.1:$PORT/metrics" | grep '^gpuwhy_finding{' || true)
assert_eq "$idle" "" "findings on an idle healthy GPU"
"$GPUWHY" --sim h100x1 sim train --workers 1 --cpu-ms 80 --gpu-ms 20 --steps 1200 >/dev/null 2>&1 &
PIDS_TO_KILL+=($!)
# The GPU waits for its one worker: data_starved, or host_contention where other processes
# (a busy test machine) load the host as much as the job does; both say why the GPU waits.
found=
for _ in $(seq 120); do
	found=$(curl -fsS "http://127.0.0.1:$PORT/metrics" |
		sed -n 's/^gpuwhy_finding{gpu="0",rule="\(data_starved\|host_contention\)",severity="warn"} 1$/\1/p' | head -1)
	[ -n "$found" ] && break
	sleep 0.5
done
[ -n "$found" ] || fail "neither data_starved nor host_contention appeared: $(curl -fsS "http://127.0.0.1:$PORT/metrics" | grep gpuwhy_finding)"
echo "found $found"
echo "1 passed, 0 failed"
