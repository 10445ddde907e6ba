/* dmon.c - `gpuwhy dmon` and `gpuwhy pmon`, nvidia-smi's device and process monitors. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "util/opt.h"
#include "smi/smi.h"
#include "util/err.h"
#include "util/fail.h"
#include "util/i18n.h"
#include "util/parse.h"

static volatile sig_atomic_t mon_stop;

static void on_signal(int sig)
{
	(void)sig;
	mon_stop = 1;
}

typedef struct {
	smi_mon_opts o;
	bool pmon;
} mon_ctx;

static int set_groups(const opt_def *d, const char *v, void *ctx)
{
	mon_ctx *m = ctx;
	return smi_mon_groups(v, m->pmon ? "um" : "pucvmetg", m->o.groups, sizeof m->o.groups);
}

static int set_delay(const opt_def *d, const char *v, void *ctx)
{
	long long n;
	if (!gw_parse_int(v, 1, 86400, &n))
		return gw_error(GW_EXIT_USAGE, "-d", N_("whole seconds, 1 or more"),
		                "invalid delay '%s'", v);
	((mon_ctx *)ctx)->o.interval_ns = n * 1000000000LL;
	return 0;
}

static int set_count(const opt_def *d, const char *v, void *ctx)
{
	if (!gw_parse_int(v, 1, 1LL << 40, &((mon_ctx *)ctx)->o.count))
		return gw_error(GW_EXIT_USAGE, "-c", N_("a positive whole number"),
		                "invalid count '%s'", v);
	return 0;
}

static int set_dt(const opt_def *d, const char *v, void *ctx)
{
	return smi_mon_dt(v, &((mon_ctx *)ctx)->o);
}

#define MON_ALIAS(l, a, fn) OPT_CALL(0, l, a, fn, NULL, .hidden = true)

static int run(int argc, char **argv, const gw_global *g, bool pmon)
{
	mon_ctx m = {.o = {.interval_ns = 1000000000LL}, .pmon = pmon};
	smi_mon_opts *o = &m.o;
	snprintf(o->groups, sizeof o->groups, "%s", pmon ? "u" : "puc");
	const char *ids = NULL, *file = NULL;
	int rc;
	const opt_def opts[] = {
	    OPT_CALL(0, "s", pmon ? "u|m|um" : "pucvmetg", set_groups,
	             pmon ? N_("u utilization (default), m frame-buffer memory (also --select)")
	                  : N_("the column groups (default puc; also --select)")),
	    MON_ALIAS("select", "GROUPS", set_groups),
	    OPT_CALL(0, "d", "SECONDS", set_delay, "interval in whole seconds (also --delay)"),
	    MON_ALIAS("delay", "SECONDS", set_delay),
	    OPT_CALL(0, "c", "COUNT", set_count, "stop after COUNT samples (also --count)"),
	    MON_ALIAS("count", "COUNT", set_count),
	    OPT_CALL(0, "o", "D|T|DT", set_dt, "prefix each line with the date, time or both"),
	    MON_ALIAS("options", "D|T|DT", set_dt),
	    OPT_STRING(0, "i", "ID,...", &ids, "only these GPUs (also --id, --gpus)"),
	    OPT_STRING(0, "id", "ID,...", &ids, NULL, .hidden = true),
	    OPT_STRING(0, "gpus", "ID,...", &ids, NULL, .hidden = true),
	    OPT_STRING(0, "f", "FILE", &file, "write to FILE (also --filename)"),
	    OPT_STRING(0, "filename", "FILE", &file, NULL, .hidden = true),
	    OPT_END};
	const opt_cmd oc = {
	    .name = pmon ? "pmon" : "dmon",
	    .usage =
	        pmon ? "pmon [-s u|m|um] [-d SECONDS] [-c COUNT] [-o D|T|DT] [-i ID,...] [-f FILE]"
	             : "dmon [-s pucvmetg] [-d SECONDS] [-c COUNT] [-o D|T|DT] [-i ID,...] [-f "
	               "FILE]",
	    .about =
	        pmon ? N_("nvidia-smi pmon's columns: per process on each GPU, "
	                  "SM/memory/encoder/decoder\nutilization (u, the default) and "
	                  "frame-buffer memory (m). '-' when the driver\nhas no sample of the "
	                  "process in the interval.")
	             : N_("nvidia-smi dmon's columns, one line per GPU per interval. Groups: p "
	                  "power and\ntemperatures, u utilization (sm mem enc dec jpg ofa), c "
	                  "clocks, v power and\nthermal violations, m frame-buffer/BAR1/protected "
	                  "memory, e ECC and PCIe replay\nerrors, t PCIe throughput; g (gpuwhy's) "
	                  "GPM SM activity, occupancy, tensor and\nDRAM activity. Default puc. '-' "
	                  "marks a value the driver does not give."),
	    .opts = opts,
	    .long_only = true,
	    .ctx = &m};
	int first;
	if ((rc = opt_parse(&oc, argc, argv, &first)))
		return rc == OPT_HELP ? GW_EXIT_OK : rc;
	if (file && !freopen(file, "w", stdout))
		return gw_error(GW_EXIT_ENV, file, N_("check the directory and permissions"),
		                "cannot write: %s", strerror(errno));
	gpu_ctx *c;
	gw_fail gf;
	gpu_open_opts oo = {.gpus = g->gpus, .failure = &gf};
	if (gpu_open(&oo, &c) != 0)
		return gw_fail_print(&gf);
	smi_sel sel;
	if ((rc = smi_select(c, ids, &sel)) == 0) {
		struct sigaction sa = {.sa_handler = on_signal};
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		rc = pmon ? smi_pmon_run(c, &sel, o, &mon_stop)
		          : smi_dmon_run(c, &sel, o, &mon_stop);
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
