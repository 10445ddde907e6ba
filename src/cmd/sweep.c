/*
 * sweep.c - `gpuwhy sweep -o DIR --vary NAME=V1,V2 ... -- CMD {NAME}`: run a
 * command once per configuration (one variable changed at a time, or the
 * grid), each under `gpuwhy run`, optionally search the largest batch that
 * fits, and say which setting feeds the GPU best and why.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "util/opt.h"
#include "record/steps.h"
#include "sweep/plan.h"
#include "sweep/state.h"
#include "sweep/sweep.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/parse.h"
#include "util/xalloc.h"

/* "10%", "0.1": a share from 0 to 1 (exclusive). */
static bool parse_share(const char *s, double *out)
{
	char buf[32];
	size_t n = strlen(s);
	if (n == 0 || n >= sizeof buf)
		return false;
	memcpy(buf, s, n + 1);
	bool pct = buf[n - 1] == '%';
	if (pct)
		buf[n - 1] = '\0';
	double v;
	if (!gw_parse_double(buf, &v))
		return false;
	if (pct)
		v /= 100;
	*out = v;
	return v >= 0 && v < 1;
}

static int bad(const char *what, const char *hint, const char *why)
{
	return gw_error(GW_EXIT_USAGE, what, hint, "%s", _(why));
}

/* Every list of strings lives in argv or in o, so nothing here needs freeing but the vars. */
static int sw_var(const opt_def *d, const char *v, void *ctx)
{
	gw_fail err = {0};
	if (sweep_var_parse(&((sweep_opts *)ctx)->sp, v, d->name[0] == 's', &err) != 0)
		return gw_fail_print(&err);
	return 0;
}

/* Whole numbers into a long long of sweep_opts (d->target), in [d->min, d->max]. */
static int sw_ll(const opt_def *d, const char *v, void *ctx)
{
	char what[40];
	snprintf(what, sizeof what, "--%s", d->name);
	if (!gw_parse_int(v, (long long)d->min, (long long)d->max, d->target))
		return bad(what, d->hint, d->why);
	return 0;
}

static int sw_duration(const opt_def *d, const char *v, void *ctx)
{
	sweep_opts *o = ctx;
	if (!gw_parse_duration_ns(v, 1000000000LL, &o->duration_ns) || o->duration_ns <= 0)
		return bad("--duration", N_("e.g. 60s, 5m"), N_("not a duration"));
	return 0;
}

static int sw_env(const opt_def *d, const char *v, void *ctx)
{
	sweep_opts *o = ctx;
	if (!strchr(v, '=') || v[0] == '=')
		return bad("--env", N_("--env NAME=VALUE"), N_("expected NAME=VALUE"));
	if (o->sp.nenv >= SWEEP_OPTS_MAX_ENV)
		return bad("--env", NULL, N_("too many"));
	o->env[o->sp.nenv++] = (char *)v; /* a string of argv */
	return 0;
}

static int sw_share(const opt_def *d, const char *v, void *ctx)
{
	double *x = d->target;
	bool knee = d->name[0] == 'k';
	if (!parse_share(v, x) || (knee && *x <= 0))
		/* xgettext:no-c-format */
		return bad(knee ? "--knee" : "--headroom", N_("e.g. 10% or 0.1"),
		           knee ? N_("not a share above 0 and below 100 %")
		                : N_("not a share from 0 to below 100 %"));
	return 0;
}

static int sw_queue_dir(const opt_def *d, const char *v, void *ctx)
{
	sweep_opts *o = ctx;
	o->queue = true;
	o->queue_dir = v;
	return 0;
}

static int sw_queue_mem(const opt_def *d, const char *v, void *ctx)
{
	sweep_opts *o = ctx;
	uint64_t b;
	if (!gw_parse_size_bytes(v, &b))
		return bad("--queue-mem", N_("e.g. 12G, 800M"), N_("not a size"));
	o->queue = true;
	o->queue_mem = v;
	return 0;
}

static int sw_format(const opt_def *d, const char *v, void *ctx)
{
	if (strcmp(v, "text") && strcmp(v, "json"))
		return bad("--format", N_("text or json"), N_("unknown format"));
	((sweep_opts *)ctx)->json = !strcmp(v, "json");
	return 0;
}

#define SW_LL(l, t, lo, hi, h, w, hn)                                                              \
	OPT_CALL(0, l, "N", sw_ll, h, .target = (t), .min = lo, .max = hi, .why = w, .hint = hn)

/* --vary options must come before `--`; every value list was checked as it came. */
static int parse_args(int argc, char **argv, sweep_opts *o)
{
	const opt_def opts[] = {
	    OPT_STRING('o', "output", "DIR", &o->dir,
	               "where recordings, sweep.json, results.json/.txt and report.html go"),
	    OPT_CALL(0, "vary", "NAME=LIST", sw_var,
	             "values: a,b,c or a range 1..8[:STEP] or pow2:1..64"),
	    OPT_CALL(0, "search", "NAME=RANGE", sw_var,
	             "the largest value that runs without running out of memory, doubling from LO "
	             "then bisecting to STEP: pow2:LO..HI[:STEP] or LO..HI[:STEP] (STEP default "
	             "LO)"),
	    OPT_FLAG(0, "grid", &o->sp.grid, "every combination instead of one variable at a time"),
	    OPT_INT(0, "repeat", "N", &o->sp.repeat, 1, 64,
	            "runs per configuration (default 1; search values: 1)",
	            .why = N_("not a whole number from 1 to 64"), .hint = N_("1 to 64")),
	    SW_LL("steps", &o->steps, 1, 10000000,
	          "stop each run once N steps after the warm-up are timed",
	          "not a whole number from 1", "e.g. --steps 50"),
	    OPT_CALL(0, "duration", "DUR", sw_duration, "stop each run after DUR (60s, 5m)"),
	    SW_LL("warmup-steps", &o->warmup, 0, 100000,
	          "step intervals left out at the start (default 1)", "not a whole number from 0",
	          "e.g. 5"),
	    OPT_CALL(0, "env", "NAME=VALUE", sw_env,
	             "environment of each run, placeholders allowed"),
	    OPT_STRING(0, "batch-var", "NAME", &o->sp.batch_var,
	               "the variable counting samples per step (default: one named batch, "
	               "batch_size, bs): samples/s, memory model"),
	    OPT_CALL(0, "knee", "SHARE", sw_share,
	             "the knee is where the next value gains less (10%)", .target = &o->knee),
	    OPT_CALL(0, "headroom", "SHARE", sw_share,
	             "memory kept free by the predicted largest batch (10%)",
	             .target = &o->headroom),
	    OPT_DURATION(0, "interval", "DUR", &o->interval_ns, 0,
	                 "sampling interval of each run (default 200ms)", .min = 0.01, .max = 3600,
	                 .why = N_("not a duration from 10ms to 1h"), .hint = N_("e.g. 200ms, 1s")),
	    OPT_STRING(0, "step-regex", "RE", &o->step_re, "step lines, as for gpuwhy run"),
	    OPT_INT(0, "max-values", "N", &o->sp.max_values, 1, 100000,
	            "longest value list accepted (default 64)",
	            .why = N_("not a whole number from 1"), .hint = N_("e.g. 128")),
	    OPT_INT(0, "max-runs", "N", &o->sp.max_runs, 1, 1000000,
	            "most runs accepted (default 1000)", .why = N_("not a whole number from 1"),
	            .hint = N_("e.g. 2000")),
	    OPT_FLAG(0, "dry-run", &o->dry_run, "print the plan and exit"),
	    OPT_STRING(0, "resume", "DIR", &o->resume,
	               "go on with an earlier sweep: finished runs are kept"),
	    OPT_FLAG(0, "queue", &o->queue,
	             "submit each run as a queue task (configurations run side by side on "
	             "separate GPUs)"),
	    OPT_CALL(0, "queue-dir", "DIR", sw_queue_dir,
	             "the queue to submit to (implies --queue)"),
	    OPT_CALL(0, "queue-mem", "SIZE", sw_queue_mem,
	             "GPU memory reserved per task (implies --queue)"),
	    OPT_CALL(0, "format", "FMT", sw_format, "what goes to stdout: text (default) or json"),
	    OPT_END};
	const opt_cmd oc = {
	    .name = "sweep",
	    .usage = "sweep -o DIR --vary NAME=V1,V2,... [--vary ...] [OPTIONS] -- CMD {NAME} ...\n"
	             "sweep -o DIR --search NAME=pow2:LO..HI [OPTIONS] -- CMD {NAME} ...\n"
	             "sweep --resume DIR",
	    .about =
	        /* xgettext:no-c-format */
	    N_("Runs CMD once per configuration under `gpuwhy run` (recorded as\n"
	       "DIR/NAME=VALUE[,...]-rK.gpuwhy), then prints per configuration the step time\n"
	       "(mean, p50, p90, 95 % interval), throughput, GPU and host use and the top\n"
	       "finding, the best configuration, each variable's knee and why. {NAME} in CMD\n"
	       "and in --env values takes each value ({{ and }} are literal braces); values\n"
	       "stay single arguments (CMD runs without a shell; in `sh -c SCRIPT` they are\n"
	       "quoted). By default the first values are the baseline and one variable\n"
	       "changes at a time."),
	    .opts = opts,
	    .exits =
	        N_("0 every configuration ran, 1 one failed (out of memory in a search does not "
	           "count), 2 bad input, 3 the directory or a recording cannot be used, 130 "
	           "interrupted (resume with --resume DIR)"),
	    .max_args = -1,
	    .stop_at_arg = true,
	    .ctx = o};
	int first, rc = opt_parse(&oc, argc, argv, &first);
	if (rc)
		return rc;
	o->sp.cmd = argv + first;
	o->sp.ncmd = argc - first;
	o->sp.env = o->env;
	return 0;
}

static int check_args(sweep_opts *o)
{
	char err[600];
	if (!o->dir)
		return bad("sweep", N_("gpuwhy sweep -o DIR --vary ... -- CMD"),
		           N_("no output directory (-o DIR)"));
	if (o->steps && o->duration_ns)
		return bad("--steps", N_("give one of them"), N_("cannot be used with --duration"));
	gw_fail fail = {0};
	if (sweep_spec_check(&o->sp, &fail) != 0)
		return gw_fail_print(&fail);
	/* Compiled here as each run's recorder will, so a bad one fails before anything
	 * is created rather than in every run. */
	if (o->step_re) {
		steps_matcher *m = steps_matcher_new(o->step_re, err, sizeof err);
		if (!m)
			return gw_error(GW_EXIT_USAGE, "--step-regex",
			                N_("a POSIX extended regular expression"), "%s", err);
		steps_matcher_free(m);
	}
	return 0;
}

static void opts_init(sweep_opts *o)
{
	memset(o, 0, sizeof *o);
	sweep_spec_init(&o->sp);
	o->warmup = 1;
	o->knee = 0.10;
	o->headroom = 0.10;
	o->interval_ns = 200000000LL;
}

/* --resume DIR: the options saved in DIR/sweep.json, parsed again. */
static int resume_args(const char *dir, sweep_state *st, sweep_opts *o, int *argc, char ***argv)
{
	int rc = sweep_state_load(dir, st);
	if (rc)
		return rc;
	sweep_state_env_restore(st);
	*argc = st->nargs + 1;
	*argv = gw_xcalloc((size_t)*argc + 1, sizeof **argv);
	(*argv)[0] = "sweep";
	for (int i = 0; i < st->nargs; i++)
		(*argv)[i + 1] = st->args[i];
	opts_init(o);
	rc = parse_args(*argc, *argv, o);
	if (rc == 0) {
		o->dir = st->dir; /* the directory named now, wherever it was first */
		o->resume = dir;
		rc = check_args(o);
	}
	return rc;
}

/* The --gpus a resumed sweep ran with, restored into the environment from its
 * state file; empty there is no selection, never an empty --gpus for the runs. */
static const char *resumed_gpus(void)
{
	const char *e = getenv("GPUWHY_GPUS");
	return e && *e ? e : NULL;
}

int cmd_sweep(int argc, char **argv, const gw_global *g)
{
	sweep_opts o;
	opts_init(&o);
	int rc = parse_args(argc, argv, &o);
	if (rc) {
		sweep_spec_free(&o.sp);
		return rc < 0 ? GW_EXIT_OK : rc;
	}
	sweep_state st = {0};
	char **rargv = NULL;
	if (o.resume) {
		if (o.sp.nvars || o.dir || o.sp.ncmd) {
			sweep_spec_free(&o.sp);
			return bad(
			    "--resume", N_("gpuwhy sweep --resume DIR"),
			    N_("takes no other options: the sweep's own are in DIR/sweep.json"));
		}
		bool json = o.json;
		int rargc;
		rc = resume_args(o.resume, &st, &o, &rargc, &rargv);
		o.json = json;
	} else {
		rc = check_args(&o);
		if (rc == 0) {
			st.free_cores = NAN;
			snprintf(st.dir, sizeof st.dir, "%s", o.dir);
			st.args = gw_xcalloc((size_t)argc, sizeof *st.args);
			for (int i = 1; i < argc; i++)
				st.args[st.nargs++] = strdup(argv[i]);
		}
	}
	if (rc == 0)
		rc = sweep_drive(&o, &st, o.resume ? resumed_gpus() : g->gpus);
	sweep_state_free(&st);
	free(rargv);
	sweep_spec_free(&o.sp);
	return rc;
}
