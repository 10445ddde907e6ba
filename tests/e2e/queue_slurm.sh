#!/usr/bin/env bash
# gpuwhy queue --backend slurm against a real single-node Slurm (slurmctld +
# slurmd + munge from Debian), started here on loopback with four fake GPUs
# (gres files are links to /dev/null). Skipped (77) when that cannot start:
# not root, packages missing (scripts/install-deps --slurm), or a daemon fails.
. "$(dirname "$0")/queue_lib.bash"

skip() { echo "slurm lab: $*: skipped"; exit 77; }
. "$(dirname "$0")/slurm_lab.bash"
slurm_lab_need sbatch squeue sacct scancel
slurm_lab_conf localhost "JobCompType=jobcomp/filetxt" "JobCompLoc=$T/lab/log/jobcomp.txt"

# On exit: the queue first (its worker talks to Slurm), then Slurm, then the
# shared cleanup (which reports any process left from this test's folder).
cleanup_and_lab() {
	local rc=$? d
	for d in "$T"/q*; do
		[ -d "$d" ] && GPUWHY_QUEUE=$d "$GPUWHY" queue stop >/dev/null 2>&1
	done
	# (bounded: scancel keeps trying a controller that is down)
	timeout 10 scancel --user=root >/dev/null 2>&1 || true
	slurm_lab_down
	(exit $rc)
	cleanup
}
trap cleanup_and_lab EXIT

slurm_lab_up

q config slurm-poll 300ms >/dev/null
q config backend slurm >/dev/null

jobstate() { q show "$1" --json | json 'j["attempts"][-1]["slurm_state"]'; }

# --- four 1-GPU tasks run at once with distinct CUDA_VISIBLE_DEVICES
for i in 1 2 3 4; do
	q add --gpus 1 -n "g$i" -- sh -c 'echo "cvd=$CUDA_VISIBLE_DEVICES token=$GPUWHY_ATTEMPT_TOKEN"; sleep 3' >/dev/null
done
q wait 1 2 3 4 --timeout 90s || fail "the four GPU tasks did not end done"
cvds=$(for i in 1 2 3 4; do q log "$i" | sed -n 's/^cvd=\([0-9]*\) .*/\1/p'; done | sort | tr '\n' ' ')
[ "$cvds" = "0 1 2 3 " ] || fail "CUDA_VISIBLE_DEVICES per task: '$cvds'"
[ "$(max_overlap)" = 4 ] || fail "the four tasks did not run at once ($(max_overlap))"
for i in 1 2 3 4; do
	tok=$(q show "$i" --json | json 'j["attempts"][0]["token"]')
	q log "$i" | grep -q "^cvd=.* token=$tok\$" || fail "task $i: token not in the job's environment"
	gpu=$(q show "$i" --json | json 'j["attempts"][0]["gpus"]')
	q log "$i" | grep -qx "cvd=$gpu token=$tok" || fail "task $i: recorded GPU $gpu"
	[ "$(jobstate "$i")" = COMPLETED ] || fail "task $i Slurm state $(jobstate "$i")"
done

# --- exit codes and signals: ExitCode a:b
q add --gpus 1 -- sh -c 'exit 3' >/dev/null                # 5
q add --gpus 0 -- sh -c 'kill -9 $$' >/dev/null            # 6
q wait 5 6 --timeout 60s && fail "failing jobs ended done"
q show 5 --json | json '(j["task"]["state"], j["task"]["exit_code"], j["attempts"][0]["slurm_state"])' |
	grep -qx "('failed', 3, 'FAILED')" || fail "exit 3: $(q show 5)"
q show 6 --json | json '(j["task"]["state"], j["task"]["signal"])' | grep -qx "('failed', 9)" ||
	fail "SIGKILL: $(q show 6)"

# --- cancel a running job
q add --gpus 1 -- sh -c 'echo running; sleep 120' >/dev/null   # 7
until_true 30 sh -c "$GPUWHY queue log 7 | grep -qx running" || fail "job 7 never ran"
until_true 10 sh -c "[ \"\$($GPUWHY queue show 7 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"task\"][\"state\"])')\" = running ]" ||
	fail "task 7 is $(state 7) while its job runs"
q cancel 7 >/dev/null
until_true 30 sh -c "[ \"\$($GPUWHY queue show 7 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"task\"][\"state\"])')\" = cancelled ]" ||
	fail "task 7 not cancelled: $(q show 7)"
case "$(jobstate 7)" in CANCELLED*) ;; *) fail "task 7 Slurm state $(jobstate 7)" ;; esac

# --- the same OOM recognition and retry policy: first run OOMs, the retry succeeds
q add --gpus 1 --retries 2 --retry-delay 1s -- sh -c "
	if [ ! -e $T/oom-once ]; then touch $T/oom-once
		echo 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB' >&2; exit 1; fi
	echo fine" >/dev/null   # 8
q wait 8 --timeout 90s || fail "OOM task not done: $(q show 8)"
q show 8 --json | python3 -c '
import json, sys
j = json.load(sys.stdin)
a = j["attempts"]
assert len(a) == 2 and a[0]["oom"] == "gpu" and a[0]["exit_code"] == 1, a
assert a[0]["slurm_job"] != a[1]["slurm_job"], a
assert a[1]["started"] - a[0]["ended"] >= 0.9, a
' || fail "OOM retry on Slurm: $(q show 8)"

# --- at-least-once: Slurm runs the same job again (requeue); the record says so
q add --gpus 1 -- sh -c 'echo "run of $GPUWHY_ATTEMPT_TOKEN"; sleep 4' >/dev/null   # 9
until_true 30 sh -c "$GPUWHY queue log 9 | grep -q '^run of'" || fail "job 9 never ran"
job=$(q show 9 --json | json 'j["attempts"][0]["slurm_job"]')
scontrol requeue "$job" || fail "requeue failed"
# A requeued job waits (BeginTime) before it may run again: let it go at once.
until_true 20 sh -c "squeue -h -j $job -o %T | grep -qx PENDING" || fail "job $job not pending after requeue"
# ... once the first run is torn down, and in a later second than the requeue: slurmd
# refuses a credential made in the second its job's old one was revoked.
until_true 20 sh -c "sinfo -h -o %T | grep -qx idle" || fail "node not idle after requeue"
sleep 2
scontrol update jobid="$job" StartTime=now || fail "could not release the requeued job"
q wait 9 --timeout 90s || fail "task 9 not done: $(q show 9)"
q show 9 --json | json '(j["attempts"][0]["runs"], len(j["attempts"]))' | grep -qx "(2, 1)" ||
	fail "duplicate run not recorded: $(q show 9)"
q show 9 | grep -q "Slurm ran this attempt 2 times" || fail "no note of the second run: $(q show 9)"

# --- the controller goes away for a while: its jobs are waited for, not called lost
q add --gpus 1 -- sh -c 'echo up; sleep 8; echo still-here' >/dev/null   # 10
until_true 30 sh -c "$GPUWHY queue log 10 | grep -qx up" || fail "job 10 never ran"
until_true 10 sh -c "[ \"\$($GPUWHY queue show 10 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"task\"][\"state\"])')\" = running ]" ||
	fail "task 10 is $(state 10) while its job runs"
ctld=$(cat "$LAB/run/slurmctld.pid")
kill "$ctld"
until_true 20 sh -c "! kill -0 $ctld 2>/dev/null" || fail "slurmctld did not stop"
rm -f "$LAB/run/slurmctld.pid"
until_true 20 grep -q "Slurm does not answer" "$GPUWHY_QUEUE/worker.log" || fail "worker did not notice"
[ "$(state 10)" = running ] || fail "task 10 is $(state 10) while the controller is away"
slurmctld </dev/null >>"$LAB/log/daemons.out" 2>&1 || fail "slurmctld did not start again"
wait_up "scontrol ping 2>/dev/null | grep -q UP" || fail "slurmctld not answering again"
q wait 10 --timeout 90s || fail "task 10 after the controller came back: $(q show 10)"
q log 10 | grep -qx still-here || fail "job 10 output"

# --- a Slurm job on this machine using the simulated GPU: its peak GPU memory is recorded
if sim_ok; then
	(
		export GPUWHY_QUEUE=$T/q2
		q config sample-interval 200ms >/dev/null
		q config slurm-poll 300ms >/dev/null
		"$GPUWHY" --sim a100x4-pcie queue add --backend slurm --gpus 1 -- \
			"$GPUWHY" sim train --mem-mib 5000 --steps 40 --gpu-ms 50 --cpu-ms 1 >/dev/null
		q wait 1 --timeout 90s || fail "simulated training under Slurm: $(q show 1)"
		peak=$(q show 1 --json | json 'j["task"]["peak_gpu_mib"]')
		[ "$peak" -ge 4900 ] && [ "$peak" -le 5100 ] || fail "Slurm job peak GPU memory: $peak"
	)
fi

# --- a time limit is reported as a timeout (Slurm enforces it coarsely: up to ~90 s)
q add --gpus 1 --timeout 1m -- sleep 300 >/dev/null   # 11
q wait 11 --timeout 240s && fail "time-limited job ended done"
[ "$(state 11)" = timeout ] || fail "task 11 is $(state 11): $(q show 11)"
[ "$(jobstate 11)" = TIMEOUT ] || fail "task 11 Slurm state $(jobstate 11)"

# --- a request Slurm can never satisfy fails with sbatch's words
q add --gpus 5 -- true >/dev/null   # 12
q wait 12 --timeout 60s && fail "impossible request ended done"
q show 12 | grep -q "sbatch failed:.*not available" || fail "task 12: $(q show 12)"
echo "queue_slurm: ok"
