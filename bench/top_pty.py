#!/usr/bin/env python3
"""Run a terminal program in a pseudo-terminal of a fixed size and measure it.

    top_pty.py COLS ROWS WARMUP SECS -- CMD [ARG...]

The program's screen output is read as it comes and never drawn. A frame
is a burst of output: bytes that follow a silence of at least GAP_MS
(environment, default 100 ms). Curses programs write one screen update in
one burst, so at refresh intervals well above the gap the count of bursts is
the count of screen refreshes, whatever the program. After WARMUP seconds
(start-up and first frames not counted) the program's CPU time (utime +
stime of /proc/PID/stat, every thread, clock ticks) is taken, and again
SECS seconds later; then the program is sent 'q' (and SIGTERM if it does
not leave). ON_CMD and OFF_CMD (environment), when set, are run by the
shell at those two moments with PID set to the program's process id (to
switch a profiler's counting on and to dump it). SPLIT_LIBS, a ':'-separated
list of files, adds how much of the RSS their mappings are (split_kib). Prints one line of JSON: frames, cpu_s, wall_s, peak RSS
(VmHWM) and the resident anonymous and file pages at the end in KiB, bytes written, and the utime+stime in clock ticks.
"""
import glob
import json
import os
import pty
import select
import signal
import struct
import sys
import termios
import fcntl
import subprocess
import time


def split_kib(pid, paths):
    """Resident KiB of the mappings of these files (e.g. a library and its dependencies)."""
    total, name = 0, None
    try:
        with open(f"/proc/{pid}/smaps") as f:
            for line in f:
                head = line.split()
                if "-" in head[0] and not head[0].endswith(":"):
                    name = head[5] if len(head) > 5 else None
                elif head[0] == "Rss:" and name in paths:
                    total += int(head[1])
    except OSError:
        return 0
    return total


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # fields[0] is state (field 3): utime is field 14, stime field 15
    return int(fields[11]) + int(fields[12])


def run_ns(pid):
    """CPU nanoseconds of the live threads (schedstat): finer than clock ticks."""
    total = 0
    for path in glob.glob(f"/proc/{pid}/task/*/schedstat"):
        try:
            with open(path) as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total


def hook(name, pid):
    cmd = os.environ.get(name)
    if cmd:
        subprocess.run(cmd, shell=True, env=dict(os.environ, PID=str(pid)),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def status_kib(pid):
    """VmHWM, RssAnon and RssFile of /proc/PID/status, in KiB."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key = line.split(":")[0]
            if key in ("VmHWM", "RssAnon", "RssFile"):
                out[key] = int(line.split()[1])
    return out


def main():
    if len(sys.argv) < 7 or sys.argv[5] != "--":
        sys.exit("usage: top_pty.py COLS ROWS WARMUP SECS -- CMD [ARG...]")
    cols, rows = int(sys.argv[1]), int(sys.argv[2])
    warmup, secs = float(sys.argv[3]), float(sys.argv[4])
    cmd = sys.argv[6:]
    gap = float(os.environ.get("GAP_MS", "100")) / 1000.0
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["COLUMNS"], os.environ["LINES"] = str(cols), str(rows)
        os.environ.setdefault("TERM", "xterm-256color")
        try:
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    os.kill(pid, signal.SIGWINCH)
    start = time.monotonic()
    t_on = start + warmup
    t_off = t_on + secs
    last = 0.0
    frames = nbytes = 0
    counting = False
    c0 = 0
    while True:
        now = time.monotonic()
        if not counting and now >= t_on:
            hook("ON_CMD", pid)
            counting, c0, n0 = True, cpu_ticks(pid), run_ns(pid)
            w0 = time.monotonic()
        if now >= t_off:
            break
        r, _, _ = select.select([fd], [], [], min(0.05, max(0.0, t_off - now)))
        if not r:
            continue
        try:
            data = os.read(fd, 65536)
        except OSError:
            sys.exit(f"top_pty.py: {cmd[0]} exited early")
        now = time.monotonic()
        if counting:
            nbytes += len(data)
            if now - last >= gap:
                frames += 1
        last = now
    c1, n1 = cpu_ticks(pid), run_ns(pid)
    w1 = time.monotonic()
    hook("OFF_CMD", pid)
    mem = status_kib(pid)
    split = [p for p in os.environ.get("SPLIT_LIBS", "").split(":") if p]
    mem["split"] = split_kib(pid, set(split)) if split else 0
    os.write(fd, b"q")
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                os.read(fd, 65536)
            except OSError:
                break
        if os.waitpid(pid, os.WNOHANG)[0]:
            break
    else:
        os.kill(pid, signal.SIGTERM)
        os.waitpid(pid, 0)
    hz = os.sysconf("SC_CLK_TCK")
    print(json.dumps({"pid": pid, "frames": frames, "cpu_s": (c1 - c0) / hz, "ticks": c1 - c0,
                      "run_s": round((n1 - n0) / 1e9, 4),
                      "wall_s": round(w1 - w0, 2), "hwm_kib": mem.get("VmHWM", 0),
                      "anon_kib": mem.get("RssAnon", 0), "file_kib": mem.get("RssFile", 0),
                      "split_kib": mem["split"],
                      "bytes": nbytes}))


if __name__ == "__main__":
    main()
