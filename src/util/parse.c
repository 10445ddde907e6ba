#include "util/parse.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

bool gw_parse_int(const char *s, long long min, long long max, long long *out)
{
	if (!s || !*s)
		return false;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

double gw_strtod_c(const char *s, char **end)
{
	/* strtod_l with a "C" locale: a German LC_NUMERIC must not turn 4.25 into 4. */
	static locale_t c_loc;
	if (!c_loc)
		c_loc = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
	return strtod_l(s, end, c_loc);
}

bool gw_parse_double(const char *s, double *out)
{
	if (!s || !*s)
		return false;
	char *end;
	errno = 0;
	double v = gw_strtod_c(s, &end);
	if (errno || *end || !isfinite(v))
		return false;
	*out = v;
	return true;
}

bool gw_parse_duration_ns(const char *s, int64_t default_unit_ns, int64_t *out_ns)
{
	if (!s || !*s)
		return false;
	char *end;
	errno = 0;
	double v = gw_strtod_c(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return false;
	double mult;
	if (!*end)
		mult = (double)default_unit_ns;
	else if (!strcmp(end, "ns"))
		mult = 1;
	else if (!strcmp(end, "us"))
		mult = 1e3;
	else if (!strcmp(end, "ms"))
		mult = 1e6;
	else if (!strcmp(end, "s"))
		mult = 1e9;
	else if (!strcmp(end, "m") || !strcmp(end, "min"))
		mult = 60e9;
	else if (!strcmp(end, "h"))
		mult = 3600e9;
	else if (!strcmp(end, "d"))
		mult = 86400e9;
	else
		return false;
	double ns = v * mult;
	if (ns > 9.0e18)
		return false;
	*out_ns = (int64_t)llround(ns);
	return true;
}

double gw_size_unit(char c)
{
	switch (c >= 'a' && c <= 'z' ? c - 32 : c) {
	case 'K':
		return 1024.0;
	case 'M':
		return 1024.0 * 1024;
	case 'G':
		return 1024.0 * 1024 * 1024;
	case 'T':
		return 1024.0 * 1024 * 1024 * 1024;
	default:
		return 0;
	}
}

bool gw_parse_size_bytes(const char *s, uint64_t *out)
{
	if (!s || !*s)
		return false;
	char *end;
	errno = 0;
	double v = gw_strtod_c(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return false;
	double mult = 1;
	if ((*end == 'B' || *end == 'b') && end[1])
		return false;
	if (*end && *end != 'B' && *end != 'b') {
		const char *rest = end + 1;
		mult = gw_size_unit(*end);
		if (!mult)
			return false;
		/* Accept K, KB, KiB (all binary: GPU memory is always counted in MiB). */
		if (*rest && strcasecmp(rest, "B") && strcasecmp(rest, "iB"))
			return false;
	}
	if (v * mult > 1.8e19)
		return false;
	*out = (uint64_t)llround(v * mult);
	return true;
}
