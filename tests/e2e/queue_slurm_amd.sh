#!/usr/bin/env bash
# gpuwhy queue --backend slurm on an AMD node of a real single-node Slurm: its
# gres.conf marks the GPUs AMD's (Flags=amd_gpu_env, what AutoDetect=rsmi
# sets), so Slurm names a job's GPUs in ROCR_VISIBLE_DEVICES alone. The job
# must get HIP's numbering after ROCr's filter (HIP_VISIBLE_DEVICES 0..n-1),
# none of the submitting shell's GPU variables, and the queue must record its
# GPUs. Skipped (77) when the lab cannot start (see slurm_lab.bash).
. "$(dirname "$0")/queue_lib.bash"

skip() { echo "slurm lab: $*: skipped"; exit 77; }
assert_eq() { [ "$1" = "$2" ] || fail "${3:-value}: expected '$2', got '$1'"; }
. "$(dirname "$0")/slurm_lab.bash"
slurm_lab_need sbatch squeue scancel
slurm_lab_conf localhost
# four AMD GPUs: render nodes, each a link to /dev/null
printf '%s\n' "AutoDetect=off" \
	"NodeName=$LAB_NODE Name=gpu File=$LAB/dev/renderD[128-131] Flags=amd_gpu_env" \
	>"$LAB/etc/gres.conf"
for i in 128 129 130 131; do ln -sf /dev/null "$LAB/dev/renderD$i"; done

cleanup_and_lab() {
	local rc=$?
	[ -d "$GPUWHY_QUEUE" ] && "$GPUWHY" queue stop >/dev/null 2>&1
	timeout 10 scancel --user=root >/dev/null 2>&1 || true
	slurm_lab_down
	(exit $rc)
	cleanup
}
trap cleanup_and_lab EXIT

slurm_lab_up
q config slurm-poll 300ms >/dev/null
q config backend slurm >/dev/null

show_env='echo "rocr=${ROCR_VISIBLE_DEVICES-unset} hip=${HIP_VISIBLE_DEVICES-unset} cuda=${CUDA_VISIBLE_DEVICES-unset} ord=${GPU_DEVICE_ORDINAL-unset}"; sleep 3'
# the submitting shell's own GPU variables name GPUs of another machine, or none
export CUDA_VISIBLE_DEVICES=7 HIP_VISIBLE_DEVICES=5 ROCR_VISIBLE_DEVICES=6 GPU_DEVICE_ORDINAL=4
q add --gpus 1 -n one -- sh -c "$show_env" >/dev/null   # 1
q add --gpus 2 -n two -- sh -c "$show_env" >/dev/null   # 2
unset CUDA_VISIBLE_DEVICES HIP_VISIBLE_DEVICES ROCR_VISIBLE_DEVICES GPU_DEVICE_ORDINAL
q wait 1 2 --timeout 90s || fail "the AMD tasks did not end done: $(q show 1) $(q show 2)"
# what Slurm gave each job (ROCr's filter), and what the job sees after it
for i in 1 2; do
	line=$(q log "$i" | grep '^rocr=') || fail "task $i printed no environment: $(q log "$i")"
	rocr=${line#rocr=}
	rocr=${rocr%% *}
	case "$i:$rocr" in 1:[0-3] | 2:[0-3],[0-3]) ;; *) fail "task $i: Slurm's ROCR_VISIBLE_DEVICES '$rocr'" ;; esac
	want=$([ "$i" = 1 ] && echo 0 || echo 0,1)
	assert_eq "$line" "rocr=$rocr hip=$want cuda=$want ord=unset" "task $i: the job's GPU variables"
	q log "$i" | grep -q "^=== gpuwhy task $i attempt 1 .* ROCR_VISIBLE_DEVICES=$rocr HIP_VISIBLE_DEVICES=$want ===\$" ||
		fail "task $i: the attempt's header: $(q log "$i" | head -1)"
	assert_eq "$(q show "$i" --json | json 'j["attempts"][0]["gpus"]')" "$rocr" "task $i: the recorded GPUs"
done
echo "queue_slurm_amd: ok"
