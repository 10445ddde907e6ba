#!/usr/bin/env bash
# `--job ID` against a real single-node Slurm (slurmctld + slurmd + munge from
# Debian, on loopback, four fake GPUs: gres files are links to /dev/null) and
# a real Prometheus holding a simulated cluster (fleet_prom_lib.bash): a job
# run with --gres=gpu:2 is found on its node and GPU indices by scontrol, and
# the epilog example, run by slurmctld as EpilogSlurmctld, writes its line.
# Skipped (77) when Slurm cannot start here: not root, packages missing
# (scripts/install-deps --slurm), or a daemon fails.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/slurm_lab.bash"
slurm_lab_need sbatch
. "$(dirname "$0")/fleet_prom_lib.bash"
[ -n "$T" ] && [ -d "$T" ] || fail "no test folder"

mkdir -p "$T/ep"
# The Slurm node is node01, a node of the simulated cluster's series.
slurm_lab_conf node01 "EpilogSlurmctld=$T/epilog"
export TZ=UTC
trap 'rc=$?; timeout 10 scancel --user=root >/dev/null 2>&1; slurm_lab_down; (exit $rc); cleanup' EXIT

fleet_prom_up
# slurmctld runs the epilog with an environment of its own: the settings go through a wrapper.
printf '%s\n' "#!/bin/sh" \
	"export GPUWHY_PROMETHEUS=$URL GPUWHY_EPILOG_DIR=$T/ep GPUWHY=$GPUWHY TZ=UTC SLURM_CONF=$SLURM_CONF GPUWHY_EPILOG_DELAY=0" \
	"exec sh $SRC/deploy/slurm/gpuwhy-epilog.sh" >"$T/epilog"
chmod +x "$T/epilog"

slurm_lab_up

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
