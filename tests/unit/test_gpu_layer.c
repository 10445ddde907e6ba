/* The device layer against a minimal fake NVML: optional symbols, absent values, the 535 trap, lost
 * GPUs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu.h"

static void use_fake(void)
{
	setenv("GPUWHY_NVML", FAKE_NVML_LIB, 1);
	unsetenv("FAKE_NVML_LOSE_GPU1");
}

static void test_absent_not_zero(void **state)
{
	(void)state;
	use_fake();
	gpu_ctx *c;
	assert_int_equal(gpu_open(NULL, &c), 0);
	assert_int_equal(gpu_count(c), 2);
	gpu_values v;
	gpu_sample(c, 0, &v);
	assert_true(v.ok[GM_UTIL_GPU]);
	assert_true(v.v[GM_UTIL_GPU] == 55);
	assert_true(v.ok[GM_MEM_TOTAL] && v.v[GM_MEM_TOTAL] == 81920);
	assert_true(v.ok[GM_MEM_RESERVED] && v.v[GM_MEM_RESERVED] == 512);
	assert_true(v.ok[GM_MEM_USED] && v.v[GM_MEM_USED] == 4096);
	/* NOT_SUPPORTED and missing entry points are absent, never 0 */
	assert_false(v.ok[GM_POWER_DRAW]);
	assert_false(v.ok[GM_TEMP_GPU]);
	assert_false(v.ok[GM_GPM_SM_ACTIVE]);
	assert_false(v.ok[GM_ECC_UNCORR_VOL]);
	assert_false(v.ok[GM_SERIAL]);
	assert_true(v.ok[GM_NAME]);
	assert_string_equal(gpu_metric_text(c, 0, GM_UUID),
	                    "GPU-11111111-0000-0000-0000-000000000000");
	assert_null(gpu_metric_text(c, 0, GM_SERIAL));
	assert_int_equal(gpu_topology_level(c, 0, 1), -1);
	assert_int_equal(gpu_nvlink_states(c, 0, NULL, 0), 0);
	/* A library that is not the simulator has no speed answer; memory is read now. */
	double clock, share, bps;
	assert_int_equal(gpu_sim_work_rate(c, 0, 1, &clock, &share, &bps), -1);
	gpu_memory m;
	assert_int_equal(gpu_read_memory(c, 0, &m), 0);
	assert_true(m.reserved_ok && m.total == 81920ULL << 20 && m.used == 4096ULL << 20);
	gpu_close(c);
}

static void test_process_layout_535(void **state)
{
	(void)state;
	use_fake();
	gpu_ctx *c;
	assert_int_equal(gpu_open(NULL, &c), 0);
	gpu_values v;
	gpu_sample(c, 0, &v);
	gpu_proc p[8];
	int n = gpu_processes(c, 0, p, 8);
	assert_int_equal(n, 2);
	assert_int_equal(p[0].pid, 4000);
	assert_int_equal(p[1].pid, 4001);
	assert_true(p[0].mem_ok && p[0].mem_bytes == (1ULL << 30));
	assert_true(p[1].mem_ok && p[1].mem_bytes == (2ULL << 30));
	assert_false(p[0].util_ok); /* no nvmlDeviceGetProcessUtilization: unknown */
	gpu_close(c);
}

static void test_selection_and_lost(void **state)
{
	(void)state;
	use_fake();
	gpu_ctx *c;
	gpu_open_opts o = {.gpus = "2222"};
	assert_int_equal(gpu_open(&o, &c), 0);
	assert_int_equal(gpu_count(c), 1);
	assert_int_equal(gpu_static_info(c, 0)->index, 1);
	gpu_close(c);
	o.gpus = "7";
	assert_int_equal(gpu_open(&o, &c), 2);

	assert_int_equal(gpu_open(NULL, &c), 0);
	setenv("FAKE_NVML_LOSE_GPU1", "1", 1);
	gpu_values v0, v1;
	gpu_sample(c, 1, &v1);
	gpu_sample(c, 0, &v0);
	assert_true(v1.lost);
	assert_false(v1.ok[GM_UTIL_GPU]);
	assert_true(v1.ok[GM_UUID]); /* identity stays */
	assert_true(gpu_is_lost(c, 1));
	assert_false(v0.lost);
	assert_true(v0.ok[GM_UTIL_GPU]);
	assert_int_equal(gpu_processes(c, 1, NULL, 0), -1);
	/* lost is sticky: no further NVML calls on it */
	unsetenv("FAKE_NVML_LOSE_GPU1");
	gpu_sample(c, 1, &v1);
	assert_true(v1.lost);
	gpu_close(c);
}

static void test_no_library(void **state)
{
	(void)state;
	setenv("GPUWHY_NVML", "/nonexistent/libnvidia-ml.so.1", 1);
	gpu_ctx *c;
	assert_int_equal(gpu_open(NULL, &c), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_absent_not_zero),
	    cmocka_unit_test(test_process_layout_535),
	    cmocka_unit_test(test_selection_and_lost),
	    cmocka_unit_test(test_no_library),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
