/* The report faces: text (UTF-8 and ASCII), JSON, HTML structure, sparklines, compare output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag_fixture.h"
#include "html_check.h"
#include "report/report.h"

/* A data-starved single-GPU run with a gap in the power series (absent values). */
static timeline *starved(void)
{
	timeline *tl = fx_healthy();
	for (int s = 0; s < tl->n; s++) {
		tl_set_gpu(tl, 0, GM_UTIL_GPU, s, s % 2 ? 60 : 20);
		tl_set_gpu(tl, 0, GM_UTIL_SAMPLES_MIN, s, 0);
		tl_set_gpu(tl, 0, GM_UTIL_SAMPLES_IDLE, s, 60);
		tl_set_gpu(tl, 0, GM_POWER_DRAW, s, s >= 50 && s < 55 ? NAN : s % 2 ? 500 : 300);
		tl_set_host(tl, HM_CPU_BUSY_MAX, s, 100);
		tl_set_host(tl, HM_CPU_BUSY_MAX_CORE, s, 3);
	}
	return tl;
}

typedef enum { F_TEXT, F_JSON, F_HTML } fmt;

/* Render r of tl into a malloc'd string. */
static char *render(const timeline *tl, fmt f, bool utf8, bool color)
{
	diag_opts o;
	diag_opts_default(&o);
	diag_meta m = {0};
	diag_meta_from_timeline(&m, tl);
	diag_meta_set(&m, "env.CUDA_VISIBLE_DEVICES", "0");
	o.meta = &m;
	diag_result r;
	diag_run(tl, &o, &r);
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	report_style st = {.utf8 = utf8, .color = color, .source = "run <1>.gpuwhy", .opts = &o};
	if (f == F_TEXT)
		report_text(out, tl, &m, &r, &st);
	else if (f == F_JSON)
		report_json(out, tl, &m, &r, &st);
	else
		report_html(out, tl, &m, &r, &st);
	fclose(out);
	diag_result_free(&r);
	diag_meta_free(&m);
	return buf;
}

static void test_sparkline(void **state)
{
	(void)state;
	char out[128];
	double x[] = {0, 50, 100};
	assert_string_equal(report_sparkline(x, 0, 3, 0, 100, 3, true, out, sizeof out),
	                    "\u2581\u2585\u2588");
	assert_string_equal(report_sparkline(x, 0, 3, 0, 100, 3, false, out, sizeof out), "_=#");
	double y[] = {0, 100, NAN, NAN, 100, 100};
	/* six samples into three cells: means 50, absent, 100 */
	assert_string_equal(report_sparkline(y, 0, 6, 0, 100, 3, false, out, sizeof out), "= #");
	/* never wider than the samples, never past the buffer */
	assert_string_equal(report_sparkline(x, 0, 3, 0, 100, 40, false, out, sizeof out), "_=#");
	assert_string_equal(report_sparkline(x, 0, 3, 0, 100, 3, true, out, 7), "\u2581\u2585");
	assert_string_equal(report_sparkline(NULL, 0, 3, 0, 100, 3, true, out, sizeof out), "");
}

static void test_text(void **state)
{
	(void)state;
	timeline *tl = starved();
	char *t = render(tl, F_TEXT, true, false);
	assert_non_null(strstr(t, "gpuwhy report: run <1>.gpuwhy"));
	assert_non_null(strstr(t, "Findings: 0 errors, 1 warning"));
	/* the goal says what it means and how to pick the other */
	assert_non_null(strstr(
	    t, "\n  goal      throughput (keep the GPUs busy; --goal latency for serving)\n"));
	assert_non_null(strstr(t, "WARN  data-starved"));
	assert_non_null(strstr(t, "GPU 0 idle 60 % of the run while core 3 is at 100 %"));
	assert_non_null(strstr(t, "utilization.gpu, idle share (100 - mean): 60 % [>= 25 %: yes]"));
	assert_non_null(strstr(t, "change    Feed the GPU"));
	assert_non_null(strstr(t, "The seven-step chain"));
	assert_non_null(strstr(t, "idle-empty"));
	/* findings come before the chain; sparklines use block characters */
	assert_true(strstr(t, "data-starved") < strstr(t, "The seven-step chain"));
	assert_non_null(strstr(t, "\u2588"));
	assert_null(strstr(t, "\033["));
	/* no line wider than 100 columns (counting characters, not bytes) */
	int colno = 0;
	for (const unsigned char *p = (const unsigned char *)t; *p; p++) {
		if (*p == '\n') {
			colno = 0;
			continue;
		}
		if ((*p & 0xC0) != 0x80 && ++colno > 100)
			fail_msg("line wider than 100 columns near: %.60s", (const char *)p - 60);
	}
	free(t);

	/* ASCII fallback: not one byte outside ASCII. */
	t = render(tl, F_TEXT, false, false);
	for (const unsigned char *p = (const unsigned char *)t; *p; p++)
		if (*p >= 0x80)
			fail_msg("non-ASCII byte in ASCII output near: %.40s", (const char *)p);
	assert_non_null(strstr(t, "  2 !! What does utilization do"));
	assert_non_null(strstr(t, "  1 ok Is the process"));
	free(t);

	/* Colour only when asked. */
	t = render(tl, F_TEXT, true, true);
	assert_non_null(strstr(t, "\033[1;33mWARN"));
	free(t);
	tl_free(tl);
}

static void test_json(void **state)
{
	(void)state;
	timeline *tl = starved();
	tl_add_event(tl, 42, TL_EV_XID, 0, 31, "MMU fault");
	char *t = render(tl, F_JSON, true, false);
	json_error_t err;
	json_t *j = json_loads(t, 0, &err);
	if (!j)
		fail_msg("invalid JSON at line %d: %s", err.line, err.text);
	assert_int_equal(json_integer_value(json_object_get(j, "report_version")), 1);
	assert_int_equal(json_integer_value(json_object_get(j, "exit_code")), 1);
	assert_string_equal(json_string_value(json_object_get(j, "goal")), "throughput");
	json_t *fs = json_object_get(j, "findings");
	assert_int_equal(json_array_size(fs), 2);
	json_t *f0 = json_array_get(fs, 0), *f1 = json_array_get(fs, 1);
	assert_string_equal(json_string_value(json_object_get(f0, "id")), "gpu-fault");
	assert_string_equal(json_string_value(json_object_get(f0, "severity")), "error");
	assert_string_equal(json_string_value(json_object_get(f1, "id")), "data-starved");
	assert_int_equal(json_integer_value(json_array_get(json_object_get(f1, "gpus"), 0)), 0);
	json_t *e0 = json_array_get(json_object_get(f1, "evidence"), 0);
	assert_string_equal(json_string_value(json_object_get(e0, "metric")), "utilization.gpu");
	assert_float_equal(json_number_value(json_object_get(e0, "value")), 60, 1e-9);
	assert_float_equal(json_number_value(json_object_get(e0, "threshold")), 25, 1e-9);
	assert_true(json_is_true(json_object_get(e0, "met")));
	assert_int_equal(json_integer_value(json_object_get(e0, "gpu")), 0);
	/* context evidence has null threshold and null met */
	json_t *ev = json_object_get(f1, "evidence");
	bool saw_null = false;
	for (size_t i = 0; i < json_array_size(ev); i++) {
		json_t *e = json_array_get(ev, i);
		if (!strcmp(json_string_value(json_object_get(e, "metric")), "disk.read")) {
			assert_true(json_is_null(json_object_get(e, "threshold")));
			assert_true(json_is_null(json_object_get(e, "met")));
			saw_null = true;
		}
	}
	assert_true(saw_null);
	json_t *g0 = json_array_get(json_object_get(j, "gpus"), 0);
	assert_string_equal(json_string_value(json_object_get(g0, "quadrant")), "idle-empty");
	assert_true(json_is_true(json_object_get(g0, "job")));
	assert_float_equal(json_number_value(json_object_get(g0, "util_mean")), 40, 1e-9);
	json_t *chain = json_object_get(j, "chain");
	assert_int_equal(json_array_size(chain), 7);
	assert_string_equal(json_string_value(json_object_get(json_array_get(chain, 6), "status")),
	                    "n/a");
	json_t *rec = json_object_get(j, "recording");
	assert_string_equal(json_string_value(json_object_get(rec, "command")),
	                    "python train.py --batch-size 64");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(rec, "env"), "CUDA_VISIBLE_DEVICES")),
	    "0");
	json_decref(j);
	free(t);

	/* Absent metrics are null, never 0: a GPU without GPM has no SM activity. */
	for (int s = 0; s < tl->n; s++)
		tl_set_gpu(tl, 0, GM_GPM_SM_ACTIVE, s, NAN);
	t = render(tl, F_JSON, true, false);
	j = json_loads(t, 0, &err);
	assert_non_null(j);
	g0 = json_array_get(json_object_get(j, "gpus"), 0);
	assert_true(json_is_null(json_object_get(g0, "sm_active_mean")));
	json_decref(j);
	free(t);
	tl_free(tl);
}

static void test_html(void **state)
{
	(void)state;
	timeline *tl = starved();
	char *h = render(tl, F_HTML, true, false);
	const char *bad = html_check(h);
	if (bad)
		fail_msg("HTML check: %s", bad);
	assert_non_null(strstr(h, "<title>gpuwhy report: run &lt;1&gt;.gpuwhy</title>"));
	int svgs = 0;
	for (const char *p = h; (p = strstr(p, "<svg")); p++)
		svgs++;
	assert_true(svgs >= 7); /* timeline, util, memory, power, clocks, host, steps */
	assert_non_null(strstr(h, "id=\"chart-util\""));
	assert_non_null(strstr(h, "<th>goal</th><td>throughput (keep the GPUs busy; --goal latency "
	                          "for serving)</td>"));
	assert_non_null(strstr(h, "id=\"chart-power\""));
	assert_non_null(strstr(h, "id=\"chart-host\""));
	assert_non_null(strstr(h, "id=\"chart-steps\""));
	assert_non_null(strstr(h, "id=\"f-0\""));
	assert_non_null(strstr(h, "href=\"#f-0\""));
	/* 20 % and 60 % samples are above idle_util_pct (10 %): none is shaded idle, and
	 * the utilization chart says why; no legend names shading no chart draws */
	assert_null(strstr(h, "class=\"gap\""));
	assert_null(strstr(h, "sw gapk"));
	const char *ul = strstr(strstr(h, "id=\"chart-util\""), "class=\"legend\"");
	assert_non_null(
	    strstr(ul, "not shaded: utilization stayed above the idle threshold, 10 %"));
	/* the marks of a finding's window above a chart are in its legend */
	assert_non_null(strstr(h, "<rect class=\"fw\""));
	assert_non_null(strstr(ul, "sw fmk\"></span>a finding&#39;s time window") ||
	                strstr(ul, "sw fmk\"></span>a finding's time window"));
	/* the power series is broken where values are absent: two path starts */
	const char *pw = strstr(h, "id=\"chart-power\"");
	const char *path = strstr(pw, "<path");
	const char *end = strstr(path, "/>");
	int moves = 0;
	for (const char *p = path; p < end; p++)
		moves += *p == 'M';
	assert_int_equal(moves, 2);
	free(h);

	/* The checker itself catches what it must. */
	assert_non_null(html_check("<!DOCTYPE html><html><img src=\"http://x/y.png\"></html>"));
	assert_non_null(html_check("<!DOCTYPE html><html><a href=\"https://x\">x</a></html>"));
	assert_non_null(html_check("<!DOCTYPE html><html><b>x</html>"));
	assert_non_null(html_check("<!DOCTYPE html><html>a & b</html>"));
	assert_null(html_check("<!DOCTYPE html><html><img src=\"data:image/png;base64,AA\"><a "
	                       "href=\"#f-1\">x</a><svg><rect/></svg></html>"));
	tl_free(tl);
}

static void test_compare_faces(void **state)
{
	(void)state;
	const char *fa = "a.gpuwhy", *fb = "b.gpuwhy";
	timeline *base = starved(), *cand = fx_healthy();
	snprintf(base->command, sizeof base->command, "python train.py --workers 1");
	snprintf(cand->command, sizeof cand->command, "python train.py --workers 4");
	base->nsteps = cand->nsteps = 0;
	for (int k = 0; k < 300; k++) {
		tl_add_step(base, 1 + k * 0.1 + 0.001 * (k % 3), k);
		tl_add_step(cand, 1 + k * 0.05 + 0.001 * (k % 3), k);
	}
	diag_opts o;
	diag_opts_default(&o);
	diag_comparison c;
	diag_compare(base, NULL, cand, NULL, &o, &c);
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	report_style st = {.utf8 = true, .opts = &o};
	compare_text(out, &c, &fa, 1, &fb, 1, &st);
	fclose(out);
	assert_non_null(strstr(buf, "The candidate is FASTER: mean step time -50.0 ms (-50.0 %)"));
	assert_null(strstr(buf, "The median step got"));
	assert_non_null(strstr(buf, "threshold: changes under 2.0 %"));
	assert_non_null(strstr(buf, "one run per side measures the noise within a run"));
	assert_non_null(strstr(buf, "argument --workers               1 -> 4"));
	assert_non_null(strstr(buf, "gone:  data-starved"));
	assert_null(strstr(buf, "Warning"));
	free(buf);

	buf = NULL;
	out = open_memstream(&buf, &len);
	compare_json(out, &c, &fa, 1, &fb, 1);
	fclose(out);
	json_error_t err;
	json_t *j = json_loads(buf, 0, &err);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "verdict")), "faster");
	assert_string_equal(json_string_value(json_object_get(j, "judged_by")),
	                    "step-time-mean-ci95");
	json_t *mean = json_object_get(j, "step_mean");
	assert_float_equal(json_number_value(json_object_get(mean, "diff_s")), -0.05, 2e-3);
	json_t *p50 = json_object_get(j, "step_p50");
	assert_float_equal(json_number_value(json_object_get(p50, "diff_s")), -0.05, 2e-3);
	assert_true(json_number_value(json_object_get(p50, "ci95_high_s")) < 0);
	assert_false(json_is_true(json_object_get(j, "more_than_one_change")));
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(j, "bootstrap"), "resamples")),
	    2000);
	json_decref(j);
	free(buf);
	diag_comparison_free(&c);

	/* Two changes: the warning. */
	snprintf(cand->command, sizeof cand->command, "python train.py --workers 4 --amp");
	diag_compare(base, NULL, cand, NULL, &o, &c);
	buf = NULL;
	out = open_memstream(&buf, &len);
	compare_text(out, &c, &fa, 1, &fb, 1, &st);
	fclose(out);
	assert_non_null(strstr(buf, "Warning: 2 things changed at once"));
	free(buf);
	diag_comparison_free(&c);
	tl_free(base);
	tl_free(cand);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sparkline),     cmocka_unit_test(test_text),
	    cmocka_unit_test(test_json),          cmocka_unit_test(test_html),
	    cmocka_unit_test(test_compare_faces),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
