/* trace_kineto.c - Kineto Chrome-trace JSON (.json / .json.gz) through yajl's SAX callbacks.
 *
 * Only what HTA's analyses use is kept: events with a duration and a category (HTA drops the
 * rest) that carry a stream, a correlation id, a ProfilerStep name, or are row 0. Numbers arrive
 * as text (yajl's number callback) and are converted here, locale-independently: microseconds
 * with up to three decimals become exact integer nanoseconds. */
#include "trace/trace_kineto.h"
#include "trace/trace_jscan.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>

#include "util/err.h"
#include "util/parse.h"

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

static int fail(kstate *k, const char *msg)
{
	if (!k->err[0])
		snprintf(k->err, sizeof k->err, "%s", msg);
	return 0;
}

static bool is_key(const unsigned char *s, size_t n, const char *lit)
{
	size_t m = strlen(lit);
	return n == m && !memcmp(s, lit, m);
}

/*
 * A JSON number in microseconds -> exact nanoseconds. *is_float: the literal has a fraction or
 * an exponent (Python makes it a float). Up to three decimals are exact; more are rounded and
 * exponents go through strtod.
 */
static bool us_to_ns(const char *s, size_t n, int64_t *out, bool *is_float)
{
	size_t i = 0;
	bool neg = false;
	if (i < n && s[i] == '-') {
		neg = true;
		i++;
	}
	uint64_t ip = 0, frac = 0;
	int fd = 0;
	bool round_up = false;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
		if (ip > (uint64_t)INT64_MAX / 10000)
			return false;
		ip = ip * 10 + (uint64_t)(s[i] - '0');
	}
	if (i < n && s[i] == '.') {
		*is_float = true;
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
			if (fd < 3) {
				frac = frac * 10 + (uint64_t)(s[i] - '0');
				fd++;
			} else if (fd == 3) {
				round_up = s[i] >= '5';
				fd = 4;
			}
		}
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		*is_float = true;
		char buf[64];
		if (n >= sizeof buf)
			return false;
		memcpy(buf, s, n);
		buf[n] = 0;
		double d = gw_strtod_c(buf, NULL) * 1000.0;
		if (!(d > -9.2e18 && d < 9.2e18))
			return false;
		*out = (int64_t)(d < 0 ? d - 0.5 : d + 0.5);
		return true;
	}
	for (int k = fd > 3 ? 3 : fd; k < 3; k++)
		frac *= 10;
	int64_t v = (int64_t)(ip * 1000 + frac + (round_up ? 1 : 0));
	*out = neg ? -v : v;
	return true;
}

/* A JSON number -> integer, truncating a fraction (pandas' astype(int)). */
static bool num_to_i64(const char *s, size_t n, int64_t *out)
{
	char buf[64];
	if (n == 0 || n >= sizeof buf)
		return false;
	memcpy(buf, s, n);
	buf[n] = 0;
	bool plain = true;
	for (size_t i = 0; i < n; i++)
		if (s[i] == '.' || s[i] == 'e' || s[i] == 'E')
			plain = false;
	if (plain) {
		errno = 0;
		char *end;
		long long v = strtoll(buf, &end, 10);
		if (errno || *end)
			return false;
		*out = v;
		return true;
	}
	double d = gw_strtod_c(buf, NULL);
	if (!(d > -9.2e18 && d < 9.2e18))
		return false;
	*out = (int64_t)d;
	return true;
}

static void event_begin(kstate *k)
{
	memset(&k->e, 0, sizeof k->e);
	k->e.stream = -1;
	k->e.corr = -1;
	k->e.bw = -1;
	k->catsym_len = 0;
	k->ord++;
}

static int event_end(kstate *k)
{
	kevent *e = &k->e;
	trace_rank *r = k->r;
	if (!e->has_name) {
		e->name = trace_names_intern(&r->names, "", 0);
		if (e->name == UINT32_MAX)
			return fail(k, "out of memory");
	}
	const trace_name *nm = &r->names.names[e->name];
	/* HTA keeps [memory] instant events by giving them a zero duration. */
	if (e->ph == 'i' && e->cat_instant && nm->len == 8 &&
	    !memcmp(trace_name_str(&r->names, e->name), "[memory]", 8)) {
		e->has_dur = true;
		e->dur = 0;
	}
	if (!e->has_ts)
		r->ts_float = true; /* a missing ts makes pandas' ts column float64 */
	if (!e->has_dur || !e->has_cat || e->cat_trace)
		return 1;
	if (e->bad || !e->has_ts) {
		if (!e->has_ts)
			k->no_ts++;
		return 1;
	}
	r->n_rows++;
	if (!r->have_span || e->ts < r->first_ts)
		r->first_ts = e->ts;
	if (!r->have_span || e->ts + e->dur > r->last_end)
		r->last_end = e->ts + e->dur;
	r->have_span = true;

	bool profstep = nm->nflags & TRACE_NAME_PROFSTEP;
	if (profstep)
		trace_rank_note_profstep(r, trace_name_str(&r->names, e->name), nm->len);
	if (e->cat_profstep)
		trace_rank_note_profstep(r, k->catsym, k->catsym_len);
	bool sync_gpu = nm->nflags & TRACE_NAME_SYNC_GPU;
	uint32_t ord = (uint32_t)(k->ord - 1);
	bool row0 = ord == 0 && !k->fragment; /* fragments count from 0 locally */
	if (e->stream == -1 && e->corr == -1 && !sync_gpu && !profstep && !row0)
		return 1;
	trace_event ev = {
	    .ts = e->ts,
	    .dur = e->dur,
	    .corr = e->corr,
	    .stream = e->stream,
	    .bw_gbps = e->bw,
	    .name = e->name,
	    .ord = ord,
	    .cat = e->cat,
	    .flags = (uint8_t)((profstep ? TRACE_EV_PROFSTEP : 0) | (row0 ? TRACE_EV_ROW0 : 0) |
	                       (e->has_bw ? TRACE_EV_HAS_BW : 0)),
	};
	if (!trace_rank_push(r, &ev))
		return fail(k, "out of memory");
	return 1;
}

static void set_cat(kstate *k, const unsigned char *s, size_t n)
{
	kevent *e = &k->e;
	e->has_cat = true;
	e->cat = TRACE_CAT_OTHER;
	e->cat_trace = e->cat_instant = e->cat_profstep = false;
	if (is_key(s, n, "kernel") || is_key(s, n, "Kernel"))
		e->cat = TRACE_CAT_KERNEL;
	else if (is_key(s, n, "gpu_memcpy") || is_key(s, n, "Memcpy"))
		e->cat = TRACE_CAT_MEMCPY;
	else if (is_key(s, n, "gpu_memset") || is_key(s, n, "Memset"))
		e->cat = TRACE_CAT_MEMSET;
	else if (is_key(s, n, "cuda_runtime") || is_key(s, n, "Runtime"))
		e->cat = TRACE_CAT_RUNTIME;
	else if (is_key(s, n, "cuda_sync"))
		e->cat = TRACE_CAT_SYNC;
	else if (is_key(s, n, "cuda_driver"))
		e->cat = TRACE_CAT_DRIVER;
	else if (is_key(s, n, "mtia_ccp_events"))
		e->cat = TRACE_CAT_MTIA_CCP;
	else if (is_key(s, n, "Trace"))
		e->cat_trace = true;
	else if (is_key(s, n, "cpu_instant_event"))
		e->cat_instant = true;
	if (n == 6 && (s[0] == 'K' || s[0] == 'M'))
		k->old_cats = true;
	else if (is_key(s, n, "Runtime") || is_key(s, n, "Operator"))
		k->old_cats = true;
	if (n >= 12 && memmem(s, n, "ProfilerStep", 12)) {
		char *c = realloc(k->catsym, n);
		if (c) {
			memcpy(c, s, n);
			k->catsym = c;
			k->catsym_len = n;
			e->cat_profstep = true;
		}
	}
}

/* The value for the pending key is at hand: returns the key and clears it. */
static int take_key(kstate *k)
{
	int key = k->key_depth == k->depth ? k->key : K_NONE;
	k->key_depth = -1;
	k->key = K_NONE;
	return key;
}

/* A value that is not an object inside traceEvents: counted as a row HTA cannot use. */
static void stray_element(kstate *k)
{
	if (k->events_open && k->depth == 2) {
		k->ord++;
		k->bad_value++;
	}
}

static void bad_type(kstate *k, int key)
{
	k->bad_value++;
	if (key == K_TS || key == K_DUR)
		k->e.bad = true;
}

static int cb_null(void *ctx)
{
	kstate *k = ctx;
	k->rank_depth = -1;
	int key = take_key(k);
	switch (key) {
	case K_TS:
		k->e.has_ts = false;
		break;
	case K_DUR:
		k->e.has_dur = false;
		break;
	case K_CAT:
		k->e.has_cat = false;
		break;
	case K_STREAM:
		k->e.stream = -1;
		break;
	case K_CORR:
		k->e.corr = -1;
		break;
	case K_BW:
		k->e.bw = __builtin_nan("");
		k->e.has_bw = true;
		break;
	case K_NONE:
		stray_element(k);
		break;
	default:
		break;
	}
	return 1;
}

static int cb_boolean(void *ctx, int v)
{
	(void)v;
	kstate *k = ctx;
	k->rank_depth = -1;
	int key = take_key(k);
	if (key == K_NONE)
		stray_element(k);
	else if (key != K_PH && key != K_DEVNAME && key != K_WORLD)
		bad_type(k, key);
	return 1;
}

static int cb_number(void *ctx, const char *s, size_t n)
{
	kstate *k = ctx;
	trace_rank *r = k->r;
	if (k->rank_depth == k->depth && !r->rank_found && n > 0 && s[0] >= '0' && s[0] <= '9') {
		/* Like HTA's regex "rank":\s+(\d+): the leading digits of the first "rank" key. */
		long long v = 0;
		for (size_t i = 0; i < n && s[i] >= '0' && s[i] <= '9' && v < 100000000; i++)
			v = v * 10 + (s[i] - '0');
		if (v < 100000000) {
			r->rank = (int)v;
			r->rank_found = true;
		}
	}
	k->rank_depth = -1;
	int key = take_key(k);
	kevent *e = &k->e;
	bool is_float = false;
	switch (key) {
	case K_TS:
		if (us_to_ns(s, n, &e->ts, &is_float))
			e->has_ts = true;
		else
			bad_type(k, key);
		if (is_float)
			r->ts_float = true;
		break;
	case K_DUR:
		if (us_to_ns(s, n, &e->dur, &is_float))
			e->has_dur = true;
		else
			bad_type(k, key);
		break;
	case K_STREAM:
		if (!num_to_i64(s, n, &e->stream))
			e->stream = -1;
		break;
	case K_CORR:
		if (!num_to_i64(s, n, &e->corr))
			bad_type(k, key);
		break;
	case K_BW: {
		char buf[64];
		if (n < sizeof buf) {
			memcpy(buf, s, n);
			buf[n] = 0;
			e->bw = gw_strtod_c(buf, NULL);
			e->has_bw = true;
		}
		break;
	}
	case K_CAT: /* a number as category: present, not one we know */
		e->has_cat = true;
		e->cat = TRACE_CAT_OTHER;
		e->cat_trace = e->cat_instant = false;
		break;
	case K_WORLD: {
		int64_t v;
		if (num_to_i64(s, n, &v) && v > 0 && v < 1000000000)
			r->world_size = (int)v;
		break;
	}
	case K_NONE:
		if (k->top == TOP_BASETIME && k->depth == 1)
			k->base_time = true;
		stray_element(k);
		break;
	case K_NAME:
		bad_type(k, key);
		break;
	default:
		break;
	}
	return 1;
}

/* pandas.to_numeric on a string stream id: "7" and "7.0" are 7, "stream 7" is -1. */
static int64_t stream_from_string(const unsigned char *s, size_t n)
{
	char buf[64];
	if (n == 0 || n >= sizeof buf)
		return -1;
	memcpy(buf, s, n);
	buf[n] = 0;
	double d;
	if (!gw_parse_double(buf, &d) || d < -9.2e18 || d > 9.2e18)
		return -1;
	return (int64_t)d;
}

static int cb_string(void *ctx, const unsigned char *s, size_t n)
{
	kstate *k = ctx;
	k->rank_depth = -1;
	int key = take_key(k);
	kevent *e = &k->e;
	switch (key) {
	case K_PH:
		e->ph = n ? (char)s[0] : 0;
		break;
	case K_CAT:
		set_cat(k, s, n);
		break;
	case K_NAME:
		e->name = trace_names_intern(&k->r->names, (const char *)s, n);
		if (e->name == UINT32_MAX)
			return fail(k, "out of memory");
		e->has_name = true;
		break;
	case K_STREAM:
		e->stream = stream_from_string(s, n);
		break;
	case K_DEVNAME:
		snprintf(k->r->device_name, sizeof k->r->device_name, "%.*s", (int)n,
		         (const char *)s);
		break;
	case K_TS:
	case K_DUR:
	case K_CORR:
	case K_BW:
		bad_type(k, key);
		break;
	case K_NONE:
		stray_element(k);
		break;
	default:
		break;
	}
	return 1;
}

static int cb_map_key(void *ctx, const unsigned char *s, size_t n)
{
	kstate *k = ctx;
	int d = k->depth;
	k->rank_depth = is_key(s, n, "rank") ? d : -1;
	k->key_depth = d;
	k->key = K_NONE;
	if (d == 1) {
		k->top = TOP_NONE;
		if (is_key(s, n, "traceEvents")) {
			if (k->saw_events)
				return fail(k, "two traceEvents arrays in one file");
			k->top = TOP_EVENTS;
		} else if (is_key(s, n, "distributedInfo")) {
			k->top = TOP_DIST;
		} else if (is_key(s, n, "deviceProperties")) {
			k->top = TOP_DEVPROPS;
		} else if (is_key(s, n, "baseTimeNanoseconds")) {
			k->top = TOP_BASETIME;
		}
	} else if (d == 3 && k->in_event) {
		switch (n) {
		case 2:
			if (s[0] == 't' && s[1] == 's')
				k->key = K_TS;
			else if (s[0] == 'p' && s[1] == 'h')
				k->key = K_PH;
			break;
		case 3:
			if (!memcmp(s, "dur", 3))
				k->key = K_DUR;
			else if (!memcmp(s, "cat", 3))
				k->key = K_CAT;
			break;
		case 4:
			if (!memcmp(s, "name", 4))
				k->key = K_NAME;
			else if (!memcmp(s, "args", 4))
				k->key = K_ARGS;
			break;
		default:
			break;
		}
	} else if (d == 4 && k->in_args) {
		if (is_key(s, n, "stream"))
			k->key = K_STREAM;
		else if (is_key(s, n, "correlation"))
			k->key = K_CORR;
		else if (is_key(s, n, "memory bandwidth (GB/s)"))
			k->key = K_BW;
	} else if (d == 3 && k->top == TOP_DEVPROPS && k->devprops_elem == 1) {
		if (is_key(s, n, "name"))
			k->key = K_DEVNAME;
	} else if (d == 2 && k->top == TOP_DIST) {
		if (is_key(s, n, "world_size"))
			k->key = K_WORLD;
	}
	return 1;
}

static int cb_start_map(void *ctx)
{
	kstate *k = ctx;
	k->rank_depth = -1;
	int key = take_key(k);
	if (k->depth == 0) {
		k->top_is_map = true;
	} else if (k->depth == 1 && k->top == TOP_EVENTS) {
		return fail(k, "traceEvents is an object, not an array");
	} else if (k->depth == 2 && k->events_open) {
		event_begin(k);
		k->in_event = true;
	} else if (k->depth == 2 && k->top == TOP_DEVPROPS) {
		k->devprops_elem++;
	} else if (k->depth == 3 && k->in_event) {
		if (key == K_ARGS)
			k->in_args = true;
		else if (key != K_NONE)
			bad_type(k, key);
	} else if (k->depth == 4 && k->in_args && key != K_NONE) {
		bad_type(k, key);
	}
	k->depth++;
	return 1;
}

static int cb_end_map(void *ctx)
{
	kstate *k = ctx;
	k->rank_depth = -1;
	k->key_depth = -1;
	k->depth--;
	if (k->depth == 3 && k->in_args) {
		k->in_args = false;
	} else if (k->depth == 2 && k->in_event) {
		k->in_event = false;
		return event_end(k);
	}
	return 1;
}

static int cb_start_array(void *ctx)
{
	kstate *k = ctx;
	k->rank_depth = -1;
	int key = take_key(k);
	if (k->depth == 0)
		return fail(
		    k, "the top level is an array, not a Chrome trace object with traceEvents");
	if (k->depth == 1 && k->top == TOP_EVENTS) {
		k->saw_events = true;
		k->events_open = true;
	} else if (k->depth == 2 && k->events_open) {
		stray_element(k);
	} else if ((k->depth == 3 && k->in_event) || (k->depth == 4 && k->in_args)) {
		if (key != K_NONE && key != K_ARGS)
			bad_type(k, key);
		else if (key == K_ARGS)
			k->bad_value++;
	}
	k->depth++;
	return 1;
}

static int cb_end_array(void *ctx)
{
	kstate *k = ctx;
	k->rank_depth = -1;
	k->key_depth = -1;
	k->depth--;
	if (k->depth == 1 && k->events_open)
		k->events_open = false;
	return 1;
}

static const yajl_callbacks kineto_callbacks = {
    .yajl_null = cb_null,
    .yajl_boolean = cb_boolean,
    .yajl_number = cb_number,
    .yajl_string = cb_string,
    .yajl_start_map = cb_start_map,
    .yajl_map_key = cb_map_key,
    .yajl_end_map = cb_end_map,
    .yajl_start_array = cb_start_array,
    .yajl_end_array = cb_end_array,
};

static void kstate_init(kstate *k, trace_rank *r)
{
	memset(k, 0, sizeof *k);
	k->r = r;
	k->key_depth = -1;
	k->rank_depth = -1;
	r->source = TRACE_SRC_KINETO;
}

static void kstate_free(kstate *k)
{
	free(k->catsym);
}

static void yajl_reason(kstate *k, yajl_handle h, const unsigned char *chunk, size_t len,
                        uint64_t base, char *err, size_t errsz)
{
	if (k->err[0]) {
		snprintf(err, errsz, "%s", k->err);
		return;
	}
	unsigned char *msg = yajl_get_error(h, 0, chunk, len);
	uint64_t at = base + (chunk ? yajl_get_bytes_consumed(h) : 0);
	snprintf(err, errsz, "invalid JSON near byte %llu: %s", (unsigned long long)at,
	         msg ? (const char *)msg : "parse error");
	if (msg)
		yajl_free_error(h, msg);
}

/* Checks that make a parsed document a usable trace; sets the format description. */
static int finish(kstate *k, char *err, size_t errsz)
{
	trace_rank *r = k->r;
	if (!k->top_is_map) {
		snprintf(err, errsz, "not a Chrome trace: the top level is not a JSON object");
		return -1;
	}
	if (!k->saw_events) {
		snprintf(err, errsz, "not a Chrome trace: there is no traceEvents array");
		return -1;
	}
	if (k->ord == 0) {
		snprintf(err, errsz, "traceEvents is empty");
		return -1;
	}
	r->n_events = k->ord;
	if (k->bad_value)
		trace_rank_warn(r, "%llu values of the wrong JSON type were ignored",
		                (unsigned long long)k->bad_value);
	if (k->no_ts)
		trace_rank_warn(r, "%llu events without a ts were skipped",
		                (unsigned long long)k->no_ts);
	r->n_type_errors = k->bad_value;
	snprintf(r->format, sizeof r->format, "Kineto JSON%s%s",
	         k->old_cats ? ", 2021 categories" : "",
	         r->ts_float ? (k->base_time ? ", ns timestamps relative to baseTimeNanoseconds"
	                                     : ", ns timestamps")
	                     : ", us timestamps");
	return 0;
}

static yajl_handle open_parser(kstate *k)
{
	yajl_handle h = yajl_alloc(&kineto_callbacks, NULL, k);
	return h;
}

/*
 * The fast scanner over a whole buffer. When it gives up, what its callbacks did is undone (the
 * rank is emptied, keeping its path, and k starts again) so that yajl can read the buffer anew.
 */
static bool scan_or_reset(kstate *k, trace_rank *r, const void *buf, size_t len)
{
	if (trace_jscan(buf, len, &kineto_callbacks, k) && !k->err[0])
		return true;
	kstate_free(k);
	char *path = r->path;
	r->path = NULL;
	trace_rank_free(r);
	trace_rank_init(r, path);
	free(path);
	kstate_init(k, r);
	return false;
}

int trace_kineto_parse_mem(const void *buf, size_t len, trace_rank *r, char *err, size_t errsz)
{
	kstate k;
	kstate_init(&k, r);
	yajl_handle h = open_parser(&k);
	if (!h) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	int rc = 0;
	yajl_status st = yajl_status_ok;
	if (!scan_or_reset(&k, r, buf, len)) {
		st = yajl_parse(h, buf, len);
		if (st == yajl_status_ok)
			st = yajl_complete_parse(h);
	}
	if (st != yajl_status_ok) {
		yajl_reason(&k, h, buf, len, 0, err, errsz);
		rc = -1;
	}
	r->bytes = len;
	if (!rc)
		rc = finish(&k, err, errsz);
	yajl_free(h);
	kstate_free(&k);
	return rc;
}

/* Reads a gzip or plain error into err after gzread returned n <= 0; 1 when it was a clean end
 * of file. */
static int read_status(gzFile g, int n, char *err, size_t errsz)
{
	int zerr;
	const char *m = gzerror(g, &zerr);
	if (n < 0) {
		snprintf(err, errsz, "%s: %s", zerr == Z_ERRNO ? "read error" : "corrupt gzip data",
		         zerr == Z_ERRNO ? strerror(errno) : m);
		return -1;
	}
	if (zerr == Z_BUF_ERROR) {
		snprintf(err, errsz,
		         "truncated gzip file (it ends in the middle of the compressed stream)");
		return -1;
	}
	return 1;
}

static void add_progress(gzFile g, _Atomic uint64_t *progress, uint64_t *reported)
{
	if (!progress)
		return;
	uint64_t off = (uint64_t)gzoffset(g);
	if (off > *reported) {
		atomic_fetch_add(progress, off - *reported);
		*reported = off;
	}
}

static int truncated(kstate *k, yajl_handle h, uint64_t total, char *err, size_t errsz)
{
	yajl_reason(k, h, NULL, 0, total, err, errsz);
	if (!k->err[0])
		snprintf(err, errsz,
		         "truncated JSON: the document ends after %llu bytes before it is complete",
		         (unsigned long long)total);
	return -1;
}

/* The decompressed text in chunks; with a second thread allowed, a reader inflates ahead
 * while the parser works (gzip costs about as much as parsing). */
enum { CHUNK = 256 * 1024, NSLOT = 4 };

typedef struct {
	gzFile g;
	_Atomic uint64_t *progress;
	uint64_t reported;
	bool ahead;
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned char *slot[NSLOT];
	int len[NSLOT]; /* bytes; 0 at the end, -1 on an error */
	bool full[NSLOT];
	bool stop;
	int status; /* read_status() at the end */
	char err[200];
	size_t next; /* the slot the parser takes next */
} source;

/* One chunk into slot s; the end or an error is recorded. */
static int source_fill(source *src, int s)
{
	int n = gzread(src->g, src->slot[s], CHUNK);
	add_progress(src->g, src->progress, &src->reported);
	if (n <= 0)
		src->status = read_status(src->g, n, src->err, sizeof src->err);
	return n;
}

static void *source_reader(void *arg)
{
	source *src = arg;
	for (size_t i = 0;; i++) {
		int s = (int)(i % NSLOT);
		pthread_mutex_lock(&src->lock);
		while (src->full[s] && !src->stop)
			pthread_cond_wait(&src->cond, &src->lock);
		bool stop = src->stop;
		pthread_mutex_unlock(&src->lock);
		if (stop)
			break;
		int n = source_fill(src, s);
		pthread_mutex_lock(&src->lock);
		src->len[s] = n;
		src->full[s] = true;
		pthread_cond_broadcast(&src->cond);
		pthread_mutex_unlock(&src->lock);
		if (n <= 0)
			break;
	}
	return NULL;
}

/* The next chunk: its bytes in *buf, the count returned (0 at the end, -1 on an error). */
static int source_next(source *src, unsigned char **buf)
{
	if (!src->ahead) {
		*buf = src->slot[0];
		return source_fill(src, 0);
	}
	int s = (int)(src->next++ % NSLOT);
	pthread_mutex_lock(&src->lock);
	if (src->next > 1) { /* the slot before this one is parsed: hand it back */
		int prev = (s + NSLOT - 1) % NSLOT;
		src->full[prev] = false;
		pthread_cond_broadcast(&src->cond);
	}
	while (!src->full[s])
		pthread_cond_wait(&src->cond, &src->lock);
	int n = src->len[s];
	pthread_mutex_unlock(&src->lock);
	*buf = src->slot[s];
	return n;
}

static int source_open(source *src, const char *path, _Atomic uint64_t *progress, bool ahead,
                       char *err, size_t errsz)
{
	memset(src, 0, sizeof *src);
	src->g = gzopen(path, "rb");
	if (!src->g) {
		snprintf(err, errsz, "cannot open: %s", strerror(errno ? errno : ENOMEM));
		return -1;
	}
	gzbuffer(src->g, CHUNK);
	src->progress = progress;
	/* Reading ahead pays for compressed input only. */
	ahead = ahead && gzdirect(src->g) == 0;
	for (int s = 0; s < (ahead ? NSLOT : 1); s++)
		if (!(src->slot[s] = malloc(CHUNK))) {
			snprintf(err, errsz, "out of memory");
			return -1;
		}
	if (ahead) {
		pthread_mutex_init(&src->lock, NULL);
		pthread_cond_init(&src->cond, NULL);
		src->ahead = pthread_create(&src->th, NULL, source_reader, src) == 0;
		if (!src->ahead) {
			pthread_cond_destroy(&src->cond);
			pthread_mutex_destroy(&src->lock);
		}
	}
	return 0;
}

static void source_close(source *src)
{
	if (src->ahead) {
		pthread_mutex_lock(&src->lock);
		src->stop = true;
		pthread_cond_broadcast(&src->cond);
		pthread_mutex_unlock(&src->lock);
		pthread_join(src->th, NULL);
		pthread_cond_destroy(&src->cond);
		pthread_mutex_destroy(&src->lock);
	}
	for (int s = 0; s < NSLOT; s++)
		free(src->slot[s]);
	if (src->g)
		gzclose(src->g);
}

static int read_sequential(const char *path, trace_rank *r, _Atomic uint64_t *progress, bool ahead,
                           char *err, size_t errsz)
{
	source src;
	if (source_open(&src, path, progress, ahead, err, errsz) < 0) {
		source_close(&src);
		return -1;
	}
	kstate k;
	kstate_init(&k, r);
	yajl_handle h = open_parser(&k);
	if (!h) {
		source_close(&src);
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	int rc = 0;
	uint64_t total = 0;
	for (;;) {
		unsigned char *buf;
		int n = source_next(&src, &buf);
		if (n <= 0) {
			rc = src.status;
			if (rc < 0)
				snprintf(err, errsz, "%s", src.err);
			else
				rc = yajl_complete_parse(h) == yajl_status_ok
				         ? 0
				         : truncated(&k, h, total, err, errsz);
			break;
		}
		if (yajl_parse(h, buf, (size_t)n) != yajl_status_ok) {
			yajl_reason(&k, h, buf, (size_t)n, total, err, errsz);
			rc = -1;
			break;
		}
		total += (uint64_t)n;
	}
	r->bytes = total;
	if (!rc)
		rc = finish(&k, err, errsz);
	yajl_free(h);
	kstate_free(&k);
	source_close(&src);
	return rc;
}

/* ------------------------------------------------------------------------------------------
 * Large traces on several cores. The decompressed text is cut into pieces of about BLOCK bytes
 * at guessed element boundaries ("}" "," "{" with optional whitespace). The first piece goes to
 * the document parser, the middle ones to worker threads as stand-alone arrays of elements, and
 * the rest of the document back to the document parser, which carries on as if it had read the
 * middle. A guess can only be wrong inside a string or a nested object, and then a piece does
 * not parse on its own or the document parser is not between elements: the file is read again
 * in one piece. Pieces in flight are bounded, so memory stays bounded too.
 */

enum { BLOCK = 4 << 20, WINDOW = 1 << 20, READ = 256 << 10, RETRY = 2 };

/* Documents from this size on are parsed in pieces (tests lower it). */
static _Atomic uint64_t parallel_min = (uint64_t)64 << 20;

void trace_kineto_set_parallel_min(uint64_t bytes)
{
	atomic_store(&parallel_min, bytes);
}

typedef struct {
	unsigned char *buf;
	size_t len;
	kstate k;
	trace_rank r;
	bool ok;
} piece;

typedef struct {
	pthread_mutex_t lock;
	pthread_cond_t work, space;
	piece **all; /* every middle piece, in order */
	size_t n_all, cap_all;
	size_t next; /* next piece to hand out */
	size_t in_flight, max_in_flight;
	bool closed;
	bool inline_parse; /* no workers: the reading thread parses each piece itself */
} pool;

static bool is_ws(unsigned char c)
{
	return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* The '{' of an element start guessed from the end of b backwards, or 0. */
static size_t find_cut(const unsigned char *b, size_t len)
{
	size_t lo = len > WINDOW ? len - WINDOW : 0;
	for (size_t i = len; i-- > lo + 2;) {
		if (b[i] != '{')
			continue;
		size_t j = i;
		while (j > lo && is_ws(b[j - 1]))
			j--;
		if (j == lo || b[j - 1] != ',')
			continue;
		j--;
		while (j > lo && is_ws(b[j - 1]))
			j--;
		if (j > lo && b[j - 1] == '}')
			return i;
	}
	return 0;
}

/* A piece's reader state: inside the traceEvents array. */
static void piece_start(piece *p)
{
	trace_rank_init(&p->r, "");
	kstate_init(&p->k, &p->r);
	p->k.fragment = true;
	p->k.depth = 1;
	p->k.top = TOP_EVENTS;
	p->k.top_is_map = true;
}

/* A middle piece: its elements, without the trailing comma, as an array of their own. */
static void parse_piece(piece *p)
{
	size_t end = p->len;
	while (end > 0 && is_ws(p->buf[end - 1]))
		end--;
	if (end == 0 || p->buf[end - 1] != ',')
		return;
	end--;
	piece_start(p);
	/* The fast scanner first: the elements, as if inside the array yajl is given below. */
	cb_start_array(&p->k);
	static const trace_jscan_mode elements = {.open = "[", .end_depth = 1};
	if (trace_jscan_part(p->buf, end, &kineto_callbacks, &p->k, &elements) &&
	    cb_end_array(&p->k) && !p->k.err[0] && p->k.depth == 1) {
		p->ok = true;
		return;
	}
	kstate_free(&p->k);
	trace_rank_free(&p->r);
	piece_start(p);
	yajl_handle h = open_parser(&p->k);
	if (!h)
		return;
	p->ok = yajl_parse(h, (const unsigned char *)"[", 1) == yajl_status_ok &&
	        yajl_parse(h, p->buf, end) == yajl_status_ok &&
	        yajl_parse(h, (const unsigned char *)"]", 1) == yajl_status_ok &&
	        yajl_complete_parse(h) == yajl_status_ok && !p->k.err[0] && p->k.depth == 1;
	yajl_free(h);
}

static void *piece_worker(void *arg)
{
	pool *pl = arg;
	pthread_mutex_lock(&pl->lock);
	for (;;) {
		while (pl->next == pl->n_all && !pl->closed)
			pthread_cond_wait(&pl->work, &pl->lock);
		if (pl->next == pl->n_all)
			break;
		piece *p = pl->all[pl->next++];
		pthread_mutex_unlock(&pl->lock);
		parse_piece(p);
		free(p->buf);
		p->buf = NULL;
		pthread_mutex_lock(&pl->lock);
		pl->in_flight--;
		pthread_cond_signal(&pl->space);
	}
	pthread_mutex_unlock(&pl->lock);
	return NULL;
}

static bool pool_add(pool *pl, unsigned char *buf, size_t len)
{
	piece *p = calloc(1, sizeof *p);
	if (!p)
		return false;
	p->buf = buf;
	p->len = len;
	if (pl->inline_parse) {
		parse_piece(p);
		free(p->buf);
		p->buf = NULL;
	}
	pthread_mutex_lock(&pl->lock);
	while (!pl->inline_parse && pl->in_flight >= pl->max_in_flight)
		pthread_cond_wait(&pl->space, &pl->lock);
	bool ok = true;
	if (pl->n_all == pl->cap_all) {
		size_t cap = pl->cap_all ? pl->cap_all * 2 : 64;
		piece **a = realloc(pl->all, cap * sizeof *a);
		if (a) {
			pl->all = a;
			pl->cap_all = cap;
		} else {
			ok = false;
		}
	}
	if (ok) {
		pl->all[pl->n_all++] = p;
		if (pl->inline_parse) {
			pl->next = pl->n_all;
		} else {
			pl->in_flight++;
			pthread_cond_signal(&pl->work);
		}
	}
	pthread_mutex_unlock(&pl->lock);
	if (!ok)
		free(p);
	return ok;
}

/* Moves the events of from (a piece or the tail) into r, renumbering names and rows. */
static bool merge_rank(trace_rank *r, trace_rank *from, uint64_t ord_add)
{
	uint32_t *remap = malloc(((size_t)from->names.count + 1) * sizeof *remap);
	if (!remap)
		return false;
	for (uint32_t i = 0; i < from->names.count; i++) {
		remap[i] = trace_names_intern(&r->names, trace_name_str(&from->names, i),
		                              from->names.names[i].len);
		if (remap[i] == UINT32_MAX) {
			free(remap);
			return false;
		}
	}
	for (size_t i = 0; i < from->n; i++) {
		trace_event e = from->ev[i];
		e.name = remap[e.name];
		e.ord = (uint32_t)(e.ord + ord_add);
		if (!trace_rank_push(r, &e)) {
			free(remap);
			return false;
		}
	}
	free(remap);
	r->ts_float |= from->ts_float;
	r->n_rows += from->n_rows;
	if (from->have_span) {
		if (!r->have_span || from->first_ts < r->first_ts)
			r->first_ts = from->first_ts;
		if (!r->have_span || from->last_end > r->last_end)
			r->last_end = from->last_end;
		r->have_span = true;
	}
	for (int i = 0; i < from->n_profstep_syms; i++)
		trace_rank_note_profstep(r, from->profstep_syms[i], strlen(from->profstep_syms[i]));
	if (!r->rank_found && from->rank_found) {
		r->rank = from->rank;
		r->rank_found = true;
	}
	if (!r->device_name[0])
		memcpy(r->device_name, from->device_name, sizeof r->device_name);
	if (!r->world_size)
		r->world_size = from->world_size;
	return true;
}

static void merge_counts(kstate *k, const kstate *from)
{
	k->ord += from->ord;
	k->no_ts += from->no_ts;
	k->bad_value += from->bad_value;
	k->old_cats |= from->old_cats;
	k->base_time |= from->base_time;
}

static int read_parallel(const char *path, trace_rank *r, _Atomic uint64_t *progress, int threads,
                         char *err, size_t errsz)
{
	gw_strtod_c("0", NULL); /* its C locale is made once, before the threads share it */
	gzFile g = gzopen(path, "rb");
	if (!g) {
		snprintf(err, errsz, "cannot open: %s", strerror(errno ? errno : ENOMEM));
		return -1;
	}
	gzbuffer(g, READ);
	pool pl = {.max_in_flight = (size_t)threads + 1, .inline_parse = threads <= 1};
	pthread_mutex_init(&pl.lock, NULL);
	pthread_cond_init(&pl.work, NULL);
	pthread_cond_init(&pl.space, NULL);
	pthread_t th[64];
	int nth = 0;
	for (; !pl.inline_parse && nth < threads && nth < 64; nth++)
		if (pthread_create(&th[nth], NULL, piece_worker, &pl))
			break;
	kstate k0;
	kstate_init(&k0, r);
	trace_rank tail;
	trace_rank_init(&tail, path);
	size_t cap = BLOCK + 2 * READ, len = 0;
	unsigned char *cur = malloc(cap);
	int rc = (cur && (nth > 0 || pl.inline_parse)) ? 0 : -1;
	if (rc)
		snprintf(err, errsz, "out of memory or threads");
	uint64_t total = 0, reported = 0, ord0 = 0;
	bool first = true;
	while (!rc) {
		if (cap - len < READ) {
			unsigned char *b = realloc(cur, cap * 2);
			if (!b) {
				rc = -1;
				snprintf(err, errsz, "out of memory");
				break;
			}
			cur = b;
			cap *= 2;
		}
		int n = gzread(g, cur + len, READ);
		add_progress(g, progress, &reported);
		if (n <= 0) {
			if (read_status(g, n, err, errsz) < 0)
				rc = -1;
			break;
		}
		len += (size_t)n;
		total += (uint64_t)n;
		if (len < BLOCK)
			continue;
		size_t cut = find_cut(cur, len);
		if (!cut)
			continue;
		unsigned char *rest = malloc(cap);
		if (!rest) {
			rc = -1;
			snprintf(err, errsz, "out of memory");
			break;
		}
		memcpy(rest, cur + cut, len - cut);
		if (first) {
			/* The document parser takes the first piece, comma included. The fast
			 * scanner reads it; where it gives up, yajl reads the whole file again in
			 * one piece. */
			static const trace_jscan_mode head = {
			    .open = "", .end_depth = 2, .end_after_comma = true};
			if (!trace_jscan_part(cur, cut, &kineto_callbacks, &k0, &head) ||
			    k0.err[0] || k0.depth != 2 || !k0.events_open || k0.in_event) {
				rc = RETRY;
			}
			free(cur);
			ord0 = k0.ord;
			first = false;
		} else if (!pool_add(&pl, cur, cut)) {
			free(cur);
			rc = -1;
			snprintf(err, errsz, "out of memory");
		}
		cur = rest;
		len -= cut;
	}
	pthread_mutex_lock(&pl.lock);
	pl.closed = true;
	pthread_cond_broadcast(&pl.work);
	pthread_mutex_unlock(&pl.lock);
	for (int i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	for (size_t i = 0; !rc && i < pl.n_all; i++)
		if (!pl.all[i]->ok)
			rc = RETRY;
	if (!rc) {
		/* The rest of the document, to the document parser (into tail when pieces went
		 * elsewhere, so that the events stay in order). */
		if (!first)
			k0.r = &tail;
		static const trace_jscan_mode tail_mode = {.open = "{[", .end_depth = 0};
		bool fast = first ? trace_jscan(cur, len, &kineto_callbacks, &k0)
		                  : trace_jscan_part(cur, len, &kineto_callbacks, &k0, &tail_mode);
		if (!fast || k0.err[0])
			rc = RETRY;
		k0.r = r;
	}
	uint64_t middle = 0;
	for (size_t i = 0; !rc && i < pl.n_all; i++) {
		piece *p = pl.all[i];
		if (!merge_rank(r, &p->r, ord0 + middle)) {
			rc = -1;
			snprintf(err, errsz, "out of memory");
		}
		middle += p->k.ord;
		merge_counts(&k0, &p->k);
		trace_rank_free(&p->r); /* merged: no need to hold it twice */
	}
	if (!rc && !merge_rank(r, &tail, middle)) {
		rc = -1;
		snprintf(err, errsz, "out of memory");
	}
	r->bytes = total;
	if (!rc)
		rc = finish(&k0, err, errsz);
	for (size_t i = 0; i < pl.n_all; i++) {
		if (pl.all[i]->k.r)
			kstate_free(&pl.all[i]->k);
		trace_rank_free(&pl.all[i]->r);
		free(pl.all[i]->buf);
		free(pl.all[i]);
	}
	free(pl.all);
	pthread_cond_destroy(&pl.work);
	pthread_cond_destroy(&pl.space);
	pthread_mutex_destroy(&pl.lock);
	trace_rank_free(&tail);
	kstate_free(&k0);
	free(cur);
	gzclose(g);
	return rc;
}

static atomic_ulong restarts;

unsigned long trace_kineto_restarts(void)
{
	return atomic_load(&restarts);
}

/* The uncompressed size, near enough to choose how to read: the file size, or for gzip the
 * size its trailer records (modulo 4 GiB, so never less than the compressed size). */
static uint64_t text_size(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	unsigned char head[2] = {0}, tail[4] = {0};
	uint64_t size = 0;
	if (fread(head, 1, 2, f) == 2 && fseek(f, 0, SEEK_END) == 0) {
		long end = ftell(f);
		size = end > 0 ? (uint64_t)end : 0;
		if (head[0] == 0x1f && head[1] == 0x8b && end >= 4 && fseek(f, -4, SEEK_END) == 0 &&
		    fread(tail, 1, 4, f) == 4) {
			uint64_t isize = (uint64_t)tail[0] | (uint64_t)tail[1] << 8 |
			                 (uint64_t)tail[2] << 16 | (uint64_t)tail[3] << 24;
			size = isize > size ? isize : size;
		}
	}
	fclose(f);
	return size;
}

int trace_kineto_read(const char *path, trace_rank *r, _Atomic uint64_t *progress, int threads,
                      char *err, size_t errsz)
{
	/* Pieces go to other threads for large documents only (each thread holds one); smaller
	 * ones, or all with one thread, are read piece by piece by this thread. */
	bool spread = threads > 1 && text_size(path) >= atomic_load(&parallel_min);
	int rc = read_parallel(path, r, progress, spread ? threads : 1, err, errsz);
	/* Spread over threads, a failure is the file's own; read by this thread alone, any
	 * failure is reported as the one-piece reader (yajl) words it. */
	if (rc == 0 || (spread && rc != RETRY))
		return rc;
	/* A guessed cut fell inside a string or a nested object, the fast scanner gave up, or
	 * the file is broken: read it again in one piece. */
	atomic_fetch_add(&restarts, 1);
	gw_debug("%s: reading again in one piece", path);
	/* path may be r->path itself: it is copied before the rank is emptied. */
	char *p = strdup(path);
	if (!p) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	trace_rank_free(r);
	trace_rank_init(r, p);
	err[0] = 0;
	rc = read_sequential(p, r, progress, threads > 1, err, errsz);
	free(p);
	return rc;
}
