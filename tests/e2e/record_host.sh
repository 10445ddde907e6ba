# record/run/export on the host side (no GPU needed): steps, exit status, durability.
. "$(dirname "$0")/lib.bash"

# run: passes output through, timestamps steps, exits with the command's status.
out=$("$GPUWHY" run -o "$T/a.gpuwhy" -i 100ms --no-summary -- \
	bash -c 'for i in 1 2 3 4; do echo "step $i/4 loss 0.1"; sleep 0.2; done; echo "torch.OutOfMemoryError: CUDA out of memory" >&2; exit 7' 2>"$T/err")
rc=$?
assert_eq "$rc" 7 "run exit status"
assert_contains "$out" "step 4/4" "passed-through stdout"
assert_contains "$(cat "$T/err")" "CUDA out of memory" "passed-through stderr"
steps=$("$GPUWHY" export "$T/a.gpuwhy" --table steps | tail -n +2 | wc -l)
assert_eq "$steps" 4 "steps recorded"
ev=$("$GPUWHY" export "$T/a.gpuwhy" --table events --format jsonl)
assert_contains "$ev" '"kind":"oom"' "events"
assert_contains "$ev" '"kind":"proc_exit","gpu":null,"value":7' "events"
meta=$("$GPUWHY" export "$T/a.gpuwhy" --table meta)
assert_contains "$meta" "exit_status,7" "meta"
assert_contains "$meta" "schema_version,1" "meta"
# step timestamps are ~0.2 s apart
gaps=$("$GPUWHY" export "$T/a.gpuwhy" --table steps | awk -F, 'NR>2{print $1-p} {p=$1}')
for g in $gaps; do assert_ge "$g" 0.15 "step gap"; assert_le "$g" 0.6 "step gap"; done
# host samples and the watched tree
rows=$("$GPUWHY" export "$T/a.gpuwhy" --table host | tail -n +2 | wc -l)
assert_ge "$rows" 5 "host samples"
procs=$("$GPUWHY" export "$T/a.gpuwhy" --table process | grep -c "bash -c" || true)
assert_ge "$procs" 3 "watched process samples"

# step markers through GPUWHY_STEP_FD, no output parsing
"$GPUWHY" run -o "$T/b.gpuwhy" --no-summary --step-regex 'NEVER' -- \
	bash -c 'for i in 1 2 3; do echo "step $i" >&$GPUWHY_STEP_FD; sleep 0.1; done' || fail "fd steps run"
steps=$("$GPUWHY" export "$T/b.gpuwhy" --table steps | tail -n +2 | wc -l)
assert_eq "$steps" 3 "fd steps"

# a command that cannot start: 127, one line naming it
"$GPUWHY" run -o "$T/c.gpuwhy" --no-summary -- /no/such/program 2>"$T/err"
assert_eq "$?" 127 "exec failure"
assert_contains "$(cat "$T/err")" "/no/such/program: cannot execute" "exec failure message"

# an unwritable output fails before the command starts (exit 3), and the command never ran
"$GPUWHY" run -o /proc/nope/x.gpuwhy -- touch "$T/ran" 2>"$T/err"
assert_eq "$?" 3 "unwritable output"
[ ! -e "$T/ran" ] || fail "command ran although the output was unwritable"
# a file that is not a recording is never overwritten
echo "my notes" >"$T/notes.txt"
"$GPUWHY" run -o "$T/notes.txt" -- true 2>/dev/null
assert_eq "$?" 3 "foreign file"
assert_eq "$(cat "$T/notes.txt")" "my notes" "foreign file content"

# usage errors
"$GPUWHY" run 2>/dev/null; assert_eq "$?" 2 "run without command"
"$GPUWHY" record 2>/dev/null; assert_eq "$?" 2 "record without -o"
"$GPUWHY" record -o "$T/x.gpuwhy" --interval 5x 2>/dev/null; assert_eq "$?" 2 "bad interval"
"$GPUWHY" export "$T/notes.txt" 2>/dev/null; assert_eq "$?" 3 "export of a non-recording"
"$GPUWHY" export "$T/a.gpuwhy" --table nope 2>/dev/null; assert_eq "$?" 2 "export bad table"

# record --duration stops by itself; SIGKILL leaves a readable file missing at most ~1 s
"$GPUWHY" record -o "$T/d.gpuwhy" -i 100ms -d 1s 2>/dev/null || fail "record --duration"
n=$("$GPUWHY" export "$T/d.gpuwhy" --table host | tail -n +2 | wc -l)
assert_ge "$n" 8 "samples in 1 s at 10 Hz"
"$GPUWHY" record -o "$T/k.gpuwhy" -i 100ms 2>/dev/null &
rp=$!
PIDS_TO_KILL+=("$rp")
sleep 3
kill -9 "$rp"
wait "$rp" 2>/dev/null
n=$("$GPUWHY" export "$T/k.gpuwhy" --table host | tail -n +2 | wc -l)
# 3 s at 10 Hz is ~30 samples; at most the last second (10) may be lost
assert_ge "$n" 18 "samples surviving SIGKILL"

# Xid and AER lines of the kernel log become events (GPUWHY_KMSG points at a log file)
: >"$T/kmsg"
GPUWHY_KMSG="$T/kmsg" "$GPUWHY" record -o "$T/x.gpuwhy" -i 100ms -d 1500ms 2>/dev/null &
rp=$!
sleep 0.5
echo "[ 100.5] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus." >>"$T/kmsg"
echo "[ 100.6] pcieport 0000:00:03.0: AER: Corrected error received: 0000:3b:00.0" >>"$T/kmsg"
echo "[ 100.7] amdgpu 0000:08:00.0: amdgpu: ring gfx_0.0.0 timeout, signaled seq=13, emitted seq=15" >>"$T/kmsg"
echo "[ 100.8] amdgpu 0000:08:00.0: amdgpu: GPU reset(2) succeeded!" >>"$T/kmsg"
wait "$rp" || fail "record with a kernel log"
ev=$("$GPUWHY" export "$T/x.gpuwhy" --table events)
assert_contains "$ev" "xid,,79,Xid 79 on 0000:3b:00" "xid event"
assert_contains "$ev" "pcie_aer" "aer event"
# amdgpu's faults are events of their own, never AER
assert_contains "$ev" "amdgpu_fault,,1,\"amdgpu 0000:08:00.0: ring gfx_0.0.0 timeout, signaled seq=13" "amdgpu ring timeout"
assert_contains "$ev" "amdgpu_fault,,3,amdgpu 0000:08:00.0: GPU reset(2) succeeded!" "amdgpu reset"
n=$(printf '%s\n' "$ev" | grep -c pcie_aer)
[ "$n" = 1 ] || fail "amdgpu lines read as AER ($n pcie_aer events)"
echo "1 passed, 0 failed"
