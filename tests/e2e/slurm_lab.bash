# A real single-node Slurm for the e2e tests (sourced, not a test itself):
# slurmctld + slurmd + munge from Debian, on loopback ports picked here, with
# four fake GPUs (gres files are links to /dev/null), everything under $T/lab.
# The sourcing test provides T and skip; a lab that cannot start skips (77):
# not root, packages missing (scripts/install-deps --slurm), or a daemon fails.

# wait_up CONDITION: until the shell condition holds, 30 s at most.
wait_up() { timeout 30 bash -c "until $1; do sleep 0.1; done"; }

# slurm_lab_need [COMMAND...]: skip unless root, with the daemons, these
# commands and the munge user.
slurm_lab_need() {
	[ "$(id -u)" = 0 ] || skip "needs root"
	local b
	for b in slurmctld slurmd scontrol munged runuser "$@"; do
		command -v "$b" >/dev/null || skip "$b not installed"
	done
	id munge >/dev/null 2>&1 || skip "no munge user"
}

# slurm_lab_conf NODE [LINE...]: LAB, the lab's folders and its configuration
# (SLURM_CONF, exported) for one node NODE on 127.0.0.1; the LINEs are added
# to slurm.conf.
slurm_lab_conf() {
	LAB_NODE=$1
	shift
	LAB=$T/lab
	mkdir -p "$LAB"/{etc,state,spool/"$LAB_NODE",log,run,dev,munge}
	chmod 711 "$T" "$LAB"
	local ctld sld
	read -r ctld sld < <(python3 -c '
import socket
def port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); n = s.getsockname()[1]; s.close(); return n
print(port(), port())')
	printf '%s\n' "ClusterName=lab" "SlurmctldHost=localhost" "SlurmctldPort=$ctld" \
		"SlurmdPort=$sld" "SlurmUser=root" "SlurmdUser=root" "AuthType=auth/munge" \
		"AuthInfo=socket=$LAB/munge/munge.socket.2" "CredType=cred/munge" \
		"CommunicationParameters=NoCtldInAddrAny,NoInAddrAny" "StateSaveLocation=$LAB/state" \
		"SlurmdSpoolDir=$LAB/spool/%n" "SlurmctldPidFile=$LAB/run/slurmctld.pid" \
		"SlurmdPidFile=$LAB/run/slurmd-%n.pid" "SlurmctldLogFile=$LAB/log/slurmctld.log" \
		"SlurmdLogFile=$LAB/log/slurmd-%n.log" "SlurmctldDebug=info" "SlurmdDebug=info" \
		"ProctrackType=proctrack/linuxproc" \
		"TaskPlugin=task/none" "JobAcctGatherType=jobacct_gather/none" \
		"SelectType=select/cons_tres" "SelectTypeParameters=CR_Core" \
		"SchedulerType=sched/backfill" "SchedulerParameters=batch_sched_delay=0" \
		"MpiDefault=none" "MailProg=/bin/true" "GresTypes=gpu" \
		"AccountingStorageType=accounting_storage/none" "$@" \
		"MinJobAge=300" "KillWait=2" "ReturnToService=2" \
		"SlurmdParameters=config_overrides" "SlurmdTimeout=60" \
		"NodeName=$LAB_NODE NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=8 Sockets=1 CoresPerSocket=8 ThreadsPerCore=1 RealMemory=4000 Gres=gpu:4 State=UNKNOWN" \
		"PartitionName=debug Nodes=$LAB_NODE Default=YES MaxTime=INFINITE State=UP" \
		>"$LAB/etc/slurm.conf"
	printf '%s\n' "AutoDetect=off" "NodeName=$LAB_NODE Name=gpu File=$LAB/dev/nvidia[0-3]" \
		>"$LAB/etc/gres.conf"
	local i
	for i in 0 1 2 3; do ln -sf /dev/null "$LAB/dev/nvidia$i"; done
	export SLURM_CONF=$LAB/etc/slurm.conf
}

# slurm_lab_up: munged, slurmctld and slurmd, until the node is idle.
slurm_lab_up() {
	chown munge:munge "$LAB/munge"
	chmod 711 "$LAB/munge"
	head -c 1024 /dev/urandom >"$LAB/munge/munge.key"
	chown munge:munge "$LAB/munge/munge.key"
	chmod 400 "$LAB/munge/munge.key"
	runuser -u munge -- munged --socket="$LAB/munge/munge.socket.2" \
		--key-file="$LAB/munge/munge.key" --log-file="$LAB/munge/munged.log" \
		--pid-file="$LAB/munge/munged.pid" --seed-file="$LAB/munge/munged.seed" \
		</dev/null >>"$LAB/log/daemons.out" 2>&1 || skip "munged did not start"
	wait_up "[ -S $LAB/munge/munge.socket.2 ]" || skip "munged socket missing"
	# The daemons keep nothing of ours open (ctest waits for the test's output to close).
	slurmctld </dev/null >>"$LAB/log/daemons.out" 2>&1 || skip "slurmctld did not start"
	wait_up "scontrol ping 2>/dev/null | grep -q UP" ||
		skip "slurmctld not answering ($(tail -3 "$LAB/log/slurmctld.log"))"
	slurmd -N "$LAB_NODE" </dev/null >>"$LAB/log/daemons.out" 2>&1 || skip "slurmd did not start"
	wait_up "sinfo -h -o %T 2>/dev/null | grep -qx idle" ||
		skip "node not idle ($(sinfo -h -o '%T %E' 2>&1))"
}

# slurm_lab_down: the daemons by their PID files: SIGTERM, then SIGKILL after 5 s.
slurm_lab_down() {
	local f pid
	for f in "$LAB/run/slurmd-$LAB_NODE.pid" "$LAB/run/slurmctld.pid" "$LAB/munge/munged.pid"; do
		pid=$(cat "$f" 2>/dev/null) || continue
		# only if that PID is still one of our daemons (a stale file's PID may be reused)
		tr '\0' ' ' 2>/dev/null </proc/"$pid"/cmdline | grep -qE "slurm|munged" || continue
		kill "$pid" 2>/dev/null || continue
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null || true
	done
}
