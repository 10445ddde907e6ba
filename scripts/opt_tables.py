"""The option tables of every command and subcommand, read from gpuwhy itself
(`gpuwhy help --dump COMMAND [SUB]`): scripts/gen-man and scripts/gen-completion
build the man pages and the shell completion from them, so neither re-types an
option the parser knows."""
import json
import os
import subprocess


def dump(binary, *words):
    """One table as a dict: gpuwhy's own JSON, in English."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GPUWHY_", "LC_", "LANG"))}
    env["LC_ALL"] = "C.UTF-8"
    out = subprocess.run([binary, "--lang", "en", "help", "--dump", *words],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         env=env, check=True, timeout=60).stdout
    return json.loads(out)


def load(binary):
    """{"main": table, "commands": [{"name", "summary", "table", "subs": [...]}]}.
    A subcommand that is another's alias (queue list is queue ls) gives the
    same table: it is kept once, its other names in "aliases"."""
    main = dump(binary)
    commands = []
    for c in main["subcommands"]:
        table = dump(binary, c["name"])
        subs = []
        by_table = {}
        for s in table["subcommands"]:
            t = dump(binary, c["name"], s["name"])
            if t["name"] in by_table:
                by_table[t["name"]]["aliases"].append(s["name"])
                continue
            entry = {"name": s["name"], "table": t, "aliases": []}
            by_table[t["name"]] = entry
            subs.append(entry)
        commands.append({"name": c["name"], "summary": c["summary"],
                         "table": table, "subs": subs})
    return {"main": main, "commands": commands}
