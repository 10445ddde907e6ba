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
	kevent v; /* the values as the callbacks keep them; cat and name are handed over below */
	const unsigned char *cat, *name;
	size_t cat_n, name_n;
	bool ts_float;
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

/* The conversions below need SSE2's digit runs and little-endian loads; elsewhere every number
 * takes the general path. */
#if defined(__SSE2__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define KEV_FAST_NUMBERS 1
/* The value of the m digits at p (1 <= m <= 8; eight bytes readable). The bytes after them
 * are shifted out; subtracting '0' from them borrows only towards later bytes, never from a
 * digit's. */
static inline uint64_t digits_value(const unsigned char *p, unsigned m)
{
	uint64_t w;
	memcpy(&w, p, 8);
	w -= 0x3030303030303030ull;
	return tj_swar8(w << (8 * (8 - m)));
}

/* The value of the n digits at p, 1 <= n <= 16 (sixteen bytes readable). */
static inline uint64_t digits16(const unsigned char *p, unsigned n)
{
	return n > 8 ? digits_value(p, n - 8) * 100000000 + digits_value(p + n - 8, 8)
	             : digits_value(p, n);
}

/*
 * A time in microseconds as traces write it (no sign, up to 15 integer digits, up to three
 * decimals), checked and converted at once: *ns, *is_float and the end of the number, or NULL
 * for every other form, which the general grammar and conversion take (to the same value:
 * trace_kineto_us_to_ns is exact for these).
 */
static inline const unsigned char *us_common(const unsigned char *p, const unsigned char *end,
                                             int64_t *ns, bool *is_float)
{
	if (end - p < 40)
		return NULL; /* near the end: the loads below read ahead */
	unsigned n = tj_digit_run16(p);
	if (n - 1 >= 15 || (*p == '0' && n > 1))
		return NULL; /* no digit, too many, or "01" */
	static const uint64_t scale[4] = {1000, 100, 10, 1};
	uint64_t v = digits16(p, n) * 1000;
	const unsigned char *q = p + n;
	if (*q == '.') {
		unsigned f = tj_digit_run16(q + 1);
		if (f - 1 >= 3)
			return NULL; /* "1." or a fourth decimal, which is rounded */
		v += digits_value(q + 1, f) * scale[f];
		q += 1 + f;
		*is_float = true;
	}
	if (!tj_value_end[*q])
		return NULL; /* an exponent, or no number */
	*ns = (int64_t)v;
	return q;
}

/* An integer as args write it (no sign, 1 to 16 digits), checked and converted at once: its
 * end, or NULL for the general path. */
static inline const unsigned char *int_common(const unsigned char *p, const unsigned char *end,
                                              int64_t *out)
{
	if (end - p < 32)
		return NULL;
	unsigned n = tj_digit_run16(p);
	if (n - 1 >= 16 || (*p == '0' && n > 1) || !tj_value_end[p[n]])
		return NULL;
	*out = (int64_t)digits16(p, n);
	return p + n;
}
#endif

/* A time in microseconds for a known key: *ns, *is_float, and *pp past it. */
static inline bool us_value(const unsigned char **pp, const unsigned char *end, int64_t *ns,
                            bool *is_float)
{
#ifdef KEV_FAST_NUMBERS
	const unsigned char *q = us_common(*pp, end, ns, is_float);
	if (q) {
		*pp = q;
		return true;
	}
#endif
	const unsigned char *v;
	size_t vn;
	return number(pp, end, &v, &vn) && trace_kineto_us_to_ns((const char *)v, vn, ns, is_float);
}

/* An integer for a known key in args: *out with *converted (trace_kineto_num_to_i64's
 * verdict), and *pp past it; false if it is no number. */
static inline bool int_value(const unsigned char **pp, const unsigned char *end, int64_t *out,
                             bool *converted)
{
#ifdef KEV_FAST_NUMBERS
	const unsigned char *q = int_common(*pp, end, out);
	if (q) {
		*converted = true;
		*pp = q;
		return true;
	}
#endif
	const unsigned char *s;
	size_t n;
	if (!number(pp, end, &s, &n))
		return false;
	*converted = trace_kineto_num_to_i64((const char *)s, n, out);
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
			if (which == EK_RANK || (e->seen & (1u << which)))
				return NULL;
			e->seen |= 1u << which;
			bool converted = false;
			if (which == EK_STREAM) {
				if (!int_value(&p, end, &e->v.stream, &converted))
					return NULL;
				if (!converted)
					e->v.stream = -1;
			} else if (which == EK_CORR) {
				if (!int_value(&p, end, &e->v.corr, &converted) || !converted)
					return NULL;
			} else {
				if (!number(&p, end, &v, &vn))
					return NULL;
				char buf[64];
				if (vn >= sizeof buf)
					return NULL;
				memcpy(buf, v, vn);
				buf[vn] = 0;
				e->v.bw = gw_strtod_c(buf, NULL);
				e->v.has_bw = true;
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
		e->v.ph = vn ? (char)v[0] : 0;
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
		if (!us_value(&p, end, &e->v.ts, &is_float))
			return NULL;
		e->v.has_ts = true;
		e->ts_float = is_float;
		return p;
	case EK_DUR:
		if (!us_value(&p, end, &e->v.dur, &is_float))
			return NULL;
		e->v.has_dur = true;
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
	k->e = e->v;
	kevent *ke = &k->e;
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
	ev e = {.v = {.stream = -1, .corr = -1, .bw = -1}};
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
