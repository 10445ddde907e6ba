/* record.c - `gpuwhy record`: sample GPUs, host and processes into a file until stopped. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "util/opt.h"
#include "util/i18n.h"
#include "cmd/record_status.h"
#include "gpu/gpu.h"
#include "record/recorder.h"
#include "util/err.h"
#include "util/fail.h"
#include "util/parse.h"
#include "util/timeutil.h"

static volatile sig_atomic_t record_stop;

static void on_signal(int sig)
{
	(void)sig;
	record_stop = 1;
}

int cmd_record(int argc, char **argv, const gw_global *g)
{
	const char *out = NULL;
	int64_t interval = 1000000000LL, duration = 0, pid = 0;
	bool quiet = false;
	const opt_def opts[] = {
	    OPT_STRING('o', "output", "FILE", &out,
	               "recording to write (an existing recording is replaced)"),
	    OPT_DURATION('i', "interval", "DUR", &interval, 0,
	                 "sampling interval: 1s (default), 100ms, ... (10ms..1h)", .min = 0.01,
	                 .max = 3600, .why = N_("invalid interval '%s' (10ms to 1h)"),
	                 .hint = N_("e.g. 1s, 500ms, 100ms")),
	    OPT_DURATION('d', "duration", "DUR", &duration, 0,
	                 "stop after this long (10s, 10m, 2h)", .min = 1e-9, .max = 1e9,
	                 .why = N_("invalid duration '%s'"), .hint = N_("e.g. 30s, 10m, 2h")),
	    OPT_INT64('p', "pid", "PID", &pid, 1, 4194304,
	              "follow this process and its descendants", .why = N_("invalid PID '%s'"),
	              .hint = N_("a process id")),
	    OPT_FLAG('q', "quiet", &quiet, "no status line and no progress messages (errors only)"),
	    OPT_END};
	const opt_cmd oc = {
	    .name = "record",
	    .usage = "record -o FILE [--interval DUR] [--duration DUR] [--pid PID] [--quiet]",
	    .about =
	        N_("Samples GPUs, the host and processes into FILE until Ctrl-C / SIGTERM, until\n"
	           "--duration has passed, or (with --pid) until that process and its children "
	           "exit."),
	    .opts = opts,
	    .more = N_("On a terminal a status line shows, once a second, the time recorded, the\n"
	               "samples written, the file's size and the live top finding."),
	    .max_args = -1};
	int first, rc = opt_parse(&oc, argc, argv, &first);
	if (rc)
		return rc == OPT_HELP ? GW_EXIT_OK : rc;
	if (!out)
		return gw_error(GW_EXIT_USAGE, "record", N_("gpuwhy record -o run.gpuwhy"),
		                "no output file given (-o)");
	if (first < argc)
		return gw_error(GW_EXIT_USAGE, argv[first],
		                N_("to record a command use gpuwhy run -- CMD"),
		                "unexpected argument");
	if (pid && kill((pid_t)pid, 0) != 0 && errno == ESRCH)
		return gw_error(GW_EXIT_USAGE, "--pid", N_("check the PID with ps"),
		                "no process %lld", (long long)pid);
	gpu_ctx *gc = NULL;
	gw_fail gf;
	gpu_open_opts go = {.gpus = g->gpus, .failure = &gf};
	if (gpu_open(&go, &gc) != 0) {
		gc = NULL;
		gw_fail_print(&gf);
		fprintf(stderr, "gpuwhy: record: %s\n", _("recording the host side only"));
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
	rc = recorder_open(&ro, &r);
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
	if (!quiet) {
		fputs("gpuwhy: ", stderr);
		fprintf(stderr, _("recording to %s every %.3g s; Ctrl-C stops"), out,
		        (double)interval / 1e9);
		fputc('\n', stderr);
	}
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
	if (exited && !quiet) {
		fputs("gpuwhy: ", stderr);
		fprintf(stderr, _("process %lld exited; recording stopped"), (long long)pid);
		fputc('\n', stderr);
	}
	if (!quiet || rc) {
		fputs("gpuwhy: ", stderr);
		fprintf(stderr, P_("%ld sample in %s", "%ld samples in %s", n), n, out);
		fputc('\n', stderr);
	}
	gpu_close(gc);
	return rc;
}
