/* topo.c - `gpuwhy topo`: the GPU x GPU interconnect matrix, CPU/NUMA affinity, NVLink states. */
#include <stdbool.h>
#include <stdio.h>

#include "cmd/cmd.h"
#include "util/opt.h"
#include "gpu/gpu.h"
#include "smi/topo.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/fail.h"

int cmd_topo(int argc, char **argv, const gw_global *g)
{
	bool matrix = false;
	int fmt = OPT_FMT_TEXT;
	const char *root = "";
	const opt_def opts[] = {
	    OPT_FORMAT_TJ(&fmt),
	    OPT_FLAG(0, "m", &matrix, "nvidia-smi topo -m's tab-separated matrix (also --matrix)"),
	    OPT_FLAG(0, "matrix", &matrix, NULL, .hidden = true),
	    OPT_STRING(0, "sysfs-root", "DIR", &root, "with -m, read sysfs below DIR instead of /"),
	    OPT_END};
	const opt_cmd oc = {
	    .name = "topo",
	    .usage = "topo [--format text|json]\ntopo -m [--sysfs-root DIR]",
	    .about = N_(
	        "How each pair of GPUs is connected (NV# = # bonded NVLinks, PIX/PXB/PHB/NODE/SYS\n"
	        "as in nvidia-smi topo -m), each GPU's CPU and NUMA affinity, and NVLink link "
	        "states.\n-m prints nvidia-smi topo -m's tab-separated matrix with the NICs "
	        "(RDMA devices of\n/sys/class/infiniband, then PCI network devices of "
	        "/sys/class/net) placed on the\nPCIe tree from sysfs."),
	    .opts = opts,
	    .long_only = true};
	int first, orc = opt_parse(&oc, argc, argv, &first);
	if (orc)
		return orc == OPT_HELP ? GW_EXIT_OK : orc;
	bool json = fmt == OPT_FMT_JSON;
	if (matrix && json)
		return gw_error(GW_EXIT_USAGE, "-m", N_("drop --format json"),
		                "-m is nvidia-smi's text");
	gpu_ctx *c;
	gw_fail gf;
	gpu_open_opts oo = {.gpus = g->gpus, .failure = &gf};
	if (gpu_open(&oo, &c) != 0)
		return gw_fail_print(&gf);
	if (matrix)
		smi_topo_matrix(stdout, c, root);
	else if (json)
		smi_topo_json(stdout, c);
	else
		smi_topo_text(stdout, c);
	gpu_close(c);
	return GW_EXIT_OK;
}
