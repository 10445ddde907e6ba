/*
 * test_stepcmp.c - the one comparison of step times on synthetic series:
 * periodic steps whatever their count's parity, identical series, a run
 * that only warms up, several runs a side with an outlier, a 1 % change at
 * the default threshold and at 0, equivalence, and Student's t against its tables.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "diagnose/diag.h"

/* A fixed generator, so every run of the suite sees the same series. */
static uint64_t rng_state;

static double uniform(void)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* Normal noise (Box-Muller). */
static double gauss(void)
{
	double u = uniform(), v = uniform();
	return sqrt(-2 * log(u > 0 ? u : 1e-300)) * cos(2 * M_PI * v);
}

/* n steps alternating lo, hi (two loader workers taking turns), with jitter sd. */
static void alternating(double *x, int n, double lo, double hi, double sd)
{
	for (int i = 0; i < n; i++)
		x[i] = (i % 2 ? hi : lo) + sd * gauss();
}

static void steady(double *x, int n, double mean, double sd)
{
	for (int i = 0; i < n; i++)
		x[i] = mean + sd * gauss();
}

static void compare1(const double *a, int na, const double *b, int nb, double min_diff,
                     diag_step_cmp *c)
{
	diag_run_steps ra = {a, na, NAN}, rb = {b, nb, NAN};
	diag_step_compare(&ra, 1, &rb, 1, min_diff, c);
}

/* Student's t quantiles against the printed tables (two-sided 95 %). */
static void test_t_quantiles(void **state)
{
	(void)state;
	static const double df[] = {1, 2, 4, 10, 30};
	static const double q[] = {12.706, 4.303, 2.776, 2.228, 2.042};
	for (int i = 0; i < 5; i++)
		assert_float_equal(diag_t_quantile(0.975, df[i]), q[i], 5e-4);
	assert_float_equal(diag_t_quantile(0.975, INFINITY), 1.960, 5e-4);
	assert_float_equal(diag_t_quantile(0.5, 7), 0, 1e-9);
	assert_float_equal(diag_t_quantile(0.025, 4), -2.776, 5e-4);
	assert_float_equal(diag_t_cdf(2.228, 10), 0.975, 1e-4);
}

/*
 * Two workers: steps alternate 20 and 40 ms. The same job twice as fast
 * (10/20 ms) is faster whatever the parity of either count; once the
 * halves' medians (20 against 40 ms with an odd half) made this "no
 * change".
 */
static void test_alternating_parity(void **state)
{
	(void)state;
	double a[40], b[40];
	for (int na = 37; na <= 40; na++)
		for (int nb = 37; nb <= 40; nb++) {
			rng_state = (uint64_t)(na * 100 + nb);
			alternating(a, na, 0.040, 0.020, 0.001);
			alternating(b, nb, 0.020, 0.010, 0.001);
			diag_step_cmp c;
			compare1(a, na, b, nb, 2, &c);
			assert_int_equal(c.method, DIAG_CMP_WITHIN);
			assert_int_equal(c.verdict, -1);
			assert_float_equal(c.diff_pct, -50, 2);
			assert_int_equal(c.run[0][0].period, 2);
			assert_int_equal(c.run[0][0].block % 2, 0); /* whole periods per block */
			assert_int_equal(c.drift_side, -1);         /* no drift is made of parity */
		}
}

/* The same periodic series on both sides: no claim, and no caveat. */
static void test_identical_periodic(void **state)
{
	(void)state;
	double a[60];
	rng_state = 7;
	for (int i = 0; i < 60; i++)
		a[i] = (i % 4 == 3 ? 0.080 : 0.020) + 0.001 * gauss(); /* accumulation every 4th */
	diag_step_cmp c;
	compare1(a, 60, a, 60, 2, &c);
	assert_int_equal(c.verdict, 0);
	assert_false(c.significant);
	assert_float_equal(c.diff, 0, 0);
	assert_int_equal(c.run[0][0].period, 4);
	assert_int_equal(c.drift_side, -1);
	/* Nor at a threshold of 0: the interval alone decides. */
	compare1(a, 60, a, 60, 0, &c);
	assert_int_equal(c.verdict, 0);
}

/*
 * A run that warms up (its first steps slow, settling) against a steady one
 * twice as slow: faster, with the drift as a caveat; and the same warm-up
 * on both sides: no claim, the caveat still said.
 */
static void test_warmup_caveat(void **state)
{
	(void)state;
	double a[80], b[80];
	rng_state = 11;
	steady(a, 80, 0.100, 0.002);
	for (int i = 0; i < 80; i++)
		b[i] = 0.050 + 0.060 * exp(-i / 12.0) + 0.002 * gauss();
	diag_step_cmp c;
	compare1(a, 80, b, 80, 2, &c);
	assert_int_equal(c.verdict, -1);
	assert_int_equal(c.drift_side, 1);
	assert_true(c.run[1][0].drift_pct < -10);
	compare1(b, 80, b, 80, 2, &c);
	assert_int_equal(c.verdict, 0);
	assert_int_equal(c.drift_side, 0);
}

/*
 * Three runs a side: run-to-run variance is measured. The same job, with
 * one candidate run far off (a disturbed run): no claim, and the outlier
 * named. A real 10 % change over three runs a side: found.
 */
static void test_runs_outlier(void **state)
{
	(void)state;
	double x[6][50];
	rng_state = 23;
	for (int r = 0; r < 6; r++)
		steady(x[r], 50, r == 5 ? 0.130 : 0.100, 0.003);
	diag_run_steps base[3], cand[3];
	for (int r = 0; r < 3; r++) {
		base[r] = (diag_run_steps){x[r], 50, NAN};
		cand[r] = (diag_run_steps){x[3 + r], 50, NAN};
	}
	diag_step_cmp c;
	diag_step_compare(base, 3, cand, 3, 2, &c);
	assert_int_equal(c.method, DIAG_CMP_RUNS);
	assert_float_equal(c.df, 2, 0.5); /* the candidate's spread dominates: about 2 df */
	assert_int_equal(c.verdict, 0);
	assert_false(c.significant);
	assert_int_equal(c.outlier_side, 1);
	assert_int_equal(c.outlier_run, 2);

	for (int r = 3; r < 6; r++)
		steady(x[r], 50, 0.110, 0.003);
	diag_step_compare(base, 3, cand, 3, 2, &c);
	assert_int_equal(c.verdict, 1);
	assert_float_equal(c.diff_pct, 10, 1);
	assert_int_equal(c.outlier_side, -1);
}

/*
 * "No meaningful change" is an equivalence claim: the whole interval within
 * the threshold. Twenty noisy steps a side that differ by nothing leave an
 * interval that holds 0 and reaches past 2 %: no claim, and not "no change".
 * Two thousand steps bound it inside 2 %. A threshold of 0 never says "no change".
 */
static void test_equivalence(void **state)
{
	(void)state;
	enum { N = 2000 };
	static double a[N], b[N];
	rng_state = 7;
	steady(a, N, 0.100, 0.010);
	steady(b, N, 0.100, 0.010);
	diag_step_cmp c;
	compare1(a, 20, b, 20, 2, &c);
	assert_int_equal(c.verdict, 0);
	assert_true(c.lo_pct < 0 && c.hi_pct > 0);
	assert_true(c.lo_pct < -2 || c.hi_pct > 2);
	assert_false(c.equivalent);
	compare1(a, N, b, N, 2, &c);
	assert_int_equal(c.verdict, 0);
	assert_true(c.lo_pct > -2 && c.hi_pct < 2);
	assert_true(c.equivalent);
	compare1(a, N, b, N, 0, &c);
	assert_false(c.equivalent);
	/* A 0.5 % change whose whole interval is inside the threshold: no meaningful change. */
	steady(b, N, 0.1005, 0.010);
	compare1(a, N, b, N, 2, &c);
	assert_int_equal(c.verdict, 0);
	assert_true(c.equivalent);
}

/*
 * A real 1 % change: no meaningful change at the default 2 %, and slower
 * with the threshold at 0 once enough runs measure it. Nothing else stands
 * between the interval and the verdict.
 */
static void test_one_percent(void **state)
{
	(void)state;
	enum { R = 8, N = 200 };
	static double x[2 * R][N];
	rng_state = 31;
	diag_run_steps base[R], cand[R];
	for (int r = 0; r < R; r++) {
		steady(x[r], N, 0.100, 0.002);
		steady(x[R + r], N, 0.101, 0.002);
		base[r] = (diag_run_steps){x[r], N, NAN};
		cand[r] = (diag_run_steps){x[R + r], N, NAN};
	}
	diag_step_cmp c;
	diag_step_compare(base, R, cand, R, 2, &c);
	assert_true(c.significant);
	assert_true(c.below_min_diff);
	assert_int_equal(c.verdict, 0);
	diag_step_compare(base, R, cand, R, 0, &c);
	assert_int_equal(c.verdict, 1);
	assert_float_equal(c.diff_pct, 1, 0.2);
	/* One run a side says only what one run can show: with the threshold at 0 it is
	 * the interval alone as well. */
	compare1(x[0], N, x[R], N, 0, &c);
	assert_int_equal(c.method, DIAG_CMP_WITHIN);
	assert_int_equal(c.verdict, c.significant ? 1 : 0);
}

/* Positively correlated steps (a slow stretch) widen the interval beyond var/n. */
static void test_autocorrelated(void **state)
{
	(void)state;
	double a[400];
	rng_state = 41;
	double e = 0;
	for (int i = 0; i < 400; i++) {
		e = 0.9 * e + 0.002 * gauss(); /* AR(1), phi 0.9 */
		a[i] = 0.100 + e;
	}
	diag_run_noise nz;
	diag_run_noise_of(a, 400, &nz);
	double s2 = 0;
	for (int i = 0; i < 400; i++)
		s2 += (a[i] - nz.mean) * (a[i] - nz.mean);
	double iid = s2 / 399 / 400;
	assert_true(nz.block > 1);
	/* The long-run variance of AR(1) is (1 + phi) / (1 - phi) = 19 times var/n. */
	assert_true(nz.var_mean > 5 * iid);
	assert_true(nz.var_mean < 40 * iid);
	/* Independent steps: blocks of one (or nearly), the variance about var/n. */
	steady(a, 400, 0.100, 0.002);
	diag_run_noise_of(a, 400, &nz);
	assert_true(nz.block <= 2);
}

/* Too few steps on a side: no method, no claim. */
static void test_too_few(void **state)
{
	(void)state;
	double a[1] = {0.1}, b[30];
	steady(b, 30, 0.05, 0.001);
	diag_step_cmp c;
	compare1(a, 1, b, 30, 2, &c);
	assert_int_equal(c.method, DIAG_CMP_NONE);
	assert_int_equal(c.verdict, 0);
	assert_true(isnan(c.diff));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_t_quantiles),
	    cmocka_unit_test(test_alternating_parity),
	    cmocka_unit_test(test_identical_periodic),
	    cmocka_unit_test(test_warmup_caveat),
	    cmocka_unit_test(test_runs_outlier),
	    cmocka_unit_test(test_one_percent),
	    cmocka_unit_test(test_equivalence),
	    cmocka_unit_test(test_autocorrelated),
	    cmocka_unit_test(test_too_few),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
