#!/usr/bin/env bash
# gpuwhy trace from the command line: usage errors (2), unreadable or malformed input (3) with
# one clear line, the three output formats, rank selection.
set -uo pipefail
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

expect() { # expect CODE PATTERN -- args...
  local code="$1" pat="$2"; shift 3
  "$GPUWHY" trace "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  [ "$rc" -eq "$code" ] || fail "gpuwhy trace $* exited $rc, wanted $code: $(cat "$tmp/err")"
  grep -qE -- "$pat" "$tmp/err" "$tmp/out" || fail "gpuwhy trace $*: no '$pat' in output: $(cat "$tmp/err")"
  if [ "$code" -eq 3 ] && [ "$(grep -c . "$tmp/err")" -ne 1 ]; then
    fail "gpuwhy trace $*: wanted one error line, got: $(cat "$tmp/err")"
  fi
}

# a small valid trace: two launches, two kernels on stream 7, a long wait between them
cat > "$tmp/ok.json" <<'JSON'
{"traceEvents": [
 {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 5},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 90, "dur": 5, "args": {"correlation": 1}},
 {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 100, "dur": 10, "args": {"stream": 7, "correlation": 1}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 550, "dur": 5, "args": {"correlation": 2}},
 {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 600, "dur": 10, "args": {"stream": 7, "correlation": 2}}
], "distributedInfo": {"rank": 5}}
JSON

expect 0 "usage: gpuwhy trace" -- --help
expect 2 "usage" --
expect 2 "unknown format" -- --format yaml "$tmp/ok.json"
expect 2 "bad rank list" -- --ranks x "$tmp/ok.json"
expect 2 "bad value" -- --threads 0 "$tmp/ok.json"
expect 2 "no file holds" -- --ranks 3 "$tmp/ok.json"
expect 3 "No such file" -- "$tmp/missing.json"

head -c 200 "$tmp/ok.json" > "$tmp/trunc.json"
expect 3 "trunc.json: .*(JSON|premature)" -- "$tmp/trunc.json"
gzip -c "$tmp/ok.json" | head -c 100 > "$tmp/trunc.json.gz"
expect 3 "truncated gzip" -- "$tmp/trunc.json.gz"
echo '{"traceEvents": []}' > "$tmp/empty.json"
expect 3 "traceEvents is empty" -- "$tmp/empty.json"
echo '{"traceEvents": {"ph": "X"}}' > "$tmp/types.json"
expect 3 "not an array" -- "$tmp/types.json"
echo '{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "x", "ts": 1, "dur": 2}]}' > "$tmp/cpu.json"
expect 3 "no GPU activity" -- "$tmp/cpu.json"
if command -v sqlite3 >/dev/null; then
  sqlite3 "$tmp/other.sqlite" "CREATE TABLE t(x); INSERT INTO t VALUES (1);"
  expect 3 "not an Nsight Systems export" -- "$tmp/other.sqlite"
fi
mkdir "$tmp/emptydir"
expect 3 "no trace files" -- "$tmp/emptydir"

# every input error is one printable line naming the file: the JSON parser's message ends with a
# newline, and a name or a damaged SQLite schema may hold control characters
echo '{"traceEvents": [{"ph": "X", "ts": 1,, "dur": 2}]}' > "$tmp/broken.json"
expect 3 "^gpuwhy: $tmp/broken.json: invalid JSON near byte 38: parse error: .*\\(is it" -- "$tmp/broken.json"
cp "$tmp/broken.json" "$tmp/a$(printf '\033')[31mb
c.json"
expect 3 "^gpuwhy: $tmp/a\\\\x1b\\[31mb\\\\nc\\.json: invalid JSON" -- "$tmp"/a*c.json
expect 3 "^gpuwhy: $tmp/missing\\\\x1b\\[31m\\\\n\\.json: No such file" -- "$tmp/missing$(printf '\033')[31m
.json"
if python3 -c 'import sqlite3' 2>/dev/null; then
  python3 - "$tmp/damaged.sqlite" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("CREATE TABLE StringIds(id INTEGER, value TEXT)")
c.execute("CREATE TABLE t(a)")
c.commit()
c.execute("PRAGMA writable_schema=ON")
c.execute("UPDATE sqlite_master SET name='t\x1b[31m\nX', sql='CREATE TABLE \x1b[31m\nboom(' WHERE name='t'")
c.commit()
PY
  # SQLite's words would quote the damaged schema: they are not passed on at all
  expect 3 "^gpuwhy: $tmp/damaged.sqlite: not a readable SQLite database: truncated or corrupt" -- "$tmp/damaged.sqlite"
  grep -q "$(printf '\033')" "$tmp/err" && fail "damaged schema: a raw escape reached the terminal"
fi

# formats
"$GPUWHY" trace "$tmp/ok.json" > "$tmp/text" || fail "text exited $?"
grep -q "== rank 5:" "$tmp/text" || fail "text: no rank header"
grep -q "Verdict: host-bound" "$tmp/text" || fail "text: verdict: $(grep Verdict "$tmp/text")"
grep -qE "idle +490 us +96.08 %" "$tmp/text" || fail "text: temporal breakdown: $(cat "$tmp/text")"
"$GPUWHY" trace --format json "$tmp/ok.json" > "$tmp/json" || fail "json exited $?"
python3 - "$tmp/json" <<'PY' || fail "json content"
import json, sys
d = json.load(open(sys.argv[1]))
r = d["ranks"][0]
assert r["rank"] == 5, r["rank"]
assert r["verdict"]["id"] == "host_bound", r["verdict"]
assert r["temporal"]["idle_us"] == 490 and r["temporal"]["span_us"] == 510, r["temporal"]
assert r["idle_streams"][0]["categories"]["host_wait"]["idle_us"] == 490
assert r["launches"]["pairs"] == 2
assert r["comm_comp_overlap_pct"] is None  # absent, not 0
assert d["errors"] == []
PY
"$GPUWHY" trace --format csv "$tmp/ok.json" > "$tmp/csv" || fail "csv exited $?"
grep -qx "5,490,20,0,510,96.08,3.92,0.00" "$tmp/csv" || fail "csv temporal: $(head -3 "$tmp/csv")"
grep -qx "5,7,host_wait,490,1.00" "$tmp/csv" || fail "csv idle"

# CSV keeps only HTA's tables: the warnings the text report shows go to stderr, one line each
mkdir "$tmp/dup"; cp "$tmp/ok.json" "$tmp/dup/a.json"; cp "$tmp/ok.json" "$tmp/dup/b.json"
"$GPUWHY" trace --format csv "$tmp/dup" > "$tmp/csv" 2> "$tmp/err" || fail "dup csv exited $?"
grep -q "both hold rank 5" "$tmp/err" || fail "csv: duplicate rank not warned on stderr: $(cat "$tmp/err")"
grep -qi "warning" "$tmp/csv" && fail "csv: a warning in the tables"
cat > "$tmp/neg.json" <<'JSON'
{"traceEvents": [
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1.0, "dur": 1.0, "args": {"correlation": 1}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 2.0, "dur": 1.0, "args": {"correlation": 2}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 1, "tid": 1, "ts": 3.0, "dur": 1.0, "args": {"correlation": 3}},
 {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 100.2, "dur": 9.9, "args": {"stream": 7, "correlation": 1}},
 {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD (Device -> Device)", "pid": 0, "tid": 7, "ts": 120.3, "dur": 0.4, "args": {"stream": 7, "correlation": 3}},
 {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 130.0, "dur": 10.0, "args": {"stream": 7, "correlation": 2}}
]}
JSON
"$GPUWHY" trace --format csv "$tmp/neg.json" > "$tmp/csv" 2> "$tmp/err" || fail "neg csv exited $?"
[ "$(grep -c . "$tmp/err")" -eq 1 ] && grep -q "^gpuwhy: $tmp/neg.json: warning: non-compute time is -1 us: 1 events" "$tmp/err" \
  || fail "csv: negative non-compute time not warned on stderr: $(cat "$tmp/err")"
grep -qi "warning" "$tmp/csv" && fail "csv: a warning in the tables"
grep -qx "0,21,19,-1,39,53.85,48.72,-2.56" "$tmp/csv" || fail "csv temporal with rounding: $(sed -n 3p "$tmp/csv")"
# without rounding, HTA's float microseconds: each kernel type piece truncated (9.9 us counts 9)
"$GPUWHY" trace --format csv --no-ns-rounding "$tmp/neg.json" > "$tmp/csv" 2> "$tmp/err" || fail "exact csv exited $?"
[ -s "$tmp/err" ] && fail "exact csv: unexpected stderr: $(cat "$tmp/err")"
grep -qx "COMPUTATION,19,100.0" "$tmp/csv" || fail "exact csv kernel types: $(grep -A3 kernel_type_breakdown "$tmp/csv")"

# a directory with one bad file: the good rank is reported, the exit code says 3
mkdir "$tmp/dir"; cp "$tmp/ok.json" "$tmp/dir/a.json"; cp "$tmp/trunc.json" "$tmp/dir/b.json"
"$GPUWHY" trace "$tmp/dir" > "$tmp/out" 2> "$tmp/err"; rc=$?
[ "$rc" -eq 3 ] || fail "dir with a bad file exited $rc"
grep -q "== rank 5" "$tmp/out" || fail "dir: good rank not reported"
grep -q "b.json" "$tmp/err" || fail "dir: bad file not named"

# a stream (stdin as "-", a pipe, a process substitution) reads as its file
# does: gzip and nsys SQLite too, whose start the readers look at first
fix="$(cd "$(dirname "$0")/../fixtures/traces" && pwd)"
kin="$fix/kinetoold/worker0.pt.trace.json.gz"
nsys=$(ls "$fix"/nsys/*.sqlite | head -1)
for f in "$tmp/ok.json" "$kin" "$nsys"; do
  "$GPUWHY" trace --format csv "$f" > "$tmp/file.csv" || fail "$f exited $?"
  "$GPUWHY" trace --format csv - < "$f" > "$tmp/stdin.csv" || fail "$f from stdin exited $?"
  cmp -s "$tmp/file.csv" "$tmp/stdin.csv" || fail "$f from stdin differs"
  cat "$f" | "$GPUWHY" trace --format csv /dev/stdin > "$tmp/pipe.csv" || fail "$f from a pipe exited $?"
  cmp -s "$tmp/file.csv" "$tmp/pipe.csv" || fail "$f from a pipe differs"
done
"$GPUWHY" trace <(zcat "$kin") > "$tmp/out" || fail "process substitution exited $?"
grep -q "== rank 0: /dev/fd/" "$tmp/out" || fail "a stream is named as given: $(head -1 "$tmp/out")"
ls "${TMPDIR:-/tmp}"/gpuwhy-stdin-$$-* 2>/dev/null && fail "a named copy of a stream left behind"
cat "$tmp/trunc.json" | "$GPUWHY" trace - > /dev/null 2> "$tmp/err"; rc=$?
[ "$rc" -eq 3 ] && grep -q "^gpuwhy: /dev/stdin: truncated JSON" "$tmp/err" || fail "a bad stream: rc $rc, $(cat "$tmp/err")"
cat "$tmp/ok.json" | TMPDIR=/nonexistent "$GPUWHY" trace - > /dev/null 2> "$tmp/err"; rc=$?
[ "$rc" -eq 3 ] && grep -q "cannot make a temporary file in /nonexistent" "$tmp/err" || fail "no TMPDIR: rc $rc, $(cat "$tmp/err")"

# a German locale in the environment changes nothing
LC_ALL=de_DE.UTF-8 LANG=de_DE.UTF-8 "$GPUWHY" trace --format csv "$tmp/ok.json" 2>/dev/null | \
  grep -qx "5,490,20,0,510,96.08,3.92,0.00" || fail "locale changed the numbers"
echo ok
