/*
 * textwidth.h - how many terminal columns text takes, and text fitted to a
 * number of columns.
 *
 * Translated text and names from others (a 中文 process name, a translated
 * finding) are not one column a byte: a Chinese character takes two columns,
 * a combining mark none. strlen() and printf's "%-20s" count bytes, so a
 * table with such text in it goes out of line. These functions count display
 * columns (wcwidth) of UTF-8 text and cut only between characters.
 *
 * Text is UTF-8 (the catalogues and the terminals gpuwhy supports are). A
 * byte that is not valid UTF-8 counts one column (terminals show one
 * replacement glyph); a control character counts none (text for a terminal
 * goes through gw_term_safe first, which makes them visible escapes).
 * Widths follow the C library's wcwidth in a UTF-8 locale; where the locale
 * knows no such character (the "C" locale), East Asian wide and fullwidth
 * characters still count two columns.
 */
#ifndef GPUWHY_UTIL_TEXTWIDTH_H
#define GPUWHY_UTIL_TEXTWIDTH_H

#include <stddef.h>
#include <stdio.h>

/* Columns text s takes on a terminal (s NULL: 0). */
int gw_text_width(const char *s);

/* Columns the first n bytes of s take (stops early at a NUL). */
int gw_text_width_n(const char *s, size_t n);

/*
 * Bytes of the longest start of s that fits in cols columns without cutting
 * a character (combining marks stay with the character before them).
 * *width (when not NULL) gets the columns that start takes: less than cols
 * when a two-column character did not fit in the last one.
 */
size_t gw_text_fit(const char *s, int cols, int *width);

/*
 * Spaces to print after s to fill cols columns (0 when s is as wide or wider):
 * the CJK-safe "%-*s" is printf("%s%*s", s, gw_text_pad(s, cols), "").
 */
int gw_text_pad(const char *s, int cols);

typedef enum {
	GW_ALIGN_LEFT,
	GW_ALIGN_RIGHT,
} gw_align;

/*
 * A table cell: s cut to at most cols columns (between characters; with
 * `mark`, e.g. "~" or "…", put at the end of a cut: NULL or "" for none) and
 * padded with spaces to exactly cols columns, aligned left or right. Written
 * to out (outlen bytes, always NUL-terminated when outlen > 0; it is cut
 * between characters too when out is too small: strlen(s) + cols + 4 bytes
 * always suffice). Returns out.
 */
char *gw_text_cell(char *out, size_t outlen, const char *s, int cols, gw_align align,
                   const char *mark);

/* s cut to at most cols columns (as gw_text_cell, without the padding). Returns out. */
char *gw_text_trunc(char *out, size_t outlen, const char *s, int cols, const char *mark);

/* Print s to f as a cell of cols columns (gw_text_cell without a buffer, no cut mark). Returns 0 or
 * EOF. */
int gw_text_fput_cell(FILE *f, const char *s, int cols, gw_align align);

#endif
