# The real-GPU validation kit end to end on the simulated GPU: scripts/gpu-validate
# --sim --quick bundles nothing new (it uses a bundle made here), runs every section
# and writes its three files. Asserted: what does not depend on the host's load
# (identity, idle readings, topology, the NVML census, the trace, the OOM job, one
# recording and report per job); the diagnoses of the other jobs are the kit's
# findings, reported in its results, since a loaded host starves them for real.
. "$(dirname "$0")/lib.bash"
have_sim || skip "simulated GPU not built"
command -v python3 >/dev/null || skip "python3 missing (scripts/install-deps)"
src="${GPUWHY_SRC:?}"
"$src/scripts/gpu-bundle" "$GPUWHY_BUILD" "$T/kit" >/dev/null || fail "gpu-bundle"
size=$(du -sb "$T/kit" | cut -f1)
[ "$size" -le $((64 << 20)) ] || fail "bundle of $((size >> 20)) MiB"
# The bundled binary runs on the bundle's libraries alone (plus the C library).
env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH="$T/kit/lib" "$T/kit/bin/gpuwhy" --version >/dev/null ||
	fail "bundled gpuwhy does not start"
"$src/scripts/gpu-validate" --sim --quick --kit "$T/kit" --out "$T/out" >"$T/log" 2>&1
rc=$?
[ "$rc" -le 1 ] || { cat "$T/log"; fail "gpu-validate exit $rc"; }
[ "$(ls "$T/out" | sort | tr '\n' ' ')" = "recordings.tar.gz report.md results.json " ] ||
	fail "out folder: $(ls "$T/out")"
grep -q '^# gpuwhy on NVIDIA H100' "$T/out/report.md" || fail "report title: $(head -1 "$T/out/report.md")"
python3 - "$T/out/results.json" "$T/out/recordings.tar.gz" <<'PY' || fail "results"
import json, sys, tarfile
d = json.load(open(sys.argv[1]))
res = {(r["section"], r["check"]): r for r in d["results"]}
def need(section, check):
    r = res.get((section, check))
    assert r is not None, "no result for %s %s" % (section, check)
    assert r["status"] == "pass", "%s %s: %s %s" % (section, check, r["status"], r["detail"])
for c in [("startup", "gpuwhy --version"), ("startup", "bundled libsqlite3"), ("identity", "-L"),
          ("readings", "idle"), ("topology", "topo -m"), ("nvml", "census"), ("trace", "idle share"),
          ("jobs", "oom")]:
    need(*c)
# Every job ran and was diagnosed; every section reported.
jobs = d["measures"]["jobs"]
assert sorted(jobs) == sorted(["healthy", "starved", "fed", "tiny", "memidle", "oom"]), jobs
assert all(j["findings"] for j in jobs.values()), jobs
assert {r["section"] for r in d["results"]} >= {"startup", "identity", "readings", "topology", "nvml",
                                                "gpm", "jobs", "processes", "trace", "costs"}
# The census knows each entry point's return codes; the simulated H100 has no fan.
calls = d["measures"]["nvml_calls"]
assert "SUCCESS" in calls["nvmlInit_v2"]["returns"], calls["nvmlInit_v2"]
assert "NOT_SUPPORTED" in calls["nvmlDeviceGetFanSpeed"]["returns"], calls["nvmlDeviceGetFanSpeed"]
assert d["measures"]["scrape_ms"]["bytes"] > 0
names = tarfile.open(sys.argv[2]).getnames()
for j in jobs:
    assert "recordings/%s.gpuwhy" % j in names and "recordings/%s.report.txt" % j in names, names
print("gpu-validate --sim: %s" % d["counts"])
PY
tail -1 "$T/log"
echo "gpu_validate_sim: ok"
