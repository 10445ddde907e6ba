#!/usr/bin/env bash
# The simulated GPU's own words: a scenario's errors (sim check, and the
# simulated library's "gpuwhy-sim:" line when --sim starts it), the state
# directory's errors (sim reset, the library's start) come through gettext
# (the marker language of i18n_lib.bash marks each reason and the words put
# into it), in Chinese under LANG=zh_CN.UTF-8, in English under --lang en and
# LANG=C; positions, JSON paths and key names stay as written. Another program
# that loads the simulated library has not bound gpuwhy's catalogue: English.
. "$(dirname "$0")/lib.bash"
: "${GPUWHY_BUILD:?}" "${GPUWHY_SRC:?}"
. "$GPUWHY_SRC/tests/e2e/i18n_lib.bash"
i18n_sim_test

SCN="$GPUWHY_SRC/sim/scenarios/h100x1.json"
LIB="$(dirname "$GPUWHY")/sim/libnvidia-ml.so.1"

# Bad scenarios, each a shipped one with one fault.
sed 's/"name": "NVIDIA H100 80GB HBM3",/&"bogus": 1,/' "$SCN" >"$T/key.json"
sed 's/"limit_w": 700,/"limit_w": "700",/' "$SCN" >"$T/type.json"
sed 's/"schema": 1,//' "$SCN" >"$T/missing.json"
head -c 200 "$SCN" >"$T/cut.json"
for f in key type missing; do cmp -s "$SCN" "$T/$f.json" && fail "$f.json: the fault was not put in"; done

# run RC WHERE ARGS...: gpuwhy ARGS (WHERE: mark, zh, en, C) exits RC; stderr in $T/e.
run() {
	local want=$1 where=$2 rc
	shift 2
	case $where in
	mark) GPUWHY_LOCALEDIR="$T/mark" timeout 30 "$GPUWHY" --lang qaa "$@" ;;
	zh) LANG=zh_CN.UTF-8 LC_ALL='' LANGUAGE='' timeout 30 "$GPUWHY" "$@" ;;
	en) LANG=zh_CN.UTF-8 LC_ALL='' LANGUAGE='' timeout 30 "$GPUWHY" --lang en "$@" ;;
	C) LANG=C LC_ALL=C LANGUAGE='' timeout 30 "$GPUWHY" "$@" ;;
	esac </dev/null >/dev/null 2>"$T/e"
	rc=$?
	[ "$rc" = "$want" ] || fail "gpuwhy $* ($where): exit $rc, not $want: $(cat "$T/e")"
	if [ "$where" = mark ]; then
		i18n_unmarked "$T/e" >"$T/bad" || fail "gpuwhy $* (marker language): lines outside gettext:
$(cat "$T/bad")"
	fi
}
# has WHAT ERE: the last error holds ERE.
has() { grep -q -- "$2" "$T/e" || fail "$1: no '$2' in: $(cat "$T/e")"; }

# sim check: the validator's reasons, and the words put into them.
run 1 mark sim check "$T/key.json"
has "unknown key, marked" "^gpuwhy: $T/key.json:[0-9]*:[0-9]*: gpus\[0\]\.bogus: ${I18N_MARK}unknown key \"bogus\" (known keys: name, "
run 1 mark sim check "$T/type.json"
has "wrong type, marked" ": gpus\[0\]\.power\.limit_w: ${I18N_MARK}expected a number, got ${I18N_MARK}a string$"
run 1 mark sim check "$T/missing.json"
has "missing key, marked" "^gpuwhy: $T/missing.json:1:1: ${I18N_MARK}(top level): ${I18N_MARK}missing required key \"schema\"$"
run 1 mark sim check "$T/cut.json"
has "invalid JSON, marked" "^gpuwhy: ${I18N_MARK}$T/cut.json:[0-9]*:[0-9]*: invalid JSON: "
run 1 zh sim check "$T/key.json"
has "unknown key in Chinese" ": gpus\[0\]\.bogus: 未知的键 \"bogus\"（已知的键：name, "
run 1 zh sim check "$T/type.json"
has "wrong type in Chinese" ": gpus\[0\]\.power\.limit_w: 应为数字，实际为字符串$"
run 1 zh sim check "$T/missing.json"
has "missing key in Chinese" ":1:1: （顶层）: 缺少必需的键 \"schema\"$"
run 1 zh sim check "$T/cut.json"
has "invalid JSON in Chinese" "^gpuwhy: $T/cut.json:[0-9]*:[0-9]*: JSON 无效："
for where in en C; do
	run 1 $where sim check "$T/key.json"
	has "unknown key ($where)" ": gpus\[0\]\.bogus: unknown key \"bogus\" (known keys: name, "
	run 1 $where sim check "$T/missing.json"
	has "missing key ($where)" ":1:1: (top level): missing required key \"schema\"$"
done

# --sim FILE: the simulated library says why it did not start, then gpuwhy says what failed.
run 3 mark --sim "$T/key.json" query -L
has "gpuwhy-sim line, marked" "^gpuwhy-sim: ${I18N_MARK}*$T/key.json:[0-9]*:[0-9]*: gpus\[0\]\.bogus: ${I18N_MARK}unknown key \"bogus\""
has "gpuwhy's line, marked" "^gpuwhy: $T/key.json: ${I18N_MARK}the simulated GPU did not start"
run 3 zh --sim "$T/type.json" query -L
has "gpuwhy-sim line in Chinese" "^gpuwhy-sim: .*: gpus\[0\]\.power\.limit_w: 应为数字，实际为字符串$"
run 3 en --sim "$T/type.json" query -L
has "gpuwhy-sim line in English" "^gpuwhy-sim: .*: gpus\[0\]\.power\.limit_w: expected a number, got a string$"

# A state directory that is not one: sim reset, and the library's start.
: >"$T/notadir"
export GPUWHY_SIM_STATE="$T/notadir"
run 3 mark --sim h100x1 sim reset
has "sim reset, marked" "^gpuwhy: sim reset: ${I18N_MARK}$T/notadir: not a directory$"
run 3 mark --sim h100x1 query -L
has "state directory, marked" "^gpuwhy-sim: ${I18N_MARK}state directory: ${I18N_MARK}$T/notadir: not a directory$"
run 3 zh --sim h100x1 sim reset
has "sim reset in Chinese" "^gpuwhy: sim reset: $T/notadir：不是目录$"
run 3 zh --sim h100x1 query -L
has "state directory in Chinese" "^gpuwhy-sim: 状态目录：$T/notadir：不是目录$"
run 3 C --sim h100x1 sim reset
has "sim reset in English" "^gpuwhy: sim reset: $T/notadir: not a directory$"
export GPUWHY_SIM_STATE="$T/simstate"

# Another program loading the simulated library, in a Chinese environment: English.
# A sanitizer build's library needs the ASan runtime loaded first (tests/peers/nvtop.sh).
pre=()
if grep -q __asan_init "$LIB" 2>/dev/null; then
	rt=$(clang -print-file-name="libclang_rt.asan-$(uname -m).so" 2>/dev/null)
	[ -f "$rt" ] || fail "the simulated library is an ASan build and clang's ASan runtime is missing"
	pre=(LD_PRELOAD="$rt" ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0)
fi
if command -v python3 >/dev/null; then
	env "${pre[@]}" LANG=zh_CN.UTF-8 LC_ALL=C.UTF-8 LANGUAGE=zh_CN GPUWHY_SIM_SCENARIO="$T/type.json" python3 -c '
import ctypes, locale, sys
locale.setlocale(locale.LC_ALL, "")
sys.exit(ctypes.CDLL(sys.argv[1]).nvmlInit_v2() == 0)' "$LIB" 2>"$T/e" ||
		fail "another program: nvmlInit on a bad scenario did not fail: $(cat "$T/e")"
	has "another program's gpuwhy-sim line" "^gpuwhy-sim: .*: gpus\[0\]\.power\.limit_w: expected a number, got a string$"
fi
exit 0
