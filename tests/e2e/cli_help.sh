#!/usr/bin/env bash
# The command line as a whole: `gpuwhy help CMD` is `gpuwhy CMD --help` for every
# command, unknown commands, subcommands and options get a "did you mean", and
# --format json gives JSON wherever the output is data.
. "$(dirname "$0")/lib.bash"

# expect CODE STDERR-LINE ARGS...: the exit code and exactly this one line on stderr.
expect() {
	local code=$1 want=$2
	shift 2
	"$GPUWHY" "$@" >"$T/out" 2>"$T/err" </dev/null
	local rc=$?
	[ "$rc" = "$code" ] || fail "gpuwhy $*: exit $rc, expected $code ($(cat "$T/err"))"
	[ "$(cat "$T/err")" = "$want" ] || fail "gpuwhy $*: stderr '$(cat "$T/err")', expected '$want'"
}

# help CMD and CMD --help print the same text, exit 0, and state the exit codes.
cmds=$("$GPUWHY" --help | awk '/^Commands:/{on=1; next} on && /^  [a-z]/{print $1} on && /^$/{on=0}')
[ "$(printf '%s\n' "$cmds" | wc -l)" -ge 19 ] || fail "gpuwhy --help lists too few commands: $cmds"
for c in $cmds; do
	"$GPUWHY" help "$c" >"$T/a" 2>&1 || fail "gpuwhy help $c: exit $?"
	"$GPUWHY" "$c" --help >"$T/b" 2>&1 || fail "gpuwhy $c --help: exit $?"
	cmp -s "$T/a" "$T/b" || fail "gpuwhy help $c differs from gpuwhy $c --help"
	grep -q "^usage: gpuwhy .*$c" "$T/a" || fail "gpuwhy help $c: no usage line"
	grep -q "Exit codes: 0 \|^Exit codes: " "$T/a" || fail "gpuwhy help $c: no exit codes"
done
# No --help breaks a sentence oddly: a row of one or two words that the next row goes on
# from (a line too long for the width, broken, its last word left alone), in English and
# in Chinese, for every command and subcommand.
mkdir -p "$T/helps"
"$GPUWHY" --help >"$T/helps/gpuwhy.txt"
for c in $cmds; do "$GPUWHY" "$c" --help >"$T/helps/$c.txt"; done
for s in add ls show log wait cancel retry clean pause resume drain gpus config worker stop; do
	"$GPUWHY" queue "$s" --help >"$T/helps/queue_$s.txt" || fail "gpuwhy queue $s --help: exit $?"
done
for s in list check show reset train hog serve; do
	"$GPUWHY" sim "$s" --help >"$T/helps/sim_$s.txt" || fail "gpuwhy sim $s --help: exit $?"
done
if [ -s "${GPUWHY_BUILD:-}/locale/zh_CN/LC_MESSAGES/gpuwhy.mo" ]; then
	for c in $cmds; do
		LANG=zh_CN.UTF-8 LC_ALL='' LANGUAGE='' "$GPUWHY" "$c" --help >"$T/helps/zh_$c.txt"
	done
fi
python3 "$(dirname "$0")/help_wrap_check.py" "$T"/helps/*.txt || fail "--help rows broken oddly (above)"
"$GPUWHY" help queue add >"$T/a" && "$GPUWHY" queue add --help >"$T/b" && cmp -s "$T/a" "$T/b" ||
	fail "gpuwhy help queue add differs from gpuwhy queue add --help"
grep -q -- "--retry-delay D" "$T/a" || fail "queue add --help lacks --retry-delay"
"$GPUWHY" help >"$T/a" || fail "gpuwhy help: exit $?"
grep -q "^  record " "$T/a" || fail "gpuwhy help does not list the commands"

# Did you mean: commands, subcommands, options; nothing close: the pointer to --help.
expect 2 "gpuwhy: unknown command 'recrod' (did you mean 'record'?)" recrod
expect 2 "gpuwhy: unknown command 'recrod' (did you mean 'record'?)" help recrod
expect 2 "gpuwhy: unknown command 'xyzzy' (see gpuwhy --help)" xyzzy
expect 2 "gpuwhy: --interwal: unknown option (did you mean --interval?)" record --interwal 1s -o "$T/x.gpuwhy"
expect 2 "gpuwhy: --formt: unknown option (did you mean --format?)" status --formt json
expect 2 "gpuwhy: --verbsoe: unknown option (did you mean --verbose?)" --verbsoe status
expect 2 "gpuwhy: --zzzz: unknown option (see gpuwhy report --help)" report --zzzz
expect 2 "gpuwhy: lss: unknown queue subcommand (did you mean 'gpuwhy queue ls'?)" queue --queue "$T/q" lss
expect 2 "gpuwhy: --mem: needs a value (--mem SIZE)" queue --queue "$T/q" add --mem
expect 2 "gpuwhy: --format: unknown format 'yaml' (use text or json)" status --format yaml
# Spellings getopt took keep working: --opt=value, --opt value, unique prefixes.
"$GPUWHY" queue --queue "$T/q" ls --format=json >/dev/null || fail "--format=json"
"$GPUWHY" queue --queue "$T/q" ls --form json >/dev/null || fail "a unique prefix of --format"

have_sim || skip "simulated GPU not built"
json() { python3 -c 'import json,sys; json.load(sys.stdin)' || fail "$1: not JSON"; }
jsonl() { python3 -c 'import json,sys; [json.loads(l) for l in sys.stdin if l.strip()]' || fail "$1: not JSON Lines"; }
S=(--sim h100x1)
"$GPUWHY" "${S[@]}" status --format json | json "status --format json"
"$GPUWHY" "${S[@]}" topo --format json | json "topo --format json"
"$GPUWHY" "${S[@]}" query --query-gpu=index,utilization.gpu --format=json | json "query --format=json"
"$GPUWHY" queue --queue "$T/q" ls --format json | json "queue ls --format json"
"$GPUWHY" queue --queue "$T/q" ls --json | json "queue ls --json"
"$GPUWHY" queue --queue "$T/q" gpus --format json | json "queue gpus --format json"
"$GPUWHY" "${S[@]}" record -q -o "$T/r.gpuwhy" -i 100ms -d 1s || fail "record"
"$GPUWHY" report "$T/r.gpuwhy" --format json | json "report --format json"
"$GPUWHY" compare "$T/r.gpuwhy" "$T/r.gpuwhy" --format json | json "compare --format json"
"$GPUWHY" export "$T/r.gpuwhy" --table meta --format json | jsonl "export --format json"
# doctor exits 1 when a check fails on this machine: the output is JSON either way.
"$GPUWHY" "${S[@]}" doctor --format json 2>/dev/null | json "doctor --format json"
"$GPUWHY" "${S[@]}" doctor --json 2>/dev/null | json "doctor --json"
echo "cli_help: ok"
