#!/usr/bin/env bash
# gpuwhy sweep on the simulated GPU: a num_workers sweep finds its knee where
# the data loader stops being the limit, the results agree between text, JSON
# and HTML, and a failing configuration is reported while the sweep goes on.
#
# Data loading is modelled as I/O wait (sim train --io-ms), so the knee does
# not depend on how busy this machine's cores are: with 200 ms of I/O per
# batch and 100 ms of GPU per step, 1 worker starves the GPU, 4 workers have
# twice the data the GPU needs (slack for a loaded machine's scheduling
# delays), so among 1,4,16 the knee is 4. Step times are taken from the
# output lines as `gpuwhy run` reads them, which a very busy machine delays
# now and then: 30 timed steps and a knee share of 25 % keep that noise
# (a few % of the mean) apart from the gain of more workers (none at 16).
source "$(dirname "$0")/lib.bash"
have_sim || skip "simulated GPU not built"
G=$GPUWHY

D=$T/workers
"$G" --sim h100x1 sweep -o "$D" --vary workers=1,4,16 --steps 30 --warmup-steps 2 --knee 25% \
	--interval 200ms -- "$G" sim train --steps 500 --workers {workers} --prefetch 4 \
	--cpu-ms 0 --io-ms 200 --gpu-ms 100 >"$T/out" 2>"$T/err"
rc=$?
assert_eq "$rc" 0 "sweep exit status ($(cat "$T/err"))"
for w in 1 4 16; do
	[ -s "$D/workers=$w-r1.gpuwhy" ] || fail "no recording for workers=$w"
done
grep -q '^gpuwhy sweep: \[3/3\] workers=16 r1: done' "$T/err" || fail "progress lines: $(cat "$T/err")"
# each run was stopped by `gpuwhy run --stop-after-steps` (2 + 30 + 1 step lines), recorded as done
ev=$("$G" export "$D/workers=4-r1.gpuwhy" --table events --format csv)
assert_contains "$ev" "annotation,,0,stopped after the steps asked for (--stop-after-steps)" "events"
assert_ge "$("$G" export "$D/workers=4-r1.gpuwhy" --table steps --format csv | tail -n +2 | wc -l | tr -d ' ')" 33 "step lines recorded"
j() { python3 -c "import json,sys; d=json.load(open('$D/results.json')); print($1)"; }
assert_eq "$(j "d['variables'][0]['knee']")" 4 "knee of workers"
assert_eq "$(j "d['configurations'][0]['vs_baseline']['verdict']")" baseline "baseline"
assert_eq "$(j "d['configurations'][1]['vs_baseline']['verdict']")" faster "workers=4 against 1"
# step times: 1 worker waits 200 ms per batch, 4 workers are GPU-bound (100 ms)
s1=$(j "d['configurations'][0]['step_mean_s']")
s4=$(j "d['configurations'][1]['step_mean_s']")
assert_ge "$s1" 0.180 "workers=1 step time"
assert_le "$s4" "$(awk -v a="$s1" 'BEGIN{print a*0.75}')" "workers=4 step time against workers=1"
assert_ge "$s4" 0.085 "workers=4 step time (the GPU phase, less the reading's jitter)"
# steps/s is the inverse of the mean step time; the CI is over steps with one repeat
python3 - "$D/results.json" <<'PY' || fail "results.json relations"
import json, sys
d = json.load(open(sys.argv[1]))
for c in d["configurations"]:
    assert c["status"] == "done", c
    assert abs(c["steps_per_s"] * c["step_mean_s"] - 1) < 1e-9, c
    assert c["steps_timed"] >= 30, c
    assert c["ci_over"] == "steps" and c["step_mean_ci95_s"] >= 0, c
    assert c["samples_per_s"] is None, c  # no batch variable
    assert c["step_p50_s"] <= c["step_p90_s"], c
assert d["best"] in ("workers=4", "workers=16"), d["best"]
PY
grep -q '^why  workers: 1 -> 4 changes step time' "$T/out" || fail "why line: $(cat "$T/out")"
grep -q '^knee workers: 4$' "$T/out" || fail "knee line"
grep -q '<svg' "$D/report.html" || fail "no chart in the HTML page"
grep -q 'workers=16' "$D/report.html" || fail "HTML lacks a configuration"
# numbers as people write them (no 1.02e+03 MiB), and the interval's unit said
grep -qE '[0-9]e[+-][0-9]' "$D/report.html" && fail "a number in exponent form: $(grep -oE '[^>]*[0-9]e[+-][0-9][^<]*' "$D/report.html" | head -3)"
grep -q '<th>±95 % ms</th>' "$D/report.html" || fail "the ±95 % column does not say its unit"
cmp -s "$D/results.txt" <(sed '$d' "$T/out") || fail "results.txt differs from stdout"

# ---- a failing configuration is reported, the sweep goes on, exit 1 ----
F=$T/fail
"$G" --sim h100x1 sweep -o "$F" --vary code=3,0 --interval 100ms -- \
	sh -c '"$0" sim train --steps 30 --gpu-ms 5 --workers 2 && exit {code}' "$G" >"$T/fout" 2>"$T/ferr"
assert_eq "$?" 1 "sweep with a failing configuration"
grep -q 'code=3 r1: failed (exit 3)' "$T/ferr" || fail "failure not reported: $(cat "$T/ferr")"
grep -q 'code=0 r1: done' "$T/ferr" || fail "the sweep did not go on: $(cat "$T/ferr")"
python3 - "$F/results.json" <<'PY' || fail "failed configuration in results.json"
import json, sys
d = json.load(open(sys.argv[1]))
a, b = d["configurations"]
assert a["status"] == "failed" and a["exit_code"] == 3, a
assert b["status"] == "done" and b["exit_code"] == 0, b
PY
echo ok
