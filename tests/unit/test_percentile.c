/*
 * test_percentile.c - tl_percentile and tl_percentiles give, to the bit, what
 * a copy sorted with qsort and linearly interpolated gives: on random data of
 * many sizes, with ties, both signed zeros, infinities, and with NaN.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/timeline.h"

static int cmp_ref(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The definition: sort a copy, interpolate between the two nearest ranks. */
static double ref_percentile(const double *xs, int n, double p)
{
	if (n <= 0)
		return NAN;
	double *c = malloc((size_t)n * sizeof *c);
	assert_non_null(c);
	memcpy(c, xs, (size_t)n * sizeof *c);
	qsort(c, (size_t)n, sizeof *c, cmp_ref);
	double pos = p / 100.0 * (n - 1);
	int lo = (int)floor(pos);
	int hi = lo + 1 < n ? lo + 1 : lo;
	double r = c[lo] + (c[hi] - c[lo]) * (pos - lo);
	free(c);
	return r;
}

static void assert_same_bits(double a, double b)
{
	if (memcmp(&a, &b, sizeof a) != 0)
		fail_msg("%.17g differs from the reference %.17g", a, b);
}

static uint64_t rng = 88172645463325252u;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Kinds of data: continuous, integer percents (many ties), signed zeros and infinities, NaN. */
static double draw(int kind)
{
	uint64_t r = next();
	switch (kind) {
	case 0:
		return (double)(r >> 11) / 9007199254740992.0 * 2000 - 1000;
	case 1:
		return (double)(r % 101);
	case 2: {
		static const double odd[] = {0.0, -0.0, INFINITY, -INFINITY, 1.5, -1.5};
		return odd[r % 6];
	}
	default:
		return r % 7 == 0 ? NAN : (double)(r % 50) / 4;
	}
}

static void check(const double *xs, int n)
{
	static const double ps[] = {0, 1, 2.5, 10, 25, 50, 75, 90, 97.5, 99, 99.9, 100};
	enum { K = sizeof ps / sizeof *ps };
	double got[K];
	tl_percentiles(xs, n, ps, K, got);
	for (int i = 0; i < K; i++) {
		double want = ref_percentile(xs, n, ps[i]);
		assert_same_bits(got[i], want);
		assert_same_bits(tl_percentile(xs, n, ps[i]), want);
	}
	double p = (double)(next() % 100001) / 1000;
	assert_same_bits(tl_percentile(xs, n, p), ref_percentile(xs, n, p));
}

static void test_random_data_matches_sorting(void **state)
{
	(void)state;
	static const int sizes[] = {1, 2, 3, 15, 16, 17, 31, 32, 33, 61, 64, 100, 257, 1000, 3001};
	enum { MAXN = 3001 };
	double *xs = malloc(MAXN * sizeof *xs);
	assert_non_null(xs);
	for (int kind = 0; kind < 4; kind++)
		for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
			for (int rep = 0; rep < 20; rep++) {
				int n = sizes[s];
				for (int i = 0; i < n; i++)
					xs[i] = draw(kind);
				check(xs, n);
			}
	/* Already sorted, reversed, all equal. */
	for (int i = 0; i < 500; i++)
		xs[i] = i;
	check(xs, 500);
	for (int i = 0; i < 500; i++)
		xs[i] = 500 - i;
	check(xs, 500);
	for (int i = 0; i < 500; i++)
		xs[i] = 7;
	check(xs, 500);
	free(xs);
}

static void test_input_left_alone_and_empty_is_nan(void **state)
{
	(void)state;
	double xs[] = {3, 1, 2};
	assert_float_equal(tl_percentile(xs, 3, 50), 2, 0);
	assert_float_equal(xs[0], 3, 0);
	assert_float_equal(xs[1], 1, 0);
	assert_true(isnan(tl_percentile(xs, 0, 50)));
	double ps[] = {10, 90}, out[2];
	tl_percentiles(xs, 0, ps, 2, out);
	assert_true(isnan(out[0]) && isnan(out[1]));
	tl_percentiles(xs, 3, ps, 2, out);
	assert_float_equal(out[0], 1.2, 1e-12);
	assert_float_equal(out[1], 2.8, 1e-12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_random_data_matches_sorting),
	    cmocka_unit_test(test_input_left_alone_and_empty_is_nan),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
