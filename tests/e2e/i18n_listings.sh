#!/usr/bin/env bash
# The two reference listings people read, `report --thresholds` and
# `query --help-query`, speak the chosen language: under a marker catalogue
# every line carries the mark (the header's words, each meaning, the query
# listing's "DCGM:" label and its not-read note each their own), and in
# Chinese the names, values, units, aliases and DCGM names stay as typed, the
# thresholds' header lining up in display columns. The same HELP texts are the
# exporter's `# HELP` lines and feed query's CSV and JSON: those machine faces
# are byte-identical under --lang zh_CN and --lang en.
. "$(dirname "$0")/lib.bash"
. "$GPUWHY_SRC/tests/e2e/i18n_lib.bash"
: "${GPUWHY_BUILD:?}"
i18n_marker_catalogue "$T/mark" || fail "marker catalogue"
mark() { GPUWHY_LOCALEDIR="$T/mark" "$GPUWHY" --lang qaa "$@"; }
M="$I18N_MARK"

# --- report --thresholds -------------------------------------------------
"$GPUWHY" --lang en report --thresholds >"$T/th.en" || fail "report --thresholds: exit $?"
mark report --thresholds >"$T/th.m" || fail "report --thresholds under the marker language: exit $?"
n=$(grep -c '^X(' "$GPUWHY_SRC/src/diagnose/thresholds.def")
assert_ge "$n" 40 "thresholds in thresholds.def"
assert_eq "$(wc -l <"$T/th.m")" "$((n + 1))" "lines of report --thresholds"
# The header: five words, each its own message.
assert_eq "$(head -1 "$T/th.m" | grep -o "$M" | wc -l)" 5 "marks on the thresholds' header"
# Every threshold's meaning is translated (an English one would have no mark).
unmarked=$(tail -n +2 "$T/th.m" | grep -v -- "$M") && fail "thresholds without a translated meaning:
$unmarked"
i18n_unmarked "$T/th.m" >"$T/bad" || fail "report --thresholds: lines outside gettext:
$(cat "$T/bad")"

"$GPUWHY" --lang zh_CN report --thresholds >"$T/th.zh" || fail "report --thresholds in Chinese"
LANG=zh_CN.UTF-8 LC_ALL='' LANGUAGE='' "$GPUWHY" report --thresholds >"$T/th.env"
cmp -s "$T/th.zh" "$T/th.env" || fail "LANG=zh_CN.UTF-8 and --lang zh_CN differ"
grep -q '默认值' "$T/th.zh" || fail "no Chinese header: $(head -1 "$T/th.zh")"
python3 - "$T/th.en" "$T/th.zh" <<'PY' || fail "report --thresholds in Chinese: names, values or columns changed"
import sys, unicodedata
def cols(s):
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in s)
en = open(sys.argv[1], encoding="utf-8").read().splitlines()
zh = open(sys.argv[2], encoding="utf-8").read().splitlines()
assert len(en) == len(zh), (len(en), len(zh))
bad = []
for e, z in zip(en[1:], zh[1:]):
    # name, default, value and unit as in English; the meaning in Chinese
    if e.split()[:4] != z.split()[:4] or not any(cols(c) == 2 for c in z):
        bad.append(z)
# the header's cells end where the columns they head end (display columns):
# default and value right-aligned over the numbers, the meaning after the unit
h = zh[0]
ends = [cols(h[: h.index(w) + len(w)]) for w in ("默认值", "数值")]
if ends != [33, 44] or cols(h[: h.index("含义")]) != 55:
    bad.append("header: " + h)
print("\n".join(bad), file=sys.stderr)
sys.exit(1 if bad else 0)
PY

# --- query --help-query --------------------------------------------------
"$GPUWHY" --lang en query --help-query >"$T/q.en" || fail "query --help-query: exit $?"
mark query --help-query >"$T/q.m" || fail "query --help-query under the marker language: exit $?"
assert_ge "$(wc -l <"$T/q.m")" 200 "lines of query --help-query"
# Every line but the blank one after the title holds a translated text.
unmarked=$(grep -v -e "$M" -e '^$' "$T/q.m") && fail "query --help-query: lines outside gettext:
$unmarked"
# The label and the note are messages of their own, not only the line's HELP.
grep -q "DCGM_FI_" "$T/q.m" || fail "no DCGM names in query --help-query"
lab=$(grep "DCGM_FI_" "$T/q.m" | grep -v -- " ${M}DCGM: DCGM_FI_") &&
	fail "DCGM label outside gettext: $(printf '%s\n' "$lab" | head -3)"
grep -q '\[N/A\])' "$T/q.m" || fail "no unread fields in query --help-query"
note=$(grep '\[N/A\])' "$T/q.m" | grep -v -- " ${M}(not read by gpuwhy: \[N/A\])\$") &&
	fail "not-read note outside gettext: $(printf '%s\n' "$note" | head -3)"
i18n_unmarked "$T/q.m" >"$T/bad" || fail "query --help-query: lines outside gettext:
$(cat "$T/bad")"
# The marker language leaves the English text as it was: only the marks differ.
sed "s/$M//g" "$T/q.m" | cmp -s - "$T/q.en" || fail "query --help-query: the marks change the text"

"$GPUWHY" --lang zh_CN query --help-query >"$T/q.zh" || fail "query --help-query in Chinese"
python3 - "$T/q.en" "$T/q.zh" <<'PY' || fail "query --help-query in Chinese: fields, units, aliases or DCGM names changed"
import re, sys, unicodedata
en = open(sys.argv[1], encoding="utf-8").read().splitlines()
zh = open(sys.argv[2], encoding="utf-8").read().splitlines()
assert len(en) == len(zh), (len(en), len(zh))
def typed(line):
    # what people type or match: the field, [unit] and =alias, DCGM's name, [N/A]
    return (line.split()[:1], re.findall(r"\[[^\]]*\]", line), re.findall(r" =\S+", line),
            re.findall(r"DCGM_FI_\w+", line))
bad = [z for e, z in zip(en[2:], zh[2:]) if typed(e) != typed(z)
       or not any(unicodedata.east_asian_width(c) == "W" for c in z)]
if not any(unicodedata.east_asian_width(c) == "W" for c in zh[0]):
    bad.insert(0, zh[0])
print("\n".join(bad[:5]), file=sys.stderr)
sys.exit(1 if bad else 0)
PY

# --- the machine faces of the same texts stay English ---------------------
have_sim || skip "simulated GPU not built"
S=(--sim h100x1)
fields=$(awk 'NR > 2 {print $1}' "$T/q.en" | grep -vx timestamp | paste -sd, -)
for fmt in csv csv,noheader,nounits json; do
	GPUWHY_SIM_TIME=5 "$GPUWHY" --lang en "${S[@]}" query --query-gpu="$fields" --format="$fmt" \
		>"$T/o.en" || fail "query --format=$fmt: exit $?"
	GPUWHY_SIM_TIME=5 "$GPUWHY" --lang zh_CN "${S[@]}" query --query-gpu="$fields" --format="$fmt" \
		>"$T/o.zh" || fail "query --format=$fmt in Chinese: exit $?"
	[ -s "$T/o.en" ] || fail "query --format=$fmt: no output"
	# JSON's document timestamp is the wall clock's: the one thing allowed to move.
	sed -i 's/^{"timestamp":[0-9.]*,/{"timestamp":T,/' "$T/o.en" "$T/o.zh"
	cmp -s "$T/o.en" "$T/o.zh" || fail "query --format=$fmt differs under zh_CN: $(diff "$T/o.en" "$T/o.zh" | head -5)"
done

# The exporter's # HELP and # TYPE lines: dcgm-exporter's English in both languages.
start_exporter() { # LANG LOG -> PORT
	"$GPUWHY" --lang "$1" "${S[@]}" exporter --listen 127.0.0.1:0 2>"$2" &
	PIDS_TO_KILL+=($!)
	PORT=
	for _ in $(seq 100); do
		PORT=$(sed -n 's|.*http://127\.0\.0\.1:\([0-9]*\)/metrics.*|\1|p' "$2")
		[ -n "$PORT" ] && return 0
		sleep 0.1
	done
	fail "exporter --lang $1 did not start: $(cat "$2")"
}
for l in en zh_CN; do
	start_exporter "$l" "$T/exp.$l.log"
	curl -sf "http://127.0.0.1:$PORT/metrics" >"$T/m.$l" || fail "scrape of exporter --lang $l"
	grep '^# ' "$T/m.$l" >"$T/h.$l"
	grep -q '^# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %)\.$' "$T/h.$l" ||
		fail "exporter --lang $l: no dcgm-exporter help line: $(head -3 "$T/h.$l")"
done
grep -q '正在' "$T/exp.zh_CN.log" || fail "the Chinese exporter's log is not Chinese: $(cat "$T/exp.zh_CN.log")"
assert_ge "$(grep -c '^# HELP' "$T/h.en")" 30 "# HELP lines"
cmp -s "$T/h.en" "$T/h.zh_CN" || fail "# HELP/# TYPE differ under zh_CN: $(diff "$T/h.en" "$T/h.zh_CN" | head -5)"
echo "i18n_listings: ok ($n thresholds, $(wc -l <"$T/q.en") query lines)"
