/*
 * sweep.c - `gpuwhy sweep -o DIR --vary NAME=V1,V2 ... -- CMD {NAME}`: run a
 * command once per configuration (one variable changed at a time, or the
 * grid), each under `gpuwhy run`, optionally search the largest batch that
 * fits, and say which setting feeds the GPU best and why.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "sweep/sweep.h"
#include "util/err.h"
#include "util/parse.h"
#include "util/xalloc.h"

static void usage(FILE *out)
{
	fputs("usage: gpuwhy sweep -o DIR --vary NAME=V1,V2,... [--vary ...] [OPTIONS] -- CMD "
	      "{NAME} ...\n"
	      "       gpuwhy sweep -o DIR --search NAME=pow2:LO..HI [OPTIONS] -- CMD {NAME} ...\n"
	      "       gpuwhy sweep --resume DIR\n"
	      "\n"
	      "Runs CMD once per configuration under `gpuwhy run` (recorded as\n"
	      "DIR/NAME=VALUE[,...]-rK.gpuwhy), then prints per configuration the step time\n"
	      "(mean, p50, p90, 95 % interval), throughput, GPU and host use and the top\n"
	      "finding, the best configuration, each variable's knee and why. {NAME} in CMD\n"
	      "and in --env values takes each value ({{ and }} are literal braces); values\n"
	      "stay single arguments (CMD runs without a shell; in `sh -c SCRIPT` they are\n"
	      "quoted). By default the first values are the baseline and one variable\n"
	      "changes at a time.\n"
	      "\n"
	      "  -o, --output DIR      where recordings, sweep.json, results.json/.txt and\n"
	      "                        report.html go\n"
	      "  --vary NAME=LIST      values: a,b,c or a range 1..8[:STEP] or pow2:1..64\n"
	      "  --search NAME=RANGE   the largest value that runs without running out of\n"
	      "                        memory, doubling from LO then bisecting to STEP:\n"
	      "                        pow2:LO..HI[:STEP] or LO..HI[:STEP] (STEP default LO)\n"
	      "  --grid                every combination instead of one variable at a time\n"
	      "  --repeat N            runs per configuration (default 1; search values: 1)\n"
	      "  --steps N             stop each run once N steps after the warm-up are timed\n"
	      "  --duration DUR        stop each run after DUR (60s, 5m)\n"
	      "  --warmup-steps K      step intervals left out at the start (default 1)\n"
	      "  --env NAME=VALUE      environment of each run, placeholders allowed\n"
	      "  --batch-var NAME      the variable counting samples per step (default: one\n"
	      "                        named batch, batch_size, bs): samples/s, memory model\n"
	      "  --knee SHARE          the knee is where the next value gains less (10%)\n"
	      "  --headroom SHARE      memory kept free by the predicted largest batch (10%)\n"
	      "  --interval DUR        sampling interval of each run (default 200ms)\n"
	      "  --step-regex RE       step lines, as for gpuwhy run\n"
	      "  --max-values N        longest value list accepted (default 64)\n"
	      "  --max-runs N          most runs accepted (default 1000)\n"
	      "  --dry-run             print the plan and exit\n"
	      "  --resume DIR          go on with an earlier sweep: finished runs are kept\n"
	      "  --queue               submit each run as a queue task (configurations run\n"
	      "                        side by side on separate GPUs); --queue-dir DIR, and\n"
	      "                        --queue-mem SIZE reserves GPU memory per task\n"
	      "  --format text|json    what goes to stdout (default text)\n"
	      "\n"
	      "Exit codes: 0 every configuration ran, 1 one failed (out of memory in a\n"
	      "search does not count), 2 bad input, 3 the directory or a recording cannot be\n"
	      "used, 130 interrupted (resume with --resume DIR).\n",
	      out);
}

enum {
	O_VARY = 1000,
	O_SEARCH,
	O_GRID,
	O_REPEAT,
	O_STEPS,
	O_DURATION,
	O_WARMUP,
	O_ENV,
	O_BATCHVAR,
	O_KNEE,
	O_HEADROOM,
	O_INTERVAL,
	O_STEPRE,
	O_MAXVAL,
	O_MAXRUNS,
	O_DRY,
	O_RESUME,
	O_QUEUE,
	O_QUEUEDIR,
	O_QUEUEMEM,
	O_FORMAT,
};

static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                     {"vary", required_argument, NULL, O_VARY},
                                     {"search", required_argument, NULL, O_SEARCH},
                                     {"grid", no_argument, NULL, O_GRID},
                                     {"repeat", required_argument, NULL, O_REPEAT},
                                     {"steps", required_argument, NULL, O_STEPS},
                                     {"duration", required_argument, NULL, O_DURATION},
                                     {"warmup-steps", required_argument, NULL, O_WARMUP},
                                     {"env", required_argument, NULL, O_ENV},
                                     {"batch-var", required_argument, NULL, O_BATCHVAR},
                                     {"knee", required_argument, NULL, O_KNEE},
                                     {"headroom", required_argument, NULL, O_HEADROOM},
                                     {"interval", required_argument, NULL, O_INTERVAL},
                                     {"step-regex", required_argument, NULL, O_STEPRE},
                                     {"max-values", required_argument, NULL, O_MAXVAL},
                                     {"max-runs", required_argument, NULL, O_MAXRUNS},
                                     {"dry-run", no_argument, NULL, O_DRY},
                                     {"resume", required_argument, NULL, O_RESUME},
                                     {"queue", no_argument, NULL, O_QUEUE},
                                     {"queue-dir", required_argument, NULL, O_QUEUEDIR},
                                     {"queue-mem", required_argument, NULL, O_QUEUEMEM},
                                     {"format", required_argument, NULL, O_FORMAT},
                                     {"help", no_argument, NULL, 'h'},
                                     {NULL, 0, NULL, 0}};

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
	return gw_error(GW_EXIT_USAGE, what, hint, "%s", why);
}

/* Every list of strings lives in argv or in o, so nothing here needs freeing but the vars. */
static int parse_one(int ch, sweep_opts *o, char *err, size_t errlen)
{
	long long v;
	switch (ch) {
	case 'o':
		o->dir = optarg;
		return 0;
	case O_VARY:
	case O_SEARCH:
		if (sweep_var_parse(&o->sp, optarg, ch == O_SEARCH, err, errlen) != 0)
			return gw_error(GW_EXIT_USAGE, "sweep", "see gpuwhy sweep --help", "%s",
			                err);
		return 0;
	case O_GRID:
		o->sp.grid = true;
		return 0;
	case O_REPEAT:
		if (!gw_parse_int(optarg, 1, 64, &v))
			return bad("--repeat", "1 to 64", "not a whole number from 1 to 64");
		o->sp.repeat = (int)v;
		return 0;
	case O_STEPS:
		if (!gw_parse_int(optarg, 1, 10000000, &o->steps))
			return bad("--steps", "e.g. --steps 50", "not a whole number from 1");
		return 0;
	case O_DURATION:
		if (!gw_parse_duration_ns(optarg, 1000000000LL, &o->duration_ns) ||
		    o->duration_ns <= 0)
			return bad("--duration", "e.g. 60s, 5m", "not a duration");
		return 0;
	case O_WARMUP:
		if (!gw_parse_int(optarg, 0, 100000, &o->warmup))
			return bad("--warmup-steps", "e.g. 5", "not a whole number from 0");
		return 0;
	case O_ENV:
		if (!strchr(optarg, '=') || optarg[0] == '=')
			return bad("--env", "--env NAME=VALUE", "expected NAME=VALUE");
		if (o->sp.nenv >= SWEEP_OPTS_MAX_ENV)
			return bad("--env", NULL, "too many");
		o->env[o->sp.nenv++] = optarg;
		return 0;
	case O_BATCHVAR:
		o->sp.batch_var = optarg;
		return 0;
	case O_KNEE:
		if (!parse_share(optarg, &o->knee) || o->knee <= 0)
			return bad("--knee", "e.g. 10% or 0.1",
			           "not a share above 0 and below 100 %");
		return 0;
	case O_HEADROOM:
		if (!parse_share(optarg, &o->headroom))
			return bad("--headroom", "e.g. 10% or 0.1",
			           "not a share from 0 to below 100 %");
		return 0;
	case O_INTERVAL:
		if (!gw_parse_duration_ns(optarg, 1000000000LL, &o->interval_ns) ||
		    o->interval_ns < 10000000LL || o->interval_ns > 3600000000000LL)
			return bad("--interval", "e.g. 200ms, 1s",
			           "not a duration from 10ms to 1h");
		return 0;
	case O_STEPRE:
		o->step_re = optarg;
		return 0;
	case O_MAXVAL:
		if (!gw_parse_int(optarg, 1, 100000, &v))
			return bad("--max-values", "e.g. 128", "not a whole number from 1");
		o->sp.max_values = (int)v;
		return 0;
	case O_MAXRUNS:
		if (!gw_parse_int(optarg, 1, 1000000, &v))
			return bad("--max-runs", "e.g. 2000", "not a whole number from 1");
		o->sp.max_runs = (int)v;
		return 0;
	case O_DRY:
		o->dry_run = true;
		return 0;
	case O_RESUME:
		o->resume = optarg;
		return 0;
	case O_QUEUE:
		o->queue = true;
		return 0;
	case O_QUEUEDIR:
		o->queue = true;
		o->queue_dir = optarg;
		return 0;
	case O_QUEUEMEM: {
		uint64_t b;
		if (!gw_parse_size_bytes(optarg, &b))
			return bad("--queue-mem", "e.g. 12G, 800M", "not a size");
		o->queue = true;
		o->queue_mem = optarg;
		return 0;
	}
	case O_FORMAT:
		if (strcmp(optarg, "text") && strcmp(optarg, "json"))
			return bad("--format", "text or json", "unknown format");
		o->json = !strcmp(optarg, "json");
		return 0;
	case 'h':
		usage(stdout);
		return -1;
	default:
		usage(stderr);
		return GW_EXIT_USAGE;
	}
}

/* --vary options must come before `--`; every value list was checked as it came. */
static int parse_args(int argc, char **argv, sweep_opts *o)
{
	char err[512];
	int ch;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "+o:h", opts, NULL)) != -1) {
		int rc = parse_one(ch, o, err, sizeof err);
		if (rc)
			return rc;
	}
	o->sp.cmd = argv + optind;
	o->sp.ncmd = argc - optind;
	o->sp.env = o->env;
	return 0;
}

static int check_args(sweep_opts *o)
{
	char err[600];
	if (!o->dir)
		return bad("sweep", "gpuwhy sweep -o DIR --vary ... -- CMD",
		           "no output directory (-o DIR)");
	if (o->steps && o->duration_ns)
		return bad("--steps", "give one of them", "cannot be used with --duration");
	if (sweep_spec_check(&o->sp, err, sizeof err) != 0)
		return gw_error(GW_EXIT_USAGE, "sweep", "see gpuwhy sweep --help", "%s", err);
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
			return bad("--resume", "gpuwhy sweep --resume DIR",
			           "takes no other options: the sweep's own are in DIR/sweep.json");
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
		rc = sweep_drive(&o, &st, o.resume ? getenv("GPUWHY_GPUS") : g->gpus);
	sweep_state_free(&st);
	free(rargv);
	sweep_spec_free(&o.sp);
	return rc;
}
