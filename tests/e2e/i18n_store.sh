#!/usr/bin/env bash
# The store's notices while another process holds a recording's write lock
# (the stall, the wait, the samples a full backlog lost) speak the user's
# language under the marker language of i18n_lib.bash; the gap event the
# recording keeps stays English.
. "$(dirname "$0")/lib.bash"
: "${GPUWHY_BUILD:?}" "${GPUWHY_SRC:?}"
. "$GPUWHY_SRC/tests/e2e/i18n_lib.bash"
i18n_sim_test python3 sqlite3

export GPUWHY_LOCALEDIR="$T/mark" LANGUAGE=qaa
cat >"$T/hold.py" <<'PY'
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=60)
c.execute("BEGIN IMMEDIATE")
time.sleep(float(sys.argv[2]))
c.execute("COMMIT")
PY
# record NAME HOLD_S UNTIL [env...]: record while the lock is held HOLD_S seconds,
# until its stderr holds UNTIL; stop it and check every line is translated.
record() {
	local name=$1 hold=$2 until=$3 rp
	shift 3
	env "$@" "$GPUWHY" --sim h100x1 record -o "$T/$name.gpuwhy" -i 100ms 2>"$T/$name.err" &
	rp=$!
	PIDS_TO_KILL+=("$rp")
	wait_line "$T/$name.err" "$I18N_MARK" "$rp"
	python3 "$T/hold.py" "$T/$name.gpuwhy" "$hold" || fail "could not hold the write lock"
	wait_line "$T/$name.err" "$until" "$rp"
	kill -INT "$rp"
	wait "$rp" || fail "record $name: exit $?: $(cat "$T/$name.err")"
	i18n_unmarked "$T/$name.err" >"$T/bad" || fail "record $name: lines outside gettext:
$(cat "$T/bad")"
}
# 8 s: the stall is told once refused writes (each waits up to 1 s for the lock)
# have waited 5 s, then what the wait cost; 8 leaves a slow build two tries past 5.
record stall 8 "writes waited"
grep -q "◊another process holds the recording's write lock" "$T/stall.err" ||
	fail "the stall notice: $(cat "$T/stall.err")"
# Room for 5 samples: the rest are a gap, told in the user's language, kept in English.
record gap 3 "not recorded" GPUWHY_RECORD_BACKLOG=5
grep -q "◊[0-9]* samples from .* not recorded" "$T/gap.err" || fail "the gap notice: $(cat "$T/gap.err")"
ev=$(sqlite3 "$T/gap.gpuwhy" "SELECT text FROM events WHERE kind='record_gap'")
case $ev in
*"◊"*) fail "the gap event holds translated text: $ev" ;;
*"samples from "*" not recorded: another process held the file's write lock") ;;
*) fail "the gap event: $ev" ;;
esac
exit 0
