/*
 * test_sim_train.c - workload coupling: `gpuwhy sim train` runs for real on
 * the host and the simulated NVML, read from this process, sees it: its PID
 * and memory in the process list, GPU activity that follows the workload's
 * own steps, bounded by the CPU time one data worker needs per batch, SM
 * activity per busy time that is low for short kernels (launch-bound) and
 * high for long ones. Every bound holds however loaded the host is.
 *
 * The binary is $GPUWHY, else gpuwhy beside this test in the build tree.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>

#include <cmocka.h>

#include "test_sim_common.h"

static char gpuwhy[PATH_MAX + 16];
static char lib[PATH_MAX + 32];

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Start `gpuwhy sim train ARGS...` on the scenario the library uses; stdout to `out`. */
static pid_t start_train_to(const char *const *args, const char *out)
{
	const char *argv[32] = {gpuwhy, "sim", "train"};
	int n = 3;
	for (; *args && n < 30; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(fd, 1);
		setenv("GPUWHY_NVML", lib, 1);
		execv(gpuwhy, (char *const *)argv);
		_exit(127);
	}
	assert_true(pid > 0);
	return pid;
}

static pid_t start_train(const char *const *args)
{
	return start_train_to(args, "/dev/null");
}

static int count_steps(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	char line[256];
	int n = 0;
	while (fgets(line, sizeof line, f))
		n += !strncmp(line, "step ", 5);
	fclose(f);
	return n;
}

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int finish(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Memory (MiB) the process list shows for pid on GPU 0, -1 when absent. */
static long long proc_mib(unsigned pid)
{
	nvmlProcessInfo_t p[16];
	unsigned n = 16;
	if (N.nvmlDeviceGetComputeRunningProcesses_v3(sim_dev(0), &n, p) != NVML_SUCCESS)
		return -1;
	for (unsigned i = 0; i < n; i++)
		if (p[i].pid == pid)
			return (long long)(p[i].usedGpuMemory >> 20);
	return -1;
}

/* Poll `cond` every 10 ms for up to 60 s: a busy machine slows the workload, never stops it. */
#define WAIT_FOR(cond, ...)                                                                        \
	do {                                                                                       \
		int64_t wait_until_ = mono_ms() + 60000;                                           \
		while (!(cond) && mono_ms() < wait_until_)                                         \
			sleep_ms(10);                                                              \
		if (!(cond))                                                                       \
			fail_msg(__VA_ARGS__);                                                     \
	} while (0)

static void wait_listed(pid_t pid)
{
	WAIT_FOR(proc_mib((unsigned)pid) >= 0, "workload %d never appeared in the process list",
	         (int)pid);
}

/*
 * GPM readings over a window that holds at least `steps` of the workload's
 * printed steps and lasts at least `min_ms`. The step counts around the two
 * samples bound what the GPU can have done in between, whatever the machine's
 * load: each step counted inside the window (but the first) ran its whole GPU
 * phase inside it, and no step printed after the window closed can have
 * started before it, except the one in flight.
 */
typedef struct {
	double gr, sm;         /* GPM graphics and SM utilization, % */
	int inside;            /* steps printed between the two samples */
	int around;            /* steps printed from just before to just after the window */
	double min_ms, max_ms; /* bounds on the window's length */
} gpm_window;

static void measure_window(const char *out, int steps, int min_ms, gpm_window *w)
{
	nvmlGpmSample_t s1, s2;
	assert_int_equal(N.nvmlGpmSampleAlloc(&s1), NVML_SUCCESS);
	assert_int_equal(N.nvmlGpmSampleAlloc(&s2), NVML_SUCCESS);
	int before = count_steps(out);
	int64_t t_open = mono_ms();
	assert_int_equal(N.nvmlGpmSampleGet(sim_dev(0), s1), NVML_SUCCESS);
	int n0 = count_steps(out);
	int64_t t0 = mono_ms();
	WAIT_FOR(count_steps(out) >= n0 + steps && mono_ms() - t0 >= min_ms,
	         "the workload printed no %d steps in 60 s", steps);
	int n1 = count_steps(out);
	int64_t t1 = mono_ms();
	assert_int_equal(N.nvmlGpmSampleGet(sim_dev(0), s2), NVML_SUCCESS);
	int64_t t_close = mono_ms();
	int after = count_steps(out);
	nvmlGpmMetricsGet_t *mg = calloc(1, sizeof *mg);
	assert_non_null(mg);
	mg->version = NVML_GPM_METRICS_GET_VERSION;
	mg->numMetrics = 2;
	mg->sample1 = s1;
	mg->sample2 = s2;
	mg->metrics[0].metricId = NVML_GPM_METRIC_GRAPHICS_UTIL;
	mg->metrics[1].metricId = NVML_GPM_METRIC_SM_UTIL;
	assert_int_equal(N.nvmlGpmMetricsGet(mg), NVML_SUCCESS);
	*w = (gpm_window){.gr = mg->metrics[0].value,
	                  .sm = mg->metrics[1].value,
	                  .inside = n1 - n0,
	                  .around = after - before,
	                  .min_ms = (double)(t1 - t0),
	                  .max_ms = (double)(t_close - t_open) + 1};
	free(mg);
	N.nvmlGpmSampleFree(s1);
	N.nvmlGpmSampleFree(s2);
}

/*
 * The GPU is busy at least for the GPU phases of the steps counted inside
 * the window and at most for those counted around it (+2: the one running
 * when it opened, the one running when it closed). `gpu_ms` per step.
 */
static void assert_busy_matches_steps(const gpm_window *w, double gpu_ms)
{
	double lo = 100.0 * (w->inside - 1) * gpu_ms / w->max_ms;
	double hi = 100.0 * (w->around + 2) * gpu_ms / w->min_ms;
	print_message("GPM utilization %.1f %% over %.0f-%.0f ms, %d steps inside, %d around: "
	              "bounds %.1f-%.1f %%\n",
	              w->gr, w->min_ms, w->max_ms, w->inside, w->around, lo, hi);
	assert_true(w->gr >= lo - 0.5);
	assert_true(w->gr <= hi + 0.5);
}

static pid_t start_loader_run(const char *workers, int steps, const char *out)
{
	char nsteps[16];
	snprintf(nsteps, sizeof nsteps, "%d", steps);
	const char *args[] = {"--workers", workers, "--cpu-ms",  "40",   "--gpu-ms", "10",
	                      "--steps",   nsteps,  "--mem-mib", "3072", NULL};
	pid_t pid = start_train_to(args, out);
	/* Listed first, its memory a moment later: wait for both. */
	WAIT_FOR(proc_mib((unsigned)pid) == 3072, "workload %d never listed with its 3072 MiB",
	         (int)pid);
	return pid;
}

static void test_workers_feed_the_gpu(void **state)
{
	(void)state;
	sim_use("h100x1", NULL);
	assert_int_equal(N.nvmlInit_v2(), NVML_SUCCESS);
	nvmlMemory_v2_t m = {.version = nvmlMemory_v2};
	char out1[PATH_MAX + 16], out4[PATH_MAX + 16];
	snprintf(out1, sizeof out1, "%s/train1.out", sim_state_root);
	snprintf(out4, sizeof out4, "%s/train4.out", sim_state_root);

	pid_t pid = start_loader_run("1", 100000, out1);
	/* The workload is in the process list with its memory, and in the memory used. */
	assert_int_equal(proc_mib((unsigned)pid), 3072);
	assert_int_equal(N.nvmlDeviceGetMemoryInfo_v2(sim_dev(0), &m), NVML_SUCCESS);
	assert_int_equal(m.used >> 20, 3072);
	gpm_window starved;
	measure_window(out1, 5, 1500, &starved);
	assert_busy_matches_steps(&starved, 10);
	/*
	 * One worker spends 40 ms of its own CPU time per batch, and a loaded host
	 * only stretches that: over the window at most one batch per 40 ms plus the
	 * two prefetched and the one in progress, 10 ms of GPU each: 25 % and a bit.
	 */
	double cap = 100.0 * (starved.min_ms / 40.0 + 3) * 10.0 / starved.min_ms;
	assert_true(starved.gr > 0);
	assert_true(starved.gr <= cap + 0.5);
	/* Per-process SM share: the one process, under the same CPU bound over NVML's 1 s. */
	nvmlProcessUtilizationSample_t s[8];
	unsigned cnt = 8;
	WAIT_FOR(
	    (cnt = 8, N.nvmlDeviceGetProcessUtilization(sim_dev(0), s, &cnt, 0) == NVML_SUCCESS &&
	                  cnt == 1 && s[0].smUtil > 0),
	    "no per-process utilization sample for the workload");
	assert_int_equal(s[0].pid, (unsigned)pid);
	assert_true(s[0].smUtil <= (unsigned)lround(100.0 * (1000.0 / 40.0 + 3) * 10.0 / 1000.0));
	kill(pid, SIGTERM);
	assert_int_equal(finish(pid), 128 + SIGTERM);
	/* Gone from the list and from the memory once it exits. */
	assert_int_equal(proc_mib((unsigned)pid), -1);
	assert_int_equal(N.nvmlDeviceGetMemoryInfo_v2(sim_dev(0), &m), NVML_SUCCESS);
	assert_int_equal(m.used, 0);

	/*
	 * Four workers: the GPU follows the steps again. How much faster they go
	 * depends on the cores the host has free, so that is reported, not asserted.
	 */
	pid = start_loader_run("4", 100000, out4);
	gpm_window fed;
	measure_window(out4, 5, 1500, &fed);
	kill(pid, SIGTERM);
	assert_int_equal(finish(pid), 128 + SIGTERM);
	assert_busy_matches_steps(&fed, 10);
	print_message("utilization: 1 worker %.1f %%, 4 workers %.1f %%\n", starved.gr, fed.gr);
	N.nvmlShutdown();
}

/*
 * SM activity against graphics activity while a workload with kernels of
 * `kernel_us` runs: the share of busy time the SMs are active does not depend
 * on how often the loaded host lets the workload run.
 */
static double sm_share_while(const char *kernel_us)
{
	char out[PATH_MAX + 16];
	snprintf(out, sizeof out, "%s/kernels%s.out", sim_state_root, kernel_us);
	const char *args[] = {"--workers",   "0",       "--cpu-ms", "0",      "--gpu-ms", "50",
	                      "--kernel-us", kernel_us, "--steps",  "100000", NULL};
	pid_t pid = start_train_to(args, out);
	wait_listed(pid);
	gpm_window w;
	measure_window(out, 5, 1000, &w);
	kill(pid, SIGTERM);
	finish(pid);
	print_message("kernels of %s us: GPM graphics %.1f %%, SM active %.1f %%\n", kernel_us,
	              w.gr, w.sm);
	assert_busy_matches_steps(&w, 50);
	assert_true(w.gr > 0);
	return w.sm / w.gr;
}

static void test_short_kernels_are_launch_bound(void **state)
{
	(void)state;
	sim_use("h100x1", NULL);
	assert_int_equal(N.nvmlInit_v2(), NVML_SUCCESS);
	double small = sm_share_while("5");
	double large = sm_share_while("2000");
	print_message("SM active per busy time: 5 us kernels %.2f, 2000 us kernels %.2f\n", small,
	              large);
	assert_true(small < 0.2);
	assert_true(large > 0.7);
	N.nvmlShutdown();
}

/* GPM graphics activity (%) between two GPM samples. */
static double gpm_graphics(nvmlGpmSample_t a, nvmlGpmSample_t b)
{
	nvmlGpmMetricsGet_t *mg = calloc(1, sizeof *mg);
	assert_non_null(mg);
	mg->version = NVML_GPM_METRICS_GET_VERSION;
	mg->numMetrics = 1;
	mg->sample1 = a;
	mg->sample2 = b;
	mg->metrics[0].metricId = NVML_GPM_METRIC_GRAPHICS_UTIL;
	assert_int_equal(N.nvmlGpmMetricsGet(mg), NVML_SUCCESS);
	double v = mg->metrics[0].value;
	free(mg);
	return v;
}

/* Busy seconds in the driver's utilization samples newer than `seen`; *newest: the last one. */
static double sampled_busy_s(unsigned long long seen, unsigned long long *newest)
{
	nvmlSample_t s[200];
	nvmlValueType_t vt;
	unsigned cnt = 200;
	nvmlReturn_t rc =
	    N.nvmlDeviceGetSamples(sim_dev(0), NVML_GPU_UTILIZATION_SAMPLES, seen, &vt, &cnt, s);
	if (rc == NVML_ERROR_NOT_FOUND)
		return 0;
	assert_int_equal(rc, NVML_SUCCESS);
	double busy = 0;
	for (unsigned i = 0; i < cnt; i++)
		busy += s[i].sampleValue.uiVal / 100.0 / 6.0; /* h100x1 samples every 1/6 s */
	if (newest && cnt)
		*newest = s[cnt - 1].timeStamp;
	return busy;
}

/*
 * A short job that has exited: it leaves the process list, but what it did
 * stays in the driver's utilization history exactly as in GPM (no 0 %
 * utilization next to a busy GPM).
 */
static void test_short_job_stays_in_history(void **state)
{
	(void)state;
	sim_use("h100x1", NULL);
	assert_int_equal(N.nvmlInit_v2(), NVML_SUCCESS);
	sleep_ms(200);
	unsigned long long seen = 0;
	sampled_busy_s(0, &seen);
	nvmlGpmSample_t g1, g2;
	assert_int_equal(N.nvmlGpmSampleAlloc(&g1), NVML_SUCCESS);
	assert_int_equal(N.nvmlGpmSampleAlloc(&g2), NVML_SUCCESS);
	int64_t t1 = mono_ms();
	assert_int_equal(N.nvmlGpmSampleGet(sim_dev(0), g1), NVML_SUCCESS);
	const char *args[] = {"--workers", "0", "--cpu-ms", "0", "--gpu-ms", "100",
	                      "--h2d-mib", "0", "--steps",  "5", NULL};
	pid_t pid = start_train(args);
	assert_int_equal(finish(pid), 0);
	assert_true(proc_mib((unsigned)pid) < 0);
	sleep_ms(400); /* the driver's periods covering the job's end are complete */
	assert_int_equal(N.nvmlGpmSampleGet(sim_dev(0), g2), NVML_SUCCESS);
	int64_t t2 = mono_ms();
	double gpm_busy = gpm_graphics(g1, g2) / 100.0 * (double)(t2 - t1) / 1000.0;
	double sampled = sampled_busy_s(seen, NULL);
	print_message("short job: %.3f busy s in driver samples, %.3f in GPM\n", sampled, gpm_busy);
	assert_true(sampled >= 0.45);
	/* Same intervals behind both; they differ by rounding to whole percents and timing. */
	assert_true(fabs(sampled - gpm_busy) < 0.1);
	assert_int_equal(N.nvmlGpmSampleFree(g1), NVML_SUCCESS);
	assert_int_equal(N.nvmlGpmSampleFree(g2), NVML_SUCCESS);
	N.nvmlShutdown();
}

/* Two jobs sharing a GPU are time-sliced: their SM shares add up to the GPU's at most. */
static void test_shared_gpu_process_shares(void **state)
{
	(void)state;
	sim_use("h100x1", NULL);
	assert_int_equal(N.nvmlInit_v2(), NVML_SUCCESS);
	const char *args[] = {"--workers", "0",       "--cpu-ms", "0", "--gpu-ms",
	                      "50",        "--steps", "100000",   NULL};
	pid_t p1 = start_train(args), p2 = start_train(args);
	wait_listed(p1);
	wait_listed(p2);
	sleep_ms(1300);
	nvmlProcessUtilizationSample_t u[16];
	unsigned n = 16;
	assert_int_equal(N.nvmlDeviceGetProcessUtilization(sim_dev(0), u, &n, 0), NVML_SUCCESS);
	kill(p1, SIGTERM);
	kill(p2, SIGTERM);
	finish(p1);
	finish(p2);
	unsigned s1 = 0, s2 = 0;
	for (unsigned i = 0; i < n; i++) {
		if (u[i].pid == (unsigned)p1)
			s1 = u[i].smUtil;
		if (u[i].pid == (unsigned)p2)
			s2 = u[i].smUtil;
	}
	print_message("shared GPU: SM %u %% and %u %%\n", s1, s2);
	assert_true(s1 + s2 <= 101); /* rounding of each */
	assert_true(s1 >= 25 && s2 >= 25);
	N.nvmlShutdown();
}

static int group_setup(void **state)
{
	(void)state;
	if (sim_load() != 0)
		return -1;
	const char *env = getenv("GPUWHY");
	if (env && *env)
		snprintf(gpuwhy, sizeof gpuwhy, "%s", env);
	else
		snprintf(gpuwhy, sizeof gpuwhy, "%s/gpuwhy", sim_build_dir);
	const char *l = getenv("GPUWHY_SIM_LIB");
	if (l && *l)
		snprintf(lib, sizeof lib, "%s", l);
	else
		snprintf(lib, sizeof lib, "%s/sim/libnvidia-ml.so.1", sim_build_dir);
	if (access(gpuwhy, X_OK) != 0) {
		fprintf(stderr, "%s: not found\n", gpuwhy);
		return -1;
	}
	sim_state_setup();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_workers_feed_the_gpu),
	    cmocka_unit_test(test_short_kernels_are_launch_bound),
	    cmocka_unit_test(test_short_job_stays_in_history),
	    cmocka_unit_test(test_shared_gpu_process_shares),
	};
	return cmocka_run_group_tests(tests, group_setup, sim_group_teardown);
}
