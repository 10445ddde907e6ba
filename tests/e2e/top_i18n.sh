# gpuwhy top speaks Chinese: every line of a --once frame goes through gettext (the
# marker language), --lang en under a Chinese locale prints no CJK, and the zh_CN frame
# at 80 and 160 columns stays within the width with its columns lined up around a job
# whose command is Chinese (训练任务).
. "$(dirname "$0")/lib.bash"
: "${GPUWHY_BUILD:?}" "${GPUWHY_SRC:?}"
. "$GPUWHY_SRC/tests/e2e/i18n_lib.bash"
have_sim || skip "the simulated GPU is not built"
command -v python3 >/dev/null || skip "python3 is not installed"
CHECK="python3 $GPUWHY_SRC/tests/e2e/top_frame_check.py"
i18n_marker_catalogue "$T/mark" || fail "no marker catalogue"

SCEN=h100x8-nvlink
# The training job runs as 训练任务 (argv[0]), so its command in the list is Chinese.
bash -c "exec -a 训练任务 \"$GPUWHY\" --sim $SCEN sim train --steps 100000 --workers 2 \
	--cpu-ms 30 --gpu-ms 20" >"$T/train.log" 2>&1 &
TRAIN=$!
PIDS_TO_KILL+=("$TRAIN")
for _ in $(seq 100); do grep -q "^step" "$T/train.log" && break; sleep 0.1; done
grep -q "^step" "$T/train.log" || fail "the training job did not start: $(cat "$T/train.log")"

# ---- the marker language: no line of human text escapes gettext ----------------
# Data the frame shows as is: command lines, cut to the width (the job's, and gpuwhy's
# own: under load the frame's own process can rank among the busiest).
DATA='训练任务 --sim|--sim h100x8|/gpuwhy --'
for cols in 80 120 200; do
	COLUMNS=$cols GPUWHY_LOCALEDIR="$T/mark" LANG=C.UTF-8 "$GPUWHY" --lang qaa --sim $SCEN \
		top --once -t >"$T/qaa.txt" 2>"$T/qaa.err"
	assert_eq "$?" 0 "--once under the marker language at $cols columns"
	grep -q "$I18N_MARK" "$T/qaa.txt" || fail "no marked line at $cols columns: $(cat "$T/qaa.txt")"
	i18n_unmarked "$T/qaa.txt" "$DATA" || fail "unmarked lines in top --once at $cols columns (above)"
done
# the host-only frame says why there is no GPU, marked too
COLUMNS=100 GPUWHY_NVML=/nonexistent/libnvidia-ml.so.1 GPUWHY_LOCALEDIR="$T/mark" LANG=C.UTF-8 \
	"$GPUWHY" --lang qaa top --once >"$T/host.txt" 2>/dev/null
assert_eq "$?" 0 "host-only frame under the marker language"
i18n_unmarked "$T/host.txt" || fail "unmarked lines in the host-only frame (above)"
# the key table of --help
GPUWHY_LOCALEDIR="$T/mark" "$GPUWHY" --lang qaa top --help >"$T/help.txt" 2>&1
grep -E '^  (q|h|s|r|/|g|p|t|\+ -|Up Down|Ctrl-L|mouse) ' "$T/help.txt" >"$T/keys.txt"
assert_eq "$(wc -l <"$T/keys.txt")" 12 "key lines in --help"
grep -F -e "--gpus LIST" "$T/help.txt" >>"$T/keys.txt"
i18n_unmarked "$T/keys.txt" || fail "unmarked key lines in top --help (above)"

# ---- Chinese, and English forced under a Chinese locale --------------------------
out=$(COLUMNS=120 LANG=zh_CN.UTF-8 "$GPUWHY" --sim $SCEN top --once -t)
assert_eq "$?" 0 "--once in Chinese"
for w in "张 GPU" "利用率" "显存" "功耗" "温度" "用户" "命令" "进程树" "速率按"; do
	assert_contains "$out" "$w" "the Chinese frame"
done
out=$(COLUMNS=120 LANG=zh_CN.UTF-8 "$GPUWHY" --lang en --sim $SCEN top --once -t |
	grep -v "训练任务")
assert_contains "$out" "GPUs" "--lang en frame"
printf '%s' "$out" | LC_ALL=C.UTF-8 grep -qP '[\p{Han}\x{3000}-\x{303f}\x{ff00}-\x{ffef}]' &&
	fail "CJK in the --lang en frame: $out"
# an ASCII screen (--ascii) cannot show Chinese: it is English, not question marks
out=$(COLUMNS=120 LANG=zh_CN.UTF-8 "$GPUWHY" --sim $SCEN top --once --ascii | grep -v "训练任务")
assert_contains "$out" "GPUs" "--ascii frame under zh_CN"
printf '%s' "$out" | LC_ALL=C grep -q '[^[:print:][:space:]]' && fail "non-ASCII bytes in an --ascii frame"
help=$(LANG=zh_CN.UTF-8 "$GPUWHY" --lang en top --help)
printf '%s' "$help" | LC_ALL=C.UTF-8 grep -qP '\p{Han}' && fail "CJK in --lang en top --help"

# ---- the zh_CN frame: within the width, columns lined up -----------------------
for cols in 80 160; do
	COLUMNS=$cols LANG=zh_CN.UTF-8 "$GPUWHY" --sim $SCEN top --once -t >"$T/zh.txt"
	assert_eq "$?" 0 "--once in Chinese at $cols columns"
	grep -q "训练任务" "$T/zh.txt" || fail "the job's Chinese command is not in the list: $(cat "$T/zh.txt")"
	MEM_TITLE=显存 CMD_TITLE=命令 CMD_TEXT=训练任务 $CHECK "$T/zh.txt" "$cols" ||
		fail "the Chinese frame at $cols columns (above): $(cat "$T/zh.txt")"
done
echo "ok"
