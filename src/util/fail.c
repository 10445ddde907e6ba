/*
 * fail.c - errors as data (see fail.h).
 */
#include "util/fail.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "util/err.h"
#include "util/i18n.h"

/* A bare "%s" passes a message translated where it was written. */
static bool only_strings(const char *fmt)
{
	while (fmt[0] == '%' && fmt[1] == 's')
		fmt += 2;
	return !*fmt;
}

int gw_fail_set(gw_fail *f, int code, const char *what, const char *hint, const char *why_fmt, ...)
{
	if (!f)
		return code;
	va_list ap, aq;
	va_start(ap, why_fmt);
	va_copy(aq, ap);
	vsnprintf(f->why, sizeof f->why, why_fmt, ap);
	vsnprintf(f->why_text, sizeof f->why_text, only_strings(why_fmt) ? why_fmt : _(why_fmt),
	          aq);
	va_end(aq);
	va_end(ap);
	f->code = code;
	snprintf(f->what, sizeof f->what, "%s", what ? what : "");
	f->what_text[0] = '\0';
	snprintf(f->hint, sizeof f->hint, "%s", hint ? hint : "");
	return code;
}

int gw_fail_print(const gw_fail *f)
{
	if (!f || (!f->what[0] && !f->why[0]))
		return f ? f->code : 0;
	return gw_error(f->code, f->what_text[0] ? f->what_text : f->what,
	                f->hint[0] ? f->hint : NULL, "%s", f->why_text[0] ? f->why_text : f->why);
}

const char *gw_fail_text(const gw_fail *f, char *out, size_t len)
{
	if (f->hint[0])
		snprintf(out, len, "%s: %s (%s)", f->what, f->why, f->hint);
	else
		snprintf(out, len, "%s: %s", f->what, f->why);
	return out;
}
