#!/usr/bin/env bash
# gpuwhy doctor against the simulated GPU: each scenario's problem shows up as
# the right check with the right status, numbers and fix.
set -u
: "${GPUWHY:?}" "${GPUWHY_BUILD:?}" "${GPUWHY_SRC:?}"
[ -e "$GPUWHY_BUILD/sim/libnvidia-ml.so.1" ] || { echo "no simulated NVML built"; exit 77; }
for s in h100x1 h100x8-nvlink a100x2-pcie-degraded rtx4090-throttle h100x1-lost l4x2-foreign; do
	"$GPUWHY" sim list | grep -qx "$s" || { echo "scenario $s missing"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; [ -n "${srv:-}" ] && kill "$srv" 2>/dev/null' EXIT
export GPUWHY_SIM_STATE="$tmp/state"
unset CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER GPUWHY_SIM_TIME GPUWHY_GPUS
fail() { echo "FAIL: $*"; cat "$tmp/out"; exit 1; }

# doctor SCENARIO [ARGS...]: output in $tmp/out, exit status in $rc
doctor() {
	local s=$1
	shift
	timeout 120 "$GPUWHY" --sim "$s" doctor "$@" >"$tmp/raw" 2>"$tmp/err"
	rc=$?
	squeeze
}
# the check column is padded to the longest name: make it "STATUS  check  found"
squeeze() { sed -E 's/^(PASS|WARN|FAIL|SKIP)  ([a-z_.]+) +/\1  \2  /' "$tmp/raw" >"$tmp/out"; }
has() { grep -Eq -- "$1" "$tmp/out" || fail "no line matching: $1"; }

doctor h100x1
[ "$rc" -eq 0 ] || fail "h100x1: exit $rc"
has '^PASS  driver\.nvml  .*\(simulated GPU\)'
has '^PASS  driver\.cuda  .*supports CUDA up to 12\.4'
has '^PASS  gpus\.inventory  .*1 GPU: 0 NVIDIA H100 80GB HBM3 GPU-5e3f2a9c'
has '^PASS  gpus\.pcie_link  .*GPU 0: gen 5 of 5, x16 of x16'
has '^PASS  cuda\.visible_devices  .*cuda:0->GPU 0'

doctor a100x2-pcie-degraded
has '^WARN  gpus\.pcie_link  .*GPU 0: gen 3 of 4, x8 of x16.*fix: reseat GPU 0'
has '^WARN  gpus\.pcie_errors  .*GPU 0: [0-9]+ PCIe replays'
doctor a100x2-pcie-degraded --json
if command -v jq >/dev/null; then
	[ "$(jq -r '.[] | select(.check == "gpus.pcie_link") | .status' "$tmp/raw")" = WARN ] ||
		fail "JSON gpus.pcie_link"
fi
# --gpus 1 leaves the degraded GPU 0 out of the per-GPU checks
timeout 120 "$GPUWHY" --sim a100x2-pcie-degraded --gpus 1 doctor >"$tmp/raw"
squeeze
has '^PASS  gpus\.pcie_link  GPU 1: gen 4 of 4, x16 of x16$'

# a --gpus list that names no GPU is a usage error
timeout 120 "$GPUWHY" --sim a100x2-pcie-degraded --gpus 5 doctor >"$tmp/raw" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 2 ] || fail "--gpus 5: exit $rc, want 2"
grep -q '^gpuwhy: --gpus: GPU index 5 does not exist' "$tmp/err" || fail "--gpus 5 message"

GPUWHY_SIM_TIME=45 doctor rtx4090-throttle
[ "$rc" -eq 1 ] || fail "rtx4090-throttle at 45 s: exit $rc, want 1"
has '^FAIL  gpus\.thermal  GPU 0 at [0-9]+ C, slowdown at 88 C'
has '^FAIL  gpus\.clocks  .*hardware thermal slowdown'
has '^WARN  driver\.persistence  persistence mode off on GPU 0.*nvidia-persistenced'
GPUWHY_SIM_TIME=90 doctor rtx4090-throttle
[ "$rc" -eq 0 ] || fail "rtx4090-throttle at 90 s: exit $rc, want 0"
has '^WARN  gpus\.clocks  .*power cap \([0-9]+ W of 450 W\)'

GPUWHY_SIM_TIME=10 doctor h100x1-lost
[ "$rc" -eq 1 ] || fail "h100x1-lost: exit $rc"
has '^FAIL  gpus\.lost  GPU 0( \([0-9A-F:.]+\))? lost: fell off the bus'

doctor l4x2-foreign
has '^WARN  load\.processes  .*GPU 0: pid 1 .*15\.0 GiB; GPU 1: pid 4194001 \(no such process here\) 9\.0 GiB'
has '^WARN  load\.orphan_memory  GPU 1: pid 4194001 is gone but NVML still lists it with 9\.0 GiB'
doctor l4x2-foreign --need-mem 10G
has '^PASS  load\.need_mem  GPU 1 has 10\.0 GiB free \(CUDA_VISIBLE_DEVICES=1\)'
doctor l4x2-foreign --need-mem 16G
[ "$rc" -eq 1 ] || fail "l4x2-foreign --need-mem 16G: exit $rc"
has '^FAIL  load\.need_mem  no GPU has 16\.0 GiB free: GPU 0 7\.[0-9] GiB free of 22\.5 GiB, GPU 1 13\.[0-9] GiB free'
CUDA_VISIBLE_DEVICES=0 doctor l4x2-foreign --need-mem 10G
has "^WARN  load\.need_mem  GPU 1 has 10\.0 GiB free, but CUDA_VISIBLE_DEVICES='0' selects none of them.*fix: CUDA_VISIBLE_DEVICES=1"

doctor h100x8-nvlink --need-mem 70G
[ "$rc" -eq 0 ] || fail "h100x8-nvlink: exit $rc"
has '^PASS  load\.need_mem  GPU 0, 1, 2, 3, 4, 5, 6, 7 have 70\.0 GiB free \(CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7\)'
has '^PASS  cuda\.device_order  all 8 GPUs are NVIDIA H100'
CUDA_VISIBLE_DEVICES=3,1 doctor h100x8-nvlink
has "^PASS  cuda\.visible_devices  CUDA_VISIBLE_DEVICES='3,1': cuda:0->GPU 3 .*, cuda:1->GPU 1 "
CUDA_VISIBLE_DEVICES=2,9,4 doctor h100x8-nvlink
has "^WARN  cuda\.visible_devices  .*cuda:0->GPU 2 .*entry '9' is not a GPU index \(there are 8 GPUs\)"
CUDA_VISIBLE_DEVICES=-1 doctor h100x8-nvlink
[ "$rc" -eq 1 ] || fail "CUDA_VISIBLE_DEVICES=-1: exit $rc"
has "^FAIL  cuda\.visible_devices  CUDA_VISIBLE_DEVICES='-1': the first entry '-1' is negative"
has "^FAIL  env\.gpu_hiding  CUDA_VISIBLE_DEVICES='-1' hides every NVIDIA GPU"

# Python stand-ins (tests/fixtures/doctor/pysite) judged against the simulated driver
if command -v python3 >/dev/null && python3 -c 'import sys; sys.exit(sys.version_info < (3, 8))'; then
	PYTHONPATH="$GPUWHY_SRC/tests/fixtures/doctor/pysite/site:$GPUWHY_SRC/tests/fixtures/doctor/pysite/site2" \
		doctor h100x1 --python python3
	has '^PASS  python\.torch  torch 2\.3\.1\+cu121 \(CUDA 12\.1\); sees 2 GPUs.*simulated GPUs are invisible'
	has '^FAIL  python\.tensorflow  tensorflow 2\.16\.1 is a CPU-only build'
	has '^WARN  python\.duplicates  torch installed 2 times'
fi

# a port held by a process of ours
if command -v python3 >/dev/null; then
	python3 -c 'import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(60)' \
		>"$tmp/port" &
	srv=$!
	for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
	port=$(cat "$tmp/port")
	doctor h100x1 --port "$port"
	has "^WARN  load\.port  port $port is taken: listened on at 127\.0\.0\.1 by pid $srv .*kill $srv"
fi
echo ok
