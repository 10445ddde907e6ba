/* gw_dl_load: all symbols or none, and errors in the words the failing command prints. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "util/dl.h"
#include "util/err.h"
#include "util/fail.h"

typedef struct {
	size_t (*len)(const char *);
	int (*cmp)(const char *, const char *);
} str_api;

static size_t stand_in_len(const char *s)
{
	(void)s;
	return 0;
}

static const char *const libc_names[] = {"libgpuwhy-none.so.1", "libc.so.6"};

static gw_dl_lib lib_of(const gw_dl_sym *syms, size_t n)
{
	gw_dl_lib l = {.names = libc_names,
	               .n_names = 2,
	               .install = "apt-get install libc6",
	               .minimum = "glibc 2.31",
	               .syms = syms,
	               .n_syms = n};
	return l;
}

static void test_fills_every_field(void **state)
{
	(void)state;
	static const gw_dl_sym syms[] = {GW_DL_SYM(str_api, len, "strlen"),
	                                 GW_DL_SYM(str_api, cmp, "strcmp")};
	str_api t = {stand_in_len, NULL};
	gw_fail err = {0};
	gw_dl_lib l = lib_of(syms, 2);
	/* The first name does not exist: the next one is tried. */
	assert_int_equal(gw_dl_load(&l, &t, &err), 0);
	assert_non_null(t.cmp);
	assert_int_equal(t.len("four"), 4);
	assert_int_equal(t.cmp("a", "a"), 0);
}

static void test_missing_symbol_leaves_table(void **state)
{
	(void)state;
	static const gw_dl_sym syms[] = {GW_DL_SYM(str_api, len, "strlen"),
	                                 GW_DL_SYM(str_api, cmp, "gpuwhy_no_such_symbol")};
	str_api t = {stand_in_len, NULL};
	gw_fail err = {0};
	gw_dl_lib l = lib_of(syms, 2);
	assert_int_equal(gw_dl_load(&l, &t, &err), GW_EXIT_ENV);
	assert_string_equal(err.what, "libgpuwhy-none.so.1");
	assert_string_equal(err.why,
	                    "libgpuwhy-none.so.1 has no gpuwhy_no_such_symbol (glibc 2.31 or "
	                    "newer is needed)");
	/* All or nothing: strlen, found first, did not replace the stand-in. */
	assert_true(t.len == stand_in_len);
	assert_null(t.cmp);
}

static void test_missing_library(void **state)
{
	(void)state;
	static const gw_dl_sym syms[] = {GW_DL_SYM(str_api, len, "strlen")};
	static const char *const none[] = {"libgpuwhy-none.so.1", "libgpuwhy-none.so"};
	str_api t = {stand_in_len, NULL};
	gw_fail err = {0};
	gw_dl_lib l = lib_of(syms, 1);
	l.names = none;
	assert_int_equal(gw_dl_load(&l, &t, &err), GW_EXIT_ENV);
	assert_string_equal(err.what, "libgpuwhy-none.so.1");
	assert_string_equal(err.why, "cannot load libgpuwhy-none.so.1 (apt-get install libc6)");
	assert_true(t.len == stand_in_len);
}

/* gw_fail: the parts kept apart, the line put together as gw_error prints it. */
static void test_fail_text(void **state)
{
	(void)state;
	gw_fail f;
	char line[1200];
	assert_int_equal(gw_fail_set(&f, 3, "run.gpuwhy", "check the path", "cannot %s", "open"),
	                 3);
	assert_string_equal(gw_fail_text(&f, line, sizeof line),
	                    "run.gpuwhy: cannot open (check the path)");
	assert_int_equal(gw_fail_set(&f, 2, "--gpus", NULL, "empty GPU list"), 2);
	assert_string_equal(f.hint, "");
	assert_string_equal(gw_fail_text(&f, line, sizeof line), "--gpus: empty GPU list");
	assert_int_equal(gw_fail_set(NULL, 3, "x", NULL, "y"), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fills_every_field),
	    cmocka_unit_test(test_missing_symbol_leaves_table),
	    cmocka_unit_test(test_missing_library),
	    cmocka_unit_test(test_fail_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
