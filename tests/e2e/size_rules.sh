#!/usr/bin/env bash
# The size rules hold over the sources: no file over 1,000 lines (tables and the ABI header
# aside), no function over 120 lines. The checker is tested first on files of its own.
set -uo pipefail
: "${GPUWHY_SRC:?GPUWHY_SRC must name the source tree}"
check="$GPUWHY_SRC/scripts/check-size"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# fn NAME BODY_LINES: a function in the tree's style with that many lines inside its braces
fn() {
	printf 'static int %s(int a,\n              int b)\n{\n' "$1"
	for ((i = 0; i < $2; i++)); do printf '\ta += b; /* %d */\n' "$i"; done
	printf '\treturn a;\n}\n\n'
}
{ fn short 10; printf 'static const int table[] = {\n'; for ((i = 0; i < 200; i++)); do echo "    $i,"; done
  printf '};\n\n'; fn edge 117; } >"$tmp/ok.c"
"$check" "$tmp/ok.c" >"$tmp/out" 2>&1 || fail "a file within the rules fails: $(cat "$tmp/out")"
{ fn short 10; fn too_long 130; } >"$tmp/long.c"
"$check" "$tmp/long.c" >"$tmp/out" 2>&1; rc=$?
[ "$rc" -eq 1 ] || fail "a 133-line function passes (exit $rc): $(cat "$tmp/out")"
grep -qE "long.c:[0-9]+: function too_long is 133 lines \(at most 120\)" "$tmp/out" ||
	fail "the long function is not named: $(cat "$tmp/out")"
grep -q short "$tmp/out" && fail "a short function is named: $(cat "$tmp/out")"
for ((k = 0; k < 90; k++)); do fn "f$k" 10; done >"$tmp/big.c"
"$check" "$tmp/big.c" >"$tmp/out" 2>&1 && fail "a $(wc -l <"$tmp/big.c")-line file passes"
grep -qE "big.c:1: [0-9]+ lines \(at most 1000" "$tmp/out" || fail "the big file is not named: $(cat "$tmp/out")"
cp "$tmp/big.c" "$tmp/big.def"
"$check" "$tmp/big.def" >"$tmp/out" 2>&1 || fail "a long table (.def) fails: $(cat "$tmp/out")"

# --- the tree itself ---------------------------------------------------------------------------
"$check" >"$tmp/out" 2>&1 || fail "sources over the size rules:
$(cat "$tmp/out")"
echo "size rules: ok"
