/*
 * test_timeline_weights.c - statistics weighted by the time each sample
 * covers: a recording that samples every 100 ms during its first second and
 * every second afterwards must not let that first second dominate.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "model/timeline.h"

/* 11 samples 0.0 .. 1.0 s at 100 ms (value 0: idle while loading), then 9 at 1 s (100). */
static timeline *uneven(void)
{
	timeline *tl = tl_new(1, 1);
	assert_non_null(tl);
	for (int i = 0; i <= 10; i++) {
		int s = tl_add_sample(tl, 0.1 * i);
		tl_set_gpu(tl, 0, GM_UTIL_GPU, s, 0);
	}
	for (int i = 2; i <= 10; i++) {
		int s = tl_add_sample(tl, (double)i);
		tl_set_gpu(tl, 0, GM_UTIL_GPU, s, 100);
	}
	return tl;
}

static void test_weights_follow_the_sample_times(void **state)
{
	(void)state;
	timeline *tl = uneven();
	assert_int_equal(tl->n, 20);
	/* The first sample covers as long as the second. */
	assert_float_equal(tl_weight(tl, 0), 0.1, 1e-9);
	assert_float_equal(tl_weight(tl, 5), 0.1, 1e-9);
	assert_float_equal(tl_weight(tl, 11), 1.0, 1e-9);
	assert_float_equal(tl_weight(tl, 99), 0, 0);
	const double *u = tl->gpu[0].m[GM_UTIL_GPU];
	/* Unweighted, the busy 9 s count as 9 of 20 samples; weighted, as 9 of 10.1 s. */
	assert_float_equal(tl_mean(u, 0, tl->n), 45.0, 1e-9);
	assert_float_equal(tl_wmean(tl, u, 0, tl->n), 900.0 / 10.1, 1e-9);
	assert_float_equal(tl_wshare(tl, u, 0, tl->n, tl_pred_le, 5), 1.1 / 10.1, 1e-9);
	/* A window and absent values. */
	assert_float_equal(tl_wmean(tl, u, 11, tl->n), 100.0, 1e-9);
	tl_set_gpu(tl, 0, GM_UTIL_GPU, 12, NAN);
	assert_float_equal(tl_wmean(tl, u, 11, tl->n), 100.0, 1e-9);
	assert_true(isnan(tl_wmean(tl, u, 3, 3)));
	assert_true(isnan(tl_wmean(tl, NULL, 0, tl->n)));
	assert_true(isnan(tl_wshare(tl, NULL, 0, tl->n, tl_pred_le, 5)));
	tl_free(tl);
}

static void test_even_samples_weigh_alike(void **state)
{
	(void)state;
	timeline *tl = tl_new(1, 1);
	double v[] = {10, 20, 60, 90};
	for (int i = 0; i < 4; i++) {
		int s = tl_add_sample(tl, 2.0 * i);
		tl_set_gpu(tl, 0, GM_UTIL_GPU, s, v[i]);
	}
	const double *u = tl->gpu[0].m[GM_UTIL_GPU];
	assert_float_equal(tl_wmean(tl, u, 0, 4), tl_mean(u, 0, 4), 1e-9);
	assert_float_equal(tl_wshare(tl, u, 0, 4, tl_pred_ge, 50),
	                   tl_share(u, 0, 4, tl_pred_ge, 50), 1e-9);
	/* One sample: weight 1, its own value. */
	timeline *one = tl_new(1, 1);
	tl_set_gpu(one, 0, GM_UTIL_GPU, tl_add_sample(one, 0), 42);
	assert_float_equal(tl_weight(one, 0), 1, 0);
	assert_float_equal(tl_wmean(one, one->gpu[0].m[GM_UTIL_GPU], 0, 1), 42, 1e-9);
	tl_free(one);
	tl_free(tl);
}

/* A timeline of known length holds that many samples in every series, those set later too,
 * not the next power of two (a day at 15 s is 5,761 samples, not 8,192). */
static void test_reserve_exact(void **state)
{
	(void)state;
	timeline *tl = tl_new(1, 0);
	tl_reserve(tl, 5761);
	for (int s = 0; s < 5761; s++)
		tl_add_sample(tl, 15.0 * s);
	tl_set_gpu(tl, 0, GM_UTIL_GPU, 5760, 42);
	assert_int_equal(tl->cap, 5761);
	assert_true(tl_gpu_at(tl, 0, GM_UTIL_GPU, 5760) == 42);
	assert_true(isnan(tl_gpu_at(tl, 0, GM_UTIL_GPU, 0)));
	/* and it still grows past it */
	tl_add_sample(tl, 15.0 * 5761);
	tl_set_gpu(tl, 0, GM_UTIL_GPU, 5761, 7);
	assert_true(tl->cap > 5761);
	assert_true(tl_gpu_at(tl, 0, GM_UTIL_GPU, 5761) == 7);
	assert_true(tl_gpu_at(tl, 0, GM_UTIL_GPU, 5760) == 42);
	tl_free(tl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_weights_follow_the_sample_times),
	    cmocka_unit_test(test_even_samples_weigh_alike),
	    cmocka_unit_test(test_reserve_exact),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
