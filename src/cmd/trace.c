/* trace.c - `gpuwhy trace`: profiler timelines (PyTorch/Kineto JSON, nsys SQLite) analysed with
 * HolisticTraceAnalysis' semantics: where and why the GPU idles, per rank. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "trace/trace_job.h"
#include "trace/trace_report.h"
#include "util/err.h"
#include "util/parse.h"

static void trace_usage(FILE *out)
{
	fputs(
	    "usage: gpuwhy trace [OPTIONS] PATH...\n"
	    "\n"
	    "Analyse profiler timelines like HolisticTraceAnalysis: where the GPU idles and why.\n"
	    "PATH is a trace file or a directory of per-rank files: PyTorch profiler (Kineto)\n"
	    "JSON or JSON.gz, or an Nsight Systems SQLite export (nsys export --type sqlite).\n"
	    "\n"
	    "  -f, --format FMT        text (default), json, or csv (HTA's tables)\n"
	    "  -r, --ranks LIST        only these ranks: 0,2,4-7 (all files are still read)\n"
	    "      --include-last-step keep the last ProfilerStep (HTA drops it)\n"
	    "      --no-ns-rounding    keep nanosecond timestamps exact (HTA rounds them to\n"
	    "                          whole microseconds: ceil(ts), floor(ts + dur))\n"
	    "  -j, --threads N         ranks read in parallel (default: one per CPU)\n"
	    "  -q, --quiet             no progress line on stderr\n"
	    "  -h, --help              this help\n"
	    "\n"
	    "Verdicts: host-bound, launch-bound, communication-bound, healthy.\n"
	    "Exit codes: 0 ok, 2 usage error, 3 unreadable or malformed input file.\n",
	    out);
}

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

int cmd_trace(int argc, char **argv, const gw_global *g)
{
	(void)g;
	enum { OPT_LAST = 256, OPT_NO_ROUND };
	static const struct option opts[] = {{"format", required_argument, NULL, 'f'},
	                                     {"ranks", required_argument, NULL, 'r'},
	                                     {"include-last-step", no_argument, NULL, OPT_LAST},
	                                     {"no-ns-rounding", no_argument, NULL, OPT_NO_ROUND},
	                                     {"threads", required_argument, NULL, 'j'},
	                                     {"quiet", no_argument, NULL, 'q'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	const char *format = "text";
	trace_job_opts o = {.prep = {.ns_rounding = true}, .progress = isatty(STDERR_FILENO)};
	int *ranks = NULL, c;
	long long v;
	while ((c = getopt_long(argc, argv, "f:r:j:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (strcmp(optarg, "text") && strcmp(optarg, "json") &&
			    strcmp(optarg, "csv")) {
				free(ranks);
				return gw_error(GW_EXIT_USAGE, "--format", "use text, json or csv",
				                "unknown format '%s'", optarg);
			}
			format = optarg;
			break;
		case 'r':
			free(ranks);
			ranks = NULL;
			if (!parse_ranks(optarg, &ranks, &o.n_ranks))
				return gw_error(GW_EXIT_USAGE, "--ranks", "e.g. --ranks 0,2,4-7",
				                "bad rank list '%s'", optarg);
			o.ranks = ranks;
			break;
		case OPT_LAST:
			o.prep.include_last_step = true;
			break;
		case OPT_NO_ROUND:
			o.prep.ns_rounding = false;
			break;
		case 'j':
			if (!gw_parse_int(optarg, 1, 1024, &v)) {
				free(ranks);
				return gw_error(GW_EXIT_USAGE, "--threads",
				                "a number from 1 to 1024", "bad value '%s'",
				                optarg);
			}
			o.threads = (int)v;
			break;
		case 'q':
			o.progress = false;
			break;
		case 'h':
			trace_usage(stdout);
			free(ranks);
			return GW_EXIT_OK;
		default:
			trace_usage(stderr);
			free(ranks);
			return GW_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		free(ranks);
		trace_usage(stderr);
		return GW_EXIT_USAGE;
	}
	char **paths = NULL;
	size_t npaths = 0;
	int rc = trace_job_collect(argv + optind, (size_t)(argc - optind), &paths, &npaths);
	if (rc) {
		free(ranks);
		return rc;
	}
	trace_job job;
	if (trace_job_run(&job, paths, npaths, &o) < 0) {
		trace_job_free(&job);
		trace_job_free_paths(paths, npaths);
		free(ranks);
		return gw_error(GW_EXIT_ENV, "trace", NULL, "out of memory or threads");
	}
	size_t analysed = 0, failed = 0, readable = 0;
	for (size_t i = 0; i < job.n; i++) {
		const trace_job_item *it = &job.items[i];
		if (it->failed) {
			failed++;
			gw_error(it->failed, it->rank.path,
			         "is it a Kineto JSON(.gz) trace or an nsys SQLite "
			         "export?",
			         "%s", it->err);
		} else {
			readable++;
			analysed += it->analyzed;
		}
	}
	rc = failed ? GW_EXIT_ENV : GW_EXIT_OK;
	if (readable && !analysed && o.ranks) {
		rc = gw_error(GW_EXIT_USAGE, "--ranks",
		              "see the ranks the files hold with no --ranks",
		              "no file holds one of the requested ranks");
	} else if (analysed) {
		bool any_gpu = false;
		for (size_t i = 0; i < job.n; i++)
			any_gpu =
			    any_gpu || (job.items[i].analyzed && job.items[i].res.temporal.valid);
		if (!any_gpu && !failed)
			rc = gw_error(GW_EXIT_ENV, "trace",
			              "record with activities=[ProfilerActivity.CPU, "
			              "ProfilerActivity.CUDA] or nsys --trace=cuda",
			              "no GPU activity (kernels, memcpys, memsets) in the input");
		if (!strcmp(format, "json")) {
			if (trace_report_json(stdout, &job, &o) < 0)
				rc = gw_error(GW_EXIT_ENV, "trace", NULL,
				              "out of memory writing JSON");
		} else if (!strcmp(format, "csv")) {
			trace_report_csv(stdout, &job);
			for (size_t i = 0; i < job.n; i++)
				for (int w = 0; w < job.items[i].rank.n_warnings; w++)
					fprintf(stderr, "gpuwhy: %s: warning: %s\n",
					        job.items[i].rank.path,
					        job.items[i].rank.warnings[w]);
		} else {
			trace_report_text(stdout, &job, &o);
		}
	}
	if (fflush(stdout) != 0)
		rc = gw_error(GW_EXIT_ENV, "stdout", NULL, "write error");
	trace_job_free(&job);
	trace_job_free_paths(paths, npaths);
	free(ranks);
	return rc;
}
