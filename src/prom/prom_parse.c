/*
 * prom_parse.c - the JSON of a range answer ({"status":"success","data":
 * {"resultType":"matrix","result":[{"metric":{...},"values":[[t,"v"],...]}]}})
 * into series, with jansson, and the chunks a long range is asked in.
 * Pure: unit-tested on answers written by hand.
 */
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The series with these labels (taking them over) or a new one (freeing them when found). */
static prom_series *series_for(prom_matrix *m, prom_label *l, int n)
{
	for (int i = m->n - 1; i >= 0; i--)
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

static void push_point(prom_series *s, double t, double v)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 256;
		s->t = gw_xrealloc(s->t, (size_t)s->cap * sizeof *s->t);
		s->v = gw_xrealloc(s->v, (size_t)s->cap * sizeof *s->v);
	}
	s->t[s->n] = t;
	s->v[s->n++] = v;
}

/* One element of result[]; -1 when malformed. */
static int parse_one(json_t *r, prom_matrix *m)
{
	json_t *metric = json_object_get(r, "metric"), *values = json_object_get(r, "values");
	if (!json_is_object(metric) || !json_is_array(values))
		return -1;
	int n = (int)json_object_size(metric), k = 0;
	prom_label *l = gw_xcalloc((size_t)(n ? n : 1), sizeof *l);
	const char *key;
	json_t *val;
	json_object_foreach(metric, key, val)
	{
		l[k].name = gw_xstrdup(key);
		l[k++].value = gw_xstrdup(json_is_string(val) ? json_string_value(val) : "");
	}
	qsort(l, (size_t)n, sizeof *l, label_cmp);
	prom_series *s = series_for(m, l, n);
	size_t i;
	json_t *p;
	json_array_foreach(values, i, p)
	{
		json_t *jt = json_array_get(p, 0), *jv = json_array_get(p, 1);
		if (!json_is_number(jt) || !json_is_string(jv))
			return -1;
		/* Prometheus writes NaN, +Inf and -Inf as strtod reads them; anything it
		 * cannot read whole (an empty string too) is absent, never 0 */
		const char *text = json_string_value(jv);
		char *end;
		double v = strtod(text, &end);
		if (end == text || *end)
			v = NAN;
		push_point(s, json_number_value(jt), v);
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
	json_error_t je;
	json_t *root = json_loadb(body, len, 0, &je);
	if (!root)
		return refuse(err, what, "the answer is not JSON (%s)", je.text);
	int rc = GW_EXIT_ENV;
	const char *status = json_string_value(json_object_get(root, "status"));
	json_t *data = json_object_get(root, "data");
	json_t *result = json_object_get(data, "result");
	if (status && strcmp(status, "success")) {
		const char *e = json_string_value(json_object_get(root, "error"));
		const char *t = json_string_value(json_object_get(root, "errorType"));
		refuse(err, what, "%s%s%s", t ? t : "", t ? ": " : "", e ? e : status);
	} else if (!status || !json_is_array(result)) {
		refuse(err, what, "the answer has no data.result");
	} else {
		const char *type = json_string_value(json_object_get(data, "resultType"));
		rc = type && strcmp(type, "matrix") ? GW_EXIT_ENV : 0;
		if (rc)
			refuse(err, what, "the answer is a %s, not a matrix", type);
		size_t i;
		json_t *r;
		json_array_foreach(result, i, r) if (rc == 0 && parse_one(r, m))
		{
			rc = refuse(err, what, "result %zu is malformed", i);
		}
	}
	json_decref(root);
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
