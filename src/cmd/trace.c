/* trace.c - `gpuwhy trace`: profiler timelines (PyTorch/Kineto JSON, nsys SQLite) analysed with
 * HolisticTraceAnalysis' semantics: where and why the GPU idles, per rank. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/trace_say.h"
#include "util/opt.h"
#include "traceview/trace_job.h"
#include "traceview/trace_report.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/parse.h"

/* "0,2,4-7" -> ranks; false on a malformed list. */
static bool parse_ranks(const char *s, int **out, size_t *n)
{
	char *copy = strdup(s), *save = NULL;
	int *r = NULL;
	size_t cnt = 0, cap = 0;
	bool ok = copy != NULL;
	for (char *tok = copy ? strtok_r(copy, ",", &save) : NULL; ok && tok;
	     tok = strtok_r(NULL, ",", &save)) {
		long long a, b;
		char *dash = strchr(tok, '-');
		if (dash) {
			*dash = 0;
			ok = gw_parse_int(tok, 0, 1 << 24, &a) &&
			     gw_parse_int(dash + 1, 0, 1 << 24, &b) && a <= b && b - a < 1 << 20;
		} else {
			ok = gw_parse_int(tok, 0, 1 << 24, &a);
			b = a;
		}
		for (long long v = a; ok && v <= b; v++) {
			if (cnt == cap) {
				cap = cap ? cap * 2 : 8;
				int *nr = realloc(r, cap * sizeof *nr);
				if (!nr) {
					ok = false;
					break;
				}
				r = nr;
			}
			r[cnt++] = (int)v;
		}
	}
	free(copy);
	if (!ok || cnt == 0) {
		free(r);
		return false;
	}
	*out = r;
	*n = cnt;
	return true;
}

static const char *const formats[] = {"text", "json", "csv", NULL};

static int set_ranks(const opt_def *d, const char *v, void *ctx)
{
	trace_job_opts *o = ctx;
	free((void *)o->ranks);
	o->ranks = NULL;
	int *ranks;
	if (!parse_ranks(v, &ranks, &o->n_ranks))
		return gw_error(GW_EXIT_USAGE, "--ranks", _("e.g. --ranks 0,2,4-7"),
		                _("bad rank list '%s'"), v);
	o->ranks = ranks;
	return 0;
}

/* The progress line on a terminal, redrawn in place and cleared at the end. */
static void show_progress(const trace_progress *p, void *arg)
{
	(void)arg;
	if (p->done) {
		fputs("\r\033[K", stderr);
		return;
	}
	fputs("\rgpuwhy trace: ", stderr);
	fprintf(stderr,
	        P_("reading %zu file: %llu of %llu MB (%d%%)",
	           "reading %zu files: %llu of %llu MB (%d%%)", p->files),
	        p->files, (unsigned long long)(p->bytes >> 20),
	        (unsigned long long)(p->total >> 20),
	        p->total ? (int)(100 * p->bytes / p->total) : 100);
	fputs("\033[K", stderr);
}

int cmd_trace(int argc, char **argv, const gw_global *g)
{
	trace_job_opts o = {.prep = {.ns_rounding = true}};
	int fmt = 0;
	bool last = false, exact = false, quiet = false;
	const opt_def opts[] = {
	    OPT_ENUM('f', "format", "FMT", &fmt, formats,
	             "text (default), json, or csv (HTA's tables)"),
	    OPT_CALL('r', "ranks", "LIST", set_ranks,
	             "only these ranks: 0,2,4-7 (all files are still read)"),
	    OPT_FLAG(0, "include-last-step", &last, "keep the last ProfilerStep (HTA drops it)"),
	    OPT_FLAG(0, "no-ns-rounding", &exact,
	             "keep nanosecond timestamps exact (HTA rounds them to whole microseconds: "
	             "ceil(ts), floor(ts + dur))"),
	    OPT_INT('j', "threads", "N", &o.threads, 1, 1024,
	            "ranks read in parallel (default: one per CPU)", .why = N_("bad value '%s'"),
	            .hint = N_("a number from 1 to 1024")),
	    OPT_FLAG('q', "quiet", &quiet, "no progress line on stderr"),
	    OPT_END};
	const opt_cmd oc = {
	    .name = "trace",
	    .usage = "trace [OPTIONS] PATH...",
	    .about =
	        N_("Analyse profiler timelines like HolisticTraceAnalysis: where the GPU idles and "
	           "why.\nPATH is a trace file or a directory of per-rank files: PyTorch profiler "
	           "(Kineto)\nJSON or JSON.gz, or an Nsight Systems SQLite export (nsys export "
	           "--type sqlite).\nPATH - (or /dev/stdin, a pipe) reads the standard input."),
	    .opts = opts,
	    .more = N_("Verdicts: host-bound, launch-bound, communication-bound, healthy."),
	    .max_args = -1,
	    .ctx = &o};
	int first, rc = opt_parse(&oc, argc, argv, &first);
	int *ranks = (int *)o.ranks;
	if (!rc && first >= argc) {
		opt_help(&oc, stderr);
		rc = GW_EXIT_USAGE;
	}
	if (rc) {
		free(ranks);
		return rc == OPT_HELP ? GW_EXIT_OK : rc;
	}
	o.prep.include_last_step = last;
	o.prep.ns_rounding = !exact;
	if (isatty(STDERR_FILENO) && !quiet)
		o.progress = show_progress;
	const char *format = formats[fmt];
	char **paths = NULL;
	size_t npaths = 0;
	rc = trace_job_collect(argv + first, (size_t)(argc - first), &paths, &npaths);
	if (rc) {
		free(ranks);
		return rc;
	}
	trace_job job;
	if (trace_job_run(&job, paths, npaths, &o) < 0) {
		trace_job_free(&job);
		trace_job_free_paths(paths, npaths);
		free(ranks);
		return gw_error(GW_EXIT_ENV, "trace", NULL, _("out of memory or threads"));
	}
	size_t analysed = 0, failed = 0, readable = 0;
	for (size_t i = 0; i < job.n; i++) {
		const trace_job_item *it = &job.items[i];
		if (it->failed) {
			failed++;
			cmd_trace_error(it->failed, it->rank.path,
			                _("is it a Kineto JSON(.gz) trace or an nsys SQLite "
			                  "export?"),
			                it->err);
		} else {
			readable++;
			analysed += it->analyzed;
		}
	}
	rc = failed ? GW_EXIT_ENV : GW_EXIT_OK;
	if (readable && !analysed && o.ranks) {
		rc = gw_error(GW_EXIT_USAGE, "--ranks",
		              _("see the ranks the files hold with no --ranks"),
		              _("no file holds one of the requested ranks"));
	} else if (analysed) {
		bool any_gpu = false;
		for (size_t i = 0; i < job.n; i++)
			any_gpu =
			    any_gpu || (job.items[i].analyzed && job.items[i].res.temporal.valid);
		if (!any_gpu && !failed)
			rc =
			    gw_error(GW_EXIT_ENV, "trace",
			             _("record with activities=[ProfilerActivity.CPU, "
			               "ProfilerActivity.CUDA] or nsys --trace=cuda"),
			             _("no GPU activity (kernels, memcpys, memsets) in the input"));
		if (!strcmp(format, "json")) {
			if (trace_report_json(stdout, &job, &o) < 0)
				rc = gw_error(GW_EXIT_ENV, "trace", NULL,
				              _("out of memory writing JSON"));
		} else if (!strcmp(format, "csv")) {
			trace_report_csv(stdout, &job);
			trace_report_warnings(stderr, &job);
		} else {
			trace_report_text(stdout, &job, &o);
		}
	}
	if (fflush(stdout) != 0)
		rc = gw_error(GW_EXIT_ENV, "stdout", NULL, _("write error"));
	trace_job_free(&job);
	trace_job_free_paths(paths, npaths);
	free(ranks);
	return rc;
}
