#!/usr/bin/env bash
# The Chinese catalogue is complete and valid for the messages the code marks today:
# msgfmt --check passes, and merged with the build's template (BUILD/gpuwhy.pot) it has
# 0 untranslated and 0 fuzzy messages. --lang picks the language, refuses one without a
# catalogue (exit 2, naming the choices), and "en" forces English under a Chinese locale.
set -uo pipefail
: "${GPUWHY:?}" "${GPUWHY_BUILD:?}" "${GPUWHY_SRC:?}"
. "$GPUWHY_SRC/tests/e2e/i18n_lib.bash"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
po="$GPUWHY_SRC/po/zh_CN.po"
pot="$GPUWHY_BUILD/gpuwhy.pot"
[ -s "$pot" ] || fail "no template $pot"

msgfmt --check -o /dev/null "$po" || fail "msgfmt --check refuses po/zh_CN.po"
msgmerge --quiet --no-fuzzy-matching -o "$tmp/merged.po" "$po" "$pot" || fail "msgmerge"
stats="$(LC_ALL=C msgfmt --check --statistics -o /dev/null "$tmp/merged.po" 2>&1)"
echo "zh_CN against the template: $stats"
case "$stats" in *untranslated*) fail "untranslated messages in po/zh_CN.po (make po, then translate): $stats" ;; esac
case "$stats" in *fuzzy*) fail "fuzzy messages in po/zh_CN.po: $stats" ;; esac
# Every message of the template is in the catalogue: the merged file has no new entries.
new="$(msgattrib --untranslated "$tmp/merged.po" | grep -c '^msgid ' || true)"
[ "$new" -eq 0 ] || fail "$new messages of the template are missing from po/zh_CN.po"

[ -s "$GPUWHY_BUILD/locale/zh_CN/LC_MESSAGES/gpuwhy.mo" ] || fail "the build did not compile the catalogue"
i18n_marker_catalogue "$tmp/mark" || fail "the marker catalogue does not build from the template"

# --lang: a language without a catalogue is a usage error naming the choices.
"$GPUWHY" --lang fr --version >"$tmp/out" 2>"$tmp/err"; rc=$?
[ "$rc" -eq 2 ] || fail "--lang fr: exit $rc, want 2"
grep -q -- "--lang: .*fr.*zh_CN" "$tmp/err" || fail "--lang fr: $(cat "$tmp/err")"
# A known language is accepted; the error for an unknown one speaks the environment's.
GPUWHY_LOCALEDIR="$tmp/mark" "$GPUWHY" --lang qaa --version >/dev/null || fail "--lang qaa refused"
LANG=zh_CN.UTF-8 "$GPUWHY" --lang fr --version 2>"$tmp/err"
grep -q "没有“fr”语言的消息" "$tmp/err" || fail "--lang fr under zh_CN: $(cat "$tmp/err")"
GPUWHY_LOCALEDIR="$tmp/mark" LANGUAGE=qaa "$GPUWHY" --lang fr --version 2>"$tmp/err"
grep -q "$I18N_MARK" "$tmp/err" || fail "--lang fr under the marker language: $(cat "$tmp/err")"
echo "PASS"
