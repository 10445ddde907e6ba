/* common.c - what every report face shares: locale and colour checks, sparklines, numbers. */
#include <langinfo.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "report/report.h"
#include "util/i18n.h"

bool report_locale_utf8(void)
{
	const char *cs = nl_langinfo(CODESET);
	return cs && (!strcasecmp(cs, "UTF-8") || !strcasecmp(cs, "utf8"));
}

bool report_want_color(FILE *out)
{
	const char *nc = getenv("NO_COLOR");
	if (nc && *nc)
		return false;
	return isatty(fileno(out));
}

char *report_sparkline(const double *x, int from, int to, double lo, double hi, int width,
                       bool utf8, char *out, size_t len)
{
	static const char *const blocks[8] = {"\u2581", "\u2582", "\u2583", "\u2584",
	                                      "\u2585", "\u2586", "\u2587", "\u2588"};
	static const char ascii[8] = {' ', '.', ':', '-', '=', '+', '*', '#'};
	size_t o = 0;
	if (len)
		out[0] = 0;
	int n = to - from;
	if (!x || n <= 0 || width <= 0 || len == 0)
		return out;
	if (width > n)
		width = n;
	double span = hi > lo ? hi - lo : 1;
	for (int c = 0; c < width; c++) {
		int a = from + (int)((long)n * c / width),
		    b = from + (int)((long)n * (c + 1) / width);
		if (b <= a)
			b = a + 1;
		double sum = 0;
		int k = 0;
		for (int s = a; s < b; s++)
			if (!isnan(x[s])) {
				sum += x[s];
				k++;
			}
		const char *cell;
		char one[2] = {0, 0};
		if (!k) {
			cell = " ";
		} else {
			double v = (sum / k - lo) / span;
			/* clamp before converting: a value may be infinite */
			int level = !(v > 0) ? 0 : v >= 1 ? 7 : (int)(v * 8);
			if (utf8) {
				cell = blocks[level];
			} else {
				one[0] = ascii[level];
				/* ASCII's lowest level is a blank: show a present zero as '_'. */
				if (one[0] == ' ')
					one[0] = '_';
				cell = one;
			}
		}
		size_t cl = strlen(cell);
		if (o + cl + 1 > len)
			break;
		memcpy(out + o, cell, cl);
		o += cl;
		out[o] = 0;
	}
	return out;
}

const char *report_goal_text(diag_goal g)
{
	/* The word alone ("goal throughput") tells a reader neither what it changes nor
	 * that it is a choice. */
	return g == DIAG_GOAL_LATENCY
	           ? _("latency (serving: moderate utilization is normal; --goal throughput "
	               "for training and batch jobs)")
	           : _("throughput (keep the GPUs busy; --goal latency for serving)");
}

const char *report_num(double v, int decimals, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%.*f", decimals, v);
	return buf;
}
