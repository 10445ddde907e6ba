#!/usr/bin/env bash
# queue (ls, show, wait), trace's text report and status on a throttling GPU
# speak the user's language: no line of English prose outside gettext under the
# marker language of i18n_lib.bash, Chinese under zh_CN with the queue's columns
# in line (a Chinese character takes two columns), English with --lang en, and
# machine output (JSON, CSV, nvidia-smi's words) byte-identical in every language.
. "$(dirname "$0")/lib.bash"
: "${GPUWHY_BUILD:?}" "${GPUWHY_SRC:?}"
. "$GPUWHY_SRC/tests/e2e/i18n_lib.bash"
i18n_sim_test python3

mark() { GPUWHY_LOCALEDIR="$T/mark" "$GPUWHY" --lang qaa "$@"; }
zh() { LANG=zh_CN.UTF-8 LC_ALL= LANGUAGE= "$GPUWHY" "$@"; }
cjk() { LC_ALL=C.UTF-8 grep -qP '[\x{4e00}-\x{9fff}\x{3000}-\x{303f}\x{ff00}-\x{ffef}]' "$1"; }
# unmarked FILE WHAT [IGNORE]: fail on lines of English prose without the mark.
unmarked() {
	i18n_unmarked "$1" "${3:-}" >"$T/bad" || fail "$2: lines outside gettext:
$(cat "$T/bad")"
}
# same WHAT CMD...: CMD's stdout is byte-identical in English, zh_CN and the marker language
# (lines matching $NOW, the wall-clock time a face prints, left out: runs take turns).
NOW='^Timestamp  '
same() {
	local what=$1
	shift
	"$GPUWHY" "$@" 2>/dev/null | grep -v "$NOW" >"$T/s.en"
	zh "$@" 2>/dev/null | grep -v "$NOW" >"$T/s.zh"
	mark "$@" 2>/dev/null | grep -v "$NOW" >"$T/s.mk"
	[ -s "$T/s.en" ] || fail "$what: no output"
	cmp -s "$T/s.en" "$T/s.zh" || fail "$what differs under zh_CN: $(diff "$T/s.en" "$T/s.zh" | head -5)"
	cmp -s "$T/s.en" "$T/s.mk" || fail "$what differs under the marker language"
}

# ---- status while the thermal episode holds the clocks (30-60 s of the scenario)
export GPUWHY_SIM_TIME=40
S=(--sim rtx4090-throttle)
mark "${S[@]}" status >"$T/st.m" || fail "status under the marker language"
# Data: the GPU's name and bus id, NVML's enum words (Default, Disabled), the version line.
unmarked "$T/st.m" status 'NVIDIA|^GPU [0-9]'
grep -q "◊SW Thermal Slowdown.*◊HW Thermal Slowdown" "$T/st.m" ||
	fail "status: the clock reasons are not translated: $(grep -i slowdown "$T/st.m")"
zh "${S[@]}" status >"$T/st.z"
grep -q "时钟受限于：.*温度墙" "$T/st.z" || fail "status in Chinese: $(sed -n 4,7p "$T/st.z")"
zh --lang en "${S[@]}" status >"$T/st.en"
cjk "$T/st.en" && fail "--lang en status under zh_CN prints Chinese"
grep -q "clocks held by: SW Thermal Slowdown, HW Thermal Slowdown" "$T/st.en" ||
	fail "status in English: $(grep held "$T/st.en")"
# nvidia-smi's faces keep the driver's words.
same "query -q" "${S[@]}" query -q -d PERFORMANCE
grep -q "SW Thermal Slowdown *: Active" "$T/s.zh" || fail "query -q lost the driver's words"
same "query csv" "${S[@]}" query --query-gpu=clocks_event_reasons.active,clocks_event_reasons.sw_thermal_slowdown --format=csv
unset GPUWHY_SIM_TIME

# ---- trace's text report
TR=$GPUWHY_SRC/tests/fixtures/traces/nccl/nccl_data.json.gz
mark trace "$TR" >"$T/tr.m" || fail "trace under the marker language: exit $?"
# Data: the kernels' own names in the top-kernels table.
unmarked "$T/tr.m" "trace" '^    (COMPUTATION|COMMUNICATION|MEMORY) +[0-9]+ +[0-9]+ '
grep -q "◊host-bound" "$T/tr.m" || fail "trace: the verdict word is not translated"
zh trace "$TR" >"$T/tr.z" || fail "trace in Chinese"
grep -q "结论：受主机侧限制：GPU 在" "$T/tr.z" || fail "trace in Chinese: $(grep -A2 '结论' "$T/tr.z")"
zh --lang en trace "$TR" >"$T/tr.en"
cjk "$T/tr.en" && fail "--lang en trace under zh_CN prints Chinese"
"$GPUWHY" trace "$TR" >"$T/tr.c"
cmp -s "$T/tr.c" "$T/tr.en" || fail "--lang en trace differs from English"
same "trace --format json" trace --format json "$TR"
same "trace --format csv" trace --format csv "$TR"

# The reader's warnings (a value of the wrong type, events without a ts, no rank,
# two files of one rank): in the user's language in text, English in JSON.
ev='{"ph":"X","name":"k","cat":"kernel","pid":0,"tid":7,"dur":3'
printf '{"traceEvents":[%s,"ts":1,"args":{"stream":7}},%s},%s,"ts":"x"}]}\n' "$ev" "$ev" "$ev" >"$T/w1.json"
cp "$T/w1.json" "$T/w2.json"
mark trace "$T/w1.json" "$T/w2.json" >"$T/tw.m" 2>&1 || fail "trace with warnings under the marker language"
grep -q "◊  warning: ◊no \"rank\"" "$T/tw.m" || fail "trace's warnings: $(grep -i warning "$T/tw.m")"
unmarked "$T/tw.m" "trace with warnings" '^    (COMPUTATION|COMMUNICATION|MEMORY) +[0-9]+ +[0-9]+ '
mark trace --format json "$T/w1.json" >"$T/tw.j"
grep -q '"2 events without a ts were skipped"' "$T/tw.j" || fail "trace JSON warnings: $(grep -A3 warnings "$T/tw.j")"
grep -q '◊' "$T/tw.j" && fail "trace JSON holds translated text"

# ---- queue: a task done, a task with a Chinese name that fails (one retry), a log
export GPUWHY_QUEUE=$T/q
trap '"$GPUWHY" queue stop >/dev/null 2>&1; cleanup' EXIT
"$GPUWHY" queue config sample-interval 200ms
"$GPUWHY" queue add --gpus 0 -n hello -- sh -c 'echo hi' >/dev/null || fail "queue add"
"$GPUWHY" queue add --gpus 0 -n 中文任务 --retries 1 --retry-delay 100ms -- sh -c 'exit 3' >/dev/null
mark queue wait --timeout 60s 2>"$T/w.m"
rc=$?
[ $rc = 1 ] || fail "queue wait: exit $rc, not 1 (a task failed): $(cat "$T/w.m")"
unmarked "$T/w.m" "queue wait"
grep -q "gpuwhy: queue wait: ◊1 task did not end done" "$T/w.m" || fail "queue wait: $(cat "$T/w.m")"
zh queue wait 2>"$T/w.z"
grep -q "1 个任务没有以完成结束" "$T/w.z" || fail "queue wait in Chinese: $(cat "$T/w.z")"

# The task's stored error ("exit 3; no retry left ...") is its record, English in JSON,
# translated where text shows it; a task's log lines are the task's own.
rec='^    === gpuwhy'
mark queue ls >"$T/ls.m" || fail "queue ls under the marker language"
unmarked "$T/ls.m" "queue ls" "$rec"
grep -q "◊done" "$T/ls.m" || fail "queue ls: states not translated: $(cat "$T/ls.m")"
for id in 1 2; do
	mark queue show $id >"$T/sh.m" || fail "queue show $id under the marker language"
	unmarked "$T/sh.m" "queue show $id" "$rec"
done
zh queue ls >"$T/ls.z"
zh queue show 2 >"$T/sh.z"
grep -q "已完成" "$T/ls.z" || fail "queue ls in Chinese: $(cat "$T/ls.z")"
grep -q "失败，已尝试 2 次" "$T/sh.z" || fail "queue show in Chinese: $(cat "$T/sh.z")"
# Columns in line in Chinese: the command and info columns start at the same display
# column in the head and every row, 中文任务 included.
python3 - "$T/ls.z" <<'PY' || fail "queue ls columns out of line in Chinese: $(cat "$T/ls.z")"
import sys, unicodedata
def col(line, sub):
    i = line.index(sub)
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line[:i])
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
head, rows = lines[0], lines[1:]
want_cmd, want_info = col(head, "命令"), col(head, "信息")
got = {r.split()[0]: r for r in rows}
assert col(got["1"], "hello") == want_cmd, (got["1"], want_cmd)
assert col(got["2"], "中文任务") == want_cmd, (got["2"], want_cmd)
assert col(got["1"], "退出码") == want_info, (got["1"], want_info)
assert col(got["2"], "退出码 3") == want_info, (got["2"], want_info)
PY
zh --lang en queue show 1 >"$T/sh.en"
cjk "$T/sh.en" && fail "--lang en queue show under zh_CN prints Chinese: $(cat "$T/sh.en")"
grep -q "state      done after 1 attempt" "$T/sh.en" || fail "queue show in English: $(cat "$T/sh.en")"
# Errors: the why and the hint in the user's language ("gpuwhy:" and what the user typed stay).
mark queue show 99 2>"$T/e.m" && fail "queue show 99 exited 0"
grep -q "^gpuwhy: 99: ◊no such task$" "$T/e.m" || fail "queue show 99: $(cat "$T/e.m")"
zh queue show 99 2>"$T/e.z"
grep -q "^gpuwhy: 99: 没有这个任务" "$T/e.z" || fail "queue show 99 in Chinese: $(cat "$T/e.z")"
mark --sim nosuch status 2>"$T/e.m" && fail "--sim nosuch exited 0"
unmarked "$T/e.m" "--sim nosuch"
grep -q "◊no such scenario" "$T/e.m" || fail "--sim nosuch: $(cat "$T/e.m")"
grep -q "退出码 3；没有剩余重试次数（已尝试 2 次）" "$T/ls.z" || fail "queue ls: the stored error in Chinese: $(cat "$T/ls.z")"
grep -q "◊◊exit 3; no retry left (2 attempts)" "$T/sh.m" || fail "queue show: the stored error not translated: $(cat "$T/sh.m")"
# A wait reason, translated where shown: a task after one that runs.
"$GPUWHY" queue add --gpus 0 -n long -- sleep 60 >/dev/null
"$GPUWHY" queue add --gpus 0 --after 3 -- true >/dev/null
for _ in $(seq 200); do
	zh queue show 4 >"$T/w4.z" 2>&1
	grep -q "等待任务 3（运行中）" "$T/w4.z" && break
	sleep 0.1
done
grep -q "等待任务 3（运行中）" "$T/w4.z" || fail "queue show: the wait reason in Chinese: $(cat "$T/w4.z")"
"$GPUWHY" queue show 4 --json | grep -q '"waiting": *"waiting for task 3 (running)"' ||
	fail "queue show --json: the wait reason not English: $("$GPUWHY" queue show 4 --json)"
"$GPUWHY" queue cancel --all >/dev/null
# The listings are compared once the cancels have ended the tasks: a reading
# taken while task 3 is still being stopped would differ from the next one.
"$GPUWHY" queue wait 3 4 --timeout 60s >/dev/null 2>&1
same "queue ls --json" queue ls --json
same "queue show --json" queue show 2 --json
exit 0
