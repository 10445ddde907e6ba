/*
 * Step lines and compare on hand-built timelines: bursts of buffered lines,
 * the minimum meaningful difference, and one analysed window for the run
 * summary, the report and compare.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag_fixture.h"
#include "record/summary.h"

#define EPS 1e-6

/* n steps of dt seconds with a deterministic jitter of +-jit seconds. */
static void steps_every(timeline *tl, double dt, int n, double jit)
{
	tl->nsteps = 0;
	for (int k = 0; k < n; k++)
		tl_add_step(tl, 0.5 + k * dt + jit * ((k * 37) % 5 - 2) / 2, k);
}

/* Buffered output: 80 lines at once every 8 s (0.1 s steps). */
static void steps_bursty(timeline *tl)
{
	tl->nsteps = 0;
	for (int b = 0; b < 12; b++)
		for (int k = 0; k < 80; k++)
			tl_add_step(tl, 8.0 * (b + 1) + 1e-5 * k, b * 80 + k);
}

static void test_step_bursts(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	steps_bursty(tl);
	diag_result r;
	fx_run(tl, &r);
	assert_true(r.steps.bursty);
	const diag_finding *f = diag_find(&r, "step-bursts");
	assert_non_null(f);
	assert_int_equal(f->severity, DIAG_WARN);
	assert_non_null(strstr(f->advice, "PYTHONUNBUFFERED=1"));
	assert_non_null(strstr(f->advice, "GPUWHY_STEP_FD"));
	assert_float_equal(fx_ev(f, "steps", "share of intervals")->value, 100.0 * 948 / 959, 1e-6);
	assert_float_equal(fx_ev(f, "steps", "gaps between bursts")->value, 11, EPS);
	diag_result_free(&r);

	/* Steady steps, and a genuinely sub-millisecond loop: no bursts. */
	steps_every(tl, 0.1, 500, 0.002);
	fx_run(tl, &r);
	assert_false(r.steps.bursty);
	assert_null(diag_find(&r, "step-bursts"));
	diag_result_free(&r);
	steps_every(tl, 0.0002, 500, 0);
	tl->duration = 0.2; /* the loop is the whole run */
	fx_run(tl, &r);
	assert_false(r.steps.bursty);
	diag_result_free(&r);
	/* ... unless those lines all came in the last sliver of a two-minute run (one flush). */
	tl->duration = 120;
	fx_run(tl, &r);
	assert_true(r.steps.bursty);
	assert_float_equal(fx_ev(diag_find(&r, "step-bursts"), "steps", "run time per step")->value,
	                   120.0 / 500, EPS);
	diag_result_free(&r);
	tl_free(tl);
}

/* Bursty steps are not compared as timed: the run time decides, without an interval. */
static void test_compare_bursty(void **state)
{
	(void)state;
	timeline *a = fx_healthy(), *b = fx_healthy();
	steps_bursty(a);
	steps_every(b, 0.1, 900, 0.002);
	a->duration = b->duration = 100;
	diag_opts o;
	diag_opts_default(&o);
	diag_comparison c;
	diag_compare(a, NULL, b, NULL, &o, &c);
	assert_true(c.steps_bursty);
	assert_false(c.by_steps);
	assert_int_equal(c.verdict, 0);
	diag_comparison_free(&c);
	tl_free(a);
	tl_free(b);
}

/* Identical configurations 0.07 % apart: significant, but no meaningful change; 10 % is found. */
static void test_compare_min_diff(void **state)
{
	(void)state;
	timeline *a = fx_healthy(), *b = fx_healthy();
	steps_every(a, 0.1000, 2000, 0.0001);
	steps_every(b, 0.10007, 2000, 0.0001);
	diag_opts o;
	diag_opts_default(&o);
	diag_comparison c;
	diag_compare(a, NULL, b, NULL, &o, &c);
	assert_true(c.mean.lo > 0);     /* the interval excludes zero ... */
	assert_int_equal(c.verdict, 0); /* ... yet the change is below the default 2 % */
	assert_true(c.below_min_diff);
	assert_float_equal(c.min_diff_pct, 2, EPS);
	assert_float_equal(c.diff_pct, 0.07, 0.001);
	diag_comparison_free(&c);

	steps_every(b, 0.110, 2000, 0.0001);
	diag_compare(a, NULL, b, NULL, &o, &c);
	assert_int_equal(c.verdict, 1);
	assert_false(c.below_min_diff);
	diag_comparison_free(&c);

	/* Settable: at 15 % the 10 % change is no meaningful change either. */
	assert_true(diag_threshold_set(&o.th, "compare_min_diff_pct=15"));
	diag_compare(a, NULL, b, NULL, &o, &c);
	assert_int_equal(c.verdict, 0);
	assert_true(c.below_min_diff);
	diag_comparison_free(&c);

	/*
	 * Timestamps printed in whole ms, steps of 4 and 4.1 ms: the mean step is the
	 * span over the count, so the timer moves it by at most 1 ms / n. Over 2000
	 * steps that is 0.5 us a side and the 2.5 % is found; over 20 steps (56 us a
	 * side) it cannot be told. The threshold stays what it is set to.
	 */
	diag_opts_default(&o);
	for (int n = 2000; n >= 20; n /= 100) {
		a->nsteps = b->nsteps = 0;
		for (int k = 0; k < n; k++) {
			tl_add_step(a, 0.5 + 0.001 * (k * 4), k);
			tl_add_step(b, 0.5 + 0.001 * (k * 41 / 10), k);
		}
		diag_compare(a, NULL, b, NULL, &o, &c);
		assert_true(c.by_steps);
		assert_float_equal(c.base.steps.resolution, 0.001, EPS);
		assert_float_equal(c.min_diff_pct, 2, EPS);
		assert_float_equal(c.steps.quantum, 2 * 0.001 / (n - 2), 1e-12);
		assert_int_equal(c.verdict, n == 2000 ? 1 : 0);
		diag_comparison_free(&c);
	}
	tl_free(a);
	tl_free(b);
}

/* The run summary prints the diagnosis's window and its numbers, the same as the report's. */
static void test_one_window(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	/* Idle for the first 30 samples (loading), GPU lost for the last 20. */
	for (int s = 0; s < 30; s++) {
		tl_set_gpu(tl, 0, GM_UTIL_GPU, s, 0);
		tl_set_gpu(tl, 0, GM_GPM_SM_ACTIVE, s, 0);
	}
	for (int s = 100; s < tl->n; s++)
		for (int m = 0; m < GM__COUNT; m++)
			if (tl->gpu[0].m[m])
				tl->gpu[0].m[m][s] = NAN;
	tl->gpu[0].lost_at_end = true;
	tl->duration = 120;
	diag_result r;
	fx_run(tl, &r);
	assert_float_equal(r.t_from, 29, EPS);
	assert_float_equal(r.t_to, 99, EPS);
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	summary_print(tl, "x.gpuwhy", m);
	fclose(m);
	assert_non_null(strstr(buf, "analysed 29.0-99.0 s"));
	char want[64];
	snprintf(want, sizeof want, "util mean %.0f %%", r.gpu[0].util_mean);
	assert_non_null(strstr(buf, want));
	free(buf);
	diag_run_summary su;
	diag_summarize(tl, &r, &su);
	assert_float_equal(su.util_mean, r.gpu[0].util_mean, EPS);
	assert_float_equal(su.t_from, r.t_from, EPS);
	assert_float_equal(su.t_to, r.t_to, EPS);
	diag_result_free(&r);
	tl_free(tl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_step_bursts),
	    cmocka_unit_test(test_compare_bursty),
	    cmocka_unit_test(test_compare_min_diff),
	    cmocka_unit_test(test_one_window),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
