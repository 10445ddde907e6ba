/* trace_prep.c - HTA's loading rules (hta/common/trace_parser.py, trace.py, trace_filter.py). */
#include "trace/trace_prep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/parse.h"

bool trace_prep_filter_applies(trace_rank *const *ranks, size_t n)
{
	const char *first = NULL;
	for (size_t i = 0; i < n; i++) {
		const trace_rank *r = ranks[i];
		if (r->n_profstep_syms >= 2)
			return true;
		if (r->n_profstep_syms == 1) {
			if (!first)
				first = r->profstep_syms[0];
			else if (strcmp(first, r->profstep_syms[0]))
				return true;
		}
	}
	return false;
}

/*
 * The double Python's json module makes of the literal this ns value came from. Exact for
 * literals with up to three decimals: below 2^53 ns the division is correctly rounded, above it
 * the literal is rebuilt and read again.
 */
double trace_us_double(int64_t ns)
{
	if (ns % 1000 == 0)
		return (double)(ns / 1000);
	if (ns > -(1LL << 53) && ns < (1LL << 53))
		return (double)ns / 1000.0;
	char buf[48];
	unsigned long long a = ns < 0 ? (unsigned long long)-(ns + 1) + 1 : (unsigned long long)ns;
	snprintf(buf, sizeof buf, "%s%llu.%03llu", ns < 0 ? "-" : "", a / 1000, a % 1000);
	return gw_strtod_c(buf, NULL);
}

/* HTA's round_down_time_stamps for one event: ts = ceil(ts), end = floor(ts + dur),
 * dur = end - ts. True when that leaves a negative duration. */
static bool round_event(trace_event *e)
{
	double ts = trace_us_double(e->ts), dur = trace_us_double(e->dur);
	double t0 = ceil(ts), t1 = floor(ts + dur);
	e->ts = (int64_t)t0 * 1000;
	e->dur = ((int64_t)t1 - (int64_t)t0) * 1000;
	return e->dur < 0;
}

static bool gpu_side(const trace_rank *r, const trace_event *e)
{
	return (e->stream >= 0 && e->corr >= 0) ||
	       (r->names.names[e->name].nflags & TRACE_NAME_SYNC_GPU);
}

/* What the ProfilerStep filter needs, gathered on the passes the joins make anyway. */
typedef struct {
	bool on;             /* filtering asked for */
	bool any;            /* a CPU-side ProfilerStep was met */
	int64_t last_start;  /* the last ProfilerStep's start */
	int64_t last_end;    /* the latest ProfilerStep end */
	int64_t cut;         /* CPU-side rows kept: ts < cut (ts <= cut with the last step) */
	bool inclusive;      /* --include-last-step */
	uint32_t *count;     /* per correlation index: kept CPU-side rows carrying it */
	uint32_t *gcount;    /* per correlation index: GPU-side rows carrying it */
	size_t n_cpu;        /* kept CPU-side rows */
	size_t n_gpu_nocorr; /* GPU-side rows without a correlation id (Event/Context Sync) */
} step_filter;

static bool cpu_kept(const step_filter *sf, const trace_event *e)
{
	return sf->inclusive ? e->ts <= sf->cut : e->ts < sf->cut;
}

/* One pass over the events for what needs only the event itself: a big trace's events are far
 * more than the caches hold, so every pass is a trip through memory. */
static void first_pass(trace_rank *r, bool round, trace_frame *f, step_filter *sf, int64_t *lo,
                       int64_t *hi)
{
	*lo = INT64_MAX;
	*hi = INT64_MIN;
	for (size_t i = 0; i < r->n; i++) {
		trace_event *e = &r->ev[i];
		if (round && round_event(e))
			f->n_neg_dur++;
		e->flags = (uint8_t)(e->flags & ~TRACE_EV_GPU_SIDE);
		if (gpu_side(r, e))
			e->flags |= TRACE_EV_GPU_SIDE;
		else if (e->flags & TRACE_EV_PROFSTEP) {
			if (!sf->any || e->ts > sf->last_start)
				sf->last_start = e->ts;
			if (!sf->any || e->ts + e->dur > sf->last_end)
				sf->last_end = e->ts + e->dur;
			sf->any = true;
		}
		if ((e->flags & TRACE_EV_ROW0) && r->source == TRACE_SRC_KINETO)
			f->row0 = (uint32_t)i;
		if (e->corr != -1) {
			*lo = e->corr < *lo ? e->corr : *lo;
			*hi = e->corr > *hi ? e->corr : *hi;
		}
	}
}

/* The last row of each side per correlation index: cpu[x], gpu[x] (HTA assigns the merge rows
 * in order). Kineto's ids are sequential, so the id minus the smallest one (lo) usually serves
 * as the index, and then the indices are written on the same pass; sparse ids go through a
 * map first. */
static int index_and_last(const trace_rank *r, trace_frame *f, int64_t lo, int64_t hi,
                          uint32_t **cpu, uint32_t **gpu)
{
	bool dense = lo <= hi && (uint64_t)hi - (uint64_t)lo < 4 * (uint64_t)r->n + 1024;
	if (lo <= hi && !dense) {
		trace_imap m;
		if (!trace_imap_init(&m, r->n))
			return -1;
		for (size_t i = 0; i < r->n; i++) {
			if (r->ev[i].corr == -1)
				continue;
			uint32_t *v = trace_imap_slot(&m, r->ev[i].corr);
			if (!v) {
				trace_imap_free(&m);
				return -1;
			}
			if (*v == UINT32_MAX)
				*v = f->n_cidx++;
			f->cidx[i] = *v;
		}
		trace_imap_free(&m);
	} else if (dense) {
		f->n_cidx = (uint32_t)(hi - lo + 1);
	}
	size_t nc = (size_t)f->n_cidx + 1;
	*cpu = malloc(nc * sizeof **cpu);
	*gpu = malloc(nc * sizeof **gpu);
	if (!*cpu || !*gpu)
		return -1;
	memset(*cpu, 0xff, nc * sizeof **cpu);
	memset(*gpu, 0xff, nc * sizeof **gpu);
	for (size_t i = 0; i < r->n; i++) {
		if (dense && r->ev[i].corr != -1)
			f->cidx[i] = (uint32_t)(r->ev[i].corr - lo);
		if (f->cidx[i] != TRACE_NONE)
			((r->ev[i].flags & TRACE_EV_GPU_SIDE) ? *gpu : *cpu)[f->cidx[i]] =
			    (uint32_t)i;
	}
	return 0;
}

/* index_correlation: a GPU-side row points at the last CPU-side row with its correlation id
 * and a CPU-side row at the last GPU-side one. On the same pass, with the filter on, the kept
 * CPU-side rows are counted per correlation index and the GPU-side rows too. */
static void join_and_count(const trace_rank *r, trace_frame *f, const uint32_t *cpu,
                           const uint32_t *gpu, step_filter *sf)
{
	for (size_t i = 0; i < r->n; i++) {
		const trace_event *e = &r->ev[i];
		uint32_t x = f->cidx[i];
		bool g = e->flags & TRACE_EV_GPU_SIDE;
		f->partner[i] = x == TRACE_NONE ? TRACE_NONE : (g ? cpu : gpu)[x];
		if (!sf->on)
			continue;
		if (g) {
			if (x == TRACE_NONE)
				sf->n_gpu_nocorr++;
			else
				sf->gcount[x]++;
		} else if (cpu_kept(sf, e)) {
			sf->n_cpu++;
			if (x != TRACE_NONE)
				sf->count[x]++;
		}
	}
}

/* HTA's _filter_irrelevant_gpu_kernels: CPU-side rows that start before the last ProfilerStep,
 * then the GPU-side rows whose correlation id one of them carries (as often as it is carried),
 * all GPU-side rows first; rows and kept filled on one pass. */
static int filter_rows(const trace_rank *r, trace_frame *f, const step_filter *sf)
{
	size_t n_gpu = sf->n_gpu_nocorr; /* Event/Context Sync rows without an id: one copy each */
	for (size_t x = 0; x < f->n_cidx; x++)
		n_gpu += (size_t)sf->count[x] * sf->gcount[x];
	f->rows = malloc((n_gpu + sf->n_cpu + 1) * sizeof *f->rows);
	if (!f->rows)
		return -1;
	size_t kg = 0, kc = n_gpu;
	for (size_t i = 0; i < r->n; i++) {
		const trace_event *e = &r->ev[i];
		if (!(e->flags & TRACE_EV_GPU_SIDE)) {
			if (cpu_kept(sf, e)) {
				f->rows[kc++] = (uint32_t)i;
				f->kept[i] = 1;
			} else if (e->stream != -1) {
				f->n_gpu_dropped++;
			}
			continue;
		}
		uint32_t mult = f->cidx[i] == TRACE_NONE ? 1 : sf->count[f->cidx[i]];
		if (mult == 0) {
			if (e->stream != -1)
				f->n_gpu_dropped++;
			continue;
		}
		for (uint32_t m = 0; m < mult; m++)
			f->rows[kg++] = (uint32_t)i;
		f->kept[i] = 1;
	}
	f->n = kc;
	f->step_cut = sf->cut;
	f->filtered = true;
	return 0;
}

static int prep_rows(trace_rank *r, trace_frame *f, step_filter *sf, int64_t lo, int64_t hi)
{
	uint32_t *cpu = NULL, *gpu = NULL;
	int rc = -1;
	if (index_and_last(r, f, lo, hi, &cpu, &gpu) < 0)
		goto out;
	if (sf->on) {
		sf->count = calloc((size_t)f->n_cidx + 1, sizeof *sf->count);
		sf->gcount = calloc((size_t)f->n_cidx + 1, sizeof *sf->gcount);
		if (!sf->count || !sf->gcount)
			goto out;
	}
	join_and_count(r, f, cpu, gpu, sf);
	free(cpu);
	free(gpu);
	cpu = gpu = NULL;
	if (sf->on) {
		rc = filter_rows(r, f, sf);
		goto out;
	}
	if (!(f->rows = malloc((r->n + 1) * sizeof *f->rows)))
		goto out;
	for (size_t i = 0; i < r->n; i++) {
		f->rows[i] = (uint32_t)i;
		f->kept[i] = 1;
	}
	f->n = r->n;
	rc = 0;
out:
	free(cpu);
	free(gpu);
	free(sf->count);
	free(sf->gcount);
	sf->count = sf->gcount = NULL;
	return rc;
}

int trace_prep(trace_rank *r, const trace_prep_opts *o, bool filter, trace_frame *f)
{
	memset(f, 0, sizeof *f);
	f->row0 = TRACE_NONE;
	bool round = o->ns_rounding && r->source == TRACE_SRC_KINETO && r->ts_float;
	step_filter sf = {.inclusive = o->include_last_step};
	int64_t lo, hi;
	first_pass(r, round, f, &sf, &lo, &hi);
	f->rounded = round;
	/* Without rounding HTA keeps float microseconds, shifted by the earliest ts of all ranks.
	 */
	f->hta_float = !round && r->source == TRACE_SRC_KINETO && r->ts_float;
	f->origin_us = trace_us_double(o->origin);
	if (filter && !sf.any)
		trace_rank_warn(r, "other ranks have ProfilerSteps but this one has none: its "
		                   "events are not filtered by iteration");
	sf.on = filter && sf.any;
	sf.cut = o->include_last_step ? sf.last_end : sf.last_start;
	f->partner = malloc((r->n + 1) * sizeof *f->partner);
	f->kept = calloc(r->n + 1, 1);
	f->cidx = malloc((r->n + 1) * sizeof *f->cidx);
	if (!f->partner || !f->kept || !f->cidx)
		goto oom;
	memset(f->cidx, 0xff, (r->n + 1) * sizeof *f->cidx);
	if (prep_rows(r, f, &sf, lo, hi) < 0)
		goto oom;
	return 0;
oom:
	trace_frame_free(f);
	return -1;
}

void trace_frame_free(trace_frame *f)
{
	free(f->rows);
	free(f->partner);
	free(f->kept);
	free(f->cidx);
	memset(f, 0, sizeof *f);
}

bool trace_frame_runtime_ts(const trace_rank *r, const trace_frame *f, uint32_t ev, int64_t *ts)
{
	const trace_event *e = &r->ev[ev];
	if (e->corr == -1)
		return false;
	uint32_t p = f->partner[ev];
	if (p == TRACE_NONE) {
		/* HTA's fallback index_correlation is min(correlation, 0): 0 names row 0. */
		if (e->corr < 0 || f->row0 == TRACE_NONE)
			return false;
		p = f->row0;
	}
	if (!f->kept[p])
		return false;
	*ts = r->ev[p].ts;
	return true;
}
