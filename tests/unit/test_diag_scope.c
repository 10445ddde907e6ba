/*
 * Diagnosis outside the lab, on hand-built timelines: GPUs in scope whether
 * or not their processes are visible (containers, machine-wide recordings),
 * and what the process rules could not check.
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

/* 89 C with thermal slowdown in 25 of every 30 samples. */
static void hot(timeline *tl)
{
	for (int s = 0; s < tl->n; s++) {
		tl_set_gpu(tl, 0, GM_TEMP_GPU, s, 89);
		if (s % 30 < 25) {
			tl_set_gpu(tl, 0, GM_CLK_REASONS, s, 0x40);
			tl_set_gpu(tl, 0, GM_CLK_SM, s, 1300);
		}
	}
}

/* Record without --pid, and the job in another PID namespace: no process seen on the GPU. */
static void test_machine_wide_hot(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	tl->have_root = false;
	tl->nprocs = 0;
	hot(tl);
	diag_result r;
	fx_run(tl, &r);
	assert_int_equal(r.njob, 1);
	const diag_finding *f = fx_expect(&r, "throttled", DIAG_ERROR);
	assert_string_equal(diag_top_finding(&r)->id, "throttled");
	assert_float_equal(fx_ev(f, "clocks_event_reasons", "thermal")->value, 100.0 * 100 / 120,
	                   EPS);
	fx_expect_none(&r, "healthy");
	f = fx_expect(&r, "not-checked", DIAG_INFO);
	assert_non_null(strstr(f->title, "not visible"));
	assert_non_null(strstr(f->title, "host-wide"));
	assert_non_null(strstr(f->note, "not-on-gpu"));
	/* chain step 5 reads the power and temperature that are in the file */
	assert_int_equal(r.chain[4].status, DIAG_STEP_PROBLEM);
	assert_null(strstr(r.chain[4].answer, "No power or temperature"));
	diag_result_free(&r);

	/* The job in another PID namespace: the GPU lists a PID this host does not know. */
	tl->have_root = true;
	for (int s = 0; s < tl->n; s++)
		fx_proc(tl, s, 912345, 0, false, false, 40000, NAN);
	fx_run(tl, &r);
	fx_expect(&r, "throttled", DIAG_ERROR);
	fx_expect_none(&r, "not-on-gpu");
	fx_expect_none(&r, "contention"); /* not a leak: nothing resolves here */
	fx_expect(&r, "not-checked", DIAG_INFO);
	diag_result_free(&r);
	tl->nprocs = 0;

	/* Following a job whose processes are not visible there: the same, and no not-on-gpu. */
	tl->have_root = true;
	fx_run(tl, &r);
	fx_expect(&r, "throttled", DIAG_ERROR);
	fx_expect_none(&r, "not-on-gpu");
	f = fx_expect(&r, "not-checked", DIAG_INFO);
	assert_non_null(strstr(f->title, "job's processes are not visible"));
	assert_int_equal(diag_exit_code(&r), 1);
	diag_result_free(&r);
	tl_free(tl);
}

/* An AMD GPU that reports throttle reasons is judged for throttling, and says what else
 * was not checked; an NVIDIA GPU with the same readings does not. */
static void test_amd_with_reasons(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	hot(tl);
	snprintf(tl->gpu[0].vendor, sizeof tl->gpu[0].vendor, "amd");
	diag_result r;
	fx_run(tl, &r);
	fx_expect(&r, "throttled", DIAG_ERROR);
	const diag_finding *f = fx_expect(&r, "not-checked", DIAG_INFO);
	assert_non_null(strstr(f->title, "GPU 0 is AMD"));
	assert_non_null(strstr(f->note, "power-capped"));
	assert_non_null(strstr(f->note, "Xid"));
	assert_non_null(strstr(f->advice, "rocprof"));
	assert_null(strstr(f->title, "no clock-event reasons"));
	diag_result_free(&r);

	snprintf(tl->gpu[0].vendor, sizeof tl->gpu[0].vendor, "nvidia");
	fx_run(tl, &r);
	fx_expect(&r, "throttled", DIAG_ERROR);
	fx_expect_none(&r, "not-checked");
	diag_result_free(&r);
	tl_free(tl);
}

/* GPU counters alone (a Prometheus window): a missing reasons series may just not be
 * exported, so only a GPU known to be AMD's says its throttling was not checked. */
static void test_gpu_only_amd(void **state)
{
	(void)state;
	timeline *tl = tl_new(2, 0);
	for (int s = 0; s < 120; s++) {
		tl_add_sample(tl, s);
		for (int g = 0; g < 2; g++) {
			tl_set_gpu(tl, g, GM_UTIL_GPU, s, 90);
			tl_set_gpu(tl, g, GM_MEM_USED, s, 1000);
			tl_set_gpu(tl, g, GM_MEM_TOTAL, s, 80000);
		}
	}
	snprintf(tl->gpu[1].vendor, sizeof tl->gpu[1].vendor, "amd");
	diag_result r;
	fx_run(tl, &r);
	int n = 0;
	for (int i = 0; i < r.n; i++)
		if (diag_not_checked_gpus(&r.f[i])) {
			n++;
			assert_int_equal(r.f[i].gpus, 2); /* GPU 1 alone */
			assert_non_null(strstr(r.f[i].title, "no clock-event reasons"));
		}
	assert_int_equal(n, 1);
	diag_result_free(&r);
	tl_free(tl);
}

/* A degraded link on a GPU that works for someone unseen. */
static void test_machine_wide_pcie(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	tl->have_root = false;
	tl->nprocs = 0;
	for (int s = 0; s < tl->n; s++) {
		tl_set_gpu(tl, 0, GM_PCIE_GEN_CUR, s, 3);
		tl_set_gpu(tl, 0, GM_PCIE_WIDTH_CUR, s, 8);
	}
	diag_result r;
	fx_run(tl, &r);
	fx_expect(&r, "pcie-degraded", DIAG_WARN);
	assert_string_equal(diag_top_finding(&r)->id, "pcie-degraded");
	diag_result_free(&r);
	tl_free(tl);
}

/* Memory held with the SMs idle counts as work too; an idle board does not. */
static void test_scope_memory_only(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	tl->have_root = false;
	tl->nprocs = 0;
	for (int s = 0; s < tl->n; s++) {
		tl_set_gpu(tl, 0, GM_UTIL_GPU, s, 2);
		tl_set_gpu(tl, 0, GM_GPM_SM_ACTIVE, s, 1);
		tl_set_gpu(tl, 0, GM_MEM_USED, s, 76000);
	}
	diag_result r;
	fx_run(tl, &r);
	assert_int_equal(r.njob, 1);
	fx_expect(&r, "memory-full-compute-idle", DIAG_WARN);
	diag_result_free(&r);
	for (int s = 0; s < tl->n; s++)
		tl_set_gpu(tl, 0, GM_MEM_USED, s, 300);
	fx_run(tl, &r);
	assert_int_equal(r.njob, 0);
	fx_expect_none(&r, "not-checked");
	fx_expect_none(&r, "low-utilization");
	diag_result_free(&r);
	tl_free(tl);
}

/* A 0.6 s job with 3 samples, one recording with none: no confident verdict either way. */
static void test_too_little_data(void **state)
{
	(void)state;
	timeline *tl = tl_new(1, 2);
	tl->have_root = true;
	tl->gpu[0].index = 0;
	for (int i = 0; i < 3; i++) {
		int s = tl_add_sample(tl, 0.3 * i);
		fx_gpu_busy(tl, 0, s);
	}
	tl->duration = 0.6;
	tl_proc *p = tl_add_proc(tl); /* the job's process, seen before its context existed */
	p->s = 0;
	p->pid = FX_PID;
	p->gpu = -1;
	p->in_tree = p->alive = true;
	p->cpu_pct = 100;
	diag_result r;
	fx_run(tl, &r);
	const diag_finding *f = fx_expect(&r, "too-little-data", DIAG_INFO);
	assert_string_equal(f->title, "3 samples over 0.6 s: too short to judge; record longer or "
	                              "use --interval 100ms");
	assert_float_equal(fx_ev(f, "samples", "in the analysed window")->value, 3, EPS);
	assert_float_equal(fx_ev(f, "samples", "in the analysed window")->threshold, 5, EPS);
	assert_int_equal(diag_exit_code(&r), 0);
	fx_expect_none(&r, "healthy");
	for (int i = 0; i < r.n; i++)
		assert_true(r.f[i].severity < DIAG_ERROR);
	assert_string_equal(diag_top_finding(&r)->id, "too-little-data");
	diag_result_free(&r);
	tl_free(tl);

	tl = tl_new(1, 2);
	fx_run(tl, &r);
	f = fx_expect(&r, "too-little-data", DIAG_INFO);
	assert_non_null(strstr(f->title, "No samples"));
	fx_expect_none(&r, "healthy");
	assert_int_equal(r.n, 1);
	diag_result_free(&r);
	tl_free(tl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_machine_wide_hot),  cmocka_unit_test(test_amd_with_reasons),
	    cmocka_unit_test(test_machine_wide_pcie), cmocka_unit_test(test_scope_memory_only),
	    cmocka_unit_test(test_too_little_data),   cmocka_unit_test(test_gpu_only_amd),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
