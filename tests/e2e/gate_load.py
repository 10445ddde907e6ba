#!/usr/bin/env python3
"""Closed-loop HTTP load for the gate's tests: N clients, each sending its
next request when the previous one is answered (keep-alive connections).
Prints one JSON object: status counts, latency percentiles (ms), requests/s.
"""
import argparse
import http.client
import json
import threading
import time
import urllib.parse


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("--clients", type=int, default=1)
    ap.add_argument("--requests", type=int, default=1, help="per client")
    ap.add_argument("--body", default=None, help="JSON body; {c} and {i} are replaced")
    ap.add_argument("--header", action="append", default=[])
    ap.add_argument("--timeout", type=float, default=60)
    a = ap.parse_args()
    u = urllib.parse.urlsplit(a.url)
    path = u.path + ("?" + u.query if u.query else "")
    hdrs = dict(h.split(": ", 1) for h in a.header)
    if a.body is not None:
        hdrs.setdefault("Content-Type", "application/json")
    lock = threading.Lock()
    status, lat, bodies = {}, [], []

    def client(c):
        conn = None
        for i in range(a.requests):
            body = a.body.replace("{c}", str(c)).replace("{i}", str(i)) if a.body else None
            t = time.monotonic()
            try:
                if conn is None:
                    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=a.timeout)
                conn.request("POST" if body is not None else "GET", path, body=body, headers=hdrs)
                r = conn.getresponse()
                data = r.read()
                code = r.status
                if r.getheader("Connection", "").lower() == "close":
                    conn.close()
                    conn = None
            except Exception:
                code, data = 0, b""
                if conn:
                    conn.close()
                conn = None
            dt = (time.monotonic() - t) * 1000
            with lock:
                status[code] = status.get(code, 0) + 1
                lat.append(dt)
                if len(bodies) < 4 and code != 200:
                    bodies.append(data[:300].decode("utf-8", "replace"))

    t0 = time.monotonic()
    th = [threading.Thread(target=client, args=(c,)) for c in range(a.clients)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    el = time.monotonic() - t0
    lat.sort()

    def pct(p):
        return round(lat[min(len(lat) - 1, int(p * len(lat)))], 3) if lat else None

    print(json.dumps({"count": len(lat), "status": {str(k): v for k, v in status.items()},
                      "p50_ms": pct(0.5), "p99_ms": pct(0.99), "elapsed_s": round(el, 3),
                      "rps": round(len(lat) / el, 2) if el else None, "errors": bodies}))


if __name__ == "__main__":
    main()
