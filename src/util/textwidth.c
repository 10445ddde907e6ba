/* textwidth.c - display columns of UTF-8 text (see textwidth.h). */
#include "util/textwidth.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <wchar.h>

/*
 * Decode one UTF-8 character at s (n > 0 bytes left). Returns the bytes it
 * takes (at least 1); *cp is the code point, or -1 for a byte that starts no
 * valid sequence (overlong, surrogate, beyond U+10FFFF, cut short).
 */
static size_t decode(const unsigned char *s, size_t n, int32_t *cp)
{
	unsigned char b = s[0];
	size_t len;
	uint32_t v, min;
	if (b < 0x80) {
		*cp = b;
		return 1;
	}
	if ((b & 0xe0) == 0xc0)
		len = 2, v = b & 0x1fu, min = 0x80;
	else if ((b & 0xf0) == 0xe0)
		len = 3, v = b & 0x0fu, min = 0x800;
	else if ((b & 0xf8) == 0xf0)
		len = 4, v = b & 0x07u, min = 0x10000;
	else
		len = 0, v = 0, min = 0;
	*cp = -1;
	if (len == 0 || len > n)
		return 1;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 1;
		v = v << 6 | (s[i] & 0x3fu);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 1;
	*cp = (int32_t)v;
	return len;
}

/* East Asian Wide and Fullwidth blocks, for a locale whose wcwidth knows no such character. */
static bool wide_block(int32_t cp)
{
	return (cp >= 0x1100 && cp <= 0x115f) || (cp >= 0x2e80 && cp <= 0x303e) ||
	       (cp >= 0x3041 && cp <= 0x33ff) || (cp >= 0x3400 && cp <= 0x4dbf) ||
	       (cp >= 0x4e00 && cp <= 0x9fff) || (cp >= 0xa000 && cp <= 0xa4cf) ||
	       (cp >= 0xac00 && cp <= 0xd7a3) || (cp >= 0xf900 && cp <= 0xfaff) ||
	       (cp >= 0xfe30 && cp <= 0xfe4f) || (cp >= 0xff00 && cp <= 0xff60) ||
	       (cp >= 0xffe0 && cp <= 0xffe6) || (cp >= 0x1f300 && cp <= 0x1f64f) ||
	       (cp >= 0x1f900 && cp <= 0x1f9ff) || (cp >= 0x20000 && cp <= 0x3fffd);
}

/* Combining marks and zero-width characters, for the same case. */
static bool zero_block(int32_t cp)
{
	return (cp >= 0x0300 && cp <= 0x036f) || (cp >= 0x1ab0 && cp <= 0x1aff) ||
	       (cp >= 0x1dc0 && cp <= 0x1dff) || (cp >= 0x200b && cp <= 0x200f) ||
	       (cp >= 0x20d0 && cp <= 0x20ff) || (cp >= 0xfe00 && cp <= 0xfe0f) ||
	       (cp >= 0xfe20 && cp <= 0xfe2f) || cp == 0xfeff;
}

/* Columns of one decoded character: 0, 1 or 2. */
static int cp_width(int32_t cp)
{
	if (cp < 0)
		return 1; /* an invalid byte: one replacement glyph */
	if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0))
		return 0;
	if (cp < 0x7f)
		return 1;
	int w = wcwidth((wchar_t)cp);
	if (w >= 0)
		return w > 2 ? 2 : w;
	return wide_block(cp) ? 2 : zero_block(cp) ? 0 : 1;
}

int gw_text_width_n(const char *s, size_t n)
{
	if (!s)
		return 0;
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strnlen(s, n);
	int cols = 0;
	while (len > 0) {
		int32_t cp;
		size_t used = decode(p, len, &cp);
		cols += cp_width(cp);
		p += used;
		len -= used;
	}
	return cols;
}

int gw_text_width(const char *s)
{
	return s ? gw_text_width_n(s, strlen(s)) : 0;
}

size_t gw_text_fit(const char *s, int cols, int *width)
{
	size_t at = 0;
	int used = 0;
	if (s) {
		size_t len = strlen(s);
		while (at < len) {
			int32_t cp;
			size_t n = decode((const unsigned char *)s + at, len - at, &cp);
			int w = cp_width(cp);
			if (used + w > cols)
				break;
			used += w;
			at += n;
		}
	}
	if (width)
		*width = used;
	return at;
}

int gw_text_pad(const char *s, int cols)
{
	int w = gw_text_width(s);
	return w < cols ? cols - w : 0;
}

/* Appends n bytes of s to out at *at (room: outlen), whole characters only. */
static void append(char *out, size_t outlen, size_t *at, const char *s, size_t n)
{
	if (*at + n + 1 > outlen) {
		size_t room = outlen - *at - 1, cut = 0;
		while (cut < room) {
			int32_t cp;
			size_t k = decode((const unsigned char *)s + cut, n - cut, &cp);
			if (cut + k > room)
				break;
			cut += k;
		}
		n = cut;
	}
	memcpy(out + *at, s, n);
	*at += n;
	out[*at] = '\0';
}

static void spaces(char *out, size_t outlen, size_t *at, int n)
{
	for (; n > 0 && *at + 1 < outlen; n--)
		out[(*at)++] = ' ';
	out[*at] = '\0';
}

/* Bytes of s to keep within cols columns, with room for `mark` when it is cut; *w its columns. */
static size_t fit_marked(const char *s, int cols, const char *mark, bool *cut, int *w)
{
	size_t keep = gw_text_fit(s, cols, w);
	*cut = s[keep] != '\0';
	if (*cut && mark && *mark) {
		int mw = gw_text_width(mark);
		keep = mw <= cols ? gw_text_fit(s, cols - mw, w) : 0;
		*w += mw <= cols ? mw : 0;
	}
	return keep;
}

char *gw_text_cell(char *out, size_t outlen, const char *s, int cols, gw_align align,
                   const char *mark)
{
	if (outlen == 0)
		return out;
	out[0] = '\0';
	if (!s)
		s = "";
	if (cols < 0)
		cols = 0;
	bool cut;
	int w;
	size_t keep = fit_marked(s, cols, mark, &cut, &w);
	size_t at = 0;
	if (align == GW_ALIGN_RIGHT)
		spaces(out, outlen, &at, cols - w);
	append(out, outlen, &at, s, keep);
	if (cut && mark && *mark && gw_text_width(mark) <= cols)
		append(out, outlen, &at, mark, strlen(mark));
	if (align == GW_ALIGN_LEFT)
		spaces(out, outlen, &at, cols - w);
	return out;
}

char *gw_text_trunc(char *out, size_t outlen, const char *s, int cols, const char *mark)
{
	if (outlen == 0)
		return out;
	out[0] = '\0';
	if (!s)
		s = "";
	bool cut;
	int w;
	size_t keep = fit_marked(s, cols < 0 ? 0 : cols, mark, &cut, &w);
	size_t at = 0;
	append(out, outlen, &at, s, keep);
	if (cut && mark && *mark && gw_text_width(mark) <= cols)
		append(out, outlen, &at, mark, strlen(mark));
	return out;
}

int gw_text_fput_cell(FILE *f, const char *s, int cols, gw_align align)
{
	if (!s)
		s = "";
	int w;
	size_t keep = gw_text_fit(s, cols, &w);
	int pad = cols > w ? cols - w : 0;
	if (align == GW_ALIGN_RIGHT && fprintf(f, "%*s", pad, "") < 0)
		return EOF;
	if (fwrite(s, 1, keep, f) != keep)
		return EOF;
	if (align == GW_ALIGN_LEFT && fprintf(f, "%*s", pad, "") < 0)
		return EOF;
	return 0;
}
