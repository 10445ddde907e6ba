#!/usr/bin/env bash
# Recordings that lose nothing: one writer per file, the main file complete
# on its own, writes that wait out another process's lock, an exact count on
# a full disk, and SIGINT reaching the command of `run`.
. "$(dirname "$0")/lib.bash"
have_sim || skip "simulated GPU not built"
command -v sqlite3 >/dev/null || skip "sqlite3 missing"
command -v python3 >/dev/null || skip "python3 missing"
G=("$GPUWHY" --sim h100x1)

# wait_exit PID: until it exits (at most 60 s), then its status in $rc
wait_exit() {
	for _ in $(seq 600); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$1" 2>/dev/null && fail "process $1 did not stop"
	wait "$1"
	rc=$?
}
samples() { sqlite3 "$1" 'SELECT count(*) FROM host_samples'; }
said() { sed -n 's/^gpuwhy: \([0-9]*\) samples in .*/\1/p' "$1"; }

# --- one writer per file: the second fails at once, naming the holder, and
# its command never starts
"${G[@]}" record -o "$T/one.gpuwhy" -i 100ms 2>"$T/one.err" &
rp=$!
PIDS_TO_KILL+=("$rp")
wait_line "$T/one.err" "recording to" "$rp"
"${G[@]}" run -o "$T/one.gpuwhy" --no-summary -- touch "$T/ran" 2>"$T/two.err"
assert_eq "$?" 3 "second writer's exit status"
[ ! -e "$T/ran" ] || fail "the second writer's command ran"
assert_eq "$(wc -l <"$T/two.err" | tr -d ' ')" 1 "lines from the second writer ($(cat "$T/two.err"))"
assert_contains "$(cat "$T/two.err")" "one.gpuwhy: another gpuwhy is recording to it (PID $rp)" "second writer's error"
"${G[@]}" record -o "$T/one.gpuwhy" -d 1s 2>"$T/three.err"
assert_eq "$?" 3 "a second record"
kill -INT "$rp"
wait_exit "$rp"
assert_eq "$rc" 0 "first recorder"
n=$(samples "$T/one.gpuwhy")
assert_ge "$n" 1 "the first recorder's samples"
assert_eq "$n" "$(said "$T/one.err")" "samples said and stored"
assert_eq "$(sqlite3 "$T/one.gpuwhy" "SELECT count(*) FROM meta WHERE key='command'")" 0 "no other command in the first recording"
# once it is done the file is free again
"${G[@]}" record -o "$T/one.gpuwhy" -i 100ms -d 300ms 2>/dev/null || fail "recording again after the first ended"
# the default name is locked the same way
mkdir "$T/dir"
(cd "$T/dir" && exec "${G[@]}" run --no-summary -- sh -c 'touch started; sleep 60') 2>/dev/null &
rp=$!
PIDS_TO_KILL+=("$rp")
for _ in $(seq 600); do [ -e "$T/dir/started" ] && break; sleep 0.1; done
[ -e "$T/dir/started" ] || fail "first run did not start its command"
(cd "$T/dir" && "${G[@]}" run --no-summary -- touch ran2) 2>"$T/def.err"
assert_eq "$?" 3 "second run on the default name"
assert_contains "$(cat "$T/def.err")" "run.gpuwhy: another gpuwhy is recording to it (PID $rp)" "default-name error"
[ ! -e "$T/dir/ran2" ] || fail "second default-name run started its command"
kill -TERM "$rp"
wait_exit "$rp"

# --- SIGINT sent to `run` alone reaches its command
"${G[@]}" run -o "$T/int.gpuwhy" --no-summary -- \
	sh -c 'trap "echo got-int; exit 7" INT; touch "$0"; while :; do sleep 0.1; done' "$T/ready" \
	>"$T/int.out" 2>"$T/int.err" &
rp=$!
PIDS_TO_KILL+=("$rp")
for _ in $(seq 600); do [ -e "$T/ready" ] && break; sleep 0.1; done
[ -e "$T/ready" ] || fail "command of run did not start"
kill -INT "$rp"
wait_exit "$rp"
assert_eq "$rc" 7 "run's status after SIGINT (the command's)"
assert_eq "$(cat "$T/int.out")" "got-int" "the command saw SIGINT once"
assert_eq "$(sqlite3 "$T/int.gpuwhy" "SELECT value FROM meta WHERE key='exit_status'")" 7 "recorded status"

# --- the .gpuwhy alone is a recording: while recording (from the first line
# on), after SIGKILL, and complete after a clean stop
"${G[@]}" record -o "$T/c.gpuwhy" -i 100ms 2>"$T/c.err" &
rp=$!
PIDS_TO_KILL+=("$rp")
wait_line "$T/c.err" "recording to" "$rp"
cp "$T/c.gpuwhy" "$T/alone0.gpuwhy"
"$GPUWHY" export "$T/alone0.gpuwhy" --table meta >"$T/alone0.csv" || fail "main file alone at the start"
assert_contains "$(cat "$T/alone0.csv")" "schema_version,1" "meta of the main file alone"
# some checkpoint brings samples into the main file while recording goes on
got=0
for _ in $(seq 300); do
	cp "$T/c.gpuwhy" "$T/alone1.gpuwhy"
	rm -f "$T/alone1.gpuwhy-wal" "$T/alone1.gpuwhy-shm"
	got=$(samples "$T/alone1.gpuwhy" 2>/dev/null || echo 0)
	[ "$got" -ge 1 ] 2>/dev/null && break
	sleep 0.1
done
assert_ge "$got" 1 "samples in the main file alone while recording"
kill -INT "$rp"
wait_exit "$rp"
assert_eq "$rc" 0 "record after SIGINT"
[ ! -e "$T/c.gpuwhy-wal" ] || fail "a -wal file is left after a clean stop"
cp "$T/c.gpuwhy" "$T/alone2.gpuwhy"
assert_eq "$(samples "$T/alone2.gpuwhy")" "$(said "$T/c.err")" "main file alone after a clean stop"
# a file whose data is still in a -wal that was not copied: the reader says so
python3 - "$T/w.gpuwhy" "$T/wcopy.gpuwhy" <<'PY'
import shutil, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("PRAGMA journal_mode=WAL")
c.execute("PRAGMA wal_autocheckpoint=0")
c.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)")
c.execute("INSERT INTO meta VALUES('schema_version', '1')")
c.commit()
shutil.copy(sys.argv[1], sys.argv[2])
PY
"$GPUWHY" report "$T/wcopy.gpuwhy" >/dev/null 2>"$T/w.err"
assert_eq "$?" 3 "report of a file whose -wal was left behind"
assert_contains "$(cat "$T/w.err")" "wcopy.gpuwhy-wal, which was left behind" "reader's message"

# --- another process holds the file's write lock for 5 s: the samples wait
# and are written when it frees, with a line saying so
"${G[@]}" record -o "$T/s.gpuwhy" -i 100ms 2>"$T/s.err" &
rp=$!
PIDS_TO_KILL+=("$rp")
wait_line "$T/s.err" "recording to" "$rp"
cat >"$T/hold.py" <<'PY'
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=60)
c.execute("BEGIN IMMEDIATE")
time.sleep(float(sys.argv[2]))
c.execute("COMMIT")
PY
python3 "$T/hold.py" "$T/s.gpuwhy" 5 || fail "could not hold the write lock"
wait_line "$T/s.err" "writes waited" "$rp"
kill -INT "$rp"
wait_exit "$rp"
assert_eq "$rc" 0 "record after a stall"
assert_eq "$(samples "$T/s.gpuwhy")" "$(said "$T/s.err")" "samples said and stored after a stall"
assert_eq "$(sqlite3 "$T/s.gpuwhy" "SELECT count(*) FROM events WHERE kind='record_gap'")" 0 "no gap"
# the sampler never waited for the lock: no hole near the lock's 5 s
gap=$(sqlite3 "$T/s.gpuwhy" 'SELECT max(d) FROM (SELECT t - lag(t) OVER (ORDER BY t) AS d FROM host_samples)')
assert_le "$gap" 2.5 "largest gap between samples (s)"
# with room for only 5 samples, the ones beyond are a gap event and a line
GPUWHY_RECORD_BACKLOG=5 "${G[@]}" record -o "$T/g.gpuwhy" -i 100ms 2>"$T/g.err" &
rp=$!
PIDS_TO_KILL+=("$rp")
wait_line "$T/g.err" "recording to" "$rp"
python3 "$T/hold.py" "$T/g.gpuwhy" 3 || fail "could not hold the write lock"
wait_line "$T/g.err" "not recorded" "$rp"
kill -INT "$rp"
wait_exit "$rp"
assert_eq "$(samples "$T/g.gpuwhy")" "$(said "$T/g.err")" "samples said and stored after a gap"
assert_eq "$(sqlite3 "$T/g.gpuwhy" "SELECT count(*) FROM events WHERE kind='record_gap' AND value >= 1")" 1 "one gap event"
assert_contains "$(cat "$T/g.err")" "g.gpuwhy: [0-9]* samples from .* not recorded: another process held the write lock" "gap line"

# --- a full disk (a 150 KiB file size limit): record stops with one error
# whose hint names only what record has, and says exactly what it stored
(ulimit -f 150; exec "$GPUWHY" --sim h100x8-nvlink record -o "$T/full.gpuwhy" -i 50ms -d 6s 2>"$T/full.err")
assert_eq "$?" 3 "record on a full disk"
assert_contains "$(cat "$T/full.err")" "recording stopped" "the error line"
grep -q "command" "$T/full.err" && fail "record's hint speaks of a command: $(cat "$T/full.err")"
assert_eq "$(samples "$T/full.gpuwhy")" "$(said "$T/full.err")" "samples said and stored on a full disk"
assert_ge "$(said "$T/full.err")" 1 "samples stored before the disk filled"
# the main file alone opens as a recording too
cp "$T/full.gpuwhy" "$T/fullalone.gpuwhy"
"$GPUWHY" export "$T/fullalone.gpuwhy" --table meta >/dev/null || fail "main file alone after a full disk"
# --- output that CMD's background processes write after it exited still reaches
# stdout, and none of them meets a closed pipe (EPIPE, or death by SIGPIPE)
# wait_file FILE [LINES]: until it exists (with LINES lines; at most 60 s)
wait_file() {
	for _ in $(seq 600); do [ "$(cat "$1" 2>/dev/null | wc -l)" -ge "${2:-1}" ] && return 0; sleep 0.1; done
	fail "no $1 of ${2:-1} lines: $(cat "$1" 2>&1)"
}
(cd "$T" && "${G[@]}" run -o late.gpuwhy -- sh -c '(sleep 2; echo late; echo "rc $?" >late.mark) & echo early' >"$T/late.out" 2>"$T/late.err")
assert_eq "$?" 0 "run with a background writer"
wait_file "$T/late.mark"
assert_eq "$(cat "$T/late.mark")" "rc 0" "the background echo wrote"
wait_file "$T/late.out" 2 # relayed by gpuwhy, or after it by its relay
assert_eq "$(paste -sd' ' "$T/late.out")" "early late" "both lines on stdout"
assert_eq "$(sqlite3 "$T/late.gpuwhy" "SELECT value FROM meta WHERE key='exit_status'")" 0 "recording complete"
# one that holds the pipes until told to go (a daemon): run returns with CMD's status,
# the recording complete, and what the daemon writes later still arrives
timeout 60 "${G[@]}" run --no-summary -o "$T/daemon.gpuwhy" -- sh -c \
	'(until [ -e "$0/go" ]; do sleep 0.1; done; echo later; echo "rc $?" >"$0/daemon.mark"; echo err-later >&2; echo "rc $?" >>"$0/daemon.mark") & echo now; exit 3' "$T" \
	>"$T/daemon.out" 2>"$T/daemon.err"
assert_eq "$?" 3 "run returns CMD's status while a daemon holds its output"
assert_eq "$(sqlite3 "$T/daemon.gpuwhy" "SELECT value FROM meta WHERE key='exit_status'")" 3 "daemon recording complete"
touch "$T/go"
wait_file "$T/daemon.mark" 2
wait_file "$T/daemon.out" 2
for _ in $(seq 600); do grep -q err-later "$T/daemon.err" && break; sleep 0.1; done
assert_eq "$(paste -sd' ' "$T/daemon.mark")" "rc 0 rc 0" "the daemon's writes after run returned"
assert_eq "$(paste -sd' ' "$T/daemon.out")" "now later" "the daemon's stdout"
assert_contains "$(cat "$T/daemon.err")" "err-later" "the daemon's stderr"
echo "record_reliability: ok"
