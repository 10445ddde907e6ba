#include "util/jsonw.h"

#include <math.h>

void jsonw_init(jsonw *w, FILE *f, bool pretty)
{
	w->f = f;
	w->depth = 0;
	w->need_comma[0] = false;
	w->after_key = false;
	w->pretty = pretty;
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
	if (w->need_comma[w->depth])
		fputc(',', w->f);
	if (w->depth > 0)
		indent(w);
	w->need_comma[w->depth] = true;
}

void jsonw_escape(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

static void open_(jsonw *w, char c)
{
	pre_value(w);
	fputc(c, w->f);
	if (w->depth < 63)
		w->depth++;
	w->need_comma[w->depth] = false;
}

static void close_(jsonw *w, char c)
{
	bool had = w->need_comma[w->depth];
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

void jsonw_key(jsonw *w, const char *k)
{
	pre_value(w);
	jsonw_escape(w->f, k);
	fputs(w->pretty ? ": " : ":", w->f);
	w->after_key = true;
}

void jsonw_str(jsonw *w, const char *s)
{
	pre_value(w);
	if (s)
		jsonw_escape(w->f, s);
	else
		fputs("null", w->f);
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
