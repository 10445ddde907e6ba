/* trace_kineto.c - Kineto Chrome-trace JSON (.json / .json.gz) through yajl's SAX callbacks.
 *
 * Only what HTA's analyses use is kept: events with a duration and a category (HTA drops the
 * rest) that carry a stream, a correlation id, a ProfilerStep name, or are row 0. Numbers arrive
 * as text (yajl's number callback) and are converted here, locale-independently: microseconds
 * with up to three decimals become exact integer nanoseconds. */
#include "trace/trace_kineto.h"
#include "trace/trace_jscan.h"
#include "trace/trace_jscan_lex.h"
#include "trace/trace_kineto_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>

#include "util/err.h"
#include "util/parse.h"
#include "util/i18n.h"

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

static bool is_digit(char c)
{
	return (unsigned char)(c - '0') < 10;
}

/* Whether the eight bytes at s are all digits, and their value. */
static bool eight_digits(const char *s, uint32_t *out)
{
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	(void)s;
	(void)out;
	return false;
#else
	uint64_t v;
	memcpy(&v, s, 8);
	if ((v & 0xf0f0f0f0f0f0f0f0ull) != 0x3030303030303030ull ||
	    ((v + 0x0606060606060606ull) & 0xf0f0f0f0f0f0f0f0ull) != 0x3030303030303030ull)
		return false;
	*out = (uint32_t)tj_swar8(v - 0x3030303030303030ull);
	return true;
#endif
}

/*
 * A JSON number in microseconds -> exact nanoseconds. *is_float: the literal has a fraction or
 * an exponent (Python makes it a float). Up to three decimals are exact; more are rounded and
 * exponents go through strtod.
 */
bool trace_kineto_us_to_ns(const char *s, size_t n, int64_t *out, bool *is_float)
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
	/* Fifteen digits stay below the bound checked from the sixteenth on; eight at a time
	 * while the number has that many bytes left. */
	size_t lim = n - i > 15 ? i + 15 : n;
	uint32_t v8;
	while (lim - i >= 8 && eight_digits(s + i, &v8)) {
		ip = ip * 100000000 + v8;
		i += 8;
	}
	for (; i < lim && is_digit(s[i]); i++)
		ip = ip * 10 + (uint64_t)(s[i] - '0');
	for (; i < n && is_digit(s[i]); i++) {
		if (ip > (uint64_t)INT64_MAX / 10000)
			return false;
		ip = ip * 10 + (uint64_t)(s[i] - '0');
	}
	if (i < n && s[i] == '.') {
		*is_float = true;
		size_t f0 = ++i;
		while (i < n && is_digit(s[i]))
			i++;
		fd = i - f0 > 3 ? 3 : (int)(i - f0);
		for (int d = 0; d < fd; d++)
			frac = frac * 10 + (uint64_t)(s[f0 + d] - '0');
		if (i - f0 > 3) {
			round_up = s[f0 + 3] >= '5';
			fd = 4;
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
bool trace_kineto_num_to_i64(const char *s, size_t n, int64_t *out)
{
	/* Up to 18 digits, the common case, cannot overflow: read here without strtoll's copy. */
	size_t neg = n && s[0] == '-';
	if (n > neg && n - neg <= 18) {
		int64_t v = 0;
		size_t i = neg;
		while (i < n && is_digit(s[i]))
			v = v * 10 + (s[i++] - '0');
		if (i == n) {
			*out = neg ? -v : v;
			return true;
		}
	}
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

void trace_kineto_event_begin(kstate *k)
{
	memset(&k->e, 0, sizeof k->e);
	k->e.stream = -1;
	k->e.corr = -1;
	k->e.bw = -1;
	k->catsym_len = 0;
	k->ord++;
}

int trace_kineto_event_end(kstate *k)
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
	/* k->ord has counted this element; fragments count from 0 locally */
	bool row0 = k->ord == 1 && !k->fragment;
	if (e->stream == -1 && e->corr == -1 && !sync_gpu && !profstep && !row0)
		return 1;
	trace_event ev = {
	    .ts = e->ts,
	    .dur = e->dur,
	    .corr = e->corr,
	    .stream = e->stream,
	    .name = e->name,
	    .cat = e->cat,
	    .flags = (uint8_t)((profstep ? TRACE_EV_PROFSTEP : 0) | (row0 ? TRACE_EV_ROW0 : 0) |
	                       (e->has_bw ? TRACE_EV_HAS_BW : 0)),
	};
	if (!(e->has_bw ? trace_rank_push_bw(r, &ev, e->bw) : trace_rank_push(r, &ev)))
		return fail(k, "out of memory");
	return 1;
}

/* A category HTA's analyses tell apart, or the flags it sets: by length first, as categories
 * are compared once per event. */
static void cat_kind(kevent *e, const unsigned char *s, size_t n)
{
#define IS(lit) (!memcmp(s, lit, sizeof lit - 1))
	switch (n) {
	case 5:
		e->cat_trace = IS("Trace");
		break;
	case 6:
		e->cat = IS("kernel") || IS("Kernel") ? TRACE_CAT_KERNEL
		         : IS("Memcpy")               ? TRACE_CAT_MEMCPY
		         : IS("Memset")               ? TRACE_CAT_MEMSET
		                                      : TRACE_CAT_OTHER;
		break;
	case 7:
		e->cat = IS("Runtime") ? TRACE_CAT_RUNTIME : TRACE_CAT_OTHER;
		break;
	case 9:
		e->cat = IS("cuda_sync") ? TRACE_CAT_SYNC : TRACE_CAT_OTHER;
		break;
	case 10:
		e->cat = IS("gpu_memcpy")   ? TRACE_CAT_MEMCPY
		         : IS("gpu_memset") ? TRACE_CAT_MEMSET
		                            : TRACE_CAT_OTHER;
		break;
	case 11:
		e->cat = IS("cuda_driver") ? TRACE_CAT_DRIVER : TRACE_CAT_OTHER;
		break;
	case 12:
		e->cat = IS("cuda_runtime") ? TRACE_CAT_RUNTIME : TRACE_CAT_OTHER;
		break;
	case 15:
		e->cat = IS("mtia_ccp_events") ? TRACE_CAT_MTIA_CCP : TRACE_CAT_OTHER;
		break;
	case 17:
		e->cat_instant = IS("cpu_instant_event");
		break;
	default:
		break;
	}
#undef IS
}

void trace_kineto_set_cat(kstate *k, const unsigned char *s, size_t n)
{
	kevent *e = &k->e;
	e->has_cat = true;
	e->cat = TRACE_CAT_OTHER;
	e->cat_trace = e->cat_instant = e->cat_profstep = false;
	cat_kind(e, s, n);
	/* The 2021 names: Kernel, Memcpy, Memset (and any six-letter K... or M...), Runtime,
	 * Operator. */
	if (n == 6 && (s[0] == 'K' || s[0] == 'M'))
		k->old_cats = true;
	else if ((n == 7 && !memcmp(s, "Runtime", 7)) || (n == 8 && !memcmp(s, "Operator", 8)))
		k->old_cats = true;
	if (n >= 12 && e->cat == TRACE_CAT_OTHER && memmem(s, n, "ProfilerStep", 12)) {
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
		if (trace_kineto_us_to_ns(s, n, &e->ts, &is_float))
			e->has_ts = true;
		else
			bad_type(k, key);
		if (is_float)
			r->ts_float = true;
		break;
	case K_DUR:
		if (trace_kineto_us_to_ns(s, n, &e->dur, &is_float))
			e->has_dur = true;
		else
			bad_type(k, key);
		break;
	case K_STREAM:
		if (!trace_kineto_num_to_i64(s, n, &e->stream))
			e->stream = -1;
		break;
	case K_CORR:
		if (!trace_kineto_num_to_i64(s, n, &e->corr))
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
		if (trace_kineto_num_to_i64(s, n, &v) && v > 0 && v < 1000000000)
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
		trace_kineto_set_cat(k, s, n);
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
	/*
	 * Whether the value can pass unread. Below the top two levels, a key with no K_ role (pid,
	 * tid, most of args, and everything nested under them) leads to a value whose calls would
	 * change nothing here: no stray element (those are at depth 2), no type error (only known
	 * keys have types), no trace section (those start at depth 1). Only "rank" counts at any
	 * depth, so the scanner does not pass over a value that holds one. yajl reads the value
	 * anyway, which changes nothing, as said.
	 */
	if (d >= 3 && k->key == K_NONE && k->rank_depth == -1)
		return TRACE_JSCAN_PASS;
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
		trace_kineto_event_begin(k);
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
		return trace_kineto_event_end(k);
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

const yajl_callbacks trace_kineto_callbacks = {
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

const trace_jscan_skip trace_kineto_skip = {
    .watch = "rank", .watch_len = 4, .element = trace_kineto_event};
const trace_jscan_skip trace_kineto_skip_sax = {.watch = "rank", .watch_len = 4};

void trace_kstate_init(kstate *k, trace_rank *r)
{
	memset(k, 0, sizeof *k);
	k->r = r;
	k->key_depth = -1;
	k->rank_depth = -1;
	r->source = TRACE_SRC_KINETO;
}

void trace_kstate_free(kstate *k)
{
	free(k->catsym);
}

int trace_kineto_fail(gw_fail *err, const char *what, const char *fmt, ...)
{
	if (!err) /* the caller wants the code alone */
		return -1;
	char why[sizeof err->why];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	gw_fail_set(err, GW_EXIT_ENV, what, NULL, "%s", why);
	return -1;
}

/* The file k reads, for what. */
static const char *k_path(const kstate *k)
{
	return k->r ? k->r->path : NULL;
}

void trace_kineto_reason(kstate *k, yajl_handle h, const unsigned char *chunk, size_t len,
                         uint64_t base, gw_fail *err)
{
	if (k->err[0]) {
		trace_kineto_fail(err, k_path(k), "%s", k->err);
		return;
	}
	unsigned char *msg = yajl_get_error(h, 0, chunk, len);
	uint64_t at = base + (chunk ? yajl_get_bytes_consumed(h) : 0);
	/* yajl ends its message with a newline: the reason is one line. */
	size_t n = msg ? strlen((const char *)msg) : 0;
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r' || msg[n - 1] == ' '))
		msg[--n] = 0;
	trace_kineto_fail(err, k_path(k), "invalid JSON near byte %llu: %s", (unsigned long long)at,
	                  msg ? (const char *)msg : "parse error");
	if (msg)
		yajl_free_error(h, msg);
}

/* Checks that make a parsed document a usable trace; sets the format description. */
int trace_kineto_finish(kstate *k, gw_fail *err)
{
	trace_rank *r = k->r;
	if (!k->top_is_map)
		return trace_kineto_fail(err, r->path,
		                         "not a Chrome trace: the top level is not a JSON object");
	if (!k->saw_events)
		return trace_kineto_fail(err, r->path,
		                         "not a Chrome trace: there is no traceEvents array");
	if (k->ord == 0)
		return trace_kineto_fail(err, r->path, "traceEvents is empty");
	r->n_events = k->ord;
	if (k->bad_value)
		trace_rank_warn(r, "%llu values of the wrong JSON type were ignored",
		                (unsigned long long)k->bad_value);
	if (k->no_ts)
		trace_rank_warn(r, "%llu events without a ts were skipped",
		                (unsigned long long)k->no_ts);
	r->n_type_errors = k->bad_value;
	static const char *const ts_kind[] = {
	    N_(", us timestamps"), N_(", ns timestamps"),
	    N_(", ns timestamps relative to baseTimeNanoseconds")};
	const char *cats = k->old_cats ? N_(", 2021 categories") : "";
	int ts = r->ts_float ? (k->base_time ? 2 : 1) : 0;
	snprintf(r->format, sizeof r->format, "Kineto JSON%s%s", cats, ts_kind[ts]);
	snprintf(r->format_text, sizeof r->format_text, "Kineto JSON%s%s", cats[0] ? _(cats) : "",
	         _(ts_kind[ts]));
	return 0;
}

yajl_handle trace_kineto_parser(kstate *k)
{
	yajl_handle h = yajl_alloc(&trace_kineto_callbacks, NULL, k);
	return h;
}

/*
 * The fast scanner over a whole buffer. When it gives up, what its callbacks did is undone (the
 * rank is emptied, keeping its path, and k starts again) so that yajl can read the buffer anew.
 */
static bool scan_or_reset(kstate *k, trace_rank *r, const void *buf, size_t len)
{
	if (trace_jscan_skipping(buf, len, &trace_kineto_callbacks, k, NULL, &trace_kineto_skip) &&
	    !k->err[0])
		return true;
	trace_kstate_free(k);
	char *path = r->path;
	r->path = NULL;
	trace_rank_free(r);
	trace_rank_init(r, path);
	free(path);
	trace_kstate_init(k, r);
	return false;
}

int trace_kineto_parse_mem(const void *buf, size_t len, trace_rank *r, gw_fail *err)
{
	kstate k;
	trace_kstate_init(&k, r);
	yajl_handle h = trace_kineto_parser(&k);
	if (!h)
		return trace_kineto_fail(err, r->path, "out of memory");
	int rc = 0;
	yajl_status st = yajl_status_ok;
	if (!scan_or_reset(&k, r, buf, len)) {
		st = yajl_parse(h, buf, len);
		if (st == yajl_status_ok)
			st = yajl_complete_parse(h);
	}
	if (st != yajl_status_ok) {
		trace_kineto_reason(&k, h, buf, len, 0, err);
		rc = -1;
	}
	r->bytes = len;
	if (!rc)
		rc = trace_kineto_finish(&k, err);
	yajl_free(h);
	trace_kstate_free(&k);
	return rc;
}
