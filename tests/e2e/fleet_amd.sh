#!/usr/bin/env bash
# `gpuwhy fleet` on a cluster with AMD GPUs: `gpuwhy --sim mi300x8 exporter` (eight MI300X
# read from the amdgpu tree, 8 s busy and 2 s waiting in every 10 s while holding 150 GB) and
# an idle NVIDIA node (h100x1), each a node of its own ($NODE_NAME), scraped every second by
# a real Prometheus on loopback. fleet must list the eight AMD GPUs on their node, busy and
# idle holding memory and nothing else, beside the idle, empty H100; the vendor, which fleet
# does not show, is gpuwhy_gpu_info's label in Prometheus, and what Prometheus does not hold
# reads n/a in a node's report. Nothing here is timed: it waits until Prometheus holds the samples.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/prom_lab.bash"
have_sim || skip "simulated GPU not built"
command -v prometheus >/dev/null || skip "prometheus missing (scripts/install-deps --extra)"
command -v python3 >/dev/null || skip "python3 missing"
command -v curl >/dev/null || skip "curl missing"
unset GPUWHY_SYSFS_ROOT GPUWHY_SIM_TIME

declare -A PORT=([amd]=$(free_port) [nv]=$(free_port))
prom_config "127.0.0.1:${PORT[amd]}" "127.0.0.1:${PORT[nv]}" >"$T/prom.yml"
START=$(date +%s)
for n in amd:mi300x8 nv:h100x1; do
	node=${n%%:*} scen=${n#*:}
	GPUWHY_SIM_STATE="$T/$node" NODE_NAME="$node" "$GPUWHY" --sim "$scen" exporter \
		--listen "127.0.0.1:${PORT[$node]}" --interval 1s 2>"$T/$node.log" &
	PIDS_TO_KILL+=($!)
	wait_line "$T/$node.log" 'serving http://127.0.0.1:' $!
done
prom_start

q() { prom_q "$@"; }
# Until both targets have 30 scrapes and every AMD GPU has at least two busy and two waiting
# samples at the 1 s steps fleet reads (a subquery at 1 s is evaluated at the same whole
# seconds as fleet's steps from START). At most 10 min.
U='DCGM_FI_DEV_GPU_UTIL{Hostname="amd"}'
for _ in $(seq 600); do
	read -r nt least < <(q 'count_over_time(up[10m])')
	read -r nb busy < <(q "count_over_time(($U >= 10)[10m:1s])")
	read -r ni idle < <(q "count_over_time(($U < 10)[10m:1s])")
	[ "${nt:-0}" = 2 ] && [ "${nb:-0}" = 8 ] && [ "${ni:-0}" = 8 ] &&
		awk -v a="$least" -v b="$busy" -v i="$idle" 'BEGIN{exit !(a >= 30 && b >= 2 && i >= 2)}' && break
	sleep 1
done
assert_eq "$nt" 2 "targets scraped"
assert_ge "$least" 30 "scrapes of the least scraped target"
assert_eq "$nb/$ni" 8/8 "AMD GPUs with busy and waiting samples"
assert_ge "$busy" 2 "busy samples of the least busy AMD GPU"
assert_ge "$idle" 2 "waiting samples of the least waiting AMD GPU"
# the vendor: gpuwhy_gpu_info's label, on each node's GPUs (gpuwhy's own series carry no
# Hostname: the node is Prometheus's instance)
read -r n _ < <(q "gpuwhy_gpu_info{instance=\"127.0.0.1:${PORT[amd]}\",vendor=\"amd\",model_name=\"AMD Instinct MI300X OAM\",uuid=\"\"}")
assert_eq "$n" 8 "AMD GPUs with vendor=\"amd\" in Prometheus"
read -r n _ < <(q "gpuwhy_gpu_info{instance=\"127.0.0.1:${PORT[nv]}\",vendor=\"nvidia\"}")
assert_eq "$n" 1 "NVIDIA GPUs with vendor=\"nvidia\" in Prometheus"
read -r n _ < <(q 'gpuwhy_gpu_info{vendor!~"amd|nvidia"}')
assert_eq "$n" 0 "GPUs with another vendor"

TQ=$(date +%s)
"$GPUWHY" fleet --prometheus "$URL" --from "$START" --to "$TQ" --step 1s --by gpu --format json \
	-o "$T/fleet.json" 2>"$T/fleet.err"
rc=$?
[ "$rc" -le 1 ] || fail "fleet exit $rc: $(cat "$T/fleet.err")"
python3 - "$T/fleet.json" <<'PY' || fail "fleet on the AMD node"
import json, sys
d = json.load(open(sys.argv[1]))
def bad(msg):
    sys.exit("FAIL: %s\n%s" % (msg, json.dumps({k: d[k] for k in ("nodes", "gpus", "groups", "findings", "not_checked")}, indent=1)))
if (d["nodes"], d["gpus"]) != (2, 9): bad("nodes and GPUs %s, %s" % (d["nodes"], d["gpus"]))
hours = {g["name"]: g["hours"] for g in d["groups"]}
want = ["amd/%d" % i for i in range(8)] + ["nv/0"]
if sorted(hours) != sorted(want): bad("GPUs %s" % sorted(hours))
for i in range(8):
    h = hours["amd/%d" % i]
    # the training job's steps and its waits, holding its 150 GB all along
    if h["busy"] <= 0 or h["idle-holding-memory"] <= 0: bad("amd/%d: %s" % (i, h))
    if h["lost"] or h["throttled"] or h["power-capped"] or h["idle-empty"]: bad("amd/%d: %s" % (i, h))
h = hours["nv/0"]
if h["idle-empty"] <= 0 or h["busy"] or h["idle-holding-memory"] or h["lost"]: bad("nv/0: %s" % h)
for f in d["findings"]:
    if f["node"] == "amd" and f["severity"] in ("warn", "error"): bad("%s on the AMD node" % f["rule"])
if not any(f["node"] == "nv" and f["rule"] == "gpu-idle" and f["gpus"] == [0] for f in d["findings"]):
    bad("no gpu-idle on the idle H100")
# the MI300X export no clock-event reasons: throttling and the power cap were not checked
# there (gpuwhy_gpu_info says they are AMD's), and fleet says so; the H100 is not named
nc = d["not_checked"]
if not any(n.startswith("amd: GPUs 0, 1, 2, 3, 4, 5, 6 and 7 report no clock-event reasons") and "power-capped" in n for n in nc):
    bad("nothing says the AMD GPUs' throttle reasons were not checked: %s" % nc)
if any(n.startswith("nv:") for n in nc): bad("not-checked on the NVIDIA node: %s" % nc)
PY
echo "ok: fleet lists the eight MI300X on their node, busy and idle holding memory"
"$GPUWHY" fleet --prometheus "$URL" --from "$START" --to "$TQ" --step 1s --by gpu >"$T/fleet.txt"
for i in 0 7; do grep -Eq "^  amd/$i( |$)" "$T/fleet.txt" || fail "text: amd/$i: $(cat "$T/fleet.txt")"; done
# a node's report: the boards by their model name; what Prometheus does not hold is n/a
"$GPUWHY" report --prometheus "$URL" --node amd --from "$START" --to "$TQ" --step 1s >"$T/node.txt" ||
	fail "report --node amd: exit $?: $(cat "$T/node.txt")"
grep -q '^  machine   amd, driver n/a, CUDA n/a, 8 GPUs (AMD Instinct MI300X OAM)$' "$T/node.txt" ||
	fail "the AMD node's machine line: $(head -5 "$T/node.txt")"
grep -q 'GPUs 0, 1, 2, 3, 4, 5, 6 and 7 report no clock-event reasons' "$T/node.txt" ||
	fail "the AMD node's report says nothing of the reasons not checked: $(cat "$T/node.txt")"
echo "ok: fleet_amd"
