#!/usr/bin/env bash
# `gpuwhy topo` between AMD GPUs on a sysfs tree (tests/fixtures/amdgpu/make-xgmi-tree.sh):
# XGMI between the two GPUs of one hive (on two sockets), else the PCIe level of the pair
# from their sysfs paths, in the text matrix, the JSON links and nvidia-smi's -m layout.
. "$(dirname "$0")/lib.bash"
[ -e /dev/nvidiactl ] && skip "a real NVIDIA driver's GPUs would come first in gpuwhy's list"
command -v python3 >/dev/null || skip "python3 missing"
FIX=$(cd "$(dirname "$0")/../fixtures/amdgpu" && pwd)
sh "$FIX/make-xgmi-tree.sh" "$T/tree" || fail "make-xgmi-tree.sh"
export GPUWHY_SYSFS_ROOT=$T/tree

"$GPUWHY" topo >"$T/text" 2>"$T/err" || fail "topo: exit $?: $(cat "$T/err")"
# GPU0..5 are 03, 04, 07, 11, 41, c1 (PCI order); 03 and c1 share a hive
row() { awk -v g="GPU$1" 'NR > 1 && $1 == g { print $2, $3, $4, $5, $6, $7 }' "$T/text"; }
assert_eq "$(row 0)" "X PIX PXB PHB NODE XGMI" "GPU0's row"
assert_eq "$(row 1)" "PIX X PXB PHB NODE SYS" "GPU1's row"
assert_eq "$(row 2)" "PXB PXB X PHB NODE SYS" "GPU2's row (hive id 0: no hive)"
assert_eq "$(row 3)" "PHB PHB PHB X NODE SYS" "GPU3's row"
assert_eq "$(row 4)" "NODE NODE NODE NODE X SYS" "GPU4's row (another hive)"
assert_eq "$(row 5)" "XGMI SYS SYS SYS SYS X" "GPU5's row"
assert_contains "$(cat "$T/text")" "XGMI = Connection traversing AMD's XGMI links" "the legend"

"$GPUWHY" topo --format json >"$T/json" || fail "topo --format json: exit $?"
python3 - "$T/json" <<'EOF' || fail "topo --format json: $(cat "$T/json")"
import json, sys
links = {g["index"]: g["links"] for g in json.load(open(sys.argv[1]))["gpus"]}
assert links[0]["5"] == "XGMI" and links[5]["0"] == "XGMI", links
assert links[1]["5"] == "SYS" and links[0]["1"] == "PIX" and links[2]["3"] == "PHB", links
EOF

"$GPUWHY" topo -m --sysfs-root "$T/tree" >"$T/m" || fail "topo -m: exit $?"
assert_eq "$(awk -F'\t' '$1 == "GPU0" { print $2 "|" $3 "|" $7 }' "$T/m")" " X |PIX|XGMI" "topo -m GPU0"
assert_contains "$(cat "$T/m")" "XGMI = Connection traversing AMD's XGMI links" "topo -m legend"

# a tree with no hive at all: no XGMI, no legend line for it
rm "$T/tree/sys/devices/pci0000:c0/0000:c0:01.1/0000:c1:00.0/xgmi_hive_info"
"$GPUWHY" topo >"$T/text2" || fail "topo without the hive: exit $?"
awk -v g="GPU0" 'NR > 1 && $1 == g { print $7 }' "$T/text2" | grep -qx SYS || fail "GPU0-GPU5 without a hive: $(cat "$T/text2")"
grep -q XGMI "$T/text2" && fail "XGMI shown without a shared hive: $(cat "$T/text2")"
echo "ok: topo between AMD GPUs"

# --- the simulated MI300X platform is one hive (amdgpu.xgmi_hive), and recordings keep it
have_sim || skip "the simulated GPU is not built"
unset GPUWHY_SYSFS_ROOT
export GPUWHY_SIM_STATE=$T/state
out=$("$GPUWHY" --sim mi300x8 topo) || fail "topo --sim mi300x8: exit $?"
n=$(echo "$out" | awk 'NR > 1 && $1 ~ /^GPU/ { for (i = 2; i <= 9; i++) if ($i == "XGMI") c++ } END { print c + 0 }')
assert_eq "$n" 56 "XGMI between every pair of the eight MI300X"
"$GPUWHY" --sim mi300x8 record -o "$T/m.gpuwhy" --duration 3s -q || fail "record --sim mi300x8: exit $?"
command -v sqlite3 >/dev/null || skip "sqlite3 missing"
assert_eq "$(sqlite3 "$T/m.gpuwhy" 'SELECT count(*), sum(xgmi = 1), count(nvlinks) FROM gpu_links')" "56|56|0" \
	"the recording's links: 56 pairs in one hive, no NVLink count"
# a single card is in no hive: no pair, no link
"$GPUWHY" --sim rx7900xtx record -o "$T/r.gpuwhy" --duration 2s -q || fail "record --sim rx7900xtx: exit $?"
assert_eq "$(sqlite3 "$T/r.gpuwhy" 'SELECT count(*) FROM gpu_links')" 0 "one GPU, no links"
echo "ok: the simulated hive in topo and in a recording"
