/*
 * drive.c - a whole sweep: the plan checked and printed (--dry-run) before
 * anything runs, each run recorded under `gpuwhy run` (here, or as queue
 * tasks side by side), the state saved after every change so Ctrl-C or a
 * kill loses at most the run in progress, the search for the largest value
 * that fits, then the results in DIR and on stdout.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "model/timeline.h"
#include "store/store.h"
#include "sweep/plan.h"
#include "sweep/results.h"
#include "sweep/runner.h"
#include "sweep/search.h"
#include "sweep/state.h"
#include "sweep/subst.h"
#include "sweep/sweep.h"
#include "util/err.h"
#include "util/fail.h"
#include "util/i18n.h"
#include "util/selfexe.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

static volatile int sweep_interrupted;

static void on_signal(int sig)
{
	sweep_interrupted = sig;
}

typedef struct {
	sweep_opts *o;
	sweep_state *st;
	sweep_plan pl;
	sweep_runner rn;
	char self[PATH_MAX];
	int total, finished; /* runs planned (search estimated) and finished this time */
	int earlier;         /* runs a resumed sweep had finished before */
	double t_start;      /* when this sweep (or resume) started, Unix seconds */
	int search_var;
	sweep_search srch;
	bool failed; /* a configuration outside the search failed */
} drive_ctx;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Cores not busy over half a second: what the sweep's runs can count on. */
static double free_cores(int *ncpu)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	*ncpu = n > 0 ? (int)n : 0;
	unsigned long long a[2][8] = {{0}};
	for (int k = 0; k < 2; k++) {
		FILE *f = fopen("/proc/stat", "r");
		if (!f)
			return NAN;
		int got =
		    fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &a[k][0], &a[k][1],
		           &a[k][2], &a[k][3], &a[k][4], &a[k][5], &a[k][6], &a[k][7]);
		fclose(f);
		if (got < 5)
			return NAN;
		if (k == 0)
			nanosleep(&(struct timespec){0, 500000000L}, NULL);
	}
	double tot = 0, idle = 0;
	for (int i = 0; i < 8; i++)
		tot += (double)(a[1][i] - a[0][i]);
	idle = (double)(a[1][3] - a[0][3]) + (double)(a[1][4] - a[0][4]);
	return tot > 0 && *ncpu > 0 ? *ncpu * idle / tot : NAN;
}

static int mkdir_p(const char *dir)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s", dir);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST)
			return -1;
		*s = '/';
	}
	return mkdir(p, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

static void run_paths(const drive_ctx *cx, const sweep_config *c, int rep, char *file, size_t n,
                      char *log, size_t ln)
{
	snprintf(file, n, "%s/%s-r%d.gpuwhy", cx->st->dir, c->file, rep);
	if (log)
		snprintf(log, ln, "%s/%s-r%d.log", cx->st->dir, c->file, rep);
}

static void print_cmd(FILE *o, char **argv, char **env)
{
	char q[4096];
	for (char **e = env; e && *e; e++) {
		sweep_shell_quote(*e, q, sizeof q);
		fprintf(o, "%s ", q);
	}
	for (char **a = argv; *a; a++) {
		sweep_shell_quote(*a, q, sizeof q);
		fprintf(o, "%s%s", a == argv ? "" : " ", q);
	}
	fputc('\n', o);
}

/* Search runs: doubling to HI, then bisecting to STEP. */
static int search_estimate(const sweep_var *v)
{
	int n = 1;
	for (long long x = v->lo; x < v->hi; x *= 2)
		n++;
	for (long long gap = v->hi - v->lo; gap > v->step; gap /= 2)
		n++;
	return n;
}

static int dry_run(drive_ctx *cx)
{
	sweep_opts *o = cx->o;
	char cfgs[96], reps[96];
	snprintf(cfgs, sizeof cfgs, P_("%d configuration", "%d configurations", cx->pl.n),
	         cx->pl.n);
	snprintf(reps, sizeof reps, P_("%d repeat", "%d repeats", o->sp.repeat), o->sp.repeat);
	/* TRANSLATORS: "gpuwhy sweep plan: 4 configurations x 2 repeats into DIR". */
	printf(_("gpuwhy sweep plan: %s x %s into %s\n"), cfgs, reps, o->dir);
	for (int i = 0; i < cx->pl.n; i++) {
		char **argv = sweep_argv(&o->sp, &cx->pl.c[i], NULL);
		char **env = sweep_envv(&o->sp, &cx->pl.c[i], NULL);
		for (int k = 1; k <= o->sp.repeat; k++) {
			char file[PATH_MAX];
			run_paths(cx, &cx->pl.c[i], k, file, sizeof file, NULL, 0);
			printf("  %-40s ", file);
			print_cmd(stdout, argv, env);
		}
		sweep_strv_free(argv);
		sweep_strv_free(env);
	}
	if (cx->search_var >= 0) {
		const sweep_var *v = &o->sp.vars[cx->search_var];
		printf(_("then search %s from %lld to %lld (doubling, then bisecting to %lld; "
		         "about %d "
		         "runs, one each)\n"),
		       v->name, v->lo, v->hi, v->step, search_estimate(v));
	}
	if (o->steps)
		printf(_("each run stops once %lld steps after %lld warm-up steps are timed\n"),
		       o->steps, o->warmup);
	if (o->duration_ns)
		printf(_("each run stops after %.0f s\n"), o->duration_ns / 1e9);
	return GW_EXIT_OK;
}

static bool recording_has_oom(const char *file)
{
	timeline *tl;
	gw_fail err;
	if (store_read_timeline(file, &tl, &err) != 0) {
		gw_fail_print(&err);
		return false;
	}
	bool oom = false;
	for (int i = 0; i < tl->nevents && !oom; i++)
		oom = !strcmp(tl->events[i].kind, TL_EV_OOM);
	tl_free(tl);
	return oom;
}

static double recording_step_ms(const char *file, int warmup)
{
	timeline *tl;
	gw_fail err;
	if (store_read_timeline(file, &tl, &err) != 0) {
		gw_fail_print(&err);
		return NAN;
	}
	double *d = NULL;
	int n = tl_step_durations(tl, &d);
	int skip = warmup < n ? warmup : n;
	double s = 0;
	for (int i = skip; i < n; i++)
		s += d[i];
	free(d);
	tl_free(tl);
	return n > skip ? 1000 * s / (n - skip) : NAN;
}

static void classify(sweep_run *r, int code)
{
	r->exit_code = code;
	r->ended = now_s();
	if (code == 0)
		r->status = SWEEP_DONE;
	else if (sweep_interrupted || code == 130 || code == -2)
		r->status = SWEEP_INTERRUPTED;
	else
		r->status = recording_has_oom(r->file) ? SWEEP_OOM : SWEEP_FAILED;
	if (r->status == SWEEP_INTERRUPTED)
		r->exit_code = code >= 0 ? code : -1;
}

static void progress(drive_ctx *cx, const sweep_run *r)
{
	cx->finished++;
	double ms = r->status == SWEEP_DONE ? recording_step_ms(r->file, (int)cx->o->warmup) : NAN;
	int at = cx->earlier + cx->finished;
	if (at > cx->total)
		cx->total = at;
	int left = cx->total - at;
	/* Wall time per finished run so far: right for runs one by one and side by side. */
	double eta = left > 0 ? (now_s() - cx->t_start) / cx->finished * left : 0;
	fprintf(stderr, "gpuwhy sweep: [%d/%d] %s r%d: %s", at, cx->total, r->config, r->rep,
	        _(sweep_status_name(r->status)));
	if (r->status != SWEEP_DONE && r->exit_code >= 0)
		fprintf(stderr, _(" (exit %d)"), r->exit_code);
	if (!isnan(ms))
		fprintf(stderr, _(", %.1f ms/step"), ms);
	fprintf(stderr, _(" in %.1f s"), r->ended - r->started);
	if (left > 0)
		fprintf(stderr, _("; about %.0f s left"), eta);
	fputc('\n', stderr);
}

/* A run that needs (re)doing: never run, interrupted, or running when the sweep died. */
static bool needs_run(const sweep_run *r)
{
	return r->status == SWEEP_PENDING || r->status == SWEEP_INTERRUPTED ||
	       (r->status == SWEEP_RUNNING && r->queue_id == 0);
}

static int build_cmd(drive_ctx *cx, const sweep_config *c, const char *file, char ***run_argv,
                     char ***env)
{
	gw_fail err = {0};
	char **argv = sweep_argv(&cx->o->sp, c, &err);
	*env = sweep_envv(&cx->o->sp, c, &err);
	if (!argv || !*env) {
		sweep_strv_free(argv);
		sweep_strv_free(*env);
		return gw_fail_print(&err);
	}
	*run_argv = sweep_run_argv(&cx->rn, file, argv);
	sweep_strv_free(argv);
	return 0;
}

/* Run one configuration's repeat here. Returns its run (state saved), NULL on an error. */
static sweep_run *run_here(drive_ctx *cx, const sweep_config *c, int rep)
{
	char file[PATH_MAX], log[PATH_MAX];
	run_paths(cx, c, rep, file, sizeof file, log, sizeof log);
	sweep_run *r = sweep_state_add(cx->st, c->name, rep, file);
	if (!needs_run(r))
		return r;
	char **argv, **env;
	if (build_cmd(cx, c, file, &argv, &env) != 0)
		return NULL;
	r->status = SWEEP_RUNNING;
	r->started = now_s();
	r->queue_id = 0;
	if (sweep_state_save(cx->st) != 0) {
		sweep_strv_free(argv);
		sweep_strv_free(env);
		return NULL;
	}
	int code = sweep_run_local(&cx->rn, argv, env, log, &sweep_interrupted);
	sweep_strv_free(argv);
	sweep_strv_free(env);
	classify(r, code);
	if (sweep_state_save(cx->st) != 0)
		return NULL;
	progress(cx, r);
	return r;
}

static int submit(drive_ctx *cx, const sweep_config *c, int rep, sweep_run **out)
{
	char file[PATH_MAX], name[600];
	run_paths(cx, c, rep, file, sizeof file, NULL, 0);
	sweep_run *r = *out = sweep_state_add(cx->st, c->name, rep, file);
	if (!needs_run(r))
		return 0;
	char **argv, **env;
	if (build_cmd(cx, c, file, &argv, &env) != 0)
		return GW_EXIT_USAGE;
	snprintf(name, sizeof name, "sweep %s r%d", c->name, rep);
	long long id = sweep_queue_submit(&cx->rn, argv, env, name);
	sweep_strv_free(argv);
	sweep_strv_free(env);
	if (id < 0)
		return GW_EXIT_ENV;
	r->queue_id = id;
	r->status = SWEEP_RUNNING;
	r->started = now_s();
	return sweep_state_save(cx->st);
}

static int wait_queued(drive_ctx *cx, sweep_run *r)
{
	if (r->status != SWEEP_RUNNING || r->queue_id <= 0)
		return 0;
	int code = sweep_queue_wait(&cx->rn, r->queue_id, &sweep_interrupted);
	if (code == -2) {
		sweep_queue_cancel(&cx->rn, r->queue_id);
		r->status = SWEEP_INTERRUPTED;
		r->ended = now_s();
		return sweep_state_save(cx->st);
	}
	classify(r, code);
	int rc = sweep_state_save(cx->st);
	progress(cx, r);
	return rc;
}

static void note_failure(drive_ctx *cx, const sweep_run *r)
{
	if (r && (r->status == SWEEP_FAILED || r->status == SWEEP_OOM))
		cx->failed = true;
}

static int run_plan_queue(drive_ctx *cx)
{
	int n = cx->pl.n * cx->o->sp.repeat, rc = 0;
	sweep_run **runs = gw_xcalloc((size_t)n + 1, sizeof *runs);
	for (int i = 0; i < n && !rc && !sweep_interrupted; i++)
		rc =
		    submit(cx, &cx->pl.c[i / cx->o->sp.repeat], i % cx->o->sp.repeat + 1, &runs[i]);
	for (int i = 0; i < n && !rc; i++) {
		if (!runs[i])
			continue;
		rc = wait_queued(cx, runs[i]);
		note_failure(cx, runs[i]);
	}
	free(runs);
	return rc;
}

static int run_plan(drive_ctx *cx)
{
	if (cx->rn.queue_dir)
		return run_plan_queue(cx);
	for (int i = 0; i < cx->pl.n && !sweep_interrupted; i++)
		for (int k = 1; k <= cx->o->sp.repeat && !sweep_interrupted; k++) {
			sweep_run *r = run_here(cx, &cx->pl.c[i], k);
			if (!r)
				return GW_EXIT_ENV;
			note_failure(cx, r);
		}
	return 0;
}

/* One search value: run (or reuse) it once; fits when it ended well. */
static int search_step(drive_ctx *cx, long long value, bool *fits)
{
	char b[32];
	snprintf(b, sizeof b, "%lld", value);
	int ci = sweep_plan_add(&cx->pl, &cx->o->sp, cx->search_var, b);
	const sweep_config *c = &cx->pl.c[ci];
	sweep_run *r;
	if (cx->rn.queue_dir) {
		int rc = submit(cx, c, 1, &r);
		if (!rc)
			rc = wait_queued(cx, r);
		if (rc)
			return rc;
	} else if (!(r = run_here(cx, c, 1))) {
		return GW_EXIT_ENV;
	}
	if (r->status == SWEEP_FAILED)
		fprintf(stderr,
		        _("gpuwhy sweep: %s failed without running out of memory (exit %d); "
		          "taken as not fitting (see its log)\n"),
		        c->name, r->exit_code);
	*fits = r->status == SWEEP_DONE;
	return r->status == SWEEP_INTERRUPTED ? -1 : 0;
}

static int run_search(drive_ctx *cx)
{
	if (cx->search_var < 0)
		return 0;
	const sweep_var *v = &cx->o->sp.vars[cx->search_var];
	sweep_search_init(&cx->srch, v->lo, v->hi, v->step);
	long long x;
	while ((x = sweep_search_next(&cx->srch)) >= 0 && !sweep_interrupted) {
		bool fits;
		int rc = search_step(cx, x, &fits);
		if (rc < 0)
			return 0;
		if (rc)
			return rc;
		sweep_search_report(&cx->srch, x, fits);
	}
	return 0;
}

static int write_file(const char *dir, const char *name, const sweep_results *R,
                      void (*fn)(FILE *, const sweep_results *))
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (!f)
		return gw_error(GW_EXIT_ENV, path, NULL, "cannot write: %s", strerror(errno));
	fn(f, R);
	if (fclose(f) != 0)
		return gw_error(GW_EXIT_ENV, path, NULL, "cannot write: %s", strerror(errno));
	return 0;
}

static int finish(drive_ctx *cx)
{
	sweep_results R = {.sp = &cx->o->sp,
	                   .pl = &cx->pl,
	                   .st = cx->st,
	                   .knee_share = cx->o->knee,
	                   .headroom = cx->o->headroom,
	                   .warmup = (int)cx->o->warmup,
	                   .search_var = cx->search_var,
	                   .search_good = cx->search_var >= 0 ? cx->srch.good : -1,
	                   .search_bad = cx->search_var >= 0 ? cx->srch.bad : -1,
	                   .search_step = cx->search_var >= 0 ? cx->srch.step : 0};
	sweep_results_compute(&R);
	int rc = write_file(cx->st->dir, "results.json", &R, sweep_render_json);
	if (!rc)
		rc = write_file(cx->st->dir, "results.txt", &R, sweep_render_text);
	if (!rc)
		rc = write_file(cx->st->dir, "report.html", &R, sweep_render_html);
	if (cx->o->json)
		sweep_render_json(stdout, &R);
	else
		sweep_render_text(stdout, &R);
	if (!cx->o->json)
		printf(_("files: %s/results.txt, results.json, report.html\n"), cx->st->dir);
	sweep_results_free(&R);
	return rc;
}

static void setup_runner(drive_ctx *cx, const char *gpus)
{
	sweep_opts *o = cx->o;
	const char *self = gw_self_exe();
	snprintf(cx->self, sizeof cx->self, "%s", self ? self : "");
	cx->rn = (sweep_runner){.self = cx->self,
	                        .gpus = gpus,
	                        .interval_ns = o->interval_ns,
	                        .stop_ns = o->duration_ns,
	                        .step_re = o->step_re,
	                        .queue_dir = o->queue ? (o->queue_dir ? o->queue_dir : "") : NULL,
	                        .queue_mem = o->queue_mem};
	/* N intervals after K warm-up ones need K + N + 1 step lines. */
	if (o->steps)
		cx->rn.stop_steps = o->warmup + o->steps + 1;
}

static int prepare(drive_ctx *cx)
{
	gw_fail err = {0};
	sweep_opts *o = cx->o;
	if (sweep_plan_build(&o->sp, &cx->pl, &err) != 0)
		return gw_fail_print(&err);
	cx->search_var = -1;
	for (int i = 0; i < o->sp.nvars; i++)
		if (o->sp.vars[i].search)
			cx->search_var = i;
	cx->total = cx->pl.n * o->sp.repeat;
	if (cx->search_var >= 0)
		cx->total += search_estimate(&o->sp.vars[cx->search_var]);
	if (cx->total > o->sp.max_runs)
		return gw_error(GW_EXIT_USAGE, "sweep", N_("a narrower range, or --max-runs"),
		                "about %d runs planned, more than %d", cx->total, o->sp.max_runs);
	/* Every configuration's command is built once now, so a bad one fails before any runs. */
	for (int i = 0; i < cx->pl.n; i++) {
		char **a = sweep_argv(&o->sp, &cx->pl.c[i], &err);
		char **e = a ? sweep_envv(&o->sp, &cx->pl.c[i], &err) : NULL;
		sweep_strv_free(a);
		sweep_strv_free(e);
		if (!e)
			return gw_fail_print(&err);
	}
	return 0;
}

static int open_dir(drive_ctx *cx)
{
	const char *dir = cx->st->dir;
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/sweep.json", dir);
	if (!cx->o->resume && access(path, F_OK) == 0)
		return gw_error(GW_EXIT_USAGE, dir, N_("gpuwhy sweep --resume DIR goes on with it"),
		                "holds a sweep already");
	if (mkdir_p(dir) != 0)
		return gw_error(GW_EXIT_ENV, dir, N_("check the path and its permissions"),
		                "cannot create: %s", strerror(errno));
	if (!cx->o->resume) {
		cx->st->free_cores = free_cores(&cx->st->ncpu);
		sweep_state_env_save(cx->st);
	}
	for (int i = 0; i < cx->st->n; i++)
		cx->earlier += !needs_run(&cx->st->r[i]) && cx->st->r[i].status != SWEEP_RUNNING;
	return sweep_state_save(cx->st);
}

int sweep_drive(sweep_opts *o, sweep_state *st, const char *gpus)
{
	drive_ctx cx = {.o = o, .st = st, .t_start = now_s()};
	int rc = prepare(&cx);
	setup_runner(&cx, gpus);
	if (!rc && o->dry_run)
		rc = dry_run(&cx);
	else if (!rc && !(rc = open_dir(&cx))) {
		struct sigaction sa = {.sa_handler = on_signal};
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		signal(SIGPIPE, SIG_IGN);
		rc = run_plan(&cx);
		if (!rc && !sweep_interrupted)
			rc = run_search(&cx);
		if (!rc)
			rc = finish(&cx);
		if (!rc && sweep_interrupted) {
			fprintf(stderr,
			        _("gpuwhy sweep: interrupted; gpuwhy sweep --resume %s goes on\n"),
			        st->dir);
			rc = 130;
		} else if (!rc && cx.failed) {
			rc = GW_EXIT_PROBLEMS;
		}
	}
	sweep_plan_free(&cx.pl);
	return rc;
}
