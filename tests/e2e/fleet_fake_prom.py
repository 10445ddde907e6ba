#!/usr/bin/env python3
"""A stand-in for Prometheus's /api/v1/query_range on 127.0.0.1, for the answers a real one
gives rarely: python3 fleet_fake_prom.py PORT MODE [FROM] (FROM: the epoch of sample 0).

MODE 4xx: every query is refused as Prometheus refuses a bad selector (HTTP 400, bad_data).
MODE data: two nodes of two GPUs with what real fleets have: node n1's GPU 1 has a gap (no
  points for samples 100..139), node n1's GPU 0 comes twice (two exporters, instance a and b),
  node n2's clock is 7 s ahead (its points are off the step grid), n2's GPU 1 shows Xid 79 at
  sample 50, back to 0 at 60 (the gauge reset) and 79 again from 80; only utilization,
  framebuffer and Xid series exist, the other metrics answer with no series.
MODE data-5xx: as data, but the power query fails with HTTP 503 every time.
"""
import http.server
import json
import re
import sys
import urllib.parse

PORT, MODE = int(sys.argv[1]), sys.argv[2]
T0 = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0


def series(name, host, gpu, start, end, step, value, inst="x", skew=0.0):
    pts, k = [], 0
    t0 = start
    while t0 + k * step <= end + 1e-9:
        v = value(k)
        if v is not None:
            pts.append([t0 + k * step + skew, str(v)])
        k += 1
    return {"metric": {"__name__": name, "Hostname": host, "gpu": str(gpu), "instance": inst,
                       "UUID": "GPU-%s-%d" % (host, gpu)}, "values": pts}


def answer(query, start, end, step):
    # the first name: fleet asks for the utilization "or" the Xid-only GPUs, which have none here
    name = re.match(r"[A-Za-z_:][A-Za-z0-9_:]*", query).group(0)
    k0 = lambda k: int(round((start - T0) / step)) + k  # sample index from the range's start
    res = []
    if name == "DCGM_FI_DEV_GPU_UTIL":
        res.append(series(name, "n1", 0, start, end, step, lambda k: 90, inst="a"))
        res.append(series(name, "n1", 0, start, end, step, lambda k: 90, inst="b"))
        res.append(series(name, "n1", 1, start, end, step,
                          lambda k: None if 100 <= k0(k) < 140 else 80))
        res.append(series(name, "n2", 0, start, end, step, lambda k: 95, skew=7))
        res.append(series(name, "n2", 1, start, end, step, lambda k: 95, skew=7))
    elif name in ("DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE"):
        v = 40000 if name.endswith("USED") else 41000
        for h, g in (("n1", 0), ("n1", 1), ("n2", 0), ("n2", 1)):
            res.append(series(name, h, g, start, end, step, lambda k: v,
                              skew=7 if h == "n2" else 0))
    elif name == "DCGM_FI_DEV_XID_ERRORS":
        for h, g in (("n1", 0), ("n1", 1), ("n2", 0)):
            res.append(series(name, h, g, start, end, step, lambda k: 0))
        res.append(series(name, "n2", 1, start, end, step,
                          lambda k: 79 if 50 <= k0(k) < 60 or k0(k) >= 80 else 0, skew=7))
    return res


class H(http.server.BaseHTTPRequestHandler):
    def reply(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        form = urllib.parse.parse_qs(self.rfile.read(n).decode())
        q = form["query"][0]
        if MODE == "4xx":
            return self.reply(400, {"status": "error", "errorType": "bad_data",
                                    "error": "1:5: parse error: unexpected character"})
        if MODE == "data-5xx" and q.startswith("DCGM_FI_DEV_POWER_USAGE"):
            return self.reply(503, {"status": "error", "errorType": "unavailable",
                                    "error": "overloaded"})
        start, end, step = (float(form[k][0]) for k in ("start", "end", "step"))
        self.reply(200, {"status": "success",
                         "data": {"resultType": "matrix", "result": answer(q, start, end, step)}})

    def log_message(self, *a):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", PORT), H).serve_forever()
