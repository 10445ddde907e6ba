#!/usr/bin/env bash
# The files of the running gate call down their seams (src/gate/seams.txt),
# never up, and no two call each other: scripts/check-calls over their
# objects. The checker itself is tested first on objects of its own.
set -uo pipefail
: "${GPUWHY_SRC:?GPUWHY_SRC must name the source tree}" "${GPUWHY_BUILD:?}"
for c in python3 nm "${CC:-cc}"; do
	command -v "$c" >/dev/null || { echo "SKIP: no $c" >&2; exit 77; }
done
check="$GPUWHY_SRC/scripts/check-calls"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# --- the checker on objects of its own: bot below top, odd in no seam
printf 'bot bot.h bot.c\ntop top.h top.c\n' >"$tmp/seams.txt"
obj() { printf '%s\n' "$2" >"$tmp/$1.c" && "${CC:-cc}" -c -o "$tmp/$1.c.o" "$tmp/$1.c" || fail "cc $1"; }
obj bot 'int bot(void) { return 1; }'
obj top 'int bot(void); int top(void) { return bot(); }'
obj odd 'int odd(void) { return 2; }'
"$check" "$tmp/seams.txt" "$tmp"/*.o >"$tmp/out" 2>&1 || fail "clean objects fail: $(cat "$tmp/out")"
obj bot 'int top(void); int bot(void) { return top(); }'
"$check" "$tmp/seams.txt" "$tmp"/*.o >"$tmp/out" 2>&1 && fail "an upward call passes"
grep -q '^calls: bot.c uses top (top.c): seam bot must not call seam top, which is above it' "$tmp/out" ||
	fail "upward call: $(cat "$tmp/out")"
grep -q '^calls: files call each other in a circle: bot.c -> top.c -> bot.c' "$tmp/out" ||
	fail "circle: $(cat "$tmp/out")"
obj bot 'int bot(void) { return 1; }'
obj odd 'int bot(void); int odd(void) { return bot(); }'
"$check" "$tmp/seams.txt" "$tmp"/*.o >"$tmp/out" 2>&1 && fail "a call from outside the seams passes"
grep -q '^calls: odd.c uses bot (bot.c): odd.c is in no seam' "$tmp/out" || fail "outside: $(cat "$tmp/out")"

# --- the gate's objects, as the build made them
# Only objects whose source is still in the tree: an incremental build keeps those of
# files since renamed or removed.
objs=()
for o in "$GPUWHY_BUILD"/CMakeFiles/gpuwhy_layer_faces.dir/src/gate/*.c.o; do
	b=$(basename "$o" .o)
	[ -f "$GPUWHY_SRC/src/gate/$b" ] && objs+=("$o")
done
[ "${#objs[@]}" -gt 0 ] || fail "no objects of src/gate under $GPUWHY_BUILD/CMakeFiles (build first)"
[ "${#objs[@]}" -ge 12 ] || fail "only ${#objs[@]} objects of src/gate"
"$check" "$GPUWHY_SRC/src/gate/seams.txt" "${objs[@]}" || fail "the gate's files call up or in a circle (above)"
echo "gate_calls: ok"
