#include "model/timeline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

const host_metric_desc host_metrics[HM__COUNT] = {
#define HOST_SUM_METRIC(id, key, unit, agg, table, src, family, label, help)                       \
	{key, unit, help, family, label},
#include "host/host_metrics.def"
#undef HOST_SUM_METRIC
};

double host_metric_base_scale(host_metric_id id)
{
	const char *u = host_metrics[id].unit;
	return !strcmp(u, "percent") ? 0.01 : !strcmp(u, "MiB") ? 1048576.0 : 1.0;
}

static double *new_series(int cap)
{
	double *s = gw_xrealloc(NULL, (size_t)cap * sizeof *s);
	for (int i = 0; i < cap; i++)
		s[i] = NAN;
	return s;
}

static void grow_series(double **s, int old_cap, int cap)
{
	if (!*s)
		return;
	*s = gw_xrealloc(*s, (size_t)cap * sizeof **s);
	for (int i = old_cap; i < cap; i++)
		(*s)[i] = NAN;
}

timeline *tl_new(int ngpu, int ncpu)
{
	timeline *tl = gw_xcalloc(1, sizeof *tl);
	tl->ngpu = ngpu;
	tl->gpu = calloc(ngpu ? (size_t)ngpu : 1, sizeof *tl->gpu);
	tl->ncpu = ncpu;
	tl->cpu_busy = calloc(ncpu ? (size_t)ncpu : 1, sizeof *tl->cpu_busy);
	tl->cpu_iowait = calloc(ncpu ? (size_t)ncpu : 1, sizeof *tl->cpu_iowait);
	tl->exit_status = -1;
	for (int i = 0; i < GPU_MAX; i++)
		for (int j = 0; j < GPU_MAX; j++)
			tl->nvlinks[i][j] = tl->topo[i][j] = tl->xgmi[i][j] = -1;
	return tl;
}

void tl_free(timeline *tl)
{
	if (!tl)
		return;
	for (int g = 0; g < tl->ngpu; g++)
		for (int m = 0; m < GM__COUNT; m++)
			free(tl->gpu[g].m[m]);
	for (int c = 0; c < tl->ncpu; c++) {
		free(tl->cpu_busy[c]);
		free(tl->cpu_iowait[c]);
	}
	for (int h = 0; h < HM__COUNT; h++)
		free(tl->h[h]);
	free(tl->gpu);
	free(tl->cpu_busy);
	free(tl->cpu_iowait);
	free(tl->t);
	free(tl->interval);
	free(tl->procs);
	free(tl->steps);
	free(tl->events);
	for (int i = 0; i < tl->nmeta; i++) {
		free(tl->meta[i].key);
		free(tl->meta[i].value);
	}
	free(tl->meta);
	free(tl);
}

void tl_reserve(timeline *tl, int cap)
{
	if (cap > tl->cap) {
		int old = tl->cap;
		tl->t = gw_xrealloc(tl->t, (size_t)cap * sizeof *tl->t);
		tl->interval = gw_xrealloc(tl->interval, (size_t)cap * sizeof *tl->interval);
		for (int g = 0; g < tl->ngpu; g++)
			for (int m = 0; m < GM__COUNT; m++)
				grow_series(&tl->gpu[g].m[m], old, cap);
		for (int c = 0; c < tl->ncpu; c++) {
			grow_series(&tl->cpu_busy[c], old, cap);
			grow_series(&tl->cpu_iowait[c], old, cap);
		}
		for (int h = 0; h < HM__COUNT; h++)
			grow_series(&tl->h[h], old, cap);
		tl->cap = cap;
	}
}

int tl_add_sample(timeline *tl, double t)
{
	if (tl->n == tl->cap)
		tl_reserve(tl, tl->cap ? tl->cap * 2 : 64);
	int s = tl->n++;
	tl->t[s] = t;
	tl->interval[s] = s > 0 ? t - tl->t[s - 1] : NAN;
	if (t > tl->duration)
		tl->duration = t;
	return s;
}

void tl_set_gpu(timeline *tl, int g, gpu_metric_id id, int s, double v)
{
	if (g < 0 || g >= tl->ngpu || s < 0 || s >= tl->n)
		return;
	if (!tl->gpu[g].m[id])
		tl->gpu[g].m[id] = new_series(tl->cap);
	tl->gpu[g].m[id][s] = v;
}

void tl_set_host(timeline *tl, host_metric_id id, int s, double v)
{
	if (s < 0 || s >= tl->n)
		return;
	if (!tl->h[id])
		tl->h[id] = new_series(tl->cap);
	tl->h[id][s] = v;
}

void tl_set_cpu(timeline *tl, int core, int s, double busy, double iowait)
{
	if (core < 0 || core >= tl->ncpu || s < 0 || s >= tl->n)
		return;
	if (!tl->cpu_busy[core]) {
		tl->cpu_busy[core] = new_series(tl->cap);
		tl->cpu_iowait[core] = new_series(tl->cap);
	}
	tl->cpu_busy[core][s] = busy;
	tl->cpu_iowait[core][s] = iowait;
}

tl_proc *tl_add_proc(timeline *tl)
{
	if (tl->nprocs == tl->procs_cap) {
		tl->procs_cap = tl->procs_cap ? tl->procs_cap * 2 : 64;
		tl->procs = gw_xrealloc(tl->procs, (size_t)tl->procs_cap * sizeof *tl->procs);
	}
	tl_proc *p = &tl->procs[tl->nprocs++];
	tl_proc_init(p);
	return p;
}

void tl_proc_init(tl_proc *p)
{
	memset(p, 0, sizeof *p);
	p->gpu = -1;
	p->gpu_mem_mib = p->sm_pct = p->cpu_pct = p->rss_mib = NAN;
}

void tl_add_step(timeline *tl, double t, long step)
{
	if (tl->nsteps == tl->steps_cap) {
		tl->steps_cap = tl->steps_cap ? tl->steps_cap * 2 : 64;
		tl->steps = gw_xrealloc(tl->steps, (size_t)tl->steps_cap * sizeof *tl->steps);
	}
	tl->steps[tl->nsteps].t = t;
	tl->steps[tl->nsteps].step = step;
	tl->nsteps++;
}

tl_event *tl_add_event(timeline *tl, double t, const char *kind, int gpu, long value,
                       const char *text)
{
	if (tl->nevents == tl->events_cap) {
		tl->events_cap = tl->events_cap ? tl->events_cap * 2 : 32;
		tl->events = gw_xrealloc(tl->events, (size_t)tl->events_cap * sizeof *tl->events);
	}
	tl_event *e = &tl->events[tl->nevents++];
	tl_event_init(e, t, kind, gpu, value, text);
	return e;
}

void tl_event_init(tl_event *e, double t, const char *kind, int gpu, long value, const char *text)
{
	memset(e, 0, sizeof *e);
	e->t = t;
	strncpy(e->kind, kind, sizeof e->kind - 1);
	e->gpu = gpu;
	e->value = value;
	if (text)
		strncpy(e->text, text, sizeof e->text - 1);
}

static char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = gw_xrealloc(NULL, n);
	memcpy(d, s, n);
	return d;
}

void tl_meta_set(timeline *tl, const char *key, const char *value)
{
	if (!key || !value)
		return;
	for (int i = 0; i < tl->nmeta; i++)
		if (!strcmp(tl->meta[i].key, key)) {
			free(tl->meta[i].value);
			tl->meta[i].value = xstrdup(value);
			return;
		}
	if (tl->nmeta == tl->meta_cap) {
		tl->meta_cap = tl->meta_cap ? tl->meta_cap * 2 : 16;
		tl->meta = gw_xrealloc(tl->meta, (size_t)tl->meta_cap * sizeof *tl->meta);
	}
	tl->meta[tl->nmeta].key = xstrdup(key);
	tl->meta[tl->nmeta].value = xstrdup(value);
	tl->nmeta++;
}

const char *tl_meta_get(const timeline *tl, const char *key)
{
	for (int i = 0; i < tl->nmeta; i++)
		if (!strcmp(tl->meta[i].key, key))
			return tl->meta[i].value;
	return NULL;
}

double tl_gpu_at(const timeline *tl, int g, gpu_metric_id id, int s)
{
	if (g < 0 || g >= tl->ngpu || s < 0 || s >= tl->n || !tl->gpu[g].m[id])
		return NAN;
	return tl->gpu[g].m[id][s];
}

double tl_host_at(const timeline *tl, host_metric_id id, int s)
{
	if (s < 0 || s >= tl->n || !tl->h[id])
		return NAN;
	return tl->h[id][s];
}

double tl_mean(const double *x, int from, int to)
{
	if (!x)
		return NAN;
	double sum = 0;
	int n = 0;
	for (int i = from; i < to; i++)
		if (!isnan(x[i])) {
			sum += x[i];
			n++;
		}
	return n ? sum / n : NAN;
}

double tl_max(const double *x, int from, int to)
{
	if (!x)
		return NAN;
	double m = NAN;
	for (int i = from; i < to; i++)
		if (!isnan(x[i]) && (isnan(m) || x[i] > m))
			m = x[i];
	return m;
}

double tl_min(const double *x, int from, int to)
{
	if (!x)
		return NAN;
	double m = NAN;
	for (int i = from; i < to; i++)
		if (!isnan(x[i]) && (isnan(m) || x[i] < m))
			m = x[i];
	return m;
}

double tl_share(const double *x, int from, int to, bool (*pred)(double, double), double arg)
{
	if (!x)
		return NAN;
	int n = 0, k = 0;
	for (int i = from; i < to; i++)
		if (!isnan(x[i])) {
			n++;
			k += pred(x[i], arg);
		}
	return n ? (double)k / n : NAN;
}

bool tl_pred_le(double v, double arg)
{
	return v <= arg;
}

bool tl_pred_ge(double v, double arg)
{
	return v >= arg;
}

double tl_weight(const timeline *tl, int s)
{
	if (s < 0 || s >= tl->n)
		return 0;
	double w = tl->interval ? tl->interval[s] : NAN;
	if (s == 0 && tl->n > 1 && tl->interval)
		w = tl->interval[1];
	return isfinite(w) && w > 0 ? w : 1;
}

double tl_wmean(const timeline *tl, const double *x, int from, int to)
{
	if (!x)
		return NAN;
	double sum = 0, wsum = 0;
	for (int i = from; i < to; i++)
		if (!isnan(x[i])) {
			double w = tl_weight(tl, i);
			sum += w * x[i];
			wsum += w;
		}
	return wsum > 0 ? sum / wsum : NAN;
}

double tl_wshare(const timeline *tl, const double *x, int from, int to,
                 bool (*pred)(double, double), double arg)
{
	if (!x)
		return NAN;
	double k = 0, wsum = 0;
	for (int i = from; i < to; i++)
		if (!isnan(x[i])) {
			double w = tl_weight(tl, i);
			wsum += w;
			k += pred(x[i], arg) ? w : 0;
		}
	return wsum > 0 ? k / wsum : NAN;
}

int tl_step_durations(const timeline *tl, double **out)
{
	*out = NULL;
	if (tl->nsteps < 2)
		return 0;
	double *d = gw_xrealloc(NULL, (size_t)(tl->nsteps - 1) * sizeof *d);
	for (int i = 1; i < tl->nsteps; i++)
		d[i - 1] = tl->steps[i].t - tl->steps[i - 1].t;
	*out = d;
	return tl->nsteps - 1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Stable insertion sort of c[lo..hi): quick on the short runs merge_sort starts from. */
static void insertion_sort(double *c, int lo, int hi)
{
	for (int i = lo + 1; i < hi; i++) {
		double x = c[i];
		int j = i;
		for (; j > lo && c[j - 1] > x; j--)
			c[j] = c[j - 1];
		c[j] = x;
	}
}

/*
 * Stable bottom-up merge sort without a comparison callback. Without NaN the
 * order is total (up to -0 == +0, which stability keeps in input order, as
 * glibc's merge-sorting qsort does), so the result is the one qsort gives.
 */
static void merge_sort(double *c, int n)
{
	enum { RUN = 16 };
	for (int lo = 0; lo < n; lo += RUN)
		insertion_sort(c, lo, lo + RUN < n ? lo + RUN : n);
	if (n <= RUN)
		return;
	double *tmp = gw_xrealloc(NULL, (size_t)n * sizeof *tmp), *src = c, *dst = tmp;
	for (int w = RUN; w < n; w *= 2) {
		for (int lo = 0; lo < n; lo += 2 * w) {
			int mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			int i = lo, j = mid, k = lo;
			while (i < mid && j < hi)
				dst[k++] = src[j] < src[i] ? src[j++] : src[i++];
			while (i < mid)
				dst[k++] = src[i++];
			while (j < hi)
				dst[k++] = src[j++];
		}
		double *t = src;
		src = dst;
		dst = t;
	}
	if (src != c)
		memcpy(c, src, (size_t)n * sizeof *c);
	free(tmp);
}

/* Ascending. NaN keeps the order qsort with cmp_double has always given it. */
static void sort_doubles(double *c, int n)
{
	for (int i = 0; i < n; i++)
		if (isnan(c[i])) {
			qsort(c, (size_t)n, sizeof *c, cmp_double);
			return;
		}
	merge_sort(c, n);
}

static double sorted_percentile(const double *c, int n, double p)
{
	double pos = p / 100.0 * (n - 1);
	int lo = (int)floor(pos);
	int hi = lo + 1 < n ? lo + 1 : lo;
	return c[lo] + (c[hi] - c[lo]) * (pos - lo);
}

void tl_percentiles(const double *xs, int n, const double *ps, int k, double *out)
{
	if (n <= 0) {
		for (int i = 0; i < k; i++)
			out[i] = NAN;
		return;
	}
	double *c = gw_xrealloc(NULL, (size_t)n * sizeof *c);
	memcpy(c, xs, (size_t)n * sizeof *c);
	sort_doubles(c, n);
	for (int i = 0; i < k; i++)
		out[i] = sorted_percentile(c, n, ps[i]);
	free(c);
}

double tl_percentile(const double *xs, int n, double p)
{
	double r;
	tl_percentiles(xs, n, &p, 1, &r);
	return r;
}
