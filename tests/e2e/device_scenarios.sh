# query / status / topo against every shipped scenario: the values the scenario defines.
. "$(dirname "$0")/lib.bash"
have_sim || skip "simulated GPU not built"
q() { "$GPUWHY" --sim "$1" query --query-gpu="$2" --format=csv,noheader,nounits; }

# h100x1: identity, limits, GPM on Hopper, no fan on a passively cooled card
assert_eq "$(q h100x1 index | wc -l)" 1 "h100x1 GPU count"
assert_eq "$(q h100x1 name,memory.total,power.limit,clocks.max.sm,temperature.gpu.slowdown,pcie.link.gen.max,architecture,compute_cap)" \
	"NVIDIA H100 80GB HBM3, 81559, 700.00, 1980, 90, 5, Hopper, 9.0" "h100x1 facts"
assert_eq "$(q h100x1 fan.speed)" "[N/A]" "h100x1 fan absent"
sm=$(q h100x1 gpm.sm_active)
[ "$sm" != "[N/A]" ] || fail "h100x1 has GPM"
# units as nvidia-smi prints them
assert_eq "$("$GPUWHY" --sim h100x1 query --query-gpu=memory.total,power.limit --format=csv,noheader)" "81559 MiB, 700.00 W" "units"
hdr=$("$GPUWHY" --sim h100x1 query --query-gpu=index,clocks.sm,utilization.gpu --format=csv | head -1)
assert_eq "$hdr" "index, clocks.current.sm [MHz], utilization.gpu [%]" "csv header"

# h100x8-nvlink: 8 GPUs, NV18 between every pair, two NUMA nodes, all links up
assert_eq "$(q h100x8-nvlink index | wc -l)" 8 "h100x8 GPU count"
topo=$("$GPUWHY" --sim h100x8-nvlink topo)
assert_eq "$(echo "$topo" | grep -c '^GPU[0-7] .*NV18.*NV18.*NV18.*NV18.*NV18.*NV18.*NV18')" 8 "NV18 mesh"
assert_contains "$topo" "GPU7: 18/18 links active" "nvlink states"
assert_eq "$(echo "$topo" | awk '/^GPU4 /{print $NF}')" 1 "GPU4 NUMA node"
tj=$("$GPUWHY" --sim h100x8-nvlink topo --format json)
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["gpus"][2]["links"]["5"]=="NV18"; assert d["gpus"][0]["numa_node"]==0 and d["gpus"][7]["numa_node"]==1' "$tj" || fail "topo json"
# --gpus: indices and short UUIDs
assert_eq "$("$GPUWHY" --sim h100x8-nvlink --gpus 1,3 query --query-gpu=index --format=csv,noheader | paste -sd' ')" "1 3" "--gpus indices"
u5=$(q h100x8-nvlink uuid | sed -n 6p)
assert_eq "$("$GPUWHY" --sim h100x8-nvlink --gpus "${u5:0:12}" query --query-gpu=index --format=csv,noheader)" 5 "--gpus short UUID"
"$GPUWHY" --sim h100x8-nvlink --gpus 9 query --query-gpu=index 2>"$T/err"; assert_eq "$?" 2 "--gpus bad index"
assert_contains "$(cat "$T/err")" "GPU index 9 does not exist" "--gpus message"
# an empty list (a script's empty variable) selects nothing: refused, never "all GPUs",
# also by a command that opens no GPU, and in both spellings
for empty in "" "," " " " , "; do
	"$GPUWHY" --sim h100x8-nvlink --gpus "$empty" query --query-gpu=index --format=csv,noheader >"$T/out" 2>"$T/err"
	assert_eq "$?" 2 "--gpus '$empty' is a usage error"
	assert_eq "$(cat "$T/out")" "" "--gpus '$empty' prints no GPU"
	assert_eq "$(wc -l <"$T/err")" 1 "--gpus '$empty' one line"
	assert_contains "$(cat "$T/err")" "gpuwhy: --gpus: empty GPU list" "--gpus '$empty' message"
done
"$GPUWHY" --gpus= report "$T/none.gpuwhy" 2>"$T/err"; assert_eq "$?" 2 "--gpus= before any file is read"
assert_contains "$(cat "$T/err")" "--gpus: empty GPU list" "--gpus= message"
# GPUWHY_GPUS (how gpuwhy hands its selection to the gpuwhy it starts) set but empty is no selection
assert_eq "$(GPUWHY_GPUS= "$GPUWHY" --sim h100x8-nvlink query --query-gpu=index --format=csv,noheader | wc -l)" 8 "empty GPUWHY_GPUS"

# a100x4-pcie: two switches, no NVLink, no GPM on Ampere
topo=$("$GPUWHY" --sim a100x4-pcie topo)
assert_eq "$(echo "$topo" | awk '/^GPU0 /{print $2,$3,$4,$5}')" "X PIX SYS SYS" "a100x4 GPU0 row"
assert_eq "$(echo "$topo" | awk '/^GPU2 /{print $2,$3,$4,$5}')" "SYS SYS X PIX" "a100x4 GPU2 row"
assert_contains "$topo" "none (no NVLink" "a100x4 nvlink"
assert_eq "$(q a100x4-pcie gpm.sm_active | sort -u)" "[N/A]" "no GPM on Ampere"

# rtx4090-throttle: thermal episode at 30-60 s, power cap at 80-105 s (of every 120 s)
r=$(GPUWHY_SIM_TIME=40 q rtx4090-throttle clocks.sm,clocks_event_reasons.sw_thermal_slowdown,clocks_event_reasons.hw_thermal_slowdown,fan.speed)
assert_eq "$r" "1650, Active, Active, 100" "thermal episode"
t=$(GPUWHY_SIM_TIME=40 q rtx4090-throttle temperature.gpu); assert_ge "$t" 88 "temperature in episode"
assert_eq "$(GPUWHY_SIM_TIME=90 q rtx4090-throttle clocks_event_reasons.sw_power_cap)" "Active" "power cap episode"
assert_eq "$(GPUWHY_SIM_TIME=10 q rtx4090-throttle clocks_event_reasons.active)" "0x0000000000000000" "no episode"
assert_eq "$(q rtx4090-throttle ecc.errors.uncorrected.volatile.total,serial)" "[N/A], [N/A]" "consumer card: no ECC, no serial"

# a100x2-pcie-degraded: Gen3 x8 on a Gen4 x16 link, replay counter rising 20/s
assert_eq "$(q a100x2-pcie-degraded pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max | head -1)" "3, 4, 8, 16" "degraded link"
assert_eq "$(q a100x2-pcie-degraded pcie.link.gen.current,pcie.link.width.current | tail -1)" "4, 16" "healthy link"
r1=$(GPUWHY_SIM_TIME=1 q a100x2-pcie-degraded pcie.replay_counter | head -1)
r2=$(GPUWHY_SIM_TIME=11 q a100x2-pcie-degraded pcie.replay_counter | head -1)
assert_eq "$((r2 - r1))" 200 "replay counter over 10 s"

# l4x2-foreign: a foreign process holding memory, and memory held by a gone PID
js=$("$GPUWHY" --sim l4x2-foreign status --format json)
python3 - "$js" <<'PY' || fail "l4x2-foreign processes"
import json, sys
d = json.loads(sys.argv[1])
p = {x["pid"]: x for x in d["processes"]}
assert p[1]["gpu"] == 0 and p[1]["gpu_memory_mib"] == 15360 and p[1]["running_here"], p
assert p[4194001]["gpu"] == 1 and p[4194001]["gpu_memory_mib"] == 9216 and not p[4194001]["running_here"], p
assert d["gpus"][0]["memory.used"] >= 15360
PY
assert_contains "$("$GPUWHY" --sim l4x2-foreign status)" "(not running here)" "status text for a gone PID"

# an absent value is "n/a" alone, never with a unit ("util n/a%"): MIG has no whole-GPU utilization
out=$("$GPUWHY" --sim h100x1-mig status)
assert_contains "$out" "util   n/a  mem " "status on a MIG GPU"
for s in $("$GPUWHY" sim list); do
	bad=$(GPUWHY_SIM_TIME=6 "$GPUWHY" --sim "$s" status | grep -E 'n/a ?(%|C|W|MiB|MHz)' || true)
	[ -z "$bad" ] || fail "status on $s: an absent value with a unit: $bad"
done

# h100x1-lost: fine before 5 s, lost after; the command still exits 0 and says so
assert_eq "$(GPUWHY_SIM_TIME=1 q h100x1-lost utilization.gpu)" "85" "before the loss"
assert_contains "$(GPUWHY_SIM_TIME=6 "$GPUWHY" --sim h100x1-lost status)" "LOST" "status of a lost GPU"
assert_eq "$(GPUWHY_SIM_TIME=6 q h100x1-lost utilization.gpu,memory.used)" "[N/A], [N/A]" "lost GPU values absent"
# one GPU of eight lost: the other seven keep being sampled
python3 - "$GPUWHY_SRC/sim/scenarios/h100x8-nvlink.json" "$T/lost3.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["name"] = "h100x8-gpu3-lost"
d["gpus"][3]["lost_after_s"] = 2
json.dump(d, open(sys.argv[2], "w"))
PY
out=$(GPUWHY_SIM_TIME=3 "$GPUWHY" --sim "$T/lost3.json" query --query-gpu=index,memory.total --format=csv,noheader,nounits)
assert_eq "$(echo "$out" | grep -c ', 81559$')" 7 "seven GPUs still sampled"
assert_eq "$(echo "$out" | sed -n 4p)" "3, [N/A]" "GPU 3 lost"

# Xid errors come as NVML events: 0 until one is seen, then the last one (79 when GPU 3
# falls off the bus 2 s into its scenario); the other GPUs stay at 0
GPUWHY_SIM_STATE="$T/xidstate" "$GPUWHY" --sim "$T/lost3.json" query --query-gpu=index,xid.last \
	--format=csv,noheader -lms 500 --count 8 >"$T/xid.csv"
assert_eq "$(head -8 "$T/xid.csv" | cut -d, -f2 | sort -u | tr -d ' ' | paste -sd' ')" "0" "no Xid at first"
assert_eq "$(tail -8 "$T/xid.csv" | sed -n 4p)" "3, 79" "Xid 79 of the lost GPU"
assert_eq "$(tail -8 "$T/xid.csv" | sed -n 1p)" "0, 0" "no Xid on a healthy GPU"

# JSON: numbers as numbers, absent as null, booleans for Enabled/Active
js=$("$GPUWHY" --sim h100x1 query --query-gpu=index,power.draw,fan.speed,persistence_mode,pstate --format=json)
python3 -c 'import json,sys; g=json.loads(sys.argv[1])["gpus"][0]; assert g["index"]==0 and isinstance(g["power.draw"],(int,float)) and g["fan.speed"] is None and g["persistence_mode"] is True and g["pstate"]=="P0", g' "$js" || fail "query json"
# loops: -lms with --count, JSON Lines, dmon
assert_eq "$("$GPUWHY" --sim h100x8-nvlink query --query-gpu=index -lms 50 --count 3 --format=csv,noheader | wc -l)" 24 "loop rows"
n=$("$GPUWHY" --sim h100x1 query --query-gpu=utilization.gpu -lms 50 --count 4 --format=json | python3 -c 'import json,sys; print(sum(1 for l in sys.stdin if json.loads(l)["gpus"]))')
assert_eq "$n" 4 "JSON Lines"
dm=$("$GPUWHY" --sim h100x1 query --dmon -lms 50 --count 2)
assert_eq "$(echo "$dm" | head -1 | awk '{print $2,$3,$4}')" "gpu pwr gtemp" "dmon header"
assert_eq "$(echo "$dm" | grep -c '^ *0 ')" 2 "dmon rows"
assert_contains "$("$GPUWHY" query --help-query)" "gpm.sm_active" "help-query"

# errors: unknown field, bad format, malformed scenario, no driver
"$GPUWHY" --sim h100x1 query --query-gpu=index,bogus 2>"$T/err"; assert_eq "$?" 2 "unknown field"
assert_contains "$(cat "$T/err")" 'Field "bogus" is not a valid field to query.' "unknown field message"
"$GPUWHY" --sim h100x1 query --query-gpu=index --format=xml 2>/dev/null; assert_eq "$?" 2 "bad format"
printf '{\n  "schema": 1,\n  "gpus": [ {"name": "x",, } ]\n}\n' >"$T/bad.json"
"$GPUWHY" --sim "$T/bad.json" status >/dev/null 2>"$T/err"; rc=$?
assert_eq "$rc" 3 "malformed scenario exit"
assert_contains "$(cat "$T/err")" "bad.json:3:" "malformed scenario names line"
"$GPUWHY" --sim no-such-scenario status 2>/dev/null; assert_eq "$?" 2 "unknown scenario"
env -u GPUWHY_NVML LD_LIBRARY_PATH=/nonexistent "$GPUWHY" query --query-gpu=index 2>"$T/err"; rc=$?
if ! ldconfig -p 2>/dev/null | grep -q libnvidia-ml.so.1; then
	assert_eq "$rc" 3 "no driver exit"
	assert_eq "$(cat "$T/err")" "gpuwhy: no NVIDIA driver: libnvidia-ml.so.1 not found (try --sim h100x1 to explore on a simulated GPU)" "no driver message"
fi
echo "1 passed, 0 failed"

# The simulated world does not mix with the real one: PID 1 of l4x2-foreign is the
# scenario's python3 of alice in every face, never this host's PID 1.
export GPUWHY_SIM_TIME=100
st=$("$GPUWHY" --sim l4x2-foreign status)
assert_contains "$st" "^ *0 *1 alice  *C .* python3$" "status: the scenario's process"
assert_eq "$(printf '%s\n' "$st" | grep -c "$(tr '\0' ' ' </proc/1/cmdline | cut -c1-20)")" 0 "status: nothing of the host's PID 1"
assert_contains "$("$GPUWHY" --sim l4x2-foreign top --once)" "^ *1 alice .* python3" "top: the scenario's process"
assert_contains "$("$GPUWHY" --sim l4x2-foreign doctor 2>&1)" "GPU 0: pid 1 alice 'python3'" "doctor: the scenario's process"
unset GPUWHY_SIM_TIME
echo "ok: scenario processes keep their scenario name and user"
