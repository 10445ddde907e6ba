#!/usr/bin/env bash
# A sample of errors, one per face (bad options, missing files, a PID that is not
# there, a command that does not run, no terminal): the why and the hint come in
# the user's language under the marker language of i18n_lib.bash ("gpuwhy:" and
# what the user typed stay), and each has its documented exit code.
. "$(dirname "$0")/lib.bash"
: "${GPUWHY_BUILD:?}" "${GPUWHY_SRC:?}"
. "$GPUWHY_SRC/tests/e2e/i18n_lib.bash"
have_sim || skip "simulated GPU not built"
command -v msgfmt >/dev/null || skip "gettext tools missing"

i18n_marker_catalogue "$T/mark" || fail "marker catalogue"
export GPUWHY_QUEUE=$T/q
# err RC ARGS...: gpuwhy ARGS exits RC with one line, translated why and hint.
err() {
	local want=$1 rc
	shift
	GPUWHY_LOCALEDIR="$T/mark" timeout 30 "$GPUWHY" --lang qaa "$@" </dev/null >/dev/null 2>"$T/e"
	rc=$?
	[ "$rc" = "$want" ] || fail "gpuwhy $*: exit $rc, not $want: $(cat "$T/e")"
	grep -q "^gpuwhy: .*: $I18N_MARK" "$T/e" || fail "gpuwhy $*: why not translated: $(cat "$T/e")"
	if grep -q ' (' "$T/e"; then
		grep -q "$I18N_MARK (${I18N_MARK}" "$T/e" || fail "gpuwhy $*: hint not translated: $(cat "$T/e")"
	fi
	i18n_unmarked "$T/e" >"$T/bad" || fail "gpuwhy $*: lines outside gettext:
$(cat "$T/bad")"
}
S=(--sim h100x1)
err 2 report --format foo x
err 3 report "$T/none.gpuwhy"
err 2 compare "$T/none.gpuwhy"
err 2 "${S[@]}" record --pid 999999 -o "$T/x.gpuwhy"
echo not-a-recording >"$T/text"
err 3 "${S[@]}" record -o "$T/text" -d 1s
err 127 "${S[@]}" run -o "$T/y.gpuwhy" --no-summary -- "$T/no-such-command"
err 2 "${S[@]}" top --sort foo --once
err 2 "${S[@]}" top
err 2 "${S[@]}" query --format=xml --query-gpu=index
err 2 "${S[@]}" dmon -o X
err 2 "${S[@]}" sweep
err 2 queue ls --state foo
mkdir "$T/empty"
err 3 trace "$T/empty"
# A trace reader's own errors (kept in English for JSON, said where they are printed).
printf '{"traceEvents":[{"ph":"X"' >"$T/cut.json"
err 3 trace "$T/cut.json"
printf '{"traceEvents":[]}' >"$T/none.json"
err 3 trace "$T/none.json"
# No driver: the phrase standing where an input would ("no NVIDIA driver") is said
# in the user's language too (on a machine with a driver there is nothing to check).
if ! ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml\.so\.1'; then
	GPUWHY_LOCALEDIR="$T/mark" env -u GPUWHY_NVML -u GPUWHY_SIM_SCENARIO "$GPUWHY" --lang qaa \
		status </dev/null >/dev/null 2>"$T/e"
	assert_eq "$?" 3 "status without a driver: exit status"
	grep -q "^gpuwhy: ${I18N_MARK}no NVIDIA driver: ${I18N_MARK}.*(${I18N_MARK}" "$T/e" ||
		fail "no driver: what, why and hint not all translated: $(cat "$T/e")"
fi
exit 0
