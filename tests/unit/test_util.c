/* Strict value parsers, the JSON writer, the string buffer, xalloc, the binary's path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/jsonw.h"
#include "util/hash.h"
#include "util/parse.h"
#include "util/selfexe.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

static void test_int(void **state)
{
	(void)state;
	long long v;
	assert_true(gw_parse_int("42", 0, 100, &v));
	assert_int_equal(v, 42);
	assert_false(gw_parse_int("101", 0, 100, &v));
	assert_false(gw_parse_int("4x", 0, 100, &v));
	assert_false(gw_parse_int("", 0, 100, &v));
	assert_false(gw_parse_int("99999999999999999999999", 0, 1LL << 62, &v));
}

static void test_duration(void **state)
{
	(void)state;
	int64_t ns;
	assert_true(gw_parse_duration_ns("100ms", 1000000000LL, &ns));
	assert_int_equal(ns, 100000000LL);
	assert_true(gw_parse_duration_ns("1.5s", 1000000000LL, &ns));
	assert_int_equal(ns, 1500000000LL);
	assert_true(gw_parse_duration_ns("2", 1000000000LL, &ns));
	assert_int_equal(ns, 2000000000LL);
	assert_true(gw_parse_duration_ns("10m", 1000000000LL, &ns));
	assert_int_equal(ns, 600000000000LL);
	assert_true(gw_parse_duration_ns("2h", 1000000000LL, &ns));
	assert_false(gw_parse_duration_ns("5x", 1000000000LL, &ns));
	assert_false(gw_parse_duration_ns("-1s", 1000000000LL, &ns));
	assert_false(gw_parse_duration_ns("s", 1000000000LL, &ns));
	assert_false(gw_parse_duration_ns("1e300s", 1000000000LL, &ns));
}

static void test_size(void **state)
{
	(void)state;
	uint64_t b;
	assert_true(gw_parse_size_bytes("12G", &b));
	assert_int_equal(b, 12ULL << 30);
	assert_true(gw_parse_size_bytes("512MiB", &b));
	assert_int_equal(b, 512ULL << 20);
	assert_true(gw_parse_size_bytes("1.5g", &b));
	assert_int_equal(b, 3ULL << 29);
	assert_true(gw_parse_size_bytes("2048", &b));
	assert_int_equal(b, 2048);
	assert_false(gw_parse_size_bytes("12X", &b));
	assert_false(gw_parse_size_bytes("G", &b));
	assert_false(gw_parse_size_bytes("12GBx", &b));
	assert_true(gw_parse_size_bytes("3kb", &b));
	assert_int_equal(b, 3072);
	assert_true(gw_parse_size_bytes("100B", &b));
	assert_int_equal(b, 100);
	assert_false(gw_parse_size_bytes("100Bx", &b));
	assert_false(gw_parse_size_bytes("1|", &b));
	assert_true(gw_size_unit('t') == 1024.0 * 1024 * 1024 * 1024);
	assert_true(gw_size_unit('B') == 0);
}

/* The published FNV-1a test vectors, and a continued hash equals the whole one. */
static void test_fnv(void **state)
{
	(void)state;
	assert_int_equal(gw_fnv1a32("", GW_FNV32_BASIS), 0x811c9dc5u);
	assert_int_equal(gw_fnv1a32("a", GW_FNV32_BASIS), 0xe40c292cu);
	assert_int_equal(gw_fnv1a32("foobar", GW_FNV32_BASIS), 0xbf9cf968u);
	assert_true(gw_fnv1a64("a", GW_FNV64_BASIS) == 0xaf63dc4c8601ec8cULL);
	assert_true(gw_fnv1a64("foobar", GW_FNV64_BASIS) == 0x85944171f73967e8ULL);
	assert_true(gw_fnv1a64("bar", gw_fnv1a64("foo", GW_FNV64_BASIS)) ==
	            gw_fnv1a64("foobar", GW_FNV64_BASIS));
}

static void test_double_locale_independent(void **state)
{
	(void)state;
	double d;
	/* Under a comma-decimal locale, 4.25 must still be 4.25 (if the locale exists). */
	setlocale(LC_NUMERIC, "de_DE.UTF-8");
	assert_true(gw_parse_double("4.25", &d));
	assert_true(d == 4.25);
	setlocale(LC_NUMERIC, "C");
	assert_false(gw_parse_double("4,25", &d));
	assert_false(gw_parse_double("nan", &d));
}

static void test_jsonw(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	jsonw w;
	jsonw_init(&w, f, false);
	jsonw_obj_begin(&w);
	jsonw_key(&w, "a");
	jsonw_int(&w, 1);
	jsonw_key(&w, "s");
	jsonw_str(&w, "q\"\n\x01");
	jsonw_key(&w, "arr");
	jsonw_arr_begin(&w);
	jsonw_num(&w, 1.5);
	jsonw_null(&w);
	jsonw_bool(&w, true);
	jsonw_num(&w, 0.0 / 0.0);
	jsonw_arr_end(&w);
	jsonw_key(&w, "o");
	jsonw_obj_begin(&w);
	jsonw_obj_end(&w);
	jsonw_obj_end(&w);
	fclose(f);
	assert_string_equal(
	    buf, "{\"a\":1,\"s\":\"q\\\"\\n\\u0001\",\"arr\":[1.5,null,true,null],\"o\":{}}");
	free(buf);
}

static void test_strbuf(void **state)
{
	(void)state;
	gw_strbuf b = {0};
	assert_string_equal(gw_sb_str(&b), "");
	gw_sb_sep(&b, ", ");
	assert_int_equal(b.len, 0);
	gw_sb_puts(&b, "a");
	gw_sb_sep(&b, ", ");
	gw_sb_putc(&b, 'b');
	gw_sb_put(&b, "c\0d", 3);
	assert_int_equal(b.len, 7);
	assert_memory_equal(b.p, "a, bc\0d", 8); /* bytes kept as given, NUL after them */
	/* printf past the first allocation: the whole text, in one piece */
	char big[5000];
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	gw_sb_clear(&b);
	gw_sb_printf(&b, "<%s|%d>", big, 42);
	assert_int_equal(b.len, sizeof big - 1 + 5);
	assert_int_equal(strlen(gw_sb_str(&b)), b.len);
	assert_string_equal(b.p + b.len - 4, "|42>");
	char *t = gw_sb_take(&b);
	assert_null(b.p);
	assert_int_equal(b.len, 0);
	assert_int_equal(t[0], '<');
	free(t);
	t = gw_sb_take(&b); /* empty: still a string */
	assert_string_equal(t, "");
	free(t);
	gw_sb_free(&b);
}

static void test_xalloc(void **state)
{
	(void)state;
	char *s = gw_xstrndup("abcdef", 3);
	assert_string_equal(s, "abc");
	free(s);
	s = gw_xstrdup("");
	assert_string_equal(s, "");
	free(s);
	int *v = gw_xcalloc(4, sizeof *v);
	assert_int_equal(v[3], 0);
	v = gw_xreallocarray(v, 8, sizeof *v);
	v[7] = 7;
	free(v);
	free(gw_xmalloc(0)); /* a valid pointer even for 0 bytes */
}

static void test_self_exe(void **state)
{
	(void)state;
	const char *exe = gw_self_exe();
	assert_non_null(exe);
	assert_int_equal(exe[0], '/');
	assert_non_null(strstr(exe, "test_util"));
	assert_ptr_equal(gw_self_exe(), exe); /* read once */
	char dir[4096];
	assert_int_equal(gw_self_dir(dir, sizeof dir), 0);
	assert_int_equal(strncmp(exe, dir, strlen(dir)), 0);
	assert_int_equal(exe[strlen(dir)], '/');
	assert_int_equal(gw_self_dir(dir, 2), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_int),    cmocka_unit_test(test_duration),
	    cmocka_unit_test(test_size),   cmocka_unit_test(test_double_locale_independent),
	    cmocka_unit_test(test_jsonw),  cmocka_unit_test(test_strbuf),
	    cmocka_unit_test(test_xalloc), cmocka_unit_test(test_self_exe),
	    cmocka_unit_test(test_fnv),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
