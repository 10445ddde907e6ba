/*
 * test_compare_host.c - compare on a loaded host: a run that other
 * processes slowed confounds the comparison, and a claim the load could
 * fake (in its one direction) is withheld while within the step excess
 * that load explains. The threshold itself never grows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "diag_fixture.h"

/*
 * n steps of floor seconds (+-2 ms of jitter); about one in stall_every held up
 * stall seconds longer, at scattered steps as load stalls them (not every
 * stall_every-th: a strict period is the job's own pattern).
 */
static void steps(timeline *tl, double floor, int n, int stall_every, double stall)
{
	tl->nsteps = 0;
	double t = 0.5;
	uint32_t x = 12345;
	for (int k = 0; k < n; k++) {
		tl_add_step(tl, t, k);
		t += floor + 0.001 * ((k * 37) % 5 - 2);
		x = x * 1103515245u + 12345u;
		if (stall_every && (x >> 16) % (unsigned)stall_every == 0)
			t += stall;
	}
}

/* Every core busy: four other processes at about 70 % of a core each beside the job. */
static void load_host(timeline *tl)
{
	for (int s = 0; s < tl->n; s++) {
		tl_set_host(tl, HM_CPU_BUSY_AVG, s, 100);
		for (unsigned k = 0; k < 4; k++)
			fx_proc(tl, s, 9000 + k, -1, false, true, NAN, 70 - k);
	}
}

static void compare(const timeline *a, const timeline *b, diag_comparison *c)
{
	diag_opts o;
	diag_opts_default(&o);
	diag_compare(a, NULL, b, NULL, &o, c);
}

static void test_calm_hosts(void **state)
{
	(void)state;
	timeline *a = fx_healthy(), *b = fx_healthy();
	steps(a, 0.100, 300, 0, 0);
	steps(b, 0.100, 300, 4, 0.012);
	diag_comparison c;
	compare(a, b, &c);
	/* Cores to spare: not loaded, so the stalls are the candidate's own. */
	assert_false(c.load_base.loaded);
	assert_false(c.load_cand.loaded);
	assert_false(c.confounded);
	assert_true(isnan(c.interference_pct));
	assert_int_equal(c.verdict, 1);
	diag_comparison_free(&c);
	tl_free(a);
	tl_free(b);
}

static void test_loaded_identical(void **state)
{
	(void)state;
	timeline *a = fx_healthy(), *b = fx_healthy();
	steps(a, 0.100, 300, 0, 0);
	steps(b, 0.100, 300, 4, 0.012); /* the same job, a step in four held up 12 ms */
	load_host(b);
	diag_comparison c;
	compare(a, b, &c);
	assert_false(c.load_base.loaded);
	assert_true(c.load_cand.loaded);
	assert_true(c.confounded);
	/* The others' CPU: the processes outside the job that the recorder named (70+69+68+67),
	 * never the host's busy share beyond the job's (it holds the recorder and the kernel). */
	assert_float_equal(c.load_cand.others_cpu, 274, 1e-6);
	assert_int_equal(c.load_cand.nhogs, 3);
	assert_int_equal(c.load_cand.hog[0].pid, 9000);
	assert_float_equal(c.load_cand.hog[0].cpu, 70, 1e-9);
	assert_int_equal(c.load_cand.hog[2].pid, 9002);
	assert_string_equal(c.load_cand.hog[0].cmd, "python other.py");
	/* The bound is what the loaded candidate's mean has above its quickest steps
	 * (in % of the base's mean), and the change lies within it. */
	double ec = c.load_cand.excess_pct;
	assert_float_equal(c.interference_pct, 100 * c.mean.cand * ec / (100 + ec) / c.mean.base,
	                   1e-9);
	assert_false(c.interference_against);
	assert_true(c.interference_pct > 2);
	assert_float_equal(c.min_diff_pct, 2, 0); /* load never raises the threshold */
	assert_true(c.mean.lo > 0);               /* significant ... */
	assert_int_equal(c.steps.verdict, 1);     /* ... and meaningful ... */
	assert_int_equal(c.verdict, 0);           /* ... but the load can explain it */
	assert_false(c.below_min_diff);
	assert_true(c.withheld_by_load);
	diag_comparison_free(&c);
	/* The other way round: a loaded base does not make the candidate faster. */
	compare(b, a, &c);
	assert_true(c.load_base.loaded && c.confounded);
	assert_int_equal(c.verdict, 0);
	assert_true(c.withheld_by_load);
	diag_comparison_free(&c);
	tl_free(a);
	tl_free(b);
}

static void test_loaded_real_change(void **state)
{
	(void)state;
	timeline *a = fx_healthy(), *b = fx_healthy();
	steps(a, 0.100, 300, 4, 0.012);
	steps(b, 0.110, 300, 4, 0.012); /* 10 % slower, and held up as much */
	load_host(a);
	load_host(b);
	diag_comparison c;
	compare(a, b, &c);
	assert_true(c.confounded);
	assert_true(c.diff_pct > c.interference_pct);
	assert_int_equal(c.verdict, 1);
	assert_false(c.withheld_by_load);
	diag_comparison_free(&c);
	tl_free(a);
	tl_free(b);
}

/* Load only slows: a loaded candidate that is faster anyway is faster. */
static void test_loaded_candidate_faster(void **state)
{
	(void)state;
	timeline *a = fx_healthy(), *b = fx_healthy();
	steps(a, 0.100, 300, 0, 0);
	steps(b, 0.050, 300, 3, 0.090); /* a step in three held up 90 ms: mean 80 ms, p10 50 */
	load_host(b);
	diag_comparison c;
	compare(a, b, &c);
	assert_true(c.confounded && c.load_cand.loaded && !c.load_base.loaded);
	assert_true(c.load_cand.excess_pct > -c.diff_pct); /* the excess alone would mask it */
	assert_float_equal(c.interference_pct, 0, 0);
	assert_true(c.interference_against);
	assert_int_equal(c.verdict, -1);
	assert_false(c.withheld_by_load);
	diag_comparison_free(&c);
	/* The same pair the other way: the loaded run is the base, and the
	 * candidate looks slower than the base's quickest steps: slower. */
	compare(b, a, &c);
	assert_true(c.load_base.loaded && c.confounded);
	assert_true(c.interference_against);
	assert_int_equal(c.verdict, 1);
	diag_comparison_free(&c);
	tl_free(a);
	tl_free(b);
}

/* Both runs loaded: a faster candidate counts once it is beyond what the
 * base's own excess explains, whatever the candidate's excess. */
static void test_loaded_both_faster(void **state)
{
	(void)state;
	timeline *a = fx_healthy(), *b = fx_healthy();
	steps(a, 0.080, 300, 4, 0.040); /* mean 90 ms, p10 about 80: excess about 12 % */
	steps(b, 0.030, 300, 3, 0.060); /* mean 50 ms, p10 about 30: excess about 66 % */
	load_host(a);
	load_host(b);
	diag_comparison c;
	compare(a, b, &c);
	assert_true(c.confounded);
	double eb = c.load_base.excess_pct;
	assert_true(c.load_cand.excess_pct > -c.diff_pct); /* the larger excess would mask it */
	assert_float_equal(c.interference_pct, 100 * eb / (100 + eb), 1e-9);
	assert_true(-c.diff_pct > c.interference_pct);
	assert_int_equal(c.verdict, -1);
	diag_comparison_free(&c);
	tl_free(a);
	tl_free(b);
}

static void test_no_steps(void **state)
{
	(void)state;
	timeline *a = fx_healthy(), *b = fx_healthy();
	a->nsteps = b->nsteps = 0;
	load_host(b);
	diag_comparison c;
	compare(a, b, &c);
	/* Loaded, but without step times nothing bounds the load's effect. */
	assert_true(c.confounded);
	assert_true(isnan(c.interference_pct));
	assert_true(isnan(c.load_cand.excess_pct));
	diag_comparison_free(&c);
	tl_free(a);
	tl_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_calm_hosts),
	    cmocka_unit_test(test_loaded_identical),
	    cmocka_unit_test(test_loaded_real_change),
	    cmocka_unit_test(test_loaded_candidate_faster),
	    cmocka_unit_test(test_loaded_both_faster),
	    cmocka_unit_test(test_no_steps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
