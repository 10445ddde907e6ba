/* test_busy_compare.c - windows without step times compared by the GPUs' busy share: a large
 * change is claimed, equal windows are the same, and a slow square wave cut at different
 * phases (autocorrelated samples: a naive test on independent samples would claim 20 points)
 * is inconclusive, never a change. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "diagnose/diag.h"

/* One GPU, n samples 15 s apart, utilization u(s). */
static timeline *window(int n, double (*u)(int s, int salt), int salt)
{
	timeline *tl = tl_new(1, 0);
	for (int s = 0; s < n; s++) {
		tl_add_sample(tl, 15.0 * s);
		tl_set_gpu(tl, 0, GM_UTIL_GPU, s, u(s, salt));
	}
	return tl;
}

/* A small deterministic noise in [-1, 1]. */
static double jitter(int s, int salt)
{
	uint64_t x =
	    (uint64_t)(s + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)salt * 0xC2B2AE3D27D4EB4Full;
	x ^= x >> 31;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 29;
	return (double)(x >> 11) / 4503599627370496.0 - 1;
}

static double busy(int s, int salt)
{
	return 94 + 3 * jitter(s, salt);
}

static double starved(int s, int salt)
{
	return (s % 6 == 0 ? 90 : 5) + 3 * jitter(s, salt);
}

/* Busy for 20 samples, idle for 20; salt 0 starts busy, 1 idle. */
static double square(int s, int salt)
{
	return ((s / 20 + salt) % 2 ? 0 : 100) + jitter(s, 3);
}

static void compare(timeline *a, timeline *b, diag_busy_cmp *c)
{
	const timeline *pa = a, *pb = b;
	diag_busy_compare(&pa, 1, &pb, 1, 2, c);
	tl_free(a);
	tl_free(b);
}

static void test_busy_compare(void **state)
{
	(void)state;
	diag_busy_cmp c;
	compare(window(480, busy, 1), window(480, starved, 2), &c);
	assert_int_equal(c.verdict, DIAG_BUSY_LESS);
	assert_string_equal(diag_busy_verdict_id(c.verdict), "less-busy");
	assert_true(c.diff < -70 && c.hi < -60);
	assert_true(fabs(c.side[0].gpu_hours - 2) < 0.01);
	assert_true(c.side[1].not_busy_h > 1.5);
	compare(window(480, starved, 2), window(480, busy, 1), &c);
	assert_int_equal(c.verdict, DIAG_BUSY_MORE);
	compare(window(480, busy, 1), window(480, busy, 7), &c);
	assert_int_equal(c.verdict, DIAG_BUSY_SAME);
	assert_true(c.lo > -2 && c.hi < 2);
	/* 60 % against 40 % busy, each a cut of the same slow wave: too few cycles to tell */
	compare(window(100, square, 0), window(100, square, 1), &c);
	assert_true(fabs(c.diff + 20) < 1);
	assert_true(c.side[0].block >= 10 && c.side[1].block >= 10); /* blocks, not samples */
	assert_int_equal(c.verdict, DIAG_BUSY_UNSURE);
	assert_string_equal(diag_busy_verdict_id(c.verdict), "inconclusive");
	/* too few samples: no comparison */
	compare(window(1, busy, 1), window(480, busy, 2), &c);
	assert_int_equal(c.verdict, DIAG_BUSY_NONE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_busy_compare),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
