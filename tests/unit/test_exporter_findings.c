/* test_exporter_findings.c - the exporter's built-in live checks. */
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "exporter/findings.h"
#include "exporter/frame.h"

/* One sample as the findings hook sees it: the snapshot's values, the GPUs' labels. */
typedef struct {
	snapshot snap;
	exporter_gpu gpus[4];
	int ngpus;
} sample;

static sample *sample_new(int ngpus)
{
	sample *s = calloc(1, sizeof *s);
	assert_non_null(s);
	snapshot_init(&s->snap, ngpus);
	s->ngpus = ngpus;
	for (int i = 0; i < ngpus; i++)
		s->gpus[i].vals = &s->snap.gpu[i];
	return s;
}

static void sample_free(sample *s)
{
	snapshot_free(&s->snap);
	free(s);
}

static void set(sample *s, int i, gpu_metric_id id, double v)
{
	s->snap.gpu[i].v[id] = v;
	s->snap.gpu[i].ok[id] = 1;
}

/* A healthy, busy GPU at full link speed. */
static void healthy(sample *s, int i, int index)
{
	memset(&s->snap.gpu[i], 0, sizeof s->snap.gpu[i]);
	s->gpus[i].index = index;
	set(s, i, GM_UTIL_GPU, 95);
	set(s, i, GM_CLK_REASONS, 0);
	set(s, i, GM_PCIE_GEN_CUR, 5);
	set(s, i, GM_PCIE_GEN_MAX, 5);
	set(s, i, GM_PCIE_WIDTH_CUR, 16);
	set(s, i, GM_PCIE_WIDTH_MAX, 16);
}

static int run(const sample *s, exporter_finding *out, int max)
{
	const snapshot *snaps[1] = {&s->snap};
	exporter_window w = {snaps, 1, s->gpus, s->ngpus, NULL, NULL};
	return exporter_live_findings(NULL, &w, out, max);
}

static void expect_one(const sample *s, int gpu, const char *rule, exporter_severity sev)
{
	exporter_finding f[8];
	int n = run(s, f, 8);
	assert_int_equal(n, 1);
	assert_int_equal(f[0].gpu, gpu);
	assert_string_equal(f[0].rule, rule);
	assert_int_equal(f[0].severity, sev);
}

static void test_healthy_has_none(void **state)
{
	sample *s = sample_new(2);
	healthy(s, 0, 0);
	healthy(s, 1, 1);
	exporter_finding f[8];
	assert_int_equal(run(s, f, 8), 0);
	/* Idle: gpu_idle alone is not throttling, a lowered gen while idle is power saving. */
	set(s, 1, GM_CLK_REASONS, 0x1);
	set(s, 1, GM_UTIL_GPU, 0);
	set(s, 1, GM_PCIE_GEN_CUR, 1);
	assert_int_equal(run(s, f, 8), 0);
	/* Unknown values decide nothing. */
	memset(s->snap.gpu[0].ok, 0, sizeof s->snap.gpu[0].ok);
	assert_int_equal(run(s, f, 8), 0);
	sample_free(s);
}

static void test_throttled_severity(void **state)
{
	sample *s = sample_new(2);
	healthy(s, 0, 0);
	healthy(s, 1, 5);
	set(s, 1, GM_CLK_REASONS, 0x4); /* sw power cap */
	expect_one(s, 5, "throttled", EXPORTER_SEV_INFO);
	set(s, 1, GM_CLK_REASONS, 0x4 | 0x20); /* + sw thermal */
	expect_one(s, 5, "throttled", EXPORTER_SEV_WARN);
	set(s, 1, GM_CLK_REASONS, 0x1 | 0x40); /* hw thermal, even with idle */
	expect_one(s, 5, "throttled", EXPORTER_SEV_ERROR);
	set(s, 1, GM_CLK_REASONS, 0x8);
	expect_one(s, 5, "throttled", EXPORTER_SEV_ERROR);
	set(s, 1, GM_CLK_REASONS, 0x80);
	expect_one(s, 5, "throttled", EXPORTER_SEV_ERROR);
	set(s, 1, GM_CLK_REASONS, 0x1000); /* a bit NVML does not define */
	exporter_finding f[8];
	assert_int_equal(run(s, f, 8), 0);
	sample_free(s);
}

static void test_pcie_degraded(void **state)
{
	sample *s = sample_new(1);
	healthy(s, 0, 3);
	set(s, 0, GM_PCIE_WIDTH_CUR, 8);
	expect_one(s, 3, "pcie_degraded", EXPORTER_SEV_WARN);
	/* Width is degraded even when idle. */
	set(s, 0, GM_UTIL_GPU, 0);
	expect_one(s, 3, "pcie_degraded", EXPORTER_SEV_WARN);
	/* Generation only counts while busy. */
	set(s, 0, GM_PCIE_WIDTH_CUR, 16);
	set(s, 0, GM_PCIE_GEN_CUR, 3);
	exporter_finding f[8];
	assert_int_equal(run(s, f, 8), 0);
	set(s, 0, GM_UTIL_GPU, 40);
	expect_one(s, 3, "pcie_degraded", EXPORTER_SEV_WARN);
	sample_free(s);
}

static void test_lost_and_bounds(void **state)
{
	sample *s = sample_new(3);
	for (int i = 0; i < 3; i++) {
		healthy(s, i, i);
		set(s, i, GM_CLK_REASONS, 0x40);
		set(s, i, GM_PCIE_WIDTH_CUR, 4);
	}
	s->snap.gpu[1].lost = true;
	exporter_finding f[8];
	int n = run(s, f, 8);
	assert_int_equal(n, 5);
	assert_int_equal(f[2].gpu, 1);
	assert_string_equal(f[2].rule, "gpu_lost");
	assert_int_equal(f[2].severity, EXPORTER_SEV_ERROR);
	/* Never more than max. */
	assert_int_equal(run(s, f, 2), 2);
	/* An empty window has no findings. */
	exporter_window w = {NULL, 0, NULL, 0, NULL, NULL};
	assert_int_equal(exporter_live_findings(NULL, &w, f, 8), 0);
	sample_free(s);
}

/* The window as the timeline diagnosis rules read. */
static void test_window_timeline(void **state)
{
	sample *s[3];
	for (int k = 0; k < 3; k++) {
		s[k] = sample_new(2);
		s[k]->snap.t_wall = 1000.0 + k;
		for (int g = 0; g < 2; g++) {
			healthy(s[k], g, 4 + g);
			snprintf(s[k]->gpus[g].uuid, sizeof s[k]->gpus[g].uuid, "GPU-%d", g);
			set(s[k], g, GM_UTIL_GPU, 10 * k + g);
		}
		/* The host summary as the sampler derives it (model/hostsum.h). */
		snapshot *h = &s[k]->snap;
		h->h[HM_CPU_BUSY_AVG] = 50;
		h->h[HM_MEM_USED] = 2;
		h->h[HM_CPU_BUSY_MAX] = 75;
		h->h[HM_CPU_BUSY_MAX_CORE] = 3;
		snapshot_set_ncpu(h, 4);
		h->cpu_busy[0] = 25;
		h->cpu_iowait[0] = 0;
		h->cpu_busy[3] = 75;
		h->gpu_procs_known = 3;
		tl_proc *p = snapshot_add_proc(h);
		p->pid = 77;
		p->gpu = 0;
		p->alive = true;
		p->gpu_mem_mib = 3;
		p->sm_pct = 50;
		snprintf(p->cmd, sizeof p->cmd, "python3");
	}
	s[1]->snap.gpu[0].ok[GM_UTIL_GPU] = 0; /* absent in the middle */
	s[2]->snap.gpu[1].lost = true;
	const snapshot *snaps[3] = {&s[0]->snap, &s[1]->snap, &s[2]->snap};
	timeline *cache = NULL;
	exporter_window w = {snaps, 3, s[2]->gpus, 2, "550.54.15", &cache};
	const timeline *tl = exporter_window_timeline(&w);
	assert_non_null(tl);
	assert_ptr_equal(exporter_window_timeline(&w), tl); /* built once */
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
	exporter_window empty = {NULL, 0, NULL, 0, NULL, &cache};
	assert_null(exporter_window_timeline(&empty));
	for (int k = 0; k < 3; k++)
		sample_free(s[k]);
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
