/*
 * report.h - the faces of a diagnosis: text for terminals (findings, the
 * per-GPU quadrant, the seven-step chain with sparklines), JSON for
 * machines, and one self-contained HTML page with inline SVG charts; and the
 * same three for a comparison of two recordings (text and JSON).
 */
#ifndef GPUWHY_REPORT_REPORT_H
#define GPUWHY_REPORT_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "diagnose/diag.h"
#include "store/smilog.h"

typedef struct {
	bool utf8;          /* block-character sparklines and marks; ASCII otherwise */
	bool color;         /* ANSI colours (a terminal, and NO_COLOR unset) */
	const char *source; /* the recording's path, shown in headers */
	const diag_opts *opts;
} report_style;

/* UTF-8 when the LC_CTYPE locale's codeset is UTF-8 (call setlocale(LC_CTYPE, "") first). */
bool report_locale_utf8(void);
/* Colour on out: a terminal and NO_COLOR unset or empty. */
bool report_want_color(FILE *out);

void report_text(FILE *out, const timeline *tl, const diag_meta *meta, const diag_result *r,
                 const report_style *st);
void report_json(FILE *out, const timeline *tl, const diag_meta *meta, const diag_result *r,
                 const report_style *st);
void report_html(FILE *out, const timeline *tl, const diag_meta *meta, const diag_result *r,
                 const report_style *st);

/* A comparison of nbase base recordings (files base[]) with ncand candidates. */
void compare_text(FILE *out, const diag_comparison *c, const char *const *base, int nbase,
                  const char *const *cand, int ncand, const report_style *st);
void compare_json(FILE *out, const diag_comparison *c, const char *const *base, int nbase,
                  const char *const *cand, int ncand);

/*
 * A sparkline of x over samples [from, to), resampled to `width` cells
 * (mean per cell), scaled lo..hi, into out: "▁▂▃▄▅▆▇█" with utf8, " .:-=+*#"
 * without; a cell with no value is a space. Returns out.
 */
char *report_sparkline(const double *x, int from, int to, double lo, double hi, int width,
                       bool utf8, char *out, size_t len);

/* Pieces of the HTML page other pages share: text with &<>"' escaped, colour i of
 * the series palette, the style sheet. */
void report_html_escape(FILE *o, const char *s);
const char *report_html_color(int i);
const char *report_html_css(void);

/* The goal the findings were judged by, what it means and how to pick the other
 * ("throughput (keep the GPUs busy; --goal latency for serving)"), translated. */
const char *report_goal_text(diag_goal g);

/* "%.*f" of v, or "n/a" when v is NAN. */
const char *report_num(double v, int decimals, char *buf, size_t len);

/*
 * Load a recording (.gpuwhy) or a log the user already has (nvidia-smi
 * --query-gpu CSV, dmon, gpuwhy export CSV; src says what such a log cannot:
 * its fields and interval, may be NULL) for report/compare: the timeline and
 * its meta. A log's notes go to stderr. Prints one error line and returns a
 * GW_EXIT_* code on failure; 0 and *tl, *meta on success.
 */
int report_load(const char *path, const smilog_opts *src, timeline **tl, diag_meta *meta);

#endif
