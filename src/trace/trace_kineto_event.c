/* trace_kineto_event.c - one element of traceEvents read whole, in one pass.
 *
 * Through the SAX callbacks an event costs about forty calls through pointers, each of which
 * looks up the pending key again. Nearly every event is the same dozen keys with values of the
 * expected types, so this reader takes the event at once: it checks the text by the scanner's
 * own grammar (trace_jscan_lex.h), keeps what the callbacks would keep, and ends the event with
 * the callbacks' own step. Whatever it is unsure of (a known key twice or with a value of
 * another type, an escape or non-ASCII text in a known key or value, a "rank" key anywhere, an
 * empty object) makes it decline before it has changed anything; the scanner then reads the
 * event through the callbacks, which decide. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace_jscan_lex.h"
#include "trace/trace_kineto_int.h"
#include "util/parse.h"

/* The keys this reader tells apart; everything else is passed over. */
enum {
	EK_OTHER = 0,
	EK_PH,
	EK_CAT,
	EK_NAME,
	EK_TS,
	EK_DUR,
	EK_ARGS,
	EK_STREAM,
	EK_CORR,
	EK_BW,
	EK_RANK,
};

/* The event as read, before it is handed over. */
typedef struct {
	const unsigned char *cat, *name;
	size_t cat_n, name_n;
	char ph;
	bool ts_float, has_ts, has_dur, has_bw;
	int64_t ts, dur, stream, corr;
	double bw;
	unsigned seen; /* 1 << EK_* of the keys met */
} ev;

/* A string without escapes or non-ASCII bytes after its opening quote: its text, and *pp past
 * the closing quote. False: another kind of string, or the text ends. */
static inline bool plain_string(const unsigned char **pp, const unsigned char *end,
                                const unsigned char **s, size_t *n)
{
	const unsigned char *p = *pp, *q = tj_str_run(p, end);
	if (q == end || *q != '"')
		return false;
	*s = p;
	*n = (size_t)(q - p);
	*pp = q + 1;
	return true;
}

/* After a key's closing quote: past the colon and the whitespace around it; NULL if there is
 * no colon or no value after it. */
static inline const unsigned char *colon(const unsigned char *p, const unsigned char *end)
{
	if (end - p > 2 && p[0] == ':' && p[1] == ' ' && p[2] > ' ')
		return p + 2;
	p = tj_ws(p, end);
	if (p == end || *p != ':')
		return NULL;
	p = tj_ws(p + 1, end);
	return p == end ? NULL : p;
}

/* After a member's value: 1 with *pp past the comma and the next key's opening quote, 0 with
 * *pp past the closing brace, -1 on anything else. */
static inline int next_member(const unsigned char **pp, const unsigned char *end)
{
	const unsigned char *p = *pp;
	if (end - p > 2 && p[0] == ',' && p[1] == ' ' && p[2] == '"') {
		*pp = p + 3;
		return 1;
	}
	p = tj_ws(p, end);
	if (p == end)
		return -1;
	if (*p == '}') {
		*pp = p + 1;
		return 0;
	}
	if (*p != ',')
		return -1;
	p = tj_ws(p + 1, end);
	if (p == end || *p != '"')
		return -1;
	*pp = p + 1;
	return 1;
}

/* A value nobody reads, with depth containers open around it: its end, or NULL. Strings and
 * numbers, most of them, are passed here; the rest by the scanner's own pass. */
static inline const unsigned char *pass_any(const unsigned char *p, const unsigned char *end,
                                            int depth)
{
	if (*p == '"') {
		const unsigned char *q = tj_str_run(p + 1, end);
		if (q < end && *q == '"')
			return q + 1;
	} else if (tj_is_digit(*p) || *p == '-') {
		return tj_number_end(p, end);
	}
	return trace_jscan_pass(p, end, depth, &trace_kineto_skip);
}

static int event_key(const unsigned char *s, size_t n)
{
	switch (n) {
	case 2:
		if (s[0] == 't' && s[1] == 's')
			return EK_TS;
		if (s[0] == 'p' && s[1] == 'h')
			return EK_PH;
		return EK_OTHER;
	case 3:
		if (!memcmp(s, "dur", 3))
			return EK_DUR;
		if (!memcmp(s, "cat", 3))
			return EK_CAT;
		return EK_OTHER;
	case 4:
		if (!memcmp(s, "name", 4))
			return EK_NAME;
		if (!memcmp(s, "args", 4))
			return EK_ARGS;
		if (!memcmp(s, "rank", 4))
			return EK_RANK;
		return EK_OTHER;
	default:
		return EK_OTHER;
	}
}

static int args_key(const unsigned char *s, size_t n)
{
	switch (n) {
	case 4:
		return memcmp(s, "rank", 4) ? EK_OTHER : EK_RANK;
	case 6:
		return memcmp(s, "stream", 6) ? EK_OTHER : EK_STREAM;
	case 11:
		return memcmp(s, "correlation", 11) ? EK_OTHER : EK_CORR;
	case 23:
		return memcmp(s, "memory bandwidth (GB/s)", 23) ? EK_OTHER : EK_BW;
	default:
		return EK_OTHER;
	}
}

/* A number for a known key: its text in *s, *n, and *pp past it. */
static inline bool number(const unsigned char **pp, const unsigned char *end,
                          const unsigned char **s, size_t *n)
{
	const unsigned char *p = *pp, *q = tj_number_end(p, end);
	if (!q)
		return false;
	*s = p;
	*n = (size_t)(q - p);
	*pp = q;
	return true;
}

/* The members of args after its '{': only stream, correlation and the memory bandwidth are
 * kept. depth: the containers open around args' values. */
static const unsigned char *read_args(ev *e, const unsigned char *p, const unsigned char *end,
                                      int depth)
{
	p = tj_ws(p, end);
	if (p < end && *p == '}')
		return p + 1;
	if (p == end || *p != '"')
		return NULL;
	p++;
	for (;;) {
		const unsigned char *key, *v;
		size_t kn, vn;
		if (!plain_string(&p, end, &key, &kn) || !(p = colon(p, end)))
			return NULL;
		int which = args_key(key, kn);
		if (which == EK_OTHER) {
			if (!(p = pass_any(p, end, depth)))
				return NULL;
		} else {
			if (which == EK_RANK || (e->seen & (1u << which)) ||
			    !number(&p, end, &v, &vn))
				return NULL;
			e->seen |= 1u << which;
			if (which == EK_STREAM) {
				if (!trace_kineto_num_to_i64((const char *)v, vn, &e->stream))
					e->stream = -1;
			} else if (which == EK_CORR) {
				if (!trace_kineto_num_to_i64((const char *)v, vn, &e->corr))
					return NULL;
			} else {
				char buf[64];
				if (vn >= sizeof buf)
					return NULL;
				memcpy(buf, v, vn);
				buf[vn] = 0;
				e->bw = gw_strtod_c(buf, NULL);
				e->has_bw = true;
			}
		}
		int more = next_member(&p, end);
		if (more <= 0)
			return more ? NULL : p;
	}
}

/* A member of the event, p at its value: p past the value, or NULL to decline. */
static const unsigned char *read_member(ev *e, int which, const unsigned char *p,
                                        const unsigned char *end, int depth)
{
	const unsigned char *v;
	size_t vn;
	bool is_float = false;
	if (which == EK_OTHER)
		return pass_any(p, end, depth);
	if (which == EK_RANK || (e->seen & (1u << which)))
		return NULL;
	e->seen |= 1u << which;
	switch (which) {
	case EK_PH:
		p++;
		if (p[-1] != '"' || !plain_string(&p, end, &v, &vn))
			return NULL;
		e->ph = vn ? (char)v[0] : 0;
		return p;
	case EK_CAT:
		p++;
		if (p[-1] != '"' || !plain_string(&p, end, &e->cat, &e->cat_n))
			return NULL;
		return p;
	case EK_NAME:
		p++;
		if (p[-1] != '"' || !plain_string(&p, end, &e->name, &e->name_n))
			return NULL;
		return p;
	case EK_TS:
		if (!number(&p, end, &v, &vn) ||
		    !trace_kineto_us_to_ns((const char *)v, vn, &e->ts, &is_float))
			return NULL;
		e->has_ts = true;
		e->ts_float = is_float;
		return p;
	case EK_DUR:
		if (!number(&p, end, &v, &vn) ||
		    !trace_kineto_us_to_ns((const char *)v, vn, &e->dur, &is_float))
			return NULL;
		e->has_dur = true;
		return p;
	default: /* EK_ARGS */
		if (*p != '{')
			return NULL;
		return read_args(e, p + 1, end, depth + 1);
	}
}

/* What the callbacks would have done for the event, in their order of effects. */
static bool hand_over(kstate *k, const ev *e)
{
	k->key_depth = -1;
	k->key = K_NONE;
	k->rank_depth = -1;
	trace_kineto_event_begin(k);
	kevent *ke = &k->e;
	ke->ph = e->ph;
	ke->has_ts = e->has_ts;
	ke->ts = e->ts;
	ke->has_dur = e->has_dur;
	ke->dur = e->dur;
	ke->stream = e->stream;
	ke->corr = e->corr;
	ke->bw = e->bw;
	ke->has_bw = e->has_bw;
	if (e->ts_float)
		k->r->ts_float = true;
	if (e->cat)
		trace_kineto_set_cat(k, e->cat, e->cat_n);
	if (e->name) {
		ke->name = trace_names_intern(&k->r->names, (const char *)e->name, e->name_n);
		if (ke->name == UINT32_MAX) {
			snprintf(k->err, sizeof k->err, "out of memory");
			return false;
		}
		ke->has_name = true;
	}
	return trace_kineto_event_end(k) != 0;
}

const unsigned char *trace_kineto_event(void *ctx, const unsigned char *p, const unsigned char *end,
                                        int depth)
{
	kstate *k = ctx;
	if (!k->events_open || k->depth != 2)
		return NULL;
	ev e = {.stream = -1, .corr = -1, .bw = -1};
	p = tj_ws(p + 1, end);
	if (p == end || *p != '"')
		return NULL;
	p++;
	for (;;) {
		const unsigned char *key = p;
		size_t kn;
		if (!plain_string(&p, end, &key, &kn) || !(p = colon(p, end)) ||
		    !(p = read_member(&e, event_key(key, kn), p, end, depth + 1)))
			return NULL;
		int more = next_member(&p, end);
		if (more < 0)
			return NULL;
		if (more == 0)
			break;
	}
	return hand_over(k, &e) ? p : NULL;
}
