/*
 * prom_parse.c - the JSON of a range answer ({"status":"success","data":
 * {"resultType":"matrix","result":[{"metric":{...},"values":[[t,"v"],...]}]}})
 * into series, read as it is scanned, and the chunks a long range is asked in.
 * Pure: unit-tested on answers written by hand.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "prom/prom.h"
#include "util/err.h"
#include "util/xalloc.h"

const char *prom_label_get(const prom_series *s, const char *name)
{
	for (int i = 0; i < s->nlabels; i++)
		if (!strcmp(s->labels[i].name, name))
			return s->labels[i].value;
	return NULL;
}

void prom_matrix_free(prom_matrix *m)
{
	for (int i = 0; i < m->n; i++) {
		prom_series *s = &m->s[i];
		for (int k = 0; k < s->nlabels; k++) {
			free(s->labels[k].name);
			free(s->labels[k].value);
		}
		free(s->labels);
		free(s->t);
		free(s->v);
	}
	free(m->s);
	*m = (prom_matrix){0};
}

static int label_cmp(const void *a, const void *b)
{
	return strcmp(((const prom_label *)a)->name, ((const prom_label *)b)->name);
}

static bool same_labels(const prom_series *s, const prom_label *l, int n)
{
	if (s->nlabels != n)
		return false;
	for (int i = 0; i < n; i++)
		if (strcmp(s->labels[i].name, l[i].name) || strcmp(s->labels[i].value, l[i].value))
			return false;
	return true;
}

/* The series with these labels among the first n0 (the answers parsed before), taking the
 * labels over, or a new one (freeing them when found). Prometheus never sends two series of
 * the same labels in one answer, so a series is looked for only among earlier chunks'. */
static prom_series *series_for(prom_matrix *m, int n0, prom_label *l, int n)
{
	for (int i = n0 - 1; i >= 0; i--)
		if (same_labels(&m->s[i], l, n)) {
			for (int k = 0; k < n; k++) {
				free(l[k].name);
				free(l[k].value);
			}
			free(l);
			return &m->s[i];
		}
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 16;
		m->s = gw_xrealloc(m->s, (size_t)m->cap * sizeof *m->s);
	}
	prom_series *s = &m->s[m->n++];
	*s = (prom_series){.labels = l, .nlabels = n};
	return s;
}

/* Room for more points: doubled, so that appending stays linear. */
static void reserve_points(prom_series *s, int more)
{
	if (s->n + more <= s->cap)
		return;
	int cap = s->cap ? s->cap : 16;
	while (cap < s->n + more)
		cap *= 2;
	s->t = gw_xrealloc(s->t, (size_t)cap * sizeof *s->t);
	s->v = gw_xrealloc(s->v, (size_t)cap * sizeof *s->v);
	s->cap = cap;
}

/*
 * The answer is read as it is scanned (yajl's callbacks), never held as a tree: a tree of
 * jansson values costs some 170 bytes a point, eight times the JSON, and an answer's points
 * are 16. Each open container has a role, known from its parent's role and key.
 */
typedef enum {
	R_SKIP, /* a value nothing is read from */
	R_ROOT,
	R_DATA,
	R_RESULT,
	R_ELEM, /* an element of result[] */
	R_METRIC,
	R_VALUES,
	R_POINT
} role;

#define PARSE_DEPTH 8 /* deeper containers are skipped (counted, not kept) */

typedef struct {
	prom_matrix *m;
	int n0; /* series before this answer */
	role st[PARSE_DEPTH];
	char key[PARSE_DEPTH][16]; /* the key last read in each open object ("" none) */
	int depth;
	bool top_scalar;                     /* the document is no object or array */
	char *status, *error, *etype, *type; /* NULL when absent or not strings */
	bool result_array;
	/* result[] */
	long elem, bad; /* the element being read; the first malformed one, -1 none */
	bool has_metric, has_values, elem_bad;
	prom_label *l;
	int nl, capl;
	char *label; /* the name whose value comes next */
	double *pt, *pv;
	int np, capp;
	int pidx; /* index in the point being read */
	bool pt_ok, pv_ok;
	double t, v;
} pstate;

static void set_str(char **dst, const char *s, size_t n)
{
	free(*dst);
	*dst = s ? gw_xstrndup(s, n) : NULL;
}

static void add_label(pstate *p, const char *v, size_t n)
{
	char *name = p->label ? p->label : gw_xstrdup("");
	p->label = NULL;
	for (int i = 0; i < p->nl; i++)
		if (!strcmp(p->l[i].name, name)) { /* a repeated name: the last value wins */
			free(name);
			free(p->l[i].value);
			p->l[i].value = gw_xstrndup(v, n);
			return;
		}
	if (p->nl == p->capl) {
		p->capl = p->capl ? 2 * p->capl : 16;
		p->l = gw_xrealloc(p->l, (size_t)p->capl * sizeof *p->l);
	}
	p->l[p->nl++] = (prom_label){.name = name, .value = gw_xstrndup(v, n)};
}

static void drop_labels(pstate *p)
{
	for (int i = 0; i < p->nl; i++) {
		free(p->l[i].name);
		free(p->l[i].value);
	}
	p->nl = 0;
}

/* An element of result[] that is no object. */
static void bad_elem(pstate *p)
{
	if (p->bad < 0)
		p->bad = p->elem;
	p->elem++;
}

/* The parent's role and the key the value at hand is under. */
static role parent(const pstate *p, const char **key)
{
	*key = p->depth > 0 && p->depth <= PARSE_DEPTH ? p->key[p->depth - 1] : "";
	return p->depth > 0 && p->depth <= PARSE_DEPTH ? p->st[p->depth - 1] : R_SKIP;
}

/* The powers of ten a double holds exactly. */
static const double exact_pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/*
 * s[0, n) as strtod reads it; false when strtod would not read it whole. A plain decimal of at
 * most 15 digits (what Prometheus writes: "93", "0.723", "1796541885.5") is its digits over a
 * power of ten, both exact, so one division rounds it as strtod does, at a fifth of the cost.
 */
static bool read_double(const char *s, size_t n, double *out)
{
	size_t i = n && s[0] == '-';
	unsigned long long m = 0;
	int digits = 0, frac = -1;
	for (; i < n; i++)
		if (s[i] >= '0' && s[i] <= '9') {
			m = m * 10 + (unsigned)(s[i] - '0');
			digits++;
			frac += frac >= 0;
		} else if (s[i] == '.' && frac < 0)
			frac = 0;
		else
			break;
	if (i == n && digits > 0 && digits <= 15) {
		double v = (double)m / exact_pow10[frac > 0 ? frac : 0];
		*out = n && s[0] == '-' ? -v : v;
		return true;
	}
	char small[64], *buf = n < sizeof small ? small : gw_xmalloc(n + 1), *end;
	memcpy(buf, s, n);
	buf[n] = '\0';
	*out = strtod(buf, &end);
	bool whole = end == buf + n && n > 0; /* a NUL inside is not read whole */
	if (buf != small)
		free(buf);
	return whole;
}

/* A scalar value (kind: 's' string, 'n' number, 'o' other) where it stands. */
static void scalar(pstate *p, char kind, const char *s, size_t n)
{
	const char *key;
	role r = parent(p, &key);
	if (p->depth == 0)
		p->top_scalar = true;
	else if (r == R_ROOT && !strcmp(key, "status"))
		set_str(&p->status, kind == 's' ? s : NULL, n);
	else if (r == R_ROOT && !strcmp(key, "error"))
		set_str(&p->error, kind == 's' ? s : NULL, n);
	else if (r == R_ROOT && !strcmp(key, "errorType"))
		set_str(&p->etype, kind == 's' ? s : NULL, n);
	else if (r == R_DATA && !strcmp(key, "resultType"))
		set_str(&p->type, kind == 's' ? s : NULL, n);
	else if (r == R_DATA && !strcmp(key, "result"))
		p->result_array = false;
	else if (r == R_RESULT)
		bad_elem(p);
	else if (r == R_ELEM && !strcmp(key, "metric"))
		p->has_metric = false;
	else if (r == R_ELEM && !strcmp(key, "values"))
		p->has_values = false;
	else if (r == R_METRIC)
		add_label(p, kind == 's' ? s : "", kind == 's' ? n : 0);
	else if (r == R_VALUES)
		p->elem_bad = true;
	else if (r == R_POINT && p->pidx == 0) {
		p->pt_ok = kind == 'n';
		if (kind == 'n')
			read_double(s, n, &p->t);
	} else if (r == R_POINT && p->pidx == 1) {
		p->pv_ok = kind == 's';
		/* Prometheus writes NaN, +Inf and -Inf as strtod reads them; anything it
		 * cannot read whole (an empty string too) is absent, never 0 */
		if (kind != 's' || !read_double(s, n, &p->v))
			p->v = NAN;
	}
	if (r == R_POINT)
		p->pidx++;
}

static int on_null(void *ctx)
{
	scalar(ctx, 'o', NULL, 0);
	return 1;
}

static int on_bool(void *ctx, int b)
{
	(void)b;
	scalar(ctx, 'o', NULL, 0);
	return 1;
}

static int on_number(void *ctx, const char *s, size_t n)
{
	scalar(ctx, 'n', s, n);
	return 1;
}

static int on_string(void *ctx, const unsigned char *s, size_t n)
{
	scalar(ctx, 's', (const char *)s, n);
	return 1;
}

static int on_key(void *ctx, const unsigned char *s, size_t n)
{
	pstate *p = ctx;
	if (p->depth > PARSE_DEPTH)
		return 1;
	if (p->st[p->depth - 1] == R_METRIC) {
		free(p->label);
		p->label = gw_xstrndup((const char *)s, n);
	}
	snprintf(p->key[p->depth - 1], sizeof p->key[0], "%.*s", (int)(n < 15 ? n : 15), s);
	if (n >= sizeof p->key[0])
		p->key[p->depth - 1][0] = '\0'; /* longer than any key read */
	return 1;
}

/* A container opens (map or array) where it stands: its role. */
static int open_container(pstate *p, bool map)
{
	const char *key;
	role r = parent(p, &key), mine = R_SKIP;
	if (p->depth == 0)
		mine = map ? R_ROOT : R_SKIP;
	else if (r == R_ROOT && !strcmp(key, "data"))
		mine = map ? R_DATA : R_SKIP;
	else if (r == R_DATA && !strcmp(key, "result")) {
		p->result_array = !map;
		mine = map ? R_SKIP : R_RESULT;
	} else if (r == R_RESULT && !map)
		bad_elem(p);
	else if (r == R_RESULT) {
		mine = R_ELEM;
		p->has_metric = p->has_values = p->elem_bad = false;
		drop_labels(p);
		p->np = 0;
	} else if (r == R_ELEM && !strcmp(key, "metric")) {
		mine = map ? R_METRIC : R_SKIP;
		p->has_metric = map;
		drop_labels(p);
	} else if (r == R_ELEM && !strcmp(key, "values")) {
		mine = map ? R_SKIP : R_VALUES;
		p->has_values = !map;
		p->np = 0;
	} else if (r == R_METRIC)
		add_label(p, "", 0);
	else if (r == R_VALUES) {
		mine = map ? R_SKIP : R_POINT;
		p->elem_bad |= map;
		p->pidx = 0;
		p->pt_ok = p->pv_ok = false;
	}
	if (p->depth < PARSE_DEPTH) {
		p->st[p->depth] = mine;
		p->key[p->depth][0] = '\0';
	}
	p->depth++;
	return 1;
}

/* One element of result[] read whole: its points into its series, unless an earlier one was
 * malformed (then nothing more is taken). */
static void end_elem(pstate *p)
{
	if (p->bad < 0 && (p->elem_bad || !p->has_metric || !p->has_values))
		p->bad = p->elem;
	p->elem++;
	if (p->bad >= 0)
		return;
	prom_label *l = gw_xcalloc((size_t)(p->nl ? p->nl : 1), sizeof *l);
	if (p->nl)
		memcpy(l, p->l, (size_t)p->nl * sizeof *l);
	qsort(l, (size_t)p->nl, sizeof *l, label_cmp);
	prom_series *s = series_for(p->m, p->n0, l, p->nl);
	p->nl = 0;      /* taken over */
	if (p->np == 0) /* a series with no points: nothing to copy, and s->t may be NULL */
		return;
	reserve_points(s, p->np);
	memcpy(s->t + s->n, p->pt, (size_t)p->np * sizeof *p->pt);
	memcpy(s->v + s->n, p->pv, (size_t)p->np * sizeof *p->pv);
	s->n += p->np;
}

static int close_container(pstate *p)
{
	p->depth--;
	role r = p->depth < PARSE_DEPTH ? p->st[p->depth] : R_SKIP;
	if (r == R_ELEM)
		end_elem(p);
	else if (r == R_POINT) {
		if (!p->pt_ok || !p->pv_ok)
			p->elem_bad = true;
		else {
			if (p->np == p->capp) {
				p->capp = p->capp ? 2 * p->capp : 256;
				p->pt = gw_xrealloc(p->pt, (size_t)p->capp * sizeof *p->pt);
				p->pv = gw_xrealloc(p->pv, (size_t)p->capp * sizeof *p->pv);
			}
			p->pt[p->np] = p->t;
			p->pv[p->np++] = p->v;
		}
	}
	if (p->depth > 0 && p->depth <= PARSE_DEPTH && p->st[p->depth - 1] == R_POINT)
		p->pidx++; /* a container inside a point takes its place */
	return 1;
}

static int on_start_map(void *ctx)
{
	return open_container(ctx, true);
}

static int on_start_array(void *ctx)
{
	return open_container(ctx, false);
}

static int on_end(void *ctx)
{
	return close_container(ctx);
}

static const yajl_callbacks parse_cb = {
    .yajl_null = on_null,
    .yajl_boolean = on_bool,
    .yajl_number = on_number,
    .yajl_string = on_string,
    .yajl_start_map = on_start_map,
    .yajl_map_key = on_key,
    .yajl_end_map = on_end,
    .yajl_start_array = on_start_array,
    .yajl_end_array = on_end,
};

/* What the scan found, as one verdict: 0, or -1 with why. */
static int verdict(const pstate *p, bool json_ok, char *why, size_t whylen)
{
	if (!json_ok || p->top_scalar) {
		snprintf(why, whylen, "the answer is not JSON");
		return -1;
	}
	if (p->status && strcmp(p->status, "success")) {
		const char *e = p->error, *t = p->etype;
		snprintf(why, whylen, "%s%s%s", t ? t : "", t ? ": " : "", e ? e : p->status);
		return -1;
	}
	if (!p->status || !p->result_array) {
		snprintf(why, whylen, "the answer has no data.result");
		return -1;
	}
	if (p->type && strcmp(p->type, "matrix")) {
		snprintf(why, whylen, "the answer is a %s, not a matrix", p->type);
		return -1;
	}
	if (p->bad >= 0) {
		snprintf(why, whylen, "result %ld is malformed", p->bad);
		return -1;
	}
	return 0;
}

/* Prometheus's words and the shape of its answer stay in English, as Prometheus wrote them. */
__attribute__((format(printf, 3, 4))) static int refuse(gw_fail *err, const char *what,
                                                        const char *fmt, ...)
{
	char why[sizeof err->why];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	return gw_fail_set(err, GW_EXIT_ENV, what, NULL, "%s", why);
}

int prom_parse_matrix(const char *body, size_t len, prom_matrix *m, const char *what, gw_fail *err)
{
	pstate p = {.m = m, .n0 = m->n, .bad = -1};
	yajl_handle h = yajl_alloc(&parse_cb, NULL, &p);
	bool ok = h && yajl_parse(h, (const unsigned char *)body, len) == yajl_status_ok &&
	          yajl_complete_parse(h) == yajl_status_ok;
	if (h)
		yajl_free(h);
	char why[sizeof err->why];
	int rc = verdict(&p, ok, why, sizeof why) ? refuse(err, what, "%s", why) : 0;
	/* the series of this answer hold what they got: nothing more is appended to them until
	 * the next chunk, and an answer kept whole (the fleet's utilization) stays small */
	for (int i = p.n0; i < m->n; i++) {
		prom_series *s = &m->s[i];
		if (s->n && s->n < s->cap) {
			s->t = gw_xrealloc(s->t, (size_t)s->n * sizeof *s->t);
			s->v = gw_xrealloc(s->v, (size_t)s->n * sizeof *s->v);
			s->cap = s->n;
		}
	}
	drop_labels(&p);
	free(p.l);
	free(p.label);
	free(p.pt);
	free(p.pv);
	free(p.status), free(p.error), free(p.etype), free(p.type);
	return rc;
}

bool prom_range_chunk_n(double from, double to, double step, long points, long k, double *start,
                        double *end)
{
	if (!(step > 0) || k < 0)
		return false;
	if (points < 1 || points > PROM_CHUNK_POINTS)
		points = PROM_CHUNK_POINTS;
	/* Counted from the first point, not chunk after chunk: no rounding that adds up. */
	double a = from + (double)k * (double)points * step;
	if (a > to)
		return false;
	*start = a;
	*end = fmin(to, a + (double)(points - 1) * step);
	return true;
}

bool prom_range_chunk(double from, double to, double step, long k, double *start, double *end)
{
	return prom_range_chunk_n(from, to, step, PROM_CHUNK_POINTS, k, start, end);
}
