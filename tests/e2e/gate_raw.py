"""Raw HTTP/1.1 over a socket for the gate tests: send exact bytes, read the
answers strictly (status line, headers, Content-Length or chunked body),
and a canary server that counts every connection it is offered."""
import os
import socket
import threading
import time


def _recv_until(sock, buf, pred, deadline):
    """Read into buf until pred(buf) or EOF or the deadline; returns (buf, eof)."""
    while not pred(buf):
        left = deadline - time.monotonic()
        if left <= 0:
            return buf, False
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            return buf, False
        except ConnectionResetError:
            return buf, True
        if not chunk:
            return buf, True
        buf += chunk
    return buf, False


def parse_one(buf):
    """One response at the start of buf: (status, headers, body, rest), or None
    when buf does not hold a whole, well-formed one yet. Raises ValueError on
    bytes that are not a response."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        if len(buf) >= 5 and not buf.startswith(b"HTTP/"[:len(buf)]):
            raise ValueError("not a status line: %r" % buf[:80])
        return None
    head = buf[:end].decode("latin1").split("\r\n")
    parts = head[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise ValueError("bad status line %r" % head[0])
    headers = {}
    for line in head[1:]:
        k, sep, v = line.partition(":")
        if not sep or not k or k != k.strip():
            raise ValueError("bad header line %r" % line)
        headers.setdefault(k.strip().lower(), []).append(v.strip())
    rest = buf[end + 4:]
    cl = headers.get("content-length")
    te = headers.get("transfer-encoding")
    if cl is not None:
        if len(cl) != 1 or not cl[0].isdigit():
            raise ValueError("bad Content-Length %r" % cl)
        n = int(cl[0])
        if len(rest) < n:
            return None
        return int(parts[1]), headers, rest[:n], rest[n:]
    if te and te[-1].lower() == "chunked":
        body, pos = b"", 0
        while True:
            eol = rest.find(b"\r\n", pos)
            if eol < 0:
                return None
            size = int(rest[pos:eol].split(b";")[0], 16)
            if len(rest) < eol + 2 + size + 2:
                return None
            body += rest[eol + 2:eol + 2 + size]
            pos = eol + 2 + size + 2
            if size == 0:
                return int(parts[1]), headers, body, rest[pos:]
    raise ValueError("a response with neither Content-Length nor chunked body")


def parse_all(buf):
    """Every whole response at the start of buf and the bytes after them."""
    responses = []
    while True:
        one = parse_one(buf)
        if not one:
            return responses, buf
        responses.append(one[:3])
        buf = one[3]


def exchange(port, data, want=1, timeout=30.0, host="127.0.0.1", family=socket.AF_INET):
    """Send data on a new connection and read until want whole answers have
    come or the gate closed the connection. Returns (responses, trailing,
    closed): responses as (status, headers, body); trailing, bytes after
    the last whole answer; closed, whether the gate closed the connection.
    Raises ValueError on bytes that are not an answer."""
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    sock.connect((host, port))
    sock.sendall(data)
    deadline = time.monotonic() + timeout
    buf, closed = _recv_until(sock, b"", lambda b: len(parse_all(b)[0]) >= want, deadline)
    responses, trailing = parse_all(buf)
    if responses and not closed and any(
            "close" in [v.lower() for v in r[1].get("connection", [])] for r in responses):
        # The gate said it closes: the connection must end, with nothing more.
        more, closed = _recv_until(sock, b"", lambda b: False, deadline)
        trailing += more
    sock.close()
    return responses, trailing, closed


class Canary:
    """Listens on 127.0.0.1 and ::1 (the same port where it can) and counts
    every connection; it answers each with a body no upstream sends."""

    BODY = b"canary-was-reached"

    def __init__(self):
        self.count = 0
        self.lock = threading.Lock()
        self.socks = []
        s4 = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s4.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s4.bind(("127.0.0.1", 0))
        self.port = s4.getsockname()[1]
        self.socks.append(s4)
        try:
            s6 = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
            s6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            s6.bind(("::1", self.port))
            self.socks.append(s6)
            self.v6 = True
        except OSError:
            self.v6 = False
        for s in self.socks:
            s.listen(64)
            threading.Thread(target=self._serve, args=(s,), daemon=True).start()

    def _serve(self, s):
        while True:
            try:
                c, _ = s.accept()
            except OSError:
                return
            with self.lock:
                self.count += 1
            try:
                c.settimeout(1)
                c.recv(65536)
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" %
                          (len(self.BODY), self.BODY))
            except OSError:
                pass
            c.close()

    def connections(self):
        with self.lock:
            return self.count
