/* gw_term_safe: control characters escaped, printable text (UTF-8 too) kept. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "util/termsafe.h"

static const char *safe(const char *s)
{
	static char buf[512];
	return gw_term_safe(s, buf, sizeof buf);
}

static void test_plain_kept(void **state)
{
	(void)state;
	assert_string_equal(safe("python train.py --lr 3e-4"), "python train.py --lr 3e-4");
	assert_string_equal(safe("résumé 训练 ✓"), "résumé 训练 ✓");
	assert_string_equal(safe(""), "");
	assert_string_equal(safe(NULL), "");
	assert_string_equal(safe("back\\slash"), "back\\slash");
}

static void test_c0_escaped(void **state)
{
	(void)state;
	assert_string_equal(safe("a\nb\rc\td"), "a\\nb\\rc\\td");
	assert_string_equal(safe("x\033]0;pwned\007y"), "x\\x1b]0;pwned\\x07y");
	assert_string_equal(safe("\033[2J"), "\\x1b[2J");
	assert_string_equal(safe("del\177"), "del\\x7f");
}

static void test_c1_and_invalid(void **state)
{
	(void)state;
	/* U+009B (CSI) as UTF-8, and as a raw byte that is not UTF-8 */
	assert_string_equal(safe("a\xc2\x9b"
	                         "31mb"),
	                    "a\\u009b31mb");
	assert_string_equal(safe("a\x9b"
	                         "31mb"),
	                    "a\\x9b31mb");
	/* a truncated sequence, an overlong NUL, a surrogate */
	assert_string_equal(safe("\xe4\xb8"), "\\xe4\\xb8");
	assert_string_equal(safe("\xc0\x80"), "\\xc0\\x80");
	assert_string_equal(safe("\xed\xa0\x80"), "\\xed\\xa0\\x80");
	/* right-to-left override (U+202E) reorders what a terminal shows */
	assert_string_equal(safe("evil\xe2\x80\xaetxt"), "evil\\u202etxt");
}

static void test_cut_at_boundary(void **state)
{
	(void)state;
	char out[6];
	/* "\\n" does not fit after "abcd": cut before it, never inside */
	assert_string_equal(gw_term_safe("abcd\nef", out, sizeof out), "abcd");
	/* a 3-byte character is never split */
	assert_string_equal(gw_term_safe("abc训", out, sizeof out), "abc");
	char one[1];
	assert_string_equal(gw_term_safe("abc", one, sizeof one), "");
	char big[GW_TERM_SAFE_LEN(4)];
	assert_string_equal(gw_term_safe("\001\002\003\004", big, sizeof big),
	                    "\\x01\\x02\\x03\\x04");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_plain_kept),
	    cmocka_unit_test(test_c0_escaped),
	    cmocka_unit_test(test_c1_and_invalid),
	    cmocka_unit_test(test_cut_at_boundary),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
