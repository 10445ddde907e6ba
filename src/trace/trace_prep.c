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
static double us_double(int64_t ns)
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
	double ts = us_double(e->ts), dur = us_double(e->dur);
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

/*
 * Dense correlation indices: joins on the correlation id become array lookups. Kineto's ids are
 * sequential, so the id minus the smallest one (lo; hi the largest, lo > hi when there are none)
 * usually serves; sparse ids go through a map.
 */
static int index_correlations(const trace_rank *r, trace_frame *f, int64_t lo, int64_t hi)
{
	if (lo > hi)
		return 0;
	if ((uint64_t)hi - (uint64_t)lo < 4 * (uint64_t)r->n + 1024) {
		for (size_t i = 0; i < r->n; i++)
			if (r->ev[i].corr != -1)
				f->cidx[i] = (uint32_t)(r->ev[i].corr - lo);
		f->n_cidx = (uint32_t)(hi - lo + 1);
		return 0;
	}
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
	return 0;
}

/* index_correlation: a GPU-side row points at the last CPU-side row with its correlation id
 * and a CPU-side row at the last GPU-side one (HTA assigns the merge rows in order). */
static int join_partners(trace_rank *r, trace_frame *f)
{
	uint32_t *cpu = malloc(((size_t)f->n_cidx + 1) * sizeof *cpu);
	uint32_t *gpu = malloc(((size_t)f->n_cidx + 1) * sizeof *gpu);
	if (!cpu || !gpu) {
		free(cpu);
		free(gpu);
		return -1;
	}
	memset(cpu, 0xff, ((size_t)f->n_cidx + 1) * sizeof *cpu);
	memset(gpu, 0xff, ((size_t)f->n_cidx + 1) * sizeof *gpu);
	for (size_t i = 0; i < r->n; i++) {
		if (f->cidx[i] != TRACE_NONE)
			((r->ev[i].flags & TRACE_EV_GPU_SIDE) ? gpu : cpu)[f->cidx[i]] =
			    (uint32_t)i;
	}
	for (size_t i = 0; i < r->n; i++) {
		f->partner[i] = TRACE_NONE;
		if (f->cidx[i] != TRACE_NONE)
			f->partner[i] =
			    ((r->ev[i].flags & TRACE_EV_GPU_SIDE) ? cpu : gpu)[f->cidx[i]];
	}
	free(cpu);
	free(gpu);
	return 0;
}

/* HTA's _filter_irrelevant_gpu_kernels: CPU-side rows that start before the last ProfilerStep,
 * then the GPU-side rows whose correlation id one of them carries (as often as it is carried). */
static int filter_rows(trace_rank *r, const trace_prep_opts *o, trace_frame *f)
{
	int64_t last_start = 0, last_end = 0;
	bool any = false;
	for (size_t i = 0; i < r->n; i++) {
		const trace_event *e = &r->ev[i];
		if (!(e->flags & TRACE_EV_PROFSTEP) || (e->flags & TRACE_EV_GPU_SIDE))
			continue;
		if (!any || e->ts > last_start)
			last_start = e->ts;
		if (!any || e->ts + e->dur > last_end)
			last_end = e->ts + e->dur;
		any = true;
	}
	if (!any) {
		trace_rank_warn(r, "other ranks have ProfilerSteps but this one has none: its "
		                   "events are not filtered by iteration");
		return 1;
	}
	f->step_cut = o->include_last_step ? last_end : last_start;
	uint32_t *count = calloc((size_t)f->n_cidx + 1, sizeof *count);
	if (!count)
		return -1;
	size_t n_cpu = 0, n_gpu = 0;
	for (size_t i = 0; i < r->n; i++) {
		const trace_event *e = &r->ev[i];
		if (e->flags & TRACE_EV_GPU_SIDE)
			continue;
		bool keep = o->include_last_step ? e->ts <= last_end : e->ts < last_start;
		if (!keep)
			continue;
		n_cpu++;
		if (f->cidx[i] != TRACE_NONE)
			count[f->cidx[i]]++;
	}
	for (int pass = 0; pass < 2; pass++) {
		size_t k = 0;
		for (size_t i = 0; i < r->n; i++) {
			const trace_event *e = &r->ev[i];
			if (!(e->flags & TRACE_EV_GPU_SIDE))
				continue;
			/* Event/Context Sync rows without a correlation id: one copy (duplicates
			 * would change none of the analyses). */
			uint32_t mult = f->cidx[i] == TRACE_NONE ? 1 : count[f->cidx[i]];
			if (mult == 0) {
				if (pass == 0 && e->stream != -1)
					f->n_gpu_dropped++;
				continue;
			}
			for (uint32_t m = 0; m < mult; m++) {
				if (pass == 1)
					f->rows[k] = (uint32_t)i;
				k++;
			}
			if (pass == 1)
				f->kept[i] = 1;
		}
		if (pass == 0) {
			n_gpu = k;
			f->rows = malloc((n_gpu + n_cpu + 1) * sizeof *f->rows);
			if (!f->rows) {
				free(count);
				return -1;
			}
		}
	}
	size_t k = n_gpu;
	for (size_t i = 0; i < r->n; i++) {
		const trace_event *e = &r->ev[i];
		if (e->flags & TRACE_EV_GPU_SIDE)
			continue;
		if (o->include_last_step ? e->ts <= last_end : e->ts < last_start) {
			f->rows[k++] = (uint32_t)i;
			f->kept[i] = 1;
		} else if (e->stream != -1) {
			f->n_gpu_dropped++;
		}
	}
	f->n = k;
	f->filtered = true;
	free(count);
	return 0;
}

int trace_prep(trace_rank *r, const trace_prep_opts *o, bool filter, trace_frame *f)
{
	memset(f, 0, sizeof *f);
	f->row0 = TRACE_NONE;
	bool round = o->ns_rounding && r->source == TRACE_SRC_KINETO && r->ts_float;
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	/* One pass over the events for what needs only the event itself: a big trace's events
	 * are far more than the caches hold, so every pass is a trip through memory. */
	for (size_t i = 0; i < r->n; i++) {
		trace_event *e = &r->ev[i];
		if (round && round_event(e))
			f->n_neg_dur++;
		e->flags = (uint8_t)(e->flags & ~TRACE_EV_GPU_SIDE);
		if (gpu_side(r, e))
			e->flags |= TRACE_EV_GPU_SIDE;
		if ((e->flags & TRACE_EV_ROW0) && r->source == TRACE_SRC_KINETO)
			f->row0 = (uint32_t)i;
		if (e->corr != -1) {
			lo = e->corr < lo ? e->corr : lo;
			hi = e->corr > hi ? e->corr : hi;
		}
	}
	f->rounded = round;
	f->partner = malloc((r->n + 1) * sizeof *f->partner);
	f->kept = calloc(r->n + 1, 1);
	f->cidx = malloc((r->n + 1) * sizeof *f->cidx);
	if (!f->partner || !f->kept || !f->cidx)
		goto oom;
	memset(f->cidx, 0xff, (r->n + 1) * sizeof *f->cidx);
	if (index_correlations(r, f, lo, hi) < 0 || join_partners(r, f) < 0)
		goto oom;
	int rc = filter ? filter_rows(r, o, f) : 1;
	if (rc < 0)
		goto oom;
	if (rc > 0) {
		f->rows = malloc((r->n + 1) * sizeof *f->rows);
		if (!f->rows)
			goto oom;
		for (size_t i = 0; i < r->n; i++) {
			f->rows[i] = (uint32_t)i;
			f->kept[i] = 1;
		}
		f->n = r->n;
	}
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
