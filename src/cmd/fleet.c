/*
 * fleet.c - `gpuwhy fleet`: why every GPU of a cluster idles, from the
 * Prometheus it already runs (dcgm-exporter's or gpuwhy exporter's series).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "fleet/fleet.h"
#include "fleet/window.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/opt.h"
#include "util/parse.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

typedef struct {
	const char *url, *from, *to, *match, *out, *bearer, *cacert, *job;
	int64_t since_ms, step_ms, timeout_ms, window_ms;
	int retries, format, by, parallel, csv;
	bool timings;
} fleet_args;

static const char *const by_choices[] = {"node", "gpu", "job", "user", "namespace", "pod", NULL};
enum { FMT_TEXT, FMT_JSON, FMT_HTML, FMT_CSV };
static const char *const formats[] = {"text", "json", "html", "csv", NULL};
static const char *const csv_tables[] = {"states", "findings", "exporter", NULL};

/* Epoch seconds, or RFC 3339 UTC (2026-01-02T03:04:05Z); false on anything else. */
static bool parse_time(const char *s, double *out)
{
	if (gw_parse_double(s, out))
		return *out >= 0;
	struct tm tm = {0};
	const char *end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!end || (strcmp(end, "Z") && *end))
		return false;
	*out = (double)timegm(&tm);
	return true;
}

static int fleet_parse(int argc, char **argv, fleet_args *a)
{
	const opt_def opts[] = {
	    OPT_STRING(0, "prometheus", "URL", &a->url,
	               "the Prometheus (or Thanos, Mimir, VictoriaMetrics) base URL, e.g. "
	               "http://prometheus:9090"),
	    OPT_STRING(0, "from", "TIME", &a->from, "start: epoch seconds or 2026-01-02T03:04:05Z"),
	    OPT_STRING(0, "to", "TIME", &a->to, "end (default now)"),
	    OPT_DURATION(0, "since", "DURATION", &a->since_ms, 1000000,
	                 "the last DURATION before --to (default 24h)", .min = 1, .max = 3.2e7,
	                 .why = N_("invalid duration '%s'"), .hint = N_("e.g. --since 24h")),
	    OPT_DURATION(0, "step", "DURATION", &a->step_ms, 1000000,
	                 "resolution of the range queries (default 60s)", .min = 1, .max = 86400,
	                 .why = N_("invalid step '%s'"),
	                 .hint = N_("from 1s to 1d, e.g. --step 15s")),
	    OPT_STRING(0, "match", "SELECTOR", &a->match,
	               "label matchers every query carries, e.g. '{Hostname=~\"gpu-a.*\"}'"),
	    OPT_ENUM(0, "by", "node|gpu|job|user|namespace|pod", &a->by, by_choices,
	             "group GPU-hours by node (default), GPU, job (hpc_job, else pod label), the "
	             "job's user (Slurm's, else a user label), or Kubernetes namespace or pod "
	             "(dcgm-exporter's namespace and pod labels)"),
	    OPT_STRING(0, "job", "ID", &a->job,
	               "only this job: its nodes, GPUs and time from Slurm (sacct, scontrol), else "
	               "its hpc_job label"),
	    OPT_DURATION(0, "window", "DURATION", &a->window_ms, 1000000,
	                 "each node is diagnosed per window of this length (default 1h)", .min = 60,
	                 .max = 604800, .why = N_("invalid window '%s'"),
	                 .hint = N_("from 1m to 7d, e.g. --window 1h")),
	    OPT_DURATION(0, "timeout", "DURATION", &a->timeout_ms, 1000000,
	                 "per request (default 30s)", .min = 0.1, .max = 3600,
	                 .why = N_("invalid timeout '%s'"), .hint = N_("e.g. --timeout 30s")),
	    OPT_INT(0, "retries", "N", &a->retries, 0, 10,
	            "tries again after a connection failure, timeout or 5xx (default 2)",
	            .why = N_("bad value '%s'"), .hint = N_("a number from 0 to 10")),
	    OPT_INT(0, "parallel", "N", &a->parallel, 1, 32,
	            "range queries in flight at once (default 4)", .why = N_("bad value '%s'"),
	            .hint = N_("a number from 1 to 32")),
	    OPT_FLAG(0, "timings", &a->timings,
	             "say on stderr how long fetching, diagnosis and the report took"),
	    OPT_STRING(0, "bearer-token-file", "FILE", &a->bearer,
	               "send the token in FILE as Authorization: Bearer"),
	    OPT_STRING(0, "cacert", "FILE", &a->cacert, "CA bundle to verify an https Prometheus"),
	    OPT_ENUM(0, "format", "FMT", &a->format, formats,
	             "text (default), json, html (one self-contained page with a heat map) or csv "
	             "(hours per group and state)"),
	    OPT_ENUM(0, "csv", "states|findings|exporter", &a->csv, csv_tables,
	             "the table --format csv writes (and --csv alone implies it): GPU-hours per "
	             "group and state (default), fleet's findings, or the findings gpuwhy "
	             "exporters reported themselves"),
	    OPT_STRING('o', "output", "FILE", &a->out, "write the report to FILE"),
	    OPT_END};
	const opt_cmd oc = {
	    .name = "fleet",
	    .usage = "fleet --prometheus URL [--from T --to T | --since 24h] [--step S] "
	             "[--match SELECTOR] [--job ID] [--by node|gpu|job|user|namespace|pod] "
	             "[--format text|json|html|csv] [--csv states|findings|exporter] [-o FILE]",
	    .about =
	        N_("Says why every GPU of a cluster idles, from the Prometheus it already runs:\n"
	           "dcgm-exporter's (or gpuwhy exporter's) series become one timeline per node\n"
	           "and go through the same diagnosis rules as a recording. Reports GPU-hours\n"
	           "per state, the findings ranked by GPU-hours lost, each with its PromQL."),
	    .opts = opts,
	    .more =
	        N_("See docs/fleet.md. Rules whose series are not in Prometheus are listed as not "
	           "checked."),
	    .exits = N_("0 nothing wrong, 1 findings, 2 usage error, 3 Prometheus unreachable, "
	                "an HTTP or query error, or no matching series")};
	int first;
	int rc = opt_parse(&oc, argc, argv, &first);
	if (rc == 0 && first < argc)
		return opt_unexpected(&oc, argv[first]);
	return rc;
}

static int fleet_range(const fleet_args *a, prom_fleet_query *q)
{
	double now = (double)time(NULL);
	q->to = now;
	if (a->to && !parse_time(a->to, &q->to))
		return gw_error(GW_EXIT_USAGE, "--to", N_("epoch seconds or 2026-01-02T03:04:05Z"),
		                "invalid time '%s'", a->to);
	q->from = q->to - (a->since_ms ? a->since_ms / 1000.0 : 86400);
	if (a->from && !parse_time(a->from, &q->from))
		return gw_error(GW_EXIT_USAGE, "--from",
		                N_("epoch seconds or 2026-01-02T03:04:05Z"), "invalid time '%s'",
		                a->from);
	if (a->from && a->since_ms)
		return gw_error(GW_EXIT_USAGE, "--since", N_("give --from or --since, not both"),
		                "conflicts with --from");
	q->step = a->step_ms ? a->step_ms / 1000.0 : 60;
	if (q->to <= q->from)
		return gw_error(GW_EXIT_USAGE, "--from", NULL, "not before --to");
	if ((q->to - q->from) / q->step > 5e6)
		return gw_error(GW_EXIT_USAGE, "--step", N_("a larger --step or a shorter range"),
		                "more than 5,000,000 samples per GPU");
	q->match = a->match;
	return 0;
}

/* A progress bar on stderr, drawn only where stderr is a terminal (never into a pipe or a
 * log), redrawn when the share it shows changes. */
typedef struct {
	int last; /* the last width drawn, -1 none */
} fleet_bar;

static void bar_draw(void *ctx, int done, int total)
{
	fleet_bar *b = ctx;
	const int width = 30;
	int w = total > 0 ? (int)((long)done * width / total) : 0;
	if (w > width)
		w = width;
	if (w == b->last && done != total)
		return;
	b->last = w;
	char bar[width + 1];
	for (int i = 0; i < width; i++)
		bar[i] = i < w ? '#' : '.';
	bar[width] = 0;
	fprintf(stderr, "\r");
	fprintf(stderr, _("gpuwhy fleet: queries %d of %d [%s]"), done, total, bar);
	fflush(stderr);
}

static void bar_end(const fleet_bar *b)
{
	if (b->last >= 0)
		fputs("\r\033[K", stderr);
}

/* The report in the chosen format to -o FILE or stdout; the exit code. */
static int fleet_write(const fleet_args *a, const prom_fleet *fl, const fleet_opts *o,
                       const fleet_report *r)
{
	FILE *out = stdout;
	if (a->out && !(out = fopen(a->out, "w")))
		return gw_error(GW_EXIT_ENV, a->out, NULL, "cannot write: %m");
	if (a->format == FMT_JSON)
		fleet_render_json(fl, o, r, out);
	else if (a->format == FMT_HTML)
		fleet_render_html(fl, o, r, out);
	else if (a->format == FMT_CSV)
		fleet_render_csv(fl, o, r, out);
	else
		fleet_render_text(fl, o, r, out);
	if (out != stdout && fclose(out))
		return gw_error(GW_EXIT_ENV, a->out, NULL, "cannot write");
	return r->nf ? GW_EXIT_PROBLEMS : GW_EXIT_OK;
}

/* --job: the job's matchers joined to --match's, and its time where Slurm gave one and no
 * range was asked for. match is the buffer q->match then points into. */
static int fleet_scope_job(const fleet_args *a, const prom_conn *c, prom_fleet_query *q,
                           char *match, size_t len)
{
	fleet_job_where w;
	gw_fail err = {0};
	if (fleet_job_scope(c, a->job, (double)time(NULL), &w, &err))
		return gw_fail_print(&err);
	size_t n;
	const char *m = prom_match_inner(a->match, &n);
	snprintf(match, len, "%.*s%s%s", (int)n, m, n ? "," : "", w.match);
	q->match = match;
	if (w.slurm && !a->from && !a->to && !a->since_ms) {
		q->from = w.from;
		q->to = w.to;
	}
	return 0;
}

/* --by user: each job's user, from its series' user label, else from Slurm. */
static char **fleet_users(const prom_fleet *fl)
{
	char **u = gw_xcalloc((size_t)fl->njobs + 1, sizeof *u);
	for (int j = 0; j < fl->njobs; j++)
		if (fl->job_users[j])
			u[j] = gw_xstrdup(fl->job_users[j]);
	fleet_job_users(fl->jobs, fl->njobs, u);
	return u;
}

int cmd_fleet(int argc, char **argv, const gw_global *g)
{
	(void)g;
	fleet_args a = {.retries = 2, .format = -1, .csv = -1};
	int rc = fleet_parse(argc, argv, &a);
	if (rc)
		return rc == OPT_HELP ? GW_EXIT_OK : rc;
	if (a.csv >= 0 && a.format >= 0 && a.format != FMT_CSV)
		return gw_error(GW_EXIT_USAGE, "--csv", N_("--csv goes with --format csv or alone"),
		                "conflicts with --format %s", formats[a.format]);
	if (a.csv >= 0)
		a.format = FMT_CSV;
	if (a.format < 0)
		a.format = FMT_TEXT;
	if (!a.url)
		return gw_error(GW_EXIT_USAGE, "fleet",
		                N_("e.g. --prometheus http://127.0.0.1:9090"),
		                "--prometheus URL is required");
	prom_fleet_query q = {0};
	if ((rc = fleet_range(&a, &q)) != 0)
		return rc;
	prom_conn c = {.url = a.url,
	               .bearer_file = a.bearer,
	               .cacert = a.cacert,
	               .timeout_s = a.timeout_ms ? a.timeout_ms / 1000.0 : 30,
	               .retries = a.retries};
	fleet_bar bar = {.last = -1};
	q.parallel = a.parallel;
	if (isatty(STDERR_FILENO)) {
		q.progress = bar_draw;
		q.progress_ctx = &bar;
	}
	char match[8192];
	if (a.job && (rc = fleet_scope_job(&a, &c, &q, match, sizeof match)) != 0)
		return rc;
	prom_fleet fl;
	gw_fail err = {0};
	int64_t t0 = gw_mono_ns();
	rc = prom_fleet_load(&c, &q, &fl, &err);
	bar_end(&bar);
	if (rc)
		return gw_fail_print(&err);
	char **users = a.by == FLEET_BY_USER ? fleet_users(&fl) : NULL;
	fleet_opts o = {.by = (fleet_by)a.by,
	                .csv = a.csv >= 0 ? (fleet_csv)a.csv : FLEET_CSV_STATES,
	                .job_user = users,
	                .window_s = a.window_ms ? a.window_ms / 1000.0 : 3600,
	                .localize = a.format == FMT_TEXT || a.format == FMT_HTML};
	fleet_report r;
	int64_t t1 = gw_mono_ns();
	fleet_analyse(&fl, &o, &r);
	int64_t t2 = gw_mono_ns();
	rc = fleet_write(&a, &fl, &o, &r);
	if (a.timings)
		fprintf(stderr, _("gpuwhy fleet: fetch %.3f s, diagnosis %.3f s, report %.3f s\n"),
		        (t1 - t0) / 1e9, (t2 - t1) / 1e9, (gw_mono_ns() - t2) / 1e9);
	fleet_report_free(&r);
	for (int j = 0; users && j < fl.njobs; j++)
		free(users[j]);
	free(users);
	prom_fleet_free(&fl);
	return rc;
}
