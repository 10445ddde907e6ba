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

/* The JSON object of one entry point: the census writes one a line. */
/* Not inlined: gcc -O3 takes the caller's freed census for the text here (a false dangling-pointer
 * warning). */
static __attribute__((noinline)) char *entry(const char *text, const char *name, char *out,
                                             size_t len)
{
	char key[128];
	snprintf(key, sizeof key, "{\"name\": \"%s\",", name);
	const char *p = strstr(text, key);
	if (!p)
		return NULL;
	size_t n = strcspn(p, "\n");
	snprintf(out, len, "%.*s", (int)n, p);
	return out;
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
	char e[512];
	/* Init once, with success. */
	assert_non_null(entry(j, "nvmlInit_v2", e, sizeof e));
	assert_non_null(strstr(e, "\"resolved\": true, \"calls\": 1,"));
	assert_non_null(strstr(e, "\"SUCCESS\": 1"));
	/* Utilization read on each sample, with success. */
	assert_non_null(entry(j, "nvmlDeviceGetUtilizationRates", e, sizeof e));
	assert_non_null(strstr(e, "\"calls\": 2,"));
	assert_non_null(strstr(e, "\"SUCCESS\": 2"));
	/* Power: the fake says NOT_SUPPORTED, and the census says so too. */
	assert_non_null(entry(j, "nvmlDeviceGetPowerUsage", e, sizeof e));
	assert_non_null(strstr(e, "NOT_SUPPORTED"));
	assert_null(strstr(e, "\"SUCCESS\""));
	/* An entry point the fake library lacks: absent, never called. */
	assert_non_null(entry(j, "nvmlGpmSampleGet", e, sizeof e));
	assert_non_null(strstr(e, "\"resolved\": false, \"calls\": 0}"));
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
