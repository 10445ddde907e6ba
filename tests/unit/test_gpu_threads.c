/*
 * The device layer from more than one thread, on the simulated GPUs: opened
 * again and again (with and without --gpus), sampled by two threads (one set
 * of GPUs each) while the slow thread refreshes the cache; NVML error texts
 * asked from two threads at once; the reads a small command makes. Written
 * to run clean under ASan and TSan.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu/gpu.h"
#include "gpu/loader.h"
#include "test_sim_common.h"

#define ROUNDS 40

/* What one sampling thread saw that the device layer guarantees not to happen. */
typedef struct {
	gpu_ctx *c;
	int first, step; /* the GPUs first, first + step, ... are this thread's */
	double mem_total[GPU_MAX];
	const char *name[GPU_MAX];
	int samples, broken;
} sampler;

/* One reading of GPU i checked against what open read once. */
static int check_sample(sampler *s, int i)
{
	gpu_values v;
	int bad = 0;
	gpu_sample(s->c, i, &v);
	bad += v.lost;
	/* STATIC values come from the cache filled at open: the same in every sample. */
	bad += !v.ok[GM_MEM_TOTAL] || v.v[GM_MEM_TOTAL] != s->mem_total[i];
	bad += !v.ok[GM_NAME] || strcmp(gpu_metric_text(s->c, i, GM_NAME), s->name[i]) != 0;
	bad += !v.ok[GM_UTIL_GPU] || v.v[GM_UTIL_GPU] < 0 || v.v[GM_UTIL_GPU] > 100;
	bad += v.ok[GM_MEM_USED] && v.v[GM_MEM_USED] > v.v[GM_MEM_TOTAL];
	gpu_proc p[16];
	bad += gpu_processes(s->c, i, p, 16) < 0;
	unsigned long long xid[4];
	bad += gpu_xid_take(s->c, i, xid, 4) < 0;
	char buf[32];
	bad += gpu_nvml_error(s->c, NVML_ERROR_NOT_SUPPORTED, buf, sizeof buf)[0] == '\0';
	return bad;
}

static void *sample_main(void *arg)
{
	sampler *s = arg;
	int n = gpu_count(s->c);
	for (int r = 0; r < ROUNDS; r++)
		for (int i = s->first; i < n; i += s->step) {
			s->broken += check_sample(s, i);
			s->samples++;
		}
	return NULL;
}

static int setup(void **state)
{
	(void)state;
	static char lib[PATH_MAX + 32];
	sim_state_setup();
	const char *env = getenv("GPUWHY_SIM_LIB");
	if (env && *env)
		snprintf(lib, sizeof lib, "%s", env);
	else if (gw_self_dir(sim_build_dir, sizeof sim_build_dir) == 0)
		snprintf(lib, sizeof lib, "%s/sim/libnvidia-ml.so.1", sim_build_dir);
	else
		return -1;
	setenv("GPUWHY_NVML", lib, 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sim_state_cleanup();
	return 0;
}

/* Open, read what the samplers compare against, run two samplers, close. */
static void run_round(const char *gpus, bool slow_thread, int *samples)
{
	gw_fail f;
	gpu_open_opts o = {.gpus = gpus, .slow_period_ns = 1000000, .failure = &f};
	gpu_ctx *c = NULL;
	assert_int_equal(gpu_open(&o, &c), 0);
	int n = gpu_count(c);
	assert_true(n >= 2);
	sampler s[2] = {{.c = c, .first = 0, .step = 2}, {.c = c, .first = 1, .step = 2}};
	for (int i = 0; i < n; i++) {
		gpu_values v;
		gpu_sample(c, i, &v);
		assert_true(v.ok[GM_MEM_TOTAL]);
		s[0].mem_total[i] = s[1].mem_total[i] = v.v[GM_MEM_TOTAL];
		s[0].name[i] = s[1].name[i] = gpu_static_info(c, i)->name;
	}
	if (slow_thread)
		assert_int_equal(gpu_slow_thread_start(c), 0);
	pthread_t t[2];
	for (int k = 0; k < 2; k++)
		assert_int_equal(pthread_create(&t[k], NULL, sample_main, &s[k]), 0);
	for (int k = 0; k < 2; k++)
		pthread_join(t[k], NULL);
	gpu_close(c);
	for (int k = 0; k < 2; k++) {
		assert_int_equal(s[k].broken, 0);
		*samples += s[k].samples;
	}
}

static void test_open_again_sample_from_two_threads(void **state)
{
	(void)state;
	sim_use("h100x8-nvlink", NULL);
	int samples = 0;
	for (int round = 0; round < 4; round++)
		run_round(round % 2 ? "1,3,4,6" : NULL, round >= 2, &samples);
	assert_int_equal(samples, ROUNDS * (8 + 4 + 8 + 4));
}

/* A selection is placed, not copied from a table of all: its facts are the selected GPUs'. */
static void test_selected_devices_keep_their_facts(void **state)
{
	(void)state;
	sim_use("h100x8-nvlink", NULL);
	gpu_ctx *all, *some;
	gpu_open_opts quiet = {0};
	assert_int_equal(gpu_open(&quiet, &all), 0);
	gpu_open_opts o = {.gpus = "6,2"};
	assert_int_equal(gpu_open(&o, &some), 0);
	assert_int_equal(gpu_count(some), 2);
	assert_int_equal(gpu_count_all(some), 8);
	const int want[2] = {6, 2};
	for (int k = 0; k < 2; k++) {
		const gpu_static *s = gpu_static_info(some, k);
		const gpu_static *a = gpu_static_info(all, want[k]);
		assert_int_equal(s->index, want[k]);
		assert_string_equal(s->uuid, a->uuid);
		assert_string_equal(s->pci_bus_id, a->pci_bus_id);
		gpu_values v;
		gpu_sample(some, k, &v);
		assert_true(v.ok[GM_INDEX] && v.v[GM_INDEX] == want[k]);
	}
	gpu_close(some);
	gpu_close(all);
}

/* stderr into a temporary file, so a test can see that nothing was printed. */
static int stderr_capture(FILE **tmp)
{
	fflush(stderr);
	*tmp = tmpfile();
	assert_non_null(*tmp);
	int saved = dup(STDERR_FILENO);
	assert_true(saved >= 0);
	assert_true(dup2(fileno(*tmp), STDERR_FILENO) >= 0);
	return saved;
}

/* Restore stderr; returns how many bytes were written to it meanwhile. */
static long stderr_release(FILE *tmp, int saved)
{
	fflush(stderr);
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	assert_int_equal(fseek(tmp, 0, SEEK_END), 0);
	long n = ftell(tmp);
	fclose(tmp);
	return n;
}

/* A failed open says why as data (what, why and hint apart too) and prints nothing. */
static void test_failure_is_data(void **state)
{
	(void)state;
	sim_use("h100x8-nvlink", NULL);
	FILE *tmp;
	int saved = stderr_capture(&tmp);
	gw_fail f;
	gpu_fail_kind kind;
	char text[600];
	gpu_open_opts o = {.gpus = "9", .failure = &f, .fail_kind = &kind};
	gpu_ctx *c = NULL;
	assert_int_equal(gpu_open(&o, &c), 2);
	assert_int_equal(kind, GPU_FAIL_SELECTION);
	assert_string_equal(gw_fail_text(&f, text, sizeof text),
	                    "--gpus: GPU index 9 does not exist (8 GPUs) (use indices or (short) "
	                    "UUIDs from gpuwhy status)");
	assert_int_equal(f.code, 2);
	assert_string_equal(f.what, "--gpus");
	assert_string_equal(f.why, "GPU index 9 does not exist (8 GPUs)");
	assert_string_equal(f.hint, "use indices or (short) UUIDs from gpuwhy status");
	/* The loader says what is wrong the same way. */
	assert_int_equal(gpu_loader_setup("no-such-scenario", NULL, NULL, &f), 2);
	assert_non_null(
	    strstr(gw_fail_text(&f, text, sizeof text), "no-such-scenario: no such scenario"));
	assert_string_equal(f.what, "no-such-scenario");
	assert_int_equal(f.code, 2);
	assert_int_equal(gpu_loader_setup(NULL, "/nonexistent/libnvidia-ml.so.1", NULL, &f), 3);
	assert_string_equal(f.what, "/nonexistent/libnvidia-ml.so.1");
	assert_string_equal(f.why, "cannot read NVML library");
	/* A library that is not there: gpu_open fails the same way, silently too. */
	const char *lib = getenv("GPUWHY_NVML");
	char *keep = lib ? strdup(lib) : NULL;
	setenv("GPUWHY_NVML", "/nonexistent/libnvidia-ml.so.1", 1);
	gpu_open_opts none = {.failure = &f, .fail_kind = &kind};
	int rc = gpu_open(&none, &c);
	if (keep)
		setenv("GPUWHY_NVML", keep, 1);
	else
		unsetenv("GPUWHY_NVML");
	free(keep);
	assert_int_not_equal(rc, 0);
	assert_int_equal(f.code, 3);
	assert_int_equal(kind, GPU_FAIL_NO_LIBRARY);
	assert_true(gw_fail_text(&f, text, sizeof text)[0] != '\0');
	assert_int_equal(stderr_release(tmp, saved), 0);
	/* The face prints it: the same line, with the prefix. */
	char line[700];
	snprintf(line, sizeof line, "gpuwhy: %s", text);
	saved = stderr_capture(&tmp);
	assert_int_equal(gw_fail_print(&f), 3);
	long n = stderr_release(tmp, saved);
	assert_int_equal(n, (long)strlen(line) + 1);
}

/*
 * Each thread asks for its own code's text; both ask, then both check, in
 * lockstep: a text that lived in a buffer shared between threads would be
 * the other thread's by the time it is checked.
 */
typedef struct {
	gpu_ctx *c;
	int rc;
	char want[32];
	pthread_barrier_t *step;
	int wrong;
} err_asker;

static void *ask_main(void *arg)
{
	err_asker *a = arg;
	for (int k = 0; k < 2000; k++) {
		char buf[32];
		const char *t = gpu_nvml_error(a->c, a->rc, buf, sizeof buf);
		pthread_barrier_wait(a->step);
		a->wrong += strcmp(t, a->want) != 0;
		pthread_barrier_wait(a->step);
	}
	return NULL;
}

static void ask_from_two_threads(err_asker *a)
{
	pthread_barrier_t step;
	pthread_barrier_init(&step, NULL, 2);
	pthread_t t[2];
	for (int k = 0; k < 2; k++) {
		a[k].step = &step;
		assert_int_equal(pthread_create(&t[k], NULL, ask_main, &a[k]), 0);
	}
	for (int k = 0; k < 2; k++)
		pthread_join(t[k], NULL);
	pthread_barrier_destroy(&step);
	assert_int_equal(a[0].wrong, 0);
	assert_int_equal(a[1].wrong, 0);
}

static void test_error_text_from_two_threads(void **state)
{
	(void)state;
	/* Without a library's nvmlErrorString the text is formatted: into each caller's buffer. */
	err_asker a[2] = {{.rc = 1234}, {.rc = 98765}};
	for (int k = 0; k < 2; k++)
		snprintf(a[k].want, sizeof a[k].want, "NVML error %d", a[k].rc);
	ask_from_two_threads(a);
	char small[8];
	assert_string_equal(gpu_nvml_error(NULL, 1234, small, sizeof small), "NVML er");
	/* With the simulated library: NVML's own constant texts, per code. */
	sim_use("h100x8-nvlink", NULL);
	gpu_ctx *c;
	gpu_open_opts o = {0};
	assert_int_equal(gpu_open(&o, &c), 0);
	err_asker b[2] = {{.c = c, .rc = NVML_ERROR_NOT_SUPPORTED},
	                  {.c = c, .rc = NVML_ERROR_GPU_IS_LOST}};
	char buf[32];
	for (int k = 0; k < 2; k++)
		snprintf(b[k].want, sizeof b[k].want, "%s",
		         gpu_nvml_error(c, b[k].rc, buf, sizeof buf));
	assert_string_not_equal(b[0].want, b[1].want);
	ask_from_two_threads(b);
	gpu_close(c);
}

/* What a small command reads: memory in bytes now, and the simulated GPU's speed. */
static void test_small_command_reads(void **state)
{
	(void)state;
	sim_use("h100x8-nvlink", NULL);
	gpu_ctx *c;
	gpu_open_opts o = {0};
	assert_int_equal(gpu_open(&o, &c), 0);
	gpu_values v;
	gpu_sample(c, 3, &v);
	gpu_memory m;
	assert_int_equal(gpu_read_memory(c, 3, &m), 0);
	assert_true(m.total > 0 && m.used <= m.total && m.free <= m.total);
	assert_true(v.ok[GM_MEM_TOTAL] && v.v[GM_MEM_TOTAL] == (double)(m.total >> 20));
	double clock = -1, share = -1, bps = -1;
	assert_int_equal(gpu_sim_work_rate(c, 3, (unsigned)getpid(), &clock, &share, &bps), 0);
	assert_true(clock > 0 && clock <= 1 && share > 0 && share <= 1 && bps > 0);
	int states[GPU_NVLINK_MAX];
	assert_true(gpu_nvlink_states(c, 3, states, GPU_NVLINK_MAX) > 0);
	assert_false(gpu_is_lost(c, 3));
	gpu_close(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_open_again_sample_from_two_threads),
	    cmocka_unit_test(test_selected_devices_keep_their_facts),
	    cmocka_unit_test(test_failure_is_data),
	    cmocka_unit_test(test_error_text_from_two_threads),
	    cmocka_unit_test(test_small_command_reads),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
