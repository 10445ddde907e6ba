/*
 * test_sim_train.c - workload coupling: `gpuwhy sim train` runs for real on
 * the host and the simulated NVML, read from this process, sees it: its PID
 * and memory in the process list, utilization that is low when one data
 * worker starves the GPU and higher with four, SM activity that is low for
 * short kernels (launch-bound) and high for long ones.
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

static void wait_listed(pid_t pid)
{
	for (int i = 0; i < 300 && proc_mib((unsigned)pid) < 0; i++)
		sleep_ms(10);
	if (proc_mib((unsigned)pid) < 0)
		fail_msg("workload %d never appeared in the process list", (int)pid);
}

/* Mean of the driver's utilization over `ms`, read every 100 ms like a monitor would. */
static double mean_util(int ms)
{
	double sum = 0;
	int n = 0;
	for (int t = 0; t < ms; t += 100, n++) {
		nvmlUtilization_t u;
		assert_int_equal(N.nvmlDeviceGetUtilizationRates(sim_dev(0), &u), NVML_SUCCESS);
		sum += u.gpu;
		sleep_ms(100);
	}
	return sum / n;
}

/*
 * Run a data-loading configuration; return the mean NVML utilization over
 * 1.5 s and, in *expect, what the workload's own step rate in that window
 * implies (10 ms of GPU per step).
 */
static double util_of_run(const char *workers, int steps, const char *out, double *expect,
                          pid_t *pidp)
{
	char nsteps[16];
	snprintf(nsteps, sizeof nsteps, "%d", steps);
	const char *args[] = {"--workers", workers, "--cpu-ms",  "40",   "--gpu-ms", "10",
	                      "--steps",   nsteps,  "--mem-mib", "3072", NULL};
	pid_t pid = start_train_to(args, out);
	wait_listed(pid);
	sleep_ms(300);
	int n0 = count_steps(out);
	int64_t t0 = mono_ms();
	double util = mean_util(1500);
	int n1 = count_steps(out);
	int64_t t1 = mono_ms();
	*expect = 100.0 * (n1 - n0) * 10.0 / (double)(t1 - t0);
	*pidp = pid;
	return util;
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

	double want1, want4;
	pid_t pid;
	double starved = util_of_run("1", 80, out1, &want1, &pid);
	/* The workload is in the process list with its memory, and in the memory used. */
	assert_int_equal(proc_mib((unsigned)pid), 3072);
	assert_int_equal(N.nvmlDeviceGetMemoryInfo_v2(sim_dev(0), &m), NVML_SUCCESS);
	assert_int_equal(m.used >> 20, 3072);
	/* Per-process SM share agrees with the device. */
	nvmlProcessUtilizationSample_t s[8];
	unsigned cnt = 8;
	assert_int_equal(N.nvmlDeviceGetProcessUtilization(sim_dev(0), s, &cnt, 0), NVML_SUCCESS);
	assert_int_equal(cnt, 1);
	assert_int_equal(s[0].pid, (unsigned)pid);
	assert_in_range(s[0].smUtil, 1, 49);
	kill(pid, SIGTERM);
	assert_int_equal(finish(pid), 128 + SIGTERM);
	/* Gone from the list and from the memory once it exits. */
	assert_int_equal(proc_mib((unsigned)pid), -1);
	assert_int_equal(N.nvmlDeviceGetMemoryInfo_v2(sim_dev(0), &m), NVML_SUCCESS);
	assert_int_equal(m.used, 0);

	double fed = util_of_run("4", 400, out4, &want4, &pid);
	kill(pid, SIGTERM);
	assert_int_equal(finish(pid), 128 + SIGTERM);
	print_message("utilization: 1 worker %.1f %% (steps imply %.1f), 4 workers %.1f %% "
	              "(steps imply %.1f)\n",
	              starved, want1, fed, want4);
	/* The GPU is busy exactly as much as the workload's steps say... */
	assert_true(fabs(starved - want1) < 10);
	assert_true(fabs(fed - want4) < 10);
	/* ...so one worker preparing 40 ms of data per 10 ms step starves it (25 % at best). */
	assert_true(starved > 1 && starved < 35);
	/* Four workers help as far as the host has free cores to run them. */
	if (want4 > want1 * 1.3)
		assert_true(fed > starved * 1.2);
	else
		print_message("the host ran four workers no faster than one (CPU saturated)\n");
	N.nvmlShutdown();
}

/* GPM SM activity of the GPU over about one second of a running workload. */
static double sm_active_while(const char *kernel_us)
{
	const char *args[] = {"--workers",   "0",       "--cpu-ms", "0",  "--gpu-ms", "50",
	                      "--kernel-us", kernel_us, "--steps",  "60", NULL};
	pid_t pid = start_train(args);
	wait_listed(pid);
	sleep_ms(200);
	nvmlGpmSample_t s1, s2;
	assert_int_equal(N.nvmlGpmSampleAlloc(&s1), NVML_SUCCESS);
	assert_int_equal(N.nvmlGpmSampleAlloc(&s2), NVML_SUCCESS);
	assert_int_equal(N.nvmlGpmSampleGet(sim_dev(0), s1), NVML_SUCCESS);
	double util = mean_util(1000);
	assert_int_equal(N.nvmlGpmSampleGet(sim_dev(0), s2), NVML_SUCCESS);
	nvmlGpmMetricsGet_t *mg = calloc(1, sizeof *mg);
	assert_non_null(mg);
	mg->version = NVML_GPM_METRICS_GET_VERSION;
	mg->numMetrics = 2;
	mg->sample1 = s1;
	mg->sample2 = s2;
	mg->metrics[0].metricId = NVML_GPM_METRIC_SM_UTIL;
	mg->metrics[1].metricId = NVML_GPM_METRIC_GRAPHICS_UTIL;
	assert_int_equal(N.nvmlGpmMetricsGet(mg), NVML_SUCCESS);
	double sm = mg->metrics[0].value, gr = mg->metrics[1].value;
	free(mg);
	N.nvmlGpmSampleFree(s1);
	N.nvmlGpmSampleFree(s2);
	kill(pid, SIGTERM);
	finish(pid);
	print_message(
	    "kernels of %s us: utilization %.1f %%, GPM graphics %.1f %%, SM active %.1f %%\n",
	    kernel_us, util, gr, sm);
	/* The GPU is busy all the time either way. */
	assert_true(util > 80);
	assert_true(gr > 80);
	return sm;
}

static void test_short_kernels_are_launch_bound(void **state)
{
	(void)state;
	sim_use("h100x1", NULL);
	assert_int_equal(N.nvmlInit_v2(), NVML_SUCCESS);
	double small = sm_active_while("5");
	double large = sm_active_while("2000");
	assert_true(small < 20);
	assert_true(large > 70);
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

static int group_teardown(void **state)
{
	(void)state;
	sim_state_cleanup();
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
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
