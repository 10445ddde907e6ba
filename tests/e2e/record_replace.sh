#!/usr/bin/env bash
# What -o may replace: only a gpuwhy recording. Another program's SQLite
# database, a queue's database and a -wal left without its database are
# refused (exit 3, one line naming the file) and left byte for byte as they
# were, -wal and -shm included; a recording is not taken for a queue's
# database either. A recording is replaced whole: a writer killed before its
# new file takes the name leaves the earlier recording as it was.
. "$(dirname "$0")/lib.bash"
have_sim || skip "simulated GPU not built"
command -v python3 >/dev/null || skip "python3 missing"
command -v sqlite3 >/dev/null || skip "sqlite3 missing"
G=("$GPUWHY" --sim h100x1)

# refused FILE WHAT CMD...: exit 3, one line naming FILE and saying WHAT, CMD's command never ran.
refused() {
	local file=$1 what=$2 rc=0
	shift 2
	rm -f "$T/ran"
	"$@" >"$T/out" 2>"$T/err" || rc=$?
	assert_eq "$rc" 3 "exit status of $* ($(cat "$T/err"))"
	assert_eq "$(wc -l <"$T/err" | tr -d ' ')" 1 "lines from $*: $(cat "$T/err")"
	assert_contains "$(cat "$T/err")" "^gpuwhy: $file: $what" "the error of $*"
	[ ! -e "$T/ran" ] || fail "the command of $* ran"
}
# snapshot NAME: copies of NAME and of its -wal and -shm (where they exist).
snapshot() {
	for s in "" -wal -shm; do
		if [ -e "$1$s" ]; then cp -p "$1$s" "$1$s.before"; else rm -f "$1$s.before"; fi
	done
}
# unchanged NAME: NAME, its -wal and -shm exactly as snapshot saw them.
unchanged() {
	for s in "" -wal -shm; do
		if [ -e "$1$s.before" ]; then
			cmp -s "$1$s" "$1$s.before" || fail "$1$s changed"
		else
			[ ! -e "$1$s" ] || fail "$1$s appeared"
		fi
	done
}
# both_writers FILE WHAT: run -o and record -o are refused on FILE, which stays as it was.
both_writers() {
	snapshot "$1"
	refused "$1" "$2" "${G[@]}" run -o "$1" --no-summary -- touch "$T/ran"
	unchanged "$1"
	refused "$1" "$2" "${G[@]}" record -o "$1" -d 1s -i 100ms
	unchanged "$1"
	ls -a "$T" | grep -q '\.tmp' && fail "a temporary file was left: $(ls -a "$T")"
	return 0
}

# --- another program's database: in WAL mode with its -wal and -shm beside it
# (its program was killed), and a plain one
python3 - "$T/app.db" "$T/plain.db" <<'PY'
import os, sqlite3, sys
p = sqlite3.connect(sys.argv[2])
p.execute("CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT)")
p.execute("INSERT INTO users(name) VALUES('ada'), ('grace')")
p.commit()
p.close()
c = sqlite3.connect(sys.argv[1])
c.execute("PRAGMA journal_mode=WAL")
c.execute("PRAGMA wal_autocheckpoint=0")
c.execute("CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT)")
c.commit()
c.execute("INSERT INTO users(name) VALUES('ada'), ('grace')")
c.commit()
os._exit(0)  # no close: the -wal and -shm stay, the users only in the -wal
PY
[ -e "$T/app.db-wal" ] && [ -e "$T/app.db-shm" ] || fail "the application database has no -wal/-shm"
both_writers "$T/app.db" "exists and is not a gpuwhy recording"
both_writers "$T/plain.db" "exists and is not a gpuwhy recording"
assert_eq "$(sqlite3 "$T/app.db" 'SELECT count(*) FROM users')" 2 "users after the refusals"

# --- a queue's database (7 tasks), as it is and as a queue before application ids wrote it
Q="$T/queue"
for i in 1 2 3 4 5 6 7; do
	"$GPUWHY" queue --queue "$Q" add --gpus 0 --no-worker -- true >/dev/null || fail "queue add $i"
done
# its tasks folded into the main file, so a copy of that file alone holds them
sqlite3 "$Q/queue.db" 'PRAGMA wal_checkpoint(TRUNCATE)' >/dev/null
cp "$Q/queue.db" "$T/q.db"
assert_eq "$(sqlite3 "$T/q.db" 'PRAGMA application_id')" 1196447057 "the queue's application id"
assert_eq "$(sqlite3 "$T/q.db" 'SELECT count(*) FROM tasks')" 7 "tasks in the copy"
both_writers "$T/q.db" "is a gpuwhy queue database, not a recording"
cp "$T/q.db" "$T/oldq.db"
sqlite3 "$T/oldq.db" 'PRAGMA application_id = 0'
both_writers "$T/oldq.db" "exists and is not a gpuwhy recording"
assert_eq "$(sqlite3 "$T/q.db" 'SELECT count(*) FROM tasks')" 7 "tasks after the refusals"

# --- a -wal (and -shm) without its database: a new file would replay it
printf 'not ours' >"$T/orphan.gpuwhy-wal"
both_writers "$T/orphan.gpuwhy" "a -wal or -shm file of another database is beside it"
[ ! -e "$T/orphan.gpuwhy" ] || fail "a recording was created beside a foreign -wal"

# --- a recording is not a queue's database: its queue refuses it and leaves it alone
"${G[@]}" record -o "$T/r.gpuwhy" -d 500ms -i 100ms 2>/dev/null || fail "record"
for kind in new old; do
	mkdir -m 0700 "$T/rq-$kind"
	cp "$T/r.gpuwhy" "$T/rq-$kind/queue.db"
	chmod 0600 "$T/rq-$kind/queue.db"
	want="is a gpuwhy recording, not a queue database"
	if [ "$kind" = old ]; then
		sqlite3 "$T/rq-$kind/queue.db" "PRAGMA application_id = 0; PRAGMA user_version = 0"
		want="not a gpuwhy queue database"
	fi
	snapshot "$T/rq-$kind/queue.db"
	refused "$T/rq-$kind/queue.db" "$want" "$GPUWHY" queue --queue "$T/rq-$kind" ls
	refused "$T/rq-$kind/queue.db" "$want" "$GPUWHY" queue --queue "$T/rq-$kind" add --gpus 0 --no-worker -- true
	unchanged "$T/rq-$kind/queue.db"
done
# and the queue itself still opens, gaining the id where it had none
"$GPUWHY" queue --queue "$Q" ls >/dev/null || fail "the queue after the copies"
cp -p "$Q/queue.db" "$T/q2.db"
mkdir -m 0700 "$T/oldqueue"
cp "$T/oldq.db" "$T/oldqueue/queue.db"
chmod 0600 "$T/oldqueue/queue.db"
assert_eq "$("$GPUWHY" queue --queue "$T/oldqueue" ls --format json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" 7 \
	"tasks of a queue from before application ids"
assert_eq "$(sqlite3 "$T/oldqueue/queue.db" 'PRAGMA application_id')" 1196447057 "the older queue's id, once opened"

# --- replacing a recording: the new one takes the name, the file's mode stays
"${G[@]}" record -o "$T/rec.gpuwhy" -d 500ms -i 100ms 2>/dev/null || fail "first recording"
chmod 0640 "$T/rec.gpuwhy"
start1=$(sqlite3 "$T/rec.gpuwhy" "SELECT value FROM meta WHERE key='start'")
"${G[@]}" run -o "$T/rec.gpuwhy" --no-summary -- true 2>/dev/null || fail "replacing a recording"
[ "$(sqlite3 "$T/rec.gpuwhy" "SELECT value FROM meta WHERE key='start'")" != "$start1" ] || fail "the recording was not replaced"
assert_eq "$(sqlite3 "$T/rec.gpuwhy" "SELECT count(*) FROM meta WHERE key='command'")" 1 "the new recording's command"
assert_eq "$(stat -c %a "$T/rec.gpuwhy")" 640 "mode of the replaced recording"
ls -a "$T" | grep -q '\.tmp' && fail "a temporary file was left: $(ls -a "$T")"
# a recording from before application ids and digests is recognised by its tables
sqlite3 "$T/rec.gpuwhy" "PRAGMA application_id = 0; PRAGMA user_version = 0; DELETE FROM meta WHERE key LIKE 'digest.%'"
"$GPUWHY" report "$T/rec.gpuwhy" >/dev/null
[ $? -le 1 ] || fail "report of a recording from before application ids"
"$GPUWHY" export "$T/rec.gpuwhy" --table meta >/dev/null || fail "export of a recording from before application ids"
"${G[@]}" record -o "$T/rec.gpuwhy" -d 300ms -i 100ms 2>/dev/null || fail "replacing an older recording"
assert_eq "$(sqlite3 "$T/rec.gpuwhy" 'PRAGMA application_id')" 1196447063 "the new recording's application id"
# a recording whose recorder was killed: its -wal goes with it
"${G[@]}" record -o "$T/k.gpuwhy" -i 100ms 2>"$T/k.err" &
rp=$!
PIDS_TO_KILL+=("$rp")
wait_line "$T/k.err" "recording to" "$rp"
kill -9 "$rp"
wait "$rp" 2>/dev/null
[ -e "$T/k.gpuwhy-wal" ] || fail "no -wal after SIGKILL"
"${G[@]}" record -o "$T/k.gpuwhy" -d 300ms -i 100ms 2>/dev/null || fail "replacing a killed recording"
"$GPUWHY" report "$T/k.gpuwhy" >/dev/null
[ $? -le 1 ] || fail "report of the recording that replaced a killed one"

# --- a writer killed before its new file takes the name leaves the old recording
# as it was: stopped (strace) at the rename, and at the removal of the old -wal
# before it; then at moments chosen by a clock, where either recording is a whole one.
"${G[@]}" record -o "$T/old.gpuwhy" -d 500ms -i 100ms 2>/dev/null || fail "the old recording"
cp "$T/old.gpuwhy" "$T/old.copy"
"$GPUWHY" report "$T/old.gpuwhy" --format json >"$T/old.json"
old_rc=$?
# whole FILE: exactly the old recording (as report reads it), or a recording of its own
whole() {
	if cmp -s "$1" "$T/old.copy"; then
		"$GPUWHY" report "$1" --format json >"$T/now.json"
		assert_eq "$?" "$old_rc" "report of the old recording after a kill"
		cmp -s "$T/old.json" "$T/now.json" || fail "the old recording reads differently after a kill"
	else
		"$GPUWHY" export "$1" --table meta >/dev/null || fail "$1 is neither recording after a kill"
	fi
}
if strace -f -o /dev/null -e trace=none true 2>/dev/null; then
	for at in "-e trace=rename,renameat,renameat2 -e inject=rename,renameat,renameat2:signal=KILL" \
		"-P $T/old.gpuwhy-wal -e inject=unlink,unlinkat:signal=KILL"; do
		# shellcheck disable=SC2086
		(strace -f -o /dev/null $at "${G[@]}" run -o "$T/old.gpuwhy" --no-summary -- touch "$T/ran"; true) 2>/dev/null
		[ ! -e "$T/ran" ] || fail "the command ran though gpuwhy was killed before it ($at)"
		cmp -s "$T/old.gpuwhy" "$T/old.copy" || fail "the old recording changed before the rename ($at)"
		whole "$T/old.gpuwhy"
		# it was stopped there, not before: its new file, a whole recording, is left beside
		tmp=$(find "$T" -maxdepth 1 -name '.old.gpuwhy.*.tmp' | head -1)
		[ -n "$tmp" ] || fail "the writer did not get as far as its new file ($at)"
		"$GPUWHY" export "$tmp" --table meta >/dev/null || fail "the new file before the rename is no recording"
		rm -f "$T"/.old.gpuwhy.*.tmp*
	done
else
	echo "no strace (or no ptrace here): the kills at the rename are left out" >&2
fi
for d in 0 0.001 0.002 0.005 0.01 0.02 0.03 0.05 0.1 0.2; do
	"${G[@]}" run -o "$T/old.gpuwhy" --no-summary -- sleep 1 2>/dev/null &
	rp=$!
	sleep "$d"
	kill -9 "$rp" 2>/dev/null
	wait "$rp" 2>/dev/null
	whole "$T/old.gpuwhy"
	if ! cmp -s "$T/old.gpuwhy" "$T/old.copy"; then
		# the new one took the name: start again from the old one
		cp "$T/old.copy" "$T/old.gpuwhy"
		rm -f "$T/old.gpuwhy-wal" "$T/old.gpuwhy-shm"
	fi
done
echo "record_replace: ok"
