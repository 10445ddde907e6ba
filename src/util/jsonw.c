/*
 * jsonw.c - the one JSON writer (see jsonw.h): values, strings in two escape dialects, and
 * jansson trees written through the same calls.
 */
#include "util/jsonw.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void jsonw_init(jsonw *w, FILE *f, bool pretty)
{
	memset(w, 0, sizeof *w);
	w->f = f;
	w->pretty = pretty;
}

static bool comma_at(const jsonw *w, int depth)
{
	return w->need_comma[depth / 64] >> (depth % 64) & 1;
}

static void set_comma(jsonw *w, int depth, bool on)
{
	uint64_t bit = (uint64_t)1 << (depth % 64);
	if (on)
		w->need_comma[depth / 64] |= bit;
	else
		w->need_comma[depth / 64] &= ~bit;
}

static void indent(jsonw *w)
{
	if (!w->pretty)
		return;
	fputc('\n', w->f);
	for (int i = 0; i < w->depth; i++)
		fputs("  ", w->f);
}

/* Separator before a value or key at the current level. */
static void pre_value(jsonw *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (comma_at(w, w->depth))
		fputc(',', w->f);
	if (w->depth > 0)
		indent(w);
	set_comma(w, w->depth, true);
}

/* The escape of one byte below 0x20, or of '"' and '\\'; NULL for a byte written as it is. */
static const char *short_escape(unsigned char c, unsigned esc)
{
	switch (c) {
	case '"':
		return "\\\"";
	case '\\':
		return "\\\\";
	case '\n':
		return "\\n";
	case '\r':
		return "\\r";
	case '\t':
		return "\\t";
	case '\b':
		return esc & JSONW_ESC_SHORT ? "\\b" : NULL;
	case '\f':
		return esc & JSONW_ESC_SHORT ? "\\f" : NULL;
	default:
		return NULL;
	}
}

/* The code point of the UTF-8 sequence at p (n bytes left); *len its length, 1 if bad. */
static unsigned long code_point(const unsigned char *p, size_t n, size_t *len)
{
	size_t l = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc0 ? 2 : 1;
	if (l > n)
		l = 1;
	unsigned long cp = l == 1 ? p[0] : p[0] & (0x3f >> (l - 1));
	for (size_t i = 1; i < l; i++)
		cp = cp << 6 | (p[i] & 0x3f);
	*len = l;
	return cp;
}

static void escape_n(FILE *f, const char *s, size_t n, unsigned esc)
{
	const char *hex = esc & JSONW_ESC_SHORT ? "\\u%04X" : "\\u%04x";
	fputc('"', f);
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	while (p < end) {
		const char *e = short_escape(*p, esc);
		if (e) {
			fputs(e, f);
		} else if (*p < 0x20) {
			fprintf(f, hex, *p);
		} else if (*p >= 0x80 && esc & JSONW_ESC_ASCII) {
			size_t l;
			unsigned long cp = code_point(p, (size_t)(end - p), &l);
			if (cp >= 0x10000)
				fprintf(f, "\\u%04lX\\u%04lX", 0xd800 | (cp - 0x10000) >> 10,
				        0xdc00 | ((cp - 0x10000) & 0x3ff));
			else
				fprintf(f, "\\u%04lX", cp);
			p += l;
			continue;
		} else {
			fputc(*p, f);
		}
		p++;
	}
	fputc('"', f);
}

void jsonw_escape(FILE *f, const char *s)
{
	escape_n(f, s, strlen(s), 0);
}

bool jsonw_utf8_ok(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	while (p < end) {
		size_t l = *p < 0x80           ? 1
		           : (*p >> 5) == 0x6  ? 2
		           : (*p >> 4) == 0xe  ? 3
		           : (*p >> 3) == 0x1e ? 4
		                               : 0;
		if (!l || (size_t)(end - p) < l)
			return false;
		for (size_t i = 1; i < l; i++)
			if ((p[i] >> 6) != 0x2)
				return false;
		p += l;
	}
	return true;
}

static void open_(jsonw *w, char c)
{
	pre_value(w);
	fputc(c, w->f);
	if (w->depth < JSONW_MAX_DEPTH - 1)
		w->depth++;
	set_comma(w, w->depth, false);
}

static void close_(jsonw *w, char c)
{
	bool had = comma_at(w, w->depth);
	if (w->depth > 0)
		w->depth--;
	if (had)
		indent(w);
	fputc(c, w->f);
	if (w->depth == 0 && w->pretty)
		fputc('\n', w->f);
}

void jsonw_obj_begin(jsonw *w)
{
	open_(w, '{');
}
void jsonw_obj_end(jsonw *w)
{
	close_(w, '}');
}
void jsonw_arr_begin(jsonw *w)
{
	open_(w, '[');
}
void jsonw_arr_end(jsonw *w)
{
	close_(w, ']');
}

void jsonw_keyn(jsonw *w, const char *k, size_t n)
{
	pre_value(w);
	escape_n(w->f, k, n, w->esc);
	fputs(w->pretty ? ": " : ":", w->f);
	w->after_key = true;
}

void jsonw_key(jsonw *w, const char *k)
{
	jsonw_keyn(w, k, strlen(k));
}

void jsonw_strn(jsonw *w, const char *s, size_t n)
{
	pre_value(w);
	escape_n(w->f, s, n, w->esc);
}

void jsonw_str(jsonw *w, const char *s)
{
	if (s) {
		jsonw_strn(w, s, strlen(s));
	} else {
		pre_value(w);
		fputs("null", w->f);
	}
}

void jsonw_num(jsonw *w, double v)
{
	pre_value(w);
	if (!isfinite(v))
		fputs("null", w->f);
	else if (fabs(v) < 9e15 &&
	         v == (double)(long long)v) /* range first: the cast is UB past it */
		fprintf(w->f, "%lld", (long long)v);
	else
		fprintf(w->f, "%.15g", v);
}

void jsonw_real(jsonw *w, double v, int digits)
{
	pre_value(w);
	if (!isfinite(v)) {
		fputs("null", w->f);
		return;
	}
	char buf[64];
	int n = snprintf(buf, sizeof buf - 3, "%.*g", digits > 0 ? digits : 17, v);
	if (n < 0 || (size_t)n >= sizeof buf - 3)
		return;
	if (!strpbrk(buf, ".e")) {
		memcpy(buf + n, ".0", 3);
		n += 2;
	}
	/* 1e+20 is 1e20, 1.5e-07 is 1.5e-7: jansson's exponent. */
	char *e = strchr(buf, 'e');
	if (e) {
		char *from = e + 1, *to = e + 1;
		if (*from == '-')
			to = ++from;
		else if (*from == '+')
			from++;
		while (*from == '0' && from[1])
			from++;
		memmove(to, from, strlen(from) + 1);
	}
	fputs(buf, w->f);
}

void jsonw_int(jsonw *w, long long v)
{
	pre_value(w);
	fprintf(w->f, "%lld", v);
}

void jsonw_bool(jsonw *w, bool v)
{
	pre_value(w);
	fputs(v ? "true" : "false", w->f);
}

void jsonw_null(jsonw *w)
{
	pre_value(w);
	fputs("null", w->f);
}

/* ---- jansson trees ---- */

typedef struct {
	const char *k;
	size_t n;
	json_t *v;
} tree_member;

/* Keys compared as jansson sorts them: bytes, then length. */
static int member_cmp(const void *a, const void *b)
{
	const tree_member *x = a, *y = b;
	int c = memcmp(x->k, y->k, x->n < y->n ? x->n : y->n);
	return c ? c : (x->n > y->n) - (x->n < y->n);
}

static void tree_object(jsonw *w, const json_t *o, int digits, unsigned flags)
{
	size_t n = json_object_size(o), i = 0;
	tree_member *m = malloc((n ? n : 1) * sizeof *m);
	if (!m)
		abort();
	for (void *it = json_object_iter((json_t *)o); it && i < n;
	     it = json_object_iter_next((json_t *)o, it), i++)
		m[i] = (tree_member){json_object_iter_key(it), json_object_iter_key_len(it),
		                     json_object_iter_value(it)};
	if (flags & JSONW_TREE_SORT_KEYS)
		qsort(m, i, sizeof *m, member_cmp);
	jsonw_obj_begin(w);
	for (size_t j = 0; j < i; j++) {
		jsonw_keyn(w, m[j].k, m[j].n);
		jsonw_tree(w, m[j].v, digits, flags);
	}
	jsonw_obj_end(w);
	free(m);
}

void jsonw_tree(jsonw *w, const json_t *v, int digits, unsigned flags)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		tree_object(w, v, digits, flags);
		break;
	case JSON_ARRAY:
		jsonw_arr_begin(w);
		for (size_t i = 0; i < json_array_size(v); i++)
			jsonw_tree(w, json_array_get(v, i), digits, flags);
		jsonw_arr_end(w);
		break;
	case JSON_STRING:
		jsonw_strn(w, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		jsonw_int(w, (long long)json_integer_value(v));
		break;
	case JSON_REAL:
		jsonw_real(w, json_real_value(v), digits);
		break;
	case JSON_TRUE:
	case JSON_FALSE:
		jsonw_bool(w, json_is_true(v));
		break;
	default:
		jsonw_null(w);
	}
}

/* Write v; true when a newline already ended it (a pretty container). */
static bool tree_write(FILE *f, const json_t *v, int digits, unsigned flags)
{
	jsonw w;
	jsonw_init(&w, f, flags & JSONW_TREE_PRETTY);
	w.esc = JSONW_ESC_SHORT | (flags & JSONW_TREE_ASCII ? JSONW_ESC_ASCII : 0);
	jsonw_tree(&w, v, digits, flags);
	return w.pretty && (json_is_object(v) || json_is_array(v));
}

int jsonw_tree_line(FILE *f, const json_t *v, int digits, unsigned flags)
{
	if (!tree_write(f, v, digits, flags))
		fputc('\n', f);
	return ferror(f) ? -1 : 0;
}

char *jsonw_tree_text(const json_t *v, int digits, unsigned flags)
{
	if (!v)
		return NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		abort();
	bool nl = tree_write(f, v, digits, flags);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	if (nl && len > 0)
		text[--len] = '\0';
	return text;
}
