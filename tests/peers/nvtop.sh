#!/usr/bin/env bash
# A real NVML program on the simulated GPU: nvtop's one-shot view (nvtop -s)
# on every shipped scenario prints every GPU with no error. nvtop is the one
# in PATH, $NVTOP, or built once from ../shared/peers/nvtop (the peer sources
# kept for benchmarks) into the build directory; skipped when none can be had.
. "$(dirname "$0")/../e2e/lib.bash"
have_sim || skip "simulated GPU not built"
B="${GPUWHY_BUILD:-$(dirname "$GPUWHY")}"
NV="${NVTOP:-$(command -v nvtop || true)}"
SRC="${SHARED_DIR:-}/peers/nvtop"
if [ -z "$NV" ] && [ -f "$SRC/CMakeLists.txt" ]; then
	NV="$B/peers/nvtop/src/nvtop"
	if [ ! -x "$NV" ]; then
		off=()
		for v in AMDGPU RADEON INTEL MSM APPLE PANFROST PANTHOR ASCEND V3D TPU ROCKCHIP METAX \
			ENFLAME TENSTORRENT; do off+=("-D${v}_SUPPORT=OFF"); done
		{ cmake -S "$SRC" -B "$B/peers/nvtop" -DNVIDIA_SUPPORT=ON -DIXML_SUPPORT=OFF "${off[@]}" &&
			make -C "$B/peers/nvtop" -j2; } >"$T/nvtop-build.log" 2>&1 ||
			skip "nvtop did not build from $SRC (see its log): $(tail -3 "$T/nvtop-build.log")"
	fi
fi
[ -n "$NV" ] && [ -x "$NV" ] || skip "no nvtop (none in PATH, no \$NVTOP, no peer sources)"
SCN="${GPUWHY_SRC:?}/sim/scenarios"
LIBDIR="$(dirname "$GPUWHY")/sim"
# A sanitizer build's simulated library needs the ASan runtime loaded first,
# which nvtop (built without it) does not bring: preload it (the suite's ASan pass).
if grep -q __asan_init "$LIBDIR/libnvidia-ml.so.1" 2>/dev/null; then
	rt=$(clang -print-file-name="libclang_rt.asan-$(uname -m).so" 2>/dev/null)
	[ -f "$rt" ] || fail "the simulated library is an ASan build and clang's ASan runtime is missing"
	export LD_PRELOAD="$rt" ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0
fi

for f in "$SCN"/*.json; do
	s=$(basename "$f" .json)
	# The simulated NVML serves the NVIDIA GPUs; nvtop reads AMD GPUs from the real /sys,
	# not from the tree gpuwhy simulates, so a scenario of AMD GPUs alone is not for it here.
	want=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); v=d.get("gpu_defaults", {}).get("vendor", "nvidia"); print(sum(1 for g in d["gpus"] if g.get("vendor", v) != "amd"))' "$f")
	[ "$want" = 0 ] && continue
	LD_LIBRARY_PATH="$LIBDIR" GPUWHY_SIM_SCENARIO="$f" GPUWHY_SIM_TIME=2 \
		timeout 60 "$NV" -s >"$T/$s.json" 2>"$T/$s.err" || fail "nvtop -s on $s: exit $?: $(cat "$T/$s.err")"
	[ -s "$T/$s.err" ] && fail "nvtop -s on $s wrote errors: $(cat "$T/$s.err")"
	got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(1 for g in d if g.get("device_name") and g.get("power_draw")))' "$T/$s.json") ||
		fail "nvtop -s on $s: not JSON: $(head -c 300 "$T/$s.json")"
	assert_eq "$got" "$want" "GPUs with a name and a power reading in nvtop -s on $s"
	echo "ok: nvtop -s on $s ($got GPUs)"
done
# Pinned, nvtop's second refresh still finds per-process samples: the process
# the scenario runs shows its GPU use, not null.
LD_LIBRARY_PATH="$LIBDIR" GPUWHY_SIM_SCENARIO="$SCN/h100x1-lost.json" GPUWHY_SIM_TIME=2 \
	timeout 60 "$NV" -s >"$T/procs.json" 2>"$T/procs.err" || fail "nvtop -s on h100x1-lost: exit $?"
use=$(python3 -c 'import json,sys; print(",".join(str(p.get("gpu_usage")) for g in json.load(open(sys.argv[1])) for p in g.get("processes", [])))' "$T/procs.json")
assert_eq "$use" "85%" "nvtop -s's per-process GPU use on h100x1-lost at a pinned time"
echo "ok: nvtop -s shows per-process GPU use at a pinned time ($use)"
# After the GPU fell off the bus nvtop leaves it out, as on a real machine, without an error.
LD_LIBRARY_PATH="$LIBDIR" GPUWHY_SIM_SCENARIO="$SCN/h100x1-lost.json" GPUWHY_SIM_TIME=40 \
	timeout 60 "$NV" -s >"$T/lost.out" 2>"$T/lost.err" || fail "nvtop -s on the lost GPU: exit $?"
[ -s "$T/lost.err" ] && fail "nvtop -s on the lost GPU wrote errors: $(cat "$T/lost.err")"
echo "ok: nvtop -s after the GPU is lost: $(head -1 "$T/lost.out")"
