/* trace_jscan_diff.c - the scanner's calls against yajl's on one text, as two call logs. */
#include "trace/trace_jscan_diff.h"

#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

/* A call log: per call its tag, the length of its bytes and the bytes. */
static int put(void *ctx, char tag, const void *s, size_t n)
{
	gw_strbuf *l = ctx;
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
static int on_key(void *c, const unsigned char *s, size_t n)
{
	return put(c, 'k', s, n);
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
                      gw_strbuf *l)
{
	yajl_handle h = yajl_alloc(&logging, NULL, l);
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

trace_jscan_diff trace_jscan_compare(const unsigned char *text, size_t len,
                                     const trace_jscan_mode *m)
{
	gw_strbuf a = {0}, b = {0};
	trace_jscan_diff d = {0};
	d.yajl_ok = yajl_read(text, len, m, &a);
	d.scan_ok = (m ? trace_jscan_part(text, len, &logging, &b, m)
	               : trace_jscan(text, len, &logging, &b));
	d.same =
	    d.yajl_ok && d.scan_ok && a.len == b.len && (a.len == 0 || !memcmp(a.p, b.p, a.len));
	gw_sb_free(&a);
	gw_sb_free(&b);
	return d;
}
