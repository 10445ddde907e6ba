# report and compare on logs people already have: nvidia-smi --query-gpu CSVs
# (header or not, units or not, any order, several GPUs, missing values, a
# cut last line), dmon tables (with and without -o DT) and gpuwhy export CSV.
# Each log's numbers, findings and notes are held to tests/fixtures/smi-logs/expected.txt;
# bad input gets one line naming the file and the documented exit code.
. "$(dirname "$0")/lib.bash"
command -v python3 >/dev/null || skip "python3 missing"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
L=$SRC/tests/fixtures/smi-logs
cd "$L" || fail "no $L"
# nvidia-smi writes local time: the expected start times are UTC.
export TZ=UTC

summary() { # summary FILE OPTIONS...: one block of the numbers the report gives
	echo "== $*"
	LC_ALL=C "$GPUWHY" report "$@" --format json >"$T/r.json" 2>"$T/err"
	echo "exit $?"
	sed 's/^/stderr: /' "$T/err"
	python3 - "$T/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
rec = r["recording"]
print("samples %d duration %.1f start %s" % (rec["samples"], rec["duration_s"], rec["start_wall_utc"]))
def n(v, f="%.1f"):
    return "-" if v is None else f % v
for g in r["gpus"]:
    print("gpu %d name '%s' util %s idle %s mem %s/%s power %s temp %s quadrant %s" % (
        g["index"], g["name"], n(g["util_mean"]), n(g["idle_pct"]), n(g["mem_peak_mib"], "%.0f"),
        n(g["mem_total_mib"], "%.0f"), n(g["power_mean_w"]), n(g["temp_max_c"], "%.0f"),
        g["quadrant"]))
for f in r["findings"]:
    print("finding %s %s gpus %s" % (f["severity"], f["id"], f["gpus"]))
# A log holds no host data: nothing host-side may be filled in.
chain = {c["step"]: c["status"] for c in r["chain"]}
print("chain 3 %s 4 %s" % (chain[3], chain[4]))
PY
}

{
	summary query_busy_h100.csv
	summary query_memfull_idle_nounits.csv
	summary query_starved_noheader.csv \
		--smi-fields timestamp,index,utilization.gpu,memory.used,memory.total,power.draw
	summary query_two_gpus_missing_truncated.csv
	summary query_no_timestamp.csv --interval 500ms
	summary dmon_old_two_gpus.txt --interval 1s
	summary dmon_dt_memfull_idle.txt
	summary dmon_busy_no_time.txt --interval 1
	summary export_sim_h100.csv
} >"$T/got.txt" 2>&1
[ -n "${SMI_LOGS_WRITE:-}" ] && cp "$T/got.txt" "$L/expected.txt"
diff -u "$L/expected.txt" "$T/got.txt" || fail "log reports differ from expected.txt"

# The text face says plainly what a GPU-only log cannot judge.
out=$(LC_ALL=C "$GPUWHY" report query_busy_h100.csv 2>/dev/null)
assert_contains "$out" "INFO  not-checked" "text report of a log"
assert_contains "$out" "No host CPU data was recorded" "step 3 of a log"
assert_contains "$out" "No host value was assumed" "not-checked note"
LC_ALL=C "$GPUWHY" report query_busy_h100.csv --format html -o "$T/r.html" 2>/dev/null
assert_eq "$?" 0 "html report of a log"
grep -q "not-checked" "$T/r.html" || fail "html report lacks not-checked"

# Low utilization on a GPU-only log: the title does not claim the host was clear.
LC_ALL=C "$GPUWHY" report query_starved_noheader.csv --format json \
	--smi-fields timestamp,index,utilization.gpu,memory.used,memory.total,power.draw \
	>"$T/s.json" 2>/dev/null
python3 - "$T/s.json" <<'PY' || fail "low-utilization on a log"
import json, sys
r = json.load(open(sys.argv[1]))
f = [f for f in r["findings"] if f["id"] == "low-utilization"][0]
assert "the host was not in the input" in f["title"], f["title"]
assert "no host or GPU limit" not in f["title"], f["title"]
assert not any(e["metric"].startswith("host") or e["metric"].startswith("cpu") for e in f["evidence"]), f
nc = [f for f in r["findings"] if f["id"] == "not-checked"][0]
assert "data-starved" in nc["note"], nc
PY

# compare between two logs of different formats: the utilization change is seen.
LC_ALL=C "$GPUWHY" compare query_starved_noheader.csv query_busy_h100.csv --format json \
	--smi-fields timestamp,index,utilization.gpu,memory.used,memory.total,power.draw \
	>"$T/c.json" 2>/dev/null
assert_eq "$?" 0 "compare two logs"
python3 - "$T/c.json" <<'PY' || fail "compare of two logs"
import json, sys
c = json.load(open(sys.argv[1]))
s = json.dumps(c)
assert "utilization" in s, s[:400]
# a log's length is no run time: no speed claim without step times
assert c["verdict"] == "not-compared" and c["judged_by"] is None, (c["verdict"], c["judged_by"])
PY

# Bad input: one line naming the file, exit 3 for a file that is not a log,
# 2 for what the user must add; never a crash.
bad() { # bad EXIT NAME FILE OPTIONS...
	local want=$1 name=$2
	shift 2
	LC_ALL=C "$GPUWHY" report "$@" >/dev/null 2>"$T/err"
	local rc=$?
	assert_eq "$rc" "$want" "$name: exit"
	assert_eq "$(wc -l <"$T/err")" 1 "$name: one error line"
	grep -q "^gpuwhy: $1: " "$T/err" || fail "$name: error does not name the file: $(cat "$T/err")"
}
: >"$T/empty.csv"
bad 3 "empty file" "$T/empty.csv"
printf '\n  \n' >"$T/blank.csv"
bad 3 "blank lines" "$T/blank.csv"
head -c 4096 /dev/urandom >"$T/garbage.bin"
printf '\001\002\377garbage\n' >>"$T/garbage.bin"
bad 3 "binary garbage" "$T/garbage.bin"
printf 'foo, bar [W], baz\n1, 2, 3\n' >"$T/unknown.csv"
bad 3 "no known field" "$T/unknown.csv"
grep -q "no GPU metric gpuwhy knows" "$T/err" || fail "no known field: $(cat "$T/err")"
printf 'timestamp, index, utilization.gpu [%%]\n2026/12/07 01:02:03.456, 0, 5 %%\n2026/12/07 01:02:04.456, 0\n2026/12/07 01:02:05.456, 0, 7 %%\n' >"$T/ragged.csv"
bad 3 "inconsistent columns" "$T/ragged.csv"
grep -q "line 3 has 2 fields, the header 3" "$T/err" || fail "ragged: $(cat "$T/err")"
printf 'timestamp, index, utilization.gpu [%%]\n2026/13/07 01:02:03.456, 0, 5 %%\n' >"$T/stamp.csv"
bad 3 "bad timestamp" "$T/stamp.csv"
printf 'timestamp, index, utilization.gpu [%%]\n' >"$T/headonly.csv"
bad 3 "header only" "$T/headonly.csv"
printf '# gpu pwr sm\n0 1\n' >"$T/dmon_bad.txt"
bad 3 "dmon ragged" "$T/dmon_bad.txt"
printf '# nothing here\n' >"$T/hash.txt"
bad 3 "a # line that is no dmon header" "$T/hash.txt"
echo "not a recording" >"$T/words.txt"
bad 3 "a line of words" "$T/words.txt"
bad 2 "noheader without --smi-fields" query_starved_noheader.csv
grep -q -- "--smi-fields" "$T/err" || fail "noheader hint: $(cat "$T/err")"
bad 2 "no times without --interval" query_no_timestamp.csv
grep -q -- "--interval 1s" "$T/err" || fail "interval hint: $(cat "$T/err")"
bad 2 "dmon without -o T, no --interval" dmon_busy_no_time.txt
LC_ALL=C "$GPUWHY" report query_starved_noheader.csv --smi-fields foo,bar >/dev/null 2>"$T/err"
assert_eq "$?" 2 "--smi-fields without a known field"
LC_ALL=C "$GPUWHY" report query_no_timestamp.csv --interval 0 >/dev/null 2>"$T/err"
assert_eq "$?" 2 "--interval 0"
exit 0
