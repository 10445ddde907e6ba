/* query.c - `gpuwhy query`: nvidia-smi --query-gpu compatible fields, CSV/JSON, loops, dmon. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/cmd.h"
#include "util/opt.h"
#include "smi/smi.h"
#include "smi/gpuq.h"
#include "gpu/gpu.h"
#include "util/err.h"
#include "util/fail.h"
#include "util/i18n.h"
#include "util/parse.h"
#include "util/timeutil.h"

static volatile sig_atomic_t query_stop;

static void on_signal(int sig)
{
	(void)sig;
	query_stop = 1;
}

typedef enum { QK_NONE, QK_GPU, QK_APPS, QK_PAGES, QK_REMAP, QK_LIST, QK_Q } query_kind;

typedef struct {
	query_kind kind;
	smi_gpu_fields gf; /* --query-gpu, --query-remapped-rows */
	smi_fields other;  /* compute apps / retired pages */
	bool json, noheader, nounits, dmon;
	const char *ids;      /* -i/--id/--gpus */
	const char *filename; /* -f */
	unsigned sections;    /* -q -d */
	int64_t interval_ns;  /* 0 = once */
	int64_t count;        /* 0 = unlimited when looping */
} query_opts;

static int parse_format(const char *s, query_opts *q)
{
	char *copy = strdup(s), *save = NULL;
	int rc = 0;
	for (char *t = strtok_r(copy, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
		while (*t == ' ')
			t++;
		if (!strcmp(t, "csv"))
			q->json = false;
		else if (!strcmp(t, "json"))
			q->json = true;
		else if (!strcmp(t, "noheader"))
			q->noheader = true;
		else if (!strcmp(t, "nounits"))
			q->nounits = true;
		else
			rc = gw_error(GW_EXIT_USAGE, "--format",
			              N_("use csv[,noheader][,nounits] or json"),
			              "unknown format '%s'", t);
	}
	free(copy);
	return rc;
}

static int set_kind(query_opts *q, query_kind k, const char *opt)
{
	if (q->kind != QK_NONE && q->kind != k)
		return gw_error(GW_EXIT_USAGE, opt,
		                N_("give one of --query-gpu, --query-compute-apps, "
		                   "--query-retired-pages, --query-remapped-rows, -L, -q"),
		                "only one query at a time");
	q->kind = k;
	return 0;
}

static int q_gpu(const opt_def *o, const char *v, void *ctx)
{
	query_opts *q = ctx;
	int rc = set_kind(q, q->kind == QK_REMAP ? QK_REMAP : QK_GPU, "--query-gpu");
	return rc ? rc : smi_gpu_fields_parse(v, &q->gf);
}

static int q_remap(const opt_def *o, const char *v, void *ctx)
{
	query_opts *q = ctx;
	int rc = set_kind(q, QK_REMAP, "--query-remapped-rows");
	if (!rc)
		rc = smi_gpu_fields_parse(v, &q->gf);
	return rc ? rc : smi_remap_fields_check(&q->gf);
}

static int q_apps(const opt_def *o, const char *v, void *ctx)
{
	query_opts *q = ctx;
	int rc = set_kind(q, QK_APPS, "--query-compute-apps");
	return rc ? rc : smi_apps_parse(v, &q->other);
}

static int q_pages(const opt_def *o, const char *v, void *ctx)
{
	query_opts *q = ctx;
	int rc = set_kind(q, QK_PAGES, "--query-retired-pages");
	return rc ? rc : smi_pages_parse(v, &q->other);
}

static int q_list(const opt_def *o, const char *v, void *ctx)
{
	return set_kind(ctx, QK_LIST, "-L");
}

static int q_q(const opt_def *o, const char *v, void *ctx)
{
	return set_kind(ctx, QK_Q, "-q");
}

static int q_format(const opt_def *o, const char *v, void *ctx)
{
	return parse_format(v, ctx);
}

static int q_loop(const opt_def *o, const char *v, void *ctx)
{
	query_opts *q = ctx;
	if (!gw_parse_duration_ns(v, 1000000000LL, &q->interval_ns) || q->interval_ns < 1000000LL)
		return gw_error(GW_EXIT_USAGE, "-l", N_("give seconds, e.g. -l 1 or -l 0.5"),
		                "invalid loop interval '%s'", v);
	return 0;
}

static int q_loop_ms(const opt_def *o, const char *v, void *ctx)
{
	long long n;
	if (!gw_parse_int(v, 1, 86400000LL, &n))
		return gw_error(GW_EXIT_USAGE, "-lms", N_("give milliseconds, e.g. -lms 100"),
		                "invalid loop interval '%s'", v);
	((query_opts *)ctx)->interval_ns = n * 1000000LL;
	return 0;
}

static int q_help_query(const opt_def *o, const char *v, void *ctx)
{
	smi_gpu_fields_help(stdout);
	return OPT_STOP;
}

#define Q_ALIAS(l, a, fn) OPT_CALL(0, l, a, fn, NULL, .hidden = true)

static int parse_args(int argc, char **argv, query_opts *q)
{
	const char *display = NULL;
	const opt_def opts[] = {
	    OPT_CALL(0, "query-gpu", "FIELD,...", q_gpu,
	             "these fields of every GPU (names and units of nvidia-smi --query-gpu)"),
	    OPT_CALL(0, "query-compute-apps", "FIELD,...", q_apps, "the GPUs' compute processes"),
	    OPT_CALL(0, "query-retired-pages", "FIELD,...", q_pages, "retired memory pages"),
	    OPT_CALL(0, "query-remapped-rows", "FIELD,...", q_remap, "remapped memory rows"),
	    OPT_CALL(0, "format", "FMT", q_format, "csv[,noheader][,nounits] (default) or json"),
	    OPT_STRING(0, "i", "ID,...", &q->ids,
	               "only these GPUs: indices, UUIDs, PCI bus ids (also --id, --gpus)"),
	    OPT_STRING(0, "id", "ID,...", &q->ids, NULL, .hidden = true),
	    OPT_STRING(0, "gpus", "ID,...", &q->ids, NULL, .hidden = true),
	    OPT_STRING(0, "f", "FILE", &q->filename, "write to FILE (also --filename)"),
	    OPT_STRING(0, "filename", "FILE", &q->filename, NULL, .hidden = true),
	    OPT_CALL(0, "L", NULL, q_list, "list the GPUs (also --list-gpus)"),
	    Q_ALIAS("list-gpus", NULL, q_list),
	    OPT_CALL(0, "q", NULL, q_q, "nvidia-smi -q sectioned text (also --query)"),
	    Q_ALIAS("query", NULL, q_q),
	    OPT_STRING(0, "d", "SECTION,...", &display,
	               "with -q, only these sections (also --display)"),
	    OPT_STRING(0, "display", "SECTION,...", &display, NULL, .hidden = true),
	    OPT_CALL(0, "l", "SECONDS", q_loop, "repeat every SECONDS (also --loop)"),
	    Q_ALIAS("loop", "SECONDS", q_loop),
	    OPT_CALL(0, "lms", "MS", q_loop_ms, "repeat every MS milliseconds (also --loop-ms)"),
	    Q_ALIAS("loop-ms", "MS", q_loop_ms),
	    OPT_INT64(0, "count", "N", &q->count, 1, (double)(1LL << 40), "stop after N samples",
	              .why = N_("invalid count '%s'"), .hint = N_("a positive whole number")),
	    OPT_FLAG(0, "dmon", &q->dmon, "the compact nvidia-smi dmon columns plus SM activity"),
	    OPT_CALL(0, "help-query", NULL, q_help_query,
	             "list the fields of --query-gpu (also --help-query-gpu)"),
	    Q_ALIAS("help-query-gpu", NULL, q_help_query),
	    OPT_END};
	const opt_cmd oc = {
	    .name = "query",
	    .usage = "query --query-gpu=FIELD[,FIELD...] [--format=csv[,noheader][,nounits]|json]\n"
	             "             [-i ID[,ID...]] [-f FILE] [-l SECONDS | -lms MILLISECONDS] "
	             "[--count N]\n"
	             "query --query-compute-apps=FIELD,... | --query-retired-pages=FIELD,...\n"
	             "             | --query-remapped-rows=FIELD,... [--format=csv...] [-i ID] [-f "
	             "FILE]\n"
	             "query -L [-i ID]            list GPUs\n"
	             "query -q [-d SECTION,...]   nvidia-smi -q sectioned text\n"
	             "query --dmon [-l SECONDS | -lms MILLISECONDS] [--count N]\n"
	             "query --help-query",
	    .about =
	        N_("Field names and units follow nvidia-smi 590 --query-gpu (every name and alias "
	           "of\nits --help-query-gpu); values NVML cannot give print [N/A] (null in JSON). "
	           "The\nheader keeps its units with nounits, as nvidia-smi does. -i takes "
	           "indices, UUIDs\nand PCI bus ids. --format=json prints one JSON object per "
	           "sample (JSON Lines when\nlooping). --dmon streams the compact `nvidia-smi dmon "
	           "-s pucct` columns plus SM\nactivity. -l/-lms repeat at a fixed cadence until "
	           "Ctrl-C or --count samples.\nOptions take one dash or two, as nvidia-smi's do."),
	    .opts = opts,
	    .long_only = true,
	    .ctx = q};
	int first, rc = opt_parse(&oc, argc, argv, &first);
	if (rc)
		return rc == OPT_STOP ? OPT_HELP : rc;
	if (display) {
		if (q->kind != QK_Q)
			return gw_error(GW_EXIT_USAGE, "-d",
			                N_("use it with -q, e.g. -q -d CLOCK,PCIE"),
			                "-d selects sections of -q");
		if ((rc = smi_q_parse_sections(display, &q->sections)))
			return rc;
	}
	if (!q->dmon && q->kind == QK_NONE)
		return gw_error(
		    GW_EXIT_USAGE, "query",
		    N_("e.g. --query-gpu=index,utilization.gpu; see gpuwhy query --help"),
		    "no query given");
	if ((q->kind == QK_APPS || q->kind == QK_PAGES) && q->json)
		return gw_error(GW_EXIT_USAGE, "--format=json",
		                N_("use --format=csv for process and page queries"),
		                "not available here");
	if (q->dmon && !q->interval_ns)
		q->interval_ns = 1000000000LL;
	return 0;
}

static void print_sample(gpu_ctx *c, const smi_sel *sel, gpu_values *vals, const query_opts *q)
{
	for (int k = 0; k < sel->n; k++)
		gpu_sample(c, sel->idx[k], &vals[k]);
	if (q->json) {
		smi_gpu_json(stdout, c, sel, vals, &q->gf);
	} else {
		for (int k = 0; k < sel->n; k++)
			smi_gpu_csv_row(stdout, c, sel->idx[k], &vals[k], &q->gf, !q->nounits);
	}
}

/* One pass of a query that is not a --query-gpu sample. */
static void print_other(gpu_ctx *c, const smi_sel *sel, const query_opts *q, bool first)
{
	switch (q->kind) {
	case QK_APPS:
		smi_apps_print(c, sel, &q->other, first && !q->noheader, !q->nounits);
		break;
	case QK_PAGES:
		smi_pages_print(c, sel, &q->other, first && !q->noheader);
		break;
	case QK_LIST:
		smi_list(c, sel);
		break;
	case QK_Q:
		smi_q_print(c, sel, q->sections);
		break;
	default:
		break;
	}
}

int cmd_query(int argc, char **argv, const gw_global *g)
{
	query_opts q;
	memset(&q, 0, sizeof q);
	int rc = parse_args(argc, argv, &q);
	if (rc)
		return rc < 0 ? GW_EXIT_OK : rc;
	if (q.filename && !freopen(q.filename, "w", stdout))
		return gw_error(GW_EXIT_ENV, q.filename, N_("check the directory and permissions"),
		                "cannot write: %s", strerror(errno));
	gpu_ctx *c;
	gw_fail gf;
	gpu_open_opts oo = {.gpus = g->gpus, .failure = &gf};
	if (gpu_open(&oo, &c) != 0)
		return gw_fail_print(&gf);
	smi_sel sel;
	if ((rc = smi_select(c, q.ids, &sel))) {
		gpu_close(c);
		return rc;
	}
	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (q.dmon) {
		/* dmon's puct groups plus GPM activity, at -l/-lms for --count lines. */
		smi_mon_opts mo = {
		    .groups = "puctg", .interval_ns = q.interval_ns, .count = q.count};
		rc = smi_dmon_run(c, &sel, &mo, &query_stop);
		gpu_close(c);
		return rc;
	}
	gpu_values *vals = calloc(sel.n ? (size_t)sel.n : 1, sizeof *vals);
	bool sampled = q.kind == QK_GPU || q.kind == QK_REMAP || q.kind == QK_Q;
	/* Rates (GPM, PCIe, driver samples) need an interval even for one sample. */
	if (sampled)
		gpu_wait_rate_window(c);
	if (q.interval_ns)
		gpu_slow_thread_start(c);
	int64_t next = gw_mono_ns();
	long long done = 0;
	if (sampled && q.kind != QK_Q && !q.json && !q.noheader)
		smi_gpu_csv_header(stdout, &q.gf, q.kind == QK_REMAP);
	while (!query_stop) {
		if (q.kind == QK_GPU || q.kind == QK_REMAP)
			print_sample(c, &sel, vals, &q);
		else
			print_other(c, &sel, &q, done == 0);
		fflush(stdout);
		done++;
		if (!q.interval_ns || (q.count && done >= q.count))
			break;
		/* Fixed cadence: the next deadline follows the schedule, not the last wake-up. */
		next += q.interval_ns;
		int64_t now = gw_mono_ns();
		if (next < now)
			next = now;
		gw_sleep_until_ns(next);
	}
	free(vals);
	gpu_close(c);
	if (ferror(stdout))
		return gw_error(GW_EXIT_ENV, q.filename ? q.filename : "stdout", NULL,
		                "write failed");
	return GW_EXIT_OK;
}
