# gpuwhy report --trace: a profiler trace of the run feeds launch-bound and step 7.
. "$(dirname "$0")/lib.bash"
have_sim || skip "simulated GPU not built"
python3 - "$T/tiny.json" <<'PY'
import json, sys
ev = [{"ph": "X", "cat": "kernel", "name": "void tiny_kernel<float>()", "pid": 0, "tid": 7,
       "ts": 1000.0 + 8 * i, "dur": 3.0, "args": {"stream": 7, "device": 0, "correlation": i}}
      for i in range(500)]
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
PY
"$GPUWHY" --sim h100x1 run -o "$T/a.gpuwhy" -i 200ms --no-summary -- \
	"$GPUWHY" sim train --workers 2 --cpu-ms 5 --gpu-ms 50 --steps 30 >/dev/null 2>&1 || fail "run"
js=$("$GPUWHY" report "$T/a.gpuwhy" --format json)
python3 -c 'import json,sys; ids=[f["id"] for f in json.loads(sys.argv[1])["findings"]]; assert "launch-bound" not in ids, ids' "$js" ||
	fail "launch-bound without a trace"
out=$("$GPUWHY" report "$T/a.gpuwhy" --trace "$T/tiny.json")
assert_contains "$out" "launch-bound" "launch-bound from the trace"
assert_contains "$out" "The trace has 500 kernels, 100 % shorter than 10 us" "step 7"
"$GPUWHY" report "$T/a.gpuwhy" --trace "$T/missing.json" 2>/dev/null
assert_eq "$?" 3 "missing trace"
echo '{"traceEvents": []}' >"$T/empty.json"
"$GPUWHY" report "$T/a.gpuwhy" --trace "$T/empty.json" 2>"$T/err"
assert_eq "$?" 3 "trace without kernels"
echo "1 passed, 0 failed"
