/*
 * diag_fixture.h - hand-built timelines for the diagnosis and report tests.
 * fx_healthy() is the control every rule must stay silent on: an H100-like
 * GPU busy 95 % with SM activity 85 %, memory half used, power 600 of 700 W,
 * full clocks, Gen5 x16, a calm host and steady 100 ms steps. Tests change
 * one aspect of it to make exactly one rule fire.
 */
#ifndef GPUWHY_TESTS_DIAG_FIXTURE_H
#define GPUWHY_TESTS_DIAG_FIXTURE_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "diagnose/diag.h"

#define FX_N 120  /* samples */
#define FX_DT 1.0 /* seconds between samples */
#define FX_MEM_TOTAL 81559.0
#define FX_POWER_LIMIT 700.0
#define FX_CLK_MAX 1980.0
#define FX_SLOWDOWN 87.0
#define FX_PID 4000u

static inline void fx_gpu_static(timeline *tl, int g, int s)
{
	tl_set_gpu(tl, g, GM_MEM_TOTAL, s, FX_MEM_TOTAL);
	tl_set_gpu(tl, g, GM_POWER_LIMIT, s, FX_POWER_LIMIT);
	tl_set_gpu(tl, g, GM_POWER_ENFORCED_LIMIT, s, FX_POWER_LIMIT);
	tl_set_gpu(tl, g, GM_CLK_MAX_SM, s, FX_CLK_MAX);
	tl_set_gpu(tl, g, GM_TEMP_SLOWDOWN, s, FX_SLOWDOWN);
	tl_set_gpu(tl, g, GM_PCIE_GEN_MAX, s, 5);
	tl_set_gpu(tl, g, GM_PCIE_WIDTH_MAX, s, 16);
}

/* A busy, healthy sample of GPU g at s. */
static inline void fx_gpu_busy(timeline *tl, int g, int s)
{
	fx_gpu_static(tl, g, s);
	tl_set_gpu(tl, g, GM_UTIL_GPU, s, 95 + (s % 3));
	tl_set_gpu(tl, g, GM_UTIL_MEM, s, 35);
	tl_set_gpu(tl, g, GM_UTIL_SAMPLES_MIN, s, 90);
	tl_set_gpu(tl, g, GM_UTIL_SAMPLES_MAX, s, 100);
	tl_set_gpu(tl, g, GM_UTIL_SAMPLES_IDLE, s, 2);
	tl_set_gpu(tl, g, GM_GPM_SM_ACTIVE, s, 85);
	tl_set_gpu(tl, g, GM_GPM_DRAM_ACTIVE, s, 30);
	tl_set_gpu(tl, g, GM_MEM_USED, s, 40000);
	tl_set_gpu(tl, g, GM_POWER_DRAW, s, 600 + (s % 5));
	tl_set_gpu(tl, g, GM_TEMP_GPU, s, 65);
	tl_set_gpu(tl, g, GM_CLK_SM, s, FX_CLK_MAX);
	tl_set_gpu(tl, g, GM_CLK_REASONS, s, 0);
	tl_set_gpu(tl, g, GM_PCIE_GEN_CUR, s, 5);
	tl_set_gpu(tl, g, GM_PCIE_WIDTH_CUR, s, 16);
	tl_set_gpu(tl, g, GM_PCIE_REPLAY, s, 7);
}

static inline void fx_host_calm(timeline *tl, int s)
{
	tl_set_host(tl, HM_CPU_BUSY_MAX, s, 40);
	tl_set_host(tl, HM_CPU_BUSY_MAX_CORE, s, 1);
	tl_set_host(tl, HM_CPU_BUSY_AVG, s, 20);
	tl_set_host(tl, HM_CPU_IOWAIT, s, 0.5);
	tl_set_host(tl, HM_DISK_BUSY_MAX, s, 5);
	tl_set_host(tl, HM_DISK_READ, s, 1 << 20);
	tl_set_host(tl, HM_SWAP_IN, s, 0);
	tl_set_host(tl, HM_SWAP_OUT, s, 0);
	tl_set_host(tl, HM_TREE_CPU, s, 110);
	for (int c = 0; c < tl->ncpu; c++)
		tl_set_cpu(tl, c, s, c == 1 ? 40 : 15, 0.5);
}

/* A record of the watched job's process pid on GPU g at sample s. */
static inline tl_proc *fx_proc(timeline *tl, int s, unsigned pid, int g, bool in_tree, bool alive,
                               double mem, double cpu)
{
	tl_proc *p = tl_add_proc(tl);
	p->s = s;
	p->pid = pid;
	p->gpu = g;
	p->in_tree = in_tree;
	p->alive = alive;
	p->gpu_mem_mib = mem;
	p->cpu_pct = cpu;
	snprintf(p->cmd, sizeof p->cmd, "%s", in_tree ? "python train.py" : "python other.py");
	snprintf(p->user, sizeof p->user, "%s", in_tree ? "me" : "alice");
	return p;
}

/* ngpu GPUs, all busy and used by one process of the job each. */
static inline timeline *fx_healthy_n(int ngpu)
{
	timeline *tl = tl_new(ngpu, 4);
	tl->have_root = true;
	snprintf(tl->command, sizeof tl->command, "python train.py --batch-size 64");
	snprintf(tl->driver, sizeof tl->driver, "550.54.15");
	snprintf(tl->hostname, sizeof tl->hostname, "node1");
	tl->exit_status = 0;
	for (int g = 0; g < ngpu; g++) {
		tl->gpu[g].index = g;
		snprintf(tl->gpu[g].name, sizeof tl->gpu[g].name, "NVIDIA H100 80GB HBM3");
		snprintf(tl->gpu[g].uuid, sizeof tl->gpu[g].uuid, "GPU-0000000%d-aaaa", g);
		for (int h = 0; h < ngpu; h++)
			if (h != g) {
				tl->nvlinks[g][h] = 18;
				tl->topo[g][h] = 0;
			}
	}
	for (int i = 0; i < FX_N; i++) {
		int s = tl_add_sample(tl, i * FX_DT);
		for (int g = 0; g < ngpu; g++) {
			fx_gpu_busy(tl, g, s);
			fx_proc(tl, s, FX_PID + (unsigned)g, g, true, true, 40000, 100);
		}
		fx_host_calm(tl, s);
	}
	for (int k = 0; k <= 1000; k++)
		tl_add_step(tl, 0.5 + k * 0.1, k);
	return tl;
}

static inline timeline *fx_healthy(void)
{
	return fx_healthy_n(1);
}

static inline void fx_run(const timeline *tl, diag_result *r)
{
	diag_opts o;
	diag_opts_default(&o);
	diag_run(tl, &o, r);
}

/* Ids of the findings, space separated, for failure messages. */
static inline const char *fx_ids(const diag_result *r)
{
	static char buf[512];
	buf[0] = 0;
	for (int i = 0; i < r->n; i++) {
		strncat(buf, r->f[i].id, sizeof buf - strlen(buf) - 2);
		strncat(buf, " ", sizeof buf - strlen(buf) - 1);
	}
	return buf;
}

/* The evidence of f about metric/stat (prefix match on stat), NULL if none. */
static inline const diag_evidence *fx_ev(const diag_finding *f, const char *metric,
                                         const char *stat)
{
	for (int i = 0; f && i < f->nev; i++)
		if (!strcmp(f->ev[i].metric, metric) &&
		    (!stat || !strncmp(f->ev[i].stat, stat, strlen(stat))))
			return &f->ev[i];
	return NULL;
}

/*
 * The finding `id` at severity `sev`, with its advice and verification; fails
 * the test, listing what did fire, when it is absent. (cmocka's assertions:
 * include <cmocka.h> before this header to use these two.)
 */
#ifdef cmocka_unit_test
static inline const diag_finding *fx_expect(const diag_result *r, const char *id, diag_severity sev)
{
	const diag_finding *f = diag_find(r, id);
	if (!f)
		fail_msg("expected finding %s, got: %s", id, fx_ids(r));
	assert_int_equal(f->severity, sev);
	assert_non_null(f->advice);
	assert_non_null(f->verify);
	return f;
}

/* Fails the test when the finding `id` fired. */
static inline void fx_expect_none(const diag_result *r, const char *id)
{
	if (diag_find(r, id))
		fail_msg("finding %s must not fire here; got: %s", id, fx_ids(r));
}
#endif

#endif
