#!/usr/bin/env bash
# The gate over time: a killed upstream gives 502s and is used again once
# back, without restarting the gate; GPU-aware admission holds work with a
# reason (low free memory, a lost GPU) and routes around a held GPU;
# SIGHUP re-reads the config; SIGTERM drains in-flight requests. GPUs that
# cannot be read stop a gate told @GPU, and a gate without it says so once.
set -u
T=$(mktemp -d /tmp/gpuwhy-gate-recovery.XXXXXX)
. "$(dirname "$0")/gate_lib.bash"

# --- upstream killed and restarted on the same port
start_sim r --batch-ms 5 --item-ms 0
P=$SIM_PORT
start_gate r --upstream "http://127.0.0.1:$P@0"
G="http://127.0.0.1:$GATE_PORT"
[ "$(code "$G/v1/embeddings" -d '{"input":["a"]}')" = 200 ] || fail "before the kill"
kill "$SIM_PID_r"
wait "$SIM_PID_r" 2>/dev/null
for i in 1 2 3; do
	[ "$(code "$G/v1/embeddings" -d '{"input":["a"]}')" = 502 ] || fail "502 while the upstream is down"
done
"$GPUWHY" --sim h100x1 sim serve --listen "127.0.0.1:$P" --batch-ms 5 --item-ms 0 2>"$T/sim-r2.log" &
GATE_PIDS+=($!)
wait_port "$T/sim-r2.log" "listening on" >/dev/null || fail "sim serve did not restart on port $P"
ok=0
for i in $(seq 50); do
	[ "$(code "$G/v1/embeddings" -d '{"input":["a"]}')" = 200 ] && { ok=1; break; }
	sleep 0.1
done
[ $ok = 1 ] || fail "the gate did not recover when the upstream came back"
kill -0 "$GATE_PID_r" || fail "the gate died"

# --- SIGHUP re-reads the config file
printf '{"limits": {"max_body_bytes": 1000}}\n' >"$T/gate.json"
start_gate hup --upstream "http://127.0.0.1:$P@0" --config "$T/gate.json"
H="http://127.0.0.1:$GATE_PORT"
head -c 2000 /dev/zero | tr '\0' a | sed 's/^/{"input":["/; s/$/"]}/' >"$T/body"
[ "$(code "$H/v1/embeddings" --data-binary @"$T/body")" = 413 ] || fail "413 before SIGHUP"
printf '{"limits": {"max_body_bytes": 100000}}\n' >"$T/gate.json"
kill -HUP "$GATE_PID_hup"
for i in $(seq 50); do grep -q "config reloaded" "$T/gate-hup.log" && break; sleep 0.1; done
grep -q "config reloaded" "$T/gate-hup.log" || fail "no reload after SIGHUP"
[ "$(code "$H/v1/embeddings" --data-binary @"$T/body")" = 200 ] || fail "the new limit after SIGHUP"
printf '{"limits": {"max_body_bytes": "big"}}\n' >"$T/gate.json"
kill -HUP "$GATE_PID_hup"
for i in $(seq 50); do grep -q "not reloaded" "$T/gate-hup.log" && break; sleep 0.1; done
grep -q "not reloaded" "$T/gate-hup.log" || fail "a bad config on SIGHUP is reported"
[ "$(code "$H/v1/embeddings" --data-binary @"$T/body")" = 200 ] || fail "a bad reload keeps the old settings"

# --- SIGTERM drains: the request in flight completes, then the gate exits 0
start_sim slow --batch-ms 1500 --item-ms 0
start_gate drain --upstream "http://127.0.0.1:$SIM_PORT@0" --drain-timeout 20s
curl -s -o "$T/drained" -w '%{http_code}' --max-time 30 -d '{"input":["d"]}' \
	"http://127.0.0.1:$GATE_PORT/v1/embeddings" >"$T/drain.code" &
CURL=$!
sleep 0.5
kill -TERM "$GATE_PID_drain"
wait "$CURL"
[ "$(cat "$T/drain.code")" = 200 ] || fail "the in-flight request was not drained: $(cat "$T/drain.code")"
wait "$GATE_PID_drain"
[ $? = 0 ] || fail "the gate's exit status after draining"

# --- GPU-aware admission: too little free memory holds work, with the reason
start_gate mem --upstream "http://127.0.0.1:$P@0" --min-free-mib 90000
body=$(curl -s -D "$T/mem.h" --max-time 10 "http://127.0.0.1:$GATE_PORT/health")
grep -q '^HTTP/1.1 503' "$T/mem.h" || fail "503 while the GPU has too little free memory"
grep -qi '^Retry-After:' "$T/mem.h" || fail "GPU hold without Retry-After"
printf '%s' "$body" | grep -q 'GPU 0 has [0-9]* MiB free, below min_free_mib 90000' ||
	fail "the 503 body says why: $body"
grep -q 'holding new work: .*GPU 0 has' "$T/gate-mem.log" || fail "the log says why"
[ "$(metric "$METRICS_PORT" "gpuwhy_gate_upstream_healthy{upstream=\"http://127.0.0.1:$P\"}")" = 0 ] ||
	fail "healthy gauge"

# --- routing: two servers, one per GPU; GPU 0 has another user's 15 GiB
SCEN=l4x2-foreign
start_sim g0 --batch-ms 100 --item-ms 0 --gpu 0
U0=$SIM_PORT
start_sim g1 --batch-ms 100 --item-ms 0 --gpu 1
U1=$SIM_PORT
start_gate route --upstream "http://127.0.0.1:$U0@0" --upstream "http://127.0.0.1:$U1@1" \
	--min-free-mib 12000
$LOAD "http://127.0.0.1:$GATE_PORT/v1/embeddings" --clients 4 --requests 5 \
	--body '{"input":["r"]}' >"$T/route.json"
grep -q '"status": {"200": 20}' "$T/route.json" || fail "routing: $(cat "$T/route.json")"
n0=$(curl -fsS "http://127.0.0.1:$U0/stats" | jq_py "d['requests']")
n1=$(curl -fsS "http://127.0.0.1:$U1/stats" | jq_py "d['requests']")
[ "$n0" = 0 ] && [ "$n1" = 20 ] || fail "held GPU 0 got $n0 requests, GPU 1 got $n1"
start_gate route2 --upstream "http://127.0.0.1:$U0@0" --upstream "http://127.0.0.1:$U1@1"
# Each request holds its server 100 ms: while one is busy the next goes to the other.
$LOAD "http://127.0.0.1:$GATE_PORT/v1/embeddings" --clients 8 --requests 3 \
	--body '{"input":["r"]}' >"$T/route2.json"
n0b=$(curl -fsS "http://127.0.0.1:$U0/stats" | jq_py "d['requests']")
n1b=$(curl -fsS "http://127.0.0.1:$U1/stats" | jq_py "d['requests']")
[ "$n0b" -gt 0 ] && [ $((n1b - n1)) -gt 0 ] || fail "both healthy upstreams take work ($n0b, $((n1b - n1)))"

# --- a lost GPU: h100x1-lost falls off the bus 5 s after its clock starts
SCEN=h100x1-lost
"$GPUWHY" sim reset h100x1-lost >/dev/null || fail "sim reset"
start_gate lost --upstream "http://127.0.0.1:$P@0" --gpu-interval 200ms
for i in $(seq 100); do
	body=$(curl -s --max-time 10 "http://127.0.0.1:$GATE_PORT/health")
	printf '%s' "$body" | grep -q 'GPU 0 is lost' && break
	sleep 0.2
done
printf '%s' "$body" | grep -q 'GPU 0 is lost' || fail "no 503 for a lost GPU: $body"
# --- GPUs that cannot be read (the simulated GPU refuses to start: a bad clock)
GPUWHY_SIM_TIME=bogus GPUWHY_SIM_QUIET=1 "$GPUWHY" --sim h100x1 gate --listen 127.0.0.1:0 \
	--metrics-listen 127.0.0.1:0 --upstream "http://127.0.0.1:$P@0" >/dev/null 2>"$T/nogpu.log"
rc=$?
[ "$rc" = 3 ] || fail "unreadable GPUs named with @0: exit $rc, wanted 3"
grep -qx 'gpuwhy: --upstream URL@GPU: cannot read the GPUs: .*/h100x1.json: the simulated GPU did not start: Driver Not Loaded (fix the scenario (its error is above)) (drop @GPU to run without GPU awareness)' \
	"$T/nogpu.log" || fail "unreadable GPUs named: $(cat "$T/nogpu.log")"
SCEN=h100x1 GPUWHY_SIM_TIME=bogus GPUWHY_SIM_QUIET=1 start_gate blind --upstream "http://127.0.0.1:$P"
grep -qx 'gpuwhy gate: GPUs not read (.*/h100x1.json: the simulated GPU did not start: Driver Not Loaded (fix the scenario (its error is above))); admission ignores the GPU' \
	"$T/gate-blind.log" || fail "GPU-blind notice: $(cat "$T/gate-blind.log")"
[ "$(code "http://127.0.0.1:$GATE_PORT/v1/embeddings" -d '{"input":["a"]}')" = 200 ] ||
	fail "a GPU-blind gate does not serve"
echo "gate_recovery: ok"
