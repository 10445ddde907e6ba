/*
 * The one JSON writer against the libraries whose output it replaced, byte for byte:
 * jansson trees as json_dumps wrote them (compact, indented, sorted, ASCII, real precision),
 * and strings in the short-escape dialect as yajl's generator wrote `queue add`'s environment.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>

#include "util/jsonw.h"

static uint64_t rng = 0x9E3779B97F4A7C15ULL;

static uint32_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

/* Bytes of a valid UTF-8 string: ASCII, controls, quotes, 2-, 3- and 4-byte characters. */
static size_t random_text(char *out, size_t cap)
{
	static const char *const parts[] = {
	    "a",           "Z",    " ",    "\"",       "\\",           "/",
	    "\b",          "\f",   "\n",   "\r",       "\t",           "\x01",
	    "\x1b",        "\x1f", "\x7f", "\xc3\xa9", "\xe6\x97\xa5", "\xf0\x9f\x98\x80",
	    "\xe2\x80\xa8"};
	size_t n = 0, parts_n = sizeof parts / sizeof *parts;
	for (uint32_t k = next() % 12; k > 0; k--) {
		const char *p = parts[next() % parts_n];
		size_t l = strlen(p);
		if (n + l >= cap)
			break;
		memcpy(out + n, p, l);
		n += l;
	}
	if (next() % 8 == 0 && n + 1 < cap)
		out[n++] = '\0'; /* a NUL inside a jansson string */
	out[n] = '\0';
	return n;
}

static double random_real(void)
{
	static const double some[] = {
	    0.7, 1e20,          1.5e-7, 3.0,      -0.0, 1e300, 1e16,    0.1,
	    2.5, 123456789.125, 1e-300, 4.9e-324, 1e15, -42.0, 1.0 / 3, 12345678901234567.0};
	if (next() % 2)
		return some[next() % (sizeof some / sizeof *some)];
	return ((double)next() - 2147483648.0) * pow(10.0, (double)(int)(next() % 40) - 20);
}

static json_t *random_tree(int depth)
{
	char text[64];
	uint32_t kind = depth > 4 ? 2 + next() % 6 : next() % 8;
	switch (kind) {
	case 0: {
		json_t *o = json_object();
		for (uint32_t k = next() % 5; k > 0; k--) {
			size_t n = random_text(text, sizeof text);
			json_object_setn_new_nocheck(o, text, n, random_tree(depth + 1));
		}
		return o;
	}
	case 1: {
		json_t *a = json_array();
		for (uint32_t k = next() % 5; k > 0; k--)
			json_array_append_new(a, random_tree(depth + 1));
		return a;
	}
	case 2:
	case 3: {
		size_t n = random_text(text, sizeof text);
		return json_stringn(text, n);
	}
	case 4:
		return json_integer(next() % 3 ? (json_int_t)next() - 70000
		                               : (next() % 2 ? INT64_MAX : INT64_MIN));
	case 5:
		return json_real(random_real());
	case 6:
		return json_boolean(next() % 2);
	default:
		return json_null();
	}
}

static void same_as_jansson(const json_t *v, int digits, unsigned flags)
{
	size_t jf = JSON_ENCODE_ANY | JSON_REAL_PRECISION(digits);
	jf |= flags & JSONW_TREE_PRETTY ? JSON_INDENT(2) : JSON_COMPACT;
	jf |= flags & JSONW_TREE_SORT_KEYS ? JSON_SORT_KEYS : 0;
	jf |= flags & JSONW_TREE_ASCII ? JSON_ENSURE_ASCII : 0;
	char *want = json_dumps(v, jf), *got = jsonw_tree_text(v, digits, flags);
	assert_non_null(want);
	assert_non_null(got);
	assert_string_equal(got, want);
	free(want);
	free(got);
}

static void test_trees_as_jansson_wrote_them(void **state)
{
	(void)state;
	static const int digits[] = {0, 6, 15, 16};
	for (int i = 0; i < 3000; i++) {
		json_t *v = random_tree(0);
		for (unsigned flags = 0; flags < 8; flags++)
			same_as_jansson(v, digits[i % 4], flags);
		json_decref(v);
	}
	/* What the queue, the gate and the trace report write: a few exact texts. */
	json_t *v = json_pack("{s:f,s:f,s:i,s:[],s:{},s:s}", "a", 0.7, "b", 3.0, "c", 7, "l", "o",
	                      "s", "x\bz");
	char *t = jsonw_tree_text(v, 0, 0);
	assert_string_equal(t, "{\"a\":0.69999999999999996,\"b\":3.0,\"c\":7,\"l\":[],\"o\":{},"
	                       "\"s\":\"x\\bz\"}");
	free(t);
	t = jsonw_tree_text(v, 16, JSONW_TREE_PRETTY);
	assert_string_equal(t,
	                    "{\n  \"a\": 0.7,\n  \"b\": 3.0,\n  \"c\": 7,\n  \"l\": [],\n  \"o\": "
	                    "{},\n  \"s\": \"x\\bz\"\n}");
	free(t);
	json_decref(v);
	assert_null(jsonw_tree_text(NULL, 0, 0));
}

/* A body as deep as jansson reads is written back whole. */
static void test_deep_tree(void **state)
{
	(void)state;
	char text[2 * 2000 + 1];
	memset(text, '[', 2000);
	memset(text + 2000, ']', 2000);
	text[4000] = '\0';
	json_t *v = json_loads(text, 0, NULL);
	assert_non_null(v);
	same_as_jansson(v, 0, 0);
	same_as_jansson(v, 0, JSONW_TREE_PRETTY);
	json_decref(v);
}

/* A line: the text and one newline, indented or not. */
static void test_tree_line(void **state)
{
	(void)state;
	char buf[256] = "";
	json_t *v = json_pack("{s:[i,f]}", "k", 1, 0.5);
	FILE *f = fmemopen(buf, sizeof buf, "w");
	assert_int_equal(jsonw_tree_line(f, v, 16, 0), 0);
	assert_int_equal(jsonw_tree_line(f, v, 16, JSONW_TREE_PRETTY), 0);
	json_t *s = json_string("x");
	assert_int_equal(jsonw_tree_line(f, s, 16, JSONW_TREE_PRETTY), 0);
	fclose(f);
	assert_string_equal(buf,
	                    "{\"k\":[1,0.5]}\n{\n  \"k\": [\n    1,\n    0.5\n  ]\n}\n\"x\"\n");
	json_decref(v);
	json_decref(s);
}

static void yajl_print(void *ctx, const char *s, size_t n)
{
	FILE *f = ctx;
	fwrite(s, 1, n, f);
}

/* Random bytes: what yajl's generator accepted as UTF-8, and how it escaped them. */
static void test_env_as_yajl_wrote_it(void **state)
{
	(void)state;
	for (int i = 0; i < 20000; i++) {
		unsigned char s[12];
		size_t n = next() % sizeof s;
		for (size_t k = 0; k < n; k++)
			s[k] = (unsigned char)(next() % 3 ? next() % 0x80 : 0x80 + next() % 0x80);
		if (next() % 4 == 0 && n > 0)
			s[next() % n] = "\b\f\x1b\"\\"[next() % 5];
		char want[256] = "", got[256] = "";
		FILE *fy = fmemopen(want, sizeof want, "w"), *fw = fmemopen(got, sizeof got, "w");
		yajl_gen g = yajl_gen_alloc(NULL);
		yajl_gen_config(g, yajl_gen_validate_utf8, 1);
		yajl_gen_config(g, yajl_gen_print_callback, yajl_print, fy);
		yajl_gen_map_open(g);
		bool ok = yajl_gen_string(g, s, n) == yajl_gen_status_ok;
		assert_int_equal(jsonw_utf8_ok((const char *)s, n), ok);
		if (ok) {
			yajl_gen_string(g, s, n);
			yajl_gen_map_close(g);
			jsonw w;
			jsonw_init(&w, fw, false);
			w.esc = JSONW_ESC_SHORT;
			jsonw_obj_begin(&w);
			jsonw_keyn(&w, (const char *)s, n);
			jsonw_strn(&w, (const char *)s, n);
			jsonw_obj_end(&w);
		}
		yajl_gen_free(g);
		fclose(fy);
		fclose(fw);
		if (ok)
			assert_string_equal(got, want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_trees_as_jansson_wrote_them),
	    cmocka_unit_test(test_deep_tree),
	    cmocka_unit_test(test_tree_line),
	    cmocka_unit_test(test_env_as_yajl_wrote_it),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
