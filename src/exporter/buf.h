/*
 * buf.h - the exposition text buffer and the writers of the Prometheus text format
 * (buf.c).
 */
#ifndef GPUWHY_EXPORTER_BUF_H
#define GPUWHY_EXPORTER_BUF_H

#include <stddef.h>
#include <stdint.h>

#include "util/strbuf.h"

/*
 * The exposition text: a util string buffer (gw_sb_put, gw_sb_puts, ...)
 * whose bytes the HTTP side takes without a copy, plus the number and
 * escape writers of the text format below.
 */
typedef gw_strbuf exporter_buf;

void exporter_buf_int(exporter_buf *b, long long v);
/* Fixed six decimals like printf("%f") in the C locale, whatever the user's locale. */
void exporter_buf_fixed6(exporter_buf *b, double v);
/* Label value with the exposition format's escapes (\\, \", \n). */
void exporter_buf_label_value(exporter_buf *b, const char *s);
/* HELP text with its escapes (\\, \n). */
void exporter_buf_help_text(exporter_buf *b, const char *s);
/* A family's "# HELP" and "# TYPE" lines. */
void exporter_buf_family(exporter_buf *b, const char *name, const char *type, const char *help);
/* A histogram's series: cumulative buckets at the upper bounds le (n of
 * them, +Inf implied), _sum and _count; labels are "k=\"v\",..." or "". */
void exporter_buf_histogram(exporter_buf *b, const char *name, const char *labels, const double *le,
                            const uint64_t *count, int n, uint64_t total, double sum);

#endif
