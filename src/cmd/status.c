/* status.c - `gpuwhy status`: one screen of every GPU and its processes, like nvidia-smi. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cmd/cmd.h"
#include "smi/smi.h"
#include "smi/status.h"
#include "util/opt.h"
#include "gpu/gpu.h"
#include "host/host_pidbrief.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/fail.h"

int cmd_status(int argc, char **argv, const gw_global *g)
{
	bool smi = false;
	int fmt = OPT_FMT_TEXT;
	const opt_def opts[] = {OPT_FORMAT_TJ(&fmt),
	                        OPT_FLAG(0, "nvidia-smi", &smi, "nvidia-smi's boxed table instead"),
	                        OPT_END};
	const opt_cmd oc = {
	    .name = "status",
	    .usage = "status [--format text|json] [--nvidia-smi]",
	    .about = N_(
	        "Driver, CUDA driver version, every GPU (utilization, memory, power against the\n"
	        "limit, temperature, clocks, P-state, PCIe link, clock event reasons in words)\n"
	        "and the processes on each GPU (PID, user, GPU memory, SM %, command)."),
	    .opts = opts};
	int first, orc = opt_parse(&oc, argc, argv, &first);
	if (orc)
		return orc == OPT_HELP ? GW_EXIT_OK : orc;
	bool json = fmt == OPT_FMT_JSON;
	gpu_ctx *c;
	gw_fail gf;
	gpu_open_opts oo = {.gpus = g->gpus, .failure = &gf};
	if (gpu_open(&oo, &c) != 0)
		return gw_fail_print(&gf);
	char smi_note[1024];
	/* which AMD SMI library filled AMD fields, or why none did (docs/amd.md) */
	if (gpu_amdsmi_note(c, smi_note, sizeof smi_note)[0])
		gw_debug("amd-smi: %s", smi_note);
	int n = gpu_count(c);
	gpu_values *vals = calloc(n ? (size_t)n : 1, sizeof *vals);
	gpu_wait_rate_window(c);
	for (int i = 0; i < n; i++)
		gpu_sample(c, i, &vals[i]);
	status_proc *ps = calloc(STATUS_MAX_PROCS, sizeof *ps);
	int np = status_collect_procs(c, ps, STATUS_MAX_PROCS);
	bool nested = host_pidns_nested("/proc");
	if (json) {
		status_render_json(stdout, c, vals, ps, np, nested);
	} else if (smi) {
		status_smi_print(c, vals);
	} else {
		char when[64];
		time_t t = time(NULL);
		struct tm tm;
		localtime_r(&t, &tm);
		strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
		printf(P_("gpuwhy %s  driver %s  CUDA %s  %d GPU  %s\n\n",
		          "gpuwhy %s  driver %s  CUDA %s  %d GPUs  %s\n\n", n),
		       GPUWHY_VERSION, gpu_driver_version(c)[0] ? gpu_driver_version(c) : _("n/a"),
		       gpu_cuda_driver_version(c)[0] ? gpu_cuda_driver_version(c) : _("n/a"), n,
		       when);
		for (int i = 0; i < n; i++)
			status_render_gpu(stdout, c, i, &vals[i]);
		status_render_procs(stdout, ps, np, nested);
	}
	free(ps);
	free(vals);
	gpu_close(c);
	return GW_EXIT_OK;
}
