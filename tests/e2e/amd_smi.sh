# AMD's SMI library (docs/amd.md, "amd-smi"): the simulated libamd_smi.so.24 under
# `--sim mi300x8` fills the energy counter and, where the scenario's GPUs have ECC and the
# amdgpu files no ras/, the ECC totals; without it those are n/a. A library that cannot be
# loaded, fails amdsmi_init, lacks an entry point or has an unknown version (27.x) gives n/a,
# one `-v` line saying why, and exit 0.
. "$(dirname "$0")/lib.bash"
unset GPUWHY_SYSFS_ROOT GPUWHY_AMDSMI GPUWHY_SIM_AMDSMI_FAIL GPUWHY_SIM_AMDSMI_VERSION
[ -e /dev/nvidiactl ] && skip "a real NVIDIA driver is present"
B=$(dirname "$GPUWHY")
[ -e "$B/sim/libamd_smi.so.24" ] || fail "the simulated libamd_smi.so.24 is not built"
NOENERGY=$B/tests/libamdsmi_sim_noenergy.so
[ -e "$NOENERGY" ] || fail "$NOENERGY is not built"
# 100 s in: 80 s of the square wave busy, so the energy counter has one known value
export GPUWHY_SIM_TIME=100
E=51644160 # mJ: 131 W * 100 s + (720 - 131) W * (0.35 * 80 s + 0.65 * 0.72 * 80 s)
Q=index,energy.consumption,ecc.errors.corrected.volatile.total,ecc.errors.uncorrected.volatile.total

# mi300x8 with ECC counts: the simulated tree has no ras/, so only the library has them
python3 - "$(cd "$(dirname "$0")/../../sim/scenarios" && pwd)/mi300x8.json" "$T/mi300x8-ecc.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
s["name"] = "mi300x8-ecc"
s["gpu_defaults"]["ecc"] = {"sbe_volatile": 3, "dbe_volatile": 1, "sbe_aggregate": 3, "dbe_aggregate": 1}
json.dump(s, open(sys.argv[2], "w"))
EOF

query() { "$GPUWHY" --sim "$1" query --query-gpu=$Q --format=csv,noheader,nounits; }

# --- without the library (the default under --sim): the fields are n/a on all 8 GPUs
out=$(query "$T/mi300x8-ecc.json") || fail "query without amd-smi: exit $?"
assert_eq "$(printf '%s\n' "$out" | wc -l)" 8 "GPUs"
assert_eq "$(printf '%s\n' "$out" | grep -c '^[0-7], \[N/A\], \[N/A\], \[N/A\]$')" 8 "n/a rows without amd-smi: $out"

# --- with it: every GPU found by its PCI address, energy and ECC filled
out=$(GPUWHY_AMDSMI=sim query "$T/mi300x8-ecc.json") || fail "query with amd-smi: exit $?"
assert_eq "$(printf '%s\n' "$out" | grep -c "^[0-7], $E, 3, 1\$")" 8 "rows with amd-smi: $out"
# the scenario as shipped has no ECC: energy alone
out=$(GPUWHY_AMDSMI=sim query mi300x8) || fail "query mi300x8: exit $?"
assert_eq "$(printf '%s\n' "$out" | grep -c "^[0-7], $E, \[N/A\], \[N/A\]\$")" 8 "mi300x8 rows: $out"
# status -v names the library
GPUWHY_AMDSMI=sim "$GPUWHY" -v --sim mi300x8 status >"$T/st.out" 2>"$T/st.err" || fail "status -v: exit $?"
assert_contains "$(cat "$T/st.err")" "amd-smi: .*libamd_smi.so.24: version 24.7.0, 8 GPUs"
# ROCm 6.4's 25.x and ROCm 7's 26.x, each with its own amdsmi_version_t layout: read the same
for v in 25.3.0 26.0.2; do
	out=$(GPUWHY_AMDSMI=sim GPUWHY_SIM_AMDSMI_VERSION=$v query "$T/mi300x8-ecc.json") ||
		fail "query with amd-smi $v: exit $?"
	assert_eq "$(printf '%s\n' "$out" | grep -c "^[0-7], $E, 3, 1\$")" 8 "rows with amd-smi $v: $out"
	GPUWHY_AMDSMI=sim GPUWHY_SIM_AMDSMI_VERSION=$v "$GPUWHY" -v --sim mi300x8 status >/dev/null \
		2>"$T/st.err" || fail "status -v with $v: exit $?"
	assert_contains "$(cat "$T/st.err")" "amd-smi: .*libamd_smi.so.24: version $v, 8 GPUs"
done
# an NVIDIA scenario: the library lists no GPU and NVML's fields are NVML's
out=$(GPUWHY_AMDSMI=sim "$GPUWHY" --sim h100x1 query --query-gpu=index,name --format=csv,noheader) ||
	fail "h100x1 with amd-smi: exit $?"
assert_contains "$out" "^0, NVIDIA H100"

# --- the files first: a fixture tree (RAS counts on 1b, no ras/ on 9f) read beside the
# simulated library of a scenario with the same two PCI addresses and other ECC counts
python3 - "$T/mi300x8-ecc.json" "$T/fix.json" <<'EOF2'
import json, sys
s = json.load(open(sys.argv[1]))
s["name"] = "fixture-pair"
s["gpu_defaults"]["ecc"] = {"sbe_volatile": 3, "dbe_volatile": 2, "sbe_aggregate": 3, "dbe_aggregate": 2}
s["gpus"] = [dict(s["gpus"][0]), dict(s["gpus"][1])]
s["processes"] = [p for p in s.get("processes", []) if p["gpu"] < 2]
s["gpus"][0]["pci"] = dict(s["gpus"][0]["pci"], bus_id="0000:1b:00.0")
s["gpus"][1]["pci"] = dict(s["gpus"][1]["pci"], bus_id="0000:9f:00.0")
json.dump(s, open(sys.argv[2], "w"))
EOF2
FIX=$(cd "$(dirname "$0")/../fixtures/amdgpu/mi300x" && pwd)
out=$(GPUWHY_SYSFS_ROOT=$FIX GPUWHY_SIM_SCENARIO=$T/fix.json \
	GPUWHY_AMDSMI=sim "$GPUWHY" query --query-gpu=pci.bus_id,$Q --format=csv,noheader,nounits 2>&1) ||
	fail "fixture with amd-smi: exit $?: $out"
assert_eq "$out" "00000000:1B:00.0, 0, $E, 5, 1
00000000:9F:00.0, 1, $E, 3, 2" "sysfs first, amd-smi for the gaps"

# --- a library that misbehaves: n/a, one line of why, exit 0
check_na() { # WHAT EXPECTED-LINE, with the environment already set
	out=$(query "$T/mi300x8-ecc.json") || fail "$1: query exit $?"
	assert_eq "$(printf '%s\n' "$out" | grep -c '^[0-7], \[N/A\], \[N/A\], \[N/A\]$')" 8 "$1: $out"
	"$GPUWHY" -v --sim "$T/mi300x8-ecc.json" status >/dev/null 2>"$T/why" || fail "$1: status exit $?"
	assert_contains "$(cat "$T/why")" "$2" "$1"
}
GPUWHY_AMDSMI=sim GPUWHY_SIM_AMDSMI_FAIL=init check_na "init fails" "amdsmi_init failed (status 18)"
GPUWHY_AMDSMI=sim GPUWHY_SIM_AMDSMI_VERSION=27.0.0 \
	check_na "unknown version" "version 27.0.0 has struct layouts gpuwhy does not know"
GPUWHY_AMDSMI=$T/none/libamd_smi.so.24 check_na "no library" "libamd_smi.so.24: cannot load"
GPUWHY_AMDSMI=$B/sim/libnvidia-ml.so.1 check_na "not amd-smi" "has no amdsmi_init"
# error statuses from the calls themselves
out=$(GPUWHY_AMDSMI=sim GPUWHY_SIM_AMDSMI_FAIL=energy,ecc query "$T/mi300x8-ecc.json") ||
	fail "calls failing: exit $?"
assert_eq "$(printf '%s\n' "$out" | grep -c '^[0-7], \[N/A\], \[N/A\], \[N/A\]$')" 8 "calls failing: $out"
# an optional entry point missing: that field alone is n/a
out=$(GPUWHY_AMDSMI=$NOENERGY query "$T/mi300x8-ecc.json") || fail "no energy symbol: exit $?"
assert_eq "$(printf '%s\n' "$out" | grep -c '^[0-7], \[N/A\], 3, 1$')" 8 "no energy symbol: $out"
echo ok
