#!/usr/bin/env bash
# gpuwhy sweep: bad input gets one line `gpuwhy: <what>: <why> (<hint>)` and
# exit 2 before anything runs (no directory, no recording); placeholders
# with spaces and shell characters reach the command as they are.
source "$(dirname "$0")/lib.bash"
G=$GPUWHY
D=$T/never
M=$T/marker
# every case: a command that would leave a marker if it ran
bad() { # bad WHAT-EXPECTED ARGS...
	local want=$1
	shift
	"$G" sweep "$@" >"$T/out" 2>"$T/err"
	local rc=$?
	assert_eq "$rc" 2 "exit status of: sweep $*"
	assert_eq "$(wc -l <"$T/err" | tr -d ' ')" 1 "stderr lines of: sweep $* ($(cat "$T/err"))"
	grep -q "^gpuwhy: .*$want" "$T/err" || fail "message of sweep $*: $(cat "$T/err") (want $want)"
	[ -e "$D" ] && fail "sweep $* created its directory"
	[ -e "$M" ] && fail "sweep $* ran the command"
	[ -s "$T/out" ] && fail "sweep $* wrote to stdout"
	return 0
}
RUN=(-- sh -c 'touch "$0"' "$M")
bad "unknown placeholder {nope}" -o "$D" --vary w=1,2 -- sh -c 'touch "$0" {w} {nope}' "$M"
bad "empty list of values" -o "$D" --vary w= "${RUN[@]}"
bad "empty value" -o "$D" --vary w=1,,2 "${RUN[@]}"
bad "more than 3 values (--max-values N" -o "$D" --max-values 3 --vary w=1,2,3,4 "${RUN[@]}"
bad "more than 3 values" -o "$D" --max-values 3 --vary w=1..10 "${RUN[@]}"
bad "not a range of whole numbers" -o "$D" --search batch=pow2:a..b "${RUN[@]}"
bad "not a range of whole numbers" -o "$D" --search batch=64..8 "${RUN[@]}"
bad "not a range of whole numbers" -o "$D" --vary w=1..x "${RUN[@]}"
bad "variable 'w' is used nowhere" -o "$D" --vary w=1,2 "${RUN[@]}"
bad "no output directory" --vary w=1,2 -- sh -c 'touch "$0" {w}' "$M"
bad "no command given" -o "$D" --vary w=1,2
bad "nothing to sweep" -o "$D" "${RUN[@]}"
bad "given twice" -o "$D" --vary w=1 --vary w=2 -- sh -c 'touch "$0" {w}' "$M"
bad "more than 5" -o "$D" --max-runs 5 --vary w=1,2,3 --repeat 3 -- sh -c 'touch "$0" {w}' "$M"
bad "cannot be used with --duration" -o "$D" --steps 5 --duration 10s --vary w=1 -- sh -c 'touch "$0" {w}' "$M"
bad "--repeat" -o "$D" --repeat 0 --vary w=1 -- sh -c 'touch "$0" {w}' "$M"
bad "--knee" -o "$D" --knee 150% --vary w=1 -- sh -c 'touch "$0" {w}' "$M"
bad "no such variable" -o "$D" --batch-var bs --vary w=1 -- sh -c 'touch "$0" {w}' "$M"
# a step regex that does not compile: refused as `run` refuses it, before anything is
# created (it used to fail every run with "cannot open recording")
bad "--step-regex: .* (a POSIX extended regular expression)" -o "$D" --step-regex '(' --vary w=1,2 -- sh -c 'touch "$0" {w}' "$M"
bad "--step-regex: " -o "$D" --step-regex '(' --dry-run --vary w=1,2 -- sh -c 'touch "$0" {w}' "$M"
bad "--step-regex: " -o "$D" --step-regex 'a[' --queue-dir "$T/q" --vary w=1,2 -- sh -c 'touch "$0" {w}' "$M"
[ -e "$T/q" ] && fail "a sweep with a bad --step-regex created its queue"
"$G" run -o "$T/bad-re.gpuwhy" --step-regex '(' -- touch "$M" 2>"$T/err"
assert_eq "$?" 2 "run with a bad --step-regex"
assert_eq "$(wc -l <"$T/err" | tr -d ' ')" 1 "run's error lines"
grep -q "^gpuwhy: --step-regex: .* (a POSIX extended regular expression)" "$T/err" || fail "run's message: $(cat "$T/err")"
[ -e "$T/bad-re.gpuwhy" ] && fail "run with a bad --step-regex created its recording"
[ -e "$M" ] && fail "run with a bad --step-regex ran the command"
bad "no sweep here" --resume "$T/nothing"
mkdir -p "$T/held" && echo '{"args": [], "runs": []}' >"$T/held/sweep.json"
D=$T/held
"$G" sweep -o "$D" --vary w=1 -- sh -c 'touch "$0" {w}' "$M" 2>"$T/err"
assert_eq "$?" 2 "a directory holding a sweep"
grep -q "^gpuwhy: $D: holds a sweep already (gpuwhy sweep --resume DIR" "$T/err" || fail "$(cat "$T/err")"
[ -e "$M" ] && fail "ran into a directory holding a sweep"

# ---- values with spaces and shell characters ----
Q=$T/quote
"$G" sweep -o "$Q" --vary 'tag=a b,$(touch pwned),x;y '"'"'z' --env 'TAG=<{tag}>' --dry-run -- \
	sh -c 'printf "%s|%s|%s\n" {tag} "$1" "$TAG" >>"$0"' "$T/args" {tag} >"$T/plan"
assert_eq "$?" 0 "dry run"
[ -e "$Q" ] && fail "--dry-run created the directory"
[ -e "$T/args" ] && fail "--dry-run ran the command"
assert_eq "$(grep -c '\-r1.gpuwhy' "$T/plan")" 3 "runs in the plan"
grep -qF "'TAG=<a b>' sh -c " "$T/plan" || fail "plan shows env and argv quoted: $(cat "$T/plan")"
(cd "$T" && "$G" sweep -o "$Q" --vary 'tag=a b,$(touch pwned),x;y '"'"'z' --env 'TAG=<{tag}>' -- \
	sh -c 'printf "%s|%s|%s\n" {tag} "$1" "$TAG" >>"$0"' "$T/args" {tag} >/dev/null 2>"$T/qerr")
assert_eq "$?" 0 "quoting sweep: $(cat "$T/qerr")"
[ -e "$T/pwned" ] && fail "a value ran as code"
printf '%s\n' 'a b|a b|<a b>' '$(touch pwned)|$(touch pwned)|<$(touch pwned)>' "x;y 'z|x;y 'z|<x;y 'z>" >"$T/want"
cmp -s "$T/args" "$T/want" || fail "values as the command saw them: $(cat "$T/args")"
ls "$Q" | grep -q '[ ;$()]' && fail "unsafe characters in file names: $(ls "$Q")"
assert_eq "$(ls "$Q"/*.gpuwhy | wc -l | tr -d ' ')" 3 "recordings"
echo ok
