/*
 * smilog.c - logs a user already has into a timeline (see smilog.h): the
 * format told from the content, the values as the metric table holds them,
 * the rows grouped into samples.
 */
#include "store/smilog.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "gpu/metrics.h"
#include "store/smilog_int.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/xalloc.h"

/* Larger logs are months of 1 s samples of many GPUs: refuse rather than exhaust memory. */
#define SL_MAX_BYTES (1024L * 1024 * 1024)

const char *smilog_format_name(smilog_format f)
{
	switch (f) {
	case SMILOG_QUERY_CSV:
		return "nvidia-smi --query-gpu CSV";
	case SMILOG_DMON:
		return "nvidia-smi dmon";
	case SMILOG_EXPORT_CSV:
		return "gpuwhy export CSV";
	}
	return "?";
}

bool smilog_is_sqlite(const char *path)
{
	static const char magic[16] = "SQLite format 3";
	char head[16];
	FILE *f = fopen(path, "rb");
	if (!f)
		return false;
	size_t n = fread(head, 1, sizeof head, f);
	fclose(f);
	return n == sizeof head && !memcmp(head, magic, sizeof head);
}

bool sl_next_line(sl_lines *it, const char **line, size_t *n, bool *had_nl)
{
	if (it->pos >= it->len)
		return false;
	const char *s = it->buf + it->pos;
	const char *nl = memchr(s, '\n', it->len - it->pos);
	size_t k = nl ? (size_t)(nl - s) : it->len - it->pos;
	it->pos += k + (nl ? 1 : 0);
	it->no++;
	*had_nl = nl != NULL;
	if (k > 0 && s[k - 1] == '\r')
		k--;
	*line = s;
	*n = k;
	return true;
}

bool sl_blank(const char *line, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
			return false;
	return true;
}

char *sl_trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
	return s;
}

int sl_split(char *s, char sep, char **f, int max)
{
	int n = 0;
	if (sep == ' ') {
		char *save = NULL;
		for (char *p = strtok_r(s, " \t", &save); p; p = strtok_r(NULL, " \t", &save)) {
			if (n == max)
				return -1;
			f[n++] = p;
		}
		return n;
	}
	for (char *p = s;; n++) {
		if (n == max)
			return -1;
		char *c = strchr(p, sep);
		if (c)
			*c = '\0';
		f[n] = sl_trim(p);
		if (!c)
			return n + 1;
		p = c + 1;
	}
}

void sl_note_unknown(sl_build *b, const char *field)
{
	char *u = b->info->unknown;
	size_t len = strlen(u), need = strlen(field) + (len ? 2 : 0);
	if (strstr(u, "...") == u + len - 3 && len >= 3)
		return;
	if (len + need + 4 >= sizeof b->info->unknown) {
		snprintf(u + len, sizeof b->info->unknown - len, "%s...", len ? ", " : "");
		return;
	}
	snprintf(u + len, sizeof b->info->unknown - len, "%s%s", len ? ", " : "", field);
}

/* Words nvidia-smi prints for enumerations, as the metric table stores them. */
static bool word_value(const char *s, int metric, double *v)
{
	static const struct {
		const char *w;
		double v;
	} words[] = {{"Enabled", 1},    {"Disabled", 0},
	             {"Active", 1},     {"Not Active", 0},
	             {"Yes", 1},        {"No", 0},
	             {"Default", 0},    {"Exclusive_Thread", 1},
	             {"Prohibited", 2}, {"Exclusive_Process", 3}};
	if (metric == GM_PSTATE && (s[0] == 'P' || s[0] == 'p') && isdigit((unsigned char)s[1])) {
		*v = atoi(s + 1);
		return true;
	}
	for (size_t i = 0; i < sizeof words / sizeof *words; i++)
		if (!strcasecmp(s, words[i].w)) {
			*v = words[i].v;
			return true;
		}
	return false;
}

double sl_value(const char *s, int metric)
{
	while (*s == ' ')
		s++;
	/* [N/A], [Not Supported], [Unknown Error], [Insufficient Permissions], dmon's '-' */
	if (!*s || *s == '[' || !strcmp(s, "-") || !strcasecmp(s, "N/A"))
		return NAN;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s) {
		double w;
		return word_value(s, metric, &w) ? w : NAN;
	}
	if (errno == ERANGE || !isfinite(v))
		return NAN;
	/* What follows may only be a unit: " %", " MiB", " W", " MHz", " MiB/s". */
	for (const char *p = end; *p; p++)
		if (!isalpha((unsigned char)*p) && !strchr(" %/", *p))
			return NAN;
	return v;
}

/* 2026/12/07 01:02:03.456 (nvidia-smi's timestamp field), local time. */
static double parse_stamp(const char *s)
{
	int Y, M, D, h, m;
	double sec;
	char tail;
	if (sscanf(s, "%d/%d/%d %d:%d:%lf%c", &Y, &M, &D, &h, &m, &sec, &tail) != 6 || M < 1 ||
	    M > 12 || D < 1 || D > 31 || h < 0 || h > 23 || m < 0 || m > 59 || sec < 0 ||
	    sec >= 61 || Y < 1970 || Y > 9999)
		return NAN;
	struct tm tm = {.tm_year = Y - 1900,
	                .tm_mon = M - 1,
	                .tm_mday = D,
	                .tm_hour = h,
	                .tm_min = m,
	                .tm_isdst = -1};
	time_t t = mktime(&tm);
	return t == (time_t)-1 ? NAN : (double)t + sec;
}

/* dmon -o D and -o T: YYYYMMDD and HH:MM:SS. */
static double parse_date(const char *s)
{
	int Y, M, D;
	char tail;
	if (strlen(s) != 8 || sscanf(s, "%4d%2d%2d%c", &Y, &M, &D, &tail) != 3 || M < 1 || M > 12 ||
	    D < 1 || D > 31 || Y < 1970)
		return NAN;
	struct tm tm = {.tm_year = Y - 1900, .tm_mon = M - 1, .tm_mday = D, .tm_isdst = -1};
	time_t t = mktime(&tm);
	return t == (time_t)-1 ? NAN : (double)t;
}

static double parse_tod(const char *s)
{
	int h, m, sec;
	char tail;
	if (sscanf(s, "%d:%d:%d%c", &h, &m, &sec, &tail) != 3 || h < 0 || h > 23 || m < 0 ||
	    m > 59 || sec < 0 || sec > 60)
		return NAN;
	return h * 3600.0 + m * 60.0 + sec;
}

static void grow_rows(sl_build *b)
{
	if (b->nrows < b->cap)
		return;
	b->cap = b->cap ? b->cap * 2 : 256;
	b->rgpu = gw_xrealloc(b->rgpu, (size_t)b->cap * sizeof *b->rgpu);
	b->rt = gw_xrealloc(b->rt, (size_t)b->cap * sizeof *b->rt);
	b->rv = gw_xrealloc(b->rv, (size_t)b->cap * (size_t)b->ncols * sizeof *b->rv);
}

/* The GPU a row belongs to, by the identity columns it has; -1 when there are too many. */
static int row_gpu(sl_build *b, char **f, int n)
{
	char key[160] = "";
	int index = -1;
	const char *uuid = "", *name = "";
	bool any = false;
	for (int c = 0; c < n; c++) {
		sl_role r = b->cols[c].role;
		if (r == SLC_INDEX || r == SLC_UUID || r == SLC_BUS) {
			size_t k = strlen(key);
			snprintf(key + k, sizeof key - k, "%s|", f[c]);
			any = true;
		}
		if (r == SLC_INDEX) {
			double v = sl_value(f[c], -1);
			index = isnan(v) || v < 0 || v > 1e6 ? -1 : (int)v;
		} else if (r == SLC_UUID)
			uuid = f[c];
		else if (r == SLC_NAME)
			name = f[c];
		else if (r == SLC_DRIVER && f[c][0] != '[')
			snprintf(b->driver, sizeof b->driver, "%s", f[c]);
	}
	if (!any)
		b->info->no_gpu_id = true;
	for (int g = 0; g < b->ngpu; g++)
		if (!strcmp(b->gkey[g], key))
			return g;
	if (b->ngpu == GPU_MAX)
		return -1;
	int g = b->ngpu++;
	snprintf(b->gkey[g], sizeof b->gkey[g], "%s", key);
	b->gindex[g] = index >= 0 ? index : g;
	snprintf(b->guuid[g], sizeof b->guuid[g], "%s", uuid[0] == '[' ? "" : uuid);
	snprintf(b->gname[g], sizeof b->gname[g], "%s", name[0] == '[' ? "" : name);
	return g;
}

/* The time of a row from its time columns: NAN when it has none, -1 when one is bad. */
static double row_time(sl_build *b, char **f, int n, int *bad)
{
	double t = NAN, date = NAN, tod = NAN;
	*bad = -1;
	for (int c = 0; c < n; c++) {
		sl_role r = b->cols[c].role;
		double v = r == SLC_STAMP   ? parse_stamp(f[c])
		           : r == SLC_EPOCH ? sl_value(f[c], -1)
		           : r == SLC_DATE  ? parse_date(f[c])
		           : r == SLC_TOD   ? parse_tod(f[c])
		                            : 0;
		if (r != SLC_STAMP && r != SLC_EPOCH && r != SLC_DATE && r != SLC_TOD)
			continue;
		if (isnan(v)) {
			*bad = c;
			return NAN;
		}
		if (r == SLC_DATE)
			date = v;
		else if (r == SLC_TOD)
			tod = v;
		else
			t = v;
	}
	if (!isnan(tod) && isnan(date)) {
		/* Time of day alone: a day passes where it goes back by more than half a day. */
		if (b->nrows > 0 && tod + 43200 < b->tod_last)
			b->tod_day += 86400;
		b->tod_last = tod;
		return tod + b->tod_day;
	}
	if (!isnan(tod))
		/* midnight of that date may be 23 or 25 hours long: add the time of day in hours */
		return date + tod;
	return isnan(date) ? t : date;
}

int sl_add_fields(sl_build *b, char **f, int n, long line)
{
	int bad;
	double t = row_time(b, f, n, &bad);
	if (bad >= 0)
		return gw_fail_set(b->err, GW_EXIT_ENV, b->name,
		                   N_("a timestamp reads 2026/12/07 01:02:03.456"),
		                   "line %ld: unreadable time '%.40s'", line, f[bad]);
	int g = row_gpu(b, f, n);
	if (g < 0)
		return gw_fail_set(b->err, GW_EXIT_ENV, b->name, NULL, "more than %d GPUs",
		                   GPU_MAX);
	grow_rows(b);
	long r = b->nrows++;
	b->rgpu[r] = g;
	b->rt[r] = t;
	double *v = b->rv + r * b->ncols;
	for (int c = 0; c < b->ncols; c++) {
		v[c] = NAN;
		if (c < n && b->cols[c].role == SLC_METRIC)
			v[c] = sl_value(f[c], b->cols[c].metric);
		else if (c < n && b->cols[c].role == SLC_LOST && sl_value(f[c], -1) > 0)
			b->glost[g] = true;
	}
	b->info->rows++;
	return 0;
}

int sl_bad_count(sl_build *b, bool had_nl, const sl_lines *it, int n)
{
	(void)had_nl;
	if (n < 0)
		return gw_fail_set(b->err, GW_EXIT_ENV, b->name, NULL,
		                   "line %ld has more than %d fields", it->no, SL_MAX_FIELDS);
	return gw_fail_set(b->err, GW_EXIT_ENV, b->name,
	                   N_("one log per file, all written with the same fields"),
	                   "line %ld has %d fields, the header %d", it->no, n, b->ncols);
}

/* The samples: a row starts a new one when its GPU already has a row in the current one. */
static void build_samples(sl_build *b, timeline *tl, double interval)
{
	bool seen[GPU_MAX] = {false};
	int s = -1;
	double t0 = b->has_time ? b->rt[0] : 0, last = 0;
	for (long r = 0; r < b->nrows; r++) {
		int g = b->rgpu[r];
		if (s < 0 || seen[g]) {
			double t = b->has_time ? b->rt[r] - t0 : (tl->n) * interval;
			if (t < last) /* a clock stepped back: keep the order of the log */
				t = last;
			last = t;
			s = tl_add_sample(tl, t);
			memset(seen, 0, sizeof seen);
		}
		seen[g] = true;
		const double *v = b->rv + r * b->ncols;
		for (int c = 0; c < b->ncols; c++)
			if (b->cols[c].role == SLC_METRIC && !isnan(v[c]))
				tl_set_gpu(tl, g, (gpu_metric_id)b->cols[c].metric, s, v[c]);
	}
	/* The last sample covers one interval too, as a recording's end does. */
	double step = interval;
	if (b->has_time && tl->n > 1)
		step = tl->t[tl->n - 1] / (tl->n - 1);
	tl->duration = tl->t[tl->n - 1] + (step > 0 ? step : 0);
	tl->t0_wall = b->has_time ? t0 : 0;
}

static int finish(sl_build *b, timeline **out)
{
	if (b->nrows == 0)
		return gw_fail_set(b->err, GW_EXIT_ENV, b->name,
		                   N_("the log holds a header but no samples"), "no data rows");
	b->info->timed = b->has_time;
	double interval = b->o ? b->o->interval : 0;
	if (!b->has_time && !(interval > 0))
		return gw_fail_set(
		    b->err, GW_EXIT_USAGE, b->name,
		    N_("give the interval it was written at: --interval 1s for nvidia-smi -l 1 or "
		       "dmon -d 1"),
		    "the log has no times");
	timeline *tl = tl_new(b->ngpu, 0);
	for (int g = 0; g < b->ngpu; g++) {
		tl->gpu[g].index = b->gindex[g];
		snprintf(tl->gpu[g].uuid, sizeof tl->gpu[g].uuid, "%s", b->guuid[g]);
		snprintf(tl->gpu[g].name, sizeof tl->gpu[g].name, "%s", b->gname[g]);
		/* nvidia-smi's own logs: only NVIDIA GPUs are in them */
		snprintf(tl->gpu[g].vendor, sizeof tl->gpu[g].vendor, "nvidia");
		tl->gpu[g].lost_at_end = b->glost[g];
	}
	snprintf(tl->driver, sizeof tl->driver, "%s", b->driver);
	build_samples(b, tl, interval);
	tl_meta_set(tl, "source", smilog_format_name(b->info->format));
	*out = tl;
	return 0;
}

/* Control characters other than tab and line ends in the first 4 KiB: not a log. */
static bool binary_head(const char *buf, size_t len)
{
	for (size_t i = 0; i < len && i < 4096; i++) {
		unsigned char c = (unsigned char)buf[i];
		if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f)
			return true;
	}
	return false;
}

int smilog_parse(const char *buf, size_t len, const char *name, const smilog_opts *o,
                 timeline **out, smilog_info *info, gw_fail *err)
{
	*out = NULL;
	smilog_info scratch;
	if (!info)
		info = &scratch;
	memset(info, 0, sizeof *info);
	if (memchr(buf, '\0', len) || binary_head(buf, len))
		return gw_fail_set(err, GW_EXIT_ENV, name,
		                   N_("give a .gpuwhy recording, an nvidia-smi --query-gpu CSV or "
		                      "dmon log, or a gpuwhy export CSV"),
		                   "not a text log (binary data)");
	if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3)) { /* a byte order mark from an editor */
		buf += 3;
		len -= 3;
	}
	sl_build *b = gw_xcalloc(1, sizeof *b);
	*b = (sl_build){.name = name, .o = o, .info = info, .err = err};
	sl_lines it = {.buf = buf, .len = len};
	const char *line = NULL;
	size_t n = 0;
	bool nl;
	/* The first line that is not blank tells the format. */
	sl_lines peek = it;
	while (sl_next_line(&peek, &line, &n, &nl) && sl_blank(line, n))
		;
	int rc;
	if (!line || sl_blank(line, n))
		rc = gw_fail_set(err, GW_EXIT_ENV, name,
		                 N_("give a .gpuwhy recording, an nvidia-smi --query-gpu CSV or "
		                    "dmon log, or a gpuwhy export CSV"),
		                 "empty file");
	else if (line[0] == '#')
		rc = sl_read_dmon(b, &it);
	else if (n >= 11 && !memcmp(line, "t,gpu,lost,", 11))
		rc = sl_read_export_csv(b, &it);
	else
		rc = sl_read_query_csv(b, &it);
	if (rc == 0)
		rc = finish(b, out);
	free(b->rgpu);
	free(b->rt);
	free(b->rv);
	free(b);
	return rc;
}

int smilog_read(const char *path, const smilog_opts *o, timeline **out, smilog_info *info,
                gw_fail *err)
{
	*out = NULL;
	FILE *f = fopen(path, "rb");
	if (!f)
		return gw_fail_set(err, GW_EXIT_ENV, path, NULL, "cannot open: %s",
		                   strerror(errno));
	struct stat st;
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(f);
		return gw_fail_set(err, GW_EXIT_ENV, path, NULL, "is a directory");
	}
	char *buf = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (len == cap) {
			cap = cap ? cap * 2 : 65536;
			buf = gw_xrealloc(buf, cap);
		}
		size_t k = fread(buf + len, 1, cap - len, f);
		len += k;
		if (k == 0 || len > (size_t)SL_MAX_BYTES)
			break;
	}
	int bad = ferror(f);
	fclose(f);
	int rc;
	if (bad)
		rc = gw_fail_set(err, GW_EXIT_ENV, path, NULL, "cannot read: %s", strerror(errno));
	else if (len > (size_t)SL_MAX_BYTES)
		rc = gw_fail_set(err, GW_EXIT_ENV, path, N_("split the log, or cut it to the run"),
		                 "larger than 1 GiB");
	else
		rc = smilog_parse(buf, len, path, o, out, info, err);
	free(buf);
	return rc;
}
