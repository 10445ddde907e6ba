/*
 * sim_fleet.c - `gpuwhy sim fleet`: a simulated cluster's dcgm-exporter
 * series as OpenMetrics text, to load into Prometheus with promtool.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "cmd/cmd.h"
#include "fleet/fleet.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/opt.h"

int cmd_sim_fleet(int argc, char **argv)
{
	simfleet_opts o = {.nodes = 4, .gpus_per_node = 8, .hours = 6};
	int64_t step_ms = 15000;
	double start = -1;
	const char *out = NULL;
	const opt_def opts[] = {
	    OPT_INT(0, "nodes", "N", &o.nodes, 1, 10000,
	            "nodes (default 4), named node01, node02, ...", .why = N_("bad value '%s'"),
	            .hint = N_("a number from 1 to 10000")),
	    OPT_INT(0, "gpus-per-node", "G", &o.gpus_per_node, 1, 64, "GPUs per node (default 8)",
	            .why = N_("bad value '%s'"), .hint = N_("a number from 1 to 64")),
	    OPT_DOUBLE(0, "hours", "H", &o.hours, 0.01, 24 * 366, "hours of series (default 6)",
	               .why = N_("bad value '%s'"), .hint = N_("hours, like 6 or 0.5")),
	    OPT_DURATION(0, "step", "DURATION", &step_ms, 1000000, "scrape interval (default 15s)",
	                 .min = 1, .max = 3600, .why = N_("invalid step '%s'"),
	                 .hint = N_("e.g. --step 15s")),
	    OPT_DOUBLE(0, "start", "EPOCH", &start, 0, 1e11,
	               "epoch seconds of the first sample (default: H hours ago)",
	               .why = N_("bad value '%s'"), .hint = N_("epoch seconds")),
	    OPT_STRING(0, "plant", "FILE", &o.plant, "problems to plant (JSON, docs/fleet.md)"),
	    OPT_STRING('o', "output", "FILE", &out, "write to FILE (default standard output)"),
	    OPT_END};
	const opt_cmd oc = {
	    .name = "sim fleet",
	    .usage = "sim fleet [--nodes N] [--gpus-per-node G] [--hours H] [--step S] "
	             "[--plant FILE] [-o FILE.om]",
	    .about =
	        N_("Writes what a cluster's dcgm-exporters would have given Prometheus, as\n"
	           "OpenMetrics text for `promtool tsdb create-blocks-from openmetrics`, with\n"
	           "problems planted on named nodes, GPUs and jobs at given times."),
	    .opts = opts,
	    .exits = N_("0 written, 2 bad option or plant file, 3 cannot write")};
	int first;
	int rc = opt_parse(&oc, argc, argv, &first);
	if (rc)
		return rc == OPT_HELP ? GW_EXIT_OK : rc;
	if (first < argc)
		return opt_unexpected(&oc, argv[first]);
	o.step = step_ms / 1000.0;
	o.start =
	    start >= 0 ? start : floor(((double)time(NULL) - o.hours * 3600) / o.step) * o.step;
	FILE *f = out ? fopen(out, "w") : stdout;
	if (!f)
		return gw_error(GW_EXIT_ENV, out, NULL, "cannot write: %m");
	gw_fail err = {0};
	rc = simfleet_write(&o, f, &err);
	if (f != stdout && fclose(f) && !rc)
		rc = gw_fail_set(&err, GW_EXIT_ENV, out, NULL, "cannot write");
	return rc ? gw_fail_print(&err) : GW_EXIT_OK;
}
