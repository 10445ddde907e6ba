#!/usr/bin/env bash
# gpuwhy sweep's report.html and its text report speak the user's language under
# the marker language of i18n_lib.bash: every heading, table head, status and
# sentence is translated, the page's lang attribute names the language, and
# results.json keeps its English keys and words.
. "$(dirname "$0")/lib.bash"
: "${GPUWHY_BUILD:?}" "${GPUWHY_SRC:?}"
. "$GPUWHY_SRC/tests/e2e/i18n_lib.bash"
i18n_sim_test python3

D=$T/sw
GPUWHY_LOCALEDIR="$T/mark" "$GPUWHY" --lang qaa --sim h100x1 sweep -o "$D" --vary workers=1,2 \
	--steps 4 --warmup-steps 1 --interval 200ms -- "$GPUWHY" sim train --steps 100 \
	--workers {workers} --cpu-ms 0 --io-ms 10 --gpu-ms 10 >"$T/out" 2>"$T/err" ||
	fail "sweep: exit $?: $(cat "$T/err")"
[ -s "$D/report.html" ] || fail "no report.html: $(ls "$D")"
grep -q '<html lang="qaa">' "$D/report.html" || fail "report.html's lang: $(head -2 "$D/report.html")"
# The page's text, one line per text node, outside <style> and <code> (the command).
python3 - "$D/report.html" >"$T/html.txt" <<'PY' || fail "cannot read report.html"
import html.parser, sys
class P(html.parser.HTMLParser):
    skip = 0
    def handle_starttag(self, tag, a):
        if tag in ("style", "code", "title"):
            self.skip += 1
    def handle_endtag(self, tag):
        if tag in ("style", "code", "title"):
            self.skip -= 1
    def handle_data(self, d):
        if not self.skip:
            for line in d.splitlines():
                if line.strip():
                    print(line)
P().feed(open(sys.argv[1], encoding="utf-8").read())
PY
grep -q "◊Configurations" "$T/html.txt" || fail "report.html headings: $(head -5 "$T/html.txt")"
grep -q "◊configuration" "$T/html.txt" || fail "report.html table heads: $(head -5 "$T/html.txt")"
# Data: the configurations' names.
i18n_unmarked "$T/html.txt" '^workers=[0-9]+$' >"$T/bad" || fail "report.html: text outside gettext:
$(cat "$T/bad")"
i18n_unmarked "$T/out" '^workers=[0-9]+ ' >"$T/bad" || fail "sweep's text report: lines outside gettext:
$(cat "$T/bad")"
i18n_unmarked "$T/err" >"$T/bad" || fail "sweep's progress: lines outside gettext:
$(cat "$T/bad")"
grep -q '◊' "$D/results.json" && fail "results.json holds translated text"
grep -q '"status": *"done"' "$D/results.json" || fail "results.json lost its words: $(head -c 400 "$D/results.json")"
exit 0
