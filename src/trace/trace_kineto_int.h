/* trace_kineto_int.h - the Kineto reader's parser state, shared by its three files: the SAX
 * callbacks (trace_kineto.c), the whole-document readers (trace_kineto_read.c) and the parallel
 * splitter (trace_kineto_split.c). */
#ifndef GPUWHY_TRACE_KINETO_INT_H
#define GPUWHY_TRACE_KINETO_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <yajl/yajl_parse.h>
#include "trace/trace_gzin.h"
#include "trace/trace_jscan.h"

#include "trace/trace_model.h"
#include "util/fail.h"

enum { TOP_NONE = 0, TOP_EVENTS, TOP_DIST, TOP_DEVPROPS, TOP_BASETIME };
enum {
	K_NONE = 0,
	K_PH,
	K_CAT,
	K_NAME,
	K_TS,
	K_DUR,
	K_ARGS,
	K_STREAM,
	K_CORR,
	K_BW,
	K_DEVNAME,
	K_WORLD
};

typedef struct {
	bool has_ts, has_dur, has_cat, has_name, bad;
	bool cat_trace, cat_instant, cat_profstep;
	char ph;
	uint8_t cat;
	int64_t ts, dur, stream, corr;
	double bw;
	bool has_bw;
	uint32_t name; /* interned as it arrives: no copy, classified once per distinct name */
} kevent;

typedef struct {
	trace_rank *r;
	int depth;      /* open containers */
	int key_depth;  /* depth of the map whose key is pending, -1 none */
	int key;        /* K_* of the pending key */
	int rank_depth; /* depth of a pending "rank" key, -1 none */
	int top;        /* the top-level key the parser is under */
	bool top_is_map;
	bool saw_events, events_open, in_event, in_args;
	uint64_t ord; /* elements of traceEvents seen */
	int devprops_elem;
	kevent e;
	char *catsym; /* the current event's cat when it contains "ProfilerStep" (rare) */
	size_t catsym_len;
	bool old_cats, base_time;
	bool fragment; /* parsing a run of traceEvents elements, not a document */
	uint64_t no_ts, bad_value;
	char err[200];
} kstate;

/* The callbacks, for yajl and for the fast scanner (trace_jscan). */
extern const yajl_callbacks trace_kineto_callbacks;
/* The values the callbacks never look at, for the scanner to pass over. */
extern const trace_jscan_skip trace_kineto_skip;
/* The values the callbacks never look at, without the whole-event reader (for tests). */
extern const trace_jscan_skip trace_kineto_skip_sax;
void trace_kstate_init(kstate *k, trace_rank *r);

/* The callbacks' steps, for the whole-event reader (trace_kineto_event.c). */
void trace_kineto_event_begin(kstate *k);
int trace_kineto_event_end(kstate *k);
void trace_kineto_set_cat(kstate *k, const unsigned char *s, size_t n);
/* A JSON number in microseconds -> exact nanoseconds; *is_float: it has a fraction or an
 * exponent. */
bool trace_kineto_us_to_ns(const char *s, size_t n, int64_t *out, bool *is_float);
/* A JSON number -> integer, truncating a fraction (pandas' astype(int)). */
bool trace_kineto_num_to_i64(const char *s, size_t n, int64_t *out);
/* An element of traceEvents read whole (trace_jscan_skip's element): its end, or NULL when the
 * callbacks must read it. */
const unsigned char *trace_kineto_event(void *ctx, const unsigned char *p, const unsigned char *end,
                                        int depth);
void trace_kstate_free(kstate *k);
yajl_handle trace_kineto_parser(kstate *k);
/*
 * A reason into err (when given): English, formatted here and passed as data ("%s"), never
 * looked up in the catalogue (the faces word it, cmd/trace_say.c); what is the file (NULL:
 * ""), code GW_EXIT_ENV. Returns -1.
 */
int trace_kineto_fail(gw_fail *err, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* yajl's error (or the callbacks' own, which comes first) as a one-line reason; base is the
 * offset of chunk in the document. */
void trace_kineto_reason(kstate *k, yajl_handle h, const unsigned char *chunk, size_t len,
                         uint64_t base, gw_fail *err);
/* Checks that make a parsed document a usable trace; sets the format description. 0, or -1
 * with the reason in err. */
int trace_kineto_finish(kstate *k, gw_fail *err);

/* After gzread returned n <= 0: -1 with the gzip or read error in err (path as what), or 1
 * at a clean end. */
int trace_kineto_read_status(const trace_gzin *g, int n, const char *path, gw_fail *err);
/* Advances progress by the compressed bytes consumed since *reported. */
void trace_kineto_add_progress(const trace_gzin *g, _Atomic uint64_t *progress, uint64_t *reported);

/* trace_kineto_read_parallel's answer when the guessed pieces did not parse: read it again in
 * one piece. */
#define TRACE_KINETO_RETRY 2
/* path in pieces on threads (1: this thread parses them in turn). 0, -1 with err (path as
 * what), or TRACE_KINETO_RETRY (err untouched). */
int trace_kineto_read_parallel(const char *path, trace_rank *r, _Atomic uint64_t *progress,
                               int threads, gw_fail *err);

#endif
