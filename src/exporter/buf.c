/*
 * buf.c - the one writer of the Prometheus text exposition format: family
 * heads, escapes, numbers (never through the locale) and histograms, for
 * the exporter's page and the gate's.
 */
#include <stdint.h>
#include <stdbool.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exporter/buf.h"
#include "util/strbuf.h"

/* Digits of v (v >= 0) into the end of tmp; returns the start. */
static char *utoa_rev(unsigned long long v, char *end)
{
	char *p = end;
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return p;
}

void exporter_buf_int(exporter_buf *b, long long v)
{
	char tmp[24], *end = tmp + sizeof tmp;
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
	char *p = utoa_rev(u, end);
	if (v < 0)
		*--p = '-';
	gw_sb_put(b, p, (size_t)(end - p));
}

static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static locale_t c_locale;

static void c_locale_init(void)
{
	c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
}

void exporter_buf_fixed6(exporter_buf *b, double v)
{
	if (isnan(v)) {
		gw_sb_puts(b, "NaN");
		return;
	}
	if (isinf(v)) {
		gw_sb_puts(b, v > 0 ? "+Inf" : "-Inf");
		return;
	}
	bool neg = signbit(v);
	double a = fabs(v);
	/* Up to 9e12 the scaled value is an exact enough integer for six decimals. */
	if (a < 9e12) {
		unsigned long long micro = (unsigned long long)llround(a * 1e6);
		char tmp[40], *end = tmp + sizeof tmp;
		char *p = utoa_rev(micro % 1000000ULL, end);
		while (end - p < 6)
			*--p = '0';
		*--p = '.';
		p = utoa_rev(micro / 1000000ULL, p);
		if (neg && micro)
			*--p = '-';
		gw_sb_put(b, p, (size_t)(end - p));
		return;
	}
	/* Huge (never a real GPU value): printf under the C locale, this thread only. */
	pthread_once(&c_locale_once, c_locale_init);
	locale_t old = c_locale ? uselocale(c_locale) : (locale_t)0;
	char tmp[400];
	int n = snprintf(tmp, sizeof tmp, "%.6f", v);
	if (old)
		uselocale(old);
	if (n > 0)
		gw_sb_put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* Length of the valid UTF-8 sequence at s (1..4), 0 when invalid. */
static int utf8_len(const unsigned char *s)
{
	unsigned c = s[0];
	if (c < 0x80)
		return 1;
	int n;
	unsigned lo = 0x80, hi = 0xBF;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2;
	else if (c >= 0xE0 && c <= 0xEF) {
		n = 3;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F; /* no UTF-16 surrogates */
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 4;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
	} else
		return 0;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (int k = 2; k < n; k++)
		if (s[k] < 0x80 || s[k] > 0xBF)
			return 0;
	return n;
}

/*
 * Escapes for the exposition format. Prometheus rejects a whole scrape whose
 * text is not UTF-8, so bytes that are not (a process name, a hostname) become '?'.
 */
static void put_escaped(exporter_buf *b, const char *str, bool quotes)
{
	const unsigned char *s = (const unsigned char *)str, *run = s;
	while (*s) {
		const char *esc = NULL;
		int n = 1;
		if (*s == '\\')
			esc = "\\\\";
		else if (*s == '\n')
			esc = "\\n";
		else if (quotes && *s == '"')
			esc = "\\\"";
		else if (!(n = utf8_len(s))) {
			esc = "?";
			n = 1;
		}
		if (!esc) {
			s += n;
			continue;
		}
		gw_sb_put(b, (const char *)run, (size_t)(s - run));
		gw_sb_puts(b, esc);
		s += n;
		run = s;
	}
	gw_sb_put(b, (const char *)run, (size_t)(s - run));
}

void exporter_buf_label_value(exporter_buf *b, const char *s)
{
	put_escaped(b, s, true);
}

void exporter_buf_help_text(exporter_buf *b, const char *s)
{
	put_escaped(b, s, false);
}

void exporter_buf_family(exporter_buf *b, const char *name, const char *type, const char *help)
{
	gw_sb_puts(b, "# HELP ");
	gw_sb_puts(b, name);
	gw_sb_puts(b, " ");
	exporter_buf_help_text(b, help);
	gw_sb_puts(b, "\n# TYPE ");
	gw_sb_puts(b, name);
	gw_sb_puts(b, " ");
	gw_sb_puts(b, type);
	gw_sb_puts(b, "\n");
}

void exporter_buf_histogram(exporter_buf *b, const char *name, const char *labels, const double *le,
                            const uint64_t *count, int n, uint64_t total, double sum)
{
	uint64_t cum = 0;
	const char *sep = labels[0] ? "," : "";
	for (int i = 0; i < n; i++) {
		cum += count[i];
		gw_sb_printf(b, "%s_bucket{%s%sle=\"%g\"} %llu\n", name, labels, sep, le[i],
		             (unsigned long long)cum);
	}
	gw_sb_printf(b, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, labels, sep,
	             (unsigned long long)total);
	gw_sb_printf(b, "%s_sum%s%s%s %.9g\n", name, labels[0] ? "{" : "", labels,
	             labels[0] ? "}" : "", sum);
	gw_sb_printf(b, "%s_count%s%s%s %llu\n", name, labels[0] ? "{" : "", labels,
	             labels[0] ? "}" : "", (unsigned long long)total);
}
