/*
 * Diagnosis rules on hand-built timelines: each rule fires on its case with
 * the right evidence numbers, and stays silent on the healthy control.
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

/* The finding id must be there (with the severity), and print the ids when not. */
static const diag_finding *expect(const diag_result *r, const char *id, diag_severity sev)
{
	const diag_finding *f = diag_find(r, id);
	if (!f)
		fail_msg("expected finding %s, got: %s", id, fx_ids(r));
	assert_int_equal(f->severity, sev);
	assert_true(f->confidence > 0 && f->confidence <= 1);
	assert_non_null(f->advice);
	assert_non_null(f->verify);
	return f;
}

static void expect_none(const diag_result *r, const char *id)
{
	if (diag_find(r, id))
		fail_msg("finding %s must not fire here; got: %s", id, fx_ids(r));
}

/* ---- healthy control ---- */

static void test_healthy(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	diag_result r;
	fx_run(tl, &r);
	assert_int_equal(r.n, 1);
	const diag_finding *f = expect(&r, "healthy", DIAG_INFO);
	assert_non_null(strstr(f->title, "No problem found"));
	assert_int_equal(diag_exit_code(&r), 0);
	assert_int_equal(r.njob, 1);
	assert_int_equal(r.gpu[0].quadrant, DIAG_Q_BUSY_ROOMY);
	assert_float_equal(r.gpu[0].util_mean, 96, EPS);
	assert_float_equal(r.gpu[0].mem_peak_pct, 100 * 40000 / FX_MEM_TOTAL, 1e-9);
	/* steps: 1000 intervals of 0.1 s, the first dropped as warm-up */
	assert_int_equal(r.steps.n, 999);
	assert_float_equal(r.steps.p50, 0.1, 1e-9);
	assert_float_equal(r.steps.per_s, 10, 1e-6);
	/* chain: the process is on the GPU, one GPU, no trace */
	assert_int_equal(r.chain[0].status, DIAG_STEP_OK);
	assert_non_null(strstr(r.chain[0].answer, "PID 4000"));
	assert_int_equal(r.chain[5].status, DIAG_STEP_NA);
	assert_int_equal(r.chain[6].status, DIAG_STEP_NA);
	const diag_finding *top = diag_top_finding(&r);
	assert_string_equal(top->id, "healthy");
	diag_result_free(&r);

	/* Four healthy GPUs on NVLink: still nothing. */
	tl_free(tl);
	tl = fx_healthy_n(4);
	fx_run(tl, &r);
	assert_int_equal(r.n, 1);
	expect(&r, "healthy", DIAG_INFO);
	assert_int_equal(r.chain[5].status, DIAG_STEP_OK);
	assert_non_null(strstr(r.chain[5].answer, "NVLink"));
	diag_result_free(&r);
	tl_free(tl);
}

/* ---- not-on-gpu ---- */

static timeline *cpu_only(void)
{
	timeline *tl = fx_healthy();
	for (int i = 0; i < tl->nprocs; i++)
		tl->procs[i].gpu = -1; /* the job's process never held a GPU context */
	for (int s = 0; s < tl->n; s++) {
		tl_set_gpu(tl, 0, GM_UTIL_GPU, s, 0);
		tl_set_gpu(tl, 0, GM_UTIL_SAMPLES_IDLE, s, 100);
		tl_set_gpu(tl, 0, GM_MEM_USED, s, 0);
		tl_set_gpu(tl, 0, GM_GPM_SM_ACTIVE, s, 0);
		tl_set_host(tl, HM_TREE_CPU, s, 400);
	}
	return tl;
}

static void test_not_on_gpu(void **state)
{
	(void)state;
	timeline *tl = cpu_only();
	diag_result r;
	fx_run(tl, &r);
	const diag_finding *f = expect(&r, "not-on-gpu", DIAG_ERROR);
	assert_float_equal(f->confidence, 0.85, EPS);
	const diag_evidence *e = fx_ev(f, "process.gpu", NULL);
	assert_non_null(e);
	assert_float_equal(e->value, 0, EPS);
	assert_float_equal(e->threshold, 1, EPS);
	assert_float_equal(fx_ev(f, "tree.cpu", "mean")->value, 400, EPS);
	assert_non_null(strstr(f->title, "none of its 1 process held a GPU context"));
	assert_int_equal(diag_exit_code(&r), 1);
	assert_int_equal(r.chain[0].status, DIAG_STEP_PROBLEM);
	assert_string_equal(r.chain[0].findings[0], "not-on-gpu");
	expect_none(&r, "healthy");
	diag_result_free(&r);

	/* CUDA_VISIBLE_DEVICES=-1 is named and raises the confidence. */
	diag_meta m = {0};
	diag_meta_set(&m, "env.CUDA_VISIBLE_DEVICES", "-1");
	diag_opts o;
	diag_opts_default(&o);
	o.meta = &m;
	diag_run(tl, &o, &r);
	f = expect(&r, "not-on-gpu", DIAG_ERROR);
	assert_float_equal(f->confidence, 0.95, EPS);
	assert_non_null(strstr(f->note, "CUDA_VISIBLE_DEVICES=\"-1\""));
	diag_result_free(&r);
	diag_meta_free(&m);

	/* No process tree watched (a machine recording): not applicable. */
	tl->have_root = false;
	fx_run(tl, &r);
	expect_none(&r, "not-on-gpu");
	diag_result_free(&r);
	tl_free(tl);
}

/* ---- data-starved ---- */

/* Utilization between 20 and 60 %, driver samples swinging 0..100 with 60 % idle. */
static void starve(timeline *tl, int from, int to)
{
	for (int s = from; s < to; s++) {
		tl_set_gpu(tl, 0, GM_UTIL_GPU, s, s % 2 ? 60 : 20);
		tl_set_gpu(tl, 0, GM_UTIL_SAMPLES_MIN, s, 0);
		tl_set_gpu(tl, 0, GM_UTIL_SAMPLES_MAX, s, 100);
		tl_set_gpu(tl, 0, GM_UTIL_SAMPLES_IDLE, s, 60);
		tl_set_gpu(tl, 0, GM_GPM_SM_ACTIVE, s, 35);
		tl_set_gpu(tl, 0, GM_POWER_DRAW, s, s % 2 ? 500 : 300);
	}
}

static void saturate_core(timeline *tl, int core, int from, int to)
{
	for (int s = from; s < to; s++) {
		tl_set_host(tl, HM_CPU_BUSY_MAX, s, 100);
		tl_set_host(tl, HM_CPU_BUSY_MAX_CORE, s, core);
		tl_set_cpu(tl, core, s, 100, 0);
	}
}

static void set_proc_cpu(timeline *tl, double cpu)
{
	for (int i = 0; i < tl->nprocs; i++)
		tl->procs[i].cpu_pct = cpu;
}

static void test_data_starved_cpu(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	starve(tl, 0, tl->n);
	saturate_core(tl, 3, 0, tl->n);
	diag_result r;
	fx_run(tl, &r);
	const diag_finding *f = expect(&r, "data-starved", DIAG_WARN);
	assert_string_equal(f->title, "GPU 0 idle 60 % of the run while core 3 is at 100 %");
	const diag_evidence *e = fx_ev(f, "utilization.gpu", "idle share");
	assert_non_null(e);
	assert_float_equal(e->value, 60, EPS);
	assert_float_equal(e->threshold, 25, EPS);
	assert_string_equal(e->cmp, ">=");
	assert_float_equal(fx_ev(f, "cpu.busy.max", "share")->value, 100, EPS);
	assert_float_equal(fx_ev(f, "cpu.busy.max", "mean")->value, 100, EPS);
	/* oscillation from the driver samples, and unstable power: mean 400 W, sd 100.4 W */
	assert_float_equal(fx_ev(f, "utilization.gpu.samples", "share")->value, 100, EPS);
	assert_float_equal(fx_ev(f, "power.draw", NULL)->value, 100.4184 / 400, 1e-4);
	/* both causes (core and the saturated process), oscillating, unstable power */
	assert_float_equal(f->confidence, 0.9, EPS);
	assert_true(f->gpus == 1);
	assert_int_equal(f->nranges, 1);
	assert_float_equal(f->ranges[0].t1, 118, EPS); /* the last sample straddles the end */
	expect_none(&r, "low-utilization");
	expect_none(&r, "healthy");
	assert_int_equal(r.gpu[0].quadrant, DIAG_Q_IDLE_EMPTY);
	assert_int_equal(r.chain[2].status, DIAG_STEP_PROBLEM);
	assert_int_equal(diag_exit_code(&r), 0);
	diag_result_free(&r);
	tl_free(tl);
}

static void test_data_starved_io(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	starve(tl, 0, tl->n);
	set_proc_cpu(tl, 30);
	for (int s = 0; s < tl->n; s++) {
		tl_set_host(tl, HM_CPU_IOWAIT, s, 25);
		tl_set_host(tl, HM_DISK_BUSY_MAX, s, 97);
		tl_set_host(tl, HM_DISK_READ, s, 300.0 * 1024 * 1024);
	}
	diag_result r;
	fx_run(tl, &r);
	const diag_finding *f = expect(&r, "data-starved", DIAG_WARN);
	assert_string_equal(
	    f->title,
	    "GPU 0 idle 60 % of the run while iowait is 25 % and the busiest disk is 97 % busy");
	assert_float_equal(fx_ev(f, "cpu.iowait", NULL)->value, 25, EPS);
	assert_float_equal(fx_ev(f, "disk.busy.max", NULL)->value, 97, EPS);
	assert_float_equal(fx_ev(f, "disk.read", NULL)->value, 300, EPS);
	assert_non_null(strstr(f->note, "Storage"));
	assert_int_equal(r.chain[3].status, DIAG_STEP_PROBLEM);
	diag_result_free(&r);
	tl_free(tl);
}

static void test_data_starved_control(void **state)
{
	(void)state;
	/* The same idle GPU with a calm host: not starved by the host. */
	timeline *tl = fx_healthy();
	starve(tl, 0, tl->n);
	set_proc_cpu(tl, 30);
	diag_result r;
	fx_run(tl, &r);
	expect_none(&r, "data-starved");
	const diag_finding *f = expect(&r, "low-utilization", DIAG_WARN);
	assert_float_equal(fx_ev(f, "utilization.gpu", "mean")->value, 40, EPS);
	diag_result_free(&r);

	/* Model loading before the GPU starts (CPU busy, GPU idle) is outside the window. */
	tl_free(tl);
	tl = fx_healthy();
	for (int s = 0; s < 20; s++) {
		tl_set_gpu(tl, 0, GM_UTIL_GPU, s, 0);
		tl_set_gpu(tl, 0, GM_UTIL_SAMPLES_IDLE, s, 100);
	}
	saturate_core(tl, 2, 0, 20);
	fx_run(tl, &r);
	assert_int_equal(r.from, 20);
	assert_float_equal(r.t_from, 19, EPS);
	expect_none(&r, "data-starved");
	expect(&r, "healthy", DIAG_INFO);
	diag_result_free(&r);
	tl_free(tl);
}

static void test_live_summary(void **state)
{
	(void)state;
	timeline *tl = tl_new(1, 4);
	tl->have_root = true;
	for (int i = 0; i < 30; i++) {
		int s = tl_add_sample(tl, 100 + i);
		fx_gpu_busy(tl, 0, s);
		tl_set_gpu(tl, 0, GM_UTIL_GPU, s, 55);
		tl_set_gpu(tl, 0, GM_UTIL_SAMPLES_IDLE, s, 45);
		tl_set_gpu(tl, 0, GM_UTIL_SAMPLES_MIN, s, 0);
		fx_host_calm(tl, s);
		saturate_core(tl, 3, s, s + 1);
		fx_proc(tl, s, FX_PID, 0, true, true, 40000, 100);
	}
	diag_opts o;
	diag_opts_default(&o);
	char line[256];
	int sev = diag_live_summary(tl, &o, line, sizeof line);
	assert_int_equal(sev, DIAG_WARN);
	assert_string_equal(
	    line, "GPU 0 idle 45 % of the last 30 s while core 3 is at 100 %: data-starved?");
	tl_free(tl);

	/* Healthy: nothing to say. */
	tl = fx_healthy();
	assert_int_equal(diag_live_summary(tl, &o, line, sizeof line), -1);
	assert_string_equal(line, "");
	tl_free(tl);
}

/* ---- launch-bound ---- */

static void test_launch_bound(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	for (int s = 0; s < tl->n; s++) {
		tl_set_gpu(tl, 0, GM_GPM_SM_ACTIVE, s, 20);
		tl_set_gpu(tl, 0, GM_POWER_DRAW, s, 203);
	}
	diag_result r;
	fx_run(tl, &r);
	const diag_finding *f = expect(&r, "launch-bound", DIAG_WARN);
	assert_float_equal(f->confidence, 0.85, EPS);
	assert_string_equal(f->title,
	                    "GPU 0 is 'busy' 96 % of the time but its SMs are active only "
	                    "20 % and it draws 29 % of its power limit: many small kernels");
	assert_float_equal(fx_ev(f, "gpm.sm_active", NULL)->value, 20, EPS);
	assert_float_equal(fx_ev(f, "gpm.sm_active", NULL)->threshold, 40, EPS);
	assert_float_equal(fx_ev(f, "power.draw/power.limit", NULL)->value, 29, EPS);
	assert_float_equal(fx_ev(f, "utilization.gpu", NULL)->value, 96, EPS);
	expect_none(&r, "healthy");
	assert_int_equal(r.chain[4].status, DIAG_STEP_PROBLEM);
	diag_result_free(&r);

	/* From a trace: most kernels shorter than the launch cost. */
	tl_free(tl);
	tl = fx_healthy();
	tl->trace.kernels = 10000;
	tl->trace.short_kernels = 8000;
	tl->trace.kernel_s = 0.05;
	tl->trace.span_s = 0.2;
	fx_run(tl, &r);
	f = expect(&r, "launch-bound", DIAG_WARN);
	assert_float_equal(fx_ev(f, "trace.kernels", "share")->value, 80, EPS);
	assert_float_equal(fx_ev(f, "trace.kernels", "mean")->value, 5, EPS);
	assert_non_null(strstr(f->title, "80 % of 10000 traced kernels"));
	assert_int_equal(r.chain[6].status, DIAG_STEP_PROBLEM);
	diag_result_free(&r);
	tl_free(tl);
}

/* ---- sync-wait ---- */

/* GPUs 1..3 idle in step for 4 of every 10 samples while GPU 0 computes. */
static timeline *straggler(int nvlinks, int topo)
{
	timeline *tl = fx_healthy_n(4);
	for (int g = 0; g < 4; g++)
		for (int h = 0; h < 4; h++)
			if (g != h) {
				tl->nvlinks[g][h] = nvlinks;
				tl->topo[g][h] = topo;
			}
	for (int s = 0; s < tl->n; s++)
		if (s % 10 >= 5 && s % 10 <= 8)
			for (int g = 1; g < 4; g++) {
				tl_set_gpu(tl, g, GM_UTIL_GPU, s, 30);
				tl_set_gpu(tl, g, GM_UTIL_SAMPLES_IDLE, s, 65);
			}
	return tl;
}

static void test_sync_wait(void **state)
{
	(void)state;
	timeline *tl = straggler(0, 30);
	diag_result r;
	fx_run(tl, &r);
	const diag_finding *f = expect(&r, "sync-wait", DIAG_WARN);
	assert_float_equal(f->confidence, 0.85, EPS);
	assert_non_null(strstr(f->title, "GPUs 1, 2 and 3 wait in step for GPU 0"));
	assert_non_null(strstr(f->title, "12 times"));
	assert_non_null(strstr(f->title, "PCIe (PHB), no NVLink"));
	/* others: (6 x 96 + 4 x 30) / 10 = 69.6 % against 96 % */
	assert_float_equal(fx_ev(f, "utilization.gpu", "straggler")->value, 96 - 69.6, 1e-9);
	assert_float_equal(fx_ev(f, "utilization.gpu", "shortfall")->value, 100 * (1 - 69.6 / 96),
	                   1e-9);
	assert_float_equal(fx_ev(f, "utilization.gpu", "wait episodes")->value, 12, EPS);
	assert_float_equal(fx_ev(f, "topology", NULL)->value, 30, EPS);
	assert_int_equal(f->nranges, 12);
	assert_float_equal(f->ranges[0].t0, 4, EPS);
	assert_float_equal(f->ranges[0].t1, 8, EPS);
	assert_non_null(strstr(f->advice, "NVLink"));
	assert_int_equal(r.chain[5].status, DIAG_STEP_PROBLEM);
	expect_none(&r, "data-starved");
	expect_none(&r, "imbalance");
	diag_result_free(&r);
	tl_free(tl);

	/* Collective kernels spin while they wait: utilization reads busy everywhere,
	 * SM activity shows the straggler; the waiters are not launch-bound. */
	tl = fx_healthy_n(4);
	for (int s = 0; s < tl->n; s++)
		for (int g = 1; g < 4; g++) {
			tl_set_gpu(tl, g, GM_GPM_SM_ACTIVE, s, 35);
			tl_set_gpu(tl, g, GM_POWER_DRAW, s, 338);
		}
	fx_run(tl, &r);
	f = expect(&r, "sync-wait", DIAG_WARN);
	assert_non_null(strstr(f->title, "(SM activity 35 % vs 85 %), in 100 % of samples"));
	assert_float_equal(fx_ev(f, "gpm.sm_active", "straggler")->value, 50, 1e-9);
	assert_non_null(strstr(f->note, "spin"));
	expect_none(&r, "launch-bound");
	diag_result_free(&r);

	/* Without GPM the power draw tells them apart (149 W against 198 W). */
	for (int s = 0; s < tl->n; s++)
		for (int g = 0; g < 4; g++) {
			tl_set_gpu(tl, g, GM_GPM_SM_ACTIVE, s, NAN);
			tl_set_gpu(tl, g, GM_POWER_DRAW, s, g ? 149 : 198);
		}
	fx_run(tl, &r);
	f = expect(&r, "sync-wait", DIAG_WARN);
	assert_float_equal(f->confidence, 0.5, EPS);
	assert_non_null(strstr(f->title, "(power 149 W vs 198 W)"));
	assert_float_equal(fx_ev(f, "power.draw", "shortfall")->value, 100 * (1 - 149.0 / 198),
	                   1e-9);
	diag_result_free(&r);
	tl_free(tl);

	/* On NVLink the advice is about the straggler, not bandwidth. */
	tl = straggler(12, 0);
	fx_run(tl, &r);
	f = expect(&r, "sync-wait", DIAG_WARN);
	assert_float_equal(f->confidence, 0.7, EPS);
	assert_non_null(strstr(f->title, "NVLink (NV12)"));
	assert_non_null(strstr(f->advice, "imbalance, not bandwidth"));
	diag_result_free(&r);
	tl_free(tl);

	/* AMD GPUs of one XGMI hive: no NVLink is known, the hive is the fast link. */
	tl = straggler(-1, 50);
	for (int g = 0; g < 4; g++) {
		snprintf(tl->gpu[g].vendor, sizeof tl->gpu[g].vendor, "amd");
		for (int h = 0; h < 4; h++)
			tl->xgmi[g][h] = g != h ? 1 : -1;
	}
	fx_run(tl, &r);
	f = expect(&r, "sync-wait", DIAG_WARN);
	assert_float_equal(f->confidence, 0.7, EPS);
	assert_non_null(strstr(f->title, "; the GPUs are joined by XGMI (one hive)"));
	assert_float_equal(fx_ev(f, "xgmi", NULL)->value, 6, EPS);
	assert_non_null(strstr(f->advice, "XGMI (one hive), so the wait is imbalance"));
	assert_null(strstr(f->advice, "NVLink"));
	diag_result_free(&r);
	/* one GPU outside the hive: PCIe between it and the others, worded for AMD */
	for (int g = 0; g < 3; g++)
		tl->xgmi[g][3] = tl->xgmi[3][g] = 0;
	fx_run(tl, &r);
	f = expect(&r, "sync-wait", DIAG_WARN);
	assert_float_equal(f->confidence, 0.85, EPS);
	assert_non_null(strstr(f->title, "PCIe (SYS), no XGMI"));
	assert_float_equal(fx_ev(f, "topology", NULL)->value, 50, EPS);
	assert_non_null(strstr(f->advice, "HIP_VISIBLE_DEVICES"));
	assert_null(strstr(f->advice, "NVLink"));
	diag_result_free(&r);
	/* an older recording knows neither */
	for (int g = 0; g < 4; g++)
		for (int h = 0; h < 4; h++)
			tl->xgmi[g][h] = -1;
	fx_run(tl, &r);
	f = expect(&r, "sync-wait", DIAG_WARN);
	assert_non_null(strstr(f->title, "the link between the GPUs is unknown"));
	diag_result_free(&r);
	tl_free(tl);
}

/* ---- memory-bound ---- */

static void test_memory_bound(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	for (int s = 0; s < tl->n; s++) {
		tl_set_gpu(tl, 0, GM_GPM_DRAM_ACTIVE, s, 80);
		tl_set_gpu(tl, 0, GM_GPM_SM_ACTIVE, s, 50);
	}
	diag_result r;
	fx_run(tl, &r);
	const diag_finding *f = expect(&r, "memory-bound", DIAG_WARN);
	assert_float_equal(fx_ev(f, "gpm.dram_active", NULL)->value, 80, EPS);
	assert_float_equal(fx_ev(f, "gpm.sm_active", NULL)->value, 50, EPS);
	assert_float_equal(fx_ev(f, "gpm.sm_active", NULL)->threshold, 60, EPS);
	expect_none(&r, "launch-bound");
	diag_result_free(&r);

	/* A latency goal keeps it as information. */
	diag_opts o;
	diag_opts_default(&o);
	o.goal = DIAG_GOAL_LATENCY;
	diag_run(tl, &o, &r);
	expect(&r, "memory-bound", DIAG_INFO);
	diag_result_free(&r);
	tl_free(tl);
}

/* ---- memory-full-compute-idle ---- */

static void test_memory_full_idle(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	for (int s = 0; s < tl->n; s++) {
		tl_set_gpu(tl, 0, GM_UTIL_GPU, s, 5);
		tl_set_gpu(tl, 0, GM_UTIL_SAMPLES_IDLE, s, 95);
		tl_set_gpu(tl, 0, GM_GPM_SM_ACTIVE, s, 3);
		tl_set_gpu(tl, 0, GM_MEM_USED, s, 74000);
	}
	diag_result r;
	fx_run(tl, &r);
	const diag_finding *f = expect(&r, "memory-full-compute-idle", DIAG_WARN);
	assert_string_equal(f->title, "GPU 0 memory 91 % full while utilization averages 5 %");
	assert_float_equal(fx_ev(f, "memory.used", NULL)->value, 100 * 74000 / FX_MEM_TOTAL, 1e-9);
	assert_float_equal(fx_ev(f, "utilization.gpu", NULL)->value, 5, EPS);
	assert_int_equal(r.gpu[0].quadrant, DIAG_Q_IDLE_FULL);
	expect_none(&r, "oom-risk");
	expect_none(&r, "low-utilization");
	diag_result_free(&r);

	diag_opts o;
	diag_opts_default(&o);
	o.goal = DIAG_GOAL_LATENCY;
	diag_run(tl, &o, &r);
	f = expect(&r, "memory-full-compute-idle", DIAG_INFO);
	assert_non_null(strstr(f->advice, "serving"));
	expect(&r, "healthy", DIAG_INFO);
	diag_result_free(&r);
	tl_free(tl);
}

/* ---- oom, oom-risk ---- */

static void test_oom(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	tl->exit_status = 1;
	for (int s = 0; s < tl->n; s++)
		tl_set_gpu(tl, 0, GM_MEM_USED, s, 80000);
	tl_add_event(tl, 60.5, TL_EV_OOM, 0, 0,
	             "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB");
	diag_result r;
	fx_run(tl, &r);
	const diag_finding *f = expect(&r, "oom", DIAG_ERROR);
	assert_non_null(strstr(f->title, "Out of GPU memory on GPU 0 at 60.5 s"));
	assert_float_equal(fx_ev(f, "memory.used", "peak")->value, 80000, EPS);
	assert_float_equal(fx_ev(f, "memory.total", NULL)->value, FX_MEM_TOTAL, EPS);
	assert_non_null(strstr(f->note, "status 1"));
	assert_float_equal(f->ranges[0].t0, 60.5, EPS);
	expect_none(&r, "oom-risk");
	assert_int_equal(diag_exit_code(&r), 1);
	diag_result_free(&r);

	/* Killed by the kernel for host memory. */
	tl->nevents = 0;
	tl_add_event(tl, 70, TL_EV_OOM, -1, 0, "Out of memory: Killed process 4000 (python)");
	fx_run(tl, &r);
	f = expect(&r, "oom", DIAG_ERROR);
	assert_non_null(strstr(f->title, "Out of host memory at 70.0 s"));
	assert_non_null(strstr(f->advice, "DataLoader workers"));
	diag_result_free(&r);

	/* No event, but the peak is within 5 % of capacity. */
	tl->nevents = 0;
	fx_run(tl, &r);
	f = expect(&r, "oom-risk", DIAG_WARN);
	assert_float_equal(fx_ev(f, "memory.used", NULL)->value, 100 * 80000 / FX_MEM_TOTAL, 1e-9);
	assert_float_equal(fx_ev(f, "memory.used", NULL)->threshold, 95, EPS);
	assert_non_null(strstr(f->title, "GPU 0 memory peaked at 78.1 of 79.6 GiB (98.1 %)"));
	assert_int_equal(r.gpu[0].quadrant, DIAG_Q_BUSY_FULL);
	diag_result_free(&r);
	tl_free(tl);
}

/* ---- throttled ---- */

static void test_throttled(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	for (int s = 0; s < tl->n; s++)
		if (s % 10 < 6) {
			tl_set_gpu(tl, 0, GM_CLK_REASONS, s, 0x40); /* hw thermal slowdown */
			tl_set_gpu(tl, 0, GM_CLK_SM, s, 1400);
		}
	diag_result r;
	fx_run(tl, &r);
	const diag_finding *f = expect(&r, "throttled", DIAG_ERROR);
	assert_string_equal(f->title,
	                    "GPU 0 clocks held at 1400 of 1980 MHz (71 %) by thermal "
	                    "slowdown for 60 % of busy time; up to 65 C, slowdown at 87 C");
	assert_float_equal(fx_ev(f, "clocks_event_reasons", "share")->value, 60, EPS);
	assert_float_equal(fx_ev(f, "clocks_event_reasons", "thermal")->value, 60, EPS);
	assert_float_equal(fx_ev(f, "clocks.current.sm/clocks.max.sm", NULL)->value,
	                   100 * 1400 / FX_CLK_MAX, 1e-9);
	assert_int_equal(f->nranges, 12);
	diag_result_free(&r);

	/* The power cap alone at full load: information only. */
	tl_free(tl);
	tl = fx_healthy();
	for (int s = 0; s < tl->n; s++) {
		tl_set_gpu(tl, 0, GM_CLK_REASONS, s, 0x4);
		tl_set_gpu(tl, 0, GM_CLK_SM, s, 1700);
	}
	fx_run(tl, &r);
	f = expect(&r, "throttled", DIAG_INFO);
	assert_non_null(strstr(f->title, "by the power cap for 100 % of busy time"));
	expect(&r, "healthy", DIAG_INFO);
	diag_result_free(&r);

	/* Running close to the slowdown temperature. */
	tl_free(tl);
	tl = fx_healthy();
	for (int s = 0; s < tl->n; s++)
		tl_set_gpu(tl, 0, GM_TEMP_GPU, s, 84);
	fx_run(tl, &r);
	f = expect(&r, "throttled", DIAG_WARN);
	assert_float_equal(fx_ev(f, "temperature.gpu", NULL)->value, 100, EPS);
	assert_non_null(strstr(f->advice, "too hot"));
	diag_result_free(&r);
	tl_free(tl);
}

/* ---- pcie-degraded ---- */

static void test_pcie(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	for (int s = 0; s < tl->n; s++)
		tl_set_gpu(tl, 0, GM_PCIE_GEN_CUR, s, 3);
	diag_result r;
	fx_run(tl, &r);
	const diag_finding *f = expect(&r, "pcie-degraded", DIAG_WARN);
	assert_string_equal(f->title, "GPU 0 PCIe link at Gen3 x16 under load (max Gen5 x16)");
	assert_float_equal(fx_ev(f, "pcie.link.gen.current", NULL)->value, 3, EPS);
	assert_float_equal(fx_ev(f, "pcie.link.gen.current", NULL)->threshold, 5, EPS);
	assert_float_equal(fx_ev(f, "pcie.link", NULL)->value, 100, EPS);
	diag_result_free(&r);

	/* Replays rising. */
	tl_free(tl);
	tl = fx_healthy();
	for (int s = 0; s < tl->n; s++)
		tl_set_gpu(tl, 0, GM_PCIE_REPLAY, s, 7 + s / 2);
	fx_run(tl, &r);
	f = expect(&r, "pcie-degraded", DIAG_WARN);
	assert_float_equal(fx_ev(f, "pcie.replay_counter", NULL)->value, 59, EPS);
	diag_result_free(&r);

	/* Control: the link drops to Gen1 only while the GPU idles (power saving). */
	tl_free(tl);
	tl = fx_healthy();
	for (int s = 30; s < 40; s++) {
		tl_set_gpu(tl, 0, GM_UTIL_GPU, s, 0);
		tl_set_gpu(tl, 0, GM_PCIE_GEN_CUR, s, 1);
	}
	fx_run(tl, &r);
	expect_none(&r, "pcie-degraded");
	diag_result_free(&r);
	tl_free(tl);
}

/* ---- imbalance, all-on-gpu0 ---- */

static void idle_gpu(timeline *tl, int g, double util)
{
	for (int s = 0; s < tl->n; s++) {
		tl_set_gpu(tl, g, GM_UTIL_GPU, s, util);
		tl_set_gpu(tl, g, GM_UTIL_SAMPLES_IDLE, s, 100 - util);
		tl_set_gpu(tl, g, GM_GPM_SM_ACTIVE, s, util);
	}
}

static void test_imbalance(void **state)
{
	(void)state;
	timeline *tl = fx_healthy_n(4);
	for (int g = 1; g < 4; g++)
		idle_gpu(tl, g, 1);
	diag_result r;
	fx_run(tl, &r);
	const diag_finding *f = expect(&r, "imbalance", DIAG_WARN);
	assert_string_equal(f->title, "GPU 0 busy 96 % while GPUs 1, 2 and 3 of the job stay idle "
	                              "(mean 1 %)");
	assert_int_equal(f->gpus, 0xF);
	expect_none(&r, "sync-wait");
	expect_none(&r, "all-on-gpu0");
	diag_result_free(&r);
	tl_free(tl);

	/* A launcher asked for two GPUs, one process ended up on GPU 0 alone. */
	tl = fx_healthy_n(2);
	snprintf(tl->command, sizeof tl->command, "torchrun --nproc_per_node=2 train.py");
	idle_gpu(tl, 1, 0);
	int w = 0;
	for (int i = 0; i < tl->nprocs; i++)
		if (tl->procs[i].gpu == 0)
			tl->procs[w++] = tl->procs[i];
	tl->nprocs = w;
	fx_run(tl, &r);
	f = expect(&r, "imbalance", DIAG_WARN);
	assert_string_equal(f->title, "The job asked for 2 GPUs but only GPU 0 did any work");
	assert_float_equal(fx_ev(f, "command", NULL)->value, 2, EPS);
	diag_result_free(&r);

	/* Control: the same single-GPU job without a multi-GPU launcher. */
	snprintf(tl->command, sizeof tl->command, "python train.py");
	fx_run(tl, &r);
	expect_none(&r, "imbalance");
	diag_result_free(&r);
	tl_free(tl);
}

static void test_all_on_gpu0(void **state)
{
	(void)state;
	timeline *tl = fx_healthy_n(4);
	snprintf(tl->command, sizeof tl->command, "torchrun --nproc_per_node=4 train.py");
	for (int i = 0; i < tl->nprocs; i++)
		tl->procs[i].gpu = 0;
	for (int g = 1; g < 4; g++)
		idle_gpu(tl, g, 0);
	diag_result r;
	fx_run(tl, &r);
	const diag_finding *f = expect(&r, "all-on-gpu0", DIAG_ERROR);
	assert_string_equal(f->title,
	                    "All 4 processes of the job run on GPU 0 while GPUs 1, 2 and 3 "
	                    "stay idle (mean 0 %)");
	assert_float_equal(fx_ev(f, "process.gpu", "job processes")->value, 4, EPS);
	assert_float_equal(fx_ev(f, "command", NULL)->value, 4, EPS);
	assert_non_null(strstr(f->note, "4000, 4001, 4002, 4003"));
	expect_none(&r, "imbalance");
	assert_int_equal(diag_exit_code(&r), 1);
	diag_result_free(&r);

	/* Without a launcher it is still suspicious, but a warning. */
	snprintf(tl->command, sizeof tl->command, "python train.py");
	fx_run(tl, &r);
	expect(&r, "all-on-gpu0", DIAG_WARN);
	diag_result_free(&r);

	/* CUDA_VISIBLE_DEVICES gave the job one GPU on purpose: fine. */
	diag_meta m = {0};
	diag_meta_set(&m, "env.CUDA_VISIBLE_DEVICES", "0");
	diag_opts o;
	diag_opts_default(&o);
	o.meta = &m;
	diag_run(tl, &o, &r);
	expect_none(&r, "all-on-gpu0");
	diag_result_free(&r);
	diag_meta_free(&m);
	tl_free(tl);
}

/* ---- contention ---- */

static void test_contention(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	for (int s = 0; s < tl->n; s++) {
		tl_proc *p = fx_proc(tl, s, 999, 0, false, true, 10240, 5);
		p->sm_pct = 30;
	}
	diag_result r;
	fx_run(tl, &r);
	const diag_finding *f = expect(&r, "contention", DIAG_WARN);
	assert_string_equal(f->title, "1 other process shares the job's GPU 0");
	assert_float_equal(fx_ev(f, "process.gpu_memory", NULL)->value, 10240, EPS);
	assert_float_equal(fx_ev(f, "process.sm", NULL)->value, 30, EPS);
	assert_non_null(
	    strstr(f->note, "PID 999 (python other.py, alice) holds 10240 MiB and 30 % SM"));
	diag_result_free(&r);
	tl_free(tl);

	/* Memory held by a process that no longer exists. */
	tl = fx_healthy();
	for (int s = 0; s < tl->n; s++)
		fx_proc(tl, s, 777, 0, false, false, 2048, NAN);
	fx_run(tl, &r);
	f = expect(&r, "contention", DIAG_WARN);
	assert_string_equal(f->title,
	                    "2048 MiB on GPU 0 is held by 1 process that no longer exists");
	assert_non_null(strstr(f->advice, "no longer exist"));
	diag_result_free(&r);
	tl_free(tl);

	/* Control: a small foreign process (under both thresholds). */
	tl = fx_healthy();
	for (int s = 0; s < tl->n; s++) {
		tl_proc *p = fx_proc(tl, s, 999, 0, false, true, 100, 1);
		p->sm_pct = 2;
	}
	fx_run(tl, &r);
	expect_none(&r, "contention");
	diag_result_free(&r);
	tl_free(tl);
}

/* ---- host-swap ---- */

static void test_host_swap(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	for (int s = 10; s < 20; s++)
		tl_set_host(tl, HM_SWAP_IN, s, 5.0 * 1024 * 1024);
	diag_result r;
	fx_run(tl, &r);
	const diag_finding *f = expect(&r, "host-swap", DIAG_WARN);
	assert_float_equal(fx_ev(f, "swap.in+swap.out", NULL)->value, 50, EPS);
	assert_float_equal(fx_ev(f, "swap.in", NULL)->value, 50, EPS);
	assert_float_equal(fx_ev(f, "swap.out", NULL)->value, 0, EPS);
	assert_int_equal(f->nranges, 1);
	assert_float_equal(f->ranges[0].t0, 9, EPS);
	assert_float_equal(f->ranges[0].t1, 19, EPS);
	assert_int_equal(r.chain[3].status, DIAG_STEP_PROBLEM);
	diag_result_free(&r);

	/* Under the threshold (2 MiB): silent. */
	tl_free(tl);
	tl = fx_healthy();
	tl_set_host(tl, HM_SWAP_OUT, 50, 2.0 * 1024 * 1024);
	fx_run(tl, &r);
	expect_none(&r, "host-swap");
	diag_result_free(&r);
	tl_free(tl);
}

/* ---- gpu-fault ---- */

/* A fault's advice names the tools of the GPU's vendor: the recording's, else what the
 * events prove (an older recording), else neither vendor's. */
static void test_gpu_fault_vendor(void **state)
{
	(void)state;
	diag_result r;
	timeline *tl = fx_healthy();
	snprintf(tl->gpu[0].vendor, sizeof tl->gpu[0].vendor, "amd");
	tl_add_event(tl, 30, TL_EV_GPU_LOST, 0, 0, "");
	fx_run(tl, &r);
	const diag_finding *f = expect(&r, "gpu-fault", DIAG_ERROR);
	assert_non_null(strstr(f->advice, "amd-smi reset --gpureset -g N"));
	assert_null(strstr(f->advice, "nvidia-smi"));
	diag_result_free(&r);
	tl_free(tl);

	/* no vendor recorded: an amdgpu fault says whose the GPU is */
	tl = fx_healthy();
	tl_add_event(tl, 30, TL_EV_AMDGPU, 0, TL_AMDGPU_RESET_FAILED, "amdgpu 0000:03:00.0: x");
	fx_run(tl, &r);
	f = expect(&r, "gpu-fault", DIAG_ERROR);
	assert_non_null(strstr(f->advice, "rocm-smi --gpureset -d N"));
	diag_result_free(&r);
	tl_free(tl);

	/* nothing says: neither vendor's tools */
	tl = fx_healthy();
	tl_add_event(tl, 30, TL_EV_GPU_LOST, 0, 0, "");
	fx_run(tl, &r);
	f = expect(&r, "gpu-fault", DIAG_ERROR);
	assert_non_null(strstr(f->advice, "its vendor's management tool"));
	assert_null(strstr(f->advice, "nvidia-smi"));
	assert_null(strstr(f->advice, "amd-smi"));
	diag_result_free(&r);
	tl_free(tl);
}

static void test_gpu_fault(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	tl_add_event(tl, 30, TL_EV_XID, 0, 79, "GPU has fallen off the bus");
	diag_result r;
	fx_run(tl, &r);
	const diag_finding *f = expect(&r, "gpu-fault", DIAG_ERROR);
	assert_string_equal(f->title,
	                    "Xid 79 on GPU 0 at 30.0 s: GPU has fallen off the bus; 1 Xid event");
	assert_float_equal(fx_ev(f, "xid", "at 30.0 s: GPU has fallen off the bus")->value, 79,
	                   EPS);
	assert_non_null(strstr(f->note, "Xid 79 on GPU 0 at 30.0 s: GPU has fallen off the bus "
	                                "(hardware). Drain the node"));
	diag_result_free(&r);
	tl_free(tl);

	/* Xid 48 twice and an application Xid: each named once, with its meaning and time. */
	tl = fx_healthy();
	tl_add_event(tl, 12.5, TL_EV_XID, 0, 48, "Xid 48");
	tl_add_event(tl, 14, TL_EV_XID, 0, 48, "Xid 48");
	tl_add_event(tl, 20, TL_EV_XID, 0, 13, "Xid 13");
	fx_run(tl, &r);
	f = expect(&r, "gpu-fault", DIAG_ERROR);
	assert_string_equal(f->title, "Xid 48 on GPU 0 at 12.5 s: double-bit ECC error "
	                              "(uncorrectable memory error); 3 Xid events");
	assert_non_null(fx_ev(f, "xid", "at 12.5 s: double-bit ECC"));
	assert_null(fx_ev(f, "xid", "at 14.0 s"));
	assert_float_equal(fx_ev(f, "xid", "at 20.0 s: graphics engine")->value, 13, EPS);
	assert_float_equal(fx_ev(f, "xid", "events")->value, 3, EPS);
	assert_non_null(strstr(f->note, "Xid 13 on GPU 0 at 20.0 s"));
	assert_non_null(strstr(f->advice, "Xid's number, time"));
	diag_result_free(&r);
	tl_free(tl);

	/* An application Xid alone gets the application's advice. */
	tl = fx_healthy();
	tl_add_event(tl, 3, TL_EV_XID, 0, 31, "Xid 31");
	fx_run(tl, &r);
	f = expect(&r, "gpu-fault", DIAG_ERROR);
	assert_non_null(strstr(f->advice, "compute-sanitizer"));
	diag_result_free(&r);
	tl_free(tl);

	tl = fx_healthy();
	tl->gpu[0].lost_at_end = true;
	fx_run(tl, &r);
	f = expect(&r, "gpu-fault", DIAG_ERROR);
	assert_string_equal(f->title, "GPU 0 fell off the bus");
	diag_result_free(&r);
	tl_free(tl);
}

/* ---- low utilization and the latency goal ---- */

static void test_low_util_goal(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	set_proc_cpu(tl, 30);
	for (int s = 0; s < tl->n; s++) {
		tl_set_gpu(tl, 0, GM_UTIL_GPU, s, 30);
		tl_set_gpu(tl, 0, GM_UTIL_SAMPLES_IDLE, s, 70);
		tl_set_gpu(tl, 0, GM_GPM_SM_ACTIVE, s, 25);
		tl_set_gpu(tl, 0, GM_POWER_DRAW, s, 300);
	}
	diag_result r;
	fx_run(tl, &r);
	const diag_finding *f = expect(&r, "low-utilization", DIAG_WARN);
	assert_string_equal(f->title, "GPU 0 utilization averages 30 % and no host or GPU limit "
	                              "explains the gaps");
	assert_float_equal(fx_ev(f, "utilization.gpu", NULL)->value, 30, EPS);
	assert_float_equal(fx_ev(f, "utilization.gpu", NULL)->threshold, 50, EPS);
	assert_float_equal(fx_ev(f, "cpu.busy.max", NULL)->value, 40, EPS);
	expect_none(&r, "healthy");
	assert_int_equal(r.chain[1].status, DIAG_STEP_PROBLEM);
	diag_result_free(&r);

	diag_opts o;
	diag_opts_default(&o);
	o.goal = DIAG_GOAL_LATENCY;
	diag_run(tl, &o, &r);
	f = expect(&r, "low-utilization", DIAG_INFO);
	assert_string_equal(f->title,
	                    "GPU 0 utilization averages 30 %: a normal load for a latency goal");
	assert_non_null(strstr(f->advice, "max_queue_delay_microseconds"));
	const diag_finding *h = expect(&r, "healthy", DIAG_INFO);
	assert_non_null(strstr(h->title, "for a latency goal"));
	assert_int_equal(r.chain[1].status, DIAG_STEP_OK);
	assert_int_equal(diag_exit_code(&r), 0);
	diag_result_free(&r);
	tl_free(tl);
}

/* Without a watched tree (record without --pid, the live views), only GPUs
 * that some process uses are the job's: an idle unused GPU raises nothing. */
static void test_no_tree_idle_gpu(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	tl->have_root = false;
	for (int s = 0; s < tl->n; s++) {
		tl_set_gpu(tl, 0, GM_UTIL_GPU, s, 0);
		tl_set_gpu(tl, 0, GM_GPM_SM_ACTIVE, s, 0);
		tl_set_gpu(tl, 0, GM_MEM_USED, s, 300);
	}
	diag_result r;
	fx_run(tl, &r);
	expect(&r, "low-utilization", DIAG_WARN); /* its process is still on the GPU */
	diag_result_free(&r);
	tl->nprocs = 0; /* nobody on the GPU */
	fx_run(tl, &r);
	assert_int_equal(r.njob, 0);
	expect_none(&r, "low-utilization");
	expect_none(&r, "data-starved");
	/* an idle GPU is never called busy */
	expect_none(&r, "healthy");
	const diag_finding *f = expect(&r, "gpu-idle", DIAG_INFO);
	assert_non_null(strstr(f->title, "idle for the whole recording"));
	diag_result_free(&r);
	tl_free(tl);
}

/* ---- thresholds, goals, quadrant names ---- */

static void test_thresholds(void **state)
{
	(void)state;
	diag_opts o;
	diag_opts_default(&o);
	assert_float_equal(o.th.idle_util_pct, 10, EPS);
	assert_float_equal(o.th.starved_idle_pct, 25, EPS);
	assert_true(diag_threshold_set(&o.th, "starved_idle_pct=70"));
	assert_float_equal(o.th.starved_idle_pct, 70, EPS);
	assert_false(diag_threshold_set(&o.th, "no_such=1"));
	assert_false(diag_threshold_set(&o.th, "idle_util_pct=abc"));
	assert_false(diag_threshold_set(&o.th, "idle_util_pct=-1"));
	assert_false(diag_threshold_set(&o.th, "idle_util_pct"));
	assert_float_equal(o.th.idle_util_pct, 10, EPS);
	for (int i = 0; i < diag_threshold_count; i++) {
		assert_non_null(diag_threshold_table[i].help);
		assert_true(strlen(diag_threshold_table[i].help) > 10);
	}
	/* A raised threshold silences data-starved at 60 % idle. */
	timeline *tl = fx_healthy();
	starve(tl, 0, tl->n);
	saturate_core(tl, 3, 0, tl->n);
	diag_result r;
	diag_run(tl, &o, &r);
	expect_none(&r, "data-starved");
	diag_result_free(&r);
	tl_free(tl);

	diag_goal g;
	assert_true(diag_goal_parse("latency", &g));
	assert_int_equal(g, DIAG_GOAL_LATENCY);
	assert_false(diag_goal_parse("speed", &g));
	assert_string_equal(diag_quadrant_name(DIAG_Q_IDLE_EMPTY), "idle-empty");
}

/* ---- compare ---- */

static void steady_steps(timeline *tl, double dt, int n)
{
	tl->nsteps = 0;
	for (int k = 0; k < n; k++)
		/* a small deterministic jitter of +-2 ms */
		tl_add_step(tl, 0.5 + k * dt + 0.001 * ((k * 37) % 5 - 2), k);
}

static void test_bootstrap(void **state)
{
	(void)state;
	double a[200], b[200];
	uint32_t x = 1;
	for (int i = 0; i < 200; i++) {
		/* +-5 ms of jitter in no order (a strict period would leave nothing to resample) */
		x = x * 1103515245u + 12345u;
		a[i] = 0.100 + 0.001 * ((int)((x >> 16) % 11) - 5);
		x = x * 1103515245u + 12345u;
		b[i] = 0.080 + 0.001 * ((int)((x >> 16) % 11) - 5);
	}
	diag_diff d1, d2;
	diag_bootstrap_diff(a, 200, b, 200, 50, DIAG_BOOTSTRAP_RESAMPLES, DIAG_BOOTSTRAP_SEED, &d1);
	diag_bootstrap_diff(a, 200, b, 200, 50, DIAG_BOOTSTRAP_RESAMPLES, DIAG_BOOTSTRAP_SEED, &d2);
	assert_float_equal(d1.diff, -0.020, 1e-9);
	assert_true(d1.hi < 0 && d1.lo < d1.hi);
	assert_true(d1.lo > -0.03);
	assert_float_equal(d1.lo, d2.lo, 0); /* same seed, same interval */
	assert_float_equal(d1.hi, d2.hi, 0);
	/* The same sample on both sides: the interval holds 0. */
	diag_bootstrap_diff(a, 200, a, 200, 90, DIAG_BOOTSTRAP_RESAMPLES, DIAG_BOOTSTRAP_SEED, &d1);
	assert_float_equal(d1.diff, 0, 1e-12);
	assert_true(d1.lo <= 0 && d1.hi >= 0);
	/* Too few samples: no interval. */
	diag_bootstrap_diff(a, 1, b, 200, 50, DIAG_BOOTSTRAP_RESAMPLES, DIAG_BOOTSTRAP_SEED, &d1);
	assert_true(isnan(d1.lo) && isnan(d1.hi));
}

static void test_compare(void **state)
{
	(void)state;
	timeline *base = fx_healthy(), *cand = fx_healthy();
	starve(base, 0, base->n);
	saturate_core(base, 3, 0, base->n);
	steady_steps(base, 0.100, 500);
	steady_steps(cand, 0.080, 500);
	snprintf(base->command, sizeof base->command,
	         "python train.py --batch-size 64 --workers 1");
	snprintf(cand->command, sizeof cand->command,
	         "python train.py --batch-size 64 --workers 4");
	diag_opts o;
	diag_opts_default(&o);
	diag_comparison c;
	diag_compare(base, NULL, cand, NULL, &o, &c);
	assert_int_equal(c.verdict, -1);
	assert_int_equal(c.p50_verdict, -1);
	assert_true(c.by_steps);
	assert_float_equal(c.mean.diff, -0.020, 1e-4);
	assert_true(c.mean.hi < 0);
	assert_float_equal(c.p50.diff, -0.020, 1e-3);
	assert_true(c.p50.hi < 0);
	assert_float_equal(c.base.steps.per_s, 10, 0.05);
	assert_float_equal(c.cand.steps.per_s, 12.5, 0.05);
	assert_float_equal(c.base.util_mean, 40, EPS);
	assert_float_equal(c.cand.util_mean, 96, EPS);
	assert_int_equal(c.nchanges, 1);
	assert_string_equal(c.changes[0].what, "argument --workers");
	assert_string_equal(c.changes[0].base, "1");
	assert_string_equal(c.changes[0].cand, "4");
	assert_int_equal(c.nfixed, 1);
	assert_string_equal(c.fixed[0], "data-starved");
	assert_int_equal(c.nappeared, 0);
	diag_comparison_free(&c);

	/* Two things changed: an argument and an environment variable. */
	diag_meta ma = {0}, mb = {0};
	diag_meta_set(&ma, "env.CUDA_VISIBLE_DEVICES", "0");
	diag_meta_set(&mb, "env.CUDA_VISIBLE_DEVICES", "1");
	diag_meta_set(&mb, "env.OMP_NUM_THREADS", "8");
	snprintf(cand->command, sizeof cand->command,
	         "python train.py --batch-size=128 --workers 1");
	diag_compare(base, &ma, cand, &mb, &o, &c);
	assert_int_equal(c.nchanges, 3);
	assert_string_equal(c.changes[0].what, "argument --batch-size");
	assert_string_equal(c.changes[0].cand, "128");
	assert_string_equal(c.changes[1].what, "env CUDA_VISIBLE_DEVICES");
	assert_string_equal(c.changes[2].what, "env OMP_NUM_THREADS");
	assert_string_equal(c.changes[2].base, "(absent)");
	diag_comparison_free(&c);
	diag_meta_free(&ma);
	diag_meta_free(&mb);

	/* The median faster, the tail much slower: slower overall (the mean decides). */
	cand->nsteps = 0;
	double t = 0.5;
	for (int k = 0; k < 500; k++) {
		tl_add_step(cand, t, k);
		t += k % 5 == 4 ? 0.400 : 0.060 + 0.001 * (k % 3);
	}
	diag_compare(base, NULL, cand, NULL, &o, &c);
	assert_int_equal(c.verdict, 1);
	assert_int_equal(c.p50_verdict, -1);
	assert_true(c.mean.lo > 0);
	assert_true(c.cand.steps.per_s < c.base.steps.per_s);
	diag_comparison_free(&c);

	/* The same recording twice: no difference, nothing changed. */
	diag_compare(base, NULL, base, NULL, &o, &c);
	assert_int_equal(c.verdict, 0);
	assert_int_equal(c.nchanges, 0);
	assert_int_equal(c.nfixed + c.nappeared, 0);
	diag_comparison_free(&c);
	tl_free(base);
	tl_free(cand);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_healthy),
	    cmocka_unit_test(test_not_on_gpu),
	    cmocka_unit_test(test_data_starved_cpu),
	    cmocka_unit_test(test_data_starved_io),
	    cmocka_unit_test(test_data_starved_control),
	    cmocka_unit_test(test_live_summary),
	    cmocka_unit_test(test_launch_bound),
	    cmocka_unit_test(test_sync_wait),
	    cmocka_unit_test(test_memory_bound),
	    cmocka_unit_test(test_memory_full_idle),
	    cmocka_unit_test(test_oom),
	    cmocka_unit_test(test_throttled),
	    cmocka_unit_test(test_pcie),
	    cmocka_unit_test(test_imbalance),
	    cmocka_unit_test(test_all_on_gpu0),
	    cmocka_unit_test(test_contention),
	    cmocka_unit_test(test_host_swap),
	    cmocka_unit_test(test_gpu_fault),
	    cmocka_unit_test(test_gpu_fault_vendor),
	    cmocka_unit_test(test_low_util_goal),
	    cmocka_unit_test(test_no_tree_idle_gpu),
	    cmocka_unit_test(test_thresholds),
	    cmocka_unit_test(test_bootstrap),
	    cmocka_unit_test(test_compare),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
