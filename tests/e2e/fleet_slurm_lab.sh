#!/usr/bin/env bash
# `--job ID` against a real single-node Slurm (slurmctld + slurmd + munge from
# Debian, on loopback, four fake GPUs: gres files are links to /dev/null) and
# a real Prometheus holding a simulated cluster (fleet_prom_lib.bash): a job
# run with --gres=gpu:2 is found on its node and GPU indices by scontrol, and
# the epilog example, run by slurmctld as EpilogSlurmctld, writes its line.
# Skipped (77) when Slurm cannot start here: not root, packages missing
# (scripts/install-deps --slurm), or a daemon fails.
. "$(dirname "$0")/lib.bash"
[ "$(id -u)" = 0 ] || skip "needs root"
for b in slurmctld slurmd sbatch scontrol munged runuser; do
	command -v "$b" >/dev/null || skip "$b not installed"
done
id munge >/dev/null 2>&1 || skip "no munge user"
. "$(dirname "$0")/fleet_prom_lib.bash"
[ -n "$T" ] && [ -d "$T" ] || fail "no test folder"

# The Slurm node is node01, a node of the simulated cluster's series.
LAB=$T/lab
mkdir -p "$LAB"/{etc,state,spool/node01,log,run,dev,munge} "$T/ep"
chmod 711 "$T" "$LAB"
read -r CTLD SLD < <(python3 -c '
import socket
def port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); n = s.getsockname()[1]; s.close(); return n
print(port(), port())')
lab_conf() {
	printf '%s\n' "ClusterName=lab" "SlurmctldHost=localhost" "SlurmctldPort=$CTLD" \
		"SlurmdPort=$SLD" "SlurmUser=root" "SlurmdUser=root" "AuthType=auth/munge" \
		"AuthInfo=socket=$LAB/munge/munge.socket.2" "CredType=cred/munge" \
		"CommunicationParameters=NoCtldInAddrAny,NoInAddrAny" "StateSaveLocation=$LAB/state" \
		"SlurmdSpoolDir=$LAB/spool/%n" "SlurmctldPidFile=$LAB/run/slurmctld.pid" \
		"SlurmdPidFile=$LAB/run/slurmd-%n.pid" "SlurmctldLogFile=$LAB/log/slurmctld.log" \
		"SlurmdLogFile=$LAB/log/slurmd-%n.log" "ProctrackType=proctrack/linuxproc" \
		"TaskPlugin=task/none" "JobAcctGatherType=jobacct_gather/none" \
		"SelectType=select/cons_tres" "SelectTypeParameters=CR_Core" \
		"SchedulerType=sched/backfill" "SchedulerParameters=batch_sched_delay=0" \
		"MpiDefault=none" "MailProg=/bin/true" "GresTypes=gpu" \
		"AccountingStorageType=accounting_storage/none" "EpilogSlurmctld=$T/epilog" \
		"MinJobAge=300" "KillWait=2" "ReturnToService=2" \
		"SlurmdParameters=config_overrides" "SlurmdTimeout=60" \
		"NodeName=node01 NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=8 Sockets=1 CoresPerSocket=8 ThreadsPerCore=1 RealMemory=4000 Gres=gpu:4 State=UNKNOWN" \
		"PartitionName=debug Nodes=node01 Default=YES MaxTime=INFINITE State=UP"
}
lab_conf >"$LAB/etc/slurm.conf"
printf '%s\n' "AutoDetect=off" "NodeName=node01 Name=gpu File=$LAB/dev/nvidia[0-3]" \
	>"$LAB/etc/gres.conf"
for i in 0 1 2 3; do ln -sf /dev/null "$LAB/dev/nvidia$i"; done
export SLURM_CONF=$LAB/etc/slurm.conf TZ=UTC

# The daemons by their PID files: SIGTERM, then SIGKILL after 5 s.
lab_down() {
	local f pid
	for f in "$LAB/run/slurmd-node01.pid" "$LAB/run/slurmctld.pid" "$LAB/munge/munged.pid"; do
		pid=$(cat "$f" 2>/dev/null) || continue
		tr '\0' ' ' 2>/dev/null </proc/"$pid"/cmdline | grep -qE "slurm|munged" || continue
		kill "$pid" 2>/dev/null || continue
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null || true
	done
}
trap 'rc=$?; timeout 10 scancel --user=root >/dev/null 2>&1; lab_down; (exit $rc); cleanup' EXIT

fleet_prom_up
# slurmctld runs the epilog with an environment of its own: the settings go through a wrapper.
printf '%s\n' "#!/bin/sh" \
	"export GPUWHY_PROMETHEUS=$URL GPUWHY_EPILOG_DIR=$T/ep GPUWHY=$GPUWHY TZ=UTC SLURM_CONF=$SLURM_CONF GPUWHY_EPILOG_DELAY=0" \
	"exec sh $SRC/deploy/slurm/gpuwhy-epilog.sh" >"$T/epilog"
chmod +x "$T/epilog"

wait_up() { timeout 30 bash -c "until $1; do sleep 0.1; done"; }
chown munge:munge "$LAB/munge"
chmod 711 "$LAB/munge"
head -c 1024 /dev/urandom >"$LAB/munge/munge.key"
chown munge:munge "$LAB/munge/munge.key"
chmod 400 "$LAB/munge/munge.key"
runuser -u munge -- munged --socket="$LAB/munge/munge.socket.2" --key-file="$LAB/munge/munge.key" \
	--log-file="$LAB/munge/munged.log" --pid-file="$LAB/munge/munged.pid" \
	--seed-file="$LAB/munge/munged.seed" </dev/null >>"$LAB/log/daemons.out" 2>&1 ||
	skip "munged did not start"
wait_up "[ -S $LAB/munge/munge.socket.2 ]" || skip "munged socket missing"
slurmctld </dev/null >>"$LAB/log/daemons.out" 2>&1 || skip "slurmctld did not start"
wait_up "scontrol ping 2>/dev/null | grep -q UP" ||
	skip "slurmctld not answering ($(tail -3 "$LAB/log/slurmctld.log"))"
slurmd -N node01 </dev/null >>"$LAB/log/daemons.out" 2>&1 || skip "slurmd did not start"
wait_up "sinfo -h -o %T 2>/dev/null | grep -qx idle" ||
	skip "node not idle ($(sinfo -h -o '%T %E' 2>&1))"

# A job on two GPUs, after one on a single GPU, so that it gets indices 1-2.
J0=$(sbatch --parsable --gres=gpu:1 -o /dev/null --wrap 'sleep 60') || fail "sbatch"
wait_up "scontrol show job $J0 | grep -q JobState=RUNNING" || fail "job $J0 did not start"
JOB=$(sbatch --parsable --gres=gpu:2 -o /dev/null --wrap 'sleep 60') || fail "sbatch"
wait_up "scontrol show job $JOB | grep -q JobState=RUNNING" || fail "job $JOB did not start"

# While it runs, scontrol -d names its GPUs: the report reads those two, up to now.
"$GPUWHY" report --prometheus "$URL" --job "$JOB" --format json -o "$T/job.json" 2>"$T/err" ||
	[ $? = 1 ] || fail "report --job $JOB: $(cat "$T/err")"
"$GPUWHY" report --prometheus "$URL" --job "$JOB" >"$T/job.txt" 2>&1 || [ $? = 1 ] ||
	fail "report text: $(cat "$T/job.txt")"
assert_contains "$(head -1 "$T/job.txt")" "job $JOB of root on node01 (Slurm)" "header"
scancel "$JOB" || fail "scancel"
wait_up "scontrol show job $JOB | grep -q JobState=CANCELLED" || fail "job $JOB was not cancelled"
# Once it ended, slurmctld keeps its node and GPU count, not the indices: without a job label
# in the series, every GPU of the node is read.
"$GPUWHY" report --prometheus "$URL" --job "$JOB" --format json -o "$T/done.json" 2>"$T/err" ||
	[ $? = 1 ] || fail "report --job $JOB after its end: $(cat "$T/err")"
python3 - "$T/job.json" "$T/done.json" <<'PY' || fail "the job's report: $(scontrol show job -d "$JOB")"
import json, sys
d = json.load(open(sys.argv[1])); e = json.load(open(sys.argv[2]))
if [g["index"] for g in d["gpus"]] != [1, 2]: sys.exit("FAIL: GPUs %s" % [g["index"] for g in d["gpus"]])
if d["recording"]["hostname"] != "node01": sys.exit("FAIL: host %s" % d["recording"]["hostname"])
if len(e["gpus"]) != 8 or e["recording"]["hostname"] != "node01": sys.exit("FAIL: after the end: %s" % e["gpus"])
PY
# slurmctld ran the epilog when the job ended: its line is there (or comes soon).
for _ in $(seq 600); do grep -q "job $JOB:" "$T/ep/jobs.log" 2>/dev/null && break; sleep 0.1; done
grep -q "job $JOB: " "$T/ep/jobs.log" ||
	fail "no epilog line: $(ls -la "$T/ep"; grep -i epilog "$LAB/log/slurmctld.log" | tail -5)"
grep "job $JOB: " "$T/ep/jobs.log" | grep -qv "no diagnosis" || fail "epilog: $(cat "$T/ep/jobs.log")"
echo "ok: fleet slurm lab"
