#!/usr/bin/env bash
# The layers of src/layers.txt hold: no file includes a header of a layer above its own, the
# simulator shares only the ABI header, private headers stay in their directory, no include
# circle, and inside a folder with a seams.txt (src/gate) no seam includes one above it. The
# checker itself is tested first on a small tree with one edge of each kind.
set -uo pipefail
: "${GPUWHY_SRC:?GPUWHY_SRC must name the source tree}"
command -v python3 >/dev/null || { echo "SKIP: no python3" >&2; exit 77; }
check="$GPUWHY_SRC/scripts/check-layers"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# --- the checker on a tree of its own --------------------------------------------------------
t="$tmp/tree"
mkdir -p "$t/src/low" "$t/src/high" "$t/src/peer" "$t/sim" "$t/include"
printf 'abi include\nsim sim\nlow src/low\nhigh src/high src/peer\nmain src/main.c\n' >"$t/src/layers.txt"
echo '/* abi */' >"$t/include/abi.h"
printf '#include "low/low_int.h"\n' >"$t/src/low/low.h"
echo '/* private */' >"$t/src/low/low_int.h"
printf '#include "low/low.h"\n#include "peer/peer.h"\n#include <stdio.h>\n' >"$t/src/high/high.h"
printf '#include "high/high.h"\n' >"$t/src/high/high.c"
echo '/* peer */' >"$t/src/peer/peer.h"
printf '#include "abi.h"\n#include "sim_x.h"\n' >"$t/sim/sim_x.c"
echo '/* sim */' >"$t/sim/sim_x.h"
printf '#include "high/high.h"\n' >"$t/src/main.c"
# seams of one folder, lowest first: bot (a header and its file), then top
printf 'bot bot.h bot.c\ntop top.h top.c\n' >"$t/src/low/seams.txt"
echo '/* bot */' >"$t/src/low/bot.h"
printf '#include "low/bot.h"\n' >"$t/src/low/top.h"
printf '#include "low/bot.h"\n' >"$t/src/low/bot.c"
printf '#include "low/bot.h"\n#include "low/top.h"\n' >"$t/src/low/top.c"
"$check" --root "$t" >"$tmp/out" 2>&1 || fail "a clean tree fails: $(cat "$tmp/out")"

# expect_violation WHAT PATTERN: the tree as now fails with a line matching PATTERN
expect_violation() {
	"$check" --root "$t" >"$tmp/out" 2>&1; local rc=$?
	[ "$rc" -eq 1 ] || fail "$1: exit $rc, wanted 1: $(cat "$tmp/out")"
	grep -qE -- "$2" "$tmp/out" || fail "$1: no line like '$2' in: $(cat "$tmp/out")"
}
printf '#include "high/high.h"\n' >"$t/src/low/low.c"
expect_violation "backward edge" \
	'^layering: src/low/low.c:1: includes "high/high.h" \(src/high/high.h\): layer low \(src/low\) must not include layer high \(src/high\)'
rm "$t/src/low/low.c"
printf '#include "low/low.h"\n' >"$t/sim/sim_y.c"
expect_violation "simulator beyond the ABI" 'sim/sim_y.c:1: .*layer sim \(sim\) must not include layer low'
rm "$t/sim/sim_y.c"
printf '#include "low/low_int.h"\n' >"$t/src/high/uses_int.c"
expect_violation "private header" 'src/high/uses_int.c:1: .*a private header of src/low, included from src/high'
rm "$t/src/high/uses_int.c"
printf '#include "high/high.h"\n' >"$t/src/peer/peer.c"
expect_violation "circle in a layer" 'directories of one layer include each other in a circle: src/(high -> src/peer|peer -> src/high)'
rm "$t/src/peer/peer.c"
printf '#include "low/b.h"\n' >"$t/src/low/a.h"; printf '#include "low/a.h"\n' >"$t/src/low/b.h"
expect_violation "include circle" 'include circle: src/low/a.h -> src/low/b.h -> src/low/a.h'
rm "$t/src/low/a.h" "$t/src/low/b.h"
printf '#include "low/top.h"\n' >"$t/src/low/bot.c"
expect_violation "seam above" \
	'^layering: src/low/bot.c:1: includes "low/top.h" \(src/low/top.h\): seam bot must not include seam top, which is above it in src/low/seams.txt'
printf '#include "low/bot.h"\n' >"$t/src/low/bot.c"
printf '#include "low/top.h"\n' >"$t/src/low/bot.h"
expect_violation "seam header above" 'src/low/bot.h:1: .*seam bot must not include seam top'
echo '/* bot */' >"$t/src/low/bot.h"
printf '#include "low/bot.h"\n' >"$t/src/low/other.c"
expect_violation "file in no seam" 'src/low/other.c:1: .*src/low/other.c is in no seam of src/low/seams.txt'
rm "$t/src/low/other.c"
printf '#include "low/bot.h"\n' >"$t/src/high/uses_seam.c"
expect_violation "seam header outside" 'src/high/uses_seam.c:1: .*a private header of src/low, included from src/high'
rm "$t/src/high/uses_seam.c"
echo 'gone gone.h' >>"$t/src/low/seams.txt"
"$check" --root "$t" >"$tmp/out" 2>&1; rc=$?
[ "$rc" -eq 2 ] && grep -q 'src/low/seams.txt:3: gone.h is no file of src/low' "$tmp/out" ||
	fail "a seam naming no file: exit $rc: $(cat "$tmp/out")"
sed -i '$d' "$t/src/low/seams.txt"
mkdir "$t/src/stray"
expect_violation "unplaced directory" '^layering: src/stray: in no layer of src/layers.txt'
rmdir "$t/src/stray"
printf '#include "nowhere.h"\n' >"$t/src/low/lost.c"
expect_violation "missing header" 'src/low/lost.c:1: includes "nowhere.h", which is no file of the project'
rm "$t/src/low/lost.c"
printf 'src/high/high.c low/low.h  # a known edge that is not there\n' >"$tmp/known"
"$check" --root "$t" --known "$tmp/known" >"$tmp/out" 2>&1
grep -q 'known edge src/high/high.c -> "low/low.h" no longer occurs' "$tmp/out" ||
	fail "a stale known edge passes: $(cat "$tmp/out")"
printf '#include "high/high.h"\n' >"$t/src/low/low.c"
printf 'src/low/low.c high/high.h\n' >"$tmp/known"
"$check" --root "$t" --known "$tmp/known" >"$tmp/out" 2>&1 || fail "a known edge fails: $(cat "$tmp/out")"

# --- the project ----------------------------------------------------------------------------
# No edge of the project may go the wrong way: the known list is empty.
: >"$tmp/known"
"$check" --root "$GPUWHY_SRC" --known "$tmp/known" || fail "the include graph breaks the layers (above)"
echo "layering: ok"
