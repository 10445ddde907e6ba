/* trace_prep.h - HTA's loading rules applied to a parsed rank: nanosecond rounding, the
 * ProfilerStep iteration filter and the CPU/GPU correlation join. The result, a trace_frame, is
 * the list of rows HTA's analyses see, in HTA's row order (which decides how ties sort). */
#ifndef GPUWHY_TRACE_PREP_H
#define GPUWHY_TRACE_PREP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/trace_model.h"

typedef struct {
	bool ns_rounding;       /* HTA's round_down_time_stamps: ceil(ts), floor(ts+dur) in us */
	bool include_last_step; /* keep the last ProfilerStep (HTA drops it by default) */
	int64_t origin;         /* the earliest ts of all ranks loaded together (ns): HTA's
	                           alignment, which its float arithmetic without rounding sees */
} trace_prep_opts;

#define TRACE_NONE UINT32_MAX

typedef struct {
	uint32_t *rows; /* indices into r->ev, HTA's row order; a GPU row appears once per kept
	                   CPU row with its correlation id (HTA's inner merge) */
	size_t n;
	uint32_t *partner; /* per event: HTA's index_correlation as an event index, or TRACE_NONE */
	uint8_t *kept;     /* per event: 1 when the row is in the frame */
	uint32_t *cidx;    /* per event: dense index of its correlation id, TRACE_NONE for -1 */
	uint32_t n_cidx;   /* size of arrays indexed by cidx */
	uint32_t row0;    /* event index of traceEvents[0] when HTA keeps that row, or TRACE_NONE */
	bool rounded;     /* nanosecond rounding was applied */
	bool hta_float;   /* HTA would compute in float microseconds (ns timestamps, no rounding) */
	double origin_us; /* HTA's alignment origin, as the double HTA subtracts */
	bool filtered;    /* the ProfilerStep filter was applied */
	int64_t step_cut; /* rows of the CPU side start before this (ns), when filtered */
	uint64_t n_neg_dur;     /* events whose duration became negative by rounding */
	uint64_t n_gpu_dropped; /* GPU events (stream != -1) the filter removed */
} trace_frame;

/* Whether HTA's iteration filter applies: two or more distinct symbols containing
 * "ProfilerStep" over all the ranks loaded together. */
bool trace_prep_filter_applies(trace_rank *const *ranks, size_t n);

/* The double Python's json module makes of the literal this ns value came from (us). */
double trace_us_double(int64_t ns);

/* Rounds, joins and filters r in place (event times change when rounding applies) and builds f.
 * Returns 0, or -1 when memory runs out. */
int trace_prep(trace_rank *r, const trace_prep_opts *o, bool filter, trace_frame *f);
void trace_frame_free(trace_frame *f);

/* HTA's index_correlation partner start for a GPU row, as HTA's idle breakdown joins it:
 * false when HTA would see NaN. */
bool trace_frame_runtime_ts(const trace_rank *r, const trace_frame *f, uint32_t ev, int64_t *ts);

#endif
