#!/usr/bin/env bash
# gpuwhy sweep is Ctrl-C safe and resumable: an interrupted sweep marks the
# running configuration interrupted and keeps the finished ones; --resume
# runs only what is left. A sweep killed outright (SIGKILL) takes its run
# with it and the resumed sweep runs that configuration again.
source "$(dirname "$0")/lib.bash"
have_sim || skip "simulated GPU not built"
G=$GPUWHY
D=$T/res
status_of() { python3 -c "
import json; d=json.load(open('$D/sweep.json'))
print(' '.join(r['config']+':'+r['status'] for r in d['runs']))"; }
ndone() { python3 -c "
import json; d=json.load(open('$D/sweep.json'))
print(sum(r['status']=='done' for r in d['runs']))" 2>/dev/null || echo 0; }
# (deadlines by the clock, not by a count of polls: a poll runs python, slow on a busy machine)
wait_done() { # wait_done N: until N runs are done (at most 120 s)
	local end=$((SECONDS + 120))
	while [ "$SECONDS" -lt "$end" ]; do [ "$(ndone)" -ge "$1" ] && return 0; sleep 0.1; done
	fail "never saw $1 runs done: $(status_of)"
}
wait_running() { # wait_running CONFIG: until that run has started (at most 120 s)
	local end=$((SECONDS + 120))
	while [ "$SECONDS" -lt "$end" ]; do
		case " $(status_of 2>/dev/null) " in *" $1:running "*) return 0 ;; esac
		sleep 0.05
	done
	fail "never saw $1 running: $(status_of)"
}

# Each run: 100 steps of 40 ms, about 4 s, long enough for a slow poll to see it
# running; the sweep is stopped early in the third.
"$G" --sim h100x1 sweep -o "$D" --vary workers=1,2,3,4 --interval 100ms -- \
	"$G" sim train --steps 100 --workers {workers} --cpu-ms 1 --gpu-ms 40 >"$T/out1" 2>"$T/err1" &
pid=$!
PIDS_TO_KILL+=("$pid")
wait_running workers=3
kill -INT "$pid"
wait "$pid"
assert_eq "$?" 130 "interrupted sweep's exit status"
grep -q -- "--resume $D" "$T/err1" || fail "no hint to resume: $(cat "$T/err1")"
st=$(status_of)
assert_contains "$st" "workers=1:done" "state after Ctrl-C"
assert_contains "$st" "workers=2:done" "state after Ctrl-C"
assert_contains "$st" "workers=3:interrupted" "state after Ctrl-C"
case "$st" in *running*) fail "a run left running: $st" ;; esac
started1=$(python3 -c "import json; print(json.load(open('$D/sweep.json'))['runs'][0]['started'])")

"$G" sweep --resume "$D" >"$T/out2" 2>"$T/err2"
assert_eq "$?" 0 "resumed sweep: $(cat "$T/err2")"
st=$(status_of)
assert_eq "$st" "workers=1:done workers=2:done workers=3:done workers=4:done" "state after resume"
grep -q 'workers=1 r1' "$T/err2" && fail "a finished run ran again: $(cat "$T/err2")"
assert_eq "$(python3 -c "import json; print(json.load(open('$D/sweep.json'))['runs'][0]['started'])")" \
	"$started1" "the first run's start time"
assert_eq "$(python3 -c "import json; print(len(json.load(open('$D/results.json'))['configurations']))")" 4 \
	"configurations in the results"

# ---- SIGKILL: the run in progress goes with the sweep and is run again ----
K=$T/kill
D=$K
"$G" --sim h100x1 sweep -o "$K" --vary workers=1,2,3 --interval 100ms -- \
	"$G" sim train --steps 100 --workers {workers} --cpu-ms 1 --gpu-ms 40 >/dev/null 2>&1 &
pid=$!
PIDS_TO_KILL+=("$pid")
wait_running workers=2
kill -KILL "$pid"
wait "$pid" 2>/dev/null
# the orphaned run gets SIGTERM from its dead parent; no sim train may stay behind
for _ in $(seq 100); do
	pgrep -f "sim train --steps 100 --workers [23] --cpu-ms 1 --gpu-ms 40" >/dev/null || break
	sleep 0.1
done
pgrep -f "sim train --steps 100 --workers [23] --cpu-ms 1 --gpu-ms 40" >/dev/null && fail "the run outlived its sweep"
"$G" sweep --resume "$K" >/dev/null 2>"$T/err3"
assert_eq "$?" 0 "resume after SIGKILL: $(cat "$T/err3")"
assert_eq "$(status_of)" "workers=1:done workers=2:done workers=3:done" "state after SIGKILL and resume"
echo ok
