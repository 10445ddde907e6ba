# `gpuwhy sim train` on simulated AMD GPUs: while it runs, its process, memory and load are
# in the amdgpu tree the reader reads (its fdinfo, VRAM use, busy percent), on the GPU it
# was given and no other; once it has stopped, they are gone. The scenario clock is pinned
# at a time the scenario's own job waits (mi300x8 at 9 s: 0 % busy), so any load is the
# workload's.
. "$(dirname "$0")/lib.bash"
unset GPUWHY_SYSFS_ROOT GPUWHY_SIM_TIME GPUWHY_KMSG CUDA_VISIBLE_DEVICES
[ -e /dev/nvidiactl ] && skip "a real NVIDIA driver is present"
have_sim || skip "the simulated GPU is not built"
q() { # GPU: memory.used and utilization.gpu at 9 s
	GPUWHY_SIM_TIME=9 "$GPUWHY" --sim mi300x8 query -i "$1" --query-gpu=memory.used,utilization.gpu \
		--format=csv,noheader,nounits
}
assert_eq "$(q 2)" "150283, 0" "GPU 2 before the workload"
"$GPUWHY" --sim mi300x8 sim train --gpu 2 --steps 1000000 --workers 0 --cpu-ms 0 --gpu-ms 50 \
	--mem-mib 5000 >"$T/train.out" 2>&1 &
TP=$!
PIDS_TO_KILL+=($TP)
wait_line "$T/train.out" "^step 2/" $TP
out=$(q 2)
assert_eq "${out%%,*}" "155283" "GPU 2's VRAM with the workload's 5000 MiB"
assert_ge "${out##*, }" 1 "GPU 2 busy with the workload"
assert_eq "$(q 3)" "150283, 0" "GPU 3 untouched"
st=$(GPUWHY_SIM_TIME=9 "$GPUWHY" --sim mi300x8 status)
echo "$st" | grep -Eq "^ +2 +$TP +[^ ]+ +C +5000 MiB .*sim train" || fail "the workload's process on GPU 2: $st"
echo "$st" | grep -Eq "^ +[013-7] +$TP " && fail "the workload listed on another GPU: $st"
kill $TP
wait $TP 2>/dev/null
assert_eq "$(q 2 | cut -d, -f1)" "150283" "the workload's memory freed"
st=$(GPUWHY_SIM_TIME=9 "$GPUWHY" --sim mi300x8 status)
echo "$st" | grep -Eq "^ +2 +$TP " && fail "the stopped workload still listed: $st"
# a consumer card: a running workload's memory counts against the next one's
"$GPUWHY" --sim rx7900xtx sim train --steps 1000000 --workers 0 --cpu-ms 5 --gpu-ms 5 \
	--mem-mib 4000 >"$T/first.out" 2>&1 &
TP=$!
PIDS_TO_KILL+=($TP)
wait_line "$T/first.out" "^step 2/" $TP
"$GPUWHY" --sim rx7900xtx sim train --mem-mib 4000 --steps 3 --cpu-ms 1 --gpu-ms 1 >/dev/null 2>"$T/oom.err"
assert_eq "$?" 1 "4000 MiB more on a card with 2148 MiB free"
assert_contains "$(cat "$T/oom.err")" "of which 2.10 GiB is free" "the card's free memory in the out-of-memory error"
kill $TP
wait $TP 2>/dev/null
exit 0
