#!/bin/sh
# gpuwhy-epilog.sh - a one-line diagnosis of every finished Slurm job's GPUs,
# from the Prometheus the cluster's dcgm-exporters already feed.
#
# Install it as slurmctld's epilog (it runs once per job, on the controller):
#   slurm.conf:  EpilogSlurmctld=/etc/slurm/gpuwhy-epilog.sh
# and give it the Prometheus in /etc/default/gpuwhy-epilog (or the
# environment):
#   GPUWHY_PROMETHEUS=http://prometheus:9090
# Optional:
#   GPUWHY=/usr/local/bin/gpuwhy       the binary
#   GPUWHY_EPILOG_DIR=/var/log/gpuwhy   JOBID.txt (the whole report) and
#                                       jobs.log (one line per job) go here
#   GPUWHY_EPILOG_COMMENT=1             also put the line into the job's
#                                       AdminComment (sacct -o AdminComment)
#   GPUWHY_EPILOG_DELAY=0               seconds to wait first, for the job's
#                                       last samples to be scraped
# It never fails the job or the node: every error is logged and it exits 0.
# slurmctld gives its epilog no PATH; gpuwhy runs scontrol and sacct.
PATH=${PATH:-/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin}
export PATH
[ -r /etc/default/gpuwhy-epilog ] && . /etc/default/gpuwhy-epilog
GPUWHY=${GPUWHY:-gpuwhy}
DIR=${GPUWHY_EPILOG_DIR:-/var/log/gpuwhy}
JOB=${SLURM_JOB_ID:-${SLURM_JOBID:-}}
log() { printf '%s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*" >>"$DIR/jobs.log" 2>/dev/null; }
mkdir -p "$DIR" 2>/dev/null
[ -n "$JOB" ] || { log "no SLURM_JOB_ID"; exit 0; }
[ -n "${GPUWHY_PROMETHEUS:-}" ] || { log "job $JOB: GPUWHY_PROMETHEUS is not set"; exit 0; }
sleep "${GPUWHY_EPILOG_DELAY:-0}"

# The report in English (the line is read from it below).
"$GPUWHY" --lang en report --prometheus "$GPUWHY_PROMETHEUS" --job "$JOB" -o "$DIR/$JOB.txt" \
	2>"$DIR/$JOB.err"
rc=$?
if [ "$rc" -ge 2 ]; then
	log "job $JOB: no diagnosis: $(head -1 "$DIR/$JOB.err")"
	exit 0
fi
rm -f "$DIR/$JOB.err"
# The worst finding: the first error, else the first warning ("id: title").
line=$(awk '/^  ERROR / && !e { getline t; sub(/^ +/, "", t); e = $2 ": " t }
	     /^  WARN / && !w { getline t; sub(/^ +/, "", t); w = $2 ": " t }
	     END { print e ? e : w ? w : "no GPU problem found" }' "$DIR/$JOB.txt")
log "job $JOB: $line"
if [ "${GPUWHY_EPILOG_COMMENT:-0}" = 1 ]; then
	scontrol update JobId="$JOB" AdminComment="gpuwhy: $line" >/dev/null 2>&1 ||
		log "job $JOB: could not set AdminComment"
fi
exit 0
