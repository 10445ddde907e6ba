#!/usr/bin/env bash
# gpuwhy doctor on a machine without an NVIDIA driver: it runs every check to
# the end, explains the missing driver with a fix, and exits 1 (a check failed).
set -u
: "${GPUWHY:?}"
if [ -e /proc/driver/nvidia/version ] || { command -v ldconfig >/dev/null &&
	ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml\.so\.1'; }; then
	echo "an NVIDIA driver is installed here: this test is for machines without one"
	exit 77
fi
unset GPUWHY_NVML GPUWHY_SIM_SCENARIO GPUWHY_GPUS
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

timeout 120 "$GPUWHY" doctor >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/out"
[ "$rc" -ne 124 ] || fail "doctor hung (killed after 120 s)"
[ "$rc" -eq 1 ] || fail "exit status $rc, want 1 (driver.nvml fails)"
[ ! -s "$tmp/err" ] || { cat "$tmp/err"; fail "unexpected stderr"; }
grep -q '^FAIL  driver\.nvml  .*libnvidia-ml\.so\.1 not found.*  fix: ' "$tmp/out" ||
	fail "driver.nvml does not explain the missing library with a fix"
grep -q '^SKIP  driver\.cuda  .*needs a working NVML' "$tmp/out" || fail "driver.cuda"
grep -q '^SKIP  gpus\.inventory ' "$tmp/out" || fail "gpus.inventory"
grep -Eq '^[0-9]+ checks: [1-9][0-9]* FAIL' "$tmp/out" || fail "summary line"

# every check of --list printed exactly once, in order
"$GPUWHY" doctor --list | awk '{print $1}' >"$tmp/list"
[ "$(wc -l <"$tmp/list")" -ge 39 ] || fail "--list has $(wc -l <"$tmp/list") checks"
grep -E '^(PASS|WARN|FAIL|SKIP)  ' "$tmp/out" | awk '{print $2}' >"$tmp/printed"
diff "$tmp/list" "$tmp/printed" || fail "printed checks differ from --list"

# JSON: an array of {check, status, found, fix}, same statuses as the text
timeout 120 "$GPUWHY" doctor --json >"$tmp/json"
[ $? -eq 1 ] || fail "--json exit status"
if command -v jq >/dev/null; then
	[ "$(jq length "$tmp/json")" -eq "$(wc -l <"$tmp/list")" ] || fail "JSON length"
	[ "$(jq -r '.[0].check + " " + .[0].status' "$tmp/json")" = "driver.nvml FAIL" ] ||
		fail "JSON first entry"
	[ "$(jq -r '[.[] | select(.status == "PASS" and .fix != null)] | length' "$tmp/json")" = 0 ] ||
		fail "a PASS with a fix"
	[ "$(jq -r '[.[] | select(.status == "FAIL" and .fix == null)] | length' "$tmp/json")" = 0 ] ||
		fail "a FAIL without a fix"
fi

# usage errors: exit 2 with one line naming the input
for args in "--port 0" "--port 70000" "--port 80,x" "--need-mem lots" "--need-mem 0" \
	"--bogus" "extra-argument" "--python="; do
	# shellcheck disable=SC2086
	"$GPUWHY" doctor $args >/dev/null 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq 2 ] || fail "doctor $args: exit $rc, want 2"
	grep -q '^gpuwhy: \|^usage:' "$tmp/err" || fail "doctor $args: no message"
done
"$GPUWHY" doctor --help | grep -q -- '--need-mem SIZE' || fail "--help"
echo ok
