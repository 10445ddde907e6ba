/* top's model: ring, sorting, filter, GPU selection, pause, tree, window, interval, findings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "top/model.h"

/* Two GPUs at positions 0 and 1 that NVML calls 2 and 3 (as with --gpus 2,3). */
static void init_model(top_model *m)
{
	top_gpu_info g[2] = {{.index = 2,
	                      .name = "NVIDIA H100 80GB HBM3",
	                      .uuid = "GPU-8f2a0000-1111-2222-3333-444444444444"},
	                     {.index = 3,
	                      .name = "NVIDIA H100 80GB HBM3",
	                      .uuid = "GPU-9c1b0000-1111-2222-3333-444444444444"}};
	assert_int_equal(top_model_init(m, 2, g), 0);
}

static tl_proc *proc(snapshot *s, unsigned pid, unsigned ppid, int gpu, const char *user,
                     const char *cmd)
{
	tl_proc *p = snapshot_add_proc(s);
	p->pid = pid;
	p->ppid = ppid;
	p->gpu = gpu;
	p->alive = true;
	snprintf(p->user, sizeof p->user, "%s", user);
	snprintf(p->cmd, sizeof p->cmd, "%s", cmd);
	return p;
}

/* Sample at t seconds: GPU utilization u0/u1 (NAN: absent), two cores. */
static void sample(snapshot *s, double t, double u0, double u1)
{
	snapshot_init(s, 2);
	s->t_wall = 1000 + t;
	s->t_mono_ns = (int64_t)(t * 1e9);
	double u[2] = {u0, u1};
	for (int g = 0; g < 2; g++) {
		if (!isnan(u[g])) {
			s->gpu[g].v[GM_UTIL_GPU] = u[g];
			s->gpu[g].ok[GM_UTIL_GPU] = 1;
		}
		s->gpu[g].v[GM_MEM_TOTAL] = 81559;
		s->gpu[g].ok[GM_MEM_TOTAL] = 1;
		s->gpu[g].v[GM_MEM_USED] = 1024;
		s->gpu[g].ok[GM_MEM_USED] = 1;
	}
	snapshot_set_ncpu(s, 2);
	s->cpu_busy[0] = 100;
	s->cpu_busy[1] = 3;
	s->cpu_iowait[0] = s->cpu_iowait[1] = 0;
	s->h[HM_CPU_BUSY_MAX] = 100;
	s->h[HM_CPU_BUSY_MAX_CORE] = 0;
	s->h[HM_CPU_BUSY_AVG] = 51.5;
	s->h[HM_CPU_IOWAIT] = 0;
}

/*
 * Four GPU rows: 10 (GPU 2, 4 GiB, cpu 50), 20 (GPU 3, 1 GiB, cpu n/a),
 * 30 (GPU 2, 8 GiB, cpu 99), and 30 on GPU 3 too.
 */
static void procs4(snapshot *s)
{
	tl_proc *p = proc(s, 10, 1, 0, "alice", "python train.py --lr 3e-4");
	p->gpu_mem_mib = 4096, p->cpu_pct = 50, p->sm_pct = 40, p->rss_mib = 900;
	p = proc(s, 20, 1, 1, "bob", "ollama serve");
	p->gpu_mem_mib = 1024, p->sm_pct = 5, p->rss_mib = 300;
	p = proc(s, 30, 10, 0, "carol", "torchrun worker");
	p->gpu_mem_mib = 8192, p->cpu_pct = 99, p->sm_pct = 90, p->rss_mib = 2000;
	p = proc(s, 30, 10, 1, "carol", "torchrun worker");
	p->gpu_mem_mib = 512, p->cpu_pct = 99, p->rss_mib = 2000;
}

/* A model that has taken in one sample of procs4's processes. */
static void model_procs4(top_model *m)
{
	init_model(m);
	snapshot s;
	sample(&s, 0, 50, 50);
	procs4(&s);
	top_model_ingest(m, &s);
	snapshot_free(&s);
}

static void pids_are(const top_model *m, const unsigned *want, int n)
{
	assert_int_equal(m->nrows, n);
	for (int i = 0; i < n; i++)
		assert_int_equal(m->rows[i].p->pid, want[i]);
}

static void test_ring(void **state)
{
	(void)state;
	top_model m;
	init_model(&m);
	assert_null(top_model_shown(&m));
	snapshot s;
	for (int i = 0; i < TOP_RING_CAP + 100; i++) {
		sample(&s, i, i % 100, NAN);
		top_model_ingest(&m, &s);
		snapshot_free(&s);
	}
	assert_int_equal(m.n, TOP_RING_CAP);
	assert_int_equal(m.total, TOP_RING_CAP + 100);
	const snapshot *now = top_model_shown(&m);
	assert_float_equal(now->t_wall, 1000 + TOP_RING_CAP + 99, 1e-9);
	assert_float_equal(top_model_back(&m, 1)->t_wall, 1000 + TOP_RING_CAP + 98, 1e-9);
	assert_non_null(top_model_back(&m, TOP_RING_CAP - 1));
	assert_null(top_model_back(&m, TOP_RING_CAP));
	/* the graph's history reaches as far as the ring; absent stays absent */
	double u;
	assert_true(top_model_util(&m, TOP_RING_CAP - 1, 0, &u));
	assert_float_equal(u, 0, 0); /* the oldest kept: sample 100, at 100 % 100 */
	assert_true(top_model_util(&m, 3, 1, &u));
	assert_true(isnan(u));
	assert_false(top_model_util(&m, TOP_RING_CAP, 0, &u));
	assert_false(top_model_util(&m, 0, 2, &u));
	/* the copy is deep: absent stays absent */
	assert_false(now->gpu[1].ok[GM_UTIL_GPU]);
	top_model_free(&m);
}

static void test_sort_and_reverse(void **state)
{
	(void)state;
	top_model m;
	model_procs4(&m);
	top_model_refresh(&m);
	/* default: GPU, then PID */
	pids_are(&m, (unsigned[]){10, 30, 20, 30}, 4);
	top_model_set_sort(&m, TOP_SORT_GPUMEM); /* large first */
	pids_are(&m, (unsigned[]){30, 10, 20, 30}, 4);
	assert_float_equal(m.rows[0].p->gpu_mem_mib, 8192, 0);
	top_model_set_sort(&m, TOP_SORT_GPUMEM); /* the same key again flips it */
	assert_true(m.reverse);
	assert_float_equal(m.rows[0].p->gpu_mem_mib, 512, 0);
	top_model_set_sort(&m, TOP_SORT_CPU); /* an unknown CPU % sorts last either way */
	assert_int_equal(m.rows[3].p->pid, 20);
	m.reverse = true;
	top_model_refresh(&m);
	assert_int_equal(m.rows[3].p->pid, 20);
	assert_int_equal(m.rows[0].p->pid, 10);
	top_model_set_sort(&m, TOP_SORT_USER);
	pids_are(&m, (unsigned[]){10, 20, 30, 30}, 4);
	top_model_next_sort(&m);
	assert_int_equal(m.sort, TOP_SORT_GPUMEM);
	assert_int_equal(top_sort_parse("CPU"), TOP_SORT_CPU);
	assert_int_equal(top_sort_parse("nope"), -1);
	assert_string_equal(top_sort_name(TOP_SORT_RSS), "rss");
	top_model_free(&m);
}

static void test_filter_and_selection(void **state)
{
	(void)state;
	top_model m;
	model_procs4(&m);
	top_model_refresh(&m);
	top_model_set_filter(&m, "TORCHRUN"); /* case-insensitive, command */
	pids_are(&m, (unsigned[]){30, 30}, 2);
	top_model_set_filter(&m, "bob"); /* user */
	pids_are(&m, (unsigned[]){20}, 1);
	top_model_set_filter(&m, "2"); /* PID digits */
	pids_are(&m, (unsigned[]){20}, 1);
	top_model_set_filter(&m, "nothing like it");
	assert_int_equal(m.nrows, 0);
	assert_int_equal(m.sel, -1);
	assert_int_equal(m.nprocs_all, 4);
	top_model_set_filter(&m, "");
	assert_int_equal(m.nrows, 4);
	/* the selection follows its process when the order changes */
	top_model_select_row(&m, 2, 10);
	assert_int_equal(m.sel_pid, 20);
	top_model_set_sort(&m, TOP_SORT_GPUMEM);
	assert_int_equal(m.rows[m.sel].p->pid, 20);
	/* ... and stays on its line when the process is gone */
	snapshot t;
	sample(&t, 1, 50, 50);
	procs4(&t);
	t.nproc = 3; /* drop the GPU-3 record of 30 */
	t.procs[1].pid = 21;
	top_model_ingest(&m, &t);
	snapshot_free(&t);
	int before = m.sel;
	top_model_refresh(&m);
	assert_true(m.sel == before || m.sel == m.nrows - 1);
	assert_int_equal(m.sel_pid, m.rows[m.sel].p->pid);
	/* moving clamps and scrolls */
	top_model_move(&m, 100, 2);
	assert_int_equal(m.sel, m.nrows - 1);
	assert_int_equal(m.scroll, m.nrows - 2);
	top_model_move(&m, -100, 2);
	assert_int_equal(m.sel, 0);
	assert_int_equal(m.scroll, 0);
	top_model_free(&m);
}

static void test_gpu_selection(void **state)
{
	(void)state;
	top_model m;
	model_procs4(&m);
	char err[128];
	/* by NVML index, as on screen: 3 is position 1 */
	assert_true(top_model_set_gpus(&m, "3", err, sizeof err));
	assert_false(m.shown_gpu[0]);
	assert_true(m.shown_gpu[1]);
	assert_int_equal(top_model_gpus_shown(&m), 1);
	pids_are(&m, (unsigned[]){20, 30}, 2);
	/* by short UUID */
	assert_true(top_model_set_gpus(&m, "GPU-8f2a", err, sizeof err));
	assert_true(m.shown_gpu[0]);
	assert_false(m.shown_gpu[1]);
	/* a GPU that is not here: refused, selection unchanged */
	assert_false(top_model_set_gpus(&m, "0", err, sizeof err));
	assert_non_null(strstr(err, "no GPU 0"));
	assert_true(m.shown_gpu[0]);
	assert_false(m.shown_gpu[1]);
	assert_false(top_model_set_gpus(&m, "GPU-ffff", err, sizeof err));
	assert_true(top_model_set_gpus(&m, "all", err, sizeof err));
	assert_int_equal(top_model_gpus_shown(&m), 2);
	assert_true(top_model_set_gpus(&m, "3", err, sizeof err));
	assert_true(top_model_set_gpus(&m, "", err, sizeof err));
	assert_int_equal(top_model_gpus_shown(&m), 2);
	top_model_free(&m);
}

static void test_pause(void **state)
{
	(void)state;
	top_model m;
	init_model(&m);
	snapshot s;
	sample(&s, 0, 10, 10);
	top_model_ingest(&m, &s);
	snapshot_free(&s);
	top_model_pause(&m, true);
	for (int i = 1; i < 10; i++) {
		sample(&s, i, 10, 10);
		top_model_ingest(&m, &s);
		snapshot_free(&s);
	}
	assert_true(m.paused);
	assert_float_equal(top_model_shown(&m)->t_wall, 1000, 0);
	top_model_pause(&m, false);
	assert_float_equal(top_model_shown(&m)->t_wall, 1009, 0);
	/* a frozen sample about to leave the ring ends the pause */
	top_model_pause(&m, true);
	for (int i = 10; i < 10 + TOP_RING_CAP; i++) {
		sample(&s, i, 10, 10);
		top_model_ingest(&m, &s);
		snapshot_free(&s);
	}
	assert_false(m.paused);
	assert_non_null(top_model_shown(&m));
	top_model_free(&m);
}

static void test_tree(void **state)
{
	(void)state;
	top_model m;
	init_model(&m);
	snapshot s;
	sample(&s, 0, 50, 50);
	/* launcher 5 (parent 1, not followed) -> ranks 10 (GPU 2) and 11 (GPU 3);
	 * 10 -> data workers 12, 13; 11 -> 14 */
	proc(&s, 10, 5, 0, "u", "rank0");
	proc(&s, 11, 5, 1, "u", "rank1");
	proc(&s, 5, 1, -1, "u", "torchrun");
	proc(&s, 10, 5, -1, "u", "rank0");
	proc(&s, 11, 5, -1, "u", "rank1");
	proc(&s, 13, 10, -1, "u", "worker b");
	proc(&s, 12, 10, -1, "u", "worker a");
	proc(&s, 14, 11, -1, "u", "worker c");
	top_model_ingest(&m, &s);
	snapshot_free(&s);
	top_model_refresh(&m);
	assert_int_equal(m.nrows, 2); /* only GPU records are rows */
	top_model_select_row(&m, 1, 10);
	assert_int_equal(m.sel_pid, 11);
	top_tree_line t[16];
	int n = top_model_tree(&m, t, 16);
	assert_int_equal(n, 6);
	unsigned want[] = {5, 10, 12, 13, 11, 14};
	int depth[] = {0, 1, 2, 2, 1, 2};
	for (int i = 0; i < n; i++) {
		assert_int_equal(t[i].p->pid, want[i]);
		assert_int_equal(t[i].depth, depth[i]);
	}
	assert_true(t[4].selected);
	assert_false(t[1].selected);
	assert_int_equal(t[1].gpus, 1); /* rank0 on position 0 */
	assert_int_equal(t[4].gpus, 2);
	assert_int_equal(t[0].gpus, 0);
	/* rank0 has a sibling below it: its children draw the parent's line */
	assert_true(t[2].open & (1u << 1));
	assert_false(t[5].open & (1u << 1));
	assert_true(t[4].last);
	assert_false(t[1].last);
	/* the output is bounded */
	assert_int_equal(top_model_tree(&m, t, 3), 3);
	top_model_free(&m);
}

static void test_window(void **state)
{
	(void)state;
	top_model m;
	init_model(&m);
	snapshot s;
	assert_null(top_model_window(&m, 60, 120));
	for (int i = 0; i < 200; i++) {
		sample(&s, i * 0.5, i % 2 ? 80 : NAN, 10);
		if (i == 151)
			snapshot_add_event(&s, TL_EV_GPU_LOST, 1, 0, "lost");
		proc(&s, 42, 1, 0, "u", "job");
		top_model_ingest(&m, &s);
		snapshot_free(&s);
	}
	/* the last 60 s at 0.5 s: 121 samples, thinned to at most 50 */
	timeline *tl = top_model_window(&m, 60, 50);
	assert_non_null(tl);
	assert_true(tl->n <= 50 && tl->n >= 40);
	assert_float_equal(tl->t[tl->n - 1], 60, 1e-9); /* ends at the shown sample */
	assert_true(tl->have_root);
	assert_int_equal(tl->gpu[0].index, 2);
	assert_int_equal(tl->ncpu, 2);
	/* absent values stay absent */
	int nan = 0;
	for (int k = 0; k < tl->n; k++)
		nan += isnan(tl->gpu[0].m[GM_UTIL_GPU][k]);
	assert_true(nan > 0);
	assert_float_equal(tl->gpu[1].m[GM_UTIL_GPU][0], 10, 0);
	/* an event between thinned samples is kept */
	assert_int_equal(tl->nevents, 1);
	assert_string_equal(tl->events[0].kind, TL_EV_GPU_LOST);
	assert_true(tl->procs[0].in_tree);
	tl_free(tl);
	/* unthinned */
	tl = top_model_window(&m, 10, 1000);
	assert_int_equal(tl->n, 21);
	tl_free(tl);
	top_model_free(&m);
}

/* Two series hold the same values (NAN where the other has NAN), or are both absent. */
static void same_series(const double *a, const double *b, int n)
{
	assert_true((a == NULL) == (b == NULL));
	for (int i = 0; a && i < n; i++) {
		assert_int_equal(isnan(a[i]), isnan(b[i]));
		if (!isnan(a[i]))
			assert_float_equal(a[i], b[i], 0);
	}
}

static void same_timeline(const timeline *a, const timeline *b)
{
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(a->n, b->n);
	assert_int_equal(a->ngpu, b->ngpu);
	assert_int_equal(a->ncpu, b->ncpu);
	assert_float_equal(a->t0_wall, b->t0_wall, 0);
	assert_float_equal(a->duration, b->duration, 0);
	assert_int_equal(a->have_root, b->have_root);
	same_series(a->t, b->t, a->n);
	same_series(a->interval, b->interval, a->n);
	for (int g = 0; g < a->ngpu; g++) {
		assert_int_equal(a->gpu[g].index, b->gpu[g].index);
		assert_int_equal(a->gpu[g].lost_at_end, b->gpu[g].lost_at_end);
		for (int id = 0; id < GM__COUNT; id++)
			same_series(a->gpu[g].m[id], b->gpu[g].m[id], a->n);
	}
	for (int c = 0; c < a->ncpu; c++) {
		same_series(a->cpu_busy[c], b->cpu_busy[c], a->n);
		same_series(a->cpu_iowait[c], b->cpu_iowait[c], a->n);
	}
	for (int h = 0; h < HM__COUNT; h++)
		same_series(a->h[h], b->h[h], a->n);
	assert_int_equal(a->nprocs, b->nprocs);
	for (int i = 0; i < a->nprocs; i++)
		assert_memory_equal(&a->procs[i], &b->procs[i], sizeof a->procs[i]);
	assert_int_equal(a->nevents, b->nevents);
	for (int i = 0; i < a->nevents; i++)
		assert_memory_equal(&a->events[i], &b->events[i], sizeof a->events[i]);
}

/*
 * The window kept between refreshes (moved along by a sample at a time) is
 * the window built afresh from the ring: at every sample, through a metric
 * that stops being reported, processes that come and go, events, a pause,
 * and faster sampling that makes the window thinned.
 */
static void test_window_kept(void **state)
{
	(void)state;
	top_model m;
	init_model(&m);
	snapshot s;
	double t = 0;
	for (int i = 0; i < 900; i++) {
		t += i < 200 ? 1 : 0.1; /* then ten times as fast */
		sample(&s, t, i % 7 ? 40 + i % 50 : NAN, 30);
		if (i < 30) {
			s.gpu[0].v[GM_POWER_DRAW] = 300 + i;
			s.gpu[0].ok[GM_POWER_DRAW] = 1;
		}
		if (i % 3)
			proc(&s, 42, 1, 0, "u", "job")->cpu_pct = i;
		if (i % 5 == 0)
			proc(&s, 43, 42, -1, "u", "loader");
		if (i % 40 == 0)
			snapshot_add_event(&s, TL_EV_PROC_START, 0, i, "start");
		top_model_ingest(&m, &s);
		snapshot_free(&s);
		if (i == 120)
			top_model_pause(&m, true);
		if (i == 140)
			top_model_pause(&m, false);
		timeline *fresh = top_model_window(&m, TOP_WINDOW_S, 120);
		const timeline *kept = top_model_window_kept(&m, TOP_WINDOW_S, 120);
		if (!fresh) {
			assert_null(kept);
			continue;
		}
		same_timeline(kept, fresh);
		tl_free(fresh);
	}
	/* the fast samples make it thinned: the ring's 600 samples of the minute, every 5th */
	assert_int_equal(top_model_window_kept(&m, TOP_WINDOW_S, 120)->n, 120);
	top_model_free(&m);
}

static void test_old_processes_dropped(void **state)
{
	(void)state;
	top_model m;
	init_model(&m);
	snapshot s;
	for (int i = 0; i < 200; i++) {
		sample(&s, i, 50, 50);
		proc(&s, 42, 1, 0, "u", "job");
		top_model_ingest(&m, &s);
		snapshot_free(&s);
	}
	/* the last minute (and a second) keeps its processes, older samples only their values */
	assert_int_equal(top_model_back(&m, 61)->nproc, 1);
	assert_int_equal(top_model_back(&m, 62)->nproc, 0);
	/* ... and no GPU values, but the graph's utilization stays for the whole ring */
	assert_int_equal(top_model_back(&m, 61)->ngpu, 2);
	assert_int_equal(top_model_back(&m, 62)->ngpu, 0);
	double u;
	assert_true(top_model_util(&m, 150, 0, &u));
	assert_float_equal(u, 50, 0);
	assert_false(top_model_util(&m, 200, 0, &u));
	/* paused, the frozen sample's minute stays whole while new samples come */
	top_model_pause(&m, true);
	for (int i = 200; i < 260; i++) {
		sample(&s, i, 50, 50);
		proc(&s, 42, 1, 0, "u", "job");
		top_model_ingest(&m, &s);
		snapshot_free(&s);
	}
	assert_int_equal(top_model_shown(&m)->nproc, 1);
	assert_int_equal(top_model_back(&m, 61)->nproc, 1);
	top_model_refresh(&m);
	assert_int_equal(m.nrows, 1);
	top_model_free(&m);
}

static void test_interval_steps(void **state)
{
	(void)state;
	const int64_t ms = 1000000LL;
	assert_int_equal(top_interval_step(1000 * ms, 1), 2000 * ms);
	assert_int_equal(top_interval_step(1000 * ms, -1), 500 * ms);
	assert_int_equal(top_interval_step(100 * ms, -1), 100 * ms);
	assert_int_equal(top_interval_step(10000 * ms, 1), 10000 * ms);
	assert_int_equal(top_interval_step(150 * ms, -1), 100 * ms);
	assert_int_equal(top_interval_step(150 * ms, 1), 200 * ms);
	assert_int_equal(top_interval_step(50 * ms, 0), 100 * ms);
	assert_int_equal(top_interval_clamp(60000 * ms), 10000 * ms);
	assert_int_equal(top_interval_clamp(1 * ms), 100 * ms);
}

static void feed_minute(top_model *m, double util, bool with_proc)
{
	snapshot s;
	for (int i = 0; i < 60; i++) {
		sample(&s, i, util, util);
		if (with_proc) {
			tl_proc *p = proc(&s, 42, 1, 0, "u", "python train.py");
			p->gpu_mem_mib = 2048;
		}
		top_model_ingest(m, &s);
		snapshot_free(&s);
	}
}

static void test_findings(void **state)
{
	(void)state;
	top_model m;
	init_model(&m);
	/* a GPU somebody uses, mostly idle, while core 0 is saturated */
	feed_minute(&m, 3, true);
	top_model_update_findings(&m);
	assert_true(m.nfindings >= 1);
	assert_true(m.window_s >= 58);
	const char *t = m.findings[0].text;
	assert_true(m.findings[0].severity >= TOP_SEV_WARN);
	assert_non_null(strstr(t, "GPU 2"));
	assert_int_equal(t[strlen(t) - 1], '?');
	top_model_free(&m);
	/* the same idle GPUs with nobody on them are free, not a problem */
	init_model(&m);
	feed_minute(&m, 0, false);
	top_model_update_findings(&m);
	assert_int_equal(m.nfindings, 0);
	top_model_free(&m);
}

/* A job's processes all on one GPU while the other idles; then both fall off the bus. */
static void test_findings_end_with_loss(void **state)
{
	(void)state;
	top_model m;
	init_model(&m);
	snapshot s;
	for (int i = 0; i <= 60; i++) {
		sample(&s, i, i < 60 ? 90 : NAN, i < 60 ? 0 : NAN);
		for (int g = 0; g < 2 && i == 60; g++) {
			memset(s.gpu[g].ok, 0, sizeof s.gpu[g].ok);
			s.gpu[g].lost = true;
		}
		proc(&s, 42, 1, 0, "u", "python train.py")->gpu_mem_mib = 2048;
		proc(&s, 43, 42, 0, "u", "python train.py")->gpu_mem_mib = 2048;
		top_model_ingest(&m, &s);
		snapshot_free(&s);
		if (i == 59) {
			top_model_update_findings(&m);
			assert_true(m.nfindings >= 1);
			assert_null(strstr(m.findings[0].text, "gpu-fault"));
		}
	}
	/* what the GPUs' minute said ends with them; the fault stays */
	top_model_update_findings(&m);
	assert_int_equal(m.nfindings, 1);
	assert_int_equal(m.findings[0].severity, TOP_SEV_ERROR);
	assert_non_null(strstr(m.findings[0].text, "gpu-fault?"));
	top_model_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ring),
	    cmocka_unit_test(test_sort_and_reverse),
	    cmocka_unit_test(test_filter_and_selection),
	    cmocka_unit_test(test_gpu_selection),
	    cmocka_unit_test(test_pause),
	    cmocka_unit_test(test_tree),
	    cmocka_unit_test(test_window),
	    cmocka_unit_test(test_window_kept),
	    cmocka_unit_test(test_old_processes_dropped),
	    cmocka_unit_test(test_interval_steps),
	    cmocka_unit_test(test_findings),
	    cmocka_unit_test(test_findings_end_with_loss),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
