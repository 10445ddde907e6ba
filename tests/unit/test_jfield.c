/* The one strict field reader (sim/jfield.c): types, ranges, sizes, absent and null keys,
 * NULs in strings, unknown keys, and the fault's row and value for the reader's message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <string.h>

#include "jfield.h"

typedef struct {
	int small;
	long long big;
	double ratio;
	bool on;
	char name[8];
	const char *text;
} thing;

static const jf_field rows[] = {
    JF_I("small", thing, small, -5, 5),
    JF_I("big", thing, big, 0, INT64_MAX),
    {.key = "ratio", .type = JF_NUM, .dlo = 0, .dhi = 1, .off = offsetof(thing, ratio)},
    JF_B("on", thing, on),
    JF_S("name", thing, name),
    {.key = "text", .type = JF_TEXT, .req = true, .off = offsetof(thing, text)},
};
#define N (sizeof rows / sizeof *rows)

static jf_fault read_text(const char *json, unsigned flags, thing *t, const char **bad_key)
{
	json_t *o = json_loads(json, JSON_ALLOW_NUL, NULL);
	assert_non_null(o);
	const jf_field *bad = NULL;
	const json_t *val = NULL;
	jf_fault r = jf_read(rows, N, o, flags, t, &bad, &val);
	*bad_key = r == JF_OK ? NULL : bad->key;
	if (r == JF_MISSING)
		assert_null(val);
	else if (r != JF_OK)
		assert_non_null(val);
	json_decref(o);
	return r;
}

static void test_read_and_store(void **state)
{
	(void)state;
	thing t = {.small = 9, .big = 9};
	const char *bad;
	/* text stays in the tree: check it before the tree goes. */
	json_t *o = json_loads("{\"small\": -5, \"big\": 9007199254740993, \"ratio\": 1, \"on\": "
	                       "true, \"name\": \"abcdefg\", \"text\": \"t\"}",
	                       0, NULL);
	const jf_field *row;
	const json_t *val;
	assert_int_equal(jf_read(rows, N, o, 0, &t, &row, &val), JF_OK);
	assert_int_equal(t.small, -5);
	assert_true(t.big == 9007199254740993LL);
	assert_true(t.ratio == 1.0);
	assert_true(t.on);
	assert_string_equal(t.name, "abcdefg");
	assert_string_equal(t.text, "t");
	json_decref(o);

	thing u = {.small = 3};
	assert_int_equal(read_text("{\"small\": 6, \"text\": \"\"}", 0, &u, &bad), JF_RANGE);
	assert_string_equal(bad, "small");
	assert_int_equal(u.small, 3); /* a bad value is not stored */
	assert_int_equal(read_text("{\"small\": 1.0, \"text\": \"\"}", 0, &u, &bad), JF_TYPE);
	assert_int_equal(read_text("{\"big\": -1, \"text\": \"\"}", 0, &u, &bad), JF_RANGE);
	assert_int_equal(read_text("{\"ratio\": 1.5, \"text\": \"\"}", 0, &u, &bad), JF_RANGE);
	assert_int_equal(read_text("{\"ratio\": \"x\", \"text\": \"\"}", 0, &u, &bad), JF_TYPE);
	assert_int_equal(read_text("{\"on\": 1, \"text\": \"\"}", 0, &u, &bad), JF_TYPE);
	assert_string_equal(bad, "on");
	assert_int_equal(read_text("{\"name\": \"abcdefgh\", \"text\": \"\"}", 0, &u, &bad),
	                 JF_TOO_LONG);
	assert_int_equal(read_text("{\"small\": 1}", 0, &u, &bad), JF_MISSING);
	assert_string_equal(bad, "text");
	assert_int_equal(u.small, 1); /* rows before the fault are stored */
}

static void test_null_and_nul(void **state)
{
	(void)state;
	thing t = {.small = 2};
	const char *bad;
	/* null: a wrong type, or absent when the reader says so */
	assert_int_equal(read_text("{\"small\": null, \"text\": \"\"}", 0, &t, &bad), JF_TYPE);
	assert_int_equal(read_text("{\"small\": null, \"text\": \"\"}", JF_NULL_ABSENT, &t, &bad),
	                 JF_OK);
	assert_int_equal(t.small, 2);
	assert_int_equal(read_text("{\"text\": null}", JF_NULL_ABSENT, &t, &bad), JF_MISSING);
	/* a NUL inside a string: refused, or the string cut there */
	assert_int_equal(read_text("{\"name\": \"a\\u0000b\", \"text\": \"\"}", 0, &t, &bad),
	                 JF_NUL);
	assert_int_equal(
	    read_text("{\"name\": \"a\\u0000b\", \"text\": \"\"}", JF_NUL_CUTS, &t, &bad), JF_OK);
	assert_string_equal(t.name, "a");
}

static void test_unknown_keys(void **state)
{
	(void)state;
	static const char *const more[] = {"extra", NULL};
	json_t *o = json_loads("{\"small\": 1, \"extra\": 2, \"smal\": 3, \"zz\": 4}", 0, NULL);
	assert_string_equal(jf_unknown(o, rows, N, more), "smal"); /* the first, in file order */
	assert_string_equal(jf_unknown(o, NULL, 0, more), "small");
	json_object_del(o, "smal");
	json_object_del(o, "zz");
	assert_null(jf_unknown(o, rows, N, more));
	assert_non_null(jf_unknown(o, rows, N, NULL));
	assert_ptr_equal(jf_find(rows, N, "on"), &rows[3]);
	assert_null(jf_find(rows, N, "off"));
	json_decref(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_read_and_store),
	    cmocka_unit_test(test_null_and_nul),
	    cmocka_unit_test(test_unknown_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
