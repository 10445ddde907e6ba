/*
 * test_sim_state.c - the simulated driver's shared state: workload files
 * (writer and reader), the retired totals, reaping dead writers, and the
 * scenario clock (shared origin, idle restart, reset).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include <cmocka.h>

#include "sim_state.h"
#include "test_sim_common.h"

static char dir[PATH_MAX];

static int64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void fresh_dir(const char *name)
{
	char err[600];
	char path[PATH_MAX];
	snprintf(path, sizeof path, "/x/%s.json", name);
	if (sim_state_dir(path, dir, sizeof dir, err, sizeof err) != 0)
		fail_msg("%s", err);
	sim_epoch e;
	if (sim_clock_open(dir, &e, err, sizeof err) != 0)
		fail_msg("%s", err);
}

static void test_writer_reader(void **state)
{
	(void)state;
	fresh_dir("rw");
	sim_wl *w;
	char err[600];
	assert_int_equal(sim_wl_create(dir, 3, &w, err, sizeof err), 0);
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/w%d-g3.state", dir, (int)getpid());
	const sim_wl_file *f = sim_wl_map(path);
	assert_non_null(f);
	sim_wl_file h;
	assert_true(sim_wl_header(f, &h));
	assert_int_equal(h.pid, (uint32_t)getpid());
	assert_int_equal(h.gpu, 3);
	sim_wl_set_mem(w, 123 << 20);
	assert_true(sim_wl_header(f, &h));
	assert_int_equal(h.mem_bytes, 123 << 20);

	const int64_t ms = 1000000;
	int64_t t0 = 1000 * ms;
	/* Two back-to-back phases of the same kernels become one interval. */
	sim_wl_push(w, t0, t0 + 10 * ms, 1000, SIM_WL_COMPUTE, 100, 0);
	sim_wl_push(w, t0 + 10 * ms, t0 + 20 * ms, 1000, SIM_WL_COMPUTE, 100, 0);
	sim_wl_push(w, t0 + 40 * ms, t0 + 50 * ms, 5, SIM_WL_COMPUTE, 0, 0);
	assert_true(sim_wl_header(f, &h));
	assert_int_equal(h.count, 2);
	double acc[SIM_ACC_N] = {0};
	sim_wl_activity(f, t0, t0 + 50 * ms, acc);
	assert_float_equal(acc[SIM_ACC_BUSY], 0.030, 1e-9);
	assert_float_equal(acc[SIM_ACC_H2D], 200, 1e-9);
	double w1000[SIM_ACC_N], w5[SIM_ACC_N];
	sim_kernel_weights(1000, SIM_WL_COMPUTE, w1000);
	sim_kernel_weights(5, SIM_WL_COMPUTE, w5);
	assert_float_equal(acc[SIM_ACC_SM], 0.020 * w1000[SIM_ACC_SM] + 0.010 * w5[SIM_ACC_SM],
	                   1e-9);
	/* Short kernels leave most SMs idle even while the GPU counts as busy. */
	assert_true(w5[SIM_ACC_SM] < 0.15);
	assert_true(w1000[SIM_ACC_SM] > 0.85);
	memset(acc, 0, sizeof acc);
	sim_wl_activity(f, t0 + 5 * ms, t0 + 15 * ms, acc);
	assert_float_equal(acc[SIM_ACC_BUSY], 0.010, 1e-9);
	assert_float_equal(acc[SIM_ACC_H2D], 100, 1e-9);

	/* The newest interval is planned into the future: totals stop at now. */
	memset(acc, 0, sizeof acc);
	sim_wl_totals(f, t0 + 45 * ms, acc);
	assert_float_equal(acc[SIM_ACC_BUSY], 0.025, 1e-9);
	sim_wl_set_end(w, t0 + 42 * ms);
	memset(acc, 0, sizeof acc);
	sim_wl_totals(f, t0 + 100 * ms, acc);
	assert_float_equal(acc[SIM_ACC_BUSY], 0.022, 1e-9);
	/* A push that starts before the previous end starts at it instead. */
	sim_wl_push(w, t0 + 41 * ms, t0 + 43 * ms, 7, SIM_WL_COMM, 0, 64);
	memset(acc, 0, sizeof acc);
	sim_wl_totals(f, t0 + 100 * ms, acc);
	assert_float_equal(acc[SIM_ACC_BUSY], 0.023, 1e-9);
	assert_float_equal(acc[SIM_ACC_PEER], 64, 1e-9);

	/* Closing moves the totals into the retired file and removes the workload file. */
	sim_wl_close(w);
	assert_int_not_equal(access(path, F_OK), 0);
	const sim_retired_file *r = sim_retired_map(dir);
	assert_non_null(r);
	assert_float_equal(r->acc[3][SIM_ACC_BUSY], 0.023, 1e-9);
	assert_float_equal(r->acc[3][SIM_ACC_PEER], 64, 1e-9);
	assert_int_equal(r->gen % 2, 0);
	sim_retired_unmap(r);
	sim_wl_unmap(f);
}

/* When the ring has been overwritten, an old window is estimated from what is left. */
static void test_ring_overflow(void **state)
{
	(void)state;
	fresh_dir("ring");
	sim_wl *w;
	char err[600];
	assert_int_equal(sim_wl_create(dir, 0, &w, err, sizeof err), 0);
	const int64_t ms = 1000000;
	for (int i = 0; i < SIM_WL_RING + 100; i++)
		sim_wl_push(w, i * 10 * ms, i * 10 * ms + 5 * ms, 100, SIM_WL_COMPUTE, 0, 0);
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/w%d-g0.state", dir, (int)getpid());
	const sim_wl_file *f = sim_wl_map(path);
	assert_non_null(f);
	double acc[SIM_ACC_N] = {0};
	sim_wl_activity(f, 0, (SIM_WL_RING + 100) * 10 * ms, acc);
	assert_float_equal(acc[SIM_ACC_BUSY] / ((SIM_WL_RING + 100) * 0.010), 0.5, 0.01);
	memset(acc, 0, sizeof acc);
	sim_wl_totals(f, INT64_MAX, acc);
	assert_float_equal(acc[SIM_ACC_BUSY], (SIM_WL_RING + 100) * 0.005, 1e-6);
	sim_wl_unmap(f);
	sim_wl_close(w);
}

/* A writer that dies without closing is retired by the next reaper. */
static void test_reap_dead_writer(void **state)
{
	(void)state;
	fresh_dir("reap");
	pid_t pid = fork();
	if (pid == 0) {
		sim_wl *w;
		char err[600];
		if (sim_wl_create(dir, 1, &w, err, sizeof err) != 0)
			_exit(1);
		int64_t t = mono();
		sim_wl_push(w, t - 200000000, t - 100000000, 100, SIM_WL_COMPUTE, 0, 0);
		_exit(0); /* no sim_wl_close: as if killed */
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_int_equal(WEXITSTATUS(st), 0);
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/w%d-g1.state", dir, (int)pid);
	assert_int_equal(access(path, F_OK), 0);
	assert_false(sim_pid_alive((uint32_t)pid, 0));
	assert_true(sim_pid_alive((uint32_t)getpid(), sim_pid_starttime(getpid())));
	assert_false(sim_pid_alive((uint32_t)getpid(), 12345)); /* a reused PID is not believed */
	/* Its recent past is still history the driver reports: kept for a while. */
	assert_int_equal(sim_wl_reap(dir), 0);
	assert_int_equal(access(path, F_OK), 0);
	assert_int_equal(sim_wl_reap_after(dir, 0), 1);
	assert_int_not_equal(access(path, F_OK), 0);
	const sim_retired_file *r = sim_retired_map(dir);
	assert_non_null(r);
	assert_float_equal(r->acc[1][SIM_ACC_BUSY], 0.1, 1e-6);
	sim_retired_unmap(r);
	assert_int_equal(sim_wl_reap(dir), 0);
}

/*
 * A process that closes its file is no longer running, but what it did stays
 * readable (with its planned future cut off) until the file is retired.
 */
static void test_close_keeps_history(void **state)
{
	(void)state;
	fresh_dir("keep");
	sim_wl *w;
	char err[600];
	assert_int_equal(sim_wl_create(dir, 2, &w, err, sizeof err), 0);
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/w%d-g2.state", dir, (int)getpid());
	const sim_wl_file *f = sim_wl_map(path);
	assert_non_null(f);
	sim_wl_file h;
	assert_true(sim_wl_header(f, &h));
	assert_int_equal(h.shown_pid, (uint32_t)getpid());
	assert_true(sim_wl_running(&h));
	sim_wl_set_shown_pid(w, 0);
	assert_true(sim_wl_header(f, &h));
	assert_int_equal(h.shown_pid, 0);
	int64_t t = mono();
	sim_wl_push(w, t - 300000000, t + 10000000000LL, 100, SIM_WL_COMPUTE, 0, 0);
	sim_wl_close(w);
	int64_t after = mono();
	assert_int_equal(access(path, F_OK), 0);
	assert_true(sim_wl_header(f, &h));
	assert_false(sim_wl_running(&h));
	assert_true(h.exited_ns >= t && h.exited_ns <= after);
	assert_int_equal(h.mem_bytes, 0);
	double acc[SIM_ACC_N] = {0};
	sim_wl_activity(f, t - 1000000000LL, after + 20000000000LL, acc);
	assert_true(acc[SIM_ACC_BUSY] >= 0.3 - 1e-9);
	assert_true(acc[SIM_ACC_BUSY] <= 0.3 + (double)(after - t) / 1e9 + 1e-9);
	/* Copies move bytes without a kernel: the GPU does not count as busy. */
	double wc[SIM_ACC_N];
	sim_kernel_weights(100, SIM_WL_COPY, wc);
	assert_float_equal(wc[SIM_ACC_BUSY], 0, 0);
	assert_float_equal(wc[SIM_ACC_SM], 0, 0);
	/* Memory-bound kernels: DRAM at their share, pipes idle in proportion, SMs as before. */
	sim_wl_interval mb = {.kernel_us = 100, .kind = SIM_WL_COMPUTE, .dram_pct = 90};
	double wm[SIM_ACC_N], wk[SIM_ACC_N];
	sim_interval_weights(&mb, wm);
	sim_kernel_weights(100, SIM_WL_COMPUTE, wk);
	assert_float_equal(wm[SIM_ACC_DRAM], 0.9, 1e-12);
	assert_float_equal(wm[SIM_ACC_SM], wk[SIM_ACC_SM], 1e-12);
	assert_float_equal(wm[SIM_ACC_BUSY], 1, 0);
	assert_float_equal(wm[SIM_ACC_TENSOR], wk[SIM_ACC_TENSOR] * (1 - 0.7 * 0.9), 1e-12);
	mb.dram_pct = 0;
	sim_interval_weights(&mb, wm);
	assert_float_equal(wm[SIM_ACC_DRAM], wk[SIM_ACC_DRAM], 1e-12);
	sim_wl_unmap(f);
	assert_int_equal(sim_wl_reap(dir), 0);
	assert_int_equal(sim_wl_reap_after(dir, 0), 1);
	assert_int_not_equal(access(path, F_OK), 0);
}

static void test_clock(void **state)
{
	(void)state;
	fresh_dir("clock");
	char err[600];
	sim_epoch a, b, c;
	assert_int_equal(sim_clock_read(dir, &a), 0);
	assert_true(a.mono_ns <= mono());
	/* Another process opening the scenario gets the same origin. */
	pid_t pid = fork();
	if (pid == 0) {
		sim_epoch e;
		if (sim_clock_open(dir, &e, err, sizeof err) != 0)
			_exit(2);
		_exit(e.mono_ns == a.mono_ns && e.wall_ns == a.wall_ns ? 0 : 1);
	}
	int st;
	waitpid(pid, &st, 0);
	assert_int_equal(WEXITSTATUS(st), 0);
	/* Unused for longer than GPUWHY_SIM_IDLE_RESET: the clock starts over. */
	char p[PATH_MAX + 16];
	snprintf(p, sizeof p, "%s/clock", dir);
	struct timespec old[2] = {{time(NULL) - 3600, 0}, {time(NULL) - 3600, 0}};
	assert_int_equal(utimensat(AT_FDCWD, p, old, 0), 0);
	setenv("GPUWHY_SIM_IDLE_RESET", "0", 1);
	assert_int_equal(sim_clock_open(dir, &b, err, sizeof err), 0);
	assert_int_equal(b.mono_ns, a.mono_ns); /* 0: never */
	assert_int_equal(utimensat(AT_FDCWD, p, old, 0), 0);
	setenv("GPUWHY_SIM_IDLE_RESET", "600", 1);
	assert_int_equal(sim_clock_open(dir, &b, err, sizeof err), 0);
	assert_true(b.mono_ns > a.mono_ns);
	unsetenv("GPUWHY_SIM_IDLE_RESET");
	/* Used recently: kept. */
	assert_int_equal(sim_clock_open(dir, &c, err, sizeof err), 0);
	assert_int_equal(c.mono_ns, b.mono_ns);
	assert_int_equal(sim_clock_reset(dir, err, sizeof err), 0);
	assert_int_equal(sim_clock_read(dir, &c), 0);
	assert_true(c.mono_ns > b.mono_ns);
}

static void test_state_dir_must_be_ours(void **state)
{
	(void)state;
	char base[PATH_MAX + 16], err[600], out[PATH_MAX];
	snprintf(base, sizeof base, "%s/theirs", sim_state_root);
	assert_int_equal(mkdir(base, 0700), 0);
	if (getuid() != 0 || chown(base, 65534, 65534) != 0) {
		rmdir(base);
		skip();
	}
	setenv("GPUWHY_SIM_STATE", base, 1);
	assert_int_equal(sim_state_dir("/x/a.json", out, sizeof out, err, sizeof err), -1);
	assert_non_null(strstr(err, "owned by another user"));
	setenv("GPUWHY_SIM_STATE", sim_state_root, 1);
	rmdir(base);
}

static int group_setup(void **state)
{
	(void)state;
	sim_state_setup();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_writer_reader),
	    cmocka_unit_test(test_ring_overflow),
	    cmocka_unit_test(test_reap_dead_writer),
	    cmocka_unit_test(test_close_keeps_history),
	    cmocka_unit_test(test_clock),
	    cmocka_unit_test(test_state_dir_must_be_ours),
	};
	return cmocka_run_group_tests(tests, group_setup, sim_group_teardown);
}
