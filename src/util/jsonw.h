/* jsonw.h - a small streaming JSON writer (output only; parsing uses yajl/jansson). */
#ifndef GPUWHY_UTIL_JSONW_H
#define GPUWHY_UTIL_JSONW_H

#include <stdbool.h>
#include <stdio.h>

typedef struct {
	FILE *f;
	int depth;
	bool need_comma[64];
	bool after_key;
	bool pretty;
} jsonw;

void jsonw_init(jsonw *w, FILE *f, bool pretty);
void jsonw_obj_begin(jsonw *w);
void jsonw_obj_end(jsonw *w);
void jsonw_arr_begin(jsonw *w);
void jsonw_arr_end(jsonw *w);
void jsonw_key(jsonw *w, const char *k);
void jsonw_str(jsonw *w, const char *s); /* NULL writes null */
void jsonw_num(jsonw *w, double v);      /* non-finite writes null */
void jsonw_int(jsonw *w, long long v);
void jsonw_bool(jsonw *w, bool v);
void jsonw_null(jsonw *w);
/* Write s as a JSON string literal with escapes (no separators). */
void jsonw_escape(FILE *f, const char *s);

#endif
