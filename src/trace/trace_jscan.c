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

enum { MAX_DEPTH = 256 };

/* Bytes a plain string run stops at: '"', '\\', control characters and non-ASCII. */
static const uint8_t str_stop[256] = {
    [0 ... 0x1f] = 1,
    ['"'] = 1,
    ['\\'] = 1,
    [0x80 ... 0xff] = 1,
};

typedef struct {
	const unsigned char *p, *end;
	unsigned char *scratch; /* strings with escapes, decoded */
	size_t scap;
	const yajl_callbacks *cb;
	void *ctx;
} scanner;

/* JSON's whitespace (yajl also takes \v and \f; the scanner leaves those to it). */
static const uint8_t is_ws[256] = {[' '] = 1, ['\n'] = 1, ['\r'] = 1, ['\t'] = 1};

static inline void skip_ws(scanner *s)
{
	const unsigned char *p = s->p, *e = s->end;
	while (p < e && is_ws[*p])
		p++;
	s->p = p;
}

static bool scratch_put(scanner *s, size_t at, const unsigned char *src, size_t n)
{
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

/* A string after its opening quote: out and n receive its decoded text. */
static bool scan_string(scanner *s, const unsigned char **out, size_t *n)
{
	const unsigned char *start = s->p;
	size_t have = 0; /* decoded bytes in scratch, once an escape was seen */
	bool escaped = false;
	for (;;) {
		const unsigned char *q = s->p;
		while (q < s->end && !str_stop[*q])
			q++;
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

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* A number by JSON's grammar, which is what yajl's lexer takes too. */
static bool scan_number(scanner *s)
{
	const unsigned char *q = s->p, *e = s->end;
	if (q < e && *q == '-')
		q++;
	if (q == e)
		return false;
	if (*q == '0')
		q++;
	else if (is_digit(*q))
		while (q < e && is_digit(*q))
			q++;
	else
		return false;
	if (q < e && *q == '.') {
		q++;
		if (q == e || !is_digit(*q))
			return false;
		while (q < e && is_digit(*q))
			q++;
	}
	if (q < e && (*q == 'e' || *q == 'E')) {
		q++;
		if (q < e && (*q == '+' || *q == '-'))
			q++;
		if (q == e || !is_digit(*q))
			return false;
		while (q < e && is_digit(*q))
			q++;
	}
	/* A value must be followed by whitespace or punctuation ("01", "1x" are not numbers). */
	if (q == e || !(*q == ',' || *q == ']' || *q == '}' || *q == ' ' || *q == '\n' ||
	                *q == '\r' || *q == '\t'))
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

/* A key and its colon, with the '"' at s->p. */
static bool scan_key(scanner *s)
{
	if (s->p == s->end || *s->p != '"')
		return false;
	s->p++;
	const unsigned char *str;
	size_t n;
	if (!scan_string(s, &str, &n) || !s->cb->yajl_map_key ||
	    !s->cb->yajl_map_key(s->ctx, str, n))
		return false;
	skip_ws(s);
	if (s->p == s->end || *s->p != ':')
		return false;
	s->p++;
	return true;
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
		if (top == '{' && !scan_key(s))
			return false;
		int before = depth;
		if (!scan_value(s, stack, &depth))
			return false;
		first = depth > before;
	}
}

bool trace_jscan_part(const unsigned char *buf, size_t len, const yajl_callbacks *cb, void *ctx,
                      const trace_jscan_mode *m)
{
	if (!cb->yajl_number || !len)
		return false;
	scanner s = {.p = buf, .end = buf + len, .cb = cb, .ctx = ctx};
	skip_ws(&s);
	bool ok = s.p < s.end && (m->open[0] || *s.p == '{' || *s.p == '[') && scan_body(&s, m);
	free(s.scratch);
	return ok;
}

bool trace_jscan(const unsigned char *buf, size_t len, const yajl_callbacks *cb, void *ctx)
{
	static const trace_jscan_mode whole = {.open = "", .end_depth = 0};
	return trace_jscan_part(buf, len, cb, ctx, &whole);
}
