# AMD GPUs behind the device layer: the amdgpu fixture trees (GPUWHY_SYSFS_ROOT) and the
# simulated AMD scenarios (mi300x8, rx7900xtx, rx7900xtx-throttle, apu-780m) through status,
# query, top, record, report, compare, the exporter and the queue's placement; a mixed machine
# lists both vendors.
. "$(dirname "$0")/lib.bash"
FIX=$(cd "$(dirname "$0")/../fixtures/amdgpu" && pwd)
unset GPUWHY_SYSFS_ROOT GPUWHY_SIM_TIME
# a real NVIDIA driver's GPUs would come first and shift the fixture's indices
[ -e /dev/nvidiactl ] && skip "a real NVIDIA driver is present"

# --- a fixture tree, no NVIDIA library needed: PCI order (card1 at 1b before card0 at 9f)
Q=name,utilization.gpu,memory.used,memory.total,temperature.gpu,power.draw
out=$(GPUWHY_NVML=/nonexistent/libnvidia-ml.so.1 GPUWHY_SYSFS_ROOT=$FIX/mi300x \
	"$GPUWHY" query --query-gpu=$Q --format=csv,noheader,nounits 2>&1)
assert_eq "$?" 3 "an explicit --nvml/GPUWHY_NVML that fails stays a failure"
out=$(GPUWHY_SYSFS_ROOT=$FIX/mi300x "$GPUWHY" query --query-gpu=$Q --format=csv,noheader,nounits 2>&1)
assert_eq "$(echo "$out" | head -1)" "AMD Instinct MI300X OAM, 0, 283, 196608, 40, 131.00" "fixture GPU 0"
assert_eq "$(echo "$out" | wc -l)" 2 "two MI300X"
# absent stays absent: no fan, no UUID, no clock-event reasons on an MI300X tree; its RAS
# counts are the ECC totals (gfx 1 uncorrectable; the xgmi block "currently inaccessible")
out=$(GPUWHY_SYSFS_ROOT=$FIX/mi300x "$GPUWHY" query \
	--query-gpu=index,fan.speed,uuid,clocks_event_reasons.active,ecc.errors.uncorrected.volatile.total,power.limit \
	--format=csv,noheader)
assert_eq "$(echo "$out" | head -1)" "0, [N/A], [N/A], [N/A], 1, 750.00 W" "absent fields"
# --gpus selects by index across the PCI order
out=$(GPUWHY_SYSFS_ROOT=$FIX/mi300x "$GPUWHY" --gpus 1 query --query-gpu=index,pci.bus_id --format=csv,noheader)
assert_eq "$out" "1, 00000000:9F:00.0" "--gpus 1"
# processes from the tree's proc/ (fdinfo): client 17 on 0000:9f:00.0 is PID 4242's
R=$T/root
mkdir -p "$R" && ln -s "$FIX/mi300x/sys" "$R/sys" && cp -r "$FIX/proc" "$R/proc"
out=$(GPUWHY_SYSFS_ROOT=$R "$GPUWHY" status)
assert_eq "$?" 0 "status on the tree"
assert_contains "$out" "GPU 1  AMD Instinct MI300X OAM" "status GPU line"
assert_contains "$out" "fan n/a" "no fan on an MI300X"
echo "$out" | grep -Eq '^ +1 +4242 ' || fail "PID 4242 on GPU 1: $out"
# and from the KFD's files (tests/fixtures/amdgpu/kfd), readable by every user: PID 8000,
# whose fdinfo is closed to us, holds 3 GiB + 1 MiB on 0000:1b:00.0 (two nodes of it) and
# nothing on 0000:9f:00.0; PID 4242 keeps what its fdinfo says
R=$T/kroot
mkdir -p "$R/sys/class" && cp -r "$FIX/proc" "$R/proc"
for d in class/drm devices; do ln -s "$FIX/mi300x/sys/$d" "$R/sys/$d"; done
ln -s "$FIX/kfd/sys/class/kfd" "$R/sys/class/kfd"
out=$(GPUWHY_SYSFS_ROOT=$R "$GPUWHY" query --query-compute-apps=pid,gpu_bus_id,used_memory --format=csv,noheader)
assert_eq "$?" 0 "compute apps on the tree with a KFD"
assert_eq "$out" "8000, 00000000:1B:00.0, 3073 MiB
4242, 00000000:9F:00.0, 8193 MiB" "processes from fdinfo and the KFD"

# --- the simulated AMD scenarios, out of the box
have_sim || skip "the simulated GPU is not built"
out=$(GPUWHY_SIM_TIME=5 "$GPUWHY" --sim mi300x8 status)
assert_eq "$?" 0 "status --sim mi300x8"
assert_contains "$out" "8 GPUs" "eight MI300X"
assert_contains "$out" "driver amdgpu (simulated)" "the driver of an AMD-only machine"
assert_contains "$out" "GPU 7  AMD Instinct MI300X OAM      00000000:DF:00.0" "GPU 7 in PCI order"
# the scenario's square wave: busy at t=5 s, waiting at t=9 s (8 s of every 10)
busy=$(GPUWHY_SIM_TIME=5 "$GPUWHY" --sim mi300x8 query --query-gpu=utilization.gpu,clocks.sm --format=csv,noheader,nounits -i 3)
idle=$(GPUWHY_SIM_TIME=9 "$GPUWHY" --sim mi300x8 query --query-gpu=utilization.gpu,clocks.sm --format=csv,noheader,nounits -i 3)
assert_eq "$busy" "100, 2100" "busy MI300X"
assert_eq "$idle" "0, 132" "waiting MI300X"
# a consumer card: no FRU (no product name, no serial), a fan, the scenario's process by name
out=$(GPUWHY_SIM_TIME=3 "$GPUWHY" --sim rx7900xtx status)
assert_contains "$out" "AMD GPU 1002:744c" "RX 7900 XTX without product_name"
assert_contains "$out" "power 312 / 327 W" "power against power1_cap"
echo "$out" | grep -Eq '^ +0 +1 alice .*18000 MiB .*python3' || fail "the scenario's process: $out"
# a card that left the bus is worded from amdgpu (its resets in the kernel log), never as an Xid
out=$(GPUWHY_SIM_TIME=6 "$GPUWHY" --sim rx7900xtx-lost status)
assert_contains "$out" "GPU 0  AMD GPU 1002:744c            00000000:03:00.0  LOST" "status of a lost AMD card"
assert_contains "$out" "amdgpu GPU reset" "the loss worded from amdgpu"
case "$out" in *Xid*) fail "status words an AMD card's loss as an Xid: $out" ;; esac
out=$(COLUMNS=80 GPUWHY_SIM_TIME=6 "$GPUWHY" --sim rx7900xtx-lost top --once -t)
assert_contains "$out" "GPU 0  LOST: the card is gone; check the kernel log for amdgpu resets" "top of a lost AMD card"
case "$out" in *Xid*) fail "top words an AMD card's loss as an Xid: $out" ;; esac
assert_eq "$(GPUWHY_SIM_TIME=1 "$GPUWHY" --sim rx7900xtx-lost query --query-gpu=memory.used --format=csv,noheader,nounits)" \
	"18412" "the card before its loss"
GPUWHY_SIM_TIME=6 "$GPUWHY" --sim rx7900xtx-lost record -o "$T/lost.gpuwhy" --duration 2s 2>/dev/null || fail "record the lost card"
out=$("$GPUWHY" report --format json "$T/lost.gpuwhy" | python3 -c '
import json, sys
print(",".join(sorted({f["id"] for f in json.load(sys.stdin)["findings"]})))')
case ",$out," in *,gpu-fault,*) ;; *) fail "no gpu-fault for the lost card: $out" ;; esac
# a throttled consumer card: gpu_metrics' indep_throttle_status gives the clock event reasons
Q=clocks_event_reasons.active,clocks_event_reasons.sw_power_cap,clocks_event_reasons.sw_thermal_slowdown,clocks.sm
assert_eq "$(GPUWHY_SIM_TIME=10 "$GPUWHY" --sim rx7900xtx-throttle query --query-gpu=$Q --format=csv,noheader,nounits)" \
	"0x0000000000000000, Not Active, Not Active, 2430" "rx7900xtx-throttle unthrottled at 10 s"
assert_eq "$(GPUWHY_SIM_TIME=25 "$GPUWHY" --sim rx7900xtx-throttle query --query-gpu=$Q --format=csv,noheader,nounits)" \
	"0x0000000000000020, Not Active, Active, 1850" "thermal slowdown at 25 s"
assert_eq "$(GPUWHY_SIM_TIME=45 "$GPUWHY" --sim rx7900xtx-throttle query --query-gpu=$Q --format=csv,noheader,nounits)" \
	"0x0000000000000004, Active, Not Active, 2150" "power cap at 45 s"
out=$(GPUWHY_SIM_TIME=25 "$GPUWHY" --sim rx7900xtx-throttle status)
assert_contains "$out" "clocks held by: SW Thermal Slowdown" "status names the reason"
# record and report find the throttling on the AMD card (pinned inside each episode)
findings() { # RECORDING: "id:severity" of each finding, sorted
	"$GPUWHY" report --format json "$1" | python3 -c '
import json, sys
print(",".join(sorted({f["id"] + ":" + f["severity"] for f in json.load(sys.stdin)["findings"]})))'
}
for t in 25 45; do
	GPUWHY_SIM_TIME=$t "$GPUWHY" --sim rx7900xtx-throttle record -o "$T/thr$t.gpuwhy" --duration 2s 2>/dev/null ||
		fail "record rx7900xtx-throttle at $t s"
done
out=$(findings "$T/thr25.gpuwhy")
case ",$out," in *,throttled:error,*) ;; *) fail "thermal slowdown not found as throttled: $out" ;; esac
out=$("$GPUWHY" report "$T/thr25.gpuwhy")
assert_contains "$out" "clocks held at 1850 of 2500 MHz (74 %) by thermal slowdown" "the thermal finding's title"
case "$out" in *"no clock-event reasons"*) fail "a card with gpu_metrics called reasonless: $out" ;; esac
out=$("$GPUWHY" report "$T/thr45.gpuwhy")
assert_contains "$out" "clocks held at 2150 of 2500 MHz (86 %) by the power cap" "the power-cap finding"
# an APU: a small VRAM carve-out is memory.*; no fan, power cap, memory sensor or
# memory activity; gpu_metrics v2.1 carries no throttle reasons (n/a, never "Not Active")
out=$(GPUWHY_SIM_TIME=3 "$GPUWHY" --sim apu-780m query --format=csv,noheader,nounits \
	--query-gpu=name,pci.device_id,memory.total,memory.used,utilization.gpu,utilization.memory,power.draw,power.limit,temperature.gpu,temperature.memory,fan.speed,clocks.sm,clocks.max.sm,clocks_event_reasons.active,ecc.errors.uncorrected.volatile.total)
assert_eq "$out" "AMD GPU 1002:15bf, 0x15BF1002, 512, 416, 96, [N/A], 33.10, [N/A], 73, [N/A], [N/A], 2600, 2700, [N/A], [N/A]" "APU query at 3 s"
out=$(GPUWHY_SIM_TIME=3 "$GPUWHY" --sim apu-780m status)
assert_eq "$?" 0 "status --sim apu-780m"
assert_contains "$out" "mem 416 / 512 MiB  power 33 W / n/a  temp 73C" "APU status"
assert_contains "$out" "fan n/a" "no fan on an APU"
echo "$out" | grep -Eq '^ +0 +1 bob .*320 MiB .*ollama' || fail "the APU's process: $out"
out=$(COLUMNS=100 GPUWHY_SIM_TIME=3 "$GPUWHY" --sim apu-780m top --once -t)
assert_eq "$?" 0 "top --once on the APU"
assert_contains "$out" "416M/512M" "top's APU memory"
assert_contains "$out" "33W/n/a" "top's APU power without a cap"
# the recording keeps the card's vendor, and the report's advice is AMD's: its reset
# commands, never Xid or nvidia-smi
assert_eq "$(sqlite3 "$T/lost.gpuwhy" 'SELECT vendor FROM gpus')" "amd" "the recorded vendor"
out=$("$GPUWHY" report "$T/lost.gpuwhy")
assert_contains "$out" "amd-smi reset --gpureset -g N" "AMD's reset in the lost card's advice"
case "$out" in *nvidia-smi* | *Xid*) fail "the lost AMD card's report speaks of NVIDIA's tools: $out" ;; esac
# a recording older than the vendor column (made here by dropping it, as a gpuwhy before
# application ids and digests wrote it) still reports: its amdgpu faults say whose the GPU
# is, and without them it names neither vendor's tools
cp "$T/lost.gpuwhy" "$T/old.gpuwhy"
sqlite3 "$T/old.gpuwhy" "PRAGMA application_id = 0; PRAGMA user_version = 0;
	DELETE FROM meta WHERE key LIKE 'digest.%'; ALTER TABLE gpus DROP COLUMN vendor" ||
	fail "make an older recording"
[ "$(sqlite3 "$T/old.gpuwhy" "SELECT count(*) FROM events WHERE kind = 'amdgpu_fault'")" -gt 0 ] ||
	fail "the lost card's recording has no amdgpu_fault event"
out=$("$GPUWHY" report "$T/old.gpuwhy")
assert_contains "$out" "amd-smi reset --gpureset -g N" "an older recording whose amdgpu faults name the vendor"
sqlite3 "$T/old.gpuwhy" "DELETE FROM events WHERE kind = 'amdgpu_fault'" || fail "drop the faults"
out=$("$GPUWHY" report "$T/old.gpuwhy")
assert_contains "$out" "reset the GPU with its vendor's management tool" "a lost card of unknown vendor"
case "$out" in *nvidia-smi* | *amd-smi* | *rocm-smi* | *Xid*) fail "unknown vendor worded as one: $out" ;; esac
vendors() { # RECORDING: each GPU's vendor in the JSON report, null as "None"
	"$GPUWHY" report --format json "$1" | python3 -c '
import json, sys
print(",".join(str(g["vendor"]) for g in json.load(sys.stdin)["gpus"]))'
}
assert_eq "$(vendors "$T/lost.gpuwhy")" "amd" "the JSON report's vendor"
assert_eq "$(vendors "$T/old.gpuwhy")" "None" "no vendor in an older recording: null"
# top draws every GPU
out=$(COLUMNS=120 GPUWHY_SIM_TIME=5 "$GPUWHY" --sim mi300x8 top --once -t)
assert_eq "$?" 0 "top --once"
for g in 0 7; do assert_contains "$out" "GPU $g AMD" "GPU $g in top"; done
# nothing of the simulated tree is left once gpuwhy exits
ls "$GPUWHY_SIM_STATE/mi300x8" | grep -q '^amd-' && fail "simulated tree left: $(ls "$GPUWHY_SIM_STATE/mi300x8")"

# --- record, report and compare
"$GPUWHY" --sim rx7900xtx record -o "$T/a.gpuwhy" --duration 2s 2>/dev/null || fail "record a"
"$GPUWHY" --sim rx7900xtx record -o "$T/b.gpuwhy" --duration 2s 2>/dev/null || fail "record b"
out=$("$GPUWHY" report "$T/a.gpuwhy")
assert_contains "$out" "AMD GPU 1002:744c" "the recording's GPU"
# its gpu_metrics reports no throttling: judged, and not throttled
case "$out" in *"no clock-event reasons"*) fail "rx7900xtx has reasons in gpu_metrics: $out" ;; esac
out=$(findings "$T/a.gpuwhy")
case ",$out," in *,throttled:*|*,power-capped:*) fail "an unthrottled card found throttled: $out" ;; esac
# MI300X (gpu_metrics v1.4+ has no ASIC-independent reasons): the rules that need them say so
GPUWHY_SIM_TIME=5 "$GPUWHY" --sim mi300x8 record -o "$T/m.gpuwhy" --duration 2s 2>/dev/null || fail "record mi300x8"
assert_contains "$("$GPUWHY" report "$T/m.gpuwhy")" "no clock-event reasons" "NVIDIA-only rules say not checked"
out=$(findings "$T/m.gpuwhy")
assert_contains "$out" "not-checked" "JSON findings"
case ",$out," in *,throttled:*|*,power-capped:*) fail "a rule judged a signal AMD lacks: $out" ;; esac
"$GPUWHY" compare "$T/a.gpuwhy" "$T/b.gpuwhy" >"$T/cmp" 2>&1
rc=$?
[ "$rc" -le 1 ] || fail "compare: rc $rc $(cat "$T/cmp")"
assert_contains "$(cat "$T/cmp")" "GPU utilization" "compare reads the AMD recordings"
grep -Eq "memory peak +17\.[0-9]+ +17\.[0-9]+" "$T/cmp" || fail "memory peak of both: $(cat "$T/cmp")"

# --- the exporter: AMD GPUs in the DCGM families and gpuwhy's, told apart by vendor
command -v curl >/dev/null || skip "curl missing"
start_exporter() { # LOG ARGS...
	local log=$1
	shift
	"$@" --listen 127.0.0.1:0 --interval 200ms 2>"$log" &
	PIDS_TO_KILL+=($!)
	PORT=
	for _ in $(seq 100); do
		PORT=$(sed -n 's|.*serving http://127\.0\.0\.1:\([0-9]*\)/metrics.*|\1|p' "$log")
		[ -n "$PORT" ] && break
		sleep 0.1
	done
	[ -n "$PORT" ] || fail "exporter did not start: $(cat "$log")"
	for _ in $(seq 100); do
		curl -s "127.0.0.1:$PORT/metrics" >"$T/m" && grep -q '^DCGM_FI_DEV_FB_USED' "$T/m" && return 0
		sleep 0.1
	done
	fail "no sample: $(cat "$log")"
}
GPUWHY_SIM_TIME=5 start_exporter "$T/e.log" "$GPUWHY" --sim mi300x8 exporter
grep -q '^DCGM_FI_DEV_GPU_UTIL{gpu="7",UUID="",pci_bus_id="00000000:DF:00.0",device="",modelName="AMD Instinct MI300X OAM"' "$T/m" ||
	fail "GPU 7's utilization: $(grep DCGM_FI_DEV_GPU_UTIL "$T/m")"
grep -q '^gpuwhy_gpu_info{gpu="3",.*vendor="amd"} 1' "$T/m" || fail "vendor label: $(grep gpuwhy_gpu_info "$T/m")"
grep -q '^DCGM_FI_DEV_FAN_SPEED' "$T/m" && fail "a fan series for fanless boards"
grep -q '^DCGM_FI_DEV_CLOCK_THROTTLE_REASONS' "$T/m" && fail "clock-event reasons made up"
# the APU: what it has, and no series for what it lacks
GPUWHY_SIM_TIME=3 start_exporter "$T/a.log" "$GPUWHY" --sim apu-780m exporter
for s in GPU_UTIL FB_USED FB_FREE POWER_USAGE GPU_TEMP SM_CLOCK MEM_CLOCK; do
	grep -q "^DCGM_FI_DEV_$s{gpu=\"0\",.*modelName=\"AMD GPU 1002:15bf\"" "$T/m" || fail "APU series $s: $(grep "^DCGM" "$T/m")"
done
grep -q '^DCGM_FI_DEV_FB_USED{.*} 416$' "$T/m" || fail "APU VRAM used: $(grep FB_USED "$T/m")"
for s in FAN_SPEED MEM_COPY_UTIL MEMORY_TEMP POWER_MGMT_LIMIT CLOCK_THROTTLE_REASONS; do
	grep -q "^DCGM_FI_DEV_$s{" "$T/m" && fail "an APU series for what it lacks: $s"
done
grep -q '^gpuwhy_gpu_throttle_reason{' "$T/m" && fail "APU reasons made up: $(grep throttle_reason "$T/m")"
# the throttled card exports its reasons (thermal slowdown at 25 s)
GPUWHY_SIM_TIME=25 start_exporter "$T/t.log" "$GPUWHY" --sim rx7900xtx-throttle exporter
grep -q '^gpuwhy_gpu_throttle_reason{gpu="0",reason="sw_thermal_slowdown"} 1$' "$T/m" ||
	fail "reasons of the throttled card: $(grep -i reason "$T/m")"
grep -q '^gpuwhy_gpu_throttle_reason{gpu="0",reason="sw_power_cap"} 0$' "$T/m" ||
	fail "power cap of the throttled card: $(grep -i reason "$T/m")"

# --- a mixed machine: the simulated H100 (NVML) and the MI300X tree (sysfs)
out=$(GPUWHY_SYSFS_ROOT=$FIX/mi300x "$GPUWHY" --sim h100x1 query --query-gpu=index,name,pci.bus_id --format=csv,noheader)
assert_eq "$out" "0, NVIDIA H100 80GB HBM3, 00000000:1B:00.0
1, AMD Instinct MI300X OAM, 00000000:1B:00.0
2, AMD Instinct MI300X OAM, 00000000:9F:00.0" "NVIDIA first, then AMD in PCI order"
GPUWHY_SYSFS_ROOT=$FIX/mi300x start_exporter "$T/x.log" "$GPUWHY" --sim h100x1 exporter
grep -q '^gpuwhy_gpu_info{gpu="0",.*vendor="nvidia"} 1' "$T/m" || fail "NVIDIA's vendor"
grep -q '^gpuwhy_gpu_info{gpu="2",.*vendor="amd"} 1' "$T/m" || fail "AMD's vendor"
grep -q '^DCGM_FI_DEV_GPU_UTIL{gpu="2",.*} 87$' "$T/m" || fail "AMD GPU 2 utilization: $(grep DCGM_FI_DEV_GPU_UTIL "$T/m")"

# --- the queue places by free VRAM: 100 GiB fits only the MI300X at 1b (GPU 0 here)
export GPUWHY_QUEUE=$T/q
export GPUWHY_SYSFS_ROOT=$FIX/mi300x
"$GPUWHY" queue add --mem 100G -n big -- sh -c 'echo ran' >/dev/null || fail "queue add"
"$GPUWHY" queue wait 1 --timeout 60s >/dev/null 2>&1
st=$("$GPUWHY" queue show 1)
"$GPUWHY" queue stop >/dev/null 2>&1
echo "$st" | grep -Eq '^ +state +done' || fail "task 1 did not run: $st"
echo "$st" | grep -Eq '^ +GPUs +0$' || fail "task 1 not on GPU 0: $st"
exit 0
