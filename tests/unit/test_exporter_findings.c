/* test_exporter_findings.c - the exporter's built-in live checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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
	exp_window w = {snaps, 1};
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
	exp_window w = {NULL, 0};
	assert_int_equal(exp_live_findings(NULL, &w, f, 8), 0);
	exp_snapshot_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_healthy_has_none),
		cmocka_unit_test(test_throttled_severity),
		cmocka_unit_test(test_pcie_degraded),
		cmocka_unit_test(test_lost_and_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
