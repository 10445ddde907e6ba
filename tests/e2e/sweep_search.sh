#!/usr/bin/env bash
# gpuwhy sweep --search on the simulated GPU: the largest batch that runs
# without running out of memory, and the memory model's predicted boundary,
# both within one search step of what the scenario's memory implies.
#
# h100x1: 81559 MiB total, 328 MiB reserved by the driver. sim train holds
# 1024 MiB + 24 MiB per sample, so batches up to (81559-328-1024)/24 = 3341
# fit and 3342 does not.
source "$(dirname "$0")/lib.bash"
have_sim || skip "simulated GPU not built"
G=$GPUWHY
D=$T/search
STEP=64
"$G" --sim h100x1 sweep -o "$D" --search batch=pow2:64..8192:$STEP --steps 6 --interval 50ms \
	--headroom 10% -- "$G" sim train --steps 500 --batch {batch} --workers 2 --cpu-ms 1 \
	--cpu-ms-per-item 0 --gpu-ms 40 --gpu-ms-per-item 0.002 --mem-mib 1024 \
	--mem-mib-per-item 24 >"$T/out" 2>"$T/err"
assert_eq "$?" 0 "search exit status (an OOM in a search is expected): $(cat "$T/err")"
grep -q 'oom (exit 1)' "$T/err" || fail "no out-of-memory run reported"
python3 - "$D/results.json" "$STEP" <<'PY' || fail "search results: $(cat "$T/out")"
import json, sys
d = json.load(open(sys.argv[1])); step = int(sys.argv[2])
limit = (81559 - 328 - 1024) / 24          # 3341.96: the scenario's boundary
s, m = d["search"], d["memory_model"]
assert s["variable"] == "batch" and s["resolution"] == step, s
assert limit - step < s["largest_ok"] <= limit, s
assert limit < s["smallest_failed"] <= s["largest_ok"] + step, s
assert m is not None and m["points"] >= 3, m
assert abs(m["per_item_mib"] - 24) < 0.5, m
assert abs(m["oom_boundary"] - limit) <= step, m
assert m["max_batch"] < m["oom_boundary"], m
assert abs(m["max_batch"] - ((81559 - 328) * 0.9 - 1024) / 24) <= step, m
assert m["agrees_with_search"] is True, m
# samples/s is steps/s times the batch; the search's best is a value that ran
for c in d["configurations"]:
    if c["status"] == "done":
        b = int(c["values"]["batch"])
        assert abs(c["samples_per_s"] - b * c["steps_per_s"]) < 1e-6 * b * c["steps_per_s"], c
    else:
        assert c["status"] == "oom" and int(c["values"]["batch"]) > limit, c
best = s["best_throughput"]
assert best and int(best.split("=")[1]) <= s["largest_ok"], best
PY
grep -q '^memory model: peak = 1024 MiB + 24.00 MiB x batch' "$T/out" || fail "memory model line: $(cat "$T/out")"
grep -q 'agrees with the search' "$T/out" || fail "no check against the search"
echo ok
