/*
 * strbuf.h - a growable NUL-terminated string.
 *
 * Zero-initialise (gw_strbuf b = {0}) and append; p is NULL until the first
 * append, so use gw_sb_str() to read. Growth follows xalloc.h's policy (no
 * failure to check). Callers that hand the bytes on (an HTTP body, a
 * caller's char *) take them with gw_sb_take().
 */
#ifndef GPUWHY_UTIL_STRBUF_H
#define GPUWHY_UTIL_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct {
	char *p;
	size_t len, cap;
} gw_strbuf;

/* Room for extra more bytes (and the NUL) without another allocation. */
void gw_sb_reserve(gw_strbuf *b, size_t extra);
void gw_sb_put(gw_strbuf *b, const void *s, size_t n);
void gw_sb_puts(gw_strbuf *b, const char *s);
void gw_sb_putc(gw_strbuf *b, char c);
void gw_sb_printf(gw_strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gw_sb_vprintf(gw_strbuf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Adds sep unless b is empty: for "a, b, c" lists. */
void gw_sb_sep(gw_strbuf *b, const char *sep);
/* The contents; "" when nothing was appended. */
const char *gw_sb_str(const gw_strbuf *b);
/* Forget the contents, keep the memory. */
void gw_sb_clear(gw_strbuf *b);
/* The contents as a malloc'd string (never NULL); b is empty again. */
char *gw_sb_take(gw_strbuf *b);
void gw_sb_free(gw_strbuf *b);

#endif
