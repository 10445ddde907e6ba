#!/usr/bin/env python3
"""Check the rendered man pages against gpuwhy's own option tables.

  man_check.py GPUWHY MANDIR RENDERED

RENDERED holds each page as `man -l` printed it (NAME.txt). Every option of
every command, in long and short spelling, must appear in its page's OPTIONS
section, and every option of a subcommand in that subcommand's part of the
SUBCOMMANDS section; the global options in gpuwhy(1)'s GLOBAL OPTIONS; every
command has a page that gpuwhy(1) lists. Prints one line per fault."""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import opt_tables  # noqa: E402


def sections(text):
    """{SECTION: text} of a rendered page: section titles stand in column 0."""
    out, cur = {}, None
    for line in text.split("\n"):
        if re.match(r"^[A-Z][A-Z ]+$", line):
            cur = line.strip()
            out[cur] = ""
        elif cur:
            out[cur] += line + "\n"
    return out


def subsections(text):
    """{title: text} of a section: subsection titles are indented by three."""
    out, cur = {}, None
    for line in text.split("\n"):
        if re.match(r"^   \S", line):
            cur = line.strip()
            out[cur] = ""
        elif cur:
            out[cur] += line + "\n"
    return out


def spellings(table):
    dash = "-" if table["long_only"] else "--"
    for o in table["options"]:
        if o["kind"] == "group" or o["hidden"]:
            continue
        if o["long"]:
            yield dash + o["long"]
        if o["short"]:
            yield "-" + o["short"]


def has_word(text, word):
    return re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(word), text) is not None


def terms(text):
    """The options a section describes: the spellings that begin its items
    ("-o, --output FILE" at the items' indentation), not every mention."""
    out = set()
    for line in text.split("\n"):
        if re.match(r"^ {7}-", line):
            out.update(re.findall(r"(?:^ {7}|, )(--?[A-Za-z0-9?][\w-]*)", line))
    return out


def check_table(faults, where, table, text):
    described = terms(text)
    for w in spellings(table):
        if w not in described:
            faults.append("%s: option %s is not in its page" % (where, w))


def read(path):
    with open(path, encoding="utf-8") as f:
        # groff may print a hyphen or a minus sign for '-'
        return f.read().replace("\u2010", "-").replace("\u2212", "-")


def main():
    gpuwhy, mandir, rendered = sys.argv[1:4]
    tables = opt_tables.load(gpuwhy)
    faults = []
    main_page = sections(read(os.path.join(rendered, "gpuwhy.txt")))
    check_table(faults, "gpuwhy(1)", tables["main"], main_page.get("GLOBAL OPTIONS", ""))
    for c in tables["commands"]:
        name = "gpuwhy-" + c["name"]
        if not has_word(main_page.get("COMMANDS", ""), name + "(1)"):
            faults.append("gpuwhy(1) does not list %s(1)" % name)
        if not os.path.exists(os.path.join(mandir, name + ".1")):
            faults.append("no page %s.1" % name)
            continue
        page = sections(read(os.path.join(rendered, name + ".txt")))
        for s in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS"):
            if not page.get(s, "").strip():
                faults.append("%s(1): no %s" % (name, s))
        check_table(faults, name + "(1)", c["table"], page.get("OPTIONS", ""))
        subs = subsections(page.get("SUBCOMMANDS", ""))
        for s in c["subs"]:
            title = s["table"]["name"]
            if title not in subs:
                faults.append("%s(1): no part for %s" % (name, title))
                continue
            check_table(faults, "%s(1), %s" % (name, title), s["table"], subs[title])
    if not os.path.exists(os.path.join(mandir, "gpuwhy-recording.5")):
        faults.append("no page gpuwhy-recording.5")
    for f in faults:
        print(f)
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
