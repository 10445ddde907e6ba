#include "util/err.h"

#include <stdio.h>

int gw_verbose;

int gw_error(int code, const char *what, const char *hint, const char *why_fmt, ...)
{
	va_list ap;
	fprintf(stderr, "gpuwhy: %s: ", what);
	va_start(ap, why_fmt);
	vfprintf(stderr, why_fmt, ap);
	va_end(ap);
	if (hint && *hint)
		fprintf(stderr, " (%s)", hint);
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
