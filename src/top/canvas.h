/*
 * canvas.h - a grid of character cells that `top` draws a frame into.
 *
 * Drawing is separate from the terminal: render_frame.c fills a canvas, which is
 * then either copied to ncurses or printed as plain text (--once, tests).
 * Every write is clipped to a rectangle, so a panel can never spill into
 * its neighbour. Cells hold one wide character and a style; a character two
 * columns wide takes two cells (the second marked as its continuation).
 */
#ifndef GPUWHY_TOP_CANVAS_H
#define GPUWHY_TOP_CANVAS_H

#include <stdbool.h>
#include <stdio.h>
#include <wchar.h>

#include "top/layout.h"

/* Styles; the terminal maps them to colours, or to bold/reverse without colour. */
typedef enum {
	TOP_S_NORMAL,
	TOP_S_DIM,    /* labels, absent values */
	TOP_S_HEAD,   /* header and column titles (reverse) */
	TOP_S_SEL,    /* the selected process (reverse) */
	TOP_S_OK,     /* bar fill, low load */
	TOP_S_MID,    /* bar fill, getting high */
	TOP_S_HIGH,   /* bar fill, at the limit */
	TOP_S_WARN,   /* a warning finding */
	TOP_S_ERR,    /* an error finding, a lost GPU */
	TOP_S_ACCENT, /* GPU names, the sort column */
	TOP_S__COUNT
} top_style;

#define TOP_WCONT ((wchar_t)-1) /* the right half of a two-column character */

typedef struct {
	wchar_t ch;
	unsigned char style;
	unsigned char pad[3]; /* always zero, so rows of cells compare with memcmp */
} top_cell;

typedef struct {
	int cols, rows;
	top_cell *cell; /* rows * cols */
	bool utf8;      /* false: glyphs are plain ASCII */
} top_canvas;

int top_canvas_init(top_canvas *c, int cols, int rows, bool utf8);
void top_canvas_free(top_canvas *c);
/* Blank every cell. */
void top_canvas_clear(top_canvas *c);

/*
 * Write text (UTF-8, or the locale's multibyte encoding) at x, y inside the
 * clip rectangle. Control characters and undecodable bytes become '?'.
 * Characters two columns wide take two cells and are dropped when only one
 * is left. Returns the column after the last cell written.
 */
int top_put(top_canvas *c, top_rect clip, int x, int y, top_style st, const char *text);
/* printf into top_put. */
int top_putf(top_canvas *c, top_rect clip, int x, int y, top_style st, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* One wide character (single column). */
void top_putw(top_canvas *c, top_rect clip, int x, int y, top_style st, wchar_t ch);
/* Fill a rectangle (clipped to the canvas) with one character. */
void top_fill(top_canvas *c, top_rect r, top_style st, wchar_t ch);
/* Change the style of the cells of a rectangle, keeping their characters. */
void top_restyle(top_canvas *c, top_rect r, top_style st);

/* Columns text takes on canvas c (what top_put would write, unclipped). */
int top_text_width(const top_canvas *c, const char *text);

/* Row y as a multibyte string without trailing blanks (out must hold cols*MB_LEN_MAX+1). */
void top_canvas_row(const top_canvas *c, int y, char *out, size_t outlen);
/* Every row, trailing blank rows dropped, to f. */
void top_canvas_print(const top_canvas *c, FILE *f);

#endif
