/*
 * test_live_window.c - a live window gives the same findings as a recording
 * of the same moments: the same snapshots go once through the exporter's
 * window (the conversion `top` shares) and once through a recording written
 * and read back by the store, and diagnosis must find the same things with
 * the same evidence in both.
 */
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diagnose/diag.h"
#include "exporter/findings.h"
#include "exporter/frame.h"
#include "store/store.h"
#include "test_tmpdir.h"

#define NSNAP 20
#define NGPU 2

static char dir[256];

static int setup(void **state)
{
	(void)state;
	return test_tmpdir_make(dir, sizeof dir, "test-live");
}

static int teardown(void **state)
{
	(void)state;
	return test_tmpdir_remove(dir);
}

static void set(snapshot *s, int g, gpu_metric_id id, double v)
{
	s->gpu[g].v[id] = v;
	s->gpu[g].ok[id] = 1;
}

/*
 * A job whose GPUs wait on storage every other second while the host swaps:
 * data-starved through its I/O branch and host-swap, the two that a window
 * without the disk and swap series could never find.
 */
static void fill(snapshot *s, int k)
{
	snapshot_clear(s);
	s->t_wall = 1700000000.0 + k;
	s->t_mono_ns = (int64_t)k * 1000000000LL;
	s->interval_s = k ? 1.0 : NAN;
	bool gap = k % 2;
	for (int g = 0; g < NGPU; g++) {
		memset(&s->gpu[g], 0, sizeof s->gpu[g]);
		set(s, g, GM_UTIL_GPU, gap ? 2 : 95);
		set(s, g, GM_MEM_USED, 30000);
		set(s, g, GM_MEM_TOTAL, 81559);
		set(s, g, GM_POWER_DRAW, gap ? 90 : 600);
		tl_proc *p = snapshot_add_proc(s);
		p->pid = 4000 + (unsigned)g;
		p->gpu = g;
		p->alive = true;
		p->gpu_mem_mib = 29000;
		p->sm_pct = gap ? 0 : 90;
		snprintf(p->user, sizeof p->user, "alice");
		snprintf(p->cmd, sizeof p->cmd, "python train.py --rank %d", g);
	}
	s->gpu_procs_known = (1ULL << NGPU) - 1;
	s->h[HM_CPU_BUSY_AVG] = gap ? 20 : 35;
	s->h[HM_CPU_BUSY_MAX] = gap ? 40 : 60;
	s->h[HM_CPU_BUSY_MAX_CORE] = 3;
	s->h[HM_CPU_IOWAIT] = gap ? 45 : 5;
	s->h[HM_MEM_TOTAL] = 65536;
	s->h[HM_MEM_USED] = 64000;
	s->h[HM_MEM_AVAIL] = 1536;
	s->h[HM_SWAP_USED] = 4096;
	s->h[HM_SWAP_TOTAL] = 8192;
	s->h[HM_SWAP_IN] = 40.0 * 1048576;
	s->h[HM_SWAP_OUT] = 8.0 * 1048576;
	s->h[HM_DISK_READ] = gap ? 400.0 * 1048576 : 50.0 * 1048576;
	s->h[HM_DISK_BUSY_MAX] = gap ? 98 : 60;
	s->h[HM_LOAD1] = 6;
	snapshot_set_ncpu(s, 4);
	for (int c = 0; c < 4; c++) {
		s->cpu_busy[c] = c == 3 ? s->h[HM_CPU_BUSY_MAX] : 20;
		s->cpu_iowait[c] = s->h[HM_CPU_IOWAIT];
	}
	if (k == 7)
		snapshot_add_event(s, TL_EV_XID, 1, 31, "Xid 31: GPU memory page fault");
}

static timeline *live(const snapshot *snaps, const exporter_gpu *gpus)
{
	const snapshot *view[NSNAP];
	for (int k = 0; k < NSNAP; k++)
		view[k] = &snaps[k];
	timeline *tl = NULL;
	exporter_window w = {view, NSNAP, gpus, NGPU, NULL, &tl};
	assert_non_null(exporter_window_timeline(&w));
	return tl;
}

static timeline *recorded(const snapshot *snaps, const exporter_gpu *gpus)
{
	char path[300];
	gw_fail err = {0};
	snprintf(path, sizeof path, "%s/live.gpuwhy", dir);
	store *st;
	assert_int_equal(store_create(path, &st, &err), 0);
	int idx[NGPU];
	for (int g = 0; g < NGPU; g++) {
		gpu_static gs = {.index = gpus[g].index};
		snprintf(gs.uuid, sizeof gs.uuid, "%s", gpus[g].uuid);
		snprintf(gs.name, sizeof gs.name, "%s", gpus[g].name);
		assert_int_equal(store_add_gpu(st, &gs), 0);
		idx[g] = gpus[g].index;
	}
	for (int k = 0; k < NSNAP; k++)
		assert_int_equal(store_write_snapshot(st, &snaps[k], idx), 0);
	assert_int_equal(store_close(st), 0);
	timeline *tl;
	assert_int_equal(store_read_timeline(path, &tl, NULL), 0);
	return tl;
}

static bool same_num(double a, double b)
{
	return (isnan(a) && isnan(b)) || fabs(a - b) <= 1e-9 * (1 + fabs(a));
}

static void expect_same_findings(const diag_result *a, const diag_result *b)
{
	assert_int_equal(a->n, b->n);
	for (int i = 0; i < a->n; i++) {
		const diag_finding *x = &a->f[i], *y = &b->f[i];
		assert_string_equal(x->id, y->id);
		assert_int_equal(x->severity, y->severity);
		assert_true(same_num(x->confidence, y->confidence));
		assert_true(x->gpus == y->gpus);
		assert_string_equal(x->title, y->title);
		assert_string_equal(x->note, y->note);
		assert_int_equal(x->nranges, y->nranges);
		for (int r = 0; r < x->nranges; r++)
			assert_true(same_num(x->ranges[r].t0, y->ranges[r].t0) &&
			            same_num(x->ranges[r].t1, y->ranges[r].t1));
		assert_int_equal(x->nev, y->nev);
		for (int e = 0; e < x->nev; e++) {
			assert_string_equal(x->ev[e].metric, y->ev[e].metric);
			assert_string_equal(x->ev[e].stat, y->ev[e].stat);
			assert_string_equal(x->ev[e].cmp, y->ev[e].cmp);
			assert_int_equal(x->ev[e].gpu, y->ev[e].gpu);
			assert_true(same_num(x->ev[e].value, y->ev[e].value));
			assert_true(same_num(x->ev[e].threshold, y->ev[e].threshold));
		}
	}
}

static bool has(const diag_result *r, const char *id)
{
	for (int i = 0; i < r->n; i++)
		if (!strcmp(r->f[i].id, id))
			return true;
	return false;
}

static void test_live_window_matches_recording(void **state)
{
	(void)state;
	snapshot *snaps = calloc(NSNAP, sizeof *snaps);
	assert_non_null(snaps);
	for (int k = 0; k < NSNAP; k++) {
		snapshot_init(&snaps[k], NGPU);
		fill(&snaps[k], k);
	}
	exporter_gpu gpus[NGPU];
	memset(gpus, 0, sizeof gpus);
	for (int g = 0; g < NGPU; g++) {
		gpus[g].index = 2 * g;
		snprintf(gpus[g].uuid, sizeof gpus[g].uuid, "GPU-%d", g);
		snprintf(gpus[g].name, sizeof gpus[g].name, "NVIDIA H100 80GB HBM3");
		gpus[g].vals = &snaps[NSNAP - 1].gpu[g];
	}
	timeline *a = live(snaps, gpus), *b = recorded(snaps, gpus);
	assert_int_equal(a->n, b->n);
	assert_int_equal(a->nevents, b->nevents);
	/* Every host series the recording has, the live window has too. */
	for (int h = 0; h < HM__COUNT; h++)
		assert_true((a->h[h] != NULL) == (b->h[h] != NULL));
	for (int live_mode = 0; live_mode < 2; live_mode++) {
		diag_opts o;
		diag_opts_default(&o);
		o.live = live_mode;
		diag_result ra, rb;
		diag_run(a, &o, &ra);
		diag_run(b, &o, &rb);
		expect_same_findings(&ra, &rb);
		assert_true(has(&ra, "host-swap"));
		assert_true(has(&ra, "data-starved"));
		diag_result_free(&ra);
		diag_result_free(&rb);
	}
	tl_free(a);
	tl_free(b);
	for (int k = 0; k < NSNAP; k++)
		snapshot_free(&snaps[k]);
	free(snaps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_live_window_matches_recording),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
