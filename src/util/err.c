#include "util/err.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "util/i18n.h"

int gw_verbose;

static bool only_strings(const char *fmt)
{
	while (fmt[0] == '%' && fmt[1] == 's')
		fmt += 2;
	return !*fmt;
}

static bool ascii_only(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s >= 0x80)
			return false;
	return true;
}

int gw_error(int code, const char *what, const char *hint, const char *why_fmt, ...)
{
	va_list ap;
	/* "gpuwhy:" and what (a path, an option) are what the user typed: never translated.
	 * A bare "%s" passes a message translated where it was written. */
	const char *fmt = only_strings(why_fmt) ? why_fmt : _(why_fmt);
	fprintf(stderr, "gpuwhy: %s: ", what);
	va_start(ap, why_fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (hint && *hint) {
		const char *tr = _(hint);
		/* The language's brackets only around a hint in that language (found in
		 * the catalogue, or translated by the caller): an English hint keeps
		 * English punctuation. */
		if (strcmp(tr, hint) || !ascii_only(tr))
			/* TRANSLATORS: the hint after an error: "gpuwhy: FILE: why (hint)". */
			fprintf(stderr, _(" (%s)"), tr);
		else
			fprintf(stderr, " (%s)", hint);
	}
	fputc('\n', stderr);
	return code;
}

void gw_debug(const char *fmt, ...)
{
	va_list ap;
	if (!gw_verbose)
		return;
	fputs("gpuwhy: debug: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
