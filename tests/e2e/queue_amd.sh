#!/usr/bin/env bash
# gpuwhy queue on machines with AMD GPUs: a task on AMD GPUs is named to HIP by
# HIP_VISIBLE_DEVICES in HIP's numbering (AMD GPUs from 0 in PCI order), the task's own
# ROCR_VISIBLE_DEVICES is dropped, and CUDA_VISIBLE_DEVICES never points a CUDA program
# at an NVIDIA GPU it was not given. Mixed: the simulated H100 plus the MI300X fixture tree.
. "$(dirname "$0")/queue_lib.bash"
FIX=$(cd "$(dirname "$0")/../fixtures/amdgpu" && pwd)
unset HIP_VISIBLE_DEVICES ROCR_VISIBLE_DEVICES GPUWHY_SIM_TIME
# a real NVIDIA driver's GPUs would come first and shift the fixture's indices
[ -e /dev/nvidiactl ] && { echo "a real NVIDIA driver is present: skipped"; exit 77; }
export GPUWHY_SYSFS_ROOT=$FIX/mi300x

new_queue() {
	export GPUWHY_QUEUE=$T/$1
	DB=$GPUWHY_QUEUE/queue.db
	q config sample-interval 200ms >/dev/null
	q config kill-grace 1s >/dev/null
	q config gpus "$2" >/dev/null
}
show_env='echo "cuda=[${CUDA_VISIBLE_DEVICES-unset}] hip=[${HIP_VISIBLE_DEVICES-unset}] rocr=[${ROCR_VISIBLE_DEVICES-unset}]"'
# run_on ID ARGS...: add task ID (the queue's next) printing its environment, which it
# brings ROCR_VISIBLE_DEVICES and HIP_VISIBLE_DEVICES in; wait for it, print that line
run_on() {
	local id=$1
	shift
	ROCR_VISIBLE_DEVICES=0,1 HIP_VISIBLE_DEVICES=0 "$GPUWHY" "$@" -- sh -c "$show_env" >/dev/null ||
		fail "queue add $*"
	q wait "$id" --timeout 60s >/dev/null 2>&1 || fail "task $id did not end done: $(q show "$id")"
	q log "$id" | grep -m1 '^cuda='
}

# --- AMD-only: gpuwhy's index is HIP's; CUDA_VISIBLE_DEVICES repeats it (HIP reads it too)
new_queue q1 1
out=$(run_on 1 queue add -n amd1)
[ "$out" = "cuda=[1] hip=[1] rocr=[unset]" ] || fail "AMD-only task on GPU 1: $out"
q log 1 | grep -q "GPUs 1 CUDA_VISIBLE_DEVICES=1 HIP_VISIBLE_DEVICES=1 ===" || fail "log header: $(q log 1 | head -2)"
q stop >/dev/null 2>&1

sim_ok || { echo "simulated NVML not built: skipped"; exit 77; }
# --- mixed: GPU 0 the H100 (CUDA 0), GPUs 1 and 2 the MI300X (HIP 0 and 1)
new_queue q2 2
out=$(run_on 1 --sim h100x1 queue add -n amd2)
[ "$out" = "cuda=[] hip=[1] rocr=[unset]" ] || fail "mixed: a task on AMD GPU 2: $out"
q config gpus 0 >/dev/null
uuid=$(q gpus --json | json '[g["uuid"] for g in j["gpus"] if g["index"] == 0][0]')
case "$uuid" in GPU-*) ;; *) fail "no H100 UUID in the view: $uuid" ;; esac
out=$(run_on 2 --sim h100x1 queue add -n nv0)
[ "$out" = "cuda=[$uuid] hip=[-1] rocr=[unset]" ] || fail "mixed: a task on the H100: $out"
q config gpus 2,1 >/dev/null
out=$(run_on 3 --sim h100x1 queue add --gpus 2 -n amd12)
[ "$out" = "cuda=[] hip=[1,0] rocr=[unset]" ] || fail "mixed: a task on both MI300X: $out"
q stop >/dev/null 2>&1
exit 0
