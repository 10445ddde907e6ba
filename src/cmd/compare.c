/* compare.c - `gpuwhy compare`: is the candidate recording faster, and what changed. */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "util/opt.h"
#include "diagnose/diag.h"
#include "report/report.h"
#include "util/err.h"

int cmd_compare(int argc, char **argv, const gw_global *g)
{
	diag_opts o;
	diag_opts_default(&o);
	int fmt = OPT_FMT_TEXT;
	const opt_def opts[] = {
	    OPT_FORMAT_TJ(&fmt),
	    OPT_CALL(0, "goal", "GOAL", report_opt_goal,
	             "passed to the diagnosis of both recordings: throughput or latency"),
	    OPT_CALL(0, "set", "N=V", report_opt_set,
	             "override a diagnosis threshold (gpuwhy report --thresholds)",
	             .hint = N_("NAME=VALUE with a name from gpuwhy report --thresholds")),
	    OPT_END};
	char about[1024];
	snprintf(
	    about, sizeof about,
	    _("Compare two recordings of the same job: step time p50/p90/p99 with a 95 %%\n"
	      "bootstrap confidence interval of the difference (%d resamples, fixed seed),\n"
	      "throughput, utilization, SM activity, memory peak and power; the findings that\n"
	      "went away or appeared; and what changed between the recordings (command-line\n"
	      "arguments, environment variables of interest, GPU set, driver, host), with a\n"
	      "warning when more than one thing changed."),
	    DIAG_BOOTSTRAP_RESAMPLES);
	const opt_cmd oc = {
	    .name = "compare",
	    .usage = "compare BASE CANDIDATE [--format text|json] [--goal throughput|latency]\n"
	             "               [--set NAME=VALUE]...",
	    .about = about,
	    .opts = opts,
	    .more = N_("Exit code 0 whatever the verdict."),
	    .max_args = -1,
	    .ctx = &o};
	int first, prc = opt_parse(&oc, argc, argv, &first);
	if (prc)
		return prc == OPT_HELP ? GW_EXIT_OK : prc;
	bool json = fmt == OPT_FMT_JSON;
	if (argc - first != 2) {
		return gw_error(GW_EXIT_USAGE, "compare",
		                N_("gpuwhy compare before.gpuwhy after.gpuwhy"),
		                "two recordings expected, got %d", argc - first);
	}
	const char *pa = argv[first], *pb = argv[first + 1];
	timeline *ta = NULL, *tb = NULL;
	diag_meta ma = {0}, mb = {0};
	int rc = report_load(pa, &ta, &ma);
	if (!rc)
		rc = report_load(pb, &tb, &mb);
	if (!rc) {
		diag_comparison cmp;
		o.localize = !json; /* JSON is for machines: English whatever the language */
		diag_compare(ta, &ma, tb, &mb, &o, &cmp);
		if (json) {
			compare_json(stdout, &cmp, pa, pb);
		} else {
			report_style st = {.utf8 = report_locale_utf8(),
			                   .color = report_want_color(stdout),
			                   .opts = &o};
			compare_text(stdout, &cmp, pa, pb, &st);
		}
		diag_comparison_free(&cmp);
		if (fflush(stdout) != 0)
			rc = gw_error(GW_EXIT_ENV, "standard output", NULL, "write failed");
	}
	tl_free(ta);
	tl_free(tb);
	diag_meta_free(&ma);
	diag_meta_free(&mb);
	return rc;
}
