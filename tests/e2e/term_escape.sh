#!/usr/bin/env bash
# Names, commands and process names that carry newlines or terminal escape
# sequences (OSC retitle, CSI clear, C1 CSI) reach the human-readable faces
# escaped: no control byte gets through and no table row is forged; JSON
# keeps the exact string.
. "$(dirname "$0")/lib.bash"
have_sim || skip "simulated GPU not built"
command -v python3 >/dev/null || skip "python3 missing"

EVIL=$(printf 'evil\033]0;pwned\007\033[2J\302\233X')
NL=$(printf 'line1\nFORGED 99 queued')
# no_ctrl FILE WHAT: FILE has no ESC, BEL or C1 CSI byte, and shows the escapes
no_ctrl() {
	python3 - "$1" "$2" <<'PY' || exit 1
import sys
data = open(sys.argv[1], "rb").read()
for b in (b"\x1b", b"\x07", b"\xc2\x9b"):
    if b in data:
        sys.exit("FAIL: %s: raw %r in the output" % (sys.argv[2], b))
if b"evil\\x1b]0;pwned\\x07\\x1b[2J\\u009bX" not in data:
    sys.exit("FAIL: %s: the escaped name is missing: %r" % (sys.argv[2], data[-600:]))
PY
}

# --- status and top: a GPU process whose argv[0] is hostile
bash -c 'exec -a "$1" "$2" --sim h100x1 sim train --steps 100000 --gpu-ms 20 --cpu-ms 5' \
	x "$EVIL" "$GPUWHY" >/dev/null 2>&1 &
tp=$!
PIDS_TO_KILL+=("$tp")
for _ in $(seq 300); do
	"$GPUWHY" --sim h100x1 status --format json >"$T/st.json" 2>/dev/null
	grep -q '"pid": *'"$tp" "$T/st.json" && break
	sleep 0.1
done
grep -q '"pid": *'"$tp" "$T/st.json" || fail "the training process never showed up"
"$GPUWHY" --sim h100x1 status >"$T/st.txt" || fail "status"
no_ctrl "$T/st.txt" "status"
python3 - "$T/st.json" "$EVIL" "$tp" <<'PY' || fail "status JSON does not keep the exact command"
import json, sys
d = json.load(open(sys.argv[1]))
p = [x for x in d["processes"] if x["pid"] == int(sys.argv[3])][0]
assert p["command"].startswith(sys.argv[2]), p["command"]
PY
"$GPUWHY" --sim h100x1 top --once >"$T/top.txt" 2>/dev/null || fail "top --once"
no_ctrl "$T/top.txt" "top --once"
kill "$tp"
wait "$tp" 2>/dev/null

# --- report: the recorded command is escaped; export keeps it exactly
"$GPUWHY" --sim h100x1 run -o "$T/r.gpuwhy" --no-summary -- true "$EVIL" || fail "run"
"$GPUWHY" report "$T/r.gpuwhy" >"$T/rep.txt"
no_ctrl "$T/rep.txt" "report"
"$GPUWHY" export "$T/r.gpuwhy" --table meta --format jsonl >"$T/meta.jsonl"
python3 - "$T/meta.jsonl" "$EVIL" <<'PY' || fail "export does not keep the exact command"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
cmd = [r["value"] for r in rows if r["key"] == "command"][0]
assert cmd == "true " + sys.argv[2], repr(cmd)
PY

# --- queue ls and show: a task name and command with a newline and escapes
export GPUWHY_QUEUE="$T/q"
"$GPUWHY" queue add --no-worker --name "$NL" -- echo "$EVIL" >/dev/null || fail "queue add"
"$GPUWHY" queue ls >"$T/ls.txt" || fail "queue ls"
assert_eq "$(wc -l <"$T/ls.txt" | tr -d ' ')" 2 "queue ls lines (header and one task)"
assert_contains "$(cat "$T/ls.txt")" 'line1\\nFORGED 99 queued' "queue ls"
"$GPUWHY" queue show 1 >"$T/show.txt" || fail "queue show"
no_ctrl "$T/show.txt" "queue show"
assert_contains "$(sed -n 1p "$T/show.txt")" 'task 1  line1\\nFORGED 99 queued' "queue show name line"
"$GPUWHY" queue ls --json >"$T/ls.json" || fail "queue ls --json"
python3 - "$T/ls.json" "$NL" <<'PY' || fail "queue ls --json does not keep the exact name"
import json, sys
d = json.load(open(sys.argv[1]))
t = d[0] if isinstance(d, list) else d["tasks"][0]
assert t["name"] == sys.argv[2], repr(t["name"])
PY
echo "term_escape: ok"
