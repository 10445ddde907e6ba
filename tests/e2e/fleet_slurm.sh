#!/usr/bin/env bash
# Slurm jobs as windows of a real Prometheus on loopback: `--job ID` takes a
# job's nodes, GPU indices and time from scontrol (while slurmctld holds it)
# or sacct (accounting), else from dcgm-exporter's hpc_job label; `fleet
# --by user` groups by the jobs' Slurm users; the epilog example
# (deploy/slurm/gpuwhy-epilog.sh) writes each job's one line. scontrol and
# sacct are stand-ins here that print what Slurm 22.05 prints (the shapes
# tests/unit/test_slurm_alloc.c reads too); e2e/fleet_slurm_lab runs a real
# slurmctld where one can start.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/fleet_prom_lib.bash"
export TZ=UTC # Slurm prints local times
H=3600
cat >"$T/plant.json" <<'JSON'
{"plants": [
 {"kind": "busy", "node": "node01", "gpus": "0-7", "job": "101"},
 {"kind": "thermal", "node": "node02", "gpus": "3", "from_h": 1, "to_h": 3, "job": "4242"},
 {"kind": "idle-holding-memory", "node": "node03", "gpus": "1", "from_h": 1, "to_h": 6, "job": "4343"},
 {"kind": "power-capped", "node": "node02", "gpus": "6", "from_h": 3, "to_h": 5},
 {"kind": "reserved-idle", "node": "node04", "gpus": "0-7", "from_h": 3, "to_h": 6, "job": "4444"}
]}
JSON
PLANT=$T/plant.json fleet_prom_up
at() { date -u -d @$((START + $1 * H)) +%Y-%m-%dT%H:%M:%S; }

# The stand-ins: scontrol holds 4242 (node02 GPU 3, alice) and, in its
# one-line listing, 4444 (dave); sacct knows 101 (carol), 4343 (node03, bob, one
# GPU without its index: its hpc_job label says which) and 4545 (node02, erin,
# no label: all its GPUs). Neither knows 4444's allocation. Calls are logged.
mkdir -p "$T/bin"
cat >"$T/bin/scontrol" <<SH
#!/bin/sh
echo "scontrol \$*" >>"$T/slurm.calls"
case "\$*" in
"show job -d 4242") cat <<OUT
JobId=4242 JobName=hot
   UserId=alice(1000) GroupId=alice(1000) MCS_label=N/A
   JobState=COMPLETED Reason=None Dependency=(null)
   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0
   StartTime=$(at 1) EndTime=$(at 3) Deadline=N/A
   Partition=gpu AllocNode:Sid=login1:4242
   ReqNodeList=(null) ExcNodeList=(null)
   NodeList=node02
   BatchHost=node02
   NumNodes=1 NumCPUs=8 NumTasks=1 CPUs/Task=8 ReqB:S:C:T=0:0:*:*
     Nodes=node02 CPU_IDs=0-7 Mem=0 GRES=gpu:1(IDX:3)
   Command=/home/alice/hot.sh
OUT
;;
"-o show job") echo "JobId=4242 JobName=hot UserId=alice(1000) JobState=COMPLETED NodeList=node02"
	echo "JobId=4444 JobName=hold UserId=dave(1003) JobState=RUNNING NodeList=node04";;
update*) ;;
*) echo "slurm_load_jobs error: Invalid job id specified" >&2; exit 1;;
esac
SH
cat >"$T/bin/sacct" <<SH
#!/bin/sh
echo "sacct \$*" >>"$T/slurm.calls"
case "\$2" in *101*) echo "101|COMPLETED|0:0|$(at 0)|$(at 6)|carol|node01|billing=8,cpu=8,gres/gpu=8,node=1";; esac
case "\$2" in *4343*) echo "4343|COMPLETED|0:0|$(at 1)|$(at 6)|bob|node03|billing=1,cpu=1,gres/gpu=1,node=1";; esac
case "\$2" in *4545*) echo "4545|COMPLETED|0:0|$(at 3)|$(at 5)|erin|node02|billing=8,cpu=8,gres/gpu=8,node=1";; esac
exit 0
SH
chmod +x "$T/bin/scontrol" "$T/bin/sacct"
export PATH="$T/bin:$PATH"

report() { "$GPUWHY" report --prometheus "$URL" --job "$1" --format json -o "$T/$1.json" 2>"$T/err" ||
	[ $? = 1 ] || fail "report --job $1: $(cat "$T/err")"; }
report 4242 # scontrol: node02, GPU 3 only, hours 1..3
report 4343 # sacct: node03, hours 1..6, the GPU its label names
report 4545 # sacct: node02, hours 3..5, all its GPUs (no indices, no label)
report 4444 # not in Slurm: the hpc_job label
"$GPUWHY" report --prometheus "$URL" --job 4242 >"$T/4242.txt"
assert_contains "$(head -1 "$T/4242.txt")" "job 4242 of alice on node02 (Slurm)" "header"
python3 - "$T" "$START" <<'PY' || fail "reports"
import json, sys
T, start = sys.argv[1], float(sys.argv[2]); H = 3600.0
def load(j): return json.load(open("%s/%s.json" % (T, j)))
def bad(msg, d): sys.exit("FAIL: " + msg + "\n" + json.dumps(d["findings"], indent=1)[:2000])
def ids(d): return {f["id"]: f for f in d["findings"]}
d = load(4242)
if [g["index"] for g in d["gpus"]] != [3] or d["recording"]["hostname"] != "node02": bad("4242: GPUs %s" % d["gpus"], d)
if d["recording"]["start_wall"] != start + H or d["recording"]["duration_s"] != 2 * H: bad("4242: window %s" % d["recording"], d)
if "throttled" not in ids(d) or ids(d)["throttled"]["gpus"] != [3]: bad("4242: not throttled", d)
d = load(4343)
if [g["index"] for g in d["gpus"]] != [1] or d["recording"]["hostname"] != "node03": bad("4343: GPUs", d)
if d["recording"]["start_wall"] != start + H or d["recording"]["duration_s"] != 5 * H: bad("4343: window %s" % d["recording"], d)
f = ids(d).get("memory-full-compute-idle")
if not f or f["gpus"] != [1]: bad("4343: no memory-full-compute-idle on GPU 1", d)
d = load(4545)
if len(d["gpus"]) != 8 or d["recording"]["hostname"] != "node02": bad("4545: GPUs", d)
if d["recording"]["start_wall"] != start + 3 * H or d["recording"]["duration_s"] != 2 * H: bad("4545: window", d)
f = ids(d).get("throttled")
if not f or f["gpus"] != [6] or "power cap" not in f["title"]: bad("4545: GPU 6 not held by the power cap", d)
d = load(4444)
if len(d["gpus"]) != 8 or d["recording"]["hostname"] != "node04": bad("4444: GPUs", d)
if abs(d["recording"]["start_wall"] - (start + 3 * H)) > 60: bad("4444: start", d)
if "gpu-idle" not in ids(d): bad("4444: not idle", d)
PY
grep -q "scontrol show job -d 4444" "$T/slurm.calls" || fail "Slurm was not asked about 4444"

# fleet --job: only the job's GPU over its hours; --by user: Slurm's users.
"$GPUWHY" fleet --prometheus "$URL" --job 4242 --step 60s --format json -o "$T/fj.json" ||
	[ $? = 1 ] || fail "fleet --job"
"$GPUWHY" fleet --prometheus "$URL" --from $START --to $END --step 60s --by user --format json \
	-o "$T/fu.json" || [ $? = 1 ] || fail "fleet --by user"
python3 - "$T/fj.json" "$T/fu.json" <<'PY' || fail "fleet"
import json, sys
j = json.load(open(sys.argv[1])); u = json.load(open(sys.argv[2]))
tot = sum(v for k, v in j["hours"].items() if k not in ("not-busy", "no-data"))
# (the plant's GPU heats up for a few minutes before its clocks are held)
if abs(tot - 2) > 0.05 or j["hours"]["throttled"] < 1.8: sys.exit("FAIL: fleet --job hours %s" % j["hours"])
if [(f["node"], f["gpus"], f["rule"]) for f in j["findings"]] != [("node02", [3], "throttled")]: sys.exit("FAIL: fleet --job findings %s" % j["findings"])
g = {x["name"]: x["hours"] for x in u["groups"]}
if u["by"] != "user" or set(g) != {"alice", "bob", "carol", "dave", "(no user)"}: sys.exit("FAIL: users %s" % sorted(g))
# (a series Prometheus stops seeing still answers for 5 minutes: a GPU's hours next to a
# change of job go partly to the job before, up to 5 min x 8 GPUs)
if abs(g["carol"]["busy"] - 48) > 0.2 or not 23.2 <= g["dave"]["idle-empty"] <= 24.05 or not 4.85 <= g["bob"]["idle-holding-memory"] <= 5.05:
    sys.exit("FAIL: user hours %s" % g)
PY

# The epilog example: one line per job, and the AdminComment when asked.
EP="$SRC/deploy/slurm/gpuwhy-epilog.sh"
SLURM_JOB_ID=4242 GPUWHY_PROMETHEUS=$URL GPUWHY_EPILOG_DIR=$T/ep GPUWHY_EPILOG_COMMENT=1 \
	GPUWHY=$GPUWHY sh "$EP" || fail "epilog exit $?"
SLURM_JOB_ID=5555 GPUWHY_PROMETHEUS=$URL GPUWHY_EPILOG_DIR=$T/ep GPUWHY=$GPUWHY sh "$EP" ||
	fail "epilog of an unknown job exit $?"
assert_contains "$(sed -n 1p "$T/ep/jobs.log")" "job 4242: throttled: GPU 3 clocks held by thermal slowdown" "epilog line"
assert_contains "$(sed -n 2p "$T/ep/jobs.log")" "job 5555: no diagnosis: gpuwhy: job 5555: no GPU series" "epilog, no series"
grep -q "scontrol update JobId=4242 AdminComment=gpuwhy: throttled: GPU 3" "$T/slurm.calls" ||
	fail "no AdminComment: $(cat "$T/slurm.calls")"
grep -q "^GPU 3" "$T/ep/4242.txt" || grep -q "GPU 3" "$T/ep/4242.txt" || fail "epilog report"
echo "ok: fleet slurm"
