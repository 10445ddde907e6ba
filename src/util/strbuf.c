/* strbuf.c - a growable NUL-terminated string (see strbuf.h). */
#include "util/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

void gw_sb_reserve(gw_strbuf *b, size_t extra)
{
	if (b->p && b->len + extra < b->cap)
		return;
	size_t cap = b->cap ? b->cap : 64;
	while (cap <= b->len + extra) {
		if (cap > (size_t)-1 / 2)
			gw_out_of_memory();
		cap *= 2;
	}
	b->p = gw_xrealloc(b->p, cap);
	b->cap = cap;
	b->p[b->len] = '\0';
}

void gw_sb_put(gw_strbuf *b, const void *s, size_t n)
{
	gw_sb_reserve(b, n);
	if (n)
		memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void gw_sb_puts(gw_strbuf *b, const char *s)
{
	gw_sb_put(b, s, strlen(s));
}

void gw_sb_putc(gw_strbuf *b, char c)
{
	gw_sb_put(b, &c, 1);
}

void gw_sb_vprintf(gw_strbuf *b, const char *fmt, va_list ap)
{
	va_list again;
	va_copy(again, ap);
	gw_sb_reserve(b, 0);
	int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	if (n < 0) {
		/* an encoding error: nothing is appended */
		b->p[b->len] = '\0';
		va_end(again);
		return;
	}
	if ((size_t)n >= b->cap - b->len) {
		gw_sb_reserve(b, (size_t)n);
		vsnprintf(b->p + b->len, b->cap - b->len, fmt, again);
	}
	va_end(again);
	b->len += (size_t)n;
}

void gw_sb_printf(gw_strbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	gw_sb_vprintf(b, fmt, ap);
	va_end(ap);
}

void gw_sb_sep(gw_strbuf *b, const char *sep)
{
	if (b->len)
		gw_sb_puts(b, sep);
}

const char *gw_sb_str(const gw_strbuf *b)
{
	return b->p ? b->p : "";
}

void gw_sb_clear(gw_strbuf *b)
{
	b->len = 0;
	if (b->p)
		b->p[0] = '\0';
}

char *gw_sb_take(gw_strbuf *b)
{
	gw_sb_reserve(b, 0);
	char *p = b->p;
	*b = (gw_strbuf){0};
	return p;
}

void gw_sb_free(gw_strbuf *b)
{
	free(b->p);
	*b = (gw_strbuf){0};
}
