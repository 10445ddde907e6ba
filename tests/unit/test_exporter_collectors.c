/* test_exporter_collectors.c - dcgm-exporter counters CSV parsing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "exporter/collectors.h"
#include "util/err.h"

static int parse(const char *csv, exporter_collectors *c, char *unknown, size_t ulen, gw_fail *err)
{
	return exporter_collectors_parse(csv, strlen(csv), c, unknown, ulen, err);
}

/* The layout of dcgm-exporter's default-counters.csv: comments, blanks, padding. */
static void test_dcgm_layout(void **state)
{
	const char csv[] =
	    "# Format\n"
	    "# If line starts with a '#' it is considered a comment\n"
	    "# DCGM FIELD, Prometheus metric type, help message\n"
	    "\n"
	    "# Clocks\n"
	    "DCGM_FI_DEV_SM_CLOCK,  gauge, SM clock frequency (in MHz).\n"
	    "DCGM_FI_DEV_MEM_CLOCK, gauge, Memory clock frequency (in MHz).\n"
	    "   \t\n"
	    "# Power\n"
	    "DCGM_FI_DEV_POWER_USAGE,              gauge, Power draw (in W).\r\n"
	    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, counter, Total energy consumption since boot "
	    "(in mJ).\n"
	    "DCGM_FI_DEV_XID_ERRORS,       gauge, Value of the last XID error encountered.\n"
	    "DCGM_FI_DEV_VGPU_LICENSE_STATUS, gauge, vGPU License status\n"
	    "# DCGM_FI_PROF_SM_ACTIVE,          gauge, The ratio of cycles an SM has at least 1 "
	    "warp assigned.\n"
	    "DCGM_FI_DRIVER_VERSION,        label, Driver Version\n"
	    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, gauge, Ratio of cycles the tensor (HMMA) pipe is "
	    "active.";
	exporter_collectors c;
	char unknown[256];
	gw_fail err = {0};
	assert_int_equal(parse(csv, &c, unknown, sizeof unknown, &err), 0);
	assert_string_equal(unknown, "DCGM_FI_DEV_VGPU_LICENSE_STATUS");
	assert_int_equal(c.n, 6);
	assert_int_equal(c.order[0], GM_CLK_SM);
	assert_int_equal(c.order[1], GM_CLK_MEM);
	assert_int_equal(c.order[2], GM_POWER_DRAW);
	assert_int_equal(c.order[3], GM_ENERGY);
	assert_int_equal(c.order[4], GM_XID_LAST);
	assert_int_equal(c.order[5], GM_GPM_TENSOR_ACTIVE);
	assert_int_equal(c.type[GM_POWER_DRAW], EXPORTER_GAUGE);
	assert_int_equal(c.type[GM_ENERGY], EXPORTER_COUNTER);
	assert_string_equal(c.help[GM_POWER_DRAW], "Power draw (in W).");
	assert_string_equal(c.help[GM_GPM_TENSOR_ACTIVE],
	                    "Ratio of cycles the tensor (HMMA) pipe is active.");
	assert_int_equal(c.labels, EXPORTER_LABEL_DRIVER);
	/* fields dcgm-exporter's default CSV leaves commented out stay out */
	for (int k = 0; k < c.n; k++)
		assert_int_not_equal(c.order[k], GM_FAN);
	/* --counter-type counter types the counters counter, the gauges stay */
	exporter_collectors_counter_type(&c, EXPORTER_COUNTER);
	for (int k = 0; k < c.n; k++)
		assert_int_equal(c.type[c.order[k]], gpu_metrics[c.order[k]].prom == GMP_counter
		                                         ? EXPORTER_COUNTER
		                                         : EXPORTER_GAUGE);
	exporter_collectors_free(&c);
}

/* A CSV selects fields outside the default set that NVML supplies. */
static void test_csv_selects_optional(void **state)
{
	(void)state;
	static const char csv[] = "DCGM_FI_DEV_FAN_SPEED, gauge, Fan speed.\n"
	                          "DCGM_FI_DEV_POWER_MGMT_LIMIT, gauge, Power limit.\n"
	                          "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS, gauge, Reasons.\n";
	exporter_collectors c;
	char unknown[256];
	gw_fail err = {0};
	assert_int_equal(
	    exporter_collectors_parse(csv, sizeof csv - 1, &c, unknown, sizeof unknown, &err), 0);
	assert_int_equal(c.n, 3);
	assert_int_equal(c.order[0], GM_FAN);
	assert_int_equal(c.order[1], GM_POWER_LIMIT);
	assert_int_equal(c.order[2], GM_CLK_REASONS);
	exporter_collectors_free(&c);
}

static void test_help_with_commas_and_duplicates(void **state)
{
	const char csv[] = "DCGM_FI_DEV_GPU_UTIL, gauge, Busy, in %, per GPU\n"
	                   "DCGM_FI_DEV_GPU_UTIL, counter, second row ignored\n"
	                   "DCGM_FI_DEV_GPU_TEMP,gauge,\n";
	exporter_collectors c;
	char unknown[64];
	gw_fail err = {0};
	assert_int_equal(parse(csv, &c, unknown, sizeof unknown, &err), 0);
	assert_string_equal(unknown, "");
	assert_int_equal(c.n, 2);
	assert_string_equal(c.help[GM_UTIL_GPU], "Busy, in %, per GPU");
	assert_int_equal(c.type[GM_UTIL_GPU], EXPORTER_GAUGE);
	assert_null(c.help[GM_TEMP_GPU]); /* empty: the table's text */
	assert_int_equal(c.labels, 0u);
	exporter_collectors_free(&c);
}

static void expect_error(const char *csv, const char *want)
{
	exporter_collectors c;
	char unknown[64];
	gw_fail err = {0};
	assert_int_equal(parse(csv, &c, unknown, sizeof unknown, &err), -1);
	if (!strstr(err.why, want)) {
		print_error("error '%s' lacks '%s'\n", err.why, want);
		fail();
	}
	/* A usage error; the caller names the file. */
	assert_int_equal(err.code, GW_EXIT_USAGE);
	assert_string_equal(err.what, "");
	assert_string_equal(err.why_text, err.why);
	/* Nothing is left allocated on failure. */
	for (int i = 0; i < GM__COUNT; i++)
		assert_null(c.help[i]);
}

static void test_errors_name_the_line(void **state)
{
	expect_error("DCGM_FI_DEV_GPU_UTIL, gauge, ok\nDCGM_FI_DEV_GPU_TEMP gauge\n",
	             "line 2: expected 'FIELD, prom_type, help'");
	expect_error("DCGM_FI_DEV_GPU_UTIL, gauge, x\n\n#\nDCGM_FI_DEV_GPU_TEMP, histogram, x\n",
	             "line 4: prom_type 'histogram'");
	expect_error(", gauge, x\n", "line 1: empty field name");
	expect_error("DCGM_FI_DEV_GPU_UTIL, label, x\n",
	             "line 1: DCGM_FI_DEV_GPU_UTIL is a number");
	expect_error("DCGM_FI_DRIVER_VERSION, gauge, x\n",
	             "line 1: DCGM_FI_DRIVER_VERSION is a text field");
	char big[6000];
	memset(big, 'A', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	expect_error(big, "line 1: longer than");
}

static void test_nul_byte_is_an_error(void **state)
{
	const char csv[] = "DCGM_FI_DEV_GPU_UTIL, gauge, x\nDCGM\0FI, gauge, y\n";
	exporter_collectors c;
	char unknown[64];
	gw_fail err = {0};
	assert_int_equal(
	    exporter_collectors_parse(csv, sizeof csv - 1, &c, unknown, sizeof unknown, &err), -1);
	assert_int_equal(err.code, GW_EXIT_USAGE);
	assert_string_equal(err.why, "line 2: contains a NUL byte (not a text file?)");
}

static void test_unknown_list_is_bounded(void **state)
{
	char csv[8192] = "";
	for (int i = 0; i < 100; i++) {
		char row[64];
		snprintf(row, sizeof row, "DCGM_FI_UNKNOWN_%03d, gauge, x\n", i);
		strcat(csv, row);
	}
	exporter_collectors c;
	char unknown[64];
	gw_fail err = {0};
	assert_int_equal(parse(csv, &c, unknown, sizeof unknown, &err), 0);
	assert_int_equal(c.n, 0);
	assert_true(strlen(unknown) < sizeof unknown);
	assert_true(!strncmp(unknown, "DCGM_FI_UNKNOWN_000, DCGM_FI_UNKNOWN_001", 40));
	assert_string_equal(unknown + strlen(unknown) - 5, ", ...");
	exporter_collectors_free(&c);
}

static void test_default_set(void **state)
{
	exporter_collectors c;
	exporter_collectors_default(&c);
	int with_dcgm = 0;
	for (int i = 0; i < GM__COUNT; i++)
		with_dcgm += gpu_metrics[i].dcgm != NULL && gpu_metrics[i].exported == GME_DEF;
	assert_int_equal(c.n, with_dcgm);
	assert_true(c.n >= 20);
	for (int k = 0; k < c.n; k++) {
		assert_non_null(gpu_metrics[c.order[k]].dcgm);
		/* The table's counters are untyped by default: their names fail the
		 * counter lint. */
		exporter_prom_type want =
		    gpu_metrics[c.order[k]].prom == GMP_counter ? EXPORTER_UNTYPED : EXPORTER_GAUGE;
		assert_int_equal(c.type[c.order[k]], want);
		assert_null(c.help[c.order[k]]);
	}
	assert_int_equal(c.labels, EXPORTER_LABEL_DRIVER);
	exporter_collectors_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_dcgm_layout),
	    cmocka_unit_test(test_help_with_commas_and_duplicates),
	    cmocka_unit_test(test_errors_name_the_line),
	    cmocka_unit_test(test_nul_byte_is_an_error),
	    cmocka_unit_test(test_unknown_list_is_bounded),
	    cmocka_unit_test(test_default_set),
	    cmocka_unit_test(test_csv_selects_optional),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
