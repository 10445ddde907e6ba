/* termsafe.c - escaping control characters for the human-readable faces. */
#include "util/termsafe.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at p and its code point; 0 when invalid. */
static int utf8_seq(const unsigned char *p, uint32_t *cp)
{
	int n;
	uint32_t c;
	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		n = 2;
		c = p[0] & 0x1f;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		n = 3;
		c = p[0] & 0x0f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		n = 4;
		c = p[0] & 0x07;
	} else {
		return 0;
	}
	for (int i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	/* overlong forms, surrogates and beyond U+10FFFF are not valid */
	if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

/* Code points a terminal acts on or that reorder what it shows. */
static bool cp_unsafe(uint32_t c)
{
	return c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f) || (c >= 0x202a && c <= 0x202e) ||
	       (c >= 0x2066 && c <= 0x2069);
}

/* The escaped form of one character into esc; returns its length. */
static int escape_one(const unsigned char *p, int n, uint32_t cp, char *esc, size_t len)
{
	if (n == 0)
		return snprintf(esc, len, "\\x%02x", p[0]);
	if (cp == '\n')
		return snprintf(esc, len, "\\n");
	if (cp == '\r')
		return snprintf(esc, len, "\\r");
	if (cp == '\t')
		return snprintf(esc, len, "\\t");
	if (cp < 0x80)
		return snprintf(esc, len, "\\x%02x", (unsigned)cp);
	return snprintf(esc, len, "\\u%04x", (unsigned)cp);
}

char *gw_term_safe(const char *s, char *out, size_t len)
{
	if (len == 0)
		return out;
	size_t o = 0;
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	while (*p) {
		uint32_t cp = 0;
		int n = utf8_seq(p, &cp);
		char esc[16];
		const char *piece = (const char *)p;
		size_t plen = n ? (size_t)n : 1;
		if (n == 0 || cp_unsafe(cp)) {
			plen = (size_t)escape_one(p, n, cp, esc, sizeof esc);
			piece = esc;
		}
		if (o + plen >= len)
			break;
		memcpy(out + o, piece, plen);
		o += plen;
		p += n ? n : 1;
	}
	out[o] = '\0';
	return out;
}
