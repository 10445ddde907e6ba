# The diagnosis speaks the user's language: run's summary, report (text and HTML)
# and compare on recordings of the simulated GPU with several findings print no
# line of English prose outside gettext (checked under the marker language of
# i18n_lib.bash), Chinese under zh_CN with CJK-aware columns, English under
# --lang en, and byte-identical JSON whatever the language.
. "$(dirname "$0")/lib.bash"
: "${GPUWHY_BUILD:?}" "${GPUWHY_SRC:?}"
. "$GPUWHY_SRC/tests/e2e/i18n_lib.bash"
i18n_sim_test python3

# Display columns of text (East Asian wide and fullwidth characters take two).
# width MAX: fail on any line of stdin wider than MAX columns.
width() {
	python3 -c '
import sys, unicodedata
bad = 0
for line in sys.stdin.read().splitlines():
    w = sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)
    if w > int(sys.argv[1]):
        print("overflow (%d): %s" % (w, line)); bad = 1
sys.exit(bad)' "$1"
}
# column_at N: every line of stdin has a non-blank character ending at display column N
# and a blank (or the end) after it.
column_at() {
	python3 -c '
import sys, unicodedata
bad = 0; n = int(sys.argv[1]); rows = 0
for line in sys.stdin.read().splitlines():
    rows += 1; w = 0; ok = False
    for i, c in enumerate(line):
        w += 2 if unicodedata.east_asian_width(c) in "WF" else 1
        if w == n:
            ok = c != " " and (i + 1 == len(line) or line[i + 1] == " ")
            break
    if not ok:
        print("misaligned: " + line); bad = 1
sys.exit(bad if rows else 1)' "$1"
}

export GPUWHY_LOCALEDIR="$T/mark"
# Wrapped paragraphs are checked whole: the mark leads each message, not each line.
export COLUMNS=1000000
Q=(--lang qaa)

# rec NAME SCENARIO TRAIN-ARGS...: a `sim train` run recorded by `gpuwhy run` under the
# marker language; its summary (stderr) lands in NAME.err.
rec() {
	local name=$1 sc=$2
	shift 2
	GPUWHY_SIM_STATE="$T/state-$name" "$GPUWHY" "${Q[@]}" --sim "$sc" run -o "$T/$name.gpuwhy" \
		-i 200ms -- "$GPUWHY" sim train "$@" >"$T/$name.out" 2>"$T/$name.err"
}
# Data-starved (warn), GPUs of the job idle (imbalance), a job that never touches the GPU
# (error), and an out-of-memory exit (error): four sets of texts, run two at a time.
rec starved h100x1 --workers 1 --cpu-ms 100 --gpu-ms 40 --steps 25 &
rec multi a100x4-pcie --ranks 4 --workers 0 --cpu-ms 0 --gpu-ms 40 --steps 25 &
wait
rec oom h100x1 --workers 0 --cpu-ms 0 --gpu-ms 50 --steps 30 --oom-at 15 &
GPUWHY_SIM_STATE="$T/state-cpu" "$GPUWHY" "${Q[@]}" --sim h100x1 run -o "$T/cpu.gpuwhy" -i 200ms \
	-- bash -c 'for i in $(seq 12); do echo "step $i"; sleep 0.1; done' >"$T/cpu.out" 2>"$T/cpu.err"
wait
for n in starved multi oom cpu; do
	[ -s "$T/$n.gpuwhy" ] || fail "no recording $n: $(cat "$T/$n.err")"
done

# Lines that are data, not prose: the job's own output, commands, paths, GPU names.
DATA='^(training finished|step [0-9]+|.*out of memory.*|/[^ ]*gpuwhy sim train .*|bash -c .*)$'

# run's summary: from its first line to the end of stderr.
for n in starved multi oom cpu; do
	sed -n '/gpuwhy: recorded/,$p' "$T/$n.err" >"$T/$n.summary"
	grep -q "${I18N_MARK}gpuwhy: recorded" "$T/$n.summary" || fail "$n: no marked summary: $(cat "$T/$n.err")"
	i18n_unmarked "$T/$n.summary" "$DATA" || fail "run's summary of $n has unmarked text"
done

# report, text: every finding of every recording, with evidence, advice and the chain.
ids=""
for n in starved multi oom cpu; do
	"$GPUWHY" "${Q[@]}" report "$T/$n.gpuwhy" >"$T/$n.txt"
	i18n_unmarked "$T/$n.txt" "$DATA" || fail "report of $n has unmarked text"
	# Evidence reads "[GPU N ]metric, statistic: value": a statistic is often one word,
	# which the prose test cannot tell from data, so its mark is checked here.
	sed -nE 's/^ {8}◊evidence +//p; s/^ {18}([^ ])/\1/p' "$T/$n.txt" >"$T/$n.ev"
	[ -s "$T/$n.ev" ] || fail "report of $n: no evidence lines"
	grep -vE '^(GPU [0-9]+ )?[^ ,]+, ◊' "$T/$n.ev" &&
		fail "report of $n: evidence statistics without the mark"
	ids="$ids $(grep -Eo '^  ◊[A-Z]+ +[a-z0-9-]+' "$T/$n.txt" | awk '{print $2}')"
done
# (A host loaded by others turns data-starved into host-contention: either has texts.)
for want in "data-starved|host-contention" not-on-gpu oom; do
	printf '%s\n' $ids | grep -qxE "$want" || fail "finding $want not among the recordings' ($ids)"
done

# report, HTML: the text of the page (tags and the style sheet taken away).
"$GPUWHY" "${Q[@]}" report "$T/starved.gpuwhy" --format html -o "$T/r.html" 2>"$T/html.err"
i18n_unmarked "$T/html.err" || fail "html -o message unmarked"
sed -e 's/<style>.*<\/style>//' -e 's/<[^>]*>/\n/g' "$T/r.html" | sed -e 's/&[a-z]*;//g' >"$T/r.html.txt"
i18n_unmarked "$T/r.html.txt" "$DATA" || fail "html report has unmarked text"

# compare: verdict, table, findings gone and new, what changed.
"$GPUWHY" "${Q[@]}" compare "$T/starved.gpuwhy" "$T/oom.gpuwhy" >"$T/cmp.txt" || fail "compare"
grep -q "${I18N_MARK}The candidate is\|${I18N_MARK}No " "$T/cmp.txt" || fail "compare verdict: $(cat "$T/cmp.txt")"
i18n_unmarked "$T/cmp.txt" "$DATA" || fail "compare has unmarked text"

# Chinese: the real catalogue of the build.
unset GPUWHY_LOCALEDIR COLUMNS
out=$(LANG=zh_CN.UTF-8 "$GPUWHY" report "$T/starved.gpuwhy")
assert_contains "$out" "七步排查链路" "report under zh_CN"
assert_contains "$out" "数据" "finding title under zh_CN"
assert_contains "$out" "data-starved" "finding id stays"
# No line of the text report overflows its 100 columns (a Chinese character takes two),
# except an unbreakable command line quoted from the recording.
printf '%s\n' "$out" | grep -v '/' | width 100 || fail "zh_CN report lines overflow"
LANG=zh_CN.UTF-8 "$GPUWHY" report "$T/starved.gpuwhy" --format html -o "$T/zh.html" 2>/dev/null
grep -q '<html lang="zh-CN">' "$T/zh.html" || fail "html lang under zh_CN"
grep -q "Noto Sans CJK SC" "$T/zh.html" || fail "html font stack without a CJK font"
"$GPUWHY" report "$T/starved.gpuwhy" --format html -o "$T/en.html" 2>/dev/null
grep -q '<html lang="en">' "$T/en.html" || fail "html lang in English"

# compare's table stays aligned with CJK labels: the base column ends at one display column.
LANG=zh_CN.UTF-8 "$GPUWHY" compare "$T/starved.gpuwhy" "$T/multi.gpuwhy" >"$T/zcmp.txt"
grep -q "候选版本" "$T/zcmp.txt" || grep -q "没有" "$T/zcmp.txt" || fail "compare verdict under zh_CN: $(cat "$T/zcmp.txt")"
# Each row: two spaces, the label in 22 columns, a space, the base value right-aligned in
# 12: its last character sits at display column 37 whatever the label's script.
grep -E '^  .*(ms \[95|[0-9] +[0-9.]+ +[-+][0-9])' "$T/zcmp.txt" | grep -v -- '->' | column_at 37 ||
	fail "compare table misaligned under zh_CN: $(cat "$T/zcmp.txt")"

# --lang en under a Chinese locale: no CJK anywhere.
for cmd in "report $T/starved.gpuwhy" "compare $T/starved.gpuwhy $T/oom.gpuwhy"; do
	# shellcheck disable=SC2086
	LANG=zh_CN.UTF-8 "$GPUWHY" --lang en $cmd >"$T/en.txt" 2>&1
	LC_ALL=C.UTF-8 grep -q '[一-龥]' "$T/en.txt" && fail "--lang en prints Chinese: $cmd"
done

# Machine output: JSON byte-identical with and without Chinese.
for n in starved oom cpu; do
	"$GPUWHY" report "$T/$n.gpuwhy" --format json >"$T/$n.en.json"
	LANG=zh_CN.UTF-8 "$GPUWHY" report "$T/$n.gpuwhy" --format json >"$T/$n.zh.json"
	cmp -s "$T/$n.en.json" "$T/$n.zh.json" || fail "report json of $n differs under zh_CN"
done
"$GPUWHY" compare "$T/starved.gpuwhy" "$T/oom.gpuwhy" --format json >"$T/c.en.json"
LANG=zh_CN.UTF-8 "$GPUWHY" compare "$T/starved.gpuwhy" "$T/oom.gpuwhy" --format json >"$T/c.zh.json"
cmp -s "$T/c.en.json" "$T/c.zh.json" || fail "compare json differs under zh_CN"
echo "PASS"
