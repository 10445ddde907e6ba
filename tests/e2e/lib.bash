# Shared helpers for end-to-end tests (sourced, not run: it has no test of its own).
set -u
: "${GPUWHY:?GPUWHY must name the gpuwhy binary}"
T=$(mktemp -d /tmp/gpuwhy-e2e.XXXXXX)
PIDS_TO_KILL=()
cleanup() {
	for p in "${PIDS_TO_KILL[@]}"; do kill -9 "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
# The simulator's state must not leak between tests.
export GPUWHY_SIM_STATE="$T/simstate"
unset GPUWHY_NVML GPUWHY_SIM_SCENARIO GPUWHY_GPUS
# python3 through a version manager's shim (pyenv) starts several shells on every call,
# seconds on a busy machine; the interpreter is looked up once and put first on PATH, so
# the tests' polling loops stay cheap. (A link on PATH, not a shell function: `python3
# server.py &` must leave the interpreter's own PID in $!, for the cleanup to kill.)
if _gw_py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) && [ -x "$_gw_py" ]; then
	mkdir -p "$T/.bin" && ln -sf "$_gw_py" "$T/.bin/python3" && PATH="$T/.bin:$PATH"
fi
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
assert_eq() { [ "$1" = "$2" ] || fail "${3:-value}: expected '$2', got '$1'"; }
# assert_ge A B [what]: numeric A >= B
assert_ge() { awk -v a="$1" -v b="$2" 'BEGIN{exit !(a+0 >= b+0)}' || fail "${3:-value}: expected >= $2, got '$1'"; }
assert_le() { awk -v a="$1" -v b="$2" 'BEGIN{exit !(a+0 <= b+0)}' || fail "${3:-value}: expected <= $2, got '$1'"; }
assert_contains() { printf '%s' "$1" | grep -q -- "$2" || fail "${3:-output} does not contain '$2': $1"; }
assert_not_contains() { ! printf '%s' "$1" | grep -q -- "$2" || fail "${3:-output} contains '$2': $1"; }
have_sim() { "$GPUWHY" sim list 2>/dev/null | grep -q h100x1 && [ -e "$(dirname "$GPUWHY")/sim/libnvidia-ml.so.1" ]; }
# wait_line FILE TEXT PID: until FILE contains TEXT (at most 60 s; PID must stay alive).
wait_line() {
	for _ in $(seq 600); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || fail "process $3 exited before '$2': $(cat "$1")"
		sleep 0.1
	done
	fail "no '$2' in $1"
}
