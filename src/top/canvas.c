/* canvas.c - the cell grid a frame is drawn into (see canvas.h). */
#include "top/canvas.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int top_canvas_init(top_canvas *c, int cols, int rows, bool utf8)
{
	memset(c, 0, sizeof *c);
	if (cols < 1 || rows < 1)
		return -1;
	c->cell = malloc((size_t)cols * (size_t)rows * sizeof *c->cell);
	if (!c->cell)
		return -1;
	c->cols = cols;
	c->rows = rows;
	c->utf8 = utf8;
	top_canvas_clear(c);
	return 0;
}

void top_canvas_free(top_canvas *c)
{
	free(c->cell);
	memset(c, 0, sizeof *c);
}

void top_canvas_clear(top_canvas *c)
{
	for (int i = 0; i < c->cols; i++)
		c->cell[i] = (top_cell){.ch = L' ', .style = TOP_S_NORMAL};
	for (int y = 1; y < c->rows; y++)
		memcpy(&c->cell[y * c->cols], c->cell, (size_t)c->cols * sizeof *c->cell);
}

/*
 * Decode one UTF-8 sequence at s (n bytes left). Returns the bytes used
 * (at least 1) and *wc, or U+FFFD for a malformed or overlong sequence.
 * The text is always UTF-8 when the canvas is (both follow the locale's
 * codeset), so no mbrtowc state or locale lookup is needed.
 */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *wc)
{
	unsigned char b = s[0];
	size_t len;
	uint32_t v, min;
	if (b < 0x80) {
		*wc = b;
		return 1;
	} else if ((b & 0xe0) == 0xc0) {
		len = 2, v = b & 0x1f, min = 0x80;
	} else if ((b & 0xf0) == 0xe0) {
		len = 3, v = b & 0x0f, min = 0x800;
	} else if ((b & 0xf8) == 0xf0) {
		len = 4, v = b & 0x07, min = 0x10000;
	} else {
		*wc = 0xfffd;
		return 1;
	}
	if (len > n) {
		*wc = 0xfffd;
		return 1;
	}
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80) {
			*wc = 0xfffd;
			return i;
		}
		v = v << 6 | (s[i] & 0x3f);
	}
	*wc = v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff) ? 0xfffd : v;
	return len;
}

/* Columns a decoded character takes: 1 or 2; 0 drops it (combining mark); -1 makes it '?'. */
static int char_width(bool utf8, uint32_t wc)
{
	if (wc < 0x20 || wc == 0x7f)
		return -1;
	if (wc < 0x7f)
		return 1;
	if (!utf8 || wc == 0xfffd || (wc >= 0x80 && wc < 0xa0))
		return -1;
	int w = wcwidth((wchar_t)wc);
	return w < 0 ? -1 : w > 2 ? 2 : w;
}

static bool inside(const top_canvas *c, top_rect clip, int x, int y)
{
	return x >= 0 && y >= 0 && x < c->cols && y < c->rows && x >= clip.x && y >= clip.y &&
	       x < clip.x + clip.w && y < clip.y + clip.h;
}

static void set(top_canvas *c, int x, int y, wchar_t ch, top_style st)
{
	c->cell[y * c->cols + x] = (top_cell){.ch = ch, .style = (unsigned char)st};
}

/* A wide character half overwritten loses its other half too, so no orphan stays on screen. */
static void unpair(top_canvas *c, int x, int y)
{
	top_cell *row = &c->cell[y * c->cols];
	if (row[x].ch == TOP_WCONT && x > 0)
		row[x - 1].ch = L' ';
	if (x + 1 < c->cols && row[x + 1].ch == TOP_WCONT)
		row[x + 1].ch = L' ';
}

void top_putw(top_canvas *c, top_rect clip, int x, int y, top_style st, wchar_t ch)
{
	if (!inside(c, clip, x, y))
		return;
	unpair(c, x, y);
	set(c, x, y, ch, st);
}

int top_put(top_canvas *c, top_rect clip, int x, int y, top_style st, const char *text)
{
	const unsigned char *s = (const unsigned char *)text;
	/* Most text is printable ASCII: one cell a byte, straight into the row. */
	int x0 = clip.x > 0 ? clip.x : 0;
	int x1 = clip.x + clip.w < c->cols ? clip.x + clip.w : c->cols;
	bool row_ok = y >= 0 && y < c->rows && y >= clip.y && y < clip.y + clip.h;
	while (*s >= 0x20 && *s < 0x7f) {
		if (row_ok && x >= x0 && x < x1) {
			unpair(c, x, y);
			set(c, x, y, (wchar_t)*s, st);
		}
		x++;
		s++;
	}
	size_t n = strlen((const char *)s);
	while (n > 0) {
		uint32_t wc;
		size_t used = c->utf8 ? utf8_decode(s, n, &wc) : 1;
		if (!c->utf8)
			wc = s[0];
		s += used;
		n -= used;
		int w = char_width(c->utf8, wc);
		if (w == 0)
			continue;
		if (w < 0) {
			wc = '?';
			w = 1;
		}
		if (w == 2) {
			if (!inside(c, clip, x + 1, y)) {
				if (inside(c, clip, x, y))
					top_putw(c, clip, x, y, st, L' ');
				x += 2;
				continue;
			}
			top_putw(c, clip, x, y, st, (wchar_t)wc);
			top_putw(c, clip, x + 1, y, st, TOP_WCONT);
			x += 2;
			continue;
		}
		top_putw(c, clip, x, y, st, (wchar_t)wc);
		x++;
	}
	return x;
}

int top_putf(top_canvas *c, top_rect clip, int x, int y, top_style st, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return top_put(c, clip, x, y, st, buf);
}

void top_fill(top_canvas *c, top_rect r, top_style st, wchar_t ch)
{
	int x0 = r.x > 0 ? r.x : 0, x1 = r.x + r.w < c->cols ? r.x + r.w : c->cols;
	int y0 = r.y > 0 ? r.y : 0, y1 = r.y + r.h < c->rows ? r.y + r.h : c->rows;
	if (x0 >= x1)
		return;
	top_cell fill = {.ch = ch, .style = (unsigned char)st};
	const top_cell *first = NULL;
	for (int y = y0; y < y1; y++) {
		/* Only the two ends can split a wide character: the cells between are all replaced.
		 */
		unpair(c, x0, y);
		unpair(c, x1 - 1, y);
		top_cell *row = &c->cell[y * c->cols];
		if (first) { /* the rows after the first are copies of it */
			memcpy(&row[x0], first, (size_t)(x1 - x0) * sizeof *row);
			continue;
		}
		for (int x = x0; x < x1; x++)
			row[x] = fill;
		first = &row[x0];
	}
}

void top_restyle(top_canvas *c, top_rect r, top_style st)
{
	for (int y = r.y; y < r.y + r.h; y++)
		for (int x = r.x; x < r.x + r.w; x++)
			if (inside(c, r, x, y))
				c->cell[y * c->cols + x].style = (unsigned char)st;
}

int top_text_width(const top_canvas *c, const char *text)
{
	const unsigned char *s = (const unsigned char *)text;
	int cols = 0;
	while (*s >= 0x20 && *s < 0x7f) {
		cols++;
		s++;
	}
	size_t n = strlen((const char *)s);
	bool utf8 = c->utf8;
	while (n > 0) {
		uint32_t wc;
		size_t used = utf8 ? utf8_decode(s, n, &wc) : 1;
		if (!utf8)
			wc = s[0];
		s += used;
		n -= used;
		int w = char_width(utf8, wc);
		cols += w < 0 ? 1 : w;
	}
	return cols;
}

/* Encode wc as UTF-8 (the canvas holds ASCII only when the locale is not UTF-8). */
static size_t utf8_encode(uint32_t wc, char *out)
{
	if (wc < 0x80) {
		out[0] = (char)wc;
		return 1;
	} else if (wc < 0x800) {
		out[0] = (char)(0xc0 | wc >> 6);
		out[1] = (char)(0x80 | (wc & 0x3f));
		return 2;
	} else if (wc < 0x10000) {
		out[0] = (char)(0xe0 | wc >> 12);
		out[1] = (char)(0x80 | (wc >> 6 & 0x3f));
		out[2] = (char)(0x80 | (wc & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | wc >> 18);
	out[1] = (char)(0x80 | (wc >> 12 & 0x3f));
	out[2] = (char)(0x80 | (wc >> 6 & 0x3f));
	out[3] = (char)(0x80 | (wc & 0x3f));
	return 4;
}

void top_canvas_row(const top_canvas *c, int y, char *out, size_t outlen)
{
	size_t k = 0, last = 0;
	const top_cell *row = &c->cell[y * c->cols];
	for (int x = 0; x < c->cols && k + 5 < outlen; x++) {
		if (row[x].ch == TOP_WCONT)
			continue;
		k += utf8_encode((uint32_t)row[x].ch, out + k);
		if (row[x].ch != L' ')
			last = k;
	}
	out[last] = '\0';
}

void top_canvas_print(const top_canvas *c, FILE *f)
{
	size_t len = (size_t)c->cols * 4 + 1;
	char *line = malloc(len);
	if (!line)
		return;
	int last = -1;
	for (int y = 0; y < c->rows; y++) {
		top_canvas_row(c, y, line, len);
		if (line[0])
			last = y;
	}
	for (int y = 0; y <= last; y++) {
		top_canvas_row(c, y, line, len);
		fprintf(f, "%s\n", line);
	}
	free(line);
}
