/* The sweep's pure parts: plan expansion, placeholders and quoting, the search, the fits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sweep/memfit.h"
#include "sweep/plan.h"
#include "sweep/results.h"
#include "sweep/search.h"
#include "sweep/state.h"
#include "sweep/stats.h"
#include "sweep/subst.h"
#include "util/err.h"

static gw_fail err;

static void spec_with(sweep_spec *sp, char **cmd, int ncmd)
{
	sweep_spec_init(sp);
	sp->cmd = cmd;
	sp->ncmd = ncmd;
}

static void test_one_at_a_time(void **state)
{
	(void)state;
	char *cmd[] = {"train", "--workers", "{workers}", "--bs", "{batch}"};
	sweep_spec sp;
	spec_with(&sp, cmd, 5);
	assert_int_equal(sweep_var_parse(&sp, "workers=1,2,4,8", false, &err), 0);
	assert_int_equal(sweep_var_parse(&sp, "batch=16,32,64", false, &err), 0);
	assert_int_equal(sweep_spec_check(&sp, &err), 0);
	assert_string_equal(sp.batch_var, "batch");
	sweep_plan pl;
	assert_int_equal(sweep_plan_build(&sp, &pl, &err), 0);
	/* baseline + 3 more workers + 2 more batches */
	assert_int_equal(pl.n, 6);
	assert_string_equal(pl.c[0].name, "workers=1,batch=16");
	assert_int_equal(pl.c[0].varied, -1);
	assert_string_equal(pl.c[3].name, "workers=8,batch=16");
	assert_int_equal(pl.c[3].varied, 0);
	assert_string_equal(pl.c[5].name, "workers=1,batch=64");
	assert_int_equal(pl.c[5].varied, 1);
	assert_string_equal(pl.c[5].file, "workers=1,batch=64");
	sweep_plan_free(&pl);
	sp.grid = true;
	assert_int_equal(sweep_plan_build(&sp, &pl, &err), 0);
	assert_int_equal(pl.n, 12);
	assert_string_equal(pl.c[11].name, "workers=8,batch=64");
	assert_int_equal(pl.c[11].varied, -2);
	assert_int_equal(pl.c[1].varied, 1); /* workers=1,batch=32: batch alone changed */
	sweep_plan_free(&pl);
	sp.max_runs = 11;
	assert_int_equal(sweep_plan_build(&sp, &pl, &err), GW_EXIT_USAGE);
	assert_non_null(strstr(err.why, "--max-runs"));
	/* the one line the command prints: "gpuwhy: sweep: WHY (HINT)" */
	assert_string_equal(err.what, "sweep");
	assert_string_equal(err.hint, "fewer values, or --max-runs");
	sweep_spec_free(&sp);
}

static void test_long_values(void **state)
{
	(void)state;
	char *cmd[] = {"x", "{v}"};
	sweep_spec sp;
	spec_with(&sp, cmd, 2);
	char arg[1400] = "v=";
	memset(arg + 2, 'a', 600);
	arg[602] = ',';
	memset(arg + 603, 'a', 599);
	strcat(arg, "b");
	assert_int_equal(sweep_var_parse(&sp, arg, false, &err), 0);
	sweep_plan pl;
	/* the names are cut short alike: refused rather than mixed up */
	assert_int_equal(sweep_plan_build(&sp, &pl, &err), GW_EXIT_USAGE);
	assert_non_null(strstr(err.why, "too long"));
	sweep_spec_free(&sp);
	spec_with(&sp, cmd, 2);
	char arg2[900] = "v=";
	memset(arg2 + 2, 'a', 400);
	strcat(arg2, "1,");
	memset(arg2 + strlen(arg2), 'a', 400);
	strcat(arg2, "2");
	assert_int_equal(sweep_var_parse(&sp, arg2, false, &err), 0);
	assert_int_equal(sweep_plan_build(&sp, &pl, &err), 0);
	assert_string_not_equal(pl.c[0].file, pl.c[1].file);
	assert_true(strlen(pl.c[0].file) < sizeof pl.c[0].file);
	sweep_plan_free(&pl);
	sweep_spec_free(&sp);
}

static void test_ranges_and_bad_lists(void **state)
{
	(void)state;
	char *cmd[] = {"x", "{w}"};
	sweep_spec sp;
	spec_with(&sp, cmd, 2);
	assert_int_equal(sweep_var_parse(&sp, "w=pow2:1..16", false, &err), 0);
	assert_int_equal(sp.vars[0].nvalues, 5);
	assert_string_equal(sp.vars[0].values[4], "16");
	assert_int_equal(sweep_var_parse(&sp, "v=2..10:4", false, &err), 0);
	assert_int_equal(sp.vars[1].nvalues, 3); /* 2 6 10 */
	assert_string_equal(sp.vars[1].values[2], "10");
	assert_int_equal(sweep_var_parse(&sp, "e=", false, &err), GW_EXIT_USAGE);
	assert_non_null(strstr(err.why, "empty"));
	assert_string_equal(err.what, "sweep");
	assert_string_equal(err.hint, "see gpuwhy sweep --help");
	assert_int_equal(sweep_var_parse(&sp, "e=1,,2", false, &err), GW_EXIT_USAGE);
	assert_int_equal(sweep_var_parse(&sp, "e=1,1", false, &err), GW_EXIT_USAGE);
	assert_int_equal(sweep_var_parse(&sp, "w=3", false, &err), GW_EXIT_USAGE);
	assert_non_null(strstr(err.why, "twice"));
	assert_int_equal(sweep_var_parse(&sp, "1x=3", false, &err), GW_EXIT_USAGE);
	assert_int_equal(sweep_var_parse(&sp, "b=pow2:a..9", true, &err), GW_EXIT_USAGE);
	assert_non_null(strstr(err.why, "not a range"));
	assert_int_equal(sweep_var_parse(&sp, "b=9..3", true, &err), GW_EXIT_USAGE);
	sp.max_values = 3;
	assert_int_equal(sweep_var_parse(&sp, "m=1,2,3,4", false, &err), GW_EXIT_USAGE);
	assert_non_null(strstr(err.why, "--max-values"));
	assert_int_equal(sweep_var_parse(&sp, "m=1..100", false, &err), GW_EXIT_USAGE);
	assert_int_equal(sweep_var_parse(&sp, "m=1,2,3", false, &err), 0);
	sweep_spec_free(&sp);
}

static void test_placeholder_check(void **state)
{
	(void)state;
	char *cmd[] = {"x", "{w}", "{nope}"};
	sweep_spec sp;
	spec_with(&sp, cmd, 3);
	assert_int_equal(sweep_var_parse(&sp, "w=1,2", false, &err), 0);
	assert_int_equal(sweep_spec_check(&sp, &err), GW_EXIT_USAGE);
	assert_non_null(strstr(err.why, "unknown placeholder {nope}"));
	char *cmd2[] = {"x", "{{literal}}", "--bs"};
	sp.cmd = cmd2;
	assert_int_equal(sweep_spec_check(&sp, &err), GW_EXIT_USAGE);
	assert_non_null(strstr(err.why, "used nowhere"));
	char *env[] = {"W={w}"};
	sp.env = env;
	sp.nenv = 1;
	assert_int_equal(sweep_spec_check(&sp, &err), 0);
	sweep_spec_free(&sp);
}

static void test_substitution_quoting(void **state)
{
	(void)state;
	char *cmd[] = {"python", "--name={v}", "{{v}}"};
	sweep_spec sp;
	spec_with(&sp, cmd, 3);
	assert_int_equal(sweep_var_parse(&sp, "v=a b;rm -rf x,$(id)", false, &err), 0);
	assert_int_equal(sweep_spec_check(&sp, &err), 0);
	sweep_plan pl;
	assert_int_equal(sweep_plan_build(&sp, &pl, &err), 0);
	char **argv = sweep_argv(&sp, &pl.c[0], &err);
	assert_string_equal(argv[1], "--name=a b;rm -rf x");
	assert_string_equal(argv[2], "{v}");
	assert_null(argv[3]);
	sweep_strv_free(argv);
	/* the file name keeps no shell or path characters and differs from a look-alike */
	assert_null(strpbrk(pl.c[0].file, " ;/$()"));
	assert_non_null(strchr(pl.c[0].file, '~'));
	char *sh[] = {"/bin/sh", "-c", "echo {v} > out", "{v}"};
	sp.cmd = sh;
	sp.ncmd = 4;
	int script;
	assert_true(sweep_is_shell(sh, 4, &script));
	assert_int_equal(script, 2);
	argv = sweep_argv(&sp, &pl.c[1], &err);
	assert_string_equal(argv[2], "echo '$(id)' > out");
	char *bad[] = {"echo", "{w}"};
	sp.cmd = bad;
	sp.ncmd = 2;
	assert_null(sweep_argv(&sp, &pl.c[1], &err));
	assert_string_equal(err.what, pl.c[1].name);
	assert_string_equal(err.why, "unknown placeholder {w}");
	assert_int_equal(err.code, GW_EXIT_USAGE);
	sp.cmd = sh;
	sp.ncmd = 4;
	assert_string_equal(argv[3], "$(id)"); /* $0 is an argument, not code */
	sweep_strv_free(argv);
	char q[64];
	sweep_shell_quote("it's", q, sizeof q);
	assert_string_equal(q, "'it'\\''s'");
	sweep_shell_quote("plain-1.5", q, sizeof q);
	assert_string_equal(q, "plain-1.5");
	sweep_shell_quote("", q, sizeof q);
	assert_string_equal(q, "''");
	char *notsh[] = {"python", "-c", "print({v})"};
	assert_false(sweep_is_shell(notsh, 3, &script));
	char *bash[] = {"bash", "-ec", "x"};
	assert_true(sweep_is_shell(bash, 3, &script));
	sweep_plan_free(&pl);
	sweep_spec_free(&sp);
}

/* Run a search against a boundary: values up to fit_max fit. */
static int search_against(long long lo, long long hi, long long step, long long fit_max,
                          long long *seq, int max, sweep_search *s)
{
	sweep_search_init(s, lo, hi, step);
	int n = 0;
	long long x;
	while ((x = sweep_search_next(s)) >= 0 && n < max) {
		seq[n++] = x;
		sweep_search_report(s, x, x <= fit_max);
	}
	return n;
}

static void test_search(void **state)
{
	(void)state;
	long long seq[64];
	sweep_search s;
	int n = search_against(8, 4096, 8, 1245, seq, 64, &s);
	long long want[] = {8,    16,   32,   64,   128,  256,  512,  1024,
	                    2048, 1536, 1280, 1152, 1216, 1248, 1232, 1240};
	assert_int_equal(n, (int)(sizeof want / sizeof *want));
	for (int i = 0; i < n; i++)
		assert_int_equal(seq[i], want[i]);
	assert_int_equal(s.good, 1240);
	assert_int_equal(s.bad, 1248);
	/* everything fits: doubling stops at the upper bound */
	n = search_against(8, 100, 8, 1 << 30, seq, 64, &s);
	assert_int_equal(seq[n - 1], 100);
	assert_int_equal(s.good, 100);
	assert_int_equal(s.bad, -1);
	/* nothing fits */
	n = search_against(8, 100, 8, 1, seq, 64, &s);
	assert_int_equal(n, 1);
	assert_int_equal(s.good, -1);
	/* the found value is within one step of the boundary, whatever the boundary */
	for (long long b = 8; b < 3000; b += 37) {
		search_against(8, 4096, 8, b, seq, 64, &s);
		assert_true(s.good <= b && b - s.good < 8);
		assert_true(s.bad > b);
	}
}

static void test_memfit(void **state)
{
	(void)state;
	double x[] = {64, 128, 256, 512, 1024};
	double y[5];
	for (int i = 0; i < 5; i++)
		y[i] = 1024 + 24 * x[i] + (i % 2 ? 3 : -3);
	sweep_memfit f;
	assert_true(sweep_memfit_fit(x, y, 5, 81231, 0.10, &f));
	assert_true(fabs(f.per_item - 24) < 0.05);
	assert_true(fabs(f.fixed - 1024) < 10);
	assert_true(fabs(f.boundary - (81231 - 1024) / 24.0) < 5);
	assert_true(f.boundary_lo < f.boundary && f.boundary < f.boundary_hi);
	assert_true(f.max_batch < f.boundary);
	assert_true(fabs(f.max_batch - (81231 * 0.9 - 1024) / 24.0) < 5);
	/* two points: a line, no interval */
	assert_true(sweep_memfit_fit(x, y, 2, 81231, 0.1, &f));
	assert_true(isnan(f.boundary_lo));
	/* one batch value only, or memory that does not grow: no model */
	double same[] = {64, 64, 64};
	assert_false(sweep_memfit_fit(same, y, 3, 81231, 0.1, &f));
	double flat[] = {100, 100, 100};
	assert_false(sweep_memfit_fit(x, flat, 3, 81231, 0.1, &f));
	/* a run whose samples missed its memory (peak 0) leaves the line as it was */
	double y0[5];
	memcpy(y0, y, sizeof y0);
	y0[1] = 0;
	sweep_memfit g;
	double x4[] = {64, 256, 512, 1024}, y4[] = {y[0], y[2], y[3], y[4]};
	assert_true(sweep_memfit_fit(x, y0, 5, 81231, 0.10, &g));
	assert_true(sweep_memfit_fit(x4, y4, 4, 81231, 0.10, &f));
	assert_int_equal(g.n, 4);
	assert_float_equal(g.per_item, f.per_item, 1e-9);
	assert_float_equal(g.fixed, f.fixed, 1e-9);
}

static void test_stats(void **state)
{
	(void)state;
	double thr[] = {10, 20, 40, 41, 42};
	assert_int_equal(sweep_knee(thr, 5, 0.10), 2);
	assert_int_equal(sweep_knee(thr, 3, 0.10), 2); /* still gaining at the end */
	assert_int_equal(sweep_knee(thr, 0, 0.10), -1);
	double xs[] = {1, 2, 3, 4};
	double m, h;
	sweep_mean_ci(xs, 4, &m, &h);
	assert_true(fabs(m - 2.5) < 1e-12);
	/* sd 1.291, t(3) 3.182: half-width 3.182 * 1.291 / 2 */
	assert_true(fabs(h - 3.182 * sqrt(5.0 / 3) / 2) < 1e-3);
	sweep_mean_ci(xs, 1, &m, &h);
	assert_true(isnan(h));
	assert_true(fabs(sweep_t95(1000) - 1.96) < 1e-9);
}

static void test_state_round_trip(void **state)
{
	(void)state;
	char dir[] = "/tmp/gpuwhy-test-sweep-XXXXXX";
	assert_non_null(mkdtemp(dir));
	sweep_state st = {0};
	snprintf(st.dir, sizeof st.dir, "%s", dir);
	char *args[] = {"-o", "x y", "--vary", "w=1,2", "--", "echo", "{w}"};
	st.args = args;
	st.nargs = 7;
	st.ncpu = 2;
	st.free_cores = 1.5;
	sweep_run *r = sweep_state_add(&st, "w=1", 1, "/d/w=1-r1.gpuwhy");
	r->status = SWEEP_DONE;
	r->exit_code = 0;
	r->started = 1700000000.25;
	assert_ptr_equal(sweep_state_add(&st, "w=1", 1, "other"), r);
	r = sweep_state_add(&st, "w=2", 1, "/d/w=2-r1.gpuwhy");
	r->status = SWEEP_INTERRUPTED;
	r->queue_id = 7;
	assert_int_equal(sweep_state_save(&st), 0);
	free(st.r);
	sweep_state back;
	assert_int_equal(sweep_state_load(dir, &back), 0);
	assert_int_equal(back.nargs, 7);
	assert_string_equal(back.args[1], "x y");
	assert_int_equal(back.n, 2);
	assert_int_equal(back.ncpu, 2);
	assert_true(fabs(back.free_cores - 1.5) < 1e-9);
	assert_int_equal(back.r[0].status, SWEEP_DONE);
	assert_int_equal(back.r[0].exit_code, 0);
	assert_true(fabs(back.r[0].started - 1700000000.25) < 1e-3);
	assert_int_equal(back.r[1].status, SWEEP_INTERRUPTED);
	assert_int_equal(back.r[1].exit_code, -1);
	assert_int_equal(back.r[1].queue_id, 7);
	assert_string_equal(back.r[1].file, "/d/w=2-r1.gpuwhy");
	sweep_state_free(&back);
	char path[600];
	snprintf(path, sizeof path, "%s/sweep.json", dir);
	FILE *f = fopen(path, "w");
	fputs("{\"args\": [], \"runs\": [{\"config\": 3}]}", f);
	fclose(f);
	assert_int_equal(sweep_state_load(dir, &back), 3);
	sweep_state_free(&back);
	remove(path);
	assert_int_equal(sweep_state_load(dir, &back), 2); /* no sweep here */
	sweep_state_free(&back);
	rmdir(dir);
}

/* Results of a workers sweep built by hand: step time, GPU use, the job's cores. */
static void fake_result(sweep_result *r, double step_s, double util, double job_cores)
{
	memset(r, 0, sizeof *r);
	r->ok = true;
	r->nrep = r->nrep_ok = 1;
	r->status = SWEEP_DONE;
	r->nsteps = 40;
	r->steps = malloc(40 * sizeof *r->steps);
	for (int i = 0; i < 40; i++)
		r->steps[i] = step_s * (1 + 0.01 * ((i % 5) - 2));
	sweep_mean_ci(r->steps, 40, &r->mean, &r->ci_half);
	r->p50 = r->p90 = step_s;
	r->steps_s = 1 / r->mean;
	r->samples_s = NAN;
	r->util = util;
	r->tree_cores = job_cores;
	r->sm = r->mem_peak = r->mem_total = r->power = r->core_max = r->host_busy = NAN;
}

static void workers_results(sweep_spec *sp, sweep_plan *pl, sweep_state *st, sweep_results *R,
                            const double *step, const double *util, const double *cores)
{
	static char *cmd[] = {"train", "{workers}"};
	spec_with(sp, cmd, 2);
	assert_int_equal(sweep_var_parse(sp, "workers=1,2,4,8", false, &err), 0);
	assert_int_equal(sweep_spec_check(sp, &err), 0);
	assert_int_equal(sweep_plan_build(sp, pl, &err), 0);
	memset(st, 0, sizeof *st);
	st->ncpu = 2;
	st->free_cores = 2.0;
	*R = (sweep_results){.sp = sp, .pl = pl, .st = st, .knee_share = 0.10, .search_var = -1};
	R->res = calloc(4, sizeof *R->res);
	for (int i = 0; i < 4; i++)
		fake_result(&R->res[i], step[i], util[i], cores[i]);
	sweep_results_analyse(R);
}

/*
 * Against the baseline, a sweep says what compare says: a +0.2 % change whose
 * interval excludes zero is no meaningful change (it was once "slower"), and
 * +10 % is slower.
 */
static void test_verdict_as_compare(void **state)
{
	(void)state;
	sweep_spec sp;
	sweep_plan pl;
	sweep_state st;
	sweep_results R;
	double step[] = {0.100, 0.1002, 0.110, 0.050}, util[] = {50, 50, 50, 50},
	       cores[] = {1, 1, 1, 1};
	workers_results(&sp, &pl, &st, &R, step, util, cores);
	assert_true(R.res[1].diff_lo > 0); /* significant ... */
	assert_int_equal(R.res[1].verdict, 0);
	assert_true(R.res[1].below_min_diff); /* ... but under compare_min_diff_pct */
	assert_int_equal(R.res[2].verdict, 1);
	assert_int_equal(R.res[3].verdict, -1);
	sweep_results_free(&R);
	sweep_plan_free(&pl);
	sweep_spec_free(&sp);
}

static void test_knee_explained(void **state)
{
	(void)state;
	sweep_spec sp;
	sweep_plan pl;
	sweep_state st;
	sweep_results R;
	/* CPU-bound data loading on a host with 2 free cores: 80 ms of CPU per batch */
	double step[] = {0.080, 0.040, 0.0395, 0.0398}, util[] = {25, 50, 51, 50},
	       cores[] = {1.0, 1.95, 2.0, 2.0};
	workers_results(&sp, &pl, &st, &R, step, util, cores);
	const sweep_var_result *vr = &R.vr[0];
	assert_int_equal(vr->n, 4);
	assert_string_equal(pl.c[vr->cfg[vr->knee]].val[0], "2");
	assert_non_null(strstr(vr->why, "workers: 1 -> 2 changes step time 80.0 ms -> 40.0 ms"));
	assert_non_null(strstr(vr->why, "beyond 2"));
	assert_non_null(strstr(vr->why, "the host's 2 cores"));
	assert_non_null(strstr(vr->why, "saturated"));
	assert_int_equal(R.res[1].verdict, -1); /* faster than the baseline */
	assert_int_equal(R.res[2].verdict, -1);
	sweep_results_free(&R);
	sweep_plan_free(&pl);
	sweep_spec_free(&sp);
	/* enough workers: the GPU becomes the limit at 4 */
	double step2[] = {0.045, 0.0225, 0.015, 0.0149}, util2[] = {33, 66, 98, 99},
	       cores2[] = {0.1, 0.2, 0.3, 0.3};
	workers_results(&sp, &pl, &st, &R, step2, util2, cores2);
	vr = &R.vr[0];
	assert_string_equal(pl.c[vr->cfg[vr->knee]].val[0], "4");
	assert_false(vr->gaining);
	assert_non_null(strstr(vr->why, "the GPU is busy 98 %"));
	assert_int_equal(R.res[3].verdict, -1);
	sweep_results_free(&R);
	sweep_plan_free(&pl);
	sweep_spec_free(&sp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_one_at_a_time),
	    cmocka_unit_test(test_ranges_and_bad_lists),
	    cmocka_unit_test(test_placeholder_check),
	    cmocka_unit_test(test_substitution_quoting),
	    cmocka_unit_test(test_search),
	    cmocka_unit_test(test_memfit),
	    cmocka_unit_test(test_stats),
	    cmocka_unit_test(test_state_round_trip),
	    cmocka_unit_test(test_knee_explained),
	    cmocka_unit_test(test_verdict_as_compare),
	    cmocka_unit_test(test_long_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
