/* test_exporter_findings.c - the exporter's built-in live checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "exporter/exporter.h"

static void set(exp_gpu *g, gpu_metric_id id, double v)
{
	g->vals.v[id] = v;
	g->vals.ok[id] = 1;
}

/* A healthy, busy GPU at full link speed. */
static void healthy(exp_gpu *g, int index)
{
	memset(g, 0, sizeof *g);
	g->index = index;
	set(g, GM_UTIL_GPU, 95);
	set(g, GM_CLK_REASONS, 0);
	set(g, GM_PCIE_GEN_CUR, 5);
	set(g, GM_PCIE_GEN_MAX, 5);
	set(g, GM_PCIE_WIDTH_CUR, 16);
	set(g, GM_PCIE_WIDTH_MAX, 16);
}

static int run(const exp_snapshot *s, exp_finding *out, int max)
{
	const exp_snapshot *snaps[1] = {s};
	exp_window w = {snaps, 1, NULL};
	return exp_live_findings(NULL, &w, out, max);
}

static void expect_one(const exp_snapshot *s, int gpu, const char *rule, exp_severity sev)
{
	exp_finding f[8];
	int n = run(s, f, 8);
	assert_int_equal(n, 1);
	assert_int_equal(f[0].gpu, gpu);
	assert_string_equal(f[0].rule, rule);
	assert_int_equal(f[0].severity, sev);
}

static void test_healthy_has_none(void **state)
{
	exp_snapshot *s = exp_snapshot_new(2);
	healthy(&s->gpus[0], 0);
	healthy(&s->gpus[1], 1);
	exp_finding f[8];
	assert_int_equal(run(s, f, 8), 0);
	/* Idle: gpu_idle alone is not throttling, a lowered gen while idle is power saving. */
	set(&s->gpus[1], GM_CLK_REASONS, 0x1);
	set(&s->gpus[1], GM_UTIL_GPU, 0);
	set(&s->gpus[1], GM_PCIE_GEN_CUR, 1);
	assert_int_equal(run(s, f, 8), 0);
	/* Unknown values decide nothing. */
	memset(s->gpus[0].vals.ok, 0, sizeof s->gpus[0].vals.ok);
	assert_int_equal(run(s, f, 8), 0);
	exp_snapshot_free(s);
}

static void test_throttled_severity(void **state)
{
	exp_snapshot *s = exp_snapshot_new(2);
	healthy(&s->gpus[0], 0);
	healthy(&s->gpus[1], 5);
	set(&s->gpus[1], GM_CLK_REASONS, 0x4); /* sw power cap */
	expect_one(s, 5, "throttled", EXP_SEV_INFO);
	set(&s->gpus[1], GM_CLK_REASONS, 0x4 | 0x20); /* + sw thermal */
	expect_one(s, 5, "throttled", EXP_SEV_WARN);
	set(&s->gpus[1], GM_CLK_REASONS, 0x1 | 0x40); /* hw thermal, even with idle */
	expect_one(s, 5, "throttled", EXP_SEV_ERROR);
	set(&s->gpus[1], GM_CLK_REASONS, 0x8);
	expect_one(s, 5, "throttled", EXP_SEV_ERROR);
	set(&s->gpus[1], GM_CLK_REASONS, 0x80);
	expect_one(s, 5, "throttled", EXP_SEV_ERROR);
	set(&s->gpus[1], GM_CLK_REASONS, 0x1000); /* a bit NVML does not define */
	exp_finding f[8];
	assert_int_equal(run(s, f, 8), 0);
	exp_snapshot_free(s);
}

static void test_pcie_degraded(void **state)
{
	exp_snapshot *s = exp_snapshot_new(1);
	healthy(&s->gpus[0], 3);
	set(&s->gpus[0], GM_PCIE_WIDTH_CUR, 8);
	expect_one(s, 3, "pcie_degraded", EXP_SEV_WARN);
	/* Width is degraded even when idle. */
	set(&s->gpus[0], GM_UTIL_GPU, 0);
	expect_one(s, 3, "pcie_degraded", EXP_SEV_WARN);
	/* Generation only counts while busy. */
	set(&s->gpus[0], GM_PCIE_WIDTH_CUR, 16);
	set(&s->gpus[0], GM_PCIE_GEN_CUR, 3);
	exp_finding f[8];
	assert_int_equal(run(s, f, 8), 0);
	set(&s->gpus[0], GM_UTIL_GPU, 40);
	expect_one(s, 3, "pcie_degraded", EXP_SEV_WARN);
	exp_snapshot_free(s);
}

static void test_lost_and_bounds(void **state)
{
	exp_snapshot *s = exp_snapshot_new(3);
	for (int i = 0; i < 3; i++) {
		healthy(&s->gpus[i], i);
		set(&s->gpus[i], GM_CLK_REASONS, 0x40);
		set(&s->gpus[i], GM_PCIE_WIDTH_CUR, 4);
	}
	s->gpus[1].vals.lost = true;
	exp_finding f[8];
	int n = run(s, f, 8);
	assert_int_equal(n, 5);
	assert_int_equal(f[2].gpu, 1);
	assert_string_equal(f[2].rule, "gpu_lost");
	assert_int_equal(f[2].severity, EXP_SEV_ERROR);
	/* Never more than max. */
	assert_int_equal(run(s, f, 2), 2);
	/* An empty window has no findings. */
	exp_window w = {NULL, 0, NULL};
	assert_int_equal(exp_live_findings(NULL, &w, f, 8), 0);
	exp_snapshot_free(s);
}

/* The window as the timeline diagnosis rules read. */
static void test_window_timeline(void **state)
{
	exp_snapshot *s[3];
	for (int k = 0; k < 3; k++) {
		s[k] = exp_snapshot_new(2);
		s[k]->t_wall = 1000.0 + k;
		snprintf(s[k]->driver, sizeof s[k]->driver, "550.54.15");
		for (int g = 0; g < 2; g++) {
			healthy(&s[k]->gpus[g], 4 + g);
			snprintf(s[k]->gpus[g].uuid, sizeof s[k]->gpus[g].uuid, "GPU-%d", g);
			set(&s[k]->gpus[g], GM_UTIL_GPU, 10 * k + g);
		}
		exp_host *h = &s[k]->host;
		h->present = true;
		h->cpu_busy = (exp_val){true, 0.5};
		h->mem_used = (exp_val){true, 2 * 1048576.0};
		assert_int_equal(exp_host_reserve(h, 2), 0);
		h->ncpus = 2;
		h->cpus[0] = (exp_cpu){.id = 0, .busy = {true, 0.25}, .iowait = {true, 0.0}};
		h->cpus[1] = (exp_cpu){.id = 3, .busy = {true, 0.75}, .iowait = {false, 0}};
		exp_gpu *g0 = &s[k]->gpus[0];
		g0->nprocs = 1;
		g0->procs[0] = (exp_proc){.pid = 77,
		                          .command = "python3",
		                          .mem_ok = true,
		                          .mem_bytes = 3 * 1048576ULL,
		                          .sm_ok = true,
		                          .sm_ratio = 0.5};
	}
	s[1]->gpus[0].vals.ok[GM_UTIL_GPU] = 0; /* absent in the middle */
	s[2]->gpus[1].vals.lost = true;
	timeline *cache = NULL;
	exp_window w = {(const exp_snapshot *const *)s, 3, &cache};
	const timeline *tl = exp_window_timeline(&w);
	assert_non_null(tl);
	assert_ptr_equal(exp_window_timeline(&w), tl); /* built once */
	assert_int_equal(tl->n, 3);
	assert_int_equal(tl->ngpu, 2);
	assert_true(tl->t[2] == 2.0);
	assert_true(tl->t0_wall == 1000.0);
	assert_int_equal(tl->gpu[1].index, 5);
	assert_string_equal(tl->gpu[1].uuid, "GPU-1");
	assert_true(tl->gpu[1].lost_at_end);
	assert_string_equal(tl->driver, "550.54.15");
	assert_true(tl_gpu_at(tl, 0, GM_UTIL_GPU, 0) == 0);
	assert_true(isnan(tl_gpu_at(tl, 0, GM_UTIL_GPU, 1)));
	assert_true(tl_gpu_at(tl, 0, GM_UTIL_GPU, 2) == 20);
	assert_true(isnan(tl_gpu_at(tl, 1, GM_UTIL_GPU, 2))); /* lost: absent */
	assert_true(tl_gpu_at(tl, 1, GM_UTIL_GPU, 1) == 11);
	assert_true(tl_host_at(tl, HM_CPU_BUSY_AVG, 0) == 50);
	assert_true(tl_host_at(tl, HM_MEM_USED, 1) == 2);
	assert_true(tl_host_at(tl, HM_CPU_BUSY_MAX, 2) == 75);
	assert_true(tl_host_at(tl, HM_CPU_BUSY_MAX_CORE, 2) == 3);
	assert_true(isnan(tl_host_at(tl, HM_SWAP_USED, 0)));
	assert_int_equal(tl->ncpu, 4);
	assert_true(tl->cpu_busy[3][1] == 75);
	assert_true(isnan(tl->cpu_iowait[3][1]));
	assert_null(tl->cpu_busy[1]); /* no such CPU */
	assert_int_equal(tl->nprocs, 3);
	assert_int_equal(tl->procs[2].s, 2);
	assert_int_equal(tl->procs[2].pid, 77);
	assert_true(tl->procs[2].gpu_mem_mib == 3);
	assert_true(tl->procs[2].sm_pct == 50);
	assert_string_equal(tl->procs[2].cmd, "python3");
	tl_free(cache);
	exp_window empty = {NULL, 0, &cache};
	assert_null(exp_window_timeline(&empty));
	for (int k = 0; k < 3; k++)
		exp_snapshot_free(s[k]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_healthy_has_none), cmocka_unit_test(test_throttled_severity),
	    cmocka_unit_test(test_pcie_degraded),    cmocka_unit_test(test_lost_and_bounds),
	    cmocka_unit_test(test_window_timeline),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
