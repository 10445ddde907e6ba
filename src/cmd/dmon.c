/* dmon.c - `gpuwhy dmon` and `gpuwhy pmon`, nvidia-smi's device and process monitors. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/smi.h"
#include "util/err.h"
#include "util/parse.h"

static volatile sig_atomic_t mon_stop;

static void on_signal(int sig)
{
	(void)sig;
	mon_stop = 1;
}

static void usage(FILE *out, bool pmon)
{
	if (pmon)
		fputs("usage: gpuwhy pmon [-s u|m|um] [-d SECONDS] [-c COUNT] [-o D|T|DT] [-i "
		      "ID,...] "
		      "[-f FILE]\n"
		      "\n"
		      "nvidia-smi pmon's columns: per process on each GPU, "
		      "SM/memory/encoder/decoder\n"
		      "utilization (u, the default) and frame-buffer memory (m). '-' when the "
		      "driver\n"
		      "has no sample of the process in the interval.\n",
		      out);
	else
		fputs(
		    "usage: gpuwhy dmon [-s pucvmetg] [-d SECONDS] [-c COUNT] [-o D|T|DT] [-i "
		    "ID,...] "
		    "[-f FILE]\n"
		    "\n"
		    "nvidia-smi dmon's columns, one line per GPU per interval. Groups: p power "
		    "and\n"
		    "temperatures, u utilization (sm mem enc dec jpg ofa), c clocks, v power and\n"
		    "thermal violations, m frame-buffer/BAR1/protected memory, e ECC and PCIe "
		    "replay\n"
		    "errors, t PCIe throughput; g (gpuwhy's) GPM SM activity, occupancy, tensor "
		    "and\n"
		    "DRAM activity. Default puc. '-' marks a value the driver does not give.\n",
		    out);
}

static int run(int argc, char **argv, const gw_global *g, bool pmon)
{
	static const struct option opts[] = {{"s", required_argument, NULL, 's'},
	                                     {"select", required_argument, NULL, 's'},
	                                     {"d", required_argument, NULL, 'd'},
	                                     {"delay", required_argument, NULL, 'd'},
	                                     {"c", required_argument, NULL, 'c'},
	                                     {"count", required_argument, NULL, 'c'},
	                                     {"o", required_argument, NULL, 'o'},
	                                     {"options", required_argument, NULL, 'o'},
	                                     {"i", required_argument, NULL, 'i'},
	                                     {"id", required_argument, NULL, 'i'},
	                                     {"gpus", required_argument, NULL, 'i'},
	                                     {"f", required_argument, NULL, 'f'},
	                                     {"filename", required_argument, NULL, 'f'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	smi_mon_opts o = {.interval_ns = 1000000000LL};
	snprintf(o.groups, sizeof o.groups, "%s", pmon ? "u" : "puc");
	const char *ids = NULL, *file = NULL;
	long long n;
	int ch, rc;
	while ((ch = getopt_long_only(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 's':
			if ((rc = smi_mon_groups(optarg, pmon ? "um" : "pucvmetg", o.groups,
			                         sizeof o.groups)))
				return rc;
			break;
		case 'd':
			if (!gw_parse_int(optarg, 1, 86400, &n))
				return gw_error(GW_EXIT_USAGE, "-d", "whole seconds, 1 or more",
				                "invalid delay '%s'", optarg);
			o.interval_ns = n * 1000000000LL;
			break;
		case 'c':
			if (!gw_parse_int(optarg, 1, 1LL << 40, &o.count))
				return gw_error(GW_EXIT_USAGE, "-c", "a positive whole number",
				                "invalid count '%s'", optarg);
			break;
		case 'o':
			if ((rc = smi_mon_dt(optarg, &o)))
				return rc;
			break;
		case 'i':
			ids = optarg;
			break;
		case 'f':
			file = optarg;
			break;
		case 'h':
			usage(stdout, pmon);
			return GW_EXIT_OK;
		default:
			usage(stderr, pmon);
			return GW_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return gw_error(GW_EXIT_USAGE, argv[optind],
		                pmon ? "see gpuwhy pmon --help" : "see gpuwhy dmon --help",
		                "unexpected argument");
	if (file && !freopen(file, "w", stdout))
		return gw_error(GW_EXIT_ENV, file, "check the directory and permissions",
		                "cannot write: %s", strerror(errno));
	gpu_ctx *c;
	gpu_open_opts oo = {.gpus = g->gpus};
	if ((rc = gpu_open(&oo, &c)))
		return rc;
	smi_sel sel;
	if ((rc = smi_select(c, ids, &sel)) == 0) {
		struct sigaction sa = {.sa_handler = on_signal};
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		rc = pmon ? smi_pmon_run(c, &sel, &o, &mon_stop)
		          : smi_dmon_run(c, &sel, &o, &mon_stop);
	}
	gpu_close(c);
	return rc;
}

int cmd_dmon(int argc, char **argv, const gw_global *g)
{
	return run(argc, argv, g, false);
}

int cmd_pmon(int argc, char **argv, const gw_global *g)
{
	return run(argc, argv, g, true);
}
