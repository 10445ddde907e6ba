/* compare.c - `gpuwhy compare`: is the candidate recording faster, and what changed. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "diagnose/diag.h"
#include "report/report.h"
#include "util/err.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: gpuwhy compare BASE CANDIDATE [--format text|json] [--goal throughput|latency]\n"
		"                      [--set NAME=VALUE]...\n"
		"\n"
		"Compare two recordings of the same job: step time p50/p90/p99 with a 95 %%\n"
		"bootstrap confidence interval of the difference (%d resamples, fixed seed),\n"
		"throughput, utilization, SM activity, memory peak and power; the findings that\n"
		"went away or appeared; and what changed between the recordings (command-line\n"
		"arguments, environment variables of interest, GPU set, driver, host), with a\n"
		"warning when more than one thing changed.\n"
		"\n"
		"  --format FMT   text (default) or json\n"
		"  --goal GOAL    passed to the diagnosis of both recordings\n"
		"  --set N=V      override a diagnosis threshold (gpuwhy report --thresholds)\n"
		"\n"
		"Exit status: 0 compared (whatever the verdict), 2 usage error, 3 unreadable\n"
		"recording.\n",
		DIAG_BOOTSTRAP_RESAMPLES);
}

int cmd_compare(int argc, char **argv, const gw_global *g)
{
	(void)g;
	static const struct option opts[] = {{"format", required_argument, NULL, 'f'},
					     {"goal", required_argument, NULL, 'g'},
					     {"set", required_argument, NULL, 's'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	diag_opts o;
	diag_opts_default(&o);
	bool json = false;
	int c;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "json"))
				json = true;
			else if (strcmp(optarg, "text"))
				return gw_error(GW_EXIT_USAGE, "--format", "use text or json",
						"unknown format '%s'", optarg);
			break;
		case 'g':
			if (!diag_goal_parse(optarg, &o.goal))
				return gw_error(GW_EXIT_USAGE, "--goal", "use throughput or latency",
						"unknown goal '%s'", optarg);
			break;
		case 's':
			if (!diag_threshold_set(&o.th, optarg))
				return gw_error(GW_EXIT_USAGE, "--set",
						"NAME=VALUE with a name from gpuwhy report --thresholds",
						"cannot apply '%s'", optarg);
			break;
		case 'h': usage(stdout); return GW_EXIT_OK;
		default: usage(stderr); return GW_EXIT_USAGE;
		}
	}
	if (argc - optind != 2) {
		usage(stderr);
		return gw_error(GW_EXIT_USAGE, "compare", "gpuwhy compare before.gpuwhy after.gpuwhy",
				"two recordings expected, got %d", argc - optind);
	}
	const char *pa = argv[optind], *pb = argv[optind + 1];
	timeline *ta = NULL, *tb = NULL;
	diag_meta ma = {0}, mb = {0};
	int rc = report_load(pa, &ta, &ma);
	if (!rc)
		rc = report_load(pb, &tb, &mb);
	if (!rc) {
		diag_comparison cmp;
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
