#!/usr/bin/env bash
# A damaged recording is never read as another one. A recording is damaged
# 200 ways, by a fixed list of seeds: 100 times with 1 to 50 bytes changed at
# random places, 100 times cut at a random length. Each time `report --format
# json` gives exactly the undamaged file's report and exit status, or exit 3
# with one printable line naming the file; never another report, never a
# crash. `export` is held to the same on a fifth of them (an export may have
# printed rows before it finds a damaged one). GPUWHY_DAMAGE_SEEDS=N damages
# it 2N ways instead.
. "$(dirname "$0")/lib.bash"
have_sim || skip "simulated GPU not built"
command -v python3 >/dev/null || skip "python3 missing"

# Two GPUs, a followed command with steps, processes and events.
"$GPUWHY" --sim a100x2-pcie-degraded run -o "$T/good.gpuwhy" -i 100ms --no-summary -- \
	sh -c 'for i in 1 2 3 4 5 6 7 8 9 10; do echo "step $i"; sleep 0.05; done' >/dev/null 2>&1
[ -s "$T/good.gpuwhy" ] || fail "no recording to damage"

seeds=${GPUWHY_DAMAGE_SEEDS:-100}
python3 - "$GPUWHY" "$T/good.gpuwhy" "$T/d.gpuwhy" "$seeds" <<'PY' || fail "a damaged recording was misread"
import os, random, subprocess, sys

gpuwhy, good, path, seeds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
data = open(good, "rb").read()


def run(*args):
    return subprocess.run([gpuwhy, *args], capture_output=True, timeout=60)


def place(b):
    for s in ("", "-wal", "-shm"):
        if os.path.exists(path + s):
            os.unlink(path + s)
    with open(path, "wb") as f:
        f.write(b)


place(data)
want = run("report", path, "--format", "json")
assert want.returncode in (0, 1) and want.stdout, want.stderr
exports = {t: run("export", path, "--table", t) for t in ("gpu", "process", "meta")}
for t, r in exports.items():
    assert r.returncode == 0 and r.stdout, (t, r.stderr)

bad = []


def judge(what, r, want_out, want_rc, late=False):
    """'same', 'refused' or 'bad' (and why in bad). late: rows printed before a refusal
    are allowed (an export finds a damaged row when it reaches it)."""
    if r.returncode == want_rc and r.stdout == want_out and not r.stderr:
        return "same"
    err = r.stderr.decode("utf-8", "replace")
    if (r.returncode == 3 and err.count("\n") == 1 and err.startswith("gpuwhy: " + path + ": ")
            and (late or not r.stdout)):
        if all(c.isprintable() for c in err.rstrip("\n")) and "\ufffd" not in err:
            return "refused"
        bad.append(f"{what}: an unprintable error line: {r.stderr!r}")
        return "bad"
    bad.append(f"{what}: exit {r.returncode}, {len(r.stdout)} bytes out, stderr {r.stderr[:200]!r}")
    return "bad"


tally = {}
for kind in ("flip", "cut"):
    for seed in range(seeds):
        rnd = random.Random(f"{kind}-{seed}")
        b = bytearray(data)
        if kind == "flip":
            # a quarter with one byte changed (the hardest to notice), the rest up to 50
            for _ in range(1 if seed % 4 == 0 else 1 + seed % 50):
                i = rnd.randrange(len(b))
                b[i] ^= rnd.randrange(1, 256)
        else:
            b = b[: rnd.randrange(len(b))]
        place(bytes(b))
        what = f"{kind} seed {seed}"
        r = run("report", path, "--format", "json")
        v = judge(what, r, want.stdout, want.returncode)
        if kind == "cut" and v == "refused" and len(b) and b"truncated or corrupt" not in r.stderr:
            bad.append(f"{what}: a file cut short is not called so: {r.stderr!r}")
        tally[(kind, v)] = tally.get((kind, v), 0) + 1
        if seed % 5 == 0:
            for t, r in exports.items():
                judge(f"{what} export {t}", run("export", path, "--table", t), r.stdout, 0,
                      late=True)
for kind in ("flip", "cut"):
    print(f"record_damage: {kind}: {tally.get((kind, 'same'), 0)} identical reports, "
          f"{tally.get((kind, 'refused'), 0)} refused (exit 3, one line), "
          f"{tally.get((kind, 'bad'), 0)} different")
for line in bad[:20]:
    print("FAIL:", line, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
# A damaged schema whose text holds control bytes: every reader says so in one
# printable line naming the file, never echoing SQLite's quote of the damage
# (report and export, and trace and report --trace, which read it as an nsys
# export).
python3 - "$GPUWHY" "$T/good.gpuwhy" "$T/schema.gpuwhy" <<'PY' || fail "a damaged schema echoed"
import subprocess, sys
gpuwhy, good, path = sys.argv[1:]
d = bytearray(open(good, "rb").read())
i = d.find(b"CREATE TABLE meta(key")
assert i > 0
d[i + 18:i + 21] = b"\x07\x1b["  # "key" becomes BEL ESC [
open(path, "wb").write(d)
for args in (["report", path], ["export", path, "--table", "meta"], ["trace", path],
             ["report", good, "--trace", path]):
    r = subprocess.run([gpuwhy, *args], capture_output=True, timeout=60)
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode == 3, (args, r.returncode, err)
    assert err.count("\n") == 1 and err.startswith("gpuwhy: " + path + ": "), (args, err)
    assert all(c.isprintable() for c in err.rstrip("\n")), (args, err)
    assert "truncated or corrupt" in err, (args, err)
PY
echo "record_damage: ok"
