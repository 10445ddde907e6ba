/*
 * Host-side causes on hand-built timelines: the job's own data path against
 * other processes loading the host (host-contention), machine-wide
 * evidence, and multi-GPU data starvation against launch-bound and
 * sync-wait.
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

/* GPU 0 idles 60 % with the driver samples swinging; core 1 saturated. */
static void idle_gpu_busy_host(timeline *tl)
{
	for (int s = 0; s < tl->n; s++) {
		tl_set_gpu(tl, 0, GM_UTIL_GPU, s, s % 2 ? 60 : 20);
		tl_set_gpu(tl, 0, GM_UTIL_SAMPLES_MIN, s, 0);
		tl_set_gpu(tl, 0, GM_UTIL_SAMPLES_MAX, s, 100);
		tl_set_gpu(tl, 0, GM_GPM_SM_ACTIVE, s, 35);
		tl_set_host(tl, HM_CPU_BUSY_MAX, s, 100);
		tl_set_host(tl, HM_CPU_BUSY_MAX_CORE, s, 1);
	}
}

/* Another user's busy process seen by the recorder's host scan at every sample. */
static void foreign_hog(timeline *tl, unsigned pid, double cpu)
{
	for (int s = 0; s < tl->n; s++) {
		tl_proc *p = fx_proc(tl, s, pid, -1, false, true, NAN, cpu);
		snprintf(p->cmd, sizeof p->cmd, "ffmpeg -i big.mkv");
	}
}

static void set_tree(timeline *tl, double tree_cpu, double proc_cpu)
{
	for (int s = 0; s < tl->n; s++)
		tl_set_host(tl, HM_TREE_CPU, s, tree_cpu);
	for (int i = 0; i < tl->nprocs; i++)
		if (tl->procs[i].in_tree)
			tl->procs[i].cpu_pct = proc_cpu;
}

/* A latency-bound job at 1 % of a core on a host someone else saturates. */
static void test_noisy_neighbour(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	idle_gpu_busy_host(tl);
	set_tree(tl, 1, 1);
	foreign_hog(tl, 777, 195);
	foreign_hog(tl, 778, 20);
	diag_result r;
	fx_run(tl, &r);
	fx_expect_none(&r, "data-starved");
	const diag_finding *f = fx_expect(&r, "host-contention", DIAG_WARN);
	assert_non_null(strstr(f->title, "other processes load the host: PID 777 ffmpeg -i big.mkv "
	                                 "(195 %), PID 778"));
	assert_non_null(strstr(f->title, "the job itself uses 1 % of a core"));
	assert_float_equal(fx_ev(f, "tree.cpu", NULL)->value, 1, EPS);
	assert_float_equal(fx_ev(f, "tree.cpu", NULL)->threshold, 90, EPS);
	assert_float_equal(fx_ev(f, "process.cpu", "PID 777")->value, 195, EPS);
	assert_float_equal(fx_ev(f, "process.cpu", "other processes")->value, 215, EPS);
	assert_non_null(strstr(f->note, "of the host's 4 cores"));
	assert_non_null(strstr(f->advice, "Other processes"));
	fx_expect_none(&r, "low-utilization");
	assert_string_equal(diag_top_finding(&r)->id, "host-contention");
	assert_int_equal(r.chain[2].status, DIAG_STEP_PROBLEM);
	assert_string_equal(r.chain[2].findings[0], "host-contention");
	double conf_unknown = f->confidence;
	diag_result_free(&r);

	/* The same job with its processes asleep whenever sampled (waiting on I/O or a
	 * remote service, not on a CPU): still said, but ranked lower, and why. */
	for (int i = 0; i < tl->nprocs; i++)
		if (tl->procs[i].in_tree)
			tl->procs[i].state = 'S';
	fx_run(tl, &r);
	f = fx_expect(&r, "host-contention", DIAG_WARN);
	assert_float_equal(f->confidence, conf_unknown - 0.3, EPS);
	assert_float_equal(fx_ev(f, "process.state", NULL)->value, 0, EPS);
	assert_non_null(strstr(f->note, "runnable in only 0 %"));
	diag_result_free(&r);
	for (int i = 0; i < tl->nprocs; i++)
		if (tl->procs[i].in_tree)
			tl->procs[i].state = 0;

	/* A short-lived helper of the job at a full core in the two samples it lived
	 * (a process starting up): too few samples to call it a saturated loader. */
	for (int s = 3; s < 5; s++) {
		tl_proc *p = fx_proc(tl, s, 4242, -1, true, true, NAN, 100);
		snprintf(p->cmd, sizeof p->cmd, "helper --once");
	}
	fx_run(tl, &r);
	fx_expect_none(&r, "data-starved");
	fx_expect(&r, "host-contention", DIAG_WARN);
	diag_result_free(&r);

	/* The job's own loader at a core: data-starved, the neighbour named in a note. */
	set_tree(tl, 100, 100);
	fx_run(tl, &r);
	f = fx_expect(&r, "data-starved", DIAG_WARN);
	assert_non_null(strstr(f->note, "Other processes also load the host"));
	fx_expect_none(&r, "host-contention");
	diag_result_free(&r);

	/* A loader getting 40 % of a core where a hog gets 60 %: CPU-bound on a shared host,
	 * still the job's own data path. */
	timeline *sh = fx_healthy();
	idle_gpu_busy_host(sh);
	set_tree(sh, 40, 40);
	foreign_hog(sh, 779, 60);
	fx_run(sh, &r);
	fx_expect(&r, "data-starved", DIAG_WARN);
	fx_expect_none(&r, "host-contention");
	diag_result_free(&r);
	tl_free(sh);

	/* A loader at 20 % of a core next to a two-core hog, but runnable whenever sampled:
	 * it waits for nothing but a CPU, so it is CPU-bound. */
	sh = fx_healthy();
	idle_gpu_busy_host(sh);
	set_tree(sh, 20, 20);
	foreign_hog(sh, 780, 195);
	fx_run(sh, &r);
	fx_expect(&r, "host-contention", DIAG_WARN); /* sleeping (state unknown): not its own */
	diag_result_free(&r);
	for (int i = 0; i < sh->nprocs; i++)
		if (sh->procs[i].in_tree)
			sh->procs[i].state = 'R';
	fx_run(sh, &r);
	fx_expect(&r, "data-starved", DIAG_WARN);
	fx_expect_none(&r, "host-contention");
	diag_result_free(&r);
	tl_free(sh);

	/* iowait from someone else's I/O: the job reads nothing. */
	timeline *io = fx_healthy();
	idle_gpu_busy_host(io);
	set_tree(io, 5, 5);
	for (int s = 0; s < io->n; s++) {
		tl_set_host(io, HM_CPU_BUSY_MAX, s, 30);
		tl_set_host(io, HM_CPU_IOWAIT, s, 40);
		tl_set_host(io, HM_TREE_READ, s, 0);
	}
	fx_run(io, &r);
	fx_expect_none(&r, "data-starved");
	f = fx_expect(&r, "host-contention", DIAG_WARN);
	assert_non_null(strstr(f->title, "iowait is 40 %"));
	diag_result_free(&r);
	tl_free(io);
	tl_free(tl);
}

/* Machine-wide, cores at a third: I/O pressure alone (iowait under its threshold, as when the
 * CPUs are busy with other work) says storage; without it nothing is blamed. */
static void test_io_pressure_starved(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	idle_gpu_busy_host(tl);
	tl->have_root = false;
	for (int i = 0; i < tl->nprocs; i++)
		tl->procs[i].in_tree = false;
	for (int s = 0; s < tl->n; s++) {
		tl_set_host(tl, HM_CPU_BUSY_MAX, s, 30);
		tl_set_host(tl, HM_CPU_IOWAIT, s, 4);
		tl_set_host(tl, HM_PSI_IO_SOME, s, 5);
	}
	diag_result r;
	fx_run(tl, &r);
	fx_expect_none(&r, "data-starved");
	diag_result_free(&r);
	for (int s = 0; s < tl->n; s++)
		tl_set_host(tl, HM_PSI_IO_SOME, s, 55);
	fx_run(tl, &r);
	const diag_finding *f = fx_expect(&r, "data-starved", DIAG_WARN);
	assert_non_null(strstr(f->title, "tasks stall on I/O 55 % of the time"));
	bool cited = false;
	for (int e = 0; e < f->nev; e++)
		cited |=
		    !strcmp(f->ev[e].metric, "psi.io.some") && diag_evidence_met(&f->ev[e]) == 1;
	assert_true(cited);
	diag_result_free(&r);
	tl_free(tl);
}

/* Machine-wide: the CPU evidence is the host's, and said to be. */
static void test_machine_wide_starved(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	idle_gpu_busy_host(tl);
	tl->have_root = false;
	for (int i = 0; i < tl->nprocs; i++)
		tl->procs[i].in_tree = false;
	diag_result r;
	fx_run(tl, &r);
	const diag_finding *f = fx_expect(&r, "data-starved", DIAG_WARN);
	assert_non_null(strstr(f->note, "the CPU and I/O evidence is the whole host's"));
	assert_true(f->confidence < 0.8);
	diag_result_free(&r);
	tl_free(tl);
}

/* Four ranks waiting in their collectives: utilization spins at 95 %, SMs 15 %. */
static timeline *ranks_waiting(bool loaders_hot)
{
	timeline *tl = fx_healthy_n(4);
	for (int s = 0; s < tl->n; s++) {
		for (int g = 0; g < 4; g++) {
			tl_set_gpu(tl, g, GM_GPM_SM_ACTIVE, s, 15 + (s + g) % 3);
			tl_set_gpu(tl, g, GM_POWER_DRAW, s, 250);
		}
		/* one data-loader worker per rank, no GPU context */
		for (int k = 0; k < 4; k++)
			fx_proc(tl, s, 5000 + (unsigned)k, -1, true, true, NAN,
			        loaders_hot ? 98 : 3);
		tl_set_host(tl, HM_TREE_CPU, s, loaders_hot ? 4 * 98 + 40 : 4 * 3 + 400);
		tl_set_host(tl, HM_CPU_BUSY_MAX, s, 100);
	}
	return tl;
}

static void test_multi_gpu_starved(void **state)
{
	(void)state;
	timeline *tl = ranks_waiting(true);
	diag_result r;
	fx_run(tl, &r);
	const diag_finding *f = fx_expect(&r, "data-starved", DIAG_WARN);
	assert_non_null(strstr(f->title, "GPUs 0, 1, 2 and 3 wait for data in every step"));
	assert_non_null(strstr(f->title, "4 of 4 data-loader workers are at 100 %"));
	assert_float_equal(fx_ev(f, "tree.cpu", "data-loader workers saturated")->value, 4, EPS);
	assert_non_null(strstr(f->note, "not launch-bound"));
	fx_expect_none(&r, "launch-bound");
	fx_expect_none(&r, "sync-wait");
	assert_string_equal(diag_top_finding(&r)->id, "data-starved");
	diag_result_free(&r);
	tl_free(tl);

	/* The same GPUs with idle loaders and the ranks' own threads busy: launch-bound. */
	tl = ranks_waiting(false);
	fx_run(tl, &r);
	fx_expect(&r, "launch-bound", DIAG_WARN);
	fx_expect_none(&r, "data-starved");
	diag_result_free(&r);
	tl_free(tl);

	/* Loaders at half a core each on a saturated shared host: still the job's data path. */
	tl = ranks_waiting(true);
	for (int i = 0; i < tl->nprocs; i++)
		if (tl->procs[i].gpu < 0)
			tl->procs[i].cpu_pct = 45;
	for (int s = 0; s < tl->n; s++)
		tl_set_host(tl, HM_TREE_CPU, s, 4 * 45 + 20);
	fx_run(tl, &r);
	f = fx_expect(&r, "data-starved", DIAG_WARN);
	assert_non_null(strstr(f->title, "on a saturated host"));
	fx_expect_none(&r, "launch-bound");
	diag_result_free(&r);
	tl_free(tl);
}

/* Over PCIe without GPM: the waiters draw 18 % less power in every step, under the plain 20 %. */
static void test_sync_wait_steady(void **state)
{
	(void)state;
	timeline *tl = fx_healthy_n(4);
	for (int g = 0; g < 4; g++)
		for (int h = 0; h < 4; h++)
			if (g != h) {
				tl->nvlinks[g][h] = 0;
				tl->topo[g][h] = 50;
			}
	for (int s = 0; s < tl->n; s++)
		for (int g = 0; g < 4; g++) {
			tl_set_gpu(tl, g, GM_GPM_SM_ACTIVE, s, NAN);
			/* ramp-up samples and noise: the straggler leads in every sample */
			double p = g ? 410 : 500;
			tl_set_gpu(tl, g, GM_POWER_DRAW, s,
			           p * (s < 5 ? 0.3 : 1) + (s * 7 + g) % 9);
		}
	diag_result r;
	fx_run(tl, &r);
	const diag_finding *f = fx_expect(&r, "sync-wait", DIAG_WARN);
	assert_non_null(strstr(f->title, "GPUs 1, 2 and 3 wait in step for GPU 0"));
	const diag_evidence *e = fx_ev(f, "power.draw", "shortfall of the waiting GPUs (steady");
	assert_non_null(e);
	assert_true(e->value > 15 && e->value < 20);
	assert_float_equal(e->threshold, 12, EPS);
	assert_non_null(strstr(f->note, "steady"));
	assert_non_null(strstr(f->advice, "PCIe") ? f->advice : NULL);
	diag_result_free(&r);

	/* The same shortfall in only every other sample, the lead changing: not steady. */
	for (int s = 0; s < tl->n; s++)
		for (int g = 0; g < 4; g++)
			tl_set_gpu(tl, g, GM_POWER_DRAW, s, (s % 2 ? g == 0 : g == 1) ? 500 : 420);
	fx_run(tl, &r);
	fx_expect_none(&r, "sync-wait");
	diag_result_free(&r);
	tl_free(tl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_noisy_neighbour),     cmocka_unit_test(test_machine_wide_starved),
	    cmocka_unit_test(test_io_pressure_starved), cmocka_unit_test(test_multi_gpu_starved),
	    cmocka_unit_test(test_sync_wait_steady),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
