/* trace_counters.c - HTA 0.6.1's analyses that follow launches to their GPU events
 * (hta/analyzers/cuda_kernel_analysis.py: launch statistics; trace_counters.py: queue length
 * and memory bandwidth series), on the context of trace_analyze.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "traceview/trace_analyze_int.h"

int trace_an_chain_build(ctx_t *c)
{
	const trace_frame *f = c->f;
	chain_t *ch = &c->gpu;
	ch->head = malloc(((size_t)f->n_cidx + 1) * sizeof *ch->head);
	uint32_t *tail = malloc(((size_t)f->n_cidx + 1) * sizeof *tail);
	ch->next = malloc((f->n + 1) * sizeof *ch->next);
	ch->row = malloc((f->n + 1) * sizeof *ch->row);
	if (!ch->head || !tail || !ch->next || !ch->row) {
		free(tail);
		return -1;
	}
	memset(ch->head, 0xff, ((size_t)f->n_cidx + 1) * sizeof *ch->head);
	for (size_t i = 0; i < f->n; i++) {
		uint32_t ev = f->rows[i], x = f->cidx[ev];
		if (EV(c, ev)->stream == -1 || x == TRACE_NONE)
			continue;
		uint32_t p = (uint32_t)ch->n++;
		ch->row[p] = ev;
		ch->next[p] = UINT32_MAX;
		if (ch->head[x] == UINT32_MAX)
			ch->head[x] = p;
		else
			ch->next[tail[x]] = p;
		tail[x] = p;
	}
	free(tail);
	return 0;
}

void trace_an_chain_free(chain_t *ch)
{
	free(ch->head);
	free(ch->next);
	free(ch->row);
	memset(ch, 0, sizeof *ch);
}

/* First GPU row (position in the chain) with the correlation of event ev, or UINT32_MAX. */
static uint32_t chain_first(const ctx_t *c, uint32_t ev)
{
	uint32_t x = c->f->cidx[ev];
	return x == TRACE_NONE ? UINT32_MAX : c->gpu.head[x];
}

static double median_us(uint64_t *k, size_t n)
{
	if (!n)
		return NAN;
	uint64_t lo, hi;
	trace_select_pair_u64(k, n, (n - 1) / 2, &lo, &hi);
	double a = (double)(int64_t)(lo ^ (1ull << 63));
	double b = n % 2 ? a : (double)(int64_t)(hi ^ (1ull << 63));
	return (a + b) / 2.0 / 1000.0;
}

/* HTA's cuda_kernel_launch_stats: launch calls (stream -1) joined with their GPU events on the
 * correlation id. */
int trace_an_launch_stats(ctx_t *c, trace_result *res)
{
	const trace_frame *f = c->f;
	trace_launch *L = &res->launch;
	memset(c->mark, 0, (size_t)f->n_cidx + 1);
	for (size_t i = 0; i < f->n; i++) {
		uint32_t ev = f->rows[i];
		if ((c->r->names.names[EV(c, ev)->name].nflags &
		     (TRACE_NAME_LAUNCH | TRACE_NAME_MEM_LAUNCH)) &&
		    f->cidx[ev] != TRACE_NONE)
			c->mark[f->cidx[ev]] = 1;
	}
	/* One pass, the table grown as it fills: each GPU row usually has one launch, so the
	 * chain's length is room enough (pages not written cost nothing). */
	size_t k = 0, cap = c->gpu.n + 16;
	if (!(L->rows = malloc(cap * sizeof *L->rows)))
		return -1;
	for (size_t i = 0; i < f->n; i++) {
		uint32_t ev = f->rows[i];
		const trace_event *e = EV(c, ev);
		if (e->stream != -1 || f->cidx[ev] == TRACE_NONE || !c->mark[f->cidx[ev]])
			continue;
		for (uint32_t p = chain_first(c, ev); p != UINT32_MAX; p = c->gpu.next[p]) {
			const trace_event *g = EV(c, c->gpu.row[p]);
			if (k == cap) {
				trace_launch_row *grown =
				    realloc(L->rows, (cap *= 2) * sizeof *grown);
				if (!grown)
					return -1;
				L->rows = grown;
			}
			int64_t d = g->ts - e->ts - e->dur;
			L->rows[k++] = (trace_launch_row){e->corr, e->dur, g->dur, d > 0 ? d : 0};
		}
	}
	L->n = k;
	uint64_t *v = malloc((L->n + 1) * sizeof *v);
	if (!v)
		return -1;
	for (int which = 0; which < 3; which++) {
		for (size_t i = 0; i < L->n; i++) {
			const trace_launch_row *l = &L->rows[i];
			v[i] = trace_key_i64(which == 0   ? l->cpu_dur
			                     : which == 1 ? l->gpu_dur
			                                  : l->delay);
			if (which == 0) {
				if (l->cpu_dur <= TRACE_RUNTIME_CUTOFF_NS &&
				    l->gpu_dur < l->cpu_dur)
					L->n_short++;
				if (l->cpu_dur > TRACE_RUNTIME_CUTOFF_NS)
					L->n_runtime_outliers++;
				if (l->delay > TRACE_LAUNCH_DELAY_NS)
					L->n_delay_outliers++;
			}
		}
		double m = median_us(v, L->n);
		*(which == 0   ? &L->median_cpu_us
		  : which == 1 ? &L->median_gpu_us
		               : &L->median_delay_us) = m;
	}
	free(v);
	return 0;
}

/* One point of a counter series before sorting: HTA concatenates, then sorts by ts. */
typedef struct {
	int64_t ts;
	int64_t group; /* stream, or memory group; INT64_MIN: no group (dropped by groupby) */
	double delta;
} point_t;

static int cmp_group(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Equal times matter only within a group, and only between different steps: two equal steps
 * give the same running values in either order. */
static bool same_group(uint32_t a, uint32_t b, const void *arg)
{
	const point_t *pt = arg;
	return pt[a].group == pt[b].group && pt[a].delta != pt[b].delta;
}

/* The distinct groups of the points, ascending. */
static int64_t *distinct_groups(const point_t *pt, size_t n, size_t *count)
{
	trace_imap seen;
	size_t m = 0, cap = 16;
	int64_t *g = malloc(cap * sizeof *g);
	if (!g || !trace_imap_init(&seen, 16)) {
		free(g);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		if (pt[i].group == INT64_MIN)
			continue;
		uint32_t *v = trace_imap_slot(&seen, pt[i].group);
		if (!v)
			goto fail;
		if (*v != UINT32_MAX)
			continue;
		*v = 1;
		if (m == cap) {
			int64_t *ng = realloc(g, 2 * cap * sizeof *g);
			if (!ng)
				goto fail;
			g = ng;
			cap *= 2;
		}
		g[m++] = pt[i].group;
	}
	trace_imap_free(&seen);
	qsort(g, m, sizeof *g, cmp_group);
	*count = m;
	return g;
fail:
	trace_imap_free(&seen);
	free(g);
	return NULL;
}

static int sorted_groups(ctx_t *c, const point_t *pt, size_t n, uint32_t **order_out,
                         int64_t **groups_out, size_t *ngroups)
{
	(void)c;
	uint32_t *idx = malloc((n + 1) * sizeof *idx);
	int64_t *g = distinct_groups(pt, n, ngroups);
	if (!idx || !g ||
	    !trace_argsort_fast_field(&pt[0].ts, sizeof *pt, idx, n, same_group, pt)) {
		free(idx);
		free(g);
		return -1;
	}
	*order_out = idx;
	*groups_out = g;
	return 0;
}

static bool queue_launch(const ctx_t *c, const trace_event *e)
{
	if (!(c->r->names.names[e->name].nflags & TRACE_NAME_QUEUE_LAUNCH))
		return false;
	/* HTA keeps launches with index_correlation > 0: a partner that is not row 0. */
	uint32_t p = c->f->partner[e - c->r->ev];
	return p != TRACE_NONE && !(c->r->ev[p].flags & TRACE_EV_ROW0);
}

/* One point of the queue length series, 16 bytes: a big trace has two per launch. */
typedef struct {
	int64_t ts;
	uint32_t stream; /* index in the series' stream table; UINT32_MAX: no group */
	int32_t delta;   /* +1 at a launch call, -1 when its GPU event starts */
} qpoint_t;

/* The streams met, each given the next index (streams come in runs: the last is kept). */
typedef struct {
	trace_imap map;
	int64_t *val;
	size_t n, cap;
	int64_t last;
	uint32_t last_idx;
} qstreams_t;

/* The index of stream s; UINT32_MAX for INT64_MIN, which groupby would drop, and when memory
 * runs out (q->n then stays 0 past the failure: see queue_points). */
static uint32_t qstream_index(qstreams_t *q, int64_t s, bool *oom)
{
	if (s == INT64_MIN)
		return UINT32_MAX;
	if (q->n && s == q->last)
		return q->last_idx;
	uint32_t *v = trace_imap_slot(&q->map, s);
	if (!v) {
		*oom = true;
		return UINT32_MAX;
	}
	if (*v == UINT32_MAX) {
		if (q->n == q->cap) {
			size_t cap = q->cap ? 2 * q->cap : 16;
			int64_t *nv = realloc(q->val, cap * sizeof *nv);
			if (!nv) {
				*oom = true;
				return UINT32_MAX;
			}
			q->val = nv;
			q->cap = cap;
		}
		*v = (uint32_t)q->n;
		q->val[q->n++] = s;
	}
	q->last = s;
	q->last_idx = *v;
	return *v;
}

/* Appends point q to *pt (n of *cap), grown by half again: one pass over the frame instead of
 * a counting pass first (the frame's events are far more than the caches hold). False when
 * memory runs out. */
static bool qpoint_push(qpoint_t **pt, size_t *n, size_t *cap, qpoint_t q)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap + *cap / 2 : 4096;
		qpoint_t *np = realloc(*pt, nc * sizeof *np);
		if (!np)
			return false;
		*pt = np;
		*cap = nc;
	}
	(*pt)[(*n)++] = q;
	return true;
}

/* The queue's points: +1 per launch call on each of its kernels' streams (no group without
 * one), -1 at each GPU event of a launch. In *pt (allocated), their number in *n. */
static int queue_points(ctx_t *c, qstreams_t *qs, qpoint_t **out, size_t *count)
{
	const trace_frame *f = c->f;
	qpoint_t *pt = NULL;
	size_t n = 0, cap = 0;
	bool oom = false;
	memset(c->mark, 0, (size_t)f->n_cidx + 1);
	for (size_t i = 0; i < f->n && !oom; i++) {
		uint32_t ev = f->rows[i];
		const trace_event *e = EV(c, ev);
		if (!queue_launch(c, e))
			continue;
		if (f->cidx[ev] != TRACE_NONE)
			c->mark[f->cidx[ev]] = 1;
		uint32_t p = chain_first(c, ev);
		if (p == UINT32_MAX)
			oom = !qpoint_push(&pt, &n, &cap, (qpoint_t){e->ts, UINT32_MAX, 1});
		for (; p != UINT32_MAX && !oom; p = c->gpu.next[p]) {
			uint32_t st = qstream_index(qs, EV(c, c->gpu.row[p])->stream, &oom);
			oom = !qpoint_push(&pt, &n, &cap, (qpoint_t){e->ts, st, 1}) || oom;
		}
	}
	/* The chain holds the GPU rows with a stream and a correlation, in frame order. */
	for (size_t p = 0; p < c->gpu.n && !oom; p++) {
		uint32_t ev = c->gpu.row[p];
		if (!c->mark[f->cidx[ev]])
			continue;
		const trace_event *e = EV(c, ev);
		uint32_t st = qstream_index(qs, e->stream, &oom);
		oom = !qpoint_push(&pt, &n, &cap, (qpoint_t){e->ts, st, -1}) || oom;
	}
	if (!pt && !oom && !(pt = malloc(sizeof *pt))) /* no point: still a buffer to free */
		oom = true;
	*out = pt;
	*count = n;
	return oom ? -1 : 0;
}

/* Equal times matter only within a group, and only between different steps: two equal steps
 * give the same running values in either order. */
static bool same_qgroup(uint32_t a, uint32_t b, const void *arg)
{
	const qpoint_t *pt = arg;
	return pt[a].stream == pt[b].stream && pt[a].delta != pt[b].delta;
}

/* Ranks of the streams by value (pandas' groupby order): rank[i] for stream index i, and the
 * values in that order in *sorted. */
static int rank_streams(const qstreams_t *qs, uint32_t **rank, int64_t **sorted)
{
	*sorted = malloc((qs->n + 1) * sizeof **sorted);
	*rank = malloc((qs->n + 1) * sizeof **rank);
	if (!*sorted || !*rank)
		return -1;
	if (qs->n) /* no stream met: val is still NULL */
		memcpy(*sorted, qs->val, qs->n * sizeof **sorted);
	qsort(*sorted, qs->n, sizeof **sorted, cmp_group);
	for (size_t i = 0; i < qs->n; i++) {
		size_t lo = 0, hi = qs->n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if ((*sorted)[mid] < qs->val[i])
				lo = mid + 1;
			else
				hi = mid;
		}
		(*rank)[i] = (uint32_t)lo;
	}
	return 0;
}

/* Points regrouped by stream, each group in sorted order (pandas' groupby): group g's points
 * are pos[start[g - 1]] .. pos[start[g] - 1] (start[-1] = 0). start has ng + 2 entries. */
static void regroup(const qpoint_t *pt, size_t n, const uint32_t *order, const uint32_t *rank,
                    size_t ng, uint32_t *pos, size_t *start)
{
	for (size_t k = 0; k < n; k++)
		if (pt[order[k]].stream != UINT32_MAX)
			start[rank[pt[order[k]].stream] + 1]++;
	for (size_t g = 0; g < ng; g++)
		start[g + 1] += start[g];
	for (size_t k = 0; k < n; k++)
		if (pt[order[k]].stream != UINT32_MAX)
			pos[start[rank[pt[order[k]].stream]]++] = order[k];
}

/* One stream's running queue length over its points pos[from..to), summarised in q. *hist is
 * scratch of *hcap counts, grown to what the stream's range needs. Returns -1 when memory runs
 * out. */
static int queue_stream(const qpoint_t *pt, size_t n, const uint32_t *pos, size_t from, size_t to,
                        uint64_t **hist, size_t *hcap, trace_queue_stream *q)
{
	int64_t len = 0, lo = 0, hi = 0;
	for (size_t k = from; k < to; k++) {
		const qpoint_t *p = &pt[pos[k]];
		/* time at or above the limit lasts until the next point */
		if (k > from && len >= TRACE_QUEUE_MAX)
			q->blocked += p->ts - pt[pos[k - 1]].ts;
		len += (int64_t)p->delta;
		if (k == from || len < lo)
			lo = len;
		if (k == from || len > hi)
			hi = len;
	}
	size_t m = to - from;
	/* Queue lengths are whole numbers that move by one: a histogram summarises them, filled
	 * on a second walk, so no value per point is held. */
	if (m && hi - lo < (int64_t)(2 * n + 2)) {
		size_t nb = (size_t)(hi - lo + 1);
		if (nb > *hcap) {
			uint64_t *h = realloc(*hist, nb * sizeof *h);
			if (!h)
				return -1;
			*hist = h;
			*hcap = nb;
		}
		uint64_t *hs = *hist;
		memset(hs, 0, nb * sizeof *hs);
		len = 0;
		for (size_t k = from; k < to; k++) {
			len += (int64_t)pt[pos[k]].delta;
			hs[len - lo]++;
		}
		trace_describe_hist(lo, hs, nb, &q->len);
		return 0;
	}
	double *vals = malloc((m + 1) * sizeof *vals);
	if (!vals)
		return -1;
	len = 0;
	for (size_t k = from; k < to; k++) {
		len += (int64_t)pt[pos[k]].delta;
		vals[k - from] = (double)len;
	}
	trace_describe_values(vals, m, &q->len);
	free(vals);
	return 0;
}

/* HTA's queue length series: +1 at each launch call (on its kernel's stream), -1 when the GPU
 * event starts; per stream, the running sum at every point. */
int trace_an_queue_length(ctx_t *c, trace_result *res)
{
	qpoint_t *pt = NULL;
	uint32_t *order = NULL, *pos = NULL, *rank = NULL;
	int64_t *groups = NULL;
	size_t *start = NULL;
	uint64_t *hist = NULL;
	int rc = -1;
	size_t n;
	qstreams_t qs = {0};
	if (!trace_imap_init(&qs.map, 16))
		return -1;
	if (queue_points(c, &qs, &pt, &n) < 0 || rank_streams(&qs, &rank, &groups) < 0)
		goto out;
	size_t ng = qs.n;
	trace_imap_free(&qs.map);
	order = malloc((n + 1) * sizeof *order);
	if (!order || !trace_argsort_fast_field(&pt[0].ts, sizeof *pt, order, n, same_qgroup, pt))
		goto out;
	res->queue = calloc(ng + 1, sizeof *res->queue);
	pos = malloc((n + 1) * sizeof *pos);
	start = calloc(ng + 2, sizeof *start);
	if (!res->queue || !pos || !start)
		goto out;
	res->n_queue = ng;
	regroup(pt, n, order, rank, ng, pos, start);
	free(order); /* regrouped: pos holds the order now */
	order = NULL;
	/* A queue's length moves by one per point, so its range is usually small: the histogram
	 * grows to the widest range met, not to the number of points. */
	size_t hcap = 0;
	rc = 0;
	for (size_t g = 0, from = 0; rc == 0 && g < ng; from = start[g++]) {
		res->queue[g].stream = groups[g];
		rc = queue_stream(pt, n, pos, from, start[g], &hist, &hcap, &res->queue[g]);
	}
out:
	trace_imap_free(&qs.map);
	free(qs.val);
	free(pt);
	free(order);
	free(pos);
	free(rank);
	free(groups);
	free(start);
	free(hist);
	return rc;
}

/* HTA's memory bandwidth series: per memory group (first 11 characters of the name, or
 * Memset), +bandwidth at the start of each memory event and -bandwidth at its end (a zero
 * duration counts as 1 us); summaries over the running sum's points above 0. */
int trace_an_memory_bw(ctx_t *c, trace_result *res)
{
	const trace_rank *r = c->r;
	size_t n = trace_an_gpu_rows(c, TRACE_KT_MEMORY, c->rows);
	point_t *pt = malloc((2 * n + 1) * sizeof *pt);
	char(*gname)[16] = malloc((n + 1) * sizeof *gname);
	uint32_t *order = NULL, *gcache = NULL;
	int64_t *groups = NULL;
	double *vals = NULL;
	size_t ng_names = 0;
	int rc = -1;
	if (!pt || !gname)
		goto out;
	/* A name's group, looked up once per name: group numbers in order of first appearance. */
	if (!(gcache = malloc(((size_t)r->names.count + 1) * sizeof *gcache)))
		goto out;
	memset(gcache, 0xff, ((size_t)r->names.count + 1) * sizeof *gcache);
	for (size_t i = 0; i < n; i++) {
		const trace_event *e = EV(c, c->rows[i]);
		if (gcache[e->name] == UINT32_MAX) {
			char g[16];
			trace_mem_group(trace_name_str(&r->names, e->name), g, sizeof g);
			size_t gi = 0;
			while (gi < ng_names && strcmp(gname[gi], g))
				gi++;
			if (gi == ng_names)
				memcpy(gname[ng_names++], g, sizeof g);
			gcache[e->name] = (uint32_t)gi;
		}
		int64_t gi = gcache[e->name], dur = e->dur == 0 ? 1000 : e->dur;
		double bw = trace_event_bw(r, c->rows[i]);
		pt[i] = (point_t){e->ts, gi, bw};
		pt[n + i] = (point_t){e->ts + dur, gi, -bw};
	}
	/* Groups are ordered by name, as pandas' groupby does: renumber by rank of the name. */
	int64_t rank_of[64] = {0};
	size_t ngn = ng_names < 64 ? ng_names : 64;
	for (size_t a = 0; a < ngn; a++)
		for (size_t b = 0; b < ngn; b++)
			if (strcmp(gname[b], gname[a]) < 0)
				rank_of[a]++;
	for (size_t i = 0; i < 2 * n; i++)
		pt[i].group = pt[i].group < 64 ? rank_of[pt[i].group] : INT64_MIN;
	size_t ng;
	if (sorted_groups(c, pt, 2 * n, &order, &groups, &ng) < 0)
		goto out;
	res->membw = calloc(ng + 1, sizeof *res->membw);
	vals = malloc((2 * n + 1) * sizeof *vals);
	if (!res->membw || !vals)
		goto out;
	res->n_membw = ng;
	for (size_t g = 0; g < ng; g++) {
		trace_membw *mb = &res->membw[g];
		for (size_t a = 0; a < ngn; a++)
			if (rank_of[a] == groups[g])
				memcpy(mb->group, gname[a], sizeof mb->group);
		double run = 0;
		size_t m = 0;
		for (size_t k = 0; k < 2 * n; k++) {
			const point_t *p = &pt[order[k]];
			if (p->group != groups[g] || isnan(p->delta))
				continue;
			run += p->delta;
			if (run > 0)
				vals[m++] = run;
		}
		trace_describe_values(vals, m, &mb->bw);
	}
	rc = 0;
out:
	free(pt);
	free(gname);
	free(gcache);
	free(order);
	free(groups);
	free(vals);
	return rc;
}
