/*
 * fail.c - errors as data (see fail.h).
 */
#include "util/fail.h"

#include <stdarg.h>
#include <stdio.h>

#include "util/err.h"

int gw_fail_set(gw_fail *f, int code, const char *what, const char *hint, const char *why_fmt, ...)
{
	if (!f)
		return code;
	va_list ap;
	va_start(ap, why_fmt);
	vsnprintf(f->why, sizeof f->why, why_fmt, ap);
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
	return gw_error(f->code, f->what, f->hint[0] ? f->hint : NULL, "%s", f->why);
}

const char *gw_fail_text(const gw_fail *f, char *out, size_t len)
{
	if (f->hint[0])
		snprintf(out, len, "%s: %s (%s)", f->what, f->why, f->hint);
	else
		snprintf(out, len, "%s: %s", f->what, f->why);
	return out;
}
