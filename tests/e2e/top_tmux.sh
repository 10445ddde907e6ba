# gpuwhy top in a real terminal (tmux): 8 simulated GPUs, a training job, keys, a finding,
# and a clean exit; then the same at 80x24 with NO_COLOR.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/tmux_lib.bash"
have_sim || skip "the simulated GPU is not built"

SCEN=h100x8-nvlink
# A data-starved job on GPU 0: one worker prepares batches three times longer than the GPU step.
"$GPUWHY" --sim $SCEN sim train --steps 100000 --workers 1 --cpu-ms 60 --gpu-ms 20 \
	>"$T/train.log" 2>&1 &
TRAIN=$!
PIDS_TO_KILL+=("$TRAIN")

# start W H [extra env...]: gpuwhy top in a fresh session
start() {
	local w=$1 h=$2
	shift 2
	tmux_session gwtop "$w" "$h" "$GPUWHY --sim $SCEN top -i 500ms; echo EXITED-\$?; sleep 30" \
		-e LANG=C.UTF-8 -e GPUWHY_SIM_STATE="$GPUWHY_SIM_STATE" "$@"
}
status_line() { screen | tail -2 | head -1; }
# an SGR sequence that sets a foreground or background colour
colour='\e\[(?:[0-9]+;)*(?:3[0-7]|4[0-7]|9[0-7]|10[0-7]|38|48)[;m]'

# ---- a large terminal -------------------------------------------------------
start 160 50
wait_for "gpuwhy top"
for g in 0 1 2 3 4 5 6 7; do wait_for "GPU $g "; done
wait_for "sim train --steps 100000" 150   # the job's process row
assert_contains "$(screen)" "every 500 ms" "header"
tmux $S capture-pane -p -e -t t | grep -Pq "$colour" || fail "no colour on a colour terminal"
# the live finding from the diagnosis rules
wait_for 'GPU 0 .*: [a-z-]+\?' 400
finding=$(status_line)
echo "finding: $finding"

# sort, then the sort column is marked
keys s
wait_for "sorted by pid"
# the tree of the selected process: the job and its data worker
keys t
wait_for "tree of PID $TRAIN"
wait_for "GPU 0\]"
keys t
# a filter that matches nothing, then Esc clears it
keys / z z q
wait_for "no process matches"
keys Escape
wait_for "sim train --steps 100000"
# only GPU 3
keys g 3 Enter
wait_for "showing 1 of 8 GPUs"
# (the status line may name GPU 0 in a finding: look above it)
screen | head -n -2 | grep -q "^GPU 0 " && fail "GPU 0 still shown after selecting GPU 3"
keys g a l l Enter
wait_for "GPU 0 "
# pause and resume
keys p
wait_for "PAUSED"
keys p
wait_for "resumed"
# the interval: longer, then back; it never goes below 100 ms
keys +
wait_for "sampling every 1 s"
keys - - - - -
wait_for "already at its shortest"
# help lists the keys; any key closes it
keys h
wait_for "any key closes"
keys x
sleep 0.3
screen | grep -q "any key closes" && fail "help did not close"
# quit: exit status 0 and the terminal is back from the alternate screen
keys q
wait_for "EXITED-0"
assert_eq "$(tmux $S display -p -t t '#{alternate_on}')" 0 "alternate screen after quit"

# ---- 80x24, NO_COLOR ----------------------------------------------------------
start 80 24 -e NO_COLOR=1
wait_for "gpuwhy top"
for g in 0 1 2 3 4 5 6 7; do wait_for "^ $g "; done
wait_for "^ +$TRAIN +root|^ +$TRAIN "   # the job's row (its command is cut at 80 columns)
# the finding, cut to 80 columns
for _ in $(seq 400); do status_line | grep -q "^GPU 0 " && break; sleep 0.1; done
status_line | grep -q "^GPU 0 " || { screen >&2; fail "no finding at 80x24"; }
# no colour escapes at all (bold and reverse are fine)
esc=$(tmux $S capture-pane -p -e -t t)
printf '%s' "$esc" | grep -Pq "$colour" && fail "colour escapes with NO_COLOR"
# resize: the layout follows
tmux $S resize-window -t t -x 120 -y 40
wait_for "GPU 7 "
keys q
wait_for "EXITED-0"
assert_eq "$(tmux $S display -p -t t '#{alternate_on}')" 0 "alternate screen after quit"
echo "ok"
