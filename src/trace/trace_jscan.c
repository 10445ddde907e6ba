/* trace_jscan.c - a strict JSON scanner specialised to trace text: whole buffers, plain strings.
 *
 * yajl's lexer costs about half of the CPU time of a trace. Trace text is nearly all short keys,
 * ASCII names and numbers, which this scanner handles with a table lookup per byte and no copy.
 * It accepts only what yajl accepts and gives up on anything it is unsure of, so the caller can
 * always fall back to yajl, whose values and error messages stay the reference. */
#include "trace/trace_jscan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace_jscan_lex.h"

enum { MAX_DEPTH = 256 };

typedef struct {
	const unsigned char *p, *end;
	unsigned char *scratch; /* strings with escapes, decoded */
	size_t scap;
	const yajl_callbacks *cb;
	void *ctx;
	const trace_jscan_skip *skip; /* NULL: every value is reported */
} scanner;

static inline void skip_ws(scanner *s)
{
	s->p = tj_ws(s->p, s->end);
}

static bool scratch_put(scanner *s, size_t at, const unsigned char *src, size_t n)
{
	if (n == 0)
		return true; /* nothing to copy (and no buffer yet, before the first escape) */
	if (at + n > s->scap) {
		size_t cap = s->scap ? s->scap : 256;
		while (cap < at + n)
			cap *= 2;
		unsigned char *b = realloc(s->scratch, cap);
		if (!b)
			return false;
		s->scratch = b;
		s->scap = cap;
	}
	memcpy(s->scratch + at, src, n);
	return true;
}

/* Length of the UTF-8 sequence at p by yajl's rule (lead byte, continuation bytes), 0 if bad. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
	size_t n;
	if ((*p >> 5) == 0x6)
		n = 2;
	else if ((*p >> 4) == 0xe)
		n = 3;
	else if ((*p >> 3) == 0x1e)
		n = 4;
	else
		return 0;
	if ((size_t)(end - p) < n)
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((p[i] >> 6) != 0x2)
			return 0;
	return n;
}

static int simple_escape(unsigned char c)
{
	switch (c) {
	case '"':
	case '\\':
	case '/':
		return c;
	case 'b':
		return '\b';
	case 'f':
		return '\f';
	case 'n':
		return '\n';
	case 'r':
		return '\r';
	case 't':
		return '\t';
	default:
		return -1;
	}
}

/* scan_string past the first escape or non-ASCII byte (out of line: rare in traces). */
static bool __attribute__((noinline))
scan_string_slow(scanner *s, const unsigned char **out, size_t *n)
{
	const unsigned char *start = s->p;
	size_t have = 0; /* decoded bytes in scratch, once an escape was seen */
	bool escaped = false;
	for (;;) {
		const unsigned char *q = tj_str_run(s->p, s->end);
		if (q == s->end)
			return false;
		if (*q == '"') {
			s->p = q + 1;
			if (!escaped) {
				*out = start;
				*n = (size_t)(q - start);
				return true;
			}
			if (!scratch_put(s, have, start, (size_t)(q - start)))
				return false;
			*out = s->scratch;
			*n = have + (size_t)(q - start);
			return true;
		}
		if (*q >= 0x80) {
			size_t u = utf8_len(q, s->end);
			if (!u)
				return false;
			s->p = q + u;
			continue;
		}
		if (*q != '\\' || q + 1 >= s->end)
			return false; /* a control character, or the text ends */
		int c = simple_escape(q[1]);
		if (c < 0)
			return false;
		unsigned char ch = (unsigned char)c;
		if (!scratch_put(s, have, start, (size_t)(q - start)) ||
		    !scratch_put(s, have + (size_t)(q - start), &ch, 1))
			return false;
		have += (size_t)(q - start) + 1;
		escaped = true;
		s->p = start = q + 2;
	}
}

/* A string after its opening quote: out and n receive its decoded text. Most are plain runs
 * (keys, names), read here without a call. */
static inline bool scan_string(scanner *s, const unsigned char **out, size_t *n)
{
	const unsigned char *q = tj_str_run(s->p, s->end);
	if (q < s->end && *q == '"') {
		*out = s->p;
		*n = (size_t)(q - s->p);
		s->p = q + 1;
		return true;
	}
	return scan_string_slow(s, out, n);
}

static bool scan_number(scanner *s)
{
	const unsigned char *q = tj_number_end(s->p, s->end);
	if (!q)
		return false;
	const unsigned char *start = s->p;
	s->p = q;
	return s->cb->yajl_number(s->ctx, (const char *)start, (size_t)(q - start)) != 0;
}

static bool literal(scanner *s, const char *lit, size_t n)
{
	if ((size_t)(s->end - s->p) < n || memcmp(s->p, lit, n))
		return false;
	s->p += n;
	return true;
}

/*
 * Passing over a value without calls: the same grammar as scan_value and scan_body, so that
 * a value passed over is one they would have read. It fails on anything they would fail on,
 * and on a key equal to the watched one; the caller then reads the value as usual, which makes
 * the outcome theirs. depth: the containers open around the value.
 */
static bool pass_value(scanner *s, int depth);

static bool pass_container(scanner *s, int depth, unsigned char close)
{
	skip_ws(s);
	if (s->p == s->end)
		return false;
	if (*s->p == close) {
		s->p++;
		return true;
	}
	for (;;) {
		if (close == '}') {
			const unsigned char *key;
			size_t n;
			if (*s->p != '"')
				return false;
			s->p++;
			if (!scan_string(s, &key, &n) ||
			    (s->skip && n == s->skip->watch_len && !memcmp(key, s->skip->watch, n)))
				return false;
			skip_ws(s);
			if (s->p == s->end || *s->p != ':')
				return false;
			s->p++;
		}
		if (!pass_value(s, depth))
			return false;
		skip_ws(s);
		if (s->p == s->end)
			return false;
		if (*s->p == close) {
			s->p++;
			return true;
		}
		if (*s->p != ',')
			return false;
		s->p++;
		skip_ws(s);
		if (s->p == s->end)
			return false;
	}
}

static bool pass_value(scanner *s, int depth)
{
	skip_ws(s);
	if (s->p == s->end)
		return false;
	const unsigned char *str, *q;
	size_t n;
	switch (*s->p) {
	case '{':
	case '[':
		if (depth >= MAX_DEPTH)
			return false;
		return pass_container(s, depth + 1, *s->p++ == '{' ? '}' : ']');
	case '"':
		s->p++;
		return scan_string(s, &str, &n);
	case 't':
		return literal(s, "true", 4);
	case 'f':
		return literal(s, "false", 5);
	case 'n':
		return literal(s, "null", 4);
	default:
		if (!(q = tj_number_end(s->p, s->end)))
			return false;
		s->p = q;
		return true;
	}
}

const unsigned char *trace_jscan_pass(const unsigned char *p, const unsigned char *end, int depth,
                                      const trace_jscan_skip *skip)
{
	scanner s = {.p = p, .end = end, .skip = skip};
	bool ok = pass_value(&s, depth);
	free(s.scratch);
	return ok ? s.p : NULL;
}

/* A scalar value, or the opening of a container (pushed on stack). */
static bool scan_value(scanner *s, char *stack, int *depth)
{
	skip_ws(s);
	if (s->p == s->end)
		return false;
	const yajl_callbacks *cb = s->cb;
	switch (*s->p) {
	case '{':
	case '[':
		if (*depth >= MAX_DEPTH)
			return false;
		stack[(*depth)++] = (char)*s->p;
		if (*s->p++ == '{')
			return cb->yajl_start_map && cb->yajl_start_map(s->ctx);
		return cb->yajl_start_array && cb->yajl_start_array(s->ctx);
	case '"': {
		const unsigned char *str;
		size_t n;
		s->p++;
		return scan_string(s, &str, &n) && cb->yajl_string &&
		       cb->yajl_string(s->ctx, str, n);
	}
	case 't':
		return literal(s, "true", 4) && cb->yajl_boolean && cb->yajl_boolean(s->ctx, 1);
	case 'f':
		return literal(s, "false", 5) && cb->yajl_boolean && cb->yajl_boolean(s->ctx, 0);
	case 'n':
		return literal(s, "null", 4) && cb->yajl_null && cb->yajl_null(s->ctx);
	default:
		return scan_number(s);
	}
}

/* A key and its colon, with the '"' at s->p: 0 on failure, else what the key's call returned. */
static int scan_key(scanner *s)
{
	if (s->p == s->end || *s->p != '"')
		return 0;
	s->p++;
	const unsigned char *str;
	size_t n;
	if (!scan_string(s, &str, &n) || !s->cb->yajl_map_key)
		return 0;
	int said = s->cb->yajl_map_key(s->ctx, str, n);
	if (!said)
		return 0;
	/* '": "' then the value is the common form: no whitespace scan. */
	const unsigned char *p = s->p;
	if (s->end - p > 2 && p[0] == ':' && p[1] == ' ' && p[2] > ' ') {
		s->p = p + 2;
		return said;
	}
	skip_ws(s);
	if (s->p == s->end || *s->p != ':')
		return 0;
	s->p++;
	return said;
}

/*
 * Values to the end of the text. m->open: the containers already open when the text starts
 * (their opening calls were made before); none: the text is a whole document. The text must end
 * at depth m->end_depth, just after a comma when m->end_after_comma; containers at or below that
 * depth are not closed here. first: the innermost container was just opened, so it may close at
 * once and no comma comes before its first element.
 */
static bool scan_body(scanner *s, const trace_jscan_mode *m)
{
	char stack[MAX_DEPTH];
	int depth = (int)strlen(m->open);
	if (depth >= MAX_DEPTH)
		return false;
	memcpy(stack, m->open, (size_t)depth);
	const int open = depth;
	bool first = true;
	if (depth == 0 && (!scan_value(s, stack, &depth) || depth == 0))
		return false;
	for (;;) {
		skip_ws(s);
		if (s->p == s->end)
			return depth == m->end_depth && !m->end_after_comma &&
			       (m->end_depth == 0 || !first);
		if (depth == 0)
			return false; /* text after the document */
		char top = stack[depth - 1];
		unsigned char c = *s->p;
		if ((top == '{' && c == '}') || (top == '[' && c == ']')) {
			if (depth <= m->end_depth && depth <= open)
				return false; /* it stays open past the end */
			s->p++;
			depth--;
			first = false;
			bool ok = top == '{'
			              ? s->cb->yajl_end_map && s->cb->yajl_end_map(s->ctx)
			              : s->cb->yajl_end_array && s->cb->yajl_end_array(s->ctx);
			if (!ok)
				return false;
			continue;
		}
		if (!first) {
			if (c != ',')
				return false;
			s->p++;
			skip_ws(s);
			if (s->p == s->end)
				return m->end_after_comma && depth == m->end_depth;
		}
		if (top == '[' && *s->p == '{' && s->skip && s->skip->element) {
			const unsigned char *q = s->skip->element(s->ctx, s->p, s->end, depth);
			if (q) {
				s->p = q;
				first = false;
				continue;
			}
		}
		int said = top == '{' ? scan_key(s) : 1;
		if (!said)
			return false;
		if (said == TRACE_JSCAN_PASS && s->skip) {
			const unsigned char *at = s->p;
			if (pass_value(s, depth)) {
				first = false;
				continue;
			}
			s->p = at;
		}
		int before = depth;
		if (!scan_value(s, stack, &depth))
			return false;
		first = depth > before;
	}
}

bool trace_jscan_skipping(const unsigned char *buf, size_t len, const yajl_callbacks *cb, void *ctx,
                          const trace_jscan_mode *m, const trace_jscan_skip *skip)
{
	static const trace_jscan_mode whole = {.open = "", .end_depth = 0};
	if (!cb->yajl_number || !len)
		return false;
	if (!m)
		m = &whole;
	scanner s = {.p = buf, .end = buf + len, .cb = cb, .ctx = ctx, .skip = skip};
	skip_ws(&s);
	bool ok = s.p < s.end && (m->open[0] || *s.p == '{' || *s.p == '[') && scan_body(&s, m);
	free(s.scratch);
	return ok;
}

bool trace_jscan_part(const unsigned char *buf, size_t len, const yajl_callbacks *cb, void *ctx,
                      const trace_jscan_mode *m)
{
	return trace_jscan_skipping(buf, len, cb, ctx, m, NULL);
}

bool trace_jscan(const unsigned char *buf, size_t len, const yajl_callbacks *cb, void *ctx)
{
	return trace_jscan_skipping(buf, len, cb, ctx, NULL, NULL);
}
