# A GPU that falls off the bus (h100x1-lost: Xid 79 at 5 s) can no longer be
# read: the exporter's findings about it end with the loss, and only the
# fault stays (gpu_fault from the rules, gpu_lost from the live check), while
# the window still holds the minutes before it (a starved job, a shared GPU).
. "$(dirname "$0")/lib.bash"
have_sim || skip "simulated GPU not built"
command -v curl >/dev/null || skip "curl missing"
"$GPUWHY" --sim h100x1-lost exporter --listen 127.0.0.1:0 2>"$T/log" &
PIDS_TO_KILL+=($!)
PORT=
for _ in $(seq 100); do
	PORT=$(sed -n 's|.*serving http://127\.0\.0\.1:\([0-9]*\)/metrics.*|\1|p' "$T/log")
	[ -n "$PORT" ] && break
	sleep 0.1
done
[ -n "$PORT" ] || fail "exporter did not start: $(cat "$T/log")"
# a one-worker job: the GPU waits on its data until the loss ends it
"$GPUWHY" --sim h100x1-lost sim train --workers 1 --cpu-ms 80 --gpu-ms 20 --steps 1200 >/dev/null 2>&1 &
PIDS_TO_KILL+=($!)
scrape() { curl -fsS "http://127.0.0.1:$PORT/metrics" | grep '^gpuwhy_finding{' | sort; }
before=
for _ in $(seq 240); do
	before=$(scrape)
	printf '%s\n' "$before" | grep -q 'rule="gpu_lost"' && break
	sleep 0.25
done
printf '%s\n' "$before" | grep -q 'rule="gpu_lost"' || fail "no gpu_lost: $before"
# the same three scrapes after the loss: the fault, and nothing else about GPU 0
want='gpuwhy_finding{gpu="0",rule="gpu_fault",severity="error"} 1
gpuwhy_finding{gpu="0",rule="gpu_lost",severity="error"} 1'
for k in 1 2 3; do
	assert_eq "$(scrape)" "$want" "findings after the loss, scrape $k"
	sleep 1
done
echo "1 passed, 0 failed"
