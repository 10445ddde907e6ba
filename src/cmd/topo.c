/* topo.c - `gpuwhy topo`: the GPU x GPU interconnect matrix, CPU/NUMA affinity, NVLink states. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "gpu/gpu.h"
#include "gpu/nvml_abi.h"
#include "util/err.h"
#include "util/jsonw.h"

static void usage(FILE *out)
{
	fputs("usage: gpuwhy topo [--format text|json]\n"
	      "\n"
	      "How each pair of GPUs is connected (NV# = # bonded NVLinks, PIX/PXB/PHB/NODE/SYS\n"
	      "as in nvidia-smi topo -m), each GPU's CPU and NUMA affinity, and NVLink link states.\n",
	      out);
}

/* The matrix cell for GPUs i and j: "X", "NV18", "PIX", ... "n/a". */
static void cell(gpu_ctx *c, int i, int j, char *out, size_t len)
{
	if (i == j) {
		snprintf(out, len, "X");
		return;
	}
	int nv = gpu_nvlink_count(c, i, j);
	if (nv > 0) {
		snprintf(out, len, "NV%d", nv);
		return;
	}
	const char *w;
	switch (gpu_topology_level(c, i, j)) {
	case NVML_TOPOLOGY_INTERNAL: w = "X"; break;
	case NVML_TOPOLOGY_SINGLE: w = "PIX"; break;
	case NVML_TOPOLOGY_MULTIPLE: w = "PXB"; break;
	case NVML_TOPOLOGY_HOSTBRIDGE: w = "PHB"; break;
	case NVML_TOPOLOGY_NODE: w = "NODE"; break;
	case NVML_TOPOLOGY_SYSTEM: w = "SYS"; break;
	default: w = "n/a"; break;
	}
	snprintf(out, len, "%s", w);
}

static void print_text(gpu_ctx *c)
{
	int n = gpu_count(c);
	char buf[16];
	printf("%-8s", "");
	for (int j = 0; j < n; j++) {
		snprintf(buf, sizeof buf, "GPU%d", gpu_static_info(c, j)->index);
		printf("%-7s", buf);
	}
	printf("%-20s %s\n", "CPU Affinity", "NUMA Affinity");
	for (int i = 0; i < n; i++) {
		const gpu_static *s = gpu_static_info(c, i);
		snprintf(buf, sizeof buf, "GPU%d", s->index);
		printf("%-8s", buf);
		for (int j = 0; j < n; j++) {
			cell(c, i, j, buf, sizeof buf);
			printf("%-7s", buf);
		}
		char numa[16] = "n/a";
		if (s->numa_ok)
			snprintf(numa, sizeof numa, "%d", s->numa_node);
		printf("%-20s %s\n", s->cpu_affinity[0] ? s->cpu_affinity : "n/a", numa);
	}
	printf("\nNVLink:\n");
	int any = 0;
	for (int i = 0; i < n; i++) {
		int st[GPU_NVLINK_MAX];
		int nl = gpu_nvlink_states(c, i, st, GPU_NVLINK_MAX);
		if (nl == 0)
			continue;
		any = 1;
		int up = 0;
		for (int l = 0; l < nl; l++)
			up += st[l];
		printf("  GPU%d: %d/%d links active", gpu_static_info(c, i)->index, up, nl);
		if (up < nl) {
			printf(" (down:");
			for (int l = 0; l < nl; l++)
				if (!st[l])
					printf(" %d", l);
			printf(")");
		}
		putchar('\n');
	}
	if (!any)
		printf("  none (no NVLink, or not supported by these GPUs)\n");
	printf("\nLegend:\n"
	       "  X    = Self\n"
	       "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes\n"
	       "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n"
	       "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
	       "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n"
	       "  PIX  = Connection traversing at most a single PCIe bridge\n"
	       "  NV#  = Connection traversing a bonded set of # NVLinks\n");
}

static void print_json(gpu_ctx *c)
{
	int n = gpu_count(c);
	jsonw w;
	char buf[16];
	jsonw_init(&w, stdout, true);
	jsonw_obj_begin(&w);
	jsonw_key(&w, "gpus");
	jsonw_arr_begin(&w);
	for (int i = 0; i < n; i++) {
		const gpu_static *s = gpu_static_info(c, i);
		jsonw_obj_begin(&w);
		jsonw_key(&w, "index");
		jsonw_int(&w, s->index);
		jsonw_key(&w, "uuid");
		jsonw_str(&w, s->uuid[0] ? s->uuid : NULL);
		jsonw_key(&w, "cpu_affinity");
		jsonw_str(&w, s->cpu_affinity[0] ? s->cpu_affinity : NULL);
		jsonw_key(&w, "numa_node");
		if (s->numa_ok)
			jsonw_int(&w, s->numa_node);
		else
			jsonw_null(&w);
		jsonw_key(&w, "links");
		jsonw_obj_begin(&w);
		for (int j = 0; j < n; j++) {
			char key[16];
			snprintf(key, sizeof key, "%d", gpu_static_info(c, j)->index);
			cell(c, i, j, buf, sizeof buf);
			jsonw_key(&w, key);
			jsonw_str(&w, buf);
		}
		jsonw_obj_end(&w);
		int st[GPU_NVLINK_MAX];
		int nl = gpu_nvlink_states(c, i, st, GPU_NVLINK_MAX);
		jsonw_key(&w, "nvlink_states");
		jsonw_arr_begin(&w);
		for (int l = 0; l < nl; l++)
			jsonw_bool(&w, st[l]);
		jsonw_arr_end(&w);
		jsonw_obj_end(&w);
	}
	jsonw_arr_end(&w);
	jsonw_obj_end(&w);
}

int cmd_topo(int argc, char **argv, const gw_global *g)
{
	static const struct option opts[] = {{"format", required_argument, NULL, 'f'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	bool json = false;
	int ch;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'f':
			if (!strcmp(optarg, "json"))
				json = true;
			else if (strcmp(optarg, "text"))
				return gw_error(GW_EXIT_USAGE, "--format", "use text or json",
						"unknown format '%s'", optarg);
			break;
		case 'h': usage(stdout); return GW_EXIT_OK;
		default: usage(stderr); return GW_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return gw_error(GW_EXIT_USAGE, argv[optind], "see gpuwhy topo --help",
				"unexpected argument");
	gpu_ctx *c;
	gpu_open_opts oo = {.gpus = g->gpus};
	int rc = gpu_open(&oo, &c);
	if (rc)
		return rc;
	if (json)
		print_json(c);
	else
		print_text(c);
	gpu_close(c);
	return GW_EXIT_OK;
}
