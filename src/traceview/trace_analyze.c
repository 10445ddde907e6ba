/* trace_analyze.c - HTA 0.6.1's analyses (hta/analyzers/breakdown_analysis.py,
 * communication_analysis.py, cuda_kernel_analysis.py, trace_counters.py) on a trace_frame.
 *
 * Where HTA sorts, the frame's row order and trace_argsort reproduce its order of equal keys,
 * because gaps and counter values depend on it. */
#include "traceview/trace_analyze.h"
#include "traceview/trace_analyze_int.h"

#include <math.h>
#include <pthread.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *trace_idle_cat_name(trace_idle_cat c)
{
	static const char *const n[] = {"host_wait", "kernel_wait", "other"};
	return c < TRACE_IDLE_N ? n[c] : "other";
}

void trace_kmask_label(int mask, char *out, size_t outsz)
{
	static const char *const t[] = {"COMPUTATION", "COMMUNICATION", "MEMORY"};
	size_t len = 0;
	out[0] = 0;
	for (int b = 0; b < 3; b++) {
		if (!(mask & (1 << b)))
			continue;
		int w = snprintf(out + len, outsz - len, "%s%s", len ? " overlapping " : "", t[b]);
		if (w < 0 || (size_t)w >= outsz - len)
			return;
		len += (size_t)w;
	}
}

/* HTA's merge_kernel_intervals: sort by ts, a new group starts where ts exceeds the running
 * maximum of the previous ends (touching intervals merge). rows are event indices in frame
 * order. Returns the number of groups written to out. */
static size_t merge_rows(ctx_t *c, const uint32_t *rows, size_t n, span_t *out)
{
	bool negative = false;
	for (size_t i = 0; i < n; i++) {
		c->keys[i] = EV(c, rows[i])->ts;
		negative |= EV(c, rows[i])->dur < 0;
	}
	/* Without negative durations the groups do not depend on how ties are ordered. */
	if (negative)
		trace_argsort(c->keys, c->idx, n);
	else
		trace_argsort_fast(c->keys, c->idx, n, NULL, NULL);
	size_t g = 0;
	int64_t cummax = 0;
	for (size_t k = 0; k < n; k++) {
		const trace_event *e = EV(c, rows[c->idx[k]]);
		int64_t end = e->ts + e->dur;
		if (k == 0 || e->ts > cummax) {
			out[g++] = (span_t){e->ts, end};
		} else if (end > out[g - 1].end) {
			out[g - 1].end = end;
		}
		if (k == 0 || end > cummax)
			cummax = end;
	}
	return g;
}

static int64_t spans_total(const span_t *s, size_t n)
{
	int64_t t = 0;
	for (size_t i = 0; i < n; i++)
		t += s[i].end - s[i].ts;
	return t;
}

static double pct2(int64_t x, int64_t span)
{
	return trace_round(100.0 * ((double)x / (double)span), 2);
}

/* Rows of the frame with a stream (HTA's "GPU kernels"), and those of one kernel type. */
size_t trace_an_gpu_rows(const ctx_t *c, int type, uint32_t *out)
{
	size_t n = 0;
	for (size_t i = 0; i < c->f->n; i++) {
		const trace_event *e = EV(c, c->f->rows[i]);
		if (e->stream == -1)
			continue;
		if (type >= 0 && ktype_of(c, e) != (trace_ktype)type)
			continue;
		out[n++] = c->f->rows[i];
	}
	return n;
}

typedef struct {
	int64_t t;
	int st;
} sweep_t;

static bool sort_sweep(sweep_t *sw, size_t m);

/* One list of merged intervals as sweep points: +v at each start, -v at each end. */
typedef struct {
	const span_t *g;
	size_t n;
	int v;
	size_t at; /* next point: 2 * interval + (0 start, 1 end) */
} sweep_src;

/*
 * The sweep points of up to three lists in time order. The lists are taken as runs, one per
 * kernel type: each is in order unless a merged interval ends before it starts (HTA's -1 us
 * durations); then every point is held and radix sorted (sw), else the runs are merged as
 * they are walked, nothing held. Equal times come from the earlier list first in both ways
 * (the radix sort is stable), and their order changes no sum (zero-length pieces).
 */
typedef struct {
	sweep_src src[3];
	int nsrc;
	sweep_t *sw; /* the sorted points, when a run is out of order */
	size_t m, k;
} sweep_iter;

static bool src_in_order(const sweep_src *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->g[i].end < s->g[i].ts || (i + 1 < s->n && s->g[i + 1].ts < s->g[i].end))
			return false;
	return true;
}

static size_t add_sweep(sweep_t *sw, size_t m, const span_t *g, size_t n, int v);

/* false when memory runs out */
static bool sweep_open(sweep_iter *it)
{
	bool sorted = true;
	size_t m = 0;
	for (int r = 0; r < it->nsrc; r++) {
		sorted = sorted && src_in_order(&it->src[r]);
		m += 2 * it->src[r].n;
	}
	if (sorted)
		return true;
	if (!(it->sw = malloc((m + 1) * sizeof *it->sw)))
		return false;
	for (int r = 0; r < it->nsrc; r++)
		it->m = add_sweep(it->sw, it->m, it->src[r].g, it->src[r].n, it->src[r].v);
	return sort_sweep(it->sw, it->m);
}

static bool sweep_next(sweep_iter *it, sweep_t *p)
{
	if (it->sw) {
		if (it->k >= it->m)
			return false;
		*p = it->sw[it->k++];
		return true;
	}
	int best = -1;
	int64_t bt = 0;
	for (int r = 0; r < it->nsrc; r++) {
		const sweep_src *s = &it->src[r];
		if (s->at >= 2 * s->n)
			continue;
		int64_t t = (s->at & 1) ? s->g[s->at / 2].end : s->g[s->at / 2].ts;
		if (best < 0 || t < bt) {
			best = r;
			bt = t;
		}
	}
	if (best < 0)
		return false;
	sweep_src *s = &it->src[best];
	*p = (sweep_t){bt, (s->at++ & 1) ? -s->v : s->v};
	return true;
}

static bool sort_sweep(sweep_t *sw, size_t m)
{
	uint64_t *k = malloc((m + 1) * sizeof *k);
	uint32_t *p = malloc((m + 1) * sizeof *p);
	sweep_t *tmp = malloc((m + 1) * sizeof *tmp);
	bool ok = k && p && tmp;
	for (size_t i = 0; ok && i < m; i++) {
		k[i] = trace_key_i64(sw[i].t);
		p[i] = (uint32_t)i;
	}
	ok = ok && trace_radix_sort(k, p, m);
	for (size_t i = 0; ok && i < m; i++)
		tmp[i] = sw[p[i]];
	if (ok)
		memcpy(sw, tmp, m * sizeof *sw);
	free(k);
	free(p);
	free(tmp);
	return ok;
}

/* Adds +v at each group start and -v at each end, like HTA's melt of merged intervals. */
static size_t add_sweep(sweep_t *sw, size_t m, const span_t *g, size_t n, int v)
{
	for (size_t i = 0; i < n; i++) {
		sw[m++] = (sweep_t){g[i].ts, v};
		sw[m++] = (sweep_t){g[i].end, -v};
	}
	return m;
}

static void temporal_set(trace_result *res, int64_t span, int64_t busy)
{
	trace_temporal *t = &res->temporal;
	t->valid = true;
	t->span = span;
	t->idle = span - busy;
}

/* The four merges one by one, each sorting its rows (in c->rows, n of them) as HTA does. */
static int merge_each(ctx_t *c, trace_result *res, size_t n, span_t *tg[3], size_t tn[3])
{
	span_t *all = malloc((n + 1) * sizeof *all);
	if (!all)
		return -1;
	if (n > 0) {
		size_t g = merge_rows(c, c->rows, n, all);
		temporal_set(res, all[g - 1].end - all[0].ts, spans_total(all, g));
	}
	free(all);
	for (int k = 0; k < 3; k++) {
		size_t m = trace_an_gpu_rows(c, k, c->rows);
		tn[k] = merge_rows(c, c->rows, m, tg[k]);
		res->kunion[k] = spans_total(tg[k], tn[k]);
	}
	return 0;
}

/* HTA's merge_kernel_intervals fed one interval at a time in start order: a new group where
 * ts exceeds the running maximum of the ends so far. out NULL: only the total length and the
 * bounds are kept (the whole GPU's union, whose groups nothing else reads). */
typedef struct {
	span_t *out, cur;
	size_t g;
	int64_t cummax, total, first;
	bool any;
} merger_t;

static void merger_add(merger_t *m, int64_t ts, int64_t end)
{
	if (!m->any || ts > m->cummax) {
		if (!m->any) {
			m->first = ts;
		} else {
			m->total += m->cur.end - m->cur.ts;
			if (m->out)
				m->out[m->g - 1] = m->cur;
		}
		m->cur = (span_t){ts, end};
		m->g++;
	} else if (end > m->cur.end) {
		m->cur.end = end;
	}
	if (!m->any || end > m->cummax)
		m->cummax = end;
	m->any = true;
}

static void merger_end(merger_t *m)
{
	if (!m->any)
		return;
	m->total += m->cur.end - m->cur.ts;
	if (m->out)
		m->out[m->g - 1] = m->cur;
}

/*
 * The union of all GPU rows and of each kernel type's rows. Without negative durations the
 * groups do not depend on how ties are ordered, and a type's rows in the order of all rows
 * sorted by start are its own rows so sorted: one sort serves all four merges. With one, each
 * merge sorts its own rows in numpy's order, as HTA does.
 */
static int merge_all_and_types(ctx_t *c, trace_result *res, span_t *tg[3], size_t tn[3])
{
	size_t n = 0, cnt[TRACE_KT_COUNT] = {0};
	bool negative = false;
	for (size_t i = 0; i < c->f->n; i++) {
		uint32_t ev = c->f->rows[i];
		const trace_event *e = EV(c, ev);
		if (e->stream == -1)
			continue;
		cnt[ktype_of(c, e)]++;
		negative |= e->dur < 0;
		c->keys[n] = e->ts;
		c->rows[n++] = ev;
	}
	res->n_gpu_events = n;
	for (int k = 0; k < 3; k++)
		if (!(tg[k] = malloc((cnt[k] + 1) * sizeof *tg[k])))
			return -1;
	if (negative)
		return merge_each(c, res, n, tg, tn);
	trace_argsort_fast(c->keys, c->idx, n, NULL, NULL);
	merger_t all = {0}, m[3] = {{.out = tg[0]}, {.out = tg[1]}, {.out = tg[2]}};
	for (size_t k = 0; k < n; k++) {
		const trace_event *e = EV(c, c->rows[c->idx[k]]);
		int64_t end = e->ts + e->dur;
		merger_add(&all, e->ts, end);
		trace_ktype t = ktype_of(c, e);
		if (t < 3)
			merger_add(&m[t], e->ts, end);
	}
	merger_end(&all);
	for (int k = 0; k < 3; k++) {
		merger_end(&m[k]);
		tn[k] = m[k].g;
		res->kunion[k] = m[k].total;
	}
	if (n > 0)
		temporal_set(res, all.cur.end - all.first, all.total);
	return 0;
}

static int temporal_and_types(ctx_t *c, trace_result *res)
{
	span_t *tg[3] = {0};
	size_t tn[3] = {0};
	int rc = -1;
	if (merge_all_and_types(c, res, tg, tn) < 0)
		goto out;
	if (res->temporal.valid) {
		trace_temporal *t = &res->temporal;
		t->compute = res->kunion[TRACE_KT_COMPUTATION];
		t->non_compute = t->span - t->compute - t->idle;
		res->hta_would_fail = t->non_compute < 0;
		if (t->span > 0) {
			t->idle_pct = pct2(t->idle, t->span);
			t->compute_pct = pct2(t->compute, t->span);
			t->non_compute_pct = pct2(t->non_compute, t->span);
		} else {
			t->idle_pct = t->compute_pct = t->non_compute_pct = NAN;
		}
	}
	/* Kernel type combinations: running sum of 1 (computation), 2 (communication), 4
	 * (memory) over the merged intervals of each type; ties only make zero-length pieces. */
	sweep_iter it = {.nsrc = 3};
	for (int k = 0; k < 3; k++)
		it.src[k] = (sweep_src){.g = tg[k], .n = tn[k], .v = 1 << k};
	if (!sweep_open(&it)) {
		free(it.sw);
		goto out;
	}
	sweep_t cur, nxt;
	int running = 0;
	for (bool more = sweep_next(&it, &cur); more && sweep_next(&it, &nxt); cur = nxt) {
		running += cur.st;
		if (running > 0 && nxt.t > cur.t) {
			res->ktime[running & 7] += nxt.t - cur.t;
			res->kpresent[running & 7] = true;
		}
	}
	free(it.sw);
	if (c->f->hta_float && trace_an_ktime_float(c, res) < 0)
		goto out;
	/* Communication/computation overlap: communication +-1, computation +-2, time at 3. */
	it = (sweep_iter){.nsrc = 2};
	it.src[0] =
	    (sweep_src){.g = tg[TRACE_KT_COMMUNICATION], .n = tn[TRACE_KT_COMMUNICATION], .v = 1};
	it.src[1] =
	    (sweep_src){.g = tg[TRACE_KT_COMPUTATION], .n = tn[TRACE_KT_COMPUTATION], .v = 2};
	if (!sweep_open(&it)) {
		free(it.sw);
		goto out;
	}
	int64_t both = 0;
	running = 0;
	for (bool more = sweep_next(&it, &cur); more && sweep_next(&it, &nxt); cur = nxt) {
		running += cur.st;
		if (running == 3)
			both += nxt.t - cur.t;
	}
	free(it.sw);
	int64_t comm = res->kunion[TRACE_KT_COMMUNICATION];
	res->overlap_pct = tn[TRACE_KT_COMMUNICATION] && comm != 0
	                       ? trace_round(100.0 * ((double)both / (double)comm), 2)
	                       : NAN;
	res->comm_exposed = comm - both;
	rc = 0;
out:
	for (int k = 0; k < 3; k++)
		free(tg[k]);
	return rc;
}

static bool always_tie(uint32_t a, uint32_t b, const void *arg)
{
	(void)a;
	(void)b;
	(void)arg;
	return true;
}

static bool idle_cat_row(const trace_event *e)
{
	return e->stream != -1 && (e->cat == TRACE_CAT_KERNEL || e->cat == TRACE_CAT_MEMCPY ||
	                           e->cat == TRACE_CAT_MEMSET || e->cat == TRACE_CAT_MTIA_CCP);
}

/* pandas' groupby sum: Kahan's compensated sum, in row order. */
typedef struct {
	double sum, comp;
} kahan_t;

static void kahan_add(kahan_t *k, double v)
{
	double y = v - k->comp, t = k->sum + y;
	k->comp = t - k->sum - y;
	k->sum = t;
}

/* Without rounding HTA's gaps are differences of float microseconds, whose sums it rounds to
 * 2 decimals: the sums and ratios are taken from the same doubles. */
static void idle_float_sums(trace_idle_stream *s, const kahan_t fsum[TRACE_IDLE_N])
{
	double total = 0;
	for (int k = 0; k < TRACE_IDLE_N; k++)
		total += fsum[k].sum;
	for (int k = 0; k < TRACE_IDLE_N; k++) {
		s->time[k] = llrint(trace_round(fsum[k].sum, 2) * 1000.0);
		s->ratio[k] = fsum[k].sum / total;
	}
}

/* HTA's get_idle_time_breakdown for one stream: gaps between consecutive events in start order,
 * attached to the later event. */
static void idle_stream(ctx_t *c, const uint32_t *rows, size_t n, uint64_t *gaps[TRACE_IDLE_N],
                        trace_idle_stream *s, int64_t *launch_scale)
{
	size_t ng[TRACE_IDLE_N] = {0};
	kahan_t fsum[TRACE_IDLE_N] = {{0, 0}};
	double prev_end_us = 0, o = c->f->origin_us;
	for (size_t i = 0; i < n; i++)
		c->keys[i] = EV(c, rows[i])->ts;
	trace_argsort_fast(c->keys, c->idx, n, always_tie, NULL);
	int64_t prev_end = 0;
	for (size_t k = 0; k < n; k++) {
		uint32_t ev = rows[c->idx[k]];
		const trace_event *e = EV(c, ev);
		if (k == 0) {
			s->present[TRACE_IDLE_OTHER] = true; /* NaN gap: counted nowhere */
		} else {
			int64_t gap = e->ts - prev_end, rts;
			trace_idle_cat cat = TRACE_IDLE_OTHER;
			if (trace_frame_runtime_ts(c->r, c->f, ev, &rts) && rts > prev_end)
				cat = TRACE_IDLE_HOST;
			else if (gap < TRACE_KERNEL_DELAY_NS)
				cat = TRACE_IDLE_KERNEL;
			s->present[cat] = true;
			s->time[cat] += gap;
			kahan_add(&fsum[cat], trace_us_double(e->ts) - o - prev_end_us);
			if (cat != TRACE_IDLE_OTHER && gap > 0 && gap < TRACE_LAUNCH_DELAY_NS)
				*launch_scale += gap;
			gaps[cat][ng[cat]++] = trace_key_i64(gap);
		}
		prev_end = e->ts + e->dur;
		prev_end_us = trace_us_double(e->ts) - o + trace_us_double(e->dur);
	}
	if (c->f->hta_float)
		idle_float_sums(s, fsum);
	int64_t total = 0;
	for (int k = 0; k < TRACE_IDLE_N; k++)
		total += s->time[k];
	for (int k = 0; k < TRACE_IDLE_N; k++) {
		s->ratio[k] = (double)s->time[k] / (double)total; /* 0/0 is NaN, as in pandas */
		trace_describe_ns_keys(gaps[k], ng[k], &s->gaps[k]);
	}
}

static int idle_breakdown(ctx_t *c, trace_result *res)
{
	const trace_frame *f = c->f;
	trace_imap slot;
	if (!trace_imap_init(&slot, 16))
		return -1;
	size_t ns = 0, n = 0;
	uint32_t *cnt = NULL, *order = NULL;
	uint64_t *gaps[TRACE_IDLE_N] = {0};
	int rc = -1;
	/* Streams in order of first appearance (pandas' unique()); the rows and their stream
	 * slots gathered in one pass (c->rows, c->idx), so that the counting sort by stream
	 * below reads those instead of the events. */
	int64_t *stream = NULL;
	size_t scap = 0;
	for (size_t i = 0; i < f->n; i++) {
		const trace_event *e = EV(c, f->rows[i]);
		if (!idle_cat_row(e))
			continue;
		uint32_t *s = trace_imap_slot(&slot, e->stream);
		if (!s)
			goto out;
		if (*s == UINT32_MAX) {
			if (ns == scap) {
				int64_t *grown =
				    realloc(stream, (scap = 2 * scap + 16) * sizeof *grown);
				if (!grown)
					goto out;
				stream = grown;
			}
			stream[ns] = e->stream;
			*s = (uint32_t)ns++;
		}
		c->rows[n] = f->rows[i];
		c->idx[n++] = *s;
	}
	res->idle = calloc(ns + 1, sizeof *res->idle);
	cnt = calloc(ns + 1, sizeof *cnt);
	order = malloc((n + 1) * sizeof *order);
	for (int k = 0; k < TRACE_IDLE_N; k++)
		gaps[k] = malloc((n + 1) * sizeof *gaps[k]);
	if (!res->idle || !cnt || !order || !gaps[0] || !gaps[1] || !gaps[2])
		goto out;
	res->n_idle = ns;
	/* Counting sort by stream, keeping frame order inside each stream. */
	for (size_t s = 0; s < ns; s++)
		res->idle[s].stream = stream[s];
	for (size_t i = 0; i < n; i++)
		cnt[c->idx[i]]++;
	size_t off = 0;
	for (size_t s = 0; s < ns; s++) {
		size_t k = cnt[s];
		cnt[s] = (uint32_t)off;
		off += k;
	}
	for (size_t i = 0; i < n; i++)
		order[cnt[c->idx[i]]++] = c->rows[i];
	size_t start = 0;
	for (size_t s = 0; s < ns; s++) {
		idle_stream(c, order + start, cnt[s] - start, gaps, &res->idle[s],
		            &res->launch_scale_idle);
		start = cnt[s];
	}
	rc = 0;
out:
	trace_imap_free(&slot);
	free(stream);
	free(cnt);
	free(order);
	for (int k = 0; k < TRACE_IDLE_N; k++)
		free(gaps[k]);
	return rc;
}

typedef struct {
	uint32_t name;
	trace_ktype type;
	size_t count;
	int64_t sum, min, max;
	double wmean, m2; /* Welford, us */
} kacc_t;

static int cmp_kacc_name(const void *a, const void *b, void *arg)
{
	const ctx_t *sort_ctx = arg;
	const kacc_t *x = a, *y = b;
	return strcmp(trace_name_str(&sort_ctx->r->names, x->name),
	              trace_name_str(&sort_ctx->r->names, y->name));
}

static double std_of(size_t n, double m2)
{
	return n > 1 ? sqrt(m2 / (double)(n - 1)) : 0.0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* HTA's _aggr_gpu_kernel_time for one type: names sorted by total time (pandas' descending
 * sort), more than 10 names fold into "others" (the tail past 80% of the cumulative time or
 * past the tenth). a is sorted by name; rows go to out (room for n + 1). */
static int kernel_type_rows(ctx_t *c, const kacc_t *a, size_t n, trace_kernel_row *out,
                            size_t *n_out)
{
	for (size_t i = 0; i < n; i++) {
		trace_kernel_row *k = &out[i];
		*k = (trace_kernel_row){.name = a[i].name,
		                        .type = a[i].type,
		                        .count = a[i].count,
		                        .sum = a[i].sum,
		                        .min = a[i].min,
		                        .max = a[i].max,
		                        .mean = a[i].wmean,
		                        .std = std_of(a[i].count, a[i].m2)};
		k->hta_max = (double)k->max / 1000.0;
		k->hta_min = (double)k->min / 1000.0;
		k->hta_mean = (double)k->sum / 1000.0 / (double)k->count;
		k->hta_std = k->std;
	}
	*n_out = n;
	if (n <= TRACE_TOP_KERNELS)
		return 0;
	double *cum = malloc(n * sizeof *cum), *sorted = malloc(n * sizeof *sorted);
	size_t *pos = malloc(n * sizeof *pos);
	bool *other = calloc(n, sizeof *other);
	if (!cum || !sorted || !pos || !other) {
		free(cum);
		free(sorted);
		free(pos);
		free(other);
		return -1;
	}
	/* pandas' sort_values(ascending=False): argsort of the reversed column, reversed. */
	for (size_t i = 0; i < n; i++)
		c->keys[i] = out[n - 1 - i].sum;
	trace_argsort(c->keys, c->idx, n);
	double run = 0;
	for (size_t k = 0; k < n; k++) {
		pos[k] = n - 1 - c->idx[n - 1 - k]; /* the k-th largest */
		run += (double)out[pos[k]].sum / 1000.0;
		cum[k] = sorted[k] = run;
	}
	qsort(sorted, n, sizeof *sorted, cmp_double);
	double q = trace_quantile_sorted(sorted, n, TRACE_TOP_RATIO);
	trace_kernel_row folded = {.name = TRACE_NONE,
	                           .type = out[0].type,
	                           .min = INT64_MAX,
	                           .max = INT64_MIN,
	                           .hta_max = -INFINITY,
	                           .hta_min = INFINITY};
	size_t n_other = 0;
	double osum = 0;
	for (size_t k = 0; k < n; k++) {
		const trace_kernel_row *row = &out[pos[k]];
		if (!(cum[k] > q || k >= TRACE_TOP_KERNELS))
			continue;
		other[pos[k]] = true;
		double s = (double)row->sum / 1000.0;
		osum += s;
		folded.hta_max = s > folded.hta_max ? s : folded.hta_max;
		folded.hta_min = s < folded.hta_min ? s : folded.hta_min;
		folded.count += row->count;
		folded.sum += row->sum;
		folded.min = row->min < folded.min ? row->min : folded.min;
		folded.max = row->max > folded.max ? row->max : folded.max;
		n_other++;
	}
	folded.hta_mean = osum / (double)n_other;
	folded.mean = (double)folded.sum / 1000.0 / (double)folded.count;
	double m2 = 0;
	for (size_t i = 0; i < n; i++) {
		if (other[i]) {
			double d = (double)out[i].sum / 1000.0 - folded.hta_mean;
			m2 += d * d;
		}
	}
	folded.hta_std = std_of(n_other, m2);
	size_t kept = 0;
	for (size_t i = 0; i < n; i++) {
		if (other[i])
			continue;
		trace_kernel_row row = out[i];
		row.hta_max = row.hta_min = row.hta_mean = (double)row.sum / 1000.0;
		row.hta_std = 0;
		out[kept++] = row;
	}
	/* "others" takes its place among the names in alphabetical order. */
	size_t at = 0;
	while (at < kept && strcmp(trace_name_str(&c->r->names, out[at].name), "others") < 0)
		at++;
	memmove(out + at + 1, out + at, (kept - at) * sizeof *out);
	out[at] = folded;
	*n_out = kept + 1;
	free(cum);
	free(sorted);
	free(pos);
	free(other);
	return 0;
}

/* Per kernel name and type (COMPUTATION, COMMUNICATION, MEMORY): HTA's kernel breakdown. Rows
 * come out ordered by type name, then kernel name, as HTA sorts them. */
static int kernel_breakdown(ctx_t *c, trace_result *res)
{
	const trace_rank *r = c->r;
	size_t n = trace_an_gpu_rows(c, -1, c->rows);
	uint32_t *slot = malloc(((size_t)r->names.count + 1) * sizeof *slot);
	if (!slot)
		return -1;
	memset(slot, 0xff, ((size_t)r->names.count + 1) * sizeof *slot);
	/* One accumulator per kernel name, not per kernel: a big trace has millions of kernels
	 * and a few thousand names at most. */
	size_t max_names = n < r->names.count ? n : r->names.count;
	kacc_t *acc = malloc((max_names + 1) * sizeof *acc);
	size_t na = 0;
	int rc = -1;
	if (!acc)
		goto out;
	for (size_t i = 0; i < n; i++) {
		const trace_event *e = EV(c, c->rows[i]);
		trace_ktype t = ktype_of(c, e);
		if (t == TRACE_KT_OTHER)
			continue;
		uint32_t *s = &slot[e->name];
		if (*s == UINT32_MAX) {
			*s = (uint32_t)na;
			acc[na++] = (kacc_t){
			    .name = e->name, .type = t, .min = INT64_MAX, .max = INT64_MIN};
		}
		kacc_t *a = &acc[*s];
		double d = (double)e->dur / 1000.0;
		a->count++;
		a->sum += e->dur;
		a->min = e->dur < a->min ? e->dur : a->min;
		a->max = e->dur > a->max ? e->dur : a->max;
		double delta = d - a->wmean;
		a->wmean += delta / (double)a->count;
		a->m2 += delta * (d - a->wmean);
	}
	/* Each type's rows, and an "others" row where they are folded. */
	if (!(res->kernels = malloc((na + 3) * sizeof *res->kernels)))
		goto out;
	qsort_r(acc, na, sizeof *acc, cmp_kacc_name, c);
	/* HTA's type order after its final sort: by the type's name. */
	static const trace_ktype order[] = {TRACE_KT_COMMUNICATION, TRACE_KT_COMPUTATION,
	                                    TRACE_KT_MEMORY};
	kacc_t *tmp = malloc((na + 1) * sizeof *tmp);
	if (!tmp)
		goto out;
	for (int t = 0; t < 3; t++) {
		size_t m = 0;
		for (size_t i = 0; i < na; i++)
			if (acc[i].type == order[t])
				tmp[m++] = acc[i];
		size_t got;
		if (m && kernel_type_rows(c, tmp, m, res->kernels + res->n_kernels, &got) < 0) {
			free(tmp);
			goto out;
		}
		res->n_kernels += m ? got : 0;
	}
	free(tmp);
	rc = 0;
out:
	free(slot);
	free(acc);
	return rc;
}

const char *trace_kernel_row_name(const trace_result *res, const trace_kernel_row *k)
{
	return k->name == TRACE_NONE ? "others" : trace_name_str(&res->r->names, k->name);
}

/* The second thread's work and the hand-over of the chain it builds first. */
typedef struct {
	ctx_t *b, *q;
	trace_result *res;
	int rc;
	pthread_mutex_t lock;
	pthread_cond_t built;
	int chain; /* 0: being built, 1: built, -1: out of memory */
} side_t;

static void chain_publish(side_t *s, int state)
{
	pthread_mutex_lock(&s->lock);
	s->chain = state;
	pthread_cond_broadcast(&s->built);
	pthread_mutex_unlock(&s->lock);
}

/* The chain's state once it is no longer being built. */
static int chain_wait(side_t *s)
{
	pthread_mutex_lock(&s->lock);
	while (s->chain == 0)
		pthread_cond_wait(&s->built, &s->lock);
	int state = s->chain;
	pthread_mutex_unlock(&s->lock);
	return state;
}

/* Under AddressSanitizer the heap is the sanitizer's, and glibc's malloc_trim walks glibc
 * arenas that never served an allocation while another thread exits (it crashed in mtrim). */
#if defined(__SANITIZE_ADDRESS__)
#define TRACE_FOREIGN_HEAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TRACE_FOREIGN_HEAP 1
#endif
#endif

/* glibc keeps freed buffers below its mmap threshold (which grows with the first big ones
 * freed) in the heap; give their pages back where that is possible. */
static void release_freed(void)
{
#if defined(__GLIBC__) && !defined(TRACE_FOREIGN_HEAP)
	malloc_trim(0);
#endif
}

/* The launch/GPU chain, then the queue length series, the costliest analysis (numpy's sort of
 * two points per launch): with a second thread, they run beside the breakdowns, which need
 * neither; the chain is handed to the launch analyses once built. The queue length shares only
 * read-only state with the others. */
static void *queue_analysis(void *arg)
{
	side_t *s = arg;
	s->rc = -1;
	if (trace_an_chain_build(s->b) < 0) {
		chain_publish(s, -1);
		return NULL;
	}
	s->q->gpu = s->b->gpu;
	chain_publish(s, 1);
	s->rc = trace_an_queue_length(s->q, s->res) < 0 ? -1 : 0;
	return NULL;
}

int trace_analyze(const trace_rank *r, trace_frame *f, trace_result *res, int threads)
{
	memset(res, 0, sizeof *res);
	res->r = r;
	res->frame = *f;
	memset(f, 0, sizeof *f);
	/* a: the breakdowns' scratch; b: the launch/GPU join (chain, marks) and its analyses;
	 * q: the queue length's own marks on b's chain. */
	ctx_t a = {.r = r, .f = &res->frame}, b = a, q = a;
	size_t n = res->frame.n + 1;
	a.keys = malloc(n * sizeof *a.keys);
	a.idx = malloc(n * sizeof *a.idx);
	a.rows = malloc(n * sizeof *a.rows);
	b.rows = malloc(n * sizeof *b.rows);
	b.mark = malloc((size_t)res->frame.n_cidx + 1);
	q.mark = malloc((size_t)res->frame.n_cidx + 1);
	side_t side = {.b = &b, .q = &q, .res = res, .rc = -1};
	int rc = -1;
	bool helper = false;
	pthread_t th;
	pthread_mutex_init(&side.lock, NULL);
	pthread_cond_init(&side.built, NULL);
	if (!a.keys || !a.idx || !a.rows || !b.rows || !b.mark || !q.mark)
		goto out;
	/* The chain and the queue length (about 0.3 s of a 1 GiB trace's analyses) beside the
	 * breakdowns and then the launch analyses (about 0.3 s together): measured, the two
	 * together add nothing to the peak that the breakdowns' sweeps set. */
	helper = threads > 1 && pthread_create(&th, NULL, queue_analysis, &side) == 0;
	if (!helper)
		queue_analysis(&side);
	rc = (temporal_and_types(&a, res) < 0 || idle_breakdown(&a, res) < 0 ||
	      kernel_breakdown(&a, res) < 0)
	         ? -1
	         : 0;
	/* The breakdowns' scratch goes before the launch analyses begin, so that the two add
	 * up as little as they can. */
	free(a.keys);
	free(a.idx);
	free(a.rows);
	a.keys = NULL;
	a.idx = a.rows = NULL;
	release_freed();
	if (chain_wait(&side) < 0)
		rc = -1;
	if (rc == 0)
		rc = (trace_an_launch_stats(&b, res) < 0 || trace_an_memory_bw(&b, res) < 0) ? -1
		                                                                             : 0;
	if (helper)
		pthread_join(th, NULL);
	if (rc == 0 && side.rc == 0) {
		trace_an_verdict(res, &res->verdict);
	} else {
		rc = -1;
	}
out:
	free(a.keys);
	free(a.idx);
	free(a.rows);
	free(b.rows);
	free(b.mark);
	free(q.mark);
	trace_an_chain_free(&b.gpu);
	pthread_mutex_destroy(&side.lock);
	pthread_cond_destroy(&side.built);
	if (rc < 0)
		trace_result_free(res);
	return rc;
}

void trace_result_free(trace_result *res)
{
	trace_frame_free(&res->frame);
	free(res->idle);
	free(res->kernels);
	free(res->launch.rows);
	free(res->queue);
	free(res->membw);
	memset(res, 0, sizeof *res);
}
