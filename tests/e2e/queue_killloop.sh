#!/usr/bin/env bash
# kill -9 of the worker and of shims (running an attempt, or waiting for
# one), again and again, while 1000 tasks drain, and of clients while they
# add: no task lost, none run twice. Each run of a command appends its
# attempt's token to one file, so every line must name an attempt in the
# record, no token may appear twice, and every attempt recorded done must
# appear exactly once.
. "$(dirname "$0")/queue_lib.bash"
N=${GPUWHY_KILLLOOP_TASKS:-1000}
# A database whose writer was just killed is briefly locked while the next
# connection recovers its WAL: wait for it as the queue itself does.
sq() { sqlite3 -cmd ".timeout 30000" "$DB" "$@"; }

q config cpu-slots 4 >/dev/null
q config kill-grace 1s >/dev/null
RUNS=$T/runs
# Each command records its run first, then holds its slot for 40 ms, so the
# drain lasts seconds even on a fast idle machine and the loop below gets
# to kill the worker many times: how often it can is a matter of time, not
# of how quickly this machine runs an empty command.
for i in $(seq "$N"); do
	echo "echo \$GPUWHY_ATTEMPT_TOKEN >>$RUNS; sleep 0.04"
done >"$T/tasks.txt"
q add --gpus 0 --no-worker --retries 100 --retry-delay 0s --from "$T/tasks.txt" >/dev/null

# Clients killed while they add: each task is in whole or not at all.
added=0
for i in $(seq 20); do
	"$GPUWHY" queue add --gpus 0 --no-worker --retries 100 --retry-delay 0s -- \
		sh -c "echo \$GPUWHY_ATTEMPT_TOKEN >>$RUNS" >"$T/add.$i" 2>/dev/null &
	p=$!
	sleep "0.00$((RANDOM % 10))"
	kill -9 "$p" 2>/dev/null || true
	wait "$p" 2>/dev/null || true
	[ -s "$T/add.$i" ] && added=$((added + 1))
done
total=$(sq "SELECT count(*) FROM tasks")
[ "$total" -ge $((N + added)) ] && [ "$total" -le $((N + 20)) ] ||
	fail "$total tasks after $N + 20 adds of which $added printed an id"
[ "$(sq "PRAGMA integrity_check")" = ok ] || fail "database damaged by killed clients"

start_worker() {
	"$GPUWHY" queue worker >>"$T/worker.out" 2>&1 &
	WPID=$!
}
final() { sq "SELECT count(*) FROM tasks WHERE state NOT IN ('done','failed','lost','cancelled','timeout')"; }

start_worker
kills=0 shim_kills=0 any_kills=0
end=$((SECONDS + 300))
while [ "$(final)" != 0 ]; do
	[ $SECONDS -lt $end ] || fail "tasks still not ended after 300 s: $(final) left"
	sleep "0.$((RANDOM % 4 + 1))"
	# A shim of a running attempt (checked to be one: its name and its session).
	sp=$(sq "SELECT shim_pid FROM attempts WHERE astate = 'running' ORDER BY random() LIMIT 1")
	if [ -n "$sp" ] && [ "$(cat /proc/"$sp"/comm 2>/dev/null)" = gpuwhy-shim ]; then
		kill -9 "$sp" 2>/dev/null && shim_kills=$((shim_kills + 1))
	fi
	# Any shim of the worker: one waiting for work, or one just handed an attempt.
	if [ $((RANDOM % 2)) = 0 ]; then
		for c in $(ps -o pid= --ppid "$WPID" | shuf -n 1); do
			[ "$(cat /proc/"$c"/comm 2>/dev/null)" = gpuwhy-shim ] &&
				kill -9 "$c" 2>/dev/null && any_kills=$((any_kills + 1)) || true
		done
	fi
	if [ $((RANDOM % 2)) = 0 ]; then
		kill -9 "$WPID" 2>/dev/null || true
		wait "$WPID" 2>/dev/null || true
		kills=$((kills + 1))
		start_worker
	fi
done
# The last worker may still be starting (not holding its lock yet, so `queue
# stop` would not see it): end it by its PID.
kill -TERM "$WPID" 2>/dev/null || true
wait "$WPID" 2>/dev/null || true
echo "$kills worker kills, $shim_kills shim kills, $any_kills kills of any shim"
[ "$kills" -ge 3 ] || fail "only $kills worker kills: the loop did not exercise recovery"

bad=$(sq "SELECT count(*) FROM tasks WHERE state != 'done'")
[ "$bad" = 0 ] || fail "$bad tasks did not end done: $(sq "SELECT id, state, error FROM tasks WHERE state != 'done' LIMIT 5")"
sort "$RUNS" | uniq -d >"$T/twice"
[ ! -s "$T/twice" ] || fail "attempts ran twice: $(head -3 "$T/twice")"
sq "SELECT token FROM attempts" | sort >"$T/tokens"
sort -u "$RUNS" >"$T/ran"
comm -23 "$T/ran" "$T/tokens" >"$T/unrecorded"
[ ! -s "$T/unrecorded" ] || fail "runs without an attempt in the record: $(head -3 "$T/unrecorded")"
sq "SELECT token FROM attempts WHERE outcome = 'done'" | sort >"$T/done"
comm -23 "$T/done" "$T/ran" >"$T/phantom"
[ ! -s "$T/phantom" ] || fail "attempts recorded done that never ran: $(head -3 "$T/phantom")"
[ "$(wc -l <"$T/done")" = "$total" ] || fail "$(wc -l <"$T/done") attempts done for $total tasks"
# A command that ran is counted: attempts that ran >= runs seen, per task.
over=$(sq "SELECT count(*) FROM attempts WHERE outcome = 'not_started' AND token IN ($(sed "s/.*/'&'/" "$T/ran" | paste -sd,))")
[ "$over" = 0 ] || fail "$over attempts recorded not_started ran their command"
echo ok
