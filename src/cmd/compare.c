/* compare.c - `gpuwhy compare`: is the candidate recording faster, and what changed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/promwin.h"
#include "util/opt.h"
#include "diagnose/diag.h"
#include "report/report.h"
#include "util/err.h"
#include "util/xalloc.h"

/* Stands for "--" among the arguments, so that opt_parse keeps its place between the sides. */
static char sides_mark[] = "\001--";

/* Where the candidates start among n arguments: after the mark, or the last one. */
static int split_sides(char **args, int n)
{
	for (int i = 0; i < n; i++)
		if (args[i] == sides_mark)
			return i;
	return -1;
}

/* What the sides are read from: recordings and logs, or windows of a Prometheus. */
typedef struct {
	const smilog_opts *src;
	const cmd_promwin *pw; /* url set: every side is a window spec */
} side_src;

static int load_one(const char *arg, const side_src *from, timeline **tl, diag_meta *m)
{
	if (!from->pw->url)
		return report_load(arg, from->src, tl, m);
	fleet_window_spec s;
	char source[1400];
	int rc = cmd_promwin_parse_side(arg, &s);
	return rc ? rc : cmd_promwin_load(from->pw, &s, tl, m, source, sizeof source);
}

/* Load n recordings; on a failure the ones loaded are freed. */
static int load_side(char **files, int n, const side_src *src, timeline **tl, diag_meta *m)
{
	for (int i = 0; i < n; i++) {
		int rc = load_one(files[i], src, &tl[i], &m[i]);
		if (rc) {
			for (int j = 0; j < i; j++) {
				tl_free(tl[j]);
				diag_meta_free(&m[j]);
			}
			return rc;
		}
	}
	return 0;
}

static void free_side(timeline **tl, diag_meta *m, int n)
{
	for (int i = 0; i < n; i++) {
		tl_free(tl[i]);
		diag_meta_free(&m[i]);
	}
}

static int compare_files(char **fa, int na, char **fb, int nb, diag_opts *o, const side_src *src,
                         bool json)
{
	timeline *ta[DIAG_CMP_MAX_RUNS], *tb[DIAG_CMP_MAX_RUNS];
	diag_meta ma[DIAG_CMP_MAX_RUNS] = {0}, mb[DIAG_CMP_MAX_RUNS] = {0};
	int rc = load_side(fa, na, src, ta, ma);
	if (rc)
		return rc;
	if ((rc = load_side(fb, nb, src, tb, mb)) != 0) {
		free_side(ta, ma, na);
		return rc;
	}
	diag_comparison cmp;
	o->localize = !json; /* JSON is for machines: English whatever the language */
	diag_compare_runs((const timeline *const *)ta, ma, na, (const timeline *const *)tb, mb, nb,
	                  o, &cmp);
	if (json) {
		compare_json(stdout, &cmp, (const char *const *)fa, na, (const char *const *)fb,
		             nb);
	} else {
		report_style st = {
		    .utf8 = report_locale_utf8(), .color = report_want_color(stdout), .opts = o};
		compare_text(stdout, &cmp, (const char *const *)fa, na, (const char *const *)fb, nb,
		             &st);
	}
	diag_comparison_free(&cmp);
	if (fflush(stdout) != 0)
		rc = gw_error(GW_EXIT_ENV, "standard output", NULL, "write failed");
	free_side(ta, ma, na);
	free_side(tb, mb, nb);
	return rc;
}

/*
 * The sides' arguments checked before anything is read: --job ID twice stands
 * for the sides job=ID job=ID (*args then points at jobside, whose strings the
 * caller frees); with --prometheus every side is a window spec, without it a
 * window spec is an error rather than a file not found.
 */
static int check_sides(const cmd_promwin *pw, char ***args, int *n, char *jobside[2])
{
	jobside[0] = jobside[1] = NULL;
	const char *opt = cmd_promwin_needs_url(pw);
	if (opt)
		return gw_error(GW_EXIT_USAGE, opt, N_("e.g. --prometheus http://prometheus:9090"),
		                "needs --prometheus URL");
	for (int i = 0; !pw->url && i < *n; i++)
		if ((*args)[i] != sides_mark && strchr((*args)[i], '=') &&
		    access((*args)[i], F_OK) != 0)
			return gw_error(GW_EXIT_USAGE, (*args)[i],
			                N_("e.g. gpuwhy compare --prometheus URL job=101 job=202"),
			                "a window needs --prometheus URL");
	if (pw->jobs.n) {
		if (pw->jobs.n != 2 || *n)
			return gw_error(
			    GW_EXIT_USAGE, "--job",
			    N_("gpuwhy compare --prometheus URL --job BASE --job CANDIDATE"),
			    "give --job twice (base, candidate) and no other side");
		for (int i = 0; i < 2; i++) {
			size_t len = strlen(pw->jobs.v[i]) + 5;
			jobside[i] = gw_xmalloc(len);
			snprintf(jobside[i], len, "job=%s", pw->jobs.v[i]);
		}
		*args = jobside;
		*n = 2;
	}
	fleet_window_spec s;
	for (int i = 0; pw->url && i < *n; i++)
		if ((*args)[i] != sides_mark && cmd_promwin_parse_side((*args)[i], &s))
			return GW_EXIT_USAGE;
	return 0;
}

int cmd_compare(int argc, char **argv, const gw_global *g)
{
	diag_opts o;
	diag_opts_default(&o);
	int fmt = OPT_FMT_TEXT;
	const char *smi_fields = NULL;
	int64_t interval_ns = 0;
	cmd_promwin pw;
	cmd_promwin_init(&pw);
	const opt_def base[] = {
	    OPT_FORMAT_TJ(&fmt),
	    OPT_CALL(0, "goal", "GOAL", report_opt_goal,
	             "passed to the diagnosis of both recordings: throughput or latency"),
	    OPT_CALL(0, "set", "N=V", report_opt_set,
	             "override a diagnosis threshold (gpuwhy report --thresholds)",
	             .hint = N_("NAME=VALUE with a name from gpuwhy report --thresholds")),
	    OPT_STRING(0, "smi-fields", "LIST", &smi_fields,
	               "for nvidia-smi CSVs written with noheader: their --query-gpu list"),
	    OPT_DURATION(0, "interval", "DUR", &interval_ns, 0,
	                 "for logs without times: the interval they were written at", .min = 0.001,
	                 .max = 86400, .why = N_("invalid interval '%s' (1ms to 1 day)")),
	    OPT_END};
	opt_def opts[sizeof base / sizeof *base + CMD_PROMWIN_ROWS];
	memcpy(opts, base, sizeof base);
	int nrows = cmd_promwin_rows(&pw, false, opts, (int)(sizeof base / sizeof *base) - 1);
	opts[nrows] = (opt_def)OPT_END;
	char about[1200];
	snprintf(
	    about, sizeof about,
	    _("Compare recordings of the same job: is the candidate faster? The mean step time\n"
	      "decides, with a 95 %% interval of the difference: over the runs' means when each\n"
	      "side has several runs (A1 A2 A3 -- B1 B2 B3), else from each run's own steps in\n"
	      "blocks that follow their autocorrelation. A change is claimed when the interval\n"
	      "excludes zero and it is at least compare_min_diff_pct (2 %% by default). Also\n"
	      "p50/p90/p99 (%d block bootstrap resamples, fixed seed), throughput, utilization,\n"
	      "SM activity, memory peak and power; the findings that went away or appeared; and\n"
	      "what changed between the recordings, with a warning when more than one did."),
	    DIAG_BOOTSTRAP_RESAMPLES);
	const opt_cmd oc = {
	    .name = "compare",
	    .usage =
	        "compare BASE CANDIDATE [--format text|json] [--goal throughput|latency]\n"
	        "               [--set NAME=VALUE]...\n"
	        "       compare BASE1 BASE2... -- CANDIDATE1 CANDIDATE2... [OPTIONS]\n"
	        "       compare --prometheus URL --job ID --job ID [OPTIONS]\n"
	        "       compare --prometheus URL WINDOW WINDOW [OPTIONS]   (WINDOW: job=ID or\n"
	        "               node=N[,gpu=I],from=T,to=T[,step=S], or since=D for from,to)",
	    .about = about,
	    .opts = opts,
	    .more =
	        N_("With --prometheus the sides are windows of a cluster's Prometheus "
	           "(dcgm-exporter's series): a job before and after a change, or a healthy and a "
	           "slow GPU. They have no step times: the verdict is on utilization, SM "
	           "activity, memory and power, and the findings. See docs/fleet.md. Exit code 0 "
	           "whatever the verdict."),
	    .max_args = -1,
	    .ctx = &o};
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			argv[i] = sides_mark;
			break;
		}
	int first, prc = opt_parse(&oc, argc, argv, &first);
	if (prc)
		return prc == OPT_HELP ? GW_EXIT_OK : prc;
	char *jobside[2];
	char **args = argv + first;
	int n = argc - first;
	int rc = check_sides(&pw, &args, &n, jobside);
	if (rc) {
		cmd_promwin_free(&pw);
		return rc;
	}
	int mark = split_sides(args, n);
	int na = mark >= 0 ? mark : 1, nb = mark >= 0 ? n - mark - 1 : n - 1;
	char **fb = mark >= 0 ? args + mark + 1 : args + 1;
	if (mark < 0 && n != 2)
		return gw_error(GW_EXIT_USAGE, "compare",
		                N_("gpuwhy compare before.gpuwhy after.gpuwhy, or A1 A2 -- B1 B2"),
		                "two recordings expected, got %d", n);
	if (na < 1 || nb < 1)
		return gw_error(GW_EXIT_USAGE, "compare", N_("gpuwhy compare A1 A2 A3 -- B1 B2 B3"),
		                "%s",
		                na < 1 ? "no base recording before --" : "no candidate after --");
	if (na > DIAG_CMP_MAX_RUNS || nb > DIAG_CMP_MAX_RUNS)
		return gw_error(GW_EXIT_USAGE, "compare", NULL,
		                "at most %d recordings a side, got %d", DIAG_CMP_MAX_RUNS,
		                na > nb ? na : nb);
	(void)g;
	smilog_opts src = {.fields = smi_fields, .interval = (double)interval_ns / 1e9};
	side_src from = {.src = &src, .pw = &pw};
	rc = compare_files(args, na, fb, nb, &o, &from, fmt == OPT_FMT_JSON);
	cmd_promwin_free(&pw);
	free(jobside[0]);
	free(jobside[1]);
	return rc;
}
