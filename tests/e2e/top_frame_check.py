#!/usr/bin/env python3
"""Check a text frame of `gpuwhy top` (a --once frame or a tmux capture).

    top_frame_check.py FILE COLS [ROWS]

Fails (exit 1, saying where) when a line is wider than COLS display columns
(a CJK character takes two, as the terminal draws it), when the frame has
more than ROWS lines, or when the process list's columns do not line up:
under the titles (the line starting with "PID"), each row's PID ends where
the PID title ends; with MEM_TITLE set (the GPU memory title, translated or
not), the row's GPU memory ends where that title ends; with CMD_TITLE and
CMD_TEXT set, a row holding CMD_TEXT has it start where CMD_TITLE starts.
WIDTH_ONLY=1 checks the width and the rows alone (a help box covers the list).
"""
import os
import re
import sys
import unicodedata


def width(s):
    return sum(
        0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1
        for ch in s
    )


def col(line, idx):
    """Display column at which line[idx] starts."""
    return width(line[:idx])


def check_rows(lines, head, bad):
    h = lines[head]

    def title_end(t):
        """Column after title t and the sort arrow that may follow it."""
        m = re.compile(re.escape(t) + r"\S*").search(h)
        return col(h, m.end()) if m else None

    pid_end = title_end("PID")
    mem = os.environ.get("MEM_TITLE")
    mem_end = title_end(mem) if mem else None
    cmd_title, cmd_text = os.environ.get("CMD_TITLE"), os.environ.get("CMD_TEXT")
    cmd_col = col(h, h.find(cmd_title)) if cmd_title and cmd_title in h else None
    rows = 0
    for line in lines[head + 1 :]:
        m = re.match(r"^ *(\d+) +\S+ +(\d+) +(\S+) ", line)
        if not m:
            break
        rows += 1
        if col(line, m.end(1)) != pid_end:
            bad.append(f"PID ends at column {col(line, m.end(1))}, its title at {pid_end}: {line}")
        if mem_end is not None and col(line, m.end(3)) != mem_end:
            bad.append(f"GPU memory ends at column {col(line, m.end(3))}, its title at {mem_end}: {line}")
        i = line.find(cmd_text) if cmd_text else -1
        if cmd_col is not None and i >= 0 and col(line, i) != cmd_col:
            bad.append(f"the command starts at column {col(line, i)}, its title at {cmd_col}: {line}")
    if rows == 0:
        bad.append("no process rows under the titles")


def main():
    path, cols = sys.argv[1], int(sys.argv[2])
    rows = int(sys.argv[3]) if len(sys.argv) > 3 else None
    lines = open(path, encoding="utf-8").read().rstrip("\n").split("\n")
    bad = []
    if rows is not None and len(lines) > rows:
        bad.append(f"{len(lines)} lines, more than {rows}")
    for n, line in enumerate(lines, 1):
        if width(line) > cols:
            bad.append(f"line {n} is {width(line)} columns wide (> {cols}): {line}")
    head = next((i for i, l in enumerate(lines) if re.match(r"^ *PID\S* ", l)), None)
    if os.environ.get("WIDTH_ONLY") == "1":
        pass
    elif head is None:
        bad.append("no process list titles (a line starting with PID)")
    else:
        check_rows(lines, head, bad)
    for b in bad:
        print("top_frame_check: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
