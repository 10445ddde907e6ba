#!/usr/bin/env bash
# `gpuwhy fleet` against answers a real Prometheus gives rarely (tests/e2e/fleet_fake_prom.py
# on loopback): a 4xx is one line; series with gaps, duplicate series, a node whose clock is
# ahead, an Xid gauge that resets and metrics with no series give a report that says what is
# missing; a 5xx on one metric while other queries are in flight is one line, no hang; the
# answer does not depend on --parallel; nothing is written to stderr that is not a terminal.
. "$(dirname "$0")/lib.bash"
command -v python3 >/dev/null || skip "python3 missing"
SRC=${GPUWHY_SRC:-$(dirname "$0")/../..}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
FROM=1800000000
TO=$((FROM + 3600))
serve() { # MODE -> URL
	local p
	p=$(free_port)
	python3 "$SRC/tests/e2e/fleet_fake_prom.py" "$p" "$1" $FROM &
	PIDS_TO_KILL+=($!)
	for _ in $(seq 100); do python3 -c "import socket; socket.create_connection(('127.0.0.1', $p))" 2>/dev/null && break; sleep 0.1; done
	URL=http://127.0.0.1:$p
}

# A 4xx: Prometheus's own words, the hint, one line, exit 3.
serve 4xx
out=$("$GPUWHY" fleet --prometheus "$URL" --from $FROM --to $TO --step 15s 2>&1)
rc=$?
assert_eq "$rc" 3 "4xx: exit"
assert_eq "$(printf '%s\n' "$out" | wc -l)" 1 "4xx: lines"
assert_contains "$out" 'HTTP 400: bad_data: 1:5: parse error' "4xx"
assert_contains "$out" 'check the --match selector' "4xx hint"

# Awkward data: a report, stderr empty (no progress bar into a file).
serve data
# At 15 s (241 samples: the first request's 240 and one more) and at 1 s over 4 h (14,401
# samples: every metric in several requests, run 4 at a time).
for run in "15 $TO" "1 $((FROM + 14400))"; do
	set -- $run
	for par in 1 4; do
		"$GPUWHY" fleet --prometheus "$URL" --from $FROM --to $2 --step ${1}s --by gpu \
			--parallel $par --format json -o "$T/s$1p$par.json" 2>"$T/err$par"
		rc=$?
		[ "$rc" = 1 ] || fail "data step $1 --parallel $par: exit $rc, expected 1: $(cat "$T/err$par")"
		[ -s "$T/err$par" ] && fail "data --parallel $par: stderr not empty: $(od -c "$T/err$par" | head -3)"
	done
done
"$GPUWHY" fleet --prometheus "$URL" --from $FROM --to $TO --step 15s >"$T/data.txt" 2>"$T/err"
[ -s "$T/err" ] && fail "text: stderr not empty"
grep -q 'Not in Prometheus' "$T/data.txt" || fail "text report does not list the missing series"
grep -q '^  DCGM_FI_DEV_POWER_USAGE$' "$T/data.txt" || fail "power not listed as missing"
for st in 15 1; do
python3 - "$T/s${st}p1.json" "$T/s${st}p4.json" $st <<'PY' || fail "data report at ${st}s"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
step = float(sys.argv[3]) / 3600.0
n = int(round((a["to"] - a["from"]) / float(sys.argv[3]))) + 1
def bad(m): sys.exit("FAIL: " + m)
if a != b: bad("--parallel 1 and 4 differ")
if a["nodes"] != 2 or a["gpus"] != 4: bad("%s nodes %s GPUs: duplicates must join" % (a["nodes"], a["gpus"]))
g = {x["name"]: x["hours"] for x in a["groups"]}
# the gap: 40 samples of n1/1 without data, and only there
if abs(g["n1/1"]["no-data"] - 40 * step) > 1e-6: bad("gap: %s" % g["n1/1"])
# n2's points are 7 s late on the grid: at 15 s they still fill every sample, at 1 s its
# first 7 samples have none (and the rest moves 7 samples on)
skew = int(round(7 / float(sys.argv[3])))
if g["n1/0"]["no-data"] or any(abs(g[x]["no-data"] - skew * step) > 1e-6 for x in ("n2/0", "n2/1")):
    bad("no-data elsewhere: %s" % g)
if abs(g["n2/0"]["busy"] - (n - skew) * step) > 1e-6: bad("skewed node: %s" % g["n2/0"])
# the Xid from sample 50 (the gauge going back to 0 does not bring the GPU back)
if abs(g["n2/1"]["lost"] - (n - 50 - skew) * step) > 1e-6: bad("xid: %s" % g["n2/1"])
f = [(x["node"], x["gpus"], x["rule"]) for x in a["findings"]]
if f != [("n2", [1], "gpu-fault")]: bad("findings %s" % f)
q = a["queries"]
if not q["DCGM_FI_DEV_GPU_UTIL"]["present"] or q["DCGM_FI_DEV_POWER_USAGE"]["present"]: bad("queries %s" % q)
PY
done

# A 5xx on one metric while others are in flight: one line, exit 3.
serve data-5xx
out=$(timeout 60 "$GPUWHY" fleet --prometheus "$URL" --from $FROM --to $TO --step 15s --parallel 4 \
	--retries 1 2>&1)
rc=$?
assert_eq "$rc" 3 "5xx: exit"
assert_eq "$(printf '%s\n' "$out" | wc -l)" 1 "5xx: lines"
assert_contains "$out" 'HTTP 503: unavailable: overloaded' "5xx"
echo "ok: fleet bad input"
