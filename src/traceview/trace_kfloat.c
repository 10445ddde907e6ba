/* trace_kfloat.c - HTA's kernel type breakdown in float microseconds.
 *
 * With its ns rounding off (HTA_DISABLE_NS_ROUNDING=1), HTA keeps the traces' ts and dur as the
 * doubles its JSON reader made of them, shifts every ts by the earliest ts of all ranks, merges
 * each kernel type's intervals and sweeps them, and truncates each piece of the sweep to whole
 * microseconds (pandas' astype(int)). The truncation sees the doubles' rounding: a piece of
 * exactly 5 us may be 4.9999 in HTA's arithmetic and count 4. So the pieces are computed here
 * in the same doubles, in the same order of operations; with rounding on every value is a whole
 * microsecond and the exact nanoseconds of trace_analyze.c give the same numbers. */
#include "traceview/trace_analyze_int.h"

#include <stdlib.h>

typedef struct {
	double ts, end;
} fspan_t;

typedef struct {
	double t;
	int st;
} fpoint_t;

static int cmp_fspan(const void *a, const void *b)
{
	const fspan_t *x = a, *y = b;
	return (x->ts > y->ts) - (x->ts < y->ts);
}

static int cmp_fpoint(const void *a, const void *b)
{
	const fpoint_t *x = a, *y = b;
	return (x->t > y->t) - (x->t < y->t);
}

/* HTA's merge_kernel_intervals of one type's rows in doubles (a new group where ts exceeds the
 * running maximum of the previous ends), written as +v at each group start and -v at its end
 * into pts from m on. Returns the new count. */
static size_t add_type(ctx_t *c, int k, fspan_t *sp, fpoint_t *pts, size_t m)
{
	size_t n = trace_an_gpu_rows(c, k, c->rows);
	double o = c->f->origin_us;
	for (size_t i = 0; i < n; i++) {
		const trace_event *e = EV(c, c->rows[i]);
		double ts = trace_us_double(e->ts) - o;
		sp[i] = (fspan_t){ts, ts + trace_us_double(e->dur)};
	}
	qsort(sp, n, sizeof *sp, cmp_fspan);
	fspan_t cur = {0, 0};
	double cummax = 0;
	int v = 1 << k;
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || sp[i].ts > cummax) {
			if (i > 0) {
				pts[m++] = (fpoint_t){cur.ts, v};
				pts[m++] = (fpoint_t){cur.end, -v};
			}
			cur = sp[i];
		} else if (sp[i].end > cur.end) {
			cur.end = sp[i].end;
		}
		if (i == 0 || sp[i].end > cummax)
			cummax = sp[i].end;
	}
	if (n > 0) {
		pts[m++] = (fpoint_t){cur.ts, v};
		pts[m++] = (fpoint_t){cur.end, -v};
	}
	return m;
}

int trace_an_ktime_float(ctx_t *c, trace_result *res)
{
	size_t n = c->f->n;
	fspan_t *sp = malloc((n + 1) * sizeof *sp);
	fpoint_t *pts = malloc((2 * n + 1) * sizeof *pts);
	if (!sp || !pts) {
		free(sp);
		free(pts);
		return -1;
	}
	size_t m = 0;
	for (int k = 0; k < 3; k++)
		m = add_type(c, k, sp, pts, m);
	qsort(pts, m, sizeof *pts, cmp_fpoint);
	for (int t = 0; t < TRACE_KMASK_N; t++)
		res->ktime[t] = 0;
	int running = 0;
	for (size_t i = 0; i + 1 < m; i++) {
		running += pts[i].st;
		/* the piece from this point to the next, truncated toward zero */
		if (running > 0)
			res->ktime[running & 7] += (int64_t)(pts[i + 1].t - pts[i].t) * 1000;
	}
	free(sp);
	free(pts);
	return 0;
}
