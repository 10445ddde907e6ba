/* record.c - `gpuwhy record`: sample GPUs, host and processes into a file until stopped. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/record_status.h"
#include "gpu/gpu.h"
#include "record/recorder.h"
#include "util/err.h"
#include "util/parse.h"
#include "util/timeutil.h"

static volatile sig_atomic_t record_stop;

static void on_signal(int sig)
{
	(void)sig;
	record_stop = 1;
}

static void usage(FILE *out)
{
	fputs(
	    "usage: gpuwhy record -o FILE [--interval DUR] [--duration DUR] [--pid PID] [--quiet]\n"
	    "\n"
	    "Samples GPUs, the host and processes into FILE until Ctrl-C / SIGTERM, until\n"
	    "--duration has passed, or (with --pid) until that process and its children exit.\n"
	    "\n"
	    "  -o, --output FILE    recording to write (an existing recording is replaced)\n"
	    "  -i, --interval DUR   sampling interval: 1s (default), 100ms, ... (10ms..1h)\n"
	    "  -d, --duration DUR   stop after this long (10s, 10m, 2h)\n"
	    "  -p, --pid PID        follow this process and its descendants\n"
	    "  -q, --quiet          no status line and no progress messages (errors only)\n"
	    "\n"
	    "On a terminal a status line shows, once a second, the time recorded, the\n"
	    "samples written, the file's size and the live top finding.\n",
	    out);
}

int cmd_record(int argc, char **argv, const gw_global *g)
{
	static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
	                                     {"interval", required_argument, NULL, 'i'},
	                                     {"duration", required_argument, NULL, 'd'},
	                                     {"pid", required_argument, NULL, 'p'},
	                                     {"quiet", no_argument, NULL, 'q'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	const char *out = NULL;
	int64_t interval = 1000000000LL, duration = 0;
	long long pid = 0;
	bool quiet = false;
	int ch;
	while ((ch = getopt_long(argc, argv, "o:i:d:p:qh", opts, NULL)) != -1) {
		switch (ch) {
		case 'o':
			out = optarg;
			break;
		case 'i':
			if (!gw_parse_duration_ns(optarg, 1000000000LL, &interval) ||
			    interval < 10000000LL || interval > 3600000000000LL)
				return gw_error(GW_EXIT_USAGE, "--interval",
				                "e.g. 1s, 500ms, 100ms",
				                "invalid interval '%s' (10ms to 1h)", optarg);
			break;
		case 'd':
			if (!gw_parse_duration_ns(optarg, 1000000000LL, &duration) || duration <= 0)
				return gw_error(GW_EXIT_USAGE, "--duration", "e.g. 30s, 10m, 2h",
				                "invalid duration '%s'", optarg);
			break;
		case 'p':
			if (!gw_parse_int(optarg, 1, 4194304, &pid))
				return gw_error(GW_EXIT_USAGE, "--pid", "a process id",
				                "invalid PID '%s'", optarg);
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			usage(stdout);
			return GW_EXIT_OK;
		default:
			usage(stderr);
			return GW_EXIT_USAGE;
		}
	}
	if (!out)
		return gw_error(GW_EXIT_USAGE, "record", "gpuwhy record -o run.gpuwhy",
		                "no output file given (-o)");
	if (optind < argc)
		return gw_error(GW_EXIT_USAGE, argv[optind],
		                "to record a command use gpuwhy run -- CMD", "unexpected argument");
	if (pid && kill((pid_t)pid, 0) != 0 && errno == ESRCH)
		return gw_error(GW_EXIT_USAGE, "--pid", "check the PID with ps", "no process %lld",
		                pid);
	gpu_ctx *gc = NULL;
	gpu_open_opts go = {.gpus = g->gpus};
	if (gpu_open(&go, &gc) != 0) {
		gc = NULL;
		fprintf(stderr, "gpuwhy: record: recording the host side only\n");
	}
	recorder *r;
	recorder_opts ro = {.path = out, .interval_ns = interval, .gpu = gc};
	/* The status line only where someone watches it: a terminal, and not --quiet. */
	record_status *st =
	    !quiet && isatty(STDERR_FILENO) ? record_status_new(gc, out, stderr) : NULL;
	if (st) {
		ro.on_snapshot = record_status_feed;
		ro.arg = st;
	}
	int rc = recorder_open(&ro, &r);
	if (rc) {
		record_status_free(st);
		gpu_close(gc);
		return rc;
	}
	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (pid)
		recorder_follow(r, (int)pid);
	recorder_start(r);
	if (!quiet)
		fprintf(stderr, "gpuwhy: recording to %s every %.3g s; Ctrl-C stops\n", out,
		        (double)interval / 1e9);
	int64_t t0 = gw_mono_ns();
	bool exited = false;
	while (!record_stop) {
		gw_sleep_ns(50000000LL);
		int64_t el = gw_mono_ns() - t0;
		if (duration && el >= duration)
			break;
		if (pid && kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
			exited = true;
			break;
		}
		record_status_tick(st, recorder_samples(r), el);
	}
	long n;
	rc = recorder_finish_stored(r, -1, &n) ? GW_EXIT_ENV : GW_EXIT_OK;
	record_status_free(st);
	if (exited && !quiet)
		fprintf(stderr, "gpuwhy: process %lld exited; recording stopped\n", pid);
	if (!quiet || rc)
		fprintf(stderr, "gpuwhy: %ld samples in %s\n", n, out);
	gpu_close(gc);
	return rc;
}
