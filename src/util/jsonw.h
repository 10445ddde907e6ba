/*
 * jsonw.h - the one JSON writer: streaming, so a large output never sits in memory whole.
 * Every face writes its JSON with it, and a jansson tree (a request the gate rewrites, a
 * queue listing) is written by it too (jsonw_tree*, jsonw.c). Parsing is jansson's (and
 * yajl's for traces); the bytes written are those each face wrote before, so golden files
 * stay as they are: a face's own values as jsonw_num writes them, a tree's as jansson did.
 */
#ifndef GPUWHY_UTIL_JSONW_H
#define GPUWHY_UTIL_JSONW_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Deeper than jansson parses (2048), so any tree it read can be written back. */
#define JSONW_MAX_DEPTH 4096

/* How strings are escaped (jsonw.esc). */
enum {
	/* \b and \f as two characters and \u00XX in upper case, as jansson and yajl write
	 * them; without it \u0008, \u000c and lower case, as gpuwhy's faces always have. */
	JSONW_ESC_SHORT = 1,
	/* Every non-ASCII character as \uXXXX (surrogate pairs past U+FFFF). */
	JSONW_ESC_ASCII = 2,
};

typedef struct {
	FILE *f;
	int depth;
	uint64_t need_comma[JSONW_MAX_DEPTH / 64]; /* a bit per level: a value was written */
	bool after_key;
	bool pretty;
	unsigned esc; /* JSONW_ESC_* */
} jsonw;

void jsonw_init(jsonw *w, FILE *f, bool pretty);
void jsonw_obj_begin(jsonw *w);
void jsonw_obj_end(jsonw *w);
void jsonw_arr_begin(jsonw *w);
void jsonw_arr_end(jsonw *w);
void jsonw_key(jsonw *w, const char *k);
void jsonw_keyn(jsonw *w, const char *k, size_t n);
void jsonw_str(jsonw *w, const char *s); /* NULL writes null */
void jsonw_strn(jsonw *w, const char *s, size_t n);
void jsonw_num(jsonw *w, double v); /* non-finite writes null; an integral value as an integer */
/* A real that reads back as a real, as jansson writes one: %.{digits}g (0: 17), ".0" added
 * to an integral value, the exponent without '+' or leading zeros. Non-finite writes null. */
void jsonw_real(jsonw *w, double v, int digits);
void jsonw_int(jsonw *w, long long v);
void jsonw_bool(jsonw *w, bool v);
void jsonw_null(jsonw *w);
/* Write s as a JSON string literal with escapes (no separators). */
void jsonw_escape(FILE *f, const char *s);
/* True when s[0..n) is UTF-8 by the lead and continuation bytes (what a JSON string holds). */
bool jsonw_utf8_ok(const char *s, size_t n);

/* A jansson tree, written as json_dumpf wrote it with the same flags. */
enum {
	JSONW_TREE_PRETTY = 1,    /* JSON_INDENT(2); else JSON_COMPACT */
	JSONW_TREE_SORT_KEYS = 2, /* JSON_SORT_KEYS */
	JSONW_TREE_ASCII = 4,     /* JSON_ENSURE_ASCII */
};
/* The value v at w's place; digits as jsonw_real's. */
void jsonw_tree(jsonw *w, const json_t *v, int digits, unsigned flags);
/* v on f, then a newline. Returns 0, or -1 when writing failed. */
int jsonw_tree_line(FILE *f, const json_t *v, int digits, unsigned flags);
/* v as a malloc'd string (what json_dumps returned); NULL when v is NULL. */
char *jsonw_tree_text(const json_t *v, int digits, unsigned flags);

#endif
