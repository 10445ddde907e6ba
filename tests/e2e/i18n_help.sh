#!/usr/bin/env bash
# The command line speaks the chosen language: every --help (each command and
# subcommand, gpuwhy itself), the option parser's errors, status and topo go
# through gettext (run under a marker catalogue, every line of prose carries the
# mark); --lang en under a Chinese locale prints no CJK; machine output is
# byte-identical in both languages; the Chinese help stays a 80-column,
# two-column table measured in display width; and an installed copy
# (make install PREFIX=...) finds its catalogue and its simulator.
. "$(dirname "$0")/lib.bash"
. "$GPUWHY_SRC/tests/e2e/i18n_lib.bash"
: "${GPUWHY_BUILD:?}"
# The help's paragraphs span lines: this catalogue marks every line of every
# message (i18n_lib's marks the first), so that each printed line can be checked.
i18n_marker_catalogue "$T/mark" || fail "marker catalogue"
sed -e 's/charset=CHARSET/charset=UTF-8/' \
	-e 's/^"Plural-Forms: .*"$/"Plural-Forms: nplurals=2; plural=(n != 1);\\n"/' \
	"$GPUWHY_BUILD/gpuwhy.pot" | msgen - 2>/dev/null |
	msgfilter --keep-header -o "$T/every.po" sed -e "s/^/$I18N_MARK/" 2>/dev/null &&
	msgfmt -o "$T/mark/qaa/LC_MESSAGES/gpuwhy.mo" "$T/every.po" || fail "every-line marker catalogue"
mark() { GPUWHY_LOCALEDIR="$T/mark" "$GPUWHY" --lang qaa "$@"; }
zh() { LANG=zh_CN.UTF-8 LC_ALL='' LANGUAGE='' "$GPUWHY" "$@"; }

# Every command from gpuwhy --help, and the subcommands of queue and sim.
cmds=$("$GPUWHY" --help | awk '/^Commands:/{on=1; next} on && /^  [a-z]/{print $1} on && /^$/{on=0}')
[ "$(printf '%s\n' "$cmds" | wc -l)" -ge 19 ] || fail "too few commands: $cmds"
subs() { "$GPUWHY" "$1" --help | awk -v c="$1" '/^  [a-z]+ /{print c " " $1}' | sort -u; }
all=$(printf '%s\n' "$cmds"; subs queue; subs sim)
printf '%s\n' "$all" | grep -qx "queue add" || fail "queue's subcommands not found"
printf '%s\n' "$all" | grep -qx "sim train" || fail "sim's subcommands not found"

# Usage lines are syntax: command names and placeholders, never translated.
usage_re='^ +gpuwhy '
# A message wrapped to 80 columns goes on in lines indented under its text, or,
# in a paragraph, in a line as indented as the one before whose first word that
# line could not hold (the marker makes a line one column wider, so one the
# width held in English runs on into the next); and the exit codes are the last
# paragraph: such lines are joined to the line they continue before the check.
joined() { LC_ALL=C.UTF-8 awk 'NR == FNR { if ($0 == "") last = FNR; next }
	FNR > last + 1 && last { printf " %s", $0; next }
	/^          / && FNR > 1 { sub(/^ +/, " "); printf "%s", $0; prev = ""; next }
	{ lead = match($0, /[^ ]/) - 1; first = $0; sub(/^ +/, "", first); sub(/ .*/, "", first) }
	prev != "" && $0 != "" && lead == plead && length(prev) + 1 + length(first) > 80 {
		prev = $0; sub(/^ +/, " "); printf "%s", $0; next }
	FNR > 1 { print "" } { printf "%s", $0; prev = $0; plead = lead } END { print "" }' "$1" "$1"; }
# top's key table comes from the top view's own key list (src/top), which its
# own tests check in both languages; everything else on that page is checked.
top_keys_re='^  [^ -][^ ]*( [^ ]+)?   +[a-zA-Z]'
n=0
while read -r c; do
	# shellcheck disable=SC2086
	mark help $c >"$T/raw" 2>&1 || fail "gpuwhy help $c: exit $? under the marker language"
	joined "$T/raw" >"$T/h"
	ign="$usage_re"
	[ "$c" = top ] && ign="$usage_re|$top_keys_re"
	i18n_unmarked "$T/h" "$ign" >"$T/bad" || fail "gpuwhy help $c: lines outside gettext:
$(cat "$T/bad")"
	# shellcheck disable=SC2086
	zh help $c >"$T/z" 2>&1 || fail "gpuwhy help $c: exit $? in Chinese"
	grep -q '^用法：' "$T/z" || fail "gpuwhy help $c: no Chinese usage line"
	n=$((n + 1))
done <<<"$all"
[ "$n" -ge 30 ] || fail "only $n help pages"
mark --help >"$T/raw" && joined "$T/raw" >"$T/h" && i18n_unmarked "$T/h" "$usage_re" >"$T/bad" ||
	fail "gpuwhy --help: $(cat "$T/bad")"

# Display width: no line of the Chinese help is wider than 80 columns, and an
# option's text starts at column 25 wherever the option fits before it.
for c in "" record "queue add" sweep exporter; do
	# shellcheck disable=SC2086
	zh $c --help >"$T/z"
	# (usage lines are the command's syntax, as long as in English)
	# (the usage block runs from the first line to the first empty one)
	w=$(awk 'u && /^$/ {u = 0} !u' u=1 "$T/z" | LC_ALL=C.UTF-8 wc -L)
	[ "$w" -le 80 ] || fail "gpuwhy $c --help in Chinese is $w columns wide"
	python3 - "$T/z" "$c" <<'PY' || fail "gpuwhy $c --help: the option column does not line up"
import re, sys, unicodedata
def cols(s):
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in s)
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
# the usage block (syntax, first line to the first empty one) has its own indent
lines = lines[lines.index("") if "" in lines else 0:]
opts = [l for l in lines if re.match(r"^  (-\w, )?(--\S+( \S+)?|-\w( \S+)?)  +\S", l)]
bad = [l for l in opts if cols(re.match(r"^(.*?\S)  +", l[2:]).group(0)) + 2 != 24]
# continuation lines of an option's text hang at the same column
bad += [l for l in lines if re.match(r"^ {20,}\S", l) and not re.match(r"^ {24}\S", l)
]
cjk = any(unicodedata.east_asian_width(ch) == "W" for ch in "".join(lines))
if bad or not cjk or len(opts) < 2:
    print("\n".join(bad) or "no Chinese text", file=sys.stderr)
    sys.exit(1)
PY
done

# The option parser's errors and did-you-mean lines.
for args in "status --formt json" "status --format yaml" "record --interval 5x -o x" \
	"recrod" "status -x" "record --interval" "record --pid abc -o x" "status --format=json extra" \
	"sim show --count 0" "topo --nvidia-smi=1"; do
	# shellcheck disable=SC2086
	mark $args >/dev/null 2>"$T/e" </dev/null
	[ -s "$T/e" ] || fail "gpuwhy $args: no error"
	grep -q "$I18N_MARK" "$T/e" || fail "gpuwhy $args: error outside gettext: $(cat "$T/e")"
done
zh status --formt json 2>"$T/e"
grep -q '未知选项' "$T/e" && grep -q -- '--format' "$T/e" || fail "Chinese option error: $(cat "$T/e")"

# --lang en under a Chinese locale: no CJK anywhere.
cjk() { LC_ALL=C.UTF-8 grep -q -P '[\x{3000}-\x{9fff}\x{ff00}-\x{ffef}]' "$1"; }
for c in "" status record "queue add"; do
	# shellcheck disable=SC2086
	zh --lang en $c --help >"$T/en" 2>&1
	cjk "$T/en" && fail "gpuwhy --lang en $c --help under zh_CN prints Chinese"
done
zh --lang en status --formt json 2>"$T/en"
cjk "$T/en" && fail "--lang en: Chinese error"

have_sim || skip "simulated GPU not built"
S=(--sim h100x1)
# status and topo: marked in the marker language, Chinese in zh_CN, English with --lang en.
# Data on these screens: GPU names, bus ids, NVML's own words (Default, Disabled,
# clock reasons), the version line.
data_re='NVIDIA|^GPU [0-9]|^GPU[0-9]|^ +GPU[0-9]'
for f in status:利用率 topo:亲和性; do
	word=${f#*:} f=${f%:*}
	mark "${S[@]}" $f >"$T/m" || fail "$f under the marker language: exit $?"
	i18n_unmarked "$T/m" "$data_re" >"$T/bad" || fail "$f: lines outside gettext:
$(cat "$T/bad")"
	zh "${S[@]}" $f >"$T/z" || fail "$f in Chinese"
	grep -q "$word" "$T/z" || fail "$f in Chinese lacks $word: $(head -5 "$T/z")"
	zh --lang en "${S[@]}" $f >"$T/en"
	cjk "$T/en" && fail "--lang en $f under zh_CN prints Chinese"
done
# The process table keeps its columns in Chinese (n/a is 无数据, two columns a
# character): each row's GPU MEM ends at the same display column as in English.
GPUWHY_SIM_TIME=5 "$GPUWHY" --sim l4x2-foreign status >"$T/pe"
GPUWHY_SIM_TIME=5 zh --sim l4x2-foreign status >"$T/pz"
grep -q '无数据 ' "$T/pz" || fail "no n/a user in the Chinese process table: $(tail -3 "$T/pz")"
python3 - "$T/pe" "$T/pz" <<'PY' || fail "the Chinese process table does not line up: $(tail -3 "$T/pz")"
import re, sys, unicodedata
def cols(s):
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in s)
def ends(path):
    rows = [l for l in open(path, encoding="utf-8").read().splitlines() if re.search(r" MiB +\S+  ", l)]
    return [cols(l[: l.index(" MiB") + 4]) for l in rows]
e, z = ends(sys.argv[1]), ends(sys.argv[2])
sys.exit(0 if e and e == z else 1)
PY

# Machine output does not change with the language.
for args in "status --format json" "topo --format json" "topo -m" "status --nvidia-smi" \
	"query --query-gpu=index,name,utilization.gpu,memory.used --format=csv"; do
	# The timestamp of nvidia-smi's table is the only thing allowed to move.
	GPUWHY_SIM_TIME=5 "$GPUWHY" "${S[@]}" $args | grep -v ':[0-9][0-9]:[0-9][0-9] ' >"$T/c" || fail "$args"
	GPUWHY_SIM_TIME=5 zh "${S[@]}" $args | grep -v ':[0-9][0-9]:[0-9][0-9] ' >"$T/z"
	cmp -s "$T/c" "$T/z" || fail "$args differs under zh_CN: $(diff "$T/c" "$T/z" | head -5)"
done

# make install PREFIX=...: the installed binary finds its catalogue and simulator.
command -v make >/dev/null || skip "no make"
P="$T/prefix"
make -C "$GPUWHY_SRC" --no-print-directory install BUILD="$GPUWHY_BUILD" PREFIX="$P" >"$T/inst" 2>&1 ||
	fail "make install PREFIX=$P: $(tail -5 "$T/inst")"
[ -x "$P/bin/gpuwhy" ] || fail "no $P/bin/gpuwhy"
[ -s "$P/share/locale/zh_CN/LC_MESSAGES/gpuwhy.mo" ] || fail "catalogue not installed"
(cd / && LANG=zh_CN.UTF-8 "$P/bin/gpuwhy" --sim h100x1 status) >"$T/i" 2>&1 ||
	fail "installed gpuwhy --sim h100x1 status: $(cat "$T/i")"
grep -q '利用率' "$T/i" || fail "installed gpuwhy does not speak Chinese: $(head -3 "$T/i")"
LANG=zh_CN.UTF-8 "$P/bin/gpuwhy" --help | grep -q '^用法：' || fail "installed --help not in Chinese"
echo "i18n_help: ok ($n help pages)"
