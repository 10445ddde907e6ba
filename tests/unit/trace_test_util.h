/* trace_test_util.h - builds small Kineto traces in memory and runs them through the reader,
 * HTA's loading rules and the analyses. Shared by tests/unit/test_trace_*.c. */
#ifndef GPUWHY_TRACE_TEST_UTIL_H
#define GPUWHY_TRACE_TEST_UTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "traceview/trace_analyze.h"
#include "trace/trace_kineto.h"
#include "trace/trace_prep.h"

typedef struct {
	char *s;
	size_t len, cap;
	int n; /* events so far */
} tbuf;

static __attribute__((unused)) void tb_add(tbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), unused));
static __attribute__((unused)) void tb_add(tbuf *b, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		va_start(ap, fmt);
		int w = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (b->s && (size_t)w < b->cap - b->len) {
			b->len += (size_t)w;
			return;
		}
		b->cap = (b->cap + (size_t)w + 1) * 2;
		b->s = realloc(b->s, b->cap);
		if (!b->s)
			abort();
		if (!b->len)
			b->s[0] = 0;
	}
}

static __attribute__((unused)) void tb_begin(tbuf *b)
{
	memset(b, 0, sizeof *b);
	tb_add(b, "{\"schemaVersion\": 1, \"traceEvents\": [");
}

static __attribute__((unused)) void tb_sep(tbuf *b)
{
	if (b->n++)
		tb_add(b, ",\n");
}

/* A GPU activity: cat kernel/gpu_memcpy/gpu_memset/cuda_sync...; ts and dur are JSON number
 * literals in microseconds ("100", "100.250"); corr < -1 leaves the correlation out. */
static __attribute__((unused)) void tb_gpu(tbuf *b, const char *cat, const char *name,
                                           const char *ts, const char *dur, int stream, long corr)
{
	tb_sep(b);
	tb_add(b,
	       "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": 0, \"tid\": %d, "
	       "\"ts\": %s, \"dur\": %s, \"args\": {\"device\": 0, \"stream\": %d",
	       cat, name, stream, ts, dur, stream);
	if (corr >= -1)
		tb_add(b, ", \"correlation\": %ld", corr);
	tb_add(b, "}}");
}

static __attribute__((unused)) void tb_kernel(tbuf *b, const char *name, const char *ts,
                                              const char *dur, int stream, long corr)
{
	tb_gpu(b, "kernel", name, ts, dur, stream, corr);
}

/* A CPU call with a correlation id (cudaLaunchKernel and friends). */
static __attribute__((unused)) void tb_call(tbuf *b, const char *name, const char *ts,
                                            const char *dur, long corr)
{
	tb_sep(b);
	tb_add(b,
	       "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"%s\", \"pid\": 1, "
	       "\"tid\": 1, \"ts\": %s, \"dur\": %s, \"args\": {\"correlation\": %ld}}",
	       name, ts, dur, corr);
}

static __attribute__((unused)) void tb_cpu(tbuf *b, const char *cat, const char *name,
                                           const char *ts, const char *dur)
{
	tb_sep(b);
	tb_add(b,
	       "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": 1, \"tid\": 1, "
	       "\"ts\": %s, \"dur\": %s, \"args\": {\"External id\": 1}}",
	       cat, name, ts, dur);
}

static __attribute__((unused)) void tb_raw(tbuf *b, const char *event)
{
	tb_sep(b);
	tb_add(b, "%s", event);
}

static __attribute__((unused)) char *tb_end(tbuf *b)
{
	tb_add(b, "], \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0}}");
	return b->s;
}

/* A trace run through everything; check rc before using the rest. */
typedef struct {
	int rc;
	gw_fail err;
	trace_rank r;
	trace_result res;
} trun;

static __attribute__((unused)) void trun_opts(trun *t, const char *json, const trace_prep_opts *o)
{
	memset(t, 0, sizeof *t);
	trace_rank_init(&t->r, "test.json");
	t->rc = trace_kineto_parse_mem(json, strlen(json), &t->r, &t->err);
	if (t->rc)
		return;
	trace_rank *rp = &t->r;
	trace_frame f;
	if (trace_prep(&t->r, o, trace_prep_filter_applies(&rp, 1), &f) < 0 ||
	    trace_analyze(&t->r, &f, &t->res, 1) < 0)
		t->rc = -2;
}

static __attribute__((unused)) void trun_do(trun *t, const char *json)
{
	trace_prep_opts o = {.ns_rounding = true};
	trun_opts(t, json, &o);
}

static __attribute__((unused)) void trun_free(trun *t)
{
	trace_result_free(&t->res);
	trace_rank_free(&t->r);
}

static __attribute__((unused)) const trace_idle_stream *trun_stream(const trun *t, long stream)
{
	for (size_t i = 0; i < t->res.n_idle; i++)
		if (t->res.idle[i].stream == stream)
			return &t->res.idle[i];
	return NULL;
}

#endif
