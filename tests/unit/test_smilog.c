/*
 * test_smilog.c - the log reader on buffers shaped like nvidia-smi's output:
 * values absent never 0, units with and without, aliases, GPUs interleaved,
 * a cut last line, the options a log cannot do without. Each buffer is
 * copied to an allocation of exactly its size (no terminator), as a file is
 * read, so a sanitizer build catches a read past it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "store/smilog.h"
#include "util/err.h"

static int parse(const char *text, const smilog_opts *o, timeline **tl, smilog_info *info,
                 gw_fail *err)
{
	size_t n = strlen(text);
	char *buf = malloc(n ? n : 1);
	memcpy(buf, text, n);
	int rc = smilog_parse(buf, n, "log.csv", o, tl, info, err);
	free(buf);
	return rc;
}

static void test_absent_never_zero(void **state)
{
	(void)state;
	timeline *tl;
	smilog_info in;
	gw_fail err;
	const char *log = "timestamp, index, power.draw [W], utilization.gpu [%], fan.speed [%]\n"
	                  "2026/12/07 01:02:03.456, 0, [N/A], 45 %, [Not Supported]\n"
	                  "2026/12/07 01:02:04.456, 0, 250.00 W, [Unknown Error], N/A\n";
	assert_int_equal(parse(log, NULL, &tl, &in, &err), 0);
	assert_int_equal(tl->n, 2);
	assert_true(isnan(tl_gpu_at(tl, 0, GM_POWER_DRAW, 0)));
	assert_true(tl_gpu_at(tl, 0, GM_POWER_DRAW, 1) == 250.0);
	assert_true(tl_gpu_at(tl, 0, GM_UTIL_GPU, 0) == 45.0);
	assert_true(isnan(tl_gpu_at(tl, 0, GM_UTIL_GPU, 1)));
	assert_true(isnan(tl_gpu_at(tl, 0, GM_FAN, 0)) && isnan(tl_gpu_at(tl, 0, GM_FAN, 1)));
	assert_true(fabs(tl->t[1] - 1.0) < 1e-6);
	/* no host series made up */
	assert_int_equal(tl->ncpu, 0);
	for (int h = 0; h < HM__COUNT; h++)
		assert_null(tl->h[h]);
	tl_free(tl);
}

static void test_noheader_aliases_interleaved(void **state)
{
	(void)state;
	timeline *tl;
	smilog_info in;
	gw_fail err;
	/* noheader, nounits; clocks.sm is an alias of clocks.current.sm */
	const char *log = "2026/12/07 01:02:03.000, 1, 10, 1410\n"
	                  "2026/12/07 01:02:03.001, 0, 90, 1980\n"
	                  "2026/12/07 01:02:04.000, 1, 20, 1410\n"
	                  "2026/12/07 01:02:04.001, 0, 80, 1980\n"
	                  "2026/12/07 01:02:05.000, 1, 3";
	assert_int_equal(parse(log, NULL, &tl, &in, &err), GW_EXIT_USAGE);
	assert_non_null(strstr(err.hint, "--smi-fields"));
	assert_null(tl);
	smilog_opts o = {.fields = "timestamp,index,utilization.gpu,clocks.sm"};
	assert_int_equal(parse(log, &o, &tl, &in, &err), 0);
	assert_int_equal(tl->ngpu, 2);
	assert_int_equal(tl->n, 2);
	assert_int_equal(tl->gpu[0].index, 1); /* positions in order of appearance */
	assert_int_equal(tl->gpu[1].index, 0);
	assert_true(tl_gpu_at(tl, 0, GM_UTIL_GPU, 1) == 20.0);
	assert_true(tl_gpu_at(tl, 1, GM_UTIL_GPU, 1) == 80.0);
	assert_true(tl_gpu_at(tl, 1, GM_CLK_SM, 0) == 1980.0);
	assert_int_equal(in.partial_line, 5);
	assert_false(in.header);
	tl_free(tl);
}

static void test_dmon_and_interval(void **state)
{
	(void)state;
	timeline *tl;
	smilog_info in;
	gw_fail err;
	const char *log = "# gpu   pwr  temp    sm   mem pviol\n"
	                  "# Idx     W     C     %     %     %\n"
	                  "    0   111    83    25     7     -\n"
	                  "    0   112    84     -     5     0\n";
	assert_int_equal(parse(log, NULL, &tl, &in, &err), GW_EXIT_USAGE);
	assert_non_null(strstr(err.hint, "--interval"));
	smilog_opts o = {.interval = 2};
	assert_int_equal(parse(log, &o, &tl, &in, &err), 0);
	assert_int_equal(in.format, SMILOG_DMON);
	assert_string_equal(in.unknown, "pviol");
	assert_int_equal(tl->n, 2);
	assert_true(tl->t[1] == 2.0);
	assert_true(tl_gpu_at(tl, 0, GM_TEMP_GPU, 0) == 83.0);
	assert_true(isnan(tl_gpu_at(tl, 0, GM_UTIL_GPU, 1)));
	tl_free(tl);
}

static void test_bad_input(void **state)
{
	(void)state;
	static const char *const bad[] = {
	    "",
	    "   \n\n",
	    "  ",
	    "foo, bar [W]\n1, 2\n",
	    "timestamp, utilization.gpu [%]\n2026/12/07 01:02:03.000, 5 %, 6\n",
	    "timestamp, utilization.gpu [%]\n2026/99/07 01:02:03.000, 5 %\n",
	    "# gpu sm\nxx\n",
	    "\x01\x02\x03binary",
	    "t,gpu,lost,utilization_gpu\n",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		timeline *tl = (timeline *)1;
		smilog_info in;
		gw_fail err;
		smilog_opts o = {.interval = 1};
		int rc = parse(bad[i], &o, &tl, &in, &err);
		assert_int_equal(rc, GW_EXIT_ENV);
		assert_null(tl);
		assert_string_equal(err.what, "log.csv");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_absent_never_zero),
	    cmocka_unit_test(test_noheader_aliases_interleaved),
	    cmocka_unit_test(test_dmon_and_interval),
	    cmocka_unit_test(test_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
