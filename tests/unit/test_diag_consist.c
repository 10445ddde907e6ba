/*
 * The findings agree with the quadrant, on hand-built timelines: a job
 * stopped with its memory held (SIGSTOP, a debugger) is memory-full-compute-idle
 * naming the stopped process, a saturated loader is data-starved saying so,
 * and a grid of utilization x memory x stop x loader never gives a
 * contradiction (the relation is the one docs/rules.md
 * states; tests/e2e/diagnose_sim.sh checks it on the labelled set).
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
#define MEM_73GB 69632.0 /* 73 GB (68 GiB) of the H100's 81559 MiB: 85 % */

/* Does finding f name GPU position g? */
static bool names(const diag_finding *f, int g)
{
	return f && (f->gpus & (1ULL << g));
}

static bool cites_memory(const diag_finding *f, int g)
{
	for (int i = 0; f && i < f->nev; i++)
		if (!strcmp(f->ev[i].metric, "memory.used") && f->ev[i].gpu == g)
			return true;
	return false;
}

/*
 * The consistency relation between the findings and the quadrants of the
 * job's GPUs (docs/report.md, "Findings and the quadrant"). Returns the first
 * contradiction in buf, NULL when there is none.
 */
static const char *contradiction(const diag_result *r, char *buf, size_t len)
{
	const diag_finding *mf = diag_find(r, "memory-full-compute-idle"),
	                   *lu = diag_find(r, "low-utilization"), *hy = diag_find(r, "healthy");
	bool few = diag_find(r, "too-little-data") != NULL;
	for (int g = 0; g < r->ngpu; g++) {
		const diag_gpu_summary *s = &r->gpu[g];
		diag_quadrant q = s->quadrant;
		const char *qn = diag_quadrant_name(q);
		bool busy = q == DIAG_Q_BUSY_FULL || q == DIAG_Q_BUSY_ROOMY;
		if (names(mf, g) && (!s->job || q != DIAG_Q_IDLE_FULL))
			snprintf(buf, len, "memory-full-compute-idle on GPU %d in %s", g, qn);
		else if (!s->job)
			continue;
		else if (few && q != DIAG_Q_UNKNOWN)
			snprintf(buf, len, "too-little-data, yet GPU %d is %s", g, qn);
		else if (q == DIAG_Q_IDLE_FULL && !names(mf, g) &&
		         !(names(diag_find(r, "data-starved"), g) &&
		           cites_memory(diag_find(r, "data-starved"), g)))
			snprintf(buf, len, "GPU %d idle-full, explained by nothing: %s", g,
			         fx_ids(r));
		else if (names(lu, g) && (busy || q == DIAG_Q_IDLE_FULL))
			snprintf(buf, len, "low-utilization on GPU %d in %s", g, qn);
		else if (hy && r->goal == DIAG_GOAL_THROUGHPUT && !busy && q != DIAG_Q_UNKNOWN)
			snprintf(buf, len, "healthy, yet GPU %d is %s", g, qn);
		else
			continue;
		return buf;
	}
	return NULL;
}

/* hay contains needle, else a failure that shows hay. */
static void contains(const char *hay, const char *needle)
{
	if (!hay || !strstr(hay, needle))
		fail_msg("'%s' not in '%s'", needle, hay ? hay : "(null)");
}

/* The evidence of f about metric/stat, failing the test when there is none. */
static const diag_evidence *ev(const diag_finding *f, const char *metric, const char *stat)
{
	const diag_evidence *e = fx_ev(f, metric, stat);
	if (!e)
		fail_msg("%s: no evidence %s (%s)", f->id, metric, stat ? stat : "any");
	return e;
}

static void expect_consistent(const diag_result *r, const char *what)
{
	char buf[512];
	const char *bad = contradiction(r, buf, sizeof buf);
	if (bad)
		fail_msg("%s: %s", what, bad);
}

/* GPU 0 at utilization u (the driver's samples, SMs and power to match) for samples [a, b). */
static void util_level(timeline *tl, int a, int b, double u)
{
	for (int s = a; s < b; s++) {
		tl_set_gpu(tl, 0, GM_UTIL_GPU, s, u);
		tl_set_gpu(tl, 0, GM_UTIL_SAMPLES_MIN, s, u > 50 ? u - 5 : 0);
		tl_set_gpu(tl, 0, GM_UTIL_SAMPLES_MAX, s, u > 0 ? u + 5 > 100 ? 100 : u + 5 : 0);
		tl_set_gpu(tl, 0, GM_UTIL_SAMPLES_IDLE, s, 100 - u);
		tl_set_gpu(tl, 0, GM_GPM_SM_ACTIVE, s, 0.9 * u);
		tl_set_gpu(tl, 0, GM_GPM_DRAM_ACTIVE, s, 0.3 * u);
		tl_set_gpu(tl, 0, GM_POWER_DRAW, s, 70 + 5.3 * u);
	}
}

static void memory(timeline *tl, double mib)
{
	for (int s = 0; s < tl->n; s++)
		tl_set_gpu(tl, 0, GM_MEM_USED, s, mib);
}

/* The job's processes stopped (state st: 'T' or 't') for samples [a, b): GPU idle, no CPU. */
static void stop_job(timeline *tl, int a, int b, char st)
{
	util_level(tl, a, b, 0);
	for (int s = a; s < b; s++)
		tl_set_host(tl, HM_TREE_CPU, s, 0);
	for (int i = 0; i < tl->nprocs; i++) {
		tl_proc *p = &tl->procs[i];
		if (!p->in_tree)
			continue;
		bool stopped = p->s >= a && p->s < b;
		p->state = stopped ? st : 'S';
		if (stopped)
			p->cpu_pct = 0;
	}
}

/* The regression: 73 GB held on an 80 GB H100, the job at a breakpoint 97 of 120 s. */
static timeline *stopped_73gb(char st)
{
	timeline *tl = fx_healthy();
	memory(tl, MEM_73GB);
	stop_job(tl, 12, 109, st);
	return tl;
}

static void test_stopped_memory_held(void **state)
{
	(void)state;
	timeline *tl = stopped_73gb('T');
	diag_result r;
	fx_run(tl, &r);
	assert_int_equal(r.gpu[0].quadrant, DIAG_Q_IDLE_FULL);
	const diag_finding *f = fx_expect(&r, "memory-full-compute-idle", DIAG_WARN);
	assert_string_equal(diag_top_finding(&r)->id, "memory-full-compute-idle");
	fx_expect_none(&r, "low-utilization");
	fx_expect_none(&r, "data-starved");
	fx_expect_none(&r, "host-contention");
	contains(f->title, "GPU 0 memory 85 % full while utilization averages 18 %");
	contains(f->title, "stopped for 97 s");
	/* The process: its PID, its command, how long it was seen stopped. */
	contains(f->note, "PID 4000 (python train.py)");
	contains(f->note, "stopped (state T) for 97 s");
	contains(f->advice, "kill -CONT");
	contains(f->advice, "debugger");
	contains(f->advice, "torch.cuda.empty_cache()");
	assert_float_equal(ev(f, "process.state", NULL)->value, 97, EPS);
	assert_float_equal(ev(f, "memory.used", "peak")->value, 100 * MEM_73GB / FX_MEM_TOTAL,
	                   1e-9);
	assert_float_equal(ev(f, "memory.used", "peak")->threshold, 80, EPS);
	assert_float_equal(f->confidence, 0.85, EPS);
	expect_consistent(&r, "stopped, 73 GB");
	diag_result_free(&r);
	tl_free(tl);

	/* A debugger holds it (traced, state t): said so. */
	tl = stopped_73gb('t');
	fx_run(tl, &r);
	f = fx_expect(&r, "memory-full-compute-idle", DIAG_WARN);
	contains(f->title, "held by a debugger for 97 s");
	contains(f->note, "held by a debugger (state t, traced) for 97 s");
	expect_consistent(&r, "traced, 73 GB");
	diag_result_free(&r);
	tl_free(tl);
}

/* Stopped at the end, until killed: the stopped tail is analysed, not cut as teardown. */
static void test_stopped_tail(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	memory(tl, MEM_73GB);
	stop_job(tl, 20, tl->n, 'T');
	diag_result r;
	fx_run(tl, &r);
	assert_int_equal(r.to, tl->n);
	assert_int_equal(r.gpu[0].quadrant, DIAG_Q_IDLE_FULL);
	const diag_finding *f = fx_expect(&r, "memory-full-compute-idle", DIAG_WARN);
	contains(f->note, "PID 4000");
	expect_consistent(&r, "stopped tail");
	diag_result_free(&r);
	tl_free(tl);
}

/* Memory not held: low-utilization names the stopped process instead of "nothing explains". */
static void test_stopped_memory_free(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	stop_job(tl, 12, 109, 'T');
	diag_result r;
	fx_run(tl, &r);
	assert_int_equal(r.gpu[0].quadrant, DIAG_Q_IDLE_EMPTY);
	const diag_finding *f = fx_expect(&r, "low-utilization", DIAG_WARN);
	assert_null(strstr(f->title, "no host or GPU limit explains"));
	contains(f->title, "stopped for 97 s");
	contains(f->note, "PID 4000 (python train.py)");
	contains(f->advice, "kill -CONT");
	fx_expect_none(&r, "memory-full-compute-idle");
	expect_consistent(&r, "stopped, memory free");
	diag_result_free(&r);
	tl_free(tl);
}

/* A loader saturating a core keeps 85 % of memory waiting: data-starved stands and says so. */
static void test_loader_explains_idle_full(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	memory(tl, MEM_73GB);
	for (int s = 0; s < tl->n; s++) {
		util_level(tl, s, s + 1, s % 2 ? 50 : 10);
		tl_set_gpu(tl, 0, GM_UTIL_SAMPLES_MIN, s, 0);
		tl_set_gpu(tl, 0, GM_UTIL_SAMPLES_MAX, s, 100);
		tl_set_host(tl, HM_CPU_BUSY_MAX, s, 100);
		tl_set_host(tl, HM_CPU_BUSY_MAX_CORE, s, 2);
	}
	diag_result r;
	fx_run(tl, &r);
	assert_int_equal(r.gpu[0].quadrant, DIAG_Q_IDLE_FULL);
	const diag_finding *f = fx_expect(&r, "data-starved", DIAG_WARN);
	fx_expect_none(&r, "memory-full-compute-idle");
	assert_float_equal(ev(f, "memory.used", "peak")->value, 100 * MEM_73GB / FX_MEM_TOTAL,
	                   1e-9);
	contains(f->note, "GPU 0 holds 85 % of its memory while it waits");
	expect_consistent(&r, "loader-bound, 73 GB");
	diag_result_free(&r);

	/* The same GPU waiting on storage, not on a saturated loader: memory-full-compute-idle
	 * too, whatever else is found. */
	for (int s = 0; s < tl->n; s++) {
		tl_set_host(tl, HM_CPU_BUSY_MAX, s, 30);
		tl_set_host(tl, HM_CPU_IOWAIT, s, 40);
		tl_set_host(tl, HM_TREE_READ, s, 50 * 1024 * 1024);
	}
	for (int i = 0; i < tl->nprocs; i++)
		tl->procs[i].cpu_pct = 5;
	fx_run(tl, &r);
	fx_expect(&r, "memory-full-compute-idle", DIAG_WARN);
	expect_consistent(&r, "storage-bound, 73 GB");
	diag_result_free(&r);
	tl_free(tl);
}

/* Too few samples: no quadrant either (three samples of a GPU holding 85 % idle). */
static void test_too_little_data(void **state)
{
	(void)state;
	timeline *tl = tl_new(1, 2);
	tl->have_root = true;
	tl->gpu[0].index = 0;
	for (int i = 0; i < 3; i++) {
		int s = tl_add_sample(tl, 0.3 * i);
		fx_gpu_busy(tl, 0, s);
		fx_proc(tl, s, FX_PID, 0, true, true, MEM_73GB, 5);
	}
	tl->duration = 0.6;
	memory(tl, MEM_73GB);
	util_level(tl, 0, tl->n, 12);
	diag_result r;
	fx_run(tl, &r);
	fx_expect(&r, "too-little-data", DIAG_INFO);
	assert_int_equal(r.gpu[0].quadrant, DIAG_Q_UNKNOWN);
	expect_consistent(&r, "three samples");
	diag_result_free(&r);
	tl_free(tl);
}

/*
 * Every corner and edge: utilization levels around the quadrant's line,
 * memory below, between and above the quadrant's and the rule's lines,
 * with and without a stopped job and a saturated loader, for both goals.
 */
static void test_grid(void **state)
{
	(void)state;
	static const double utils[] = {2, 20, 35, 49, 51, 70, 95};
	static const double mems[] = {0.10, 0.60, 0.79, 0.81, 0.85, 0.89, 0.91, 0.97, 0.995};
	int runs = 0;
	for (size_t ui = 0; ui < sizeof utils / sizeof *utils; ui++)
		for (size_t mi = 0; mi < sizeof mems / sizeof *mems; mi++)
			for (int variant = 0; variant < 4; variant++)
				for (int goal = 0; goal < 2; goal++) {
					timeline *tl = fx_healthy();
					memory(tl, mems[mi] * FX_MEM_TOTAL);
					for (int s = 0; s < tl->n; s++)
						util_level(tl, s, s + 1,
						           s % 2 ? utils[ui] : utils[ui] * 0.6);
					if (variant & 1)
						stop_job(tl, 40, 80, variant & 2 ? 't' : 'T');
					if (variant == 2)
						for (int s = 0; s < tl->n; s++)
							tl_set_host(tl, HM_CPU_BUSY_MAX, s, 100);
					diag_opts o;
					diag_opts_default(&o);
					o.goal = goal ? DIAG_GOAL_LATENCY : DIAG_GOAL_THROUGHPUT;
					diag_result r;
					diag_run(tl, &o, &r);
					char what[96];
					snprintf(
					    what, sizeof what,
					    "util %.0f %%, memory %.1f %%, variant %d, goal %s",
					    utils[ui], 100 * mems[mi], variant,
					    diag_goal_name(o.goal));
					expect_consistent(&r, what);
					runs++;
					diag_result_free(&r);
					tl_free(tl);
				}
	assert_int_equal(runs, 7 * 9 * 4 * 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stopped_memory_held),
	    cmocka_unit_test(test_stopped_tail),
	    cmocka_unit_test(test_stopped_memory_free),
	    cmocka_unit_test(test_loader_explains_idle_full),
	    cmocka_unit_test(test_too_little_data),
	    cmocka_unit_test(test_grid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
