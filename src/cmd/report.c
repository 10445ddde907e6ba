/* report.c - `gpuwhy report`: diagnose a recording; text, JSON or one HTML page. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/promwin.h"
#include "cmd/trace_say.h"
#include "util/opt.h"
#include "diagnose/diag.h"
#include "report/report.h"
#include "trace/trace_summary.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/textwidth.h"

/* People read this table: the header and meanings are translated (names,
 * numbers and units are what --set takes, as written); the header's cells are
 * padded in display columns, which a translation's characters are not one of
 * a byte. */
static void print_thresholds(diag_thresholds *th)
{
	gw_text_fput_cell(stdout, _("name"), 22, GW_ALIGN_LEFT);
	putchar(' ');
	gw_text_fput_cell(stdout, _("default"), 10, GW_ALIGN_RIGHT);
	putchar(' ');
	gw_text_fput_cell(stdout, _("value"), 10, GW_ALIGN_RIGHT);
	fputs("  ", stdout);
	gw_text_fput_cell(stdout, _("unit"), 8, GW_ALIGN_LEFT);
	printf(" %s\n", _("meaning"));
	for (int i = 0; i < diag_threshold_count; i++) {
		const diag_threshold_desc *d = &diag_threshold_table[i];
		double v = *diag_threshold_field(th, i);
		printf("%-22s %10g %10g  %-8s %s\n", d->name, d->def, v, d->unit, _(d->help));
	}
}

enum { FMT_TEXT, FMT_JSON, FMT_HTML };
static const char *const formats[] = {"text", "json", "html", NULL};

int report_opt_goal(const opt_def *d, const char *v, void *ctx)
{
	if (!diag_goal_parse(v, &((diag_opts *)ctx)->goal))
		return gw_error(GW_EXIT_USAGE, "--goal", N_("use throughput or latency"),
		                "unknown goal '%s'", v);
	return 0;
}

int report_opt_set(const opt_def *d, const char *v, void *ctx)
{
	if (!diag_threshold_set(&((diag_opts *)ctx)->th, v))
		return gw_error(GW_EXIT_USAGE, "--set", d->hint, "cannot apply '%s'", v);
	return 0;
}

/* The kernel summary of a profiler trace of the same run; prints the error line. */
static int load_trace(const char *trace_path, timeline *tl)
{
	gw_fail err = {0};
	int rc = trace_summarize_file(trace_path, &tl->trace, &err);
	if (rc)
		cmd_trace_error(rc, trace_path,
		                N_("give a Kineto .json/.json.gz or nsys .sqlite trace"), err.why);
	return rc;
}

/* The report in its format to outpath (NULL: standard output); the exit code. */
static int write_report(const char *outpath, int fmt, const timeline *tl, const diag_meta *meta,
                        const diag_result *r, const report_style *st)
{
	FILE *out = stdout;
	if (outpath && !(out = fopen(outpath, "w")))
		return gw_error(GW_EXIT_ENV, outpath, N_("choose a writable path"),
		                "cannot write: %s", strerror(errno));
	if (fmt == FMT_JSON)
		report_json(out, tl, meta, r, st);
	else if (fmt == FMT_HTML)
		report_html(out, tl, meta, r, st);
	else
		report_text(out, tl, meta, r, st);
	if (fflush(out) != 0 || ferror(out) || (outpath && fclose(out) != 0))
		return gw_error(GW_EXIT_ENV, outpath ? outpath : "standard output", NULL,
		                "write failed: %s", strerror(errno));
	if (outpath)
		fprintf(stderr, _("gpuwhy: report written to %s\n"), outpath);
	return diag_exit_code(r);
}

/* The recording or log named, or the window of --prometheus; prints the error line. */
static int load_input(const cmd_promwin *pw, char **args, int nargs, const smilog_opts *src,
                      timeline **tl, diag_meta *meta, char *source, size_t len)
{
	*tl = NULL;
	if (pw->url) {
		if (nargs)
			return gw_error(GW_EXIT_USAGE, args[0],
			                N_("give a recording or --prometheus, not both"),
			                "unexpected argument");
		fleet_window_spec s;
		int rc = cmd_promwin_spec(pw, &s);
		return rc ? rc : cmd_promwin_load(pw, &s, tl, meta, source, len);
	}
	const char *opt = cmd_promwin_needs_url(pw);
	if (opt)
		return gw_error(GW_EXIT_USAGE, opt, N_("e.g. --prometheus http://prometheus:9090"),
		                "needs --prometheus URL");
	if (nargs != 1)
		return gw_error(GW_EXIT_USAGE, "report", N_("gpuwhy report run.gpuwhy"),
		                nargs ? "exactly one recording expected" : "no recording given");
	snprintf(source, len, "%s", args[0]);
	return report_load(args[0], src, tl, meta);
}

int cmd_report(int argc, char **argv, const gw_global *g)
{
	diag_opts o;
	diag_opts_default(&o);
	int fmt = FMT_TEXT;
	const char *outpath = NULL, *trace_path = NULL;
	bool list = false;
	const char *smi_fields = NULL;
	int64_t interval_ns = 0;
	cmd_promwin pw;
	cmd_promwin_init(&pw);
	const opt_def base[] = {
	    OPT_ENUM(0, "format", "FMT", &fmt, formats, "text (default), json or html"),
	    OPT_STRING('o', "output", "F", &outpath, "write to F instead of standard output"),
	    OPT_CALL(0, "goal", "GOAL", report_opt_goal,
	             "throughput (default: training, batch jobs) or latency (online inference: "
	             "moderate utilization is not a problem)"),
	    OPT_CALL(0, "set", "N=V", report_opt_set,
	             "override a threshold (see --thresholds), repeatable",
	             .hint =
	                 N_("NAME=VALUE with a name from --thresholds and a non-negative number")),
	    OPT_FLAG(0, "thresholds", &list, "list every threshold with its default and meaning"),
	    OPT_STRING(
	        0, "trace", "FILE", &trace_path,
	        "a profiler trace of the same run (Kineto JSON/.json.gz or nsys SQLite): its "
	        "kernel lengths feed launch-bound and step 7"),
	    OPT_STRING(0, "smi-fields", "LIST", &smi_fields,
	               "for an nvidia-smi CSV written with noheader: the --query-gpu list it was "
	               "written with (timestamp,index,utilization.gpu,...)"),
	    OPT_DURATION(0, "interval", "DUR", &interval_ns, 0,
	                 "for a log without times (no timestamp field, dmon without -o T): the "
	                 "interval it was written at (nvidia-smi -l 1, dmon -d 1: 1s)",
	                 .min = 0.001, .max = 86400,
	                 .why = N_("invalid interval '%s' (1ms to 1 day)")),
	    OPT_END};
	opt_def opts[sizeof base / sizeof *base + CMD_PROMWIN_ROWS];
	int nrows = (int)(sizeof base / sizeof *base) - 1;
	memcpy(opts, base, sizeof base);
	nrows = cmd_promwin_rows(&pw, true, opts, nrows);
	opts[nrows] = (opt_def)OPT_END;
	const opt_cmd oc = {
	    .name = "report",
	    .usage = "report RECORDING|LOG [--format text|json|html] [-o FILE]\n"
	             "              [--goal throughput|latency] [--set NAME=VALUE]... [--trace "
	             "FILE]\n              [--smi-fields LIST] [--interval DUR]\n"
	             "report --prometheus URL (--node N [--gpu I] | --job ID)\n"
	             "              (--since D | --from T [--to T]) [--step S] [OPTIONS]\n"
	             "report --thresholds",
	    .about =
	        N_("Diagnose a recording (.gpuwhy from gpuwhy record or run): which layer the GPU\n"
	           "idles in, with the evidence as numbers and what to change. Text shows the\n"
	           "findings, each GPU's utilization x memory quadrant and the seven-step chain\n"
	           "with sparklines; json is for machines; html is one self-contained page with\n"
	           "charts.\n\n"
	           "It also reads a log you already have, told by its content: the CSV of\n"
	           "nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits] -l N (any\n"
	           "fields, any order, several GPUs; with timestamp, or give --interval), the\n"
	           "table of nvidia-smi dmon (with or without -o DT) and gpuwhy export's CSV.\n"
	           "Such a log holds GPU counters only: what needs the host's CPU and I/O, the\n"
	           "job's processes or its steps is reported as not checked."),
	    .opts = opts,
	    .more =
	        N_("With --prometheus it reads one node's, GPU's or job's window of a cluster's "
	           "Prometheus (dcgm-exporter's series) instead, and reports it the same way; "
	           "what Prometheus does not hold (host, processes, steps) is not checked. See "
	           "docs/fleet.md."),
	    .exit1 = N_("error-level findings"),
	    .max_args = -1,
	    .ctx = &o};
	int first, prc = opt_parse(&oc, argc, argv, &first);
	if (prc)
		return prc == OPT_HELP ? GW_EXIT_OK : prc;
	if (list) {
		print_thresholds(&o.th);
		return GW_EXIT_OK;
	}
	timeline *tl;
	diag_meta meta = {0};
	char source[1400];
	smilog_opts src = {.fields = smi_fields, .interval = (double)interval_ns / 1e9};
	int rc =
	    load_input(&pw, argv + first, argc - first, &src, &tl, &meta, source, sizeof source);
	cmd_promwin_free(&pw);
	if (rc) {
		diag_meta_free(&meta);
		return rc;
	}
	o.meta = &meta;
	if (trace_path && (rc = load_trace(trace_path, tl)) != 0) {
		diag_meta_free(&meta);
		tl_free(tl);
		return rc;
	}
	/* JSON is for machines: its texts stay English whatever the language. */
	o.localize = fmt != FMT_JSON;
	diag_result r;
	diag_run(tl, &o, &r);

	report_style st = {.utf8 = report_locale_utf8(),
	                   .color = fmt == FMT_TEXT && !outpath && report_want_color(stdout),
	                   .source = source,
	                   .opts = &o};
	rc = write_report(outpath, fmt, tl, &meta, &r, &st);
	diag_result_free(&r);
	tl_free(tl);
	diag_meta_free(&meta);
	return rc;
}
