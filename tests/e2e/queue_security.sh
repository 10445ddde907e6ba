#!/usr/bin/env bash
# The queue trusts only what its user owns: a directory or database owned by
# another user or writable by others is refused (one line, exit 3) before
# anything in it runs; what it creates is private; `queue stop` signals only
# a process that is this queue's worker; task files pass the same checks as
# the command line.
. "$(dirname "$0")/queue_lib.bash"

# refused Q CMD...: the command fails with exit 3 and one line naming the reason.
refused() {
	local dir=$1 why=$2 rc=0
	shift 2
	"$GPUWHY" queue --queue "$dir" "$@" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = 3 ] || fail "queue $* in $dir: exit $rc, want 3: $(cat "$T/err")"
	[ "$(wc -l <"$T/err")" = 1 ] || fail "not one line: $(cat "$T/err")"
	grep -q "refusing an unsafe queue location: $why" "$T/err" || fail "reason: $(cat "$T/err")"
}

# --- what the queue creates is private
q add --gpus 0 -n first -- true >/dev/null
q wait --timeout 30s >/dev/null || fail "first task did not end done"
for p in "$GPUWHY_QUEUE" "$GPUWHY_QUEUE/logs" "$GPUWHY_QUEUE/run" "$GPUWHY_QUEUE/slurm"; do
	[ "$(stat -c %a "$p")" = 700 ] || fail "$p is $(stat -c %a "$p")"
done
for p in "$GPUWHY_QUEUE/queue.db" "$GPUWHY_QUEUE/logs/1.log" "$GPUWHY_QUEUE/worker.log"; do
	[ "$(stat -c %a "$p")" = 600 ] || fail "$p is $(stat -c %a "$p")"
done

# --- a directory, subdirectory or database others can write is refused
mkdir -m 0777 "$T/open"
refused "$T/open" "writable by all users" add --gpus 0 -- true
refused "$T/open" "writable by all users" ls
[ ! -e "$T/open/queue.db" ] || fail "a database was created in a world-writable directory"
mkdir -m 0770 "$T/grp"
refused "$T/grp" "writable by its group" ls
mkdir -m 0700 "$T/qdb"
"$GPUWHY" queue --queue "$T/qdb" ls >/dev/null || fail "a private queue was refused"
chmod o+w "$T/qdb/queue.db"
refused "$T/qdb" "writable by all users" add --gpus 0 -- true
chmod o-w "$T/qdb/queue.db"
chmod o+w "$T/qdb/run"
refused "$T/qdb" "writable by all users" ls
chmod o-w "$T/qdb/run"
"$GPUWHY" queue --queue "$T/qdb" ls >/dev/null || fail "the repaired queue was refused"

# --- a symbolic link, as the queue or inside it, is refused as what it is, with the
# directory it leads to (the queue follows none: the link could be turned elsewhere)
linked() {
	local dir=$1 link=$2 to=$3 rc=0
	shift 3
	"$GPUWHY" queue --queue "$dir" "$@" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = 3 ] || fail "queue $* in $dir: exit $rc, want 3: $(cat "$T/err")"
	[ "$(wc -l <"$T/err")" = 1 ] || fail "not one line: $(cat "$T/err")"
	grep -qF "gpuwhy: $link: is a symbolic link to $to (the queue follows no symbolic link: give the directory itself" "$T/err" ||
		fail "symbolic link $link: $(cat "$T/err")"
}
ln -s "$T/qdb" "$T/qlink"
linked "$T/qlink" "$T/qlink" "$(realpath "$T/qdb")" ls
linked "$T/qlink" "$T/qlink" "$(realpath "$T/qdb")" add --gpus 0 -- true
GPUWHY_QUEUE=$T/qlink "$GPUWHY" queue ls 2>"$T/err" && fail "GPUWHY_QUEUE as a link was followed"
grep -qF "$T/qlink: is a symbolic link to $(realpath "$T/qdb")" "$T/err" || fail "GPUWHY_QUEUE link: $(cat "$T/err")"
mv "$T/qdb/run" "$T/qdb/run.real"
ln -s "$T/qdb/run.real" "$T/qdb/run"
linked "$T/qdb" "$T/qdb/run" "$(realpath "$T/qdb/run.real")" ls
rm "$T/qdb/run"
mv "$T/qdb/run.real" "$T/qdb/run"
"$GPUWHY" queue --queue "$T/qdb" ls >/dev/null || fail "the queue was refused once its link was gone"

# --- another user's queue (with a task planted in it) is refused and nothing runs
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	chmod 0711 "$T"
	mkdir "$T/theirs"
	"$GPUWHY" queue --queue "$T/theirs" add --gpus 0 --no-worker -- touch "$T/planted-ran" >/dev/null
	chown -R nobody "$T/theirs"
	refused "$T/theirs" "owned by uid $(id -u nobody)" add --gpus 0 -- true
	refused "$T/theirs" "owned by uid $(id -u nobody)" worker --idle-exit 1s
	sleep 0.5
	[ ! -e "$T/planted-ran" ] || fail "a task from another user's queue ran as root"
	# Their database in a directory of ours is refused too.
	mkdir -m 0700 "$T/mixed"
	"$GPUWHY" queue --queue "$T/mixed" ls >/dev/null
	chown nobody "$T/mixed/queue.db"
	refused "$T/mixed" "owned by uid" ls
	# A directory nobody created is theirs even though nothing is in it yet.
	mkdir -m 0755 "$T/nb"
	chown nobody "$T/nb"
	setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups mkdir -m 0755 "$T/nb/q"
	refused "$T/nb/q" "owned by uid" add --gpus 0 -- true
	[ ! -e "$T/nb/q/queue.db" ] || fail "a database was created in another user's directory"
	chmod 0700 "$T"
else
	echo "not root: the other-user cases need root (chown, setpriv) and were left out"
fi

# --- queue stop signals only this queue's worker
mkdir -m 0700 "$T/qs"
export GPUWHY_QUEUE=$T/qs
q ls >/dev/null
sleep 300 &
victim=$!
EXTRA_PIDS="$EXTRA_PIDS $victim"
# A stale lock file naming an unrelated process, not held by anyone.
echo "$victim" >"$T/qs/worker.lock"
q stop | grep -qx "no worker runs" || fail "stale worker.lock: $(q stop 2>&1)"
kill -0 "$victim" || fail "stop signalled the process a stale worker.lock names"
# The lock held by some other process while the file names the victim.
python3 -c 'import fcntl, sys, time
f = open(sys.argv[1], "r+"); fcntl.flock(f, fcntl.LOCK_EX)
open(sys.argv[2], "w").write("locked\n"); time.sleep(300)' "$T/qs/worker.lock" "$T/held" &
holder=$!
EXTRA_PIDS="$EXTRA_PIDS $holder"
until_true 20 test -e "$T/held" || fail "the lock holder did not start"
rc=0
q stop >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 3 ] || fail "stop with a foreign lock holder: exit $rc: $(cat "$T/out" "$T/err")"
grep -q "names pid $victim: process $victim does not hold worker.lock" "$T/err" || fail "stop: $(cat "$T/err")"
kill -0 "$victim" || fail "stop signalled the process worker.lock names"
kill -0 "$holder" || fail "stop signalled the lock holder"
# The holder itself, named in the file: it holds the lock but is not a gpuwhy worker.
echo "$holder" >"$T/qs/worker.lock"
rc=0
q stop >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 3 ] || fail "stop of a lock-holding non-worker: exit $rc"
grep -q "not this program\|not a .gpuwhy queue worker" "$T/err" || fail "stop: $(cat "$T/err")"
kill -0 "$holder" || fail "stop signalled a lock holder that is not a worker"
kill "$holder"
wait "$holder" 2>/dev/null || true
# A real worker is stopped.
"$GPUWHY" queue worker >>"$T/worker.out" 2>&1 &
wpid=$!
until_true 20 sh -c "$GPUWHY queue gpus --json | grep -q '\"worker_pid\": *$wpid'" || fail "worker did not start"
q stop | grep -q "worker $wpid stopped" || fail "stop did not stop the worker"
wait "$wpid" || fail "the worker did not exit 0 on stop"

# --- task files pass the checks the command line does
export GPUWHY_QUEUE=$T/qs
badfile() {
	local rc=0
	printf '%s\n' "$1" >"$T/tasks.jsonl"
	q add --gpus 0 --no-worker --from "$T/tasks.jsonl" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = 2 ] || fail "task file $1: exit $rc: $(cat "$T/err")"
	grep -q "$2" "$T/err" || fail "task file $1: $(cat "$T/err")"
}
long=$(printf 'n%.0s' $(seq 128))
badfile '{"cmd": "true", "cwd": "no-such-dir"}' "'cwd' .*no-such-dir.*No such file"
badfile "{\"cmd\": \"true\", \"cwd\": \"$T/tasks.jsonl\"}" "is not a directory"
badfile '{"cmd": "true", "after": 999}' "there is no task 999"
badfile "{\"cmd\": \"true\", \"name\": \"$long\"}" "'name' is longer than 127 bytes"
badfile '{"cmd": "true"}
{"cmd": "true", "after": 999}' "task 2 of 2 waits for task 999"
rc=0
q add --gpus 0 --no-worker --cwd "$T/no-such-dir" -- true 2>"$T/err" || rc=$?
[ "$rc" = 2 ] || fail "--cwd to nowhere: exit $rc"
rc=0
q add --gpus 0 --no-worker --after 999 -- true 2>"$T/err" || rc=$?
[ "$rc" = 2 ] && grep -q "there is no task 999" "$T/err" || fail "--after 999: exit $rc: $(cat "$T/err")"
rc=0
q add --gpus 0 --no-worker -n "$long" -- true 2>"$T/err" || rc=$?
[ "$rc" = 2 ] || fail "--name of 128 bytes: exit $rc"
[ "$(sqlite3 "$T/qs/queue.db" 'SELECT count(*) FROM tasks')" = 0 ] || fail "a rejected task was stored"
# What is valid still goes in: a relative cwd from the file, after a task of the same batch.
mkdir "$T/sub"
printf '{"cmd": "true", "cwd": "sub", "name": "%s"}\n{"cmd": "true", "after": 1}\n' "${long:1}" >"$T/ok.jsonl"
(cd "$T" && q add --gpus 0 --no-worker --from ok.jsonl) >/dev/null || fail "a valid task file was refused"
[ "$(sqlite3 "$T/qs/queue.db" "SELECT cwd FROM tasks WHERE id = 1")" = "$(realpath "$T/sub")" ] || fail "cwd"
echo ok
