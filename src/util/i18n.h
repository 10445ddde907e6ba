/* i18n.h - the language gpuwhy speaks to people (GNU gettext, domain "gpuwhy").
 *
 * Mark every human-readable string: _("...") where it is printed, N_("...")
 * in static tables (translated later with _(table[i].text)), P_(one, many, n)
 * where a number decides the plural. Never mark what machines read: JSON
 * keys, CSV headers, nvidia-smi field names and values, Prometheus names and
 * labels, finding ids, exit codes. The catalogues live in po/ (po/glossary.md
 * fixes the terms) and are compiled into BUILD/locale by the build.
 */
#ifndef GPUWHY_UTIL_I18N_H
#define GPUWHY_UTIL_I18N_H

#include <stdbool.h>

#define GW_TEXTDOMAIN "gpuwhy"

#define _(s) gw_gettext(s)
#define N_(s) (s)
#define P_(one, many, n) gw_ngettext((one), (many), (unsigned long)(n))

/*
 * Choose the language once, before anything is printed: `lang` from --lang
 * (NULL: the environment: LANGUAGE, LC_ALL, LC_MESSAGES, LANG, as gettext
 * reads them). "en" (or "C", "POSIX") forces English. Works without the
 * system's locale for the language being generated: messages fall back to
 * C.UTF-8 with LANGUAGE set. Returns 0, or -1 when `lang` names a language
 * without a catalogue (the caller reports it; English stays in force).
 */
int gw_i18n_init(const char *lang);

/* The catalogue's language in force ("zh_CN", ...), or "en" for English. */
const char *gw_i18n_lang(void);

/* True while messages are translated (a catalogue was found and bound). */
bool gw_i18n_active(void);

/* Where the catalogues were found ("" when none). */
const char *gw_i18n_localedir(void);

/* Language names with a catalogue, for --lang's error: "en, zh_CN". */
const char *gw_i18n_available(void);

/* format_arg: printf-style checks still see through _() and P_(). */
const char *gw_gettext(const char *msgid) __attribute__((format_arg(1)));
const char *gw_ngettext(const char *one, const char *many, unsigned long n)
    __attribute__((format_arg(1), format_arg(2)));

#endif
