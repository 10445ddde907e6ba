/*
 * say.c - why the gate refused or held something, said twice: in English
 * for the access log and the console, and in the gate's language for the
 * person who sent the request. Every part of the gate words its reasons
 * here, below all of them.
 */
#include <stdarg.h>
#include <stdio.h>

#include "gate/say.h"
#include "util/i18n.h"

void gate_cut(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(out, len, fmt, ap);
	va_end(ap);
}

void gate_say(char *en, char *text, size_t len, const char *fmt, ...)
{
	va_list ap, aq;
	va_start(ap, fmt);
	va_copy(aq, ap);
	vsnprintf(en, len, fmt, ap);
	vsnprintf(text, len, _(fmt), aq);
	va_end(aq);
	va_end(ap);
}
