/* The NVML call census against the fake NVML: every call counted with its return code, absent entry
 * points listed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "gpu/calls.h"
#include "gpu/gpu.h"

static char *census(bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(json ? gpu_calls_write_json(f, "fake") : gpu_calls_write_table(f, "fake"),
	                 0);
	fclose(f);
	return buf;
}

/* The census's object of one entry point, or NULL. */
static json_t *entry(json_t *census, const char *name)
{
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(census, "calls"), i, e)
	{
		if (!strcmp(json_string_value(json_object_get(e, "name")), name))
			return e;
	}
	return NULL;
}

static long long count(json_t *e, const char *key)
{
	return json_integer_value(json_object_get(e, key));
}

static void test_counts_each_call_and_its_return(void **state)
{
	(void)state;
	setenv("GPUWHY_NVML", FAKE_NVML_LIB, 1);
	unsetenv("GPUWHY_NVML_CALLS");
	gpu_calls_enable();
	assert_true(gpu_calls_enabled());
	gpu_ctx *c;
	assert_int_equal(gpu_open(NULL, &c), 0);
	gpu_values v;
	gpu_sample(c, 0, &v);
	gpu_sample(c, 0, &v);
	assert_true(v.ok[GM_UTIL_GPU] && v.v[GM_UTIL_GPU] == 55);
	assert_false(v.ok[GM_POWER_DRAW]);
	char *j = census(true);
	json_error_t je;
	json_t *root = json_loads(j, 0, &je);
	assert_non_null(root);
	assert_string_equal(json_string_value(json_object_get(root, "library")), "fake");
	/* Init once, with success. */
	json_t *e = entry(root, "nvmlInit_v2");
	assert_non_null(e);
	assert_true(json_is_true(json_object_get(e, "resolved")));
	assert_int_equal(count(e, "calls"), 1);
	assert_int_equal(count(json_object_get(e, "returns"), "SUCCESS"), 1);
	assert_true(json_is_real(json_object_get(e, "mean_us")));
	/* Utilization read on each sample, with success. */
	e = entry(root, "nvmlDeviceGetUtilizationRates");
	assert_non_null(e);
	assert_int_equal(count(e, "calls"), 2);
	assert_int_equal(count(json_object_get(e, "returns"), "SUCCESS"), 2);
	/* Power: the fake says NOT_SUPPORTED, and the census says so too. */
	e = entry(root, "nvmlDeviceGetPowerUsage");
	assert_non_null(e);
	assert_true(count(json_object_get(e, "returns"), "NOT_SUPPORTED") > 0);
	assert_null(json_object_get(json_object_get(e, "returns"), "SUCCESS"));
	/* An entry point the fake library lacks: absent, never called, nothing else said. */
	e = entry(root, "nvmlGpmSampleGet");
	assert_non_null(e);
	assert_true(json_is_false(json_object_get(e, "resolved")));
	assert_int_equal(count(e, "calls"), 0);
	assert_int_equal(json_object_size(e), 3);
	json_decref(root);
	free(j);
	char *t = census(false);
	assert_non_null(strstr(t, "nvmlGpmSampleGet"));
	assert_non_null(strstr(t, "absent"));
	free(t);
	gpu_close(c);
}

static void test_return_code_names(void **state)
{
	(void)state;
	char buf[32];
	assert_string_equal(gpu_calls_rc_name(0, buf, sizeof buf), "SUCCESS");
	assert_string_equal(gpu_calls_rc_name(3, buf, sizeof buf), "NOT_SUPPORTED");
	assert_string_equal(gpu_calls_rc_name(15, buf, sizeof buf), "GPU_IS_LOST");
	assert_string_equal(gpu_calls_rc_name(999, buf, sizeof buf), "UNKNOWN");
	assert_string_equal(gpu_calls_rc_name(77, buf, sizeof buf), "UNKNOWN_77");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_counts_each_call_and_its_return),
	    cmocka_unit_test(test_return_code_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
