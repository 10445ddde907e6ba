#!/usr/bin/env bash
# doctor's ROCm checks on the simulated AMD machines: they read the scenario's files (the
# KFD topology, /dev/kfd and the render nodes the simulator writes), never the host's.
# An MI300X (gfx942) and an RX 7900 XTX (gfx1100) are on ROCm's list; the Radeon 780M of
# apu-780m (gfx1103) needs HSA_OVERRIDE_GFX_VERSION=11.0.0, the guide's case.
. "$(dirname "$0")/lib.bash"
have_sim || skip "the simulated GPU is not built"
unset HSA_OVERRIDE_GFX_VERSION HIP_VISIBLE_DEVICES ROCR_VISIBLE_DEVICES CUDA_VISIBLE_DEVICES GPU_DEVICE_ORDINAL
export GPUWHY_SIM_STATE=$T/state
SCN=$(cd "$(dirname "$0")/../../sim/scenarios" && pwd)
line() { echo "$1" | grep -E "^[A-Z]+ +$2 " || echo "(no $2 line)"; }

out=$("$GPUWHY" --sim mi300x8 doctor 2>&1)
assert_contains "$(line "$out" rocm.devices)" "PASS  rocm.devices             /dev/kfd and 8 render node(s) read/writable" "mi300x8 devices"
assert_contains "$(line "$out" rocm.gfx_override)" "gfx942: no override needed" "mi300x8 gfx"
assert_contains "$(line "$out" rocm.visible_devices)" "programs see all 8" "mi300x8 visible"

out=$("$GPUWHY" --sim apu-780m doctor 2>&1)
assert_eq "$?" 1 "a failed check exits 1"
assert_contains "$(line "$out" rocm.gfx_override)" "FAIL  rocm.gfx_override        gfx1103 is not on ROCm's list: its kernels load only with HSA_OVERRIDE_GFX_VERSION=11.0.0 (set: not set)" "780M without the override"
assert_contains "$out" "fix: export HSA_OVERRIDE_GFX_VERSION=11.0.0" "the override's fix"
out=$(HSA_OVERRIDE_GFX_VERSION=11.0.0 "$GPUWHY" --sim apu-780m doctor 2>&1)
assert_contains "$(line "$out" rocm.gfx_override)" "PASS  rocm.gfx_override        gfx1103: runs with HSA_OVERRIDE_GFX_VERSION=11.0.0" "780M with the override"
# a scenario can name its chip: an RX 7900 XTX taken for a gfx1101 card and for an unlisted gfx1036
python3 - "$SCN/rx7900xtx.json" "$T" <<'PY' || fail "scenario copies"
import json, sys
for v in (110001, 100306):
    s = json.load(open(sys.argv[1]))
    s["name"] = "gfx%d" % v
    s["gpus"][0].setdefault("amdgpu", {})["gfx_target_version"] = v
    json.dump(s, open("%s/gfx%d.json" % (sys.argv[2], v), "w"))
PY
out=$("$GPUWHY" --sim "$T/gfx110001.json" doctor 2>&1)
assert_contains "$(line "$out" rocm.gfx_override)" "gfx1101: no override needed" "a listed chip named by the scenario"
out=$("$GPUWHY" --sim "$T/gfx100306.json" doctor 2>&1)
assert_contains "$(line "$out" rocm.gfx_override)" "HSA_OVERRIDE_GFX_VERSION=10.3.0" "an unlisted RDNA2 chip"
python3 - "$SCN/rx7900xtx.json" "$T/bad.json" <<'PY' || fail "scenario copy"
import json, sys
s = json.load(open(sys.argv[1]))
s["gpus"][0].setdefault("amdgpu", {})["gfx_target_version"] = 42
json.dump(s, open(sys.argv[2], "w"))
PY
out=$("$GPUWHY" --sim "$T/bad.json" status 2>&1)
assert_eq "$?" 3 "a scenario with an impossible gfx_target_version"
assert_contains "$out" "amdgpu.gfx_target_version: 42 is out of range (10000 to 999999)" "the bad field is named"

# HIP_VISIBLE_DEVICES is judged against the simulated machine's GPUs
out=$(HIP_VISIBLE_DEVICES=2 "$GPUWHY" --sim rx7900xtx doctor 2>&1)
assert_contains "$(line "$out" rocm.visible_devices)" "FAIL  rocm.visible_devices     HIP_VISIBLE_DEVICES=\"2\" names GPU 2, but this machine has only 1" "HIP_VISIBLE_DEVICES past the GPUs"

# an NVIDIA-only scenario has no AMD GPU, whatever the host has; the tree doctor wrote is gone
out=$("$GPUWHY" --sim h100x1 doctor 2>&1)
assert_contains "$(line "$out" rocm.devices)" "SKIP  rocm.devices             no AMD GPU (amdgpu driver) on this machine" "h100x1"
left=$(find "$T/state" -maxdepth 2 -name 'amd-*' | head -3)
[ -z "$left" ] || fail "doctor left its AMD trees: $left"
echo "ok: doctor's ROCm checks on simulated AMD machines"
