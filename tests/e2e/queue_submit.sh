#!/usr/bin/env bash
# `queue add` hands a one-command task to the running worker over DIR/submit.sock
# (src/queue/submit.c). Checked: the worker's answer is the id and the task is there
# once, with its environment whole; its failures are reported by the client in its own
# words; and a client whose hand-off goes wrong (a worker that dies before or after its
# commit, a garbled answer, a socket file nobody listens on) still adds the task exactly
# once. The last part drives a stand-in for the worker, so each failure happens at a
# known point instead of by timing; a kill loop over a real worker closes the test.
. "$(dirname "$0")/queue_lib.bash"

ntasks() { sqlite3 "$DB" "SELECT count(*) FROM tasks"; }
token_of() { sqlite3 "$DB" "SELECT coalesce(submit_token, '') FROM tasks WHERE id = $1"; }

# ---- a real worker
q config cpu-slots 2 >/dev/null
"$GPUWHY" queue worker >>"$T/worker.out" 2>&1 &
WPID=$!
until_true 20 test -S "$GPUWHY_QUEUE/submit.sock" || fail "worker has no submission socket"

id=$(FOO=$'a"b\\c\nd\tend' q add --gpus 0 -n envcheck -- sh -c 'printf %s "$FOO" >'"$T/foo.out")
[ "$id" = 1 ] || fail "first id: '$id'"
[ -n "$(token_of 1)" ] || fail "a task added while a worker runs went to the database directly"
until_true 20 sh -c "\"$GPUWHY\" queue ls --json | grep -q '\"state\": *\"done\"'" ||
	fail "task 1 did not run"
printf 'a"b\\c\nd\tend' | cmp -s - "$T/foo.out" || fail "environment changed on the way: $(od -c "$T/foo.out")"

# Twenty clients at once: twenty distinct ids, twenty tasks.
for i in $(seq 20); do q add --gpus 0 -- true >"$T/par.$i" & done
wait_pids=$(jobs -p | grep -vx "$WPID" || true)
for p in $wait_pids; do wait "$p" || fail "a parallel add failed"; done
[ "$(cat "$T"/par.* | sort -u | wc -l)" = 20 ] || fail "parallel adds: $(cat "$T"/par.* | tr '\n' ' ')"
[ "$(ntasks)" = 21 ] || fail "expected 21 tasks, got $(ntasks)"

# A failure the worker meets is the client's to report (and nothing is added).
set +e
err=$(q add --gpus 0 --after 999 -- true 2>&1 >/dev/null)
rc=$?
set -e
[ $rc = 2 ] || fail "--after 999 exit $rc ($err)"
grep -q 'there is no task 999' <<<"$err" || fail "--after 999 said: $err"
[ "$(ntasks)" = 21 ] || fail "a failed add added a task"
grep -q 'task 999' "$GPUWHY_QUEUE/worker.log" && fail "the client's failure went into the worker's log"

# Malformed messages get "no" and add nothing; the worker carries on.
python3 - "$GPUWHY_QUEUE/submit.sock" >"$T/bad.out" <<'PY' || fail "malformed messages: $(cat "$T/bad.out")"
import os, socket, sys
task = [b"n", b"/", b"0", b"-1", b"0", b"0", b"30000", b"0", b"0", b"0", b"local", b"-1",
        b"-", b"-", b"-", b"-", b"-", b"1", b"true"]
good = [b"gpuwhy-submit 1", b"tok-bad", b"1", b"1"] + task
def msg(fields, tail=b"\0"):
    return b"\0".join(fields) + tail
bad = [
    b"x",
    msg(good[:6]),                              # cut in the middle
    msg(good, tail=b""),                        # last field without its NUL
    msg(good) + b"extra\0",                     # something after the last task
    msg([b"gpuwhy-submit 9"] + good[1:]),       # another version
    msg(good[:1] + [b"t" * 100] + good[2:]),    # token too long
    msg(good[:3] + [b"65"] + good[4:]),         # too many tasks
    msg(good[:-2] + [b"99999999", b"true"]),    # more arguments than sent
    msg(good[:6] + [b"lots"] + good[7:]),       # a number that is not one
    os.urandom(3000),
]
for m in bad:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sys.argv[1])
    s.send(m)
    s.settimeout(20)
    a = s.recv(100)
    s.close()
    if a != b"no":
        print("answer %r to %r" % (a, m[:80]))
        sys.exit(1)
PY
kill -0 "$WPID" || fail "the worker died of a malformed message"
[ "$(ntasks)" = 21 ] || fail "a malformed message added a task"

q wait --timeout 60s >/dev/null || fail "the tasks did not end"
q stop >/dev/null
until_true 20 sh -c "! kill -0 $WPID 2>/dev/null" || fail "worker did not stop"
[ -e "$GPUWHY_QUEUE/submit.sock" ] && fail "the worker left its socket behind"

# ---- a stand-in for the worker, failing at one point each
cat >"$T/fake.py" <<'PY'
import socket, sqlite3, sys, time
mode, path, db, out = sys.argv[1:5]
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(path)
if mode == "stale":
    sys.exit(0)                       # a socket file nobody listens on
s.listen(1)
open(out + ".ready", "w").close()
c, _ = s.accept()
msg = c.recv(1 << 20)
fields = msg.split(b"\0")
assert fields[0] == b"gpuwhy-submit 1", fields[0]
token = fields[1].decode()
open(out, "w").write(token + "\n")
if mode == "commits":                 # the worker's commit, then its death before answering
    con = sqlite3.connect(db)
    cur = con.execute("INSERT INTO tasks(name, argv, cwd, gpus, submitted, submit_token)"
                      " VALUES('fake', '[\"true\"]', '/', 0, ?, ?)", (time.time(), token + ":0"))
    con.commit()
    open(out + ".id", "w").write("%d\n" % cur.lastrowid)
elif mode == "garbage":
    c.send(b"ok")
elif mode == "answers":               # the worker's answer: the client adds nothing itself
    c.send(b"ok 0 4242")
c.close()                             # "dies": closed before anything was committed
PY

fake() { # fake MODE: the stand-in listening, ready
	rm -f "$GPUWHY_QUEUE/submit.sock" "$T/fake.tok" "$T/fake.tok.ready" "$T/fake.tok.id"
	python3 "$T/fake.py" "$1" "$GPUWHY_QUEUE/submit.sock" "$DB" "$T/fake.tok" &
	FPID=$!
	EXTRA_PIDS="$EXTRA_PIDS $FPID"
	if [ "$1" = stale ]; then
		wait "$FPID"
	else
		until_true 20 test -e "$T/fake.tok.ready" || fail "stand-in did not start"
	fi
}

before=$(ntasks)
fake dies
id=$(q add --no-worker --gpus 0 -- true) || fail "add after a worker died unanswered"
wait "$FPID"
[ "$(ntasks)" = $((before + 1)) ] || fail "dies: $(ntasks) tasks"
[ "$(token_of "$id")" = "$(cat "$T/fake.tok"):0" ] || fail "dies: the client did not add it under its token"

before=$(ntasks)
fake commits
id=$(q add --no-worker --gpus 0 -- true) || fail "add after a worker committed and died"
wait "$FPID"
[ "$id" = "$(cat "$T/fake.tok.id")" ] || fail "commits: client said $id, the worker stored $(cat "$T/fake.tok.id")"
[ "$(ntasks)" = $((before + 1)) ] || fail "commits: added twice ($(ntasks) tasks)"

before=$(ntasks)
fake garbage
id=$(q add --no-worker --gpus 0 -- true) || fail "add after a garbled answer"
wait "$FPID"
[ "$(ntasks)" = $((before + 1)) ] || fail "garbage: $(ntasks) tasks"
[ "$(token_of "$id")" = "$(cat "$T/fake.tok"):0" ] || fail "garbage: not under its token"

before=$(ntasks)
fake answers
id=$(q add --no-worker --gpus 0 -- true) || fail "add with an answer"
wait "$FPID"
[ "$id" = 4242 ] || fail "answers: printed '$id', not the worker's id"
[ "$(ntasks)" = "$before" ] || fail "answers: the client added the task itself too"

before=$(ntasks)
fake stale
id=$(q add --no-worker --gpus 0 -- true) || fail "add beside a stale socket"
[ "$(ntasks)" = $((before + 1)) ] || fail "stale: $(ntasks) tasks"
[ -z "$(token_of "$id")" ] || fail "stale: nothing was sent, yet a token was stored"
rm -f "$GPUWHY_QUEUE/submit.sock"
q cancel --all >/dev/null

# ---- kill -9 of the worker while clients submit: each add printed an id, none twice
before=$(ntasks)
(
	for i in $(seq 150); do
		q add --gpus 0 -- true >>"$T/loop.ids" 2>>"$T/loop.err" || echo "rc=$?" >>"$T/loop.rc"
	done
) &
LPID=$!
kills=0
while kill -0 "$LPID" 2>/dev/null; do
	sleep "0.0$((RANDOM % 9 + 1))"
	w=$(cat "$GPUWHY_QUEUE/worker.lock" 2>/dev/null | tr -dc 0-9)
	if [ -n "$w" ] && kill -9 "$w" 2>/dev/null; then kills=$((kills + 1)); fi
done
wait "$LPID"
# An add may find its worker killed as it started (three times in a row: exit 3, "did
# not start"); its task is stored all the same and its id printed. Nothing else may fail.
if [ -s "$T/loop.rc" ]; then
	grep -qvx 'rc=3' "$T/loop.rc" && fail "adds failed under the kill loop: $(sort "$T/loop.rc" | uniq -c)"
	grep -v 'queue worker: did not start' "$T/loop.err" | grep -q . &&
		fail "adds under the kill loop said: $(head -3 "$T/loop.err")"
fi
[ "$(wc -l <"$T/loop.ids")" = 150 ] || fail "kill loop: $(wc -l <"$T/loop.ids") ids printed for 150 adds"
[ "$(sort -u "$T/loop.ids" | wc -l)" = 150 ] || fail "kill loop: an id was printed twice"
[ "$(ntasks)" = $((before + 150)) ] || fail "kill loop: $(( $(ntasks) - before )) tasks for 150 adds"
dup=$(sqlite3 "$DB" "SELECT count(*) FROM (SELECT submit_token FROM tasks WHERE submit_token IS NOT NULL GROUP BY submit_token HAVING count(*) > 1)")
[ "$dup" = 0 ] || fail "kill loop: a submission stored twice"
echo "kill loop: $kills worker kills during 150 adds"
q add --gpus 0 -- true >/dev/null # a worker for what the last kill left queued
q wait --timeout 120s $(sort -n "$T/loop.ids") >/dev/null ||
	fail "the kill loop's tasks did not all end done: $(sqlite3 "$DB" "SELECT state, count(*) FROM tasks WHERE id > $before GROUP BY state")"
echo "ok"
