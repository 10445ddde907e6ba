/*
 * fail.c - errors as data (see fail.h).
 */
#include "util/fail.h"

#include <stdarg.h>
#include <stdio.h>

#include "util/err.h"
#include "util/i18n.h"

int gw_fail_set(gw_fail *f, int code, const char *what, const char *hint, const char *why_fmt, ...)
{
	if (!f)
		return code;
	va_list ap;
	va_start(ap, why_fmt);
	/* The format is a message (xgettext knows gw_fail_set); the hint is kept
	 * in English and translated where it is printed. */
	vsnprintf(f->why, sizeof f->why, _(why_fmt), ap);
	va_end(ap);
	f->code = code;
	snprintf(f->what, sizeof f->what, "%s", what ? what : "");
	snprintf(f->hint, sizeof f->hint, "%s", hint ? hint : "");
	return code;
}

int gw_fail_print(const gw_fail *f)
{
	if (!f || (!f->what[0] && !f->why[0]))
		return f ? f->code : 0;
	return gw_error(f->code, f->what, f->hint[0] ? _(f->hint) : NULL, "%s", f->why);
}

const char *gw_fail_text(const gw_fail *f, char *out, size_t len)
{
	if (f->hint[0])
		/* TRANSLATORS: an error as one line: "what: why (hint)". */
		snprintf(out, len, _("%s: %s (%s)"), f->what, f->why, _(f->hint));
	else
		snprintf(out, len, "%s: %s", f->what, f->why);
	return out;
}
