#!/usr/bin/env bash
# `gpuwhy record` on a terminal (a pty from script(1)) redraws one status line
# once a second: elapsed time, samples, file size and the live top finding
# (here the GPU that falls off the bus at 5 s); nothing of it when stderr is
# not a terminal, or with --quiet.
. "$(dirname "$0")/lib.bash"
have_sim || skip "simulated GPU not built"
command -v script >/dev/null || skip "script (util-linux) is not installed"
cd "$T" || fail "cd $T"

script -qfec "$GPUWHY --sim h100x1-lost record -o tty.gpuwhy -d 10s" /dev/null >tty.out ||
	fail "record under a pty failed: $(cat -v tty.out)"
# One drawing per "\r ESC[K rec ..."; the last erase comes before the closing message.
tr '\r' '\n' <tty.out | sed -n 's/^\x1b\[Krec /rec /p' >lines
n=$(wc -l <lines)
assert_ge "$n" 3 "status line drawings in 10 s"
assert_le "$n" 11 "status line drawings in 10 s (at most one a second)"
grep -Eq '^rec 0:0[0-9]  [0-9]+ samples?  [0-9.]+ (KiB|MiB)  ' lines ||
	fail "status line format: $(head -3 lines)"
grep -q 'fell off the bus' lines || fail "the live finding never showed the lost GPU: $(tail -3 lines)"
tr '\r' '\n' <tty.out | grep -q $'^\x1b\\[Kgpuwhy: [0-9]* samples in tty.gpuwhy' ||
	fail "the status line is not erased before the closing message: $(tail -c 300 tty.out | cat -v)"
echo "ok: $n status lines, the last: $(tail -1 lines)"

"$GPUWHY" --sim h100x1 record -o file.gpuwhy -d 2s 2>file.err || fail "record to a file"
grep -q $'\x1b' file.err && fail "escape sequences on a stderr that is not a terminal: $(cat -v file.err)"
grep -q '^rec ' file.err && fail "status line on a stderr that is not a terminal"
script -qfec "$GPUWHY --sim h100x1 record --quiet -o quiet.gpuwhy -d 2s" /dev/null >quiet.out ||
	fail "record --quiet under a pty"
[ -s quiet.out ] && fail "--quiet printed: $(cat -v quiet.out)"
assert_ge "$("$GPUWHY" report quiet.gpuwhy --format json | sed -n 's/.*"samples": \([0-9]*\).*/\1/p' | head -1)" 1 \
	"samples recorded with --quiet"
echo "ok: silent when not a terminal and with --quiet"
