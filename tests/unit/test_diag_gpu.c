/*
 * GPU-level rules on hand-built timelines: a power cap below the default,
 * memory-bound against launch-bound, and the order of findings.
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

#define EPS 1e-6

/* Limit set to 450 W of a 700 W default; the power cap holds clocks at 1500 MHz under load. */
static void cap(timeline *tl, double limit)
{
	for (int s = 0; s < tl->n; s++) {
		tl_set_gpu(tl, 0, GM_POWER_DEFAULT_LIMIT, s, FX_POWER_LIMIT);
		tl_set_gpu(tl, 0, GM_POWER_LIMIT, s, limit);
		tl_set_gpu(tl, 0, GM_POWER_ENFORCED_LIMIT, s, limit);
		tl_set_gpu(tl, 0, GM_POWER_DRAW, s, limit - 5);
		tl_set_gpu(tl, 0, GM_CLK_REASONS, s, 0x4);
		tl_set_gpu(tl, 0, GM_CLK_SM, s, 1500);
	}
}

static void test_power_capped(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	cap(tl, 450);
	diag_result r;
	fx_run(tl, &r);
	const diag_finding *f = fx_expect(&r, "power-capped", DIAG_WARN);
	assert_string_equal(f->title,
	                    "GPU 0 power limit 450 W is below its default 700 W and holds "
	                    "it back 100 % of busy time; clocks at 1500 of 1980 MHz (76 %)");
	assert_float_equal(fx_ev(f, "enforced.power.limit", NULL)->value, 450, EPS);
	assert_float_equal(fx_ev(f, "enforced.power.limit", NULL)->threshold, 665, EPS);
	assert_float_equal(fx_ev(f, "power.default_limit", NULL)->value, 700, EPS);
	assert_float_equal(fx_ev(f, "clocks.current.sm", NULL)->value, 1500, EPS);
	assert_float_equal(fx_ev(f, "power.draw", NULL)->value, 445, EPS);
	fx_expect_none(&r, "throttled"); /* not told twice */
	fx_expect_none(&r, "healthy");
	assert_string_equal(diag_top_finding(&r)->id, "power-capped");
	diag_result_free(&r);

	/* At the default limit the power cap is the board's design: information only. */
	tl_free(tl);
	tl = fx_healthy();
	cap(tl, FX_POWER_LIMIT);
	fx_run(tl, &r);
	fx_expect_none(&r, "power-capped");
	fx_expect(&r, "throttled", DIAG_INFO);
	diag_result_free(&r);

	/* A lowered limit the job never reaches (clocks at full speed): nothing to say. */
	tl_free(tl);
	tl = fx_healthy();
	cap(tl, 650);
	for (int s = 0; s < tl->n; s++) {
		tl_set_gpu(tl, 0, GM_CLK_REASONS, s, 0);
		tl_set_gpu(tl, 0, GM_CLK_SM, s, FX_CLK_MAX);
		tl_set_gpu(tl, 0, GM_POWER_DRAW, s, 500);
	}
	fx_run(tl, &r);
	fx_expect_none(&r, "power-capped");
	fx_expect(&r, "healthy", DIAG_INFO);
	diag_result_free(&r);
	tl_free(tl);
}

/* DRAM busy, SMs moderately active, utilization high, power low: memory-bound, not launch-bound. */
static void test_memory_over_launch(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	for (int s = 0; s < tl->n; s++) {
		tl_set_gpu(tl, 0, GM_GPM_DRAM_ACTIVE, s, 85);
		tl_set_gpu(tl, 0, GM_GPM_SM_ACTIVE, s, 35);
		tl_set_gpu(tl, 0, GM_POWER_DRAW, s, 300);
	}
	diag_result r;
	fx_run(tl, &r);
	fx_expect(&r, "memory-bound", DIAG_WARN);
	fx_expect_none(&r, "launch-bound");
	assert_string_equal(diag_top_finding(&r)->id, "memory-bound");
	diag_result_free(&r);

	/* The same with DRAM quiet: small kernels. */
	for (int s = 0; s < tl->n; s++)
		tl_set_gpu(tl, 0, GM_GPM_DRAM_ACTIVE, s, 20);
	fx_run(tl, &r);
	fx_expect(&r, "launch-bound", DIAG_WARN);
	fx_expect_none(&r, "memory-bound");
	diag_result_free(&r);
	tl_free(tl);
}

/* Within one severity the more confident finding comes first, and is the top one. */
static void test_order_by_confidence(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	for (int s = 0; s < tl->n; s++) {
		tl_set_gpu(tl, 0, GM_PCIE_GEN_CUR, s, 3); /* pcie-degraded, 0.85 */
		tl_set_gpu(tl, 0, GM_MEM_USED, s, 79000); /* oom-risk, 0.8 */
	}
	diag_result r;
	fx_run(tl, &r);
	assert_true(r.n >= 2);
	assert_string_equal(r.f[0].id, "pcie-degraded");
	assert_string_equal(r.f[1].id, "oom-risk");
	for (int i = 1; i < r.n; i++)
		assert_true(r.f[i - 1].severity > r.f[i].severity ||
		            (r.f[i - 1].severity == r.f[i].severity &&
		             r.f[i - 1].confidence >= r.f[i].confidence));
	assert_ptr_equal(diag_top_finding(&r), &r.f[0]);
	diag_result_free(&r);
	tl_free(tl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_power_capped),
	    cmocka_unit_test(test_memory_over_launch),
	    cmocka_unit_test(test_order_by_confidence),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
