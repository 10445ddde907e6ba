# gpuwhy top in Chinese in a real terminal (tmux): the layout at 80x24 and 160x50 keeps
# every line within the screen and the process list's columns lined up around a job whose
# command is Chinese (训练任务), the help box and the status line's messages are Chinese;
# then under the marker language every line of the screen, help box and messages included,
# went through gettext.
. "$(dirname "$0")/lib.bash"
: "${GPUWHY_SRC:?}" "${GPUWHY_BUILD:?}"
. "$GPUWHY_SRC/tests/e2e/i18n_lib.bash"
. "$(dirname "$0")/tmux_lib.bash"
command -v python3 >/dev/null || skip "python3 is not installed"
have_sim || skip "the simulated GPU is not built"
CHECK="python3 $GPUWHY_SRC/tests/e2e/top_frame_check.py"
i18n_marker_catalogue "$T/mark" || fail "no marker catalogue"
export LANG=C.UTF-8 # tmux itself reads and draws UTF-8

SCEN=h100x8-nvlink
bash -c "exec -a 训练任务 \"$GPUWHY\" --sim $SCEN sim train --steps 100000 --workers 2 \
	--cpu-ms 30 --gpu-ms 20" >"$T/train.log" 2>&1 &
TRAIN=$!
PIDS_TO_KILL+=("$TRAIN")

# start W H LANG [top options...]: gpuwhy top in a fresh session
start() {
	local w=$1 h=$2 lang=$3
	shift 3
	tmux_session gwtopzh "$w" "$h" "$GPUWHY $* --sim $SCEN top -i 500ms; echo EXITED-\$?; sleep 30" \
		-e LANG="$lang" -e GPUWHY_SIM_STATE="$GPUWHY_SIM_STATE" -e GPUWHY_LOCALEDIR="$T/mark"
}
# check W H: the screen now, within W x H and lined up
check() {
	screen >"$T/screen.txt"
	MEM_TITLE=显存 CMD_TITLE=命令 CMD_TEXT=训练任务 $CHECK "$T/screen.txt" "$1" "$2" ||
		fail "the Chinese screen at $1x$2 (above): $(cat "$T/screen.txt")"
}

for size in "160 50" "80 24"; do
	set -- $size
	start "$1" "$2" zh_CN.UTF-8
	wait_for "gpuwhy top"
	wait_for "^ +$TRAIN +[^ ]+ +0 .*训练任务" 150 # the job's row, its command in Chinese
	wait_for "GPU 7 |^ 7 "
	check "$1" "$2"
	assert_contains "$(screen)" "每 500 毫秒" "the header in Chinese"
	keys s
	wait_for "按 pid 排序"
	check "$1" "$2"
	keys h
	wait_for "按任意键关闭"
	screen >"$T/help.txt"
	WIDTH_ONLY=1 $CHECK "$T/help.txt" "$1" "$2" ||
		fail "the help box at $1x$2 (above): $(cat "$T/help.txt")"
	assert_contains "$(cat "$T/help.txt")" "退出" "the help box in Chinese"
	keys x
	sleep 0.3
	screen | grep -q "按任意键关闭" && fail "the help box did not close"
	keys /
	wait_for "过滤："
	keys Escape
	keys q
	wait_for "EXITED-0"
done

# ---- the marker language: the screen, a message and the help box ------------------
DATA='训练任务 --sim|--sim h100x8-nvlink'
start 160 50 C.UTF-8 --lang qaa
wait_for "$I18N_MARK"
wait_for "^ +$TRAIN " 150
wait_for "GPU 7 "
keys s
wait_for "${I18N_MARK}sorted by pid"
screen >"$T/qaa.txt"
i18n_unmarked "$T/qaa.txt" "$DATA" || fail "unmarked lines on the screen (above)"
keys p
wait_for "${I18N_MARK}paused"
screen | tail -2 | head -1 >"$T/qaa_msg.txt"
i18n_unmarked "$T/qaa_msg.txt" || fail "the pause message is not marked"
keys p
keys h
wait_for "${I18N_MARK}gpuwhy top: keys"
screen >"$T/qaa_help.txt"
i18n_unmarked "$T/qaa_help.txt" "$DATA" || fail "unmarked lines in the help box (above)"
keys x
keys q
wait_for "EXITED-0"
echo "ok"
