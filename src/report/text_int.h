/*
 * text_int.h - what the terminal faces of report/ share: the output and its
 * style, colour codes only when asked, labels padded by display columns.
 */
#ifndef GPUWHY_REPORT_TEXT_INT_H
#define GPUWHY_REPORT_TEXT_INT_H

#include <stdio.h>

#include "report/report.h"
#include "util/textwidth.h"

typedef struct {
	FILE *out;
	const report_style *st;
} tx;

static inline const char *col(const tx *t, const char *code)
{
	return t->st->color ? code : "";
}
#define RESET(t) col(t, "\033[0m")
#define BOLD(t) col(t, "\033[1m")
#define DIM(t) col(t, "\033[2m")

/* A label of `cols` display columns (translated labels are not one column a byte). */
static inline void label(FILE *o, const char *lead, const char *text, int cols)
{
	fprintf(o, "%s%s%*s", lead, text, gw_text_pad(text, cols), "");
}

/* label() between colour codes. */
static inline void label_c(FILE *o, const char *lead, const char *on, const char *text,
                           const char *off, int cols)
{
	fprintf(o, "%s%s%s%s%*s", lead, on, text, off, gw_text_pad(text, cols), "");
}

#endif
