#!/usr/bin/env python3
"""Compare `gpuwhy trace --format csv` with HolisticTraceAnalysis' reference CSVs.

usage: trace_hta_compare.py GPUWHY_CSV HTA_REFERENCE_DIR CASE_NAME [--float]

--float: the references come from HTA_DISABLE_NS_ROUNDING=1 and gpuwhy ran with --no-ns-rounding.
HTA then keeps microseconds as doubles shifted by the earliest ts; at the magnitude of epoch
timestamps (4e12 us) a double's spacing is 2**-10 us, so its times carry errors under 1 ns
(435587.5616796875 for 435587.561): times that HTA does not round are compared within 0.001 us.
The idle time per stream, which HTA rounds to 2 decimals, is compared exactly.

Prints one markdown table row per analysis (match, or the first differences) and exits 1 when
an analysis differs. Only the standard library is used.
"""
import csv
import io
import math
import os
import sys


def tables(text):
    """Split gpuwhy's CSV output into {name: [dict rows]}."""
    out, name, buf = {}, None, []

    def flush():
        if name is not None:
            out[name] = list(csv.DictReader(io.StringIO("".join(buf))))

    for line in text.splitlines(keepends=True):
        if line.startswith("# "):
            flush()
            name, buf = line[2:].strip(), []
        elif line.strip():
            buf.append(line)
    flush()
    return out


def num(s):
    s = (s or "").strip()
    return math.nan if s == "" else float(s)


def same(a, b, rel=0.0, abs_=0.0):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= max(abs_, rel * max(abs(a), abs(b)))


def ref_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def ref_multiheader(path):
    """pandas describe() written with a two-level header: rank,key,count,mean,..."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    stats = rows[1][2:]
    return [dict(zip(["rank", "key"] + stats, r)) for r in rows[3:] if r]


class Check:
    def __init__(self):
        self.diffs = []

    def diff(self, msg):
        if len(self.diffs) < 4:
            self.diffs.append(msg)
        elif len(self.diffs) == 4:
            self.diffs.append("...")


FLOAT_NOISE = 0.0  # 0.001 us with --float (see above)


def temporal(g, ref):
    c = Check()
    mine = {r["rank"]: r for r in g["temporal_breakdown"]}
    for r in ref:
        m = mine.get(r["rank"])
        if not m:
            c.diff(f"rank {r['rank']} missing")
            continue
        for col in r:
            if col != "rank" and not same(num(m[col]), num(r[col]), abs_=FLOAT_NOISE):
                c.diff(f"rank {r['rank']} {col}: {m[col]} vs HTA {r[col]}")
    return c


def idle(g, ref):
    c = Check()
    mine = {(r["rank"], r["stream"], r["idle_category"]): r for r in g["idle_time_breakdown"]}
    for r in ref:
        k = (r["rank"], r["stream"], r["idle_category"])
        m = mine.pop(k, None)
        if not m:
            c.diff(f"{k} missing")
            continue
        if not same(num(m["idle_time"]), num(r["idle_time"]), abs_=0 if FLOAT_NOISE else 0.5):
            c.diff(f"{k} idle_time {m['idle_time']} vs HTA {r['idle_time']}")
        if not same(num(m["idle_time_ratio"]), num(r["idle_time_ratio"])):
            c.diff(f"{k} ratio {m['idle_time_ratio']} vs HTA {r['idle_time_ratio']}")
    for k in mine:
        if k[0] in {r["rank"] for r in ref}:
            c.diff(f"{k} not in HTA")
    return c


def idle_stats(g, ref):
    c = Check()
    mine = {(r["rank"], r["stream"], r["idle_category"]): r for r in g["idle_interval_stats"]}
    for r in ref:
        k = (r["rank"], r["stream"], r["idle_category"])
        m = mine.get(k)
        if not m:
            c.diff(f"{k} missing")
            continue
        for col in ("count", "mean", "std", "min", "25%", "50%", "75%", "max"):
            if not same(num(m[col]), num(r[col]), abs_=0.0101):
                c.diff(f"{k} {col} {m[col]} vs HTA {r[col]}")
    return c


def kernel_types(g, ref):
    c = Check()
    mine = {r["kernel_type"]: r for r in g["kernel_type_breakdown"]}
    for r in ref:
        m = mine.pop(r["kernel_type"], None)
        if num(r["sum"]) == 0 and not m:
            continue  # zero-length labels come from HTA's tie order
        if not m:
            c.diff(f"{r['kernel_type']} missing")
            continue
        if not same(num(m["sum"]), num(r["sum"])) or not same(
            num(m["percentage"]), num(r["percentage"])
        ):
            c.diff(f"{r['kernel_type']}: {m['sum']} {m['percentage']}% vs HTA "
                   f"{r['sum']} {r['percentage']}%")
    for k in mine:
        c.diff(f"{k} not in HTA")
    return c


def kernels(g, ref):
    c = Check()
    mine = {(r["name"], r["kernel_type"], r["rank"]): r for r in g["kernel_breakdown"]}
    for r in ref:
        k = (r["name"], r["kernel_type"], r["rank"])
        m = mine.pop(k, None)
        if not m:
            c.diff(f"{k[0][:40]} {k[1]} rank {k[2]} missing")
            continue
        for col in ("sum (us)", "max (us)", "min (us)", "stddev", "mean (us)"):
            if not same(num(m[col]), num(r[col]), rel=1e-9, abs_=1e-9):
                c.diff(f"{k[0][:40]} {col} {m[col]} vs HTA {r[col]}")
    for k in mine:
        if k[2] in {r["rank"] for r in ref}:
            c.diff(f"{k[0][:40]} {k[1]} rank {k[2]} not in HTA")
    return c


def overlap(g, ref):
    c = Check()
    mine = {r["rank"]: r for r in g["comm_comp_overlap"]}
    for r in ref:
        m = mine.get(r["rank"])
        if not m or not same(num(m["comp_comm_overlap_pctg"]), num(r["comp_comm_overlap_pctg"])):
            c.diff(f"rank {r['rank']}: {m and m['comp_comm_overlap_pctg']} vs HTA "
                   f"{r['comp_comm_overlap_pctg']}")
    return c


def launches(g, refdir):
    c = Check()
    summary = {r["rank"]: r for r in g["launch_summary"]}
    for f in sorted(os.listdir(refdir)):
        if not f.startswith("launch_stats_rank"):
            continue
        rank = f[len("launch_stats_rank"):-4]
        ref = ref_csv(os.path.join(refdir, f))
        mine = [r for r in g["launch_stats"] if r["rank"] == rank]
        if len(mine) != len(ref):
            c.diff(f"rank {rank}: {len(mine)} pairs vs HTA {len(ref)}")
        for i, (m, r) in enumerate(zip(mine, ref)):
            if any(not same(num(m[k]), num(r[k]), abs_=FLOAT_NOISE) for k in r):
                c.diff(f"rank {rank} row {i}: {list(m.values())[1:]} vs HTA {list(r.values())}")
        cpu = [num(r["cpu_duration"]) for r in ref]
        gpu = [num(r["gpu_duration"]) for r in ref]
        delay = [num(r["launch_delay"]) for r in ref]
        want = {
            "short_kernels": sum(1 for a, b in zip(cpu, gpu) if a <= 50 and b < a),
            "runtime_outliers": sum(1 for a in cpu if a > 50),
            "launch_delay_outliers": sum(1 for d in delay if d > 100),
        }
        s = summary.get(rank, {})
        for k, v in want.items():
            if int(s.get(k, -1)) != v:
                c.diff(f"rank {rank} {k}: {s.get(k)} vs HTA {v}")
    return c


def described(g, table, refpath, keycol):
    c = Check()
    mine = {(r["rank"], r[keycol]): r for r in g[table]}
    for r in ref_multiheader(refpath):
        k = (r["rank"], r["key"])
        m = mine.get(k)
        if not m:
            c.diff(f"{k} missing")
            continue
        for col in ("count", "mean", "std", "min", "25%", "50%", "75%", "max"):
            if not same(num(m[col]), num(r[col]), rel=1e-9, abs_=1e-12):
                c.diff(f"{k} {col} {m[col]} vs HTA {r[col]}")
    return c


def main():
    global FLOAT_NOISE
    gpuwhy_csv, refdir, case = sys.argv[1:4]
    if "--float" in sys.argv[4:]:
        FLOAT_NOISE = 0.001
    with open(gpuwhy_csv) as f:
        g = tables(f.read())
    ref = lambda n: ref_csv(os.path.join(refdir, n))  # noqa: E731
    checks = [
        ("temporal breakdown", lambda: temporal(g, ref("temporal_breakdown.csv"))),
        ("idle time per stream", lambda: idle(g, ref("idle_time_breakdown.csv"))),
        ("idle interval stats", lambda: idle_stats(g, ref("idle_interval_stats.csv"))),
        ("kernel type breakdown", lambda: kernel_types(g, ref("kernel_type_breakdown.csv"))),
        ("kernel breakdown", lambda: kernels(g, ref("kernel_breakdown.csv"))),
        ("comm/comp overlap", lambda: overlap(g, ref("comm_comp_overlap.csv"))),
        ("launch stats", lambda: launches(g, refdir)),
        ("queue length summary", lambda: described(
            g, "queue_length_summary", os.path.join(refdir, "queue_length_summary.csv"),
            "stream")),
        ("memory bandwidth summary", lambda: described(
            g, "memory_bw_summary", os.path.join(refdir, "memory_bw_summary.csv"), "name")),
    ]
    failed = False
    for name, fn in checks:
        res = fn()
        failed |= bool(res.diffs)
        print(f"| {case} | {name} | {'match' if not res.diffs else '; '.join(res.diffs)} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
