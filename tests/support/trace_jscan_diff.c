/* trace_jscan_diff.c - the scanner's calls against yajl's on one text, as two call logs. */
#include "support/trace_jscan_diff.h"

#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

/* A call log: per call its tag, the length of its bytes and the bytes. */
typedef struct {
	gw_strbuf l;
} call_log;

static int put(void *ctx, char tag, const void *s, size_t n)
{
	gw_strbuf *l = &((call_log *)ctx)->l;
	gw_sb_putc(l, tag);
	gw_sb_put(l, &n, sizeof n);
	gw_sb_put(l, s, n);
	return 1;
}

static int on_null(void *c)
{
	return put(c, 'z', NULL, 0);
}
static int on_bool(void *c, int v)
{
	return put(c, v ? 't' : 'f', NULL, 0);
}
static int on_number(void *c, const char *s, size_t n)
{
	return put(c, 'n', s, n);
}
static int on_string(void *c, const unsigned char *s, size_t n)
{
	return put(c, 's', s, n);
}
/* Keys beginning with 'x': their values are the ones the skipping scanner passes over. */
static int on_key(void *c, const unsigned char *s, size_t n)
{
	put(c, 'k', s, n);
	return n > 0 && s[0] == 'x' ? TRACE_JSCAN_PASS : 1;
}
static int on_start_map(void *c)
{
	return put(c, '{', NULL, 0);
}
static int on_end_map(void *c)
{
	return put(c, '}', NULL, 0);
}
static int on_start_array(void *c)
{
	return put(c, '[', NULL, 0);
}
static int on_end_array(void *c)
{
	return put(c, ']', NULL, 0);
}

static const yajl_callbacks logging = {
    .yajl_null = on_null,
    .yajl_boolean = on_bool,
    .yajl_number = on_number,
    .yajl_string = on_string,
    .yajl_start_map = on_start_map,
    .yajl_map_key = on_key,
    .yajl_end_map = on_end_map,
    .yajl_start_array = on_start_array,
    .yajl_end_array = on_end_array,
};

/*
 * yajl on the part: the open containers first ("{[" becomes {"_":[ ), then the text, then
 * what closes them. The log keeps only the part's own calls.
 */
static bool yajl_read(const unsigned char *text, size_t len, const trace_jscan_mode *m,
                      call_log *log)
{
	gw_strbuf *l = &log->l;
	yajl_handle h = yajl_alloc(&logging, NULL, log);
	if (!h)
		return false;
	bool ok = true;
	size_t depth = m ? strlen(m->open) : 0;
	for (size_t i = 0; ok && i < depth; i++) {
		const char *o = m->open[i] == '{' ? "{\"_\":" : "[";
		ok = yajl_parse(h, (const unsigned char *)o, strlen(o)) == yajl_status_ok;
	}
	size_t skip = l->len;
	ok = ok && yajl_parse(h, text, len) == yajl_status_ok;
	size_t mark = l->len;
	if (ok && m) {
		if (m->end_after_comma)
			ok = yajl_parse(h, (const unsigned char *)"0", 1) == yajl_status_ok;
		for (int i = m->end_depth; ok && i-- > 0;) {
			const char *c = i < (int)depth ? (m->open[i] == '{' ? "}" : "]") : NULL;
			/* containers opened inside the part close as their kind; unknown ones fail
			 */
			ok = c && yajl_parse(h, (const unsigned char *)c, 1) == yajl_status_ok;
		}
	}
	ok = ok && yajl_complete_parse(h) == yajl_status_ok;
	yajl_free(h);
	if (mark > skip)
		memmove(l->p, l->p + skip, mark - skip);
	l->len = mark - skip;
	return ok;
}

/* One call of a log. */
typedef struct {
	char tag;
	size_t n;
	const char *s;
	size_t at, len; /* where the whole entry is in the log */
} call;

static size_t calls_of(const gw_strbuf *l, call **out)
{
	size_t cnt = 0, cap = 0;
	call *c = NULL;
	for (size_t at = 0; at < l->len;) {
		call e = {.tag = l->p[at], .at = at};
		memcpy(&e.n, l->p + at + 1, sizeof e.n);
		e.s = l->p + at + 1 + sizeof e.n;
		e.len = 1 + sizeof e.n + e.n;
		at += e.len;
		if (cnt == cap) {
			cap = cap ? cap * 2 : 64;
			call *g = realloc(c, cap * sizeof *c);
			if (!g)
				abort();
			c = g;
		}
		c[cnt++] = e;
	}
	*out = c;
	return cnt;
}

/* The calls of the value starting at call i: 1 for a scalar, through the closing for a
 * container. */
static size_t value_calls(const call *c, size_t cnt, size_t i)
{
	if (c[i].tag != '{' && c[i].tag != '[')
		return 1;
	size_t d = 0, j = i;
	do {
		if (c[j].tag == '{' || c[j].tag == '[')
			d++;
		else if (c[j].tag == '}' || c[j].tag == ']')
			d--;
		j++;
	} while (d > 0 && j < cnt);
	return j - i;
}

/* yajl's log as the skipping scanner should make it: the value after each 'x' key dropped,
 * unless it holds a "rank" key (then it is kept and its own 'x' keys count). */
static void drop_skipped(const gw_strbuf *in, gw_strbuf *out)
{
	call *c;
	size_t cnt = calls_of(in, &c);
	for (size_t i = 0; i < cnt; i++) {
		gw_sb_put(out, in->p + c[i].at, c[i].len);
		if (c[i].tag != 'k' || c[i].n == 0 || c[i].s[0] != 'x' || i + 1 == cnt)
			continue;
		size_t v = value_calls(c, cnt, i + 1);
		bool watched = false;
		for (size_t j = i + 1; j < i + 1 + v; j++)
			watched |= c[j].tag == 'k' && c[j].n == 4 && !memcmp(c[j].s, "rank", 4);
		if (!watched)
			i += v;
	}
	free(c);
}

static trace_jscan_diff compare(const unsigned char *text, size_t len, const trace_jscan_mode *m,
                                bool skipping)
{
	static const trace_jscan_skip skip_x = {.watch = "rank", .watch_len = 4};
	call_log a = {0}, b = {0};
	trace_jscan_diff d = {0};
	d.yajl_ok = yajl_read(text, len, m, &a);
	d.scan_ok = trace_jscan_skipping(text, len, &logging, &b, m, skipping ? &skip_x : NULL);
	if (skipping && d.yajl_ok) {
		gw_strbuf kept = {0};
		drop_skipped(&a.l, &kept);
		gw_sb_free(&a.l);
		a.l = kept;
	}
	d.same = d.yajl_ok && d.scan_ok && a.l.len == b.l.len &&
	         (a.l.len == 0 || !memcmp(a.l.p, b.l.p, a.l.len));
	gw_sb_free(&a.l);
	gw_sb_free(&b.l);
	return d;
}

trace_jscan_diff trace_jscan_compare(const unsigned char *text, size_t len,
                                     const trace_jscan_mode *m)
{
	return compare(text, len, m, false);
}

trace_jscan_diff trace_jscan_compare_skipping(const unsigned char *text, size_t len,
                                              const trace_jscan_mode *m)
{
	return compare(text, len, m, true);
}
