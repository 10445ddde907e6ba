/* report.c - `gpuwhy report`: diagnose a recording; text, JSON or one HTML page. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "diagnose/diag.h"
#include "report/report.h"
#include "trace/trace_summary.h"
#include "util/err.h"

static void usage(FILE *out)
{
	fputs("usage: gpuwhy report RECORDING [--format text|json|html] [-o FILE]\n"
	      "                     [--goal throughput|latency] [--set NAME=VALUE]... [--trace "
	      "FILE]\n"
	      "       gpuwhy report --thresholds\n"
	      "\n"
	      "Diagnose a recording (.gpuwhy from gpuwhy record or run): which layer the GPU\n"
	      "idles in, with the evidence as numbers and what to change. Text shows the\n"
	      "findings, each GPU's utilization x memory quadrant and the seven-step chain\n"
	      "with sparklines; json is for machines; html is one self-contained page with\n"
	      "charts.\n"
	      "\n"
	      "  --format FMT     text (default), json or html\n"
	      "  -o, --output F   write to F instead of standard output\n"
	      "  --goal GOAL      throughput (default: training, batch jobs) or latency\n"
	      "                   (online inference: moderate utilization is not a problem)\n"
	      "  --set N=V        override a threshold (see --thresholds), repeatable\n"
	      "  --thresholds     list every threshold with its default and meaning\n"
	      "  --trace FILE     a profiler trace of the same run (Kineto JSON/.json.gz or\n"
	      "                   nsys SQLite): its kernel lengths feed launch-bound and step 7\n"
	      "\n"
	      "Exit status: 0 no error-level finding, 1 error-level findings, 2 usage error,\n"
	      "3 unreadable recording or output.\n",
	      out);
}

static void print_thresholds(diag_thresholds *th)
{
	printf("%-22s %10s %10s  %-8s %s\n", "name", "default", "value", "unit", "meaning");
	for (int i = 0; i < diag_threshold_count; i++) {
		const diag_threshold_desc *d = &diag_threshold_table[i];
		double v = *diag_threshold_field(th, i);
		printf("%-22s %10g %10g  %-8s %s\n", d->name, d->def, v, d->unit, d->help);
	}
}

typedef enum { FMT_TEXT, FMT_JSON, FMT_HTML } out_format;

int cmd_report(int argc, char **argv, const gw_global *g)
{
	(void)g;
	static const struct option opts[] = {
	    {"format", required_argument, NULL, 'f'}, {"output", required_argument, NULL, 'o'},
	    {"goal", required_argument, NULL, 'g'},   {"set", required_argument, NULL, 's'},
	    {"thresholds", no_argument, NULL, 't'},   {"trace", required_argument, NULL, 'T'},
	    {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
	diag_opts o;
	diag_opts_default(&o);
	out_format fmt = FMT_TEXT;
	const char *outpath = NULL;
	bool list = false;
	const char *trace_path = NULL;
	int c;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "text"))
				fmt = FMT_TEXT;
			else if (!strcmp(optarg, "json"))
				fmt = FMT_JSON;
			else if (!strcmp(optarg, "html"))
				fmt = FMT_HTML;
			else
				return gw_error(GW_EXIT_USAGE, "--format", "use text, json or html",
				                "unknown format '%s'", optarg);
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'g':
			if (!diag_goal_parse(optarg, &o.goal))
				return gw_error(GW_EXIT_USAGE, "--goal",
				                "use throughput or latency", "unknown goal '%s'",
				                optarg);
			break;
		case 's':
			if (!diag_threshold_set(&o.th, optarg))
				return gw_error(GW_EXIT_USAGE, "--set",
				                "NAME=VALUE with a name from --thresholds and a "
				                "non-negative number",
				                "cannot apply '%s'", optarg);
			break;
		case 't':
			list = true;
			break;
		case 'T':
			trace_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return GW_EXIT_OK;
		default:
			usage(stderr);
			return GW_EXIT_USAGE;
		}
	}
	if (list) {
		print_thresholds(&o.th);
		return GW_EXIT_OK;
	}
	if (argc - optind != 1) {
		usage(stderr);
		return gw_error(GW_EXIT_USAGE, "report", "gpuwhy report run.gpuwhy",
		                argc - optind ? "exactly one recording expected"
		                              : "no recording given");
	}
	const char *path = argv[optind];
	timeline *tl;
	diag_meta meta = {0};
	int rc = report_load(path, &tl, &meta);
	if (rc) {
		diag_meta_free(&meta);
		return rc;
	}
	o.meta = &meta;
	if (trace_path) {
		char err[256];
		rc = trace_summarize_file(trace_path, &tl->trace, err, sizeof err);
		if (rc) {
			gw_error(rc, trace_path,
			         "give a Kineto .json/.json.gz or nsys .sqlite trace", "%s", err);
			diag_meta_free(&meta);
			tl_free(tl);
			return rc;
		}
	}
	diag_result r;
	diag_run(tl, &o, &r);

	FILE *out = stdout;
	if (outpath && !(out = fopen(outpath, "w"))) {
		rc = gw_error(GW_EXIT_ENV, outpath, "choose a writable path", "cannot write: %s",
		              strerror(errno));
		goto done;
	}
	report_style st = {.utf8 = report_locale_utf8(),
	                   .color = fmt == FMT_TEXT && !outpath && report_want_color(stdout),
	                   .source = path,
	                   .opts = &o};
	if (fmt == FMT_JSON)
		report_json(out, tl, &meta, &r, &st);
	else if (fmt == FMT_HTML)
		report_html(out, tl, &meta, &r, &st);
	else
		report_text(out, tl, &meta, &r, &st);
	if (fflush(out) != 0 || ferror(out) || (outpath && fclose(out) != 0)) {
		rc = gw_error(GW_EXIT_ENV, outpath ? outpath : "standard output", NULL,
		              "write failed: %s", strerror(errno));
		goto done;
	}
	if (outpath)
		fprintf(stderr, "gpuwhy: report written to %s\n", outpath);
	rc = diag_exit_code(&r);
done:
	diag_result_free(&r);
	tl_free(tl);
	diag_meta_free(&meta);
	return rc;
}
