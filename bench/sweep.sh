#!/usr/bin/env bash
# bench/sweep.sh [BUILD] [N]: what `gpuwhy sweep` costs and what --queue buys.
#
#   own cost   N configurations of a no-op command (`true`): the sweep's wall
#              time per configuration against N plain `gpuwhy run -- true`
#              (the recorder it reuses, the floor) in the same run; the
#              difference is the sweep's own work (plan, state file after
#              each run, reading every recording back, the results)
#   queue      8 configurations of `sim train` (about 2 s each) on the
#              simulated 8-GPU machine (h100x8-nvlink): one by one against
#              --queue, configurations per minute of each
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
N=${2:-20}
G=$(realpath "$BUILD/gpuwhy")
W=$(mktemp -d /tmp/gw-bench-sweep-XXXXXX)
export GPUWHY_SIM_STATE=$W/simstate GPUWHY_QUEUE=$W/q
cleanup() {
	"$G" queue stop >/dev/null 2>&1 || true
	rm -rf "$W"
}
trap cleanup EXIT
now() { date +%s.%N; }
calc() { python3 -c "print($1)"; }
vals=$(seq -s, 1 "$N")

# Fixed part: a sweep of one configuration against one run (it includes the
# half second the sweep spends measuring the host's free cores).
t0=$(now)
for i in $(seq "$N"); do
	"$G" --sim h100x1 run -o "$W/plain-$i.gpuwhy" --no-summary --interval 200ms -- sh -c "exec true $i" 2>/dev/null
done
t1=$(now)
"$G" --sim h100x1 sweep -o "$W/noop" --vary i="$vals" -- sh -c 'exec true {i}' >/dev/null 2>&1
t2=$(now)
"$G" --sim h100x1 sweep -o "$W/one" --vary i=1 -- sh -c 'exec true {i}' >/dev/null 2>&1
t3=$(now)
run_ms=$(calc "round(($t1 - $t0) * 1000 / $N, 1)")
per_ms=$(calc "round((($t2 - $t1) - ($t3 - $t2)) * 1000 / ($N - 1), 1)")
fixed_ms=$(calc "round(($t3 - $t2) * 1000 - $run_ms, 0)")
echo "own cost, $N no-op configurations: gpuwhy run alone $run_ms ms each;" \
	"the sweep $per_ms ms per configuration (x$(calc "round($per_ms / $run_ms, 2)") of run alone)" \
	"plus $fixed_ms ms once"

CMD=("$G" sim train --steps 60 --gpu-ms 30 --cpu-ms 1 --workers 1 --seed '{seed}')
t0=$(now)
"$G" --sim h100x8-nvlink sweep -o "$W/serial" --vary seed=1,2,3,4,5,6,7,8 -- "${CMD[@]}" >/dev/null 2>&1
t1=$(now)
"$G" --sim h100x8-nvlink sweep -o "$W/queued" --queue --vary seed=1,2,3,4,5,6,7,8 -- "${CMD[@]}" >/dev/null 2>&1
t2=$(now)
s=$(calc "round(8 * 60 / ($t1 - $t0), 1)")
q=$(calc "round(8 * 60 / ($t2 - $t1), 1)")
gpus=$(python3 -c "
import json, subprocess
t = json.loads(subprocess.run(['$G', 'queue', 'ls', '--json'], capture_output=True, text=True).stdout)
print(len({g for x in t for g in (x.get('gpus_used') or [])}))")
echo "8 configurations on h100x8-nvlink: one by one $s configurations/min," \
	"--queue $q configurations/min (x$(calc "round($q / $s, 2)"), on $gpus GPUs)"
