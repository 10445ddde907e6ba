# nvidia-smi compatible views, pinned to a scenario instant, against golden files.
# GPUWHY_UPDATE_GOLDEN=1 rewrites the golden files instead of comparing.
. "$(dirname "$0")/lib.bash"
have_sim || skip "simulated GPU not built"
SRC=${GPUWHY_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
G=$SRC/tests/fixtures/golden
SMI=$SRC/tests/fixtures/nvidia-smi
export GPUWHY_SIM_TIME=100 TZ=UTC

# Wall-clock parts change every run: timestamps, -q's date, dmon's -o DT columns.
norm() {
	sed -E -e 's#[0-9]{4}/[0-9]{2}/[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}#<timestamp>#g' \
		-e 's#^(Timestamp +: ).*#\1<date>#' \
		-e 's#^ [0-9]{8}   [0-9]{2}:[0-9]{2}:[0-9]{2}    # <date>   <time>    #' \
		-e 's#^[A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9][0-9] [0-9:]{8} [0-9]{4}       $#<date>#' \
		-e 's#^[|] gpuwhy [^ ]+ +Driver#| gpuwhy <version> Driver#'
}
golden() { # golden NAME COMMAND...: compare the normalised output with tests/fixtures/golden/NAME
	local name=$1
	shift
	"$@" >"$T/out" 2>"$T/err" || fail "$name: exit $? ($(cat "$T/err"))"
	norm <"$T/out" >"$T/norm"
	if [ "${GPUWHY_UPDATE_GOLDEN:-}" = 1 ]; then
		cp "$T/norm" "$G/$name"
		return
	fi
	diff -u "$G/$name" "$T/norm" >"$T/diff" || fail "$name differs from its golden file: $(head -40 "$T/diff")"
}

# Every --query-gpu name nvidia-smi 590 lists, in its order: the header is the real one.
ALL=$(sed -e 's/ \[[^]]*\]//g' -e 's/, /,/g' "$SMI/h100-590-query-gpu-header.txt")
"$GPUWHY" --sim h100x1 query --query-gpu="$ALL" --format=csv >"$T/all" || fail "all fields: exit $?"
assert_eq "$(head -1 "$T/all")" "$(cat "$SMI/h100-590-query-gpu-header.txt")" "590 header"
"$GPUWHY" --sim h100x1 query --query-gpu="$ALL" --format=csv,nounits >"$T/all"
assert_eq "$(head -1 "$T/all")" "$(cat "$SMI/h100-590-query-gpu-header.txt")" "590 header with nounits"
golden query_all_h100x1.csv "$GPUWHY" --sim h100x1 query --query-gpu="$ALL" --format=csv
golden query_all_nounits_h100x1.csv "$GPUWHY" --sim h100x1 query --query-gpu="$ALL" --format=csv,nounits,noheader

# Every alias gives its field's header and value.
while read -r alias name; do
	a=$("$GPUWHY" --sim h100x1 query --query-gpu="$alias" --format=csv) || fail "alias $alias rejected"
	b=$("$GPUWHY" --sim h100x1 query --query-gpu="$name" --format=csv)
	assert_eq "$(echo "$a" | norm)" "$(echo "$b" | norm)" "alias $alias"
done <"$SMI/aliases-590.txt"

golden list_h100x8.txt "$GPUWHY" --sim h100x8-nvlink query -L
golden list_select_h100x8.txt "$GPUWHY" --sim h100x8-nvlink query -L -i 3,00000000:1B:00.0
golden q_h100x1.txt "$GPUWHY" --sim h100x1 query -q
golden q_clock_pcie_h100x1.txt "$GPUWHY" --sim h100x1 query -q -d CLOCK,PCIE
golden q_pids_l4x2.txt "$GPUWHY" --sim l4x2-foreign query -q -d PIDS,MEMORY
golden compute_apps_l4x2.csv "$GPUWHY" --sim l4x2-foreign query \
	--query-compute-apps=timestamp,gpu_name,gpu_bus_id,gpu_serial,gpu_uuid,pid,process_name,used_gpu_memory --format=csv
golden retired_pages_h100x1.csv "$GPUWHY" --sim h100x1 query \
	--query-retired-pages=timestamp,gpu_name,gpu_bus_id,gpu_serial,gpu_uuid,retired_pages.address,retired_pages.timestamp,retired_pages.cause --format=csv
golden remapped_rows_a100x2.csv "$GPUWHY" --sim a100x2-pcie-degraded query \
	--query-remapped-rows=gpu_bus_id,remapped_rows.correctable,remapped_rows.uncorrectable,remapped_rows.pending,remapped_rows.failure --format=csv
mkdir -p "$T/nosys"
golden topo_m_h100x8.txt "$GPUWHY" --sim h100x8-nvlink topo -m --sysfs-root "$T/nosys"
sh "$SRC/tests/fixtures/sysfs/make-pci-tree.sh" "$T/sys"
golden topo_m_nics_h100x1.txt "$GPUWHY" --sim h100x1 topo -m --sysfs-root "$T/sys"
# On a terminal (a pty from script(1)) nvidia-smi underlines the header row after its
# first tab, \e[4m to \e[0m; in a pipe (the golden files above) it is plain text.
if command -v script >/dev/null; then
	printf -v q '%q ' "$GPUWHY" --sim h100x8-nvlink topo -m --sysfs-root "$T/nosys"
	script -qec "$q" /dev/null </dev/null >"$T/tty" || fail "topo -m on a terminal: exit $?"
	plain=$(head -1 "$G/topo_m_h100x8.txt")
	want=$(printf '\t\033[4m%s\033[0m' "${plain#$'\t'}")
	got=$(head -1 "$T/tty" | tr -d '\r')
	assert_eq "$got" "$want" "topo -m's header row on a terminal"
	sed -n 2p "$T/tty" | grep -q $'\033' && fail "topo -m on a terminal: escape codes beyond the header row"
	echo "ok: topo -m underlines its header row on a terminal only"
else
	echo "skip: no script(1) for the terminal check of topo -m"
fi
golden dmon_h100x1.txt "$GPUWHY" --sim h100x1 dmon -c 2
golden dmon_all_h100x1.txt "$GPUWHY" --sim h100x1 dmon -s pucvmet -c 1 -o DT
golden pmon_l4x2.txt "$GPUWHY" --sim l4x2-foreign pmon -c 1
golden status_smi_l4x2.txt "$GPUWHY" --sim l4x2-foreign status --nvidia-smi

# MIG: devices under their GPU, per-instance memory, no whole-GPU utilization
golden list_mig.txt "$GPUWHY" --sim h100x1-mig query -L
golden q_mig.txt "$GPUWHY" --sim h100x1-mig query -q
golden status_smi_mig.txt "$GPUWHY" --sim h100x1-mig status --nvidia-smi
golden query_mig.csv "$GPUWHY" --sim h100x1-mig query --format=csv \
	--query-gpu=name,mig.mode.current,utilization.gpu,utilization.memory,utilization.decoder,memory.used,remapped_rows.correctable

# What a real H100 answers on driver 590 (nvidia_gpu_exporter's captures, see
# tests/fixtures/nvidia-smi/README.md): free memory one MiB above total - reserved
# - used (nvidia-smi rounds each up), application clocks deprecated, fabric health
# an unbracketed N/A, 0 % encoder utilization on a board without NVENC, and in MIG
# mode ECC "On" in the GPU row and each instance's BAR1 share, nothing mapped.
assert_eq "$("$GPUWHY" --sim h100x1-mig query --format=csv,noheader \
	--query-gpu=memory.reserved,memory.used,memory.free,clocks.applications.graphics,clocks.default_applications.memory,fabric.health.summary,fabric.health.bandwidth)" \
	"479 MiB, 59 MiB, 81022 MiB, [Requested functionality has been deprecated], [Requested functionality has been deprecated], N/A, N/A" "590 MIG values"
assert_eq "$("$GPUWHY" --sim h100x1 query --format=csv,noheader --query-gpu=utilization.encoder)" "0 %" "encoder utilization without NVENC"
tbl=$("$GPUWHY" --sim h100x1-mig status --nvidia-smi)
assert_contains "$(printf '%s\n' "$tbl" | sed -n 9p)" "Off |  *On |$" "MIG GPU row ECC cell"
assert_contains "$tbl" "0MiB / 24739MiB" "MIG BAR1 row"
assert_contains "$("$GPUWHY" --sim h100x1-mig query -q | grep -A4 'Shared FB Memory' | head -5)" "Reserved  *: 0 MiB" "MIG reserved"

# top on a MIG GPU says why there is no utilization
assert_contains "$("$GPUWHY" --sim h100x1-mig top --once | sed -n 2p)" "util .* MIG" "top MIG"

# diagnosis on a MIG GPU without GPM (no activity counter at all) says what it cannot
# see instead of calling it idle or healthy; with GPM (the shipped H100) GPM's
# graphics activity stands in for utilization and the GPU is judged by it
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["name"]="h100x1-mig-nogpm"; d["gpus"][0]["gpm"]=False; json.dump(d,open(sys.argv[2],"w"))' \
	"$SRC/sim/scenarios/h100x1-mig.json" "$T/h100x1-mig-nogpm.json"
"$GPUWHY" --sim "$T/h100x1-mig-nogpm.json" record -o "$T/mig.gpuwhy" --duration 2s --interval 200ms 2>/dev/null || fail "record on MIG"
rep=$("$GPUWHY" report "$T/mig.gpuwhy")
assert_contains "$rep" "mig-no-utilization" "MIG finding"
printf '%s' "$rep" | grep -q "low-utilization" && fail "low-utilization on a MIG GPU"
"$GPUWHY" --sim h100x1-mig record -o "$T/mig-gpm.gpuwhy" --duration 2s --interval 200ms 2>/dev/null || fail "record on MIG with GPM"
rep=$("$GPUWHY" report "$T/mig-gpm.gpuwhy")
printf '%s' "$rep" | grep -q "mig-no-utilization" && fail "mig-no-utilization where GPM shows the activity: $rep"

# nvidia-smi's error for an unknown name; the rest of the list is not rejected
"$GPUWHY" --sim h100x1 query --query-gpu=index,utilization.bogus 2>"$T/err"
assert_eq "$?" 2 "unknown field exit"
assert_contains "$(cat "$T/err")" 'Field "utilization.bogus" is not a valid field to query.' "unknown field"
"$GPUWHY" --sim h100x1 query --query-compute-apps=pid,bogus 2>"$T/err"
assert_eq "$?" 2 "unknown app field exit"
"$GPUWHY" --sim h100x8-nvlink query -L -i 9 2>"$T/err"
assert_eq "$?" 2 "-i unknown index"
assert_contains "$(cat "$T/err")" "no GPU has index 9" "-i message"
"$GPUWHY" --sim h100x1 query -d CLOCK 2>/dev/null
assert_eq "$?" 2 "-d without -q"
"$GPUWHY" --sim h100x1 query -q -d NOPE 2>/dev/null
assert_eq "$?" 2 "unknown -q section"
"$GPUWHY" --sim h100x1 dmon -s x 2>/dev/null
assert_eq "$?" 2 "unknown dmon group"
"$GPUWHY" --sim h100x1 query --query-gpu=index -f /nonexistent/dir/out 2>/dev/null
assert_eq "$?" 3 "-f unwritable"

# -f writes the file and nothing to stdout; options after the command name
out=$("$GPUWHY" --sim h100x8-nvlink query -f "$T/f.csv" --format=csv,noheader --query-gpu=index -i 2,5)
assert_eq "$out" "" "-f leaves stdout empty"
assert_eq "$(cat "$T/f.csv" | tr '\n' ' ')" "2 5 " "-f file and -i list"
# a link named nvidia-smi answers nvidia-smi's command line
ln -s "$GPUWHY" "$T/nvidia-smi"
SMI_ENV="GPUWHY_NVML=$(dirname "$GPUWHY")/sim/libnvidia-ml.so.1 GPUWHY_SIM_SCENARIO=$SRC/sim/scenarios/h100x8-nvlink.json"
assert_eq "$(env $SMI_ENV "$T/nvidia-smi" -L)" "$("$GPUWHY" --sim h100x8-nvlink query -L)" "nvidia-smi -L"
assert_eq "$(env $SMI_ENV "$T/nvidia-smi" --query-gpu=index,pci.bus_id --format=csv,noheader -i 1)" "1, 00000000:43:00.0" "nvidia-smi --query-gpu"
assert_eq "$(env $SMI_ENV "$T/nvidia-smi" topo -m | head -1 | cut -f2)" "GPU0" "nvidia-smi topo -m"
assert_eq "$(env $SMI_ENV "$T/nvidia-smi" dmon -c 1 | grep -c '^ ')" 8 "nvidia-smi dmon"
assert_contains "$(env $SMI_ENV "$T/nvidia-smi" | sed -n 3p)" "Driver Version: 550.54.15" "nvidia-smi table"
echo "smi_golden: ok"
