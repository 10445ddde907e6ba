#!/usr/bin/env bash
# The man pages say what the option tables say: every option of every command
# and subcommand appears in its rendered page (man_check.py), every page
# renders with man -l, and `gpuwhy help X [SUB]` is `gpuwhy X [SUB] --help`
# for every command and subcommand the tables list.
. "$(dirname "$0")/lib.bash"
: "${GPUWHY_BUILD:?}"
SRC=${GPUWHY_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
MAN=$GPUWHY_BUILD/man

# help X [SUB] and X [SUB] --help: the same text, exit 0, for every table.
"$GPUWHY" help >"$T/a" && "$GPUWHY" --help >"$T/b" && cmp -s "$T/a" "$T/b" ||
	fail "gpuwhy help differs from gpuwhy --help"
python3 -c '
import sys; sys.path.insert(0, sys.argv[2] + "/scripts"); import opt_tables
t = opt_tables.load(sys.argv[1])
for c in t["commands"]:
    print(c["name"])
    for s in c["subs"]:
        for n in [s["name"]] + s["aliases"]:
            print(c["name"], n)
' "$GPUWHY" "$SRC" >"$T/words" || fail "gpuwhy help --dump: unreadable"
[ "$(wc -l <"$T/words")" -ge 40 ] || fail "too few commands and subcommands: $(cat "$T/words")"
grep -qx "queue add" "$T/words" && grep -qx "sim train" "$T/words" && grep -qx "sim fleet" "$T/words" ||
	fail "subcommands missing from the dump: $(cat "$T/words")"
while read -r -a w; do
	"$GPUWHY" help "${w[@]}" >"$T/a" 2>&1 || fail "gpuwhy help ${w[*]}: exit $?"
	"$GPUWHY" "${w[@]}" --help >"$T/b" 2>&1 || fail "gpuwhy ${w[*]} --help: exit $?"
	cmp -s "$T/a" "$T/b" || fail "gpuwhy help ${w[*]} differs from gpuwhy ${w[*]} --help"
	grep -q "^usage: gpuwhy" "$T/a" || fail "gpuwhy help ${w[*]}: no usage line"
done <"$T/words"

# The pages: built where go-md2man is (scripts/install-deps installs it).
if [ ! -e "$MAN/.stamp" ]; then
	command -v go-md2man >/dev/null &&
		fail "go-md2man is installed but $MAN has no pages (build the target gpuwhy_man)"
	[ "${GPUWHY_NO_SKIP:-0}" = 1 ] && fail "no man pages: go-md2man is missing (scripts/install-deps)"
	skip "no man pages: go-md2man is missing (scripts/install-deps)"
fi
command -v man >/dev/null || {
	[ "${GPUWHY_NO_SKIP:-0}" = 1 ] && fail "man is missing (scripts/install-deps: man-db)"
	skip "man is missing (scripts/install-deps: man-db)"
}
mkdir -p "$T/txt"
for p in "$MAN"/*.1 "$MAN"/*.5; do
	n=$(basename "$p")
	MANWIDTH=200 LC_ALL=C.UTF-8 env -u MAN_KEEP_FORMATTING man -l "$p" 2>"$T/err" >"$T/txt/${n%.*}.txt" ||
		fail "man -l $n: exit $? ($(cat "$T/err"))"
	grep -q "^NAME" "$T/txt/${n%.*}.txt" || fail "man -l $n: no NAME section"
done
python3 "$(dirname "$0")/man_check.py" "$GPUWHY" "$MAN" "$T/txt" || fail "man pages and option tables disagree (above)"

# Where a docs/ page exists its prose is the page's description: the first
# sentence of docs/compare.md is in gpuwhy-compare(1).
if [ -f "$SRC/docs/compare.md" ]; then
	grep -q "measure a baseline" "$T/txt/gpuwhy-compare.txt" ||
		fail "gpuwhy-compare(1) lacks the prose of docs/compare.md"
fi
# The recording file's page holds its tables.
grep -q "gpu_samples" "$T/txt/gpuwhy-recording.txt" || fail "gpuwhy-recording(5) does not describe gpu_samples"
echo "ok: $(ls "$MAN" | grep -c '\.[15]$') man pages agree with the option tables"
