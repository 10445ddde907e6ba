#!/usr/bin/env bash
# gpuwhy trace against HolisticTraceAnalysis' own outputs for the real traces in
# tests/fixtures/traces (each with its licence and HTA's reference CSVs), and the
# nsys export against its cross-check figures.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
traces="$here/../fixtures/traces"
[ -d "$traces/sampled2" ] || { echo "FAIL: no trace corpus at $traces"; exit 1; }
command -v python3 >/dev/null || { echo "skip: python3 missing (scripts/install-deps)"; exit 77; }
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
status=0
echo "| case | analysis | result |"
echo "| --- | --- | --- |"
for case in sampled2 nccl kinetoold; do
  [ -d "$traces/$case/hta-reference" ] || { echo "missing case $case"; status=1; continue; }
  "$GPUWHY" trace --quiet --format csv "$traces/$case" > "$tmp/$case.csv"
  python3 "$here/trace_hta_compare.py" "$tmp/$case.csv" "$traces/$case/hta-reference" "$case" \
    || status=1
done

# --no-ns-rounding against HTA with HTA_DISABLE_NS_ROUNDING=1. The traces with whole-microsecond
# timestamps give HTA's default outputs in that mode too (nothing to round); the ns trace has its
# own references.
for case in sampled2 nccl kinetoold; do
  ref="$traces/$case/hta-reference-no-ns-rounding"
  [ -d "$ref" ] || ref="$traces/$case/hta-reference"
  "$GPUWHY" trace --quiet --no-ns-rounding --format csv "$traces/$case" > "$tmp/$case-exact.csv"
  python3 "$here/trace_hta_compare.py" "$tmp/$case-exact.csv" "$ref" "$case --no-ns-rounding" --float \
    || status=1
done

# nsys: no HTA output exists; the shared README gives an independent implementation's figures.
nsys="$traces/nsys/saxpy-mpi-cuda_nsys_perlmutter0.sqlite"
[ -f "$nsys" ] || { echo "FAIL: $nsys missing"; exit 1; }
if [ -f "$nsys" ]; then
  "$GPUWHY" trace --quiet --format csv "$nsys" > "$tmp/nsys.csv"
  python3 - "$tmp/nsys.csv" <<'PY' || status=1
import sys
text = open(sys.argv[1]).read()
tables, name, rows = {}, None, []
for line in text.splitlines():
    if line.startswith("# "):
        name = line[2:]; tables[name] = []
    elif line and name:
        tables[name].append(line.split(","))
def us_ns(s):
    whole, _, frac = s.partition(".")
    return int(whole) * 1000 + int((frac + "000")[:3])
t = dict(zip(tables["temporal_breakdown"][0], tables["temporal_breakdown"][1]))
want = {"kernel_time(us)": 1097327843, "idle_time(us)": 724054763, "compute_time(us)": 88573480}
bad = [f"{k}: {us_ns(t[k])} ns vs {v}" for k, v in want.items() if us_ns(t[k]) != v]
bad += [f"{k}: {t[k]} vs {v}" for k, v in (("idle_time_pctg", "65.98"), ("compute_time_pctg", "8.07"))
        if t[k] != v]
idle = {r[2]: r for r in tables["idle_time_breakdown"][1:] if r[1] == "7"}
stats = {r[0]: r for r in tables["idle_interval_stats"][1:] if r[2] == "7"}
for cat, ns, n in (("host_wait", 723650062, 5), ("kernel_wait", 88128, 9), ("other", 316573, 5)):
    if us_ns(idle[cat][3]) != ns or int(stats[cat][3]) != n:
        bad.append(f"stream 7 {cat}: {idle[cat][3]} us / {stats[cat][3]} gaps vs {ns} ns / {n}")
print(f"| nsys | cross-check figures | {'match' if not bad else '; '.join(bad)} |")
sys.exit(1 if bad else 0)
PY
fi
exit $status
