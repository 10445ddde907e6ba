#!/usr/bin/env bash
# gpuwhy queue with the local back end and CPU-only tasks (no GPU needed):
# records, retries with their cooldown, timeouts, cancels, dependencies, task
# files, pause/drain, exit codes, bad input, and 100 concurrent adds.
. "$(dirname "$0")/queue_lib.bash"

q config sample-interval 200ms
q config kill-grace 1s
[ "$(q config kill-grace)" = 1s ] || fail "config did not stick"

# --- a task's record, log and output
id=$(q add --gpus 0 -n hello -- sh -c 'echo "out $GPUWHY_TASK_ID/$GPUWHY_ATTEMPT [${CUDA_VISIBLE_DEVICES-unset}]"; echo err >&2')
[ "$id" = 1 ] || fail "first id is '$id'"
q wait "$id" 2>"$T/wait.err" || fail "wait on a good task did not exit 0"
[ ! -s "$T/wait.err" ] || fail "wait on a good task said: $(cat "$T/wait.err")"
[ "$(state 1)" = done ] || fail "task 1 not done"
q log 1 | grep -qx "out 1/1 \[\]" || fail "task env: $(q log 1)"
q log 1 | grep -qx err || fail "stderr not in the log"
q log 1 | grep -q "^=== gpuwhy task 1 attempt 1 token [0-9a-f]\{16\} start" || fail "no attempt header"
q show 1 | grep -q "state      done after 1 attempt" || fail "show: $(q show 1)"
q ls | grep -q "^ *1  done" || fail "ls: $(q ls)"
q ls --json | json 'len(j)' | grep -qx 1 || fail "ls --json"
q show 1 --json | json 'j["task"]["exit_code"]' | grep -qx 0 || fail "show --json exit_code"
[ -n "$(q show 1 --json | json 'j["task"]["peak_rss_kib"]')" ] || fail "no peak RSS"

# --- fails twice, then succeeds: done after 3 attempts, cooldown respected
q add --gpus 0 -n flaky --retries 3 --retry-delay 1s -- \
	sh -c 'n=$(cat '"$T"'/count 2>/dev/null || echo 0); n=$((n+1)); echo $n >'"$T"'/count; echo "try $n"; [ $n -ge 3 ] || exit 7' >/dev/null
q wait 2 --timeout 60s || fail "flaky task did not end done"
[ "$(attempts 2)" = 3 ] || fail "flaky task: $(attempts 2) attempts"
[ "$(cat "$T/count")" = 3 ] || fail "flaky task ran $(cat "$T/count") times"
q show 2 --json | python3 -c '
import json, sys
a = json.load(sys.stdin)["attempts"]
assert [x["exit_code"] for x in a] == [7, 7, 0], a
assert [x["outcome"] for x in a] == ["failed", "failed", "done"], a
for prev, nxt in zip(a, a[1:]):
    gap = nxt["started"] - prev["ended"]
    assert gap >= 0.99, "cooldown not respected: %.3f s" % gap
    assert gap < 10, "retry much later than its cooldown: %.3f s" % gap
' || fail "flaky task attempts"

# --- a failure with no retries left, and wait's exit code
q add --gpus 0 --retries 1 --retry-delay 100ms -- sh -c 'exit 3' >/dev/null
set +e
q wait 3 --timeout 30s 2>"$T/wait.err"
rc=$?
set -e
[ $rc = 1 ] || fail "wait on a failed task exited $rc, not 1"
[ "$(cat "$T/wait.err")" = "gpuwhy: queue wait: 1 task did not end done" ] || fail "wait on a failed task said: $(cat "$T/wait.err")"
[ "$(state 3)" = failed ] || fail "task 3 not failed"
q show 3 | grep -q "no retry left (2 attempts)" || fail "task 3 error: $(q show 3)"

# --- not found: failed at once, no retries spent
q add --gpus 0 --retries 5 -- /nonexistent/program >/dev/null
q wait 4 --timeout 30s && fail "wait: missing program ended done"
[ "$(attempts 4)" = 1 ] || fail "missing program retried"
q show 4 | grep -q "command not found" || fail "task 4: $(q show 4)"

# --- timeout: SIGTERM ignored, then SIGKILL to the whole group
q add --gpus 0 --timeout 1s -- sh -c 'trap "" TERM; sleep 60 & wait; sleep 60' >/dev/null
q wait 5 --timeout 30s && fail "timed-out task ended done"
[ "$(state 5)" = timeout ] || fail "task 5 is $(state 5), not timeout"
q show 5 --json | json 'j["task"]["signal"]' | grep -qx 9 || fail "timeout: not SIGKILLed"
q log 5 | grep -q "time limit reached" || fail "timeout not in the log"

# --- cancel: queued and running
q pause >/dev/null
q add --gpus 0 -- sleep 60 >/dev/null
q cancel 6 | grep -q "task 6 cancelled" || fail "cancel queued"
[ "$(state 6)" = cancelled ] || fail "task 6 not cancelled"
q resume >/dev/null
q add --gpus 0 -- sh -c 'echo started; sleep 60' >/dev/null
until_true 20 sh -c "[ \"\$($GPUWHY queue show 7 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"task\"][\"state\"])')\" = running ]" ||
	fail "task 7 never ran"
until_true 10 sh -c "$GPUWHY queue log 7 | grep -q started" || fail "task 7 never started its command"
q cancel 7 | grep -q "cancel requested" || fail "cancel running"
until_true 20 sh -c "[ \"\$($GPUWHY queue show 7 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"task\"][\"state\"])')\" = cancelled ]" ||
	fail "running task 7 not cancelled"
q show 7 --json | json 'j["attempts"][0]["signal"]' | grep -qx 15 || fail "cancel: not SIGTERM"
q cancel 7 | grep -q "already ended" || fail "second cancel"

# --- dependencies
q add --gpus 0 -- sh -c 'exit 1' >/dev/null
q add --gpus 0 --after 8 -- echo never >/dev/null
q add --gpus 0 --after 1 -- echo after-done >/dev/null
q wait 9 10 --timeout 30s && fail "wait: a dependency failure ended done"
[ "$(state 9)" = failed ] || fail "task 9 (after a failed task) is $(state 9)"
q show 9 | grep -q "task 8, which it waits for, ended failed" || fail "task 9: $(q show 9)"
[ "$(state 10)" = done ] || fail "task 10 (after a done task) is $(state 10)"

# --- retry an ended task: fresh budget, the record keeps earlier attempts
q retry 3 | grep -q "queued again" || fail "retry"
q wait 3 --timeout 30s && fail "retried task ended done"
[ "$(attempts 3)" = 4 ] || fail "retried task has $(attempts 3) attempts, not 4"

# --- task files: text, and the batch config shape with a record file
printf '# two shards\necho shard-a\n\necho shard-b\n' >"$T/tasks.txt"
ids=$(q add --gpus 0 --from "$T/tasks.txt")
[ "$(echo "$ids" | wc -l)" = 2 ] || fail "--from text: $ids"
mkdir -p "$T/in" "$T/out"
for n in a b c; do echo "$n" >"$T/in/$n.txt"; done
cat >"$T/batch.json" <<EOF2
{"cmd": "tr a-z A-Z < {input} > {output}", "input_dir": "$T/in", "output_dir": "$T/out",
 "gpus": 0, "batch_size": 1, "max_retries": 3, "retry_interval_seconds": 1,
 "log_file": "$T/batch.jsonl", "name": "{stem}"}
EOF2
set +e
q add --from "$T/batch.json" 2>"$T/err"
rc=$?
set -e
[ $rc = 2 ] && grep -q "batch_size" "$T/err" || fail "unused batch_size accepted (rc $rc)"
sed -i 's/ > {output}"/ > {output} # bs {batch_size}"/' "$T/batch.json"
ids=$(q add --from "$T/batch.json")
[ "$(echo "$ids" | wc -l)" = 3 ] || fail "--from config: $ids"
q wait $ids --timeout 30s || fail "batch tasks"
[ "$(cat "$T/out/b.txt")" = B ] || fail "batch output"
python3 - "$T/batch.jsonl" <<'EOF2' || fail "record file"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert len(recs) == 3, recs
for r in recs:
    assert r["state"] == "done" and r["exit_code"] == 0, r
    assert r["input"].endswith(".txt") and r["output"].endswith(".txt"), r
    assert r["start"] and r["end"] and r["attempts"] == 1, r
EOF2

# --- drain: running tasks finish, nothing new starts, the worker stops. The running task
# waits for a file the test writes after draining (at most 120 s), so it is still running
# when the test looks, however slowly a loaded machine polls.
q add --gpus 0 -- sh -c "for i in \$(seq 1200); do [ -e '$T/go' ] && exit 0; sleep 0.1; done; exit 1" >/dev/null
id=$(q ls --json | json 'j[-1]["id"]')
until_true 60 sh -c "[ \"\$($GPUWHY queue show $id --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"task\"][\"state\"])')\" = running ]" ||
	fail "task $id never ran"
q drain >/dev/null
q add --gpus 0 -- echo later >/dev/null 2>&1
later=$(q ls --json | json 'j[-1]["id"]')
touch "$T/go"
until_true 30 sh -c "[ -z \"\$(cat $GPUWHY_QUEUE/worker.lock 2>/dev/null)\" ] || ! $GPUWHY queue gpus --json | grep -q '\"worker_pid\": *[0-9]'" ||
	fail "worker did not stop after draining"
[ "$(state "$id")" = done ] || fail "draining did not let task $id finish"
[ "$(state "$later")" = queued ] || fail "a task started while draining"
q resume >/dev/null
q wait "$later" --timeout 30s || fail "task after resume"

# --- 100 concurrent adds from parallel shells: all recorded, all run
before=$(q ls --json | json 'len(j)')
for i in $(seq 100); do
	q add --gpus 0 -n "burst-$i" -- true >"$T/add.$i" 2>&1 &
done
wait
cat "$T"/add.* | sort -u >"$T/ids"
[ "$(wc -l <"$T/ids")" = 100 ] || fail "100 adds printed $(wc -l <"$T/ids") distinct ids: $(cat "$T"/add.* | head)"
grep -qv '^[0-9]*$' "$T/ids" && fail "an add printed something else: $(grep -v '^[0-9]*$' "$T/ids" | head -3)"
[ "$(q ls --json | json 'len(j)')" = $((before + 100)) ] || fail "not all 100 tasks recorded"
q wait $(cat "$T/ids") --timeout 120s || fail "burst tasks did not all end done"
# Shims are forks of the worker (same command line), named gpuwhy-shim.
workers=$(for p in $(pgrep -f "queue --queue $GPUWHY_QUEUE worker"); do
	[ "$(cat /proc/"$p"/comm 2>/dev/null)" = gpuwhy-shim ] || echo "$p"
done | wc -l)
[ "$workers" -le 1 ] || fail "more than one worker ($workers)"

# --- bad input: one line, documented exit codes
set +e
q add 2>/dev/null; [ $? = 2 ] || fail "add without a command"
q add --gpus x -- true 2>/dev/null; [ $? = 2 ] || fail "--gpus x"
q add --mem lots -- true 2>/dev/null; [ $? = 2 ] || fail "--mem lots"
q add --after 9999 -- true 2>/dev/null; [ $? = 2 ] || fail "--after missing"
q show 9999 2>/dev/null; [ $? = 2 ] || fail "show missing"
q show abc 2>/dev/null; [ $? = 2 ] || fail "show abc"
q config per-gpu 0 2>/dev/null; [ $? = 2 ] || fail "config per-gpu 0"
q frobnicate 2>/dev/null; [ $? = 2 ] || fail "unknown subcommand"
echo '{"cmd": "x", "gpus": "many"}' >"$T/bad.jsonl"
msg=$(q add --from "$T/bad.jsonl" 2>&1); [ $? = 2 ] || fail "bad task file"
after_msg=$(q add --after 9999 -- true 2>&1)
set -e
echo "$msg" | grep -q "line 1: 'gpus' must be an integer" || fail "bad file message: $msg"
[ "$(echo "$msg" | wc -l)" = 1 ] || fail "bad file message is not one line"
# The store's failure, printed once by the command
[ "$after_msg" = "gpuwhy: after 9999: there is no task 9999 (task ids are the numbers \`gpuwhy queue ls\` shows)" ] ||
	fail "missing --after message: $after_msg"

# --- each task runs with the environment of the shell that added it (tasks from
# different shells in turn), and the queue's own variables win over its copies
envtask='echo "env ${GW_SHELL-unset} ${GW_ONLY_A-unset} $GPUWHY_TASK_ID"'
a=$(GW_SHELL=a GW_ONLY_A=1 GPUWHY_TASK_ID=stale q add --gpus 0 -- sh -c "$envtask")
b=$(GW_SHELL=b q add --gpus 0 -- sh -c "$envtask")
c=$(GW_SHELL=a GW_ONLY_A=1 GPUWHY_TASK_ID=stale q add --gpus 0 -- sh -c "$envtask")
q wait "$a" "$b" "$c" --timeout 60s || fail "env tasks did not end done"
q log "$a" | grep -qx "env a 1 $a" || fail "env of task $a: $(q log "$a")"
q log "$b" | grep -qx "env b unset $b" || fail "env of task $b: $(q log "$b")"
q log "$c" | grep -qx "env a 1 $c" || fail "env of task $c: $(q log "$c")"
# --- out-of-memory retries are counted when they run, and `show` names only a
# reservation an attempt used (CPU tasks that print PyTorch's message)
oomtask='echo "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"; exit 1'
o1=$(q add --gpus 0 --mem 1G --retries 1 --retry-delay 100ms -- sh -c "$oomtask")
o2=$(q add --gpus 0 --mem 1G --retries 1 --retry-delay 1h -- sh -c "$oomtask")
o3=$(q add --gpus 0 --mem 1G -- sh -c "$oomtask")
q wait "$o1" "$o3" --timeout 60s 2>/dev/null && fail "OOM tasks ended done"
# two attempts out of memory, one retry between them, run with 1G plus the 2 GiB that failed
[ "$(q show "$o1" --json | json 'j["task"]["oom_retries"], [a["reserved_mib"] for a in j["attempts"]]')" = "1 [1024, 3072]" ] ||
	fail "OOM retries of task $o1: $(q show "$o1" --json)"
q show "$o1" | grep -qx "  after OOM  attempt 2 reserved 3.0G (1 OOM retry)" || fail "OOM note of task $o1: $(q show "$o1")"
# out of memory with no retry allowed: no retry counted, nothing noted
[ "$(q show "$o3" --json | json 'j["task"]["oom_retries"]')" = 0 ] || fail "task $o3 counts a retry it never had"
q show "$o3" | grep -q "after OOM" && fail "OOM note on a task never retried: $(q show "$o3")"
# a retry planned, then cancelled in its cooldown: it never ran, so it is no retry
until_true 30 sh -c "[ \"\$($GPUWHY queue show $o2 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"attempts\"][0][\"outcome\"])')\" = failed ]" ||
	fail "task $o2 did not fail its first attempt: $(q show "$o2")"
q cancel "$o2" >/dev/null
until_true 30 sh -c "[ \"\$($GPUWHY queue show $o2 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"task\"][\"state\"])')\" = cancelled ]" ||
	fail "task $o2 not cancelled: $(q show "$o2")"
[ "$(q show "$o2" --json | json 'j["task"]["oom_retries"]')" = 0 ] || fail "task $o2 counts a cancelled retry"
q show "$o2" | grep -q "after OOM" && fail "OOM note names a reservation no attempt used: $(q show "$o2")"
echo "queue_local: ok"
