# Every nvidia-smi command gpuwhy tells a user to run (advice, doctor hints,
# messages, their translations, docs/ and the READMEs) must work on the real
# nvidia-smi 590: its options, subcommands, -q -d sections and --query-gpu
# fields are kept as facts in tests/fixtures/nvidia-smi/. gpuwhy's own query
# may accept more (-q -d PCIE); what it advises may not.
. "$(dirname "$0")/lib.bash"
SRC="$(cd "$(dirname "$0")/../.." && pwd)"
python3 - "$SRC" <<'PY' || fail "an nvidia-smi command the real tool rejects"
import glob, os, re, sys
src = sys.argv[1]
fx = os.path.join(src, "tests/fixtures/nvidia-smi")
opts, subs, sections = {}, {}, set()
for line in open(os.path.join(fx, "options-590.txt")):
    w = line.split()
    if not w or w[0].startswith("#"):
        continue
    if w[0] == "opt":
        opts[w[1]] = w[2] if len(w) > 2 else ""
    elif w[0] == "sub":
        subs.setdefault(w[1], {})
    elif w[0] == "subopt":
        subs.setdefault(w[1], {})[w[2]] = w[3] if len(w) > 3 else ""
    elif w[0] == "section":
        sections.add(w[1])
fields = {f.split(" [")[0].strip() for f in open(os.path.join(fx, "h100-590-query-gpu-header.txt")).read().split(",")}
for line in open(os.path.join(fx, "aliases-590.txt")):
    fields.update(line.split())
fields.discard("")

def clean(tok):
    """A word without the prose around it: -q's, -m:, 1, (but ... stays)."""
    tok = re.sub(r"'s$", "", tok).rstrip(",:;")
    return tok[:-1] if tok.endswith(".") and not tok.endswith("..") else tok

def check(cmd):
    """The problems of one command line after 'nvidia-smi' (None: not a command, but prose)."""
    toks = cmd.split()
    if not toks:
        return None
    table = opts
    if toks[0] in subs:
        table, toks = subs[toks[0]], toks[1:]
    elif not toks[0].startswith("-"):
        return None
    bad, i = [], 0
    while i < len(toks):
        t = clean(toks[i])
        i += 1
        if not t.startswith("-"):
            break  # the prose after the command
        name, eq, val = t.partition("=")
        if name not in table:
            bad.append("no option " + name)
            continue
        kind = table[name]
        # a long option takes its value after "="; a short one the next word,
        # unless the text only names the option ("lower it with nvidia-smi -pl")
        nxt = clean(toks[i]) if i < len(toks) else ""
        if kind == "ARG" and not eq and not name.startswith("--") and nxt and not nxt.startswith("-"):
            val, i = nxt, i + 1
        elif kind == "ARG?" and not eq and re.fullmatch(r"[0-9]+|bus|N", nxt):
            val, i = nxt, i + 1
        val = val.replace("[", "").replace("]", "")
        if val and table is opts and name in ("-d", "--display"):
            bad += ["no -d section " + s for s in val.split(",") if s not in sections]
        if val and name == "--query-gpu":
            bad += ["no field " + f for f in val.split(",") if f not in fields and f != "..."]
        if val and name == "--format":
            bad += ["no format " + f for f in val.split(",") if f not in ("csv", "noheader", "nounits")]
    return bad

# the checker rejects what the real tool rejects
assert check("-q -d PCIE") == ["no -d section PCIE"], check("-q -d PCIE")
assert check("--query-gpu=pcie.replay_counter --format=csv") == ["no field pcie.replay_counter"]
assert check("-q -x") == [] and check("has no PCIE section") is None
assert check("--query-gpu=... --format=csv[,noheader] -l N") == [] and check("-pl W") == []
assert check("topo -m's matrix") == [] and check("-q -d CLOCK,PCIE") == ["no -d section PCIE"]

END = re.compile(r'["`)\n;|>）；，、。（]')
def commands(path, text):
    for m in re.finditer(r"nvidia-smi(?=[ \t])", text):
        rest = text[m.end():]
        e = END.search(rest)
        cmd = rest[: e.start() if e else len(rest)]
        yield text.count("\n", 0, m.start()) + 1, cmd.strip()

files = glob.glob(os.path.join(src, "src/**/*.c"), recursive=True)
files += [f for f in glob.glob(os.path.join(src, "docs/*.md")) if "/pending-" not in f]
files += [os.path.join(src, f) for f in ("README.md", "README.zh_CN.md", "po/zh_CN.po")]
# README lines quoted in a pending change (docs/pending-*.md) wait for it
pending = "".join(open(f, encoding="utf-8").read() for f in glob.glob(os.path.join(src, "docs/pending-*.md")))
def waiting(path, text, line):
    return os.path.basename(path).startswith("README") and text.split("\n")[line - 1].strip() in pending
n, problems = 0, []
for path in files:
    text = open(path, encoding="utf-8").read()
    if path.endswith(".c"):  # adjacent literals are one string
        text = re.sub(r'"\s*\n\s*"', "", text)
    elif path.endswith(".po"):
        text = re.sub(r'"\n"', "", text)
    for line, cmd in commands(path, text):
        bad = check(cmd)
        if bad is None:
            continue
        n += 1
        if bad and not waiting(path, text, line):
            problems.append("%s (near line %d): nvidia-smi %s: %s" % (os.path.relpath(path, src), line, cmd, "; ".join(bad)))
for p in problems:
    print(p, file=sys.stderr)
print("%d nvidia-smi commands checked" % n)
assert n >= 20, n
sys.exit(1 if problems else 0)
PY
echo "1 passed, 0 failed"
