#!/usr/bin/env python3
"""WebSocket helpers for tests/e2e/gate_ws.sh, standard library only.

  gate_ws.py serve PORTFILE      an upstream: /ws* echoes every message back
                                 (after a greeting sent with its 101), /nows
                                 answers 404, GET /health answers 200 "ok";
                                 writes its port to PORTFILE
  gate_ws.py echo PORT PATH N    connect, check the handshake and the greeting,
                                 send N messages (the last one 300 KB), check
                                 each echo, close; prints "ok"
  gate_ws.py status PORT PATH    print the status of the upgrade answer
  gate_ws.py hold PORT PATH SECS connect, then wait up to SECS for the gate to
                                 close the connection; prints "closed" or "open"
"""
import base64
import hashlib
import os
import socket
import struct
import sys
import threading

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def accept_of(key):
    return base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()


def read_head(sock):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            raise EOFError("closed before the head ended")
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return lines[0], headers, rest


class Reader:
    def __init__(self, sock, rest=b""):
        self.sock, self.buf = sock, rest

    def take(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("closed mid-frame")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def frame(self):
        b0, b1 = self.take(2)
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack("!H", self.take(2))[0]
        elif n == 127:
            n = struct.unpack("!Q", self.take(8))[0]
        mask = self.take(4) if b1 & 0x80 else None
        data = self.take(n)
        if mask:
            data = bytes(c ^ mask[i % 4] for i, c in enumerate(data))
        return b0 & 0x0F, data


def frame(opcode, data, masked):
    n = len(data)
    head = bytes([0x80 | opcode])
    mbit = 0x80 if masked else 0
    if n < 126:
        head += bytes([mbit | n])
    elif n < 65536:
        head += bytes([mbit | 126]) + struct.pack("!H", n)
    else:
        head += bytes([mbit | 127]) + struct.pack("!Q", n)
    if not masked:
        return head + data
    mask = os.urandom(4)
    return head + mask + bytes(c ^ mask[i % 4] for i, c in enumerate(data))


def serve_one(conn):
    try:
        line, headers, rest = read_head(conn)
        path = line.split(" ")[1]
        if headers.get("upgrade", "").lower() != "websocket":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n")
            return
        if not path.startswith("/ws"):
            conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return
        acc = accept_of(headers["sec-websocket-key"])
        hello = frame(1, b'{"type":"status","path":"%s"}' % path.encode(), False)
        conn.sendall(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                      "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n" % acc).encode() + hello)
        r = Reader(conn, rest)
        while True:
            op, data = r.frame()
            if op == 8:
                conn.sendall(frame(8, data, False))
                return
            conn.sendall(frame(op, data, False))
    except (EOFError, OSError, KeyError, IndexError):
        pass
    finally:
        conn.close()


def serve(portfile):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(64)
    with open(portfile + ".tmp", "w") as f:
        f.write(str(s.getsockname()[1]))
    os.rename(portfile + ".tmp", portfile)
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve_one, args=(c,), daemon=True).start()


def handshake(port, path):
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
                  "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                  "Sec-WebSocket-Version: 13\r\n\r\n" % (path, port, key)).encode())
    line, headers, rest = read_head(sock)
    return sock, key, line, headers, rest


def echo(port, path, n):
    sock, key, line, headers, rest = handshake(port, path)
    assert line.split(" ")[1] == "101", line
    assert headers.get("sec-websocket-accept") == accept_of(key), headers
    assert headers.get("upgrade", "").lower() == "websocket", headers
    r = Reader(sock, rest)
    op, data = r.frame()
    assert op == 1 and b'"status"' in data and path.encode() in data, (op, data)
    for i in range(n):
        msg = (b"message %d " % i) * (30000 if i == n - 1 else 1)
        sock.sendall(frame(2 if i % 2 else 1, msg, True))
        op, data = r.frame()
        assert data == msg, "echo %d differs (%d bytes, %d sent)" % (i, len(data), len(msg))
    sock.sendall(frame(8, b"\x03\xe8", True))
    op, data = r.frame()
    assert op == 8, op
    assert sock.recv(1) == b""  # the upstream's close reaches the client
    print("ok")


def status(port, path):
    sock, _, line, _, _ = handshake(port, path)
    print(line.split(" ")[1])
    sock.close()


def hold(port, path, secs):
    sock, _, line, _, rest = handshake(port, path)
    assert line.split(" ")[1] == "101", line
    sock.settimeout(float(secs))
    try:
        while sock.recv(65536):
            pass
        print("closed")
    except socket.timeout:
        print("open")


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "serve":
        serve(sys.argv[2])
    elif cmd == "echo":
        echo(int(sys.argv[2]), sys.argv[3], int(sys.argv[4]))
    elif cmd == "status":
        status(int(sys.argv[2]), sys.argv[3])
    elif cmd == "hold":
        hold(int(sys.argv[2]), sys.argv[3], sys.argv[4])
