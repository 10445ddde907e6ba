# gpuwhy top without a terminal: --once frames, the ASCII fallback, -o recordings, bad input.
. "$(dirname "$0")/lib.bash"

# usage errors (no GPU needed)
"$GPUWHY" top -i 50ms --once 2>"$T/err"
assert_eq "$?" 2 "interval below 100 ms"
assert_contains "$(cat "$T/err")" "100ms to 10s" "interval message"
"$GPUWHY" top -i 11s --once 2>/dev/null
assert_eq "$?" 2 "interval above 10 s"
"$GPUWHY" top --sort size --once 2>/dev/null
assert_eq "$?" 2 "unknown sort key"
"$GPUWHY" top </dev/null >"$T/out" 2>"$T/err"
assert_eq "$?" 2 "no terminal without --once"
assert_contains "$(cat "$T/err")" "use --once" "no-terminal hint"
help=$("$GPUWHY" top --help)
assert_eq "$?" 0 "--help"
for k in "quit" "sort" "filter" "pause" "tree" "interval" "help" "GPUs"; do
	assert_contains "$help" "$k" "--help keys"
done

# host only: still a frame, saying why there is no GPU
out=$(COLUMNS=100 GPUWHY_NVML=/nonexistent/libnvidia-ml.so.1 "$GPUWHY" top --once 2>/dev/null)
assert_eq "$?" 0 "host-only frame"
assert_contains "$out" "no GPU" "host-only frame"
assert_contains "$out" "mem " "host memory line"

have_sim || skip "the simulated GPU is not built"
SCEN=h100x8-nvlink
"$GPUWHY" --sim $SCEN sim train --steps 100000 --workers 2 --cpu-ms 30 --gpu-ms 20 \
	>"$T/train.log" 2>&1 &
TRAIN=$!
PIDS_TO_KILL+=("$TRAIN")
for _ in $(seq 100); do grep -q "^step" "$T/train.log" && break; sleep 0.1; done

out=$(COLUMNS=120 LANG=C.UTF-8 "$GPUWHY" --sim $SCEN top --once -t)
assert_eq "$?" 0 "--once"
for g in 0 1 2 3 4 5 6 7; do assert_contains "$out" "GPU $g " "GPU $g in the frame"; done
assert_contains "$out" "util" "meters"
assert_contains "$out" "▕" "UTF-8 bars"
# the job's row, its host data (CPU % and RSS are numbers, not n/a) and its tree with workers
row=$(printf '%s\n' "$out" | grep -E "^ +$TRAIN " | head -1)
[ -n "$row" ] || fail "no process row for $TRAIN: $out"
echo "$row" | awk '{ if ($6 == "n/a" || $7 == "n/a") exit 1 }' || fail "no CPU/RSS for the job: $row"
assert_contains "$out" "tree of PID $TRAIN" "tree"
workers=$(printf '%s\n' "$out" | grep -cE "(└─|├─)[0-9]+ " || true)
assert_ge "$workers" 2 "data workers in the tree"
# every line fits the width
w=$(printf '%s\n' "$out" | LC_ALL=C.UTF-8 wc -L)
assert_le "$w" 120 "frame width"

# ASCII when the locale is not UTF-8, and at 80 columns
out=$(COLUMNS=80 LC_ALL=C "$GPUWHY" --sim $SCEN top --once)
assert_eq "$?" 0 "ASCII --once"
printf '%s' "$out" | LC_ALL=C grep -q '[^[:print:][:space:]]' && fail "non-ASCII bytes in an ASCII frame"
printf '%s' "$out" | grep -qF "[|" || fail "no ASCII bars: $out"
w=$(printf '%s\n' "$out" | LC_ALL=C wc -L)
assert_le "$w" 80 "frame width at 80"

# a printed frame says what its rates cover (not a refresh it never does) and has no key line
assert_contains "$out" "rates over 250 ms" "--once names the span of its rates"
printf '%s' "$out" | grep -qF "every " && fail "--once claims a refresh it never does: $out"
printf '%s' "$out" | grep -qF "q quit" && fail "--once prints the key line: $out"
out=$(COLUMNS=80 LC_ALL=C "$GPUWHY" --sim $SCEN top --once -i 500ms)
assert_contains "$out" "rates over 500 ms" "--once -i 500ms"

# sort and filter from the command line
out=$(COLUMNS=120 LC_ALL=C.UTF-8 "$GPUWHY" --sim $SCEN top --once -s mem -f nomatchatall)
assert_contains "$out" "no process matches" "filter"
assert_contains "$out" "GPU MEM▼" "sort column"

# -o records what is shown
COLUMNS=120 "$GPUWHY" --sim $SCEN top --once -o "$T/top.gpuwhy" >/dev/null 2>"$T/err"
assert_eq "$?" 0 "--once -o"
rows=$("$GPUWHY" export "$T/top.gpuwhy" --table gpu | tail -n +2 | wc -l)
assert_ge "$rows" 16 "GPU samples recorded (8 GPUs x 2+ samples)"
procs=$("$GPUWHY" export "$T/top.gpuwhy" --table process | grep -c "sim train" || true)
assert_ge "$procs" 1 "process samples recorded"
# an unwritable output fails before anything is drawn
"$GPUWHY" --sim $SCEN top --once -o /proc/nope/x.gpuwhy >"$T/out" 2>"$T/err"
assert_eq "$?" 3 "unwritable -o"
[ ! -s "$T/out" ] || fail "a frame was printed although -o failed"
echo "ok"
