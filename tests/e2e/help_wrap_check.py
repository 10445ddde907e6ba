#!/usr/bin/env python3
"""Lines of --help text that break oddly.

Reads help texts (files named on the command line) and names each line that
holds one or two words and is followed by a line of the same paragraph (same
indentation) whose first word would have fitted on it: the mark of a sentence
cut by a wrapped line that then stood alone ("..., the" / "host" / "and ...").
Widths are display columns (a CJK character takes two). Exit 1 when any is found.
"""
import sys
import unicodedata

WIDTH = 80


def cols(s):
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 0 if unicodedata.combining(c) else 1
               for c in s)


def odd_lines(text):
    lines = text.split("\n")
    for i in range(len(lines) - 1):
        a, b = lines[i].rstrip(), lines[i + 1].rstrip()
        if not a.strip() or not b.strip() or a.endswith(":"):
            continue
        lead_a, lead_b = len(a) - len(a.lstrip(" ")), len(b) - len(b.lstrip(" "))
        words = a.split()
        # CJK text has no spaces: a short line is a few characters
        short = len(words) <= 2 and cols(a.strip()) <= 16
        if not short or lead_a != lead_b:
            continue
        first = b.split()[0]
        if cols(a) + 1 + cols(first) <= WIDTH:
            yield i + 1, a, b


def main():
    bad = 0
    for path in sys.argv[1:]:
        with open(path, encoding="utf-8", errors="replace") as f:
            for n, a, b in odd_lines(f.read()):
                print(f"{path}:{n}: a short line continued on the next:\n  {a}\n  {b}")
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
