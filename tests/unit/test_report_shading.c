/*
 * test_report_shading.c - the HTML report shades what the diagnosis calls
 * idle (its idle_util_pct, stated in the legend), throttled and lost spans
 * apart, and gives the wall-clock start and clock times; the JSON report
 * carries the same wall-clock times.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag_fixture.h"
#include "html_check.h"
#include "report/report.h"

#define T0_WALL 1764600000.0 /* 2025-12-01T14:40:00Z */

static char *render(const timeline *tl, const char *set, bool json)
{
	diag_opts o;
	diag_opts_default(&o);
	if (set)
		assert_true(diag_threshold_set(&o.th, set));
	diag_meta m = {0};
	diag_meta_from_timeline(&m, tl);
	o.meta = &m;
	diag_result r;
	diag_run(tl, &o, &r);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	report_style st = {.utf8 = true, .source = "run.gpuwhy", .opts = &o};
	if (json)
		report_json(f, tl, &m, &r, &st);
	else
		report_html(f, tl, &m, &r, &st);
	assert_int_equal(fclose(f), 0);
	diag_result_free(&r);
	diag_meta_free(&m);
	if (!json) {
		const char *bad = html_check(buf);
		if (bad)
			fail_msg("%s", bad);
	}
	return buf;
}

static int count(const char *s, const char *needle)
{
	int n = 0;
	for (const char *p = s; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

/* A GPU at 40 % all run long: busy by the diagnosis's measure, so not shaded idle. */
static void test_idle_is_the_diagnosis_threshold(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	tl->t0_wall = T0_WALL;
	for (int s = 0; s < tl->n; s++) {
		tl_set_gpu(tl, 0, GM_UTIL_GPU, s, 40);
		tl_set_gpu(tl, 0, GM_UTIL_SAMPLES_IDLE, s, 60);
	}
	char *h = render(tl, NULL, false);
	assert_int_equal(count(h, "class=\"gap\""), 0);
	assert_null(strstr(h, "GPU idle (")); /* no idle span, no legend entry */
	free(h);
	/* With the threshold raised above 40 % the same run is idle, and the legend says so. */
	h = render(tl, "idle_util_pct=45", false);
	assert_true(count(h, "class=\"gap\"") > 0);
	assert_non_null(strstr(h, "GPU idle (utilization at or below 45 %"));
	free(h);
	tl_free(tl);
}

static void test_throttled_and_lost_spans(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	tl->t0_wall = T0_WALL;
	int n = tl->n;
	for (int s = 0; s < n; s++) {
		double u = s < n / 3 ? 3 : 95; /* idle first, then busy */
		tl_set_gpu(tl, 0, GM_UTIL_GPU, s, u);
		tl_set_gpu(tl, 0, GM_CLK_REASONS, s, s >= n / 2 && s < 2 * n / 3 ? 0x4 : 0);
		if (s >= 5 * n / 6)
			tl_set_gpu(tl, 0, GM_UTIL_GPU, s, NAN);
	}
	tl_add_event(tl, tl->t[5 * n / 6], TL_EV_GPU_LOST, 0, 79, "fell off the bus");
	char *h = render(tl, NULL, false);
	assert_true(count(h, "class=\"gap\"") > 0);
	assert_true(count(h, "class=\"thr\"") > 0);
	assert_true(count(h, "class=\"lost\"") > 0);
	assert_non_null(strstr(h, "GPU idle (utilization at or below 10 %"));
	assert_non_null(strstr(h, "throttled (SW Power Cap"));
	assert_non_null(strstr(h, "GPU lost (off the bus)"));
	/* the wall-clock start, and clock times in the tooltips */
	assert_non_null(strstr(h, "<th>started</th><td>"));
	assert_non_null(strstr(h, "2025-12-01 14:40:00 +0000;")); /* once, local (TZ=UTC here) */
	assert_null(strstr(h, "2025-12-01T14:40:00Z"));
	assert_true(count(h, "class=\"hov\"") > 0);
	free(h);
	char *j = render(tl, NULL, true);
	assert_non_null(strstr(j, "\"start_wall\": 1764600000"));
	assert_non_null(strstr(j, "\"start_wall_utc\": \"2025-12-01T14:40:00.000Z\""));
	assert_non_null(strstr(j, "\"from_wall\": 17646"));
	free(j);
	tl_free(tl);
}

/* No wall clock (an old or damaged file): no start row, nulls in the JSON, no crash. */
static void test_unknown_start(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	tl->t0_wall = 0;
	char *h = render(tl, NULL, false);
	assert_null(strstr(h, "<th>started</th>"));
	free(h);
	char *j = render(tl, NULL, true);
	assert_non_null(strstr(j, "\"start_wall\": null"));
	assert_non_null(strstr(j, "\"start_wall_utc\": null"));
	free(j);
	tl_free(tl);
}

int main(void)
{
	setenv("TZ", "UTC", 1);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_idle_is_the_diagnosis_threshold),
	    cmocka_unit_test(test_throttled_and_lost_spans),
	    cmocka_unit_test(test_unknown_start),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
