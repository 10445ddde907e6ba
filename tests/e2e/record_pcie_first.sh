# A PCIe rate from NVML's byte counters is absent until it spans a whole slow
# period: the refreshes microseconds apart at the recorder's start are no
# reading, and a 0 from them would be served for five seconds while traffic
# flows (a fake ramp in the chart). Checked in the recording, the export and
# the HTML report's chart; a one-shot query still reads the rate.
. "$(dirname "$0")/lib.bash"
have_sim || skip "simulated GPU not built"
command -v sqlite3 >/dev/null || skip "sqlite3 missing"
SCN="$(dirname "$0")/../../sim/scenarios/h100x1.json"

# h100x1 idle until 0.5 s of scenario time (its clock starts with the
# recorder), then 370 MiB/s host to GPU and 40 MiB/s back, seen by GPM too.
python3 - "$SCN" "$T/pcie.json" <<'EOF' || fail "scenario"
import json, sys
s = json.load(open(sys.argv[1]))
s["name"] = "h100x1-pcie-late"
s["gpus"][0]["load"] = [{"start_s": 0.5, "level": {"util": 60, "pcie_rx_mib_s": 370, "pcie_tx_mib_s": 40}}]
json.dump(s, open(sys.argv[2], "w"))
EOF

"$GPUWHY" --sim "$T/pcie.json" run -o "$T/a.gpuwhy" -i 100ms --no-summary -- sleep 2 >/dev/null 2>"$T/err" ||
	fail "run: $(cat "$T/err")"
sq() { sqlite3 "$T/a.gpuwhy" "$1"; }
assert_ge "$(sq 'SELECT count(*) FROM gpu_samples WHERE gpm_pcie_rx_bytes > 300 * 1048576')" 3 \
	"samples with GPM's traffic"
# no zero beside GPM's 370 MiB/s: a rate is absent or the traffic's
assert_eq "$(sq 'SELECT count(*) FROM gpu_samples WHERE gpm_pcie_rx_bytes > 300 * 1048576 AND (pcie_rx < 300 OR pcie_tx < 30)')" 0 \
	"NVML PCIe rates below the traffic GPM sees"
assert_eq "$(sq 'SELECT pcie_rx IS NULL AND pcie_tx IS NULL FROM gpu_samples ORDER BY t LIMIT 1')" 1 \
	"first sample: PCIe rates absent"
"$GPUWHY" export "$T/a.gpuwhy" --table gpu --format jsonl >"$T/a.jsonl" || fail "export"
python3 - "$T/a.jsonl" <<'EOF' || fail "export: a PCIe rate of 0 while GPM saw traffic"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert rows and rows[0]["pcie_rx"] is None, rows[0]
for r in rows:
    if (r["gpm_pcie_rx_bytes"] or 0) > 300 * 1048576:
        assert r["pcie_rx"] is None or r["pcie_rx"] > 300, r
EOF
# the chart's scale is the traffic's, not that of a line of zeros
"$GPUWHY" report --format html -o "$T/a.html" "$T/a.gpuwhy" || [ $? -eq 1 ] || fail "report html"
python3 - "$T/a.html" <<'EOF' || fail "HTML PCIe chart"
import re, sys
html = open(sys.argv[1]).read()
fig = re.search(r'<figure id="chart-pcie">(.*?)</figure>', html, re.S)
assert fig, "no PCIe chart"
labels = [float(x) for x in re.findall(r'text-anchor="end">([0-9.]+)</text>', fig.group(1))]
assert labels and max(labels) >= 300, labels
EOF
"$GPUWHY" report --format json -o "$T/a.json" "$T/a.gpuwhy" || [ $? -eq 1 ] || fail "report json"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/a.json" || fail "report json parses"

# a one-shot query waits for its rate window and reads the rate
rx=$("$GPUWHY" --sim "$T/pcie.json" query --query-gpu=pcie.rx --format=csv,noheader,nounits) || fail "query"
assert_ge "$rx" 360 "one-shot pcie.rx"
assert_le "$rx" 380 "one-shot pcie.rx"
echo "1 passed, 0 failed"
