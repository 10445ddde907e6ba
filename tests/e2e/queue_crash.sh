#!/usr/bin/env bash
# kill -9 of the worker mid-run, then a restart: no task lost, none silently
# run twice. Every task appends a line to its own file each time its command
# runs, so the number of lines must equal the attempts its record shows.
. "$(dirname "$0")/queue_lib.bash"

q config sample-interval 200ms >/dev/null
q config kill-grace 1s >/dev/null
q config cpu-slots 3 >/dev/null

start_worker() {
	"$GPUWHY" queue worker >>"$T/worker.out" 2>&1 &
	WPID=$!
	until_true 20 sh -c "[ -s $GPUWHY_QUEUE/worker.lock ] && $GPUWHY queue gpus --json | grep -q '\"worker_pid\": *$WPID'" ||
		fail "worker did not start"
}

runs() { [ -f "$T/$1.runs" ] && wc -l <"$T/$1.runs" || echo 0; }
mark() { echo "echo run >>$T/$1.runs"; }

start_worker
# A runs across the crash and is re-adopted; B ends while no worker runs; C's
# process is killed while no worker runs (lost, retried: its second run ends
# at once); D waits for a CPU slot and starts only after the restart.
# A and B wait for a go file, so what happens when does not depend on timing.
q add --gpus 0 -n A -- sh -c "$(mark A); until [ -e $T/A.go ]; do sleep 0.05; done; echo A-ok" >/dev/null
q add --gpus 0 -n B -- sh -c "$(mark B); until [ -e $T/B.go ]; do sleep 0.05; done; exit 5" >/dev/null
q add --gpus 0 -n C --retries 2 --retry-delay 500ms -- \
	sh -c "$(mark C); [ \$(wc -l <$T/C.runs) -ge 2 ] && exit 0; sleep 60" >/dev/null
q add --gpus 0 -n D -- sh -c "$(mark D); echo D-ok" >/dev/null
until_true 20 sh -c "[ \$(cat $T/A.runs $T/B.runs $T/C.runs 2>/dev/null | wc -l) = 3 ]" ||
	fail "A, B and C did not all start"
[ "$(state 4)" = queued ] || fail "D should wait for a CPU slot"

kill -9 "$WPID"
wait "$WPID" 2>/dev/null || true
# C's shim and command die too (as in an OOM kill of the whole session).
cshim=$(sqlite3 "$DB" "SELECT shim_pid FROM attempts WHERE task_id = 3 AND n = 1")
[ -n "$cshim" ] || fail "no shim recorded for C"
cpg=$(ps -o pid= --ppid "$cshim" | tr -d ' ')
kill -9 "$cshim" || fail "C's shim $cshim was not running"
kill -9 -- "-$cpg" || fail "C's process group $cpg was not running"
touch "$T/B.go" # B ends meanwhile; its shim records how
until_true 20 grep -q "^complete=1" "$GPUWHY_QUEUE/run/2.1.status" || fail "B's shim recorded no end"
[ "$(state 2)" = running ] || fail "B's record changed without a worker"
[ "$(sed -n 's/^exit=//p' "$GPUWHY_QUEUE/run/2.1.status")" = 5 ] || fail "B's shim did not record its exit"

start_worker
until_true 20 grep -q "task 1 attempt 1: re-adopted its running shim" "$T/worker.out" ||
	fail "A was not re-adopted"
touch "$T/A.go"
q wait 1 --timeout 30s || fail "A did not end done after the restart"
q wait 2 --timeout 30s && fail "B's exit 5 was not kept"
q wait 3 4 --timeout 30s || fail "C and D did not end done"

[ "$(state 2)" = failed ] || fail "B is $(state 2)"
q show 2 --json | json 'j["task"]["exit_code"]' | grep -qx 5 || fail "B's exit code"
q show 1 --json | json 'j["attempts"][0]["outcome"]' | grep -qx done || fail "A was not re-adopted"
q log 1 | grep -qx A-ok || fail "A's output"
q show 3 --json | json '[a["outcome"] for a in j["attempts"]]' | grep -qx "\['lost', 'done'\]" ||
	fail "C: $(q show 3)"

# Nothing ran twice without the record saying so.
for t in A B C D; do
	id=$(q ls --json | json "[x['id'] for x in j if x['name'] == '$t'][0]")
	[ "$(runs $t)" = "$(attempts "$id")" ] ||
		fail "$t ran $(runs $t) times, its record says $(attempts "$id") attempts"
done
[ "$(runs C)" = 2 ] || fail "C ran $(runs C) times"

# A worker that dies between recording an attempt and handing it over leaves a
# 'starting' attempt: its command never ran, and the next worker queues it again.
q stop >/dev/null
q add --gpus 0 --no-worker -n E -- sh -c "$(mark E)" >/dev/null
sqlite3 "$DB" "UPDATE tasks SET state = 'running', attempts = 1 WHERE id = 5;
               INSERT INTO attempts(task_id, n, token, astate, backend, started)
               VALUES(5, 1, 'deadbeefdeadbeef', 'starting', 'local', strftime('%s','now'));"
start_worker
q wait 5 --timeout 30s || fail "E did not end done"
q show 5 --json | json '[a["outcome"] for a in j["attempts"]]' | grep -qx "\['not_started', 'done'\]" ||
	fail "E: $(q show 5)"
[ "$(attempts 5)" = 1 ] && [ "$(runs E)" = 1 ] || fail "E: $(attempts 5) attempts, $(runs E) runs"
echo "queue_crash: ok"
