/* trace_analyze_int.h - what the analyses of trace_analyze.c and trace_counters.c share: the
 * scratch context over one prepared rank and the correlation chains. */
#ifndef GPUWHY_TRACE_ANALYZE_INT_H
#define GPUWHY_TRACE_ANALYZE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "traceview/trace_analyze.h"

typedef struct {
	int64_t ts, end;
} span_t;

/* Frame rows with a stream, chained by correlation id in frame order: for a dense correlation
 * index x, head[x] is the first position and next[] links the rest; row[] gives the event. */
typedef struct {
	uint32_t *head, *next, *row;
	size_t n;
} chain_t;

/* Scratch buffers sized for the whole frame, reused by every analysis. */
typedef struct {
	const trace_rank *r;
	const trace_frame *f;
	int64_t *keys;
	uint32_t *idx;
	uint32_t *rows;
	uint8_t *mark; /* per correlation index */
	chain_t gpu;
} ctx_t;

static inline const trace_event *EV(const ctx_t *c, uint32_t row)
{
	return &c->r->ev[row];
}

static inline trace_ktype ktype_of(const ctx_t *c, const trace_event *e)
{
	return (trace_ktype)c->r->names.names[e->name].ktype;
}

/* Rows of the frame with a stream (HTA's "GPU kernels"), or only those of kernel type type
 * (-1: all), into out; returns how many. */
size_t trace_an_gpu_rows(const ctx_t *c, int type, uint32_t *out);

/* The GPU rows chained by correlation (c->gpu); -1 when out of memory. */
int trace_an_chain_build(ctx_t *c);
void trace_an_chain_free(chain_t *ch);
/* HTA's kernel launch statistics, queue length and memory bandwidth counters (trace_counters.c);
 * each returns 0, or -1 when out of memory. */
int trace_an_launch_stats(ctx_t *c, trace_result *res);
int trace_an_queue_length(ctx_t *c, trace_result *res);
int trace_an_memory_bw(ctx_t *c, trace_result *res);

/* The kernel type combination times (res->ktime) as HTA computes them in float microseconds,
 * each piece truncated to whole microseconds, for frames with hta_float (trace_kfloat.c); -1 when
 * out of memory. */
int trace_an_ktime_float(ctx_t *c, trace_result *res);

/* The verdict and its evidence from the analyses' results (trace_verdict.c). */
void trace_an_verdict(const trace_result *res, trace_verdict *v);

#endif
