/* topo.c - `gpuwhy topo`'s views: how each pair of GPUs is connected, each GPU's CPU and
 * NUMA affinity and its NVLink states, as text or JSON, and nvidia-smi topo -m's matrix
 * with the NICs placed on the PCIe tree from sysfs. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include "smi/topo.h"
#include "gpu/gpu_reasons.h"
#include "host/host_pcitopo.h"
#include "util/i18n.h"
#include "util/jsonw.h"

/* The matrix cell for GPUs i and j: "X", "NV18", "XGMI", "PIX", ... "n/a". */
static void cell(gpu_ctx *c, int i, int j, char *out, size_t len)
{
	if (i == j) {
		snprintf(out, len, "X");
		return;
	}
	/* AMD GPUs of one hive: XGMI is to them what NVLink is to NVIDIA's */
	if (gpu_xgmi_linked(c, i, j) > 0) {
		snprintf(out, len, "XGMI");
		return;
	}
	int nv = gpu_nvlink_count(c, i, j);
	if (nv > 0) {
		snprintf(out, len, "NV%d", nv);
		return;
	}
	const char *w = gpu_topo_level_name(gpu_topology_level(c, i, j));
	snprintf(out, len, "%s", w ? w : "n/a");
}

static const char legend[] =
    "Legend:\n"
    "\n"
    "  X    = Self\n"
    "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes "
    "(e.g., QPI/UPI)\n"
    "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges "
    "within a NUMA node\n"
    "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
    "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host "
    "Bridge)\n"
    "  PIX  = Connection traversing at most a single PCIe bridge\n"
    "  NV#  = Connection traversing a bonded set of # NVLinks\n";

/* Whether any two of the GPUs are linked by XGMI (the legend then names it). */
static bool any_xgmi(gpu_ctx *c)
{
	int n = gpu_count(c);
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			if (gpu_xgmi_linked(c, i, j) > 0)
				return true;
	return false;
}

static const char *level_word(int lvl)
{
	if (gpu_topo_level_is_internal(lvl))
		return " X ";
	const char *w = gpu_topo_level_name(lvl);
	return w ? w : "N/A";
}

/*
 * nvidia-smi topo -m: tab-separated, " X " on the diagonal, then CPU
 * affinity, NUMA affinity and GPU NUMA ID (the NUMA node of the GPU's own
 * memory on coherent Grace systems; gpuwhy has no NVML call for it: N/A).
 */
void smi_topo_matrix(FILE *out, gpu_ctx *c, const char *root)
{
	int n = gpu_count(c);
	pcitopo_nic nics[PCITOPO_MAX_NICS];
	int nn = pcitopo_nics(root, nics, PCITOPO_MAX_NICS);
	char buf[16];
	/* On a terminal nvidia-smi underlines the header row (after its first tab); never in a
	 * pipe. */
	bool tty = isatty(STDOUT_FILENO);
	fprintf(out, "\t%s", tty ? "\033[4m" : "");
	for (int j = 0; j < n; j++)
		fprintf(out, j ? "\tGPU%d" : "GPU%d", gpu_static_info(c, j)->index);
	for (int k = 0; k < nn; k++)
		fprintf(out, "\tNIC%d", k);
	fprintf(out, "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID%s\n", tty ? "\033[0m" : "");
	for (int i = 0; i < n; i++) {
		const gpu_static *s = gpu_static_info(c, i);
		fprintf(out, "GPU%d", s->index);
		for (int j = 0; j < n; j++) {
			cell(c, i, j, buf, sizeof buf);
			fprintf(out, "\t%s", i == j ? " X " : strcmp(buf, "n/a") ? buf : "N/A");
		}
		for (int k = 0; k < nn; k++)
			fprintf(out, "\t%s",
			        level_word(pcitopo_level(root, s->pci_bus_id, nics[k].bdf)));
		char numa[16] = "N/A";
		if (s->numa_ok)
			snprintf(numa, sizeof numa, "%d", s->numa_node);
		fprintf(out, "\t%s\t%s\t\tN/A\n", s->cpu_affinity[0] ? s->cpu_affinity : "N/A",
		        numa);
	}
	for (int k = 0; k < nn; k++) {
		fprintf(out, "NIC%d", k);
		for (int j = 0; j < n; j++)
			fprintf(out, "\t%s",
			        level_word(pcitopo_level(root, nics[k].bdf,
			                                 gpu_static_info(c, j)->pci_bus_id)));
		for (int m = 0; m < nn; m++)
			fprintf(out, "\t%s",
			        level_word(pcitopo_level(root, nics[k].bdf, nics[m].bdf)));
		fprintf(out, "\t\t\t\t\n");
	}
	fprintf(out, "\n%s", legend);
	if (any_xgmi(c))
		fprintf(
		    out,
		    "  XGMI = Connection traversing AMD's XGMI links between GPUs of one hive\n");
	if (nn) {
		fprintf(out, "\nNIC Legend:\n\n");
		for (int k = 0; k < nn; k++)
			fprintf(out, "  NIC%d: %s\n", k, nics[k].name);
		fputc('\n', out);
	}
}

/* s padded on the right to w display columns (a CJK character takes two). */
static void put_left(FILE *out, const char *s, int w)
{
	wchar_t ws[64];
	size_t n = mbstowcs(ws, s, sizeof ws / sizeof *ws);
	int cols = n == (size_t)-1 ? (int)strlen(s) : wcswidth(ws, n);
	if (cols < 0)
		cols = (int)strlen(s);
	fprintf(out, "%s%*s", s, cols < w ? w - cols : 0, "");
}

static void print_nvlink(FILE *out, gpu_ctx *c)
{
	int n = gpu_count(c), any = 0;
	fprintf(out, "\n%s\n", _("NVLink:"));
	for (int i = 0; i < n; i++) {
		int st[GPU_NVLINK_MAX];
		int nl = gpu_nvlink_states(c, i, st, GPU_NVLINK_MAX);
		if (nl == 0)
			continue;
		any = 1;
		int up = 0;
		for (int l = 0; l < nl; l++)
			up += st[l];
		fprintf(out, P_("  GPU%d: %d/%d link active", "  GPU%d: %d/%d links active", nl),
		        gpu_static_info(c, i)->index, up, nl);
		if (up < nl) {
			char down[GPU_NVLINK_MAX * 4 + 1] = "";
			for (int l = 0; l < nl; l++)
				if (!st[l])
					snprintf(down + strlen(down), sizeof down - strlen(down),
					         " %d", l);
			fprintf(out, _(" (down:%s)"), down);
		}
		fputc('\n', out);
	}
	if (!any)
		fprintf(out, "%s\n", _("  none (no NVLink, or not supported by these GPUs)"));
}

void smi_topo_text(FILE *out, gpu_ctx *c)
{
	int n = gpu_count(c);
	char buf[16];
	const char *na = _("n/a");
	fprintf(out, "%-8s", "");
	for (int j = 0; j < n; j++) {
		snprintf(buf, sizeof buf, "GPU%d", gpu_static_info(c, j)->index);
		fprintf(out, "%-7s", buf);
	}
	put_left(out, _("CPU Affinity"), 20);
	fprintf(out, " %s\n", _("NUMA Affinity"));
	for (int i = 0; i < n; i++) {
		const gpu_static *s = gpu_static_info(c, i);
		snprintf(buf, sizeof buf, "GPU%d", s->index);
		fprintf(out, "%-8s", buf);
		for (int j = 0; j < n; j++) {
			cell(c, i, j, buf, sizeof buf);
			put_left(out, strcmp(buf, "n/a") ? buf : na, 7);
		}
		char numa[32];
		if (s->numa_ok)
			snprintf(numa, sizeof numa, "%d", s->numa_node);
		else
			snprintf(numa, sizeof numa, "%s", na);
		put_left(out, s->cpu_affinity[0] ? s->cpu_affinity : na, 20);
		fprintf(out, " %s\n", numa);
	}
	print_nvlink(out, c);
	for (int i = 0; i < n; i++) {
		gpu_mig m[GPU_MIG_MAX];
		int nm = gpu_mig_devices(c, i, m, GPU_MIG_MAX);
		if (nm) {
			fputc('\n', out);
			fprintf(out, _("MIG devices of GPU%d (share its PCIe and NVLink paths):"),
			        gpu_static_info(c, i)->index);
			fputc('\n', out);
		}
		for (int k = 0; k < nm; k++)
			fprintf(out, "  MIG %d  %-8s GI %u CI %u  %s\n", m[k].index,
			        m[k].profile[0] ? m[k].profile : na, m[k].gi, m[k].ci, m[k].uuid);
	}
	fprintf(out, "\n%s",
	        _("Legend:\n"
	          "  X    = Self\n"
	          "  SYS  = Connection traversing PCIe as well as the SMP interconnect "
	          "between NUMA nodes\n"
	          "  NODE = Connection traversing PCIe as well as the interconnect between "
	          "PCIe Host Bridges within a NUMA node\n"
	          "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge "
	          "(typically the CPU)\n"
	          "  PXB  = Connection traversing multiple PCIe bridges (without "
	          "traversing the PCIe Host Bridge)\n"
	          "  PIX  = Connection traversing at most a single PCIe bridge\n"
	          "  NV#  = Connection traversing a bonded set of # NVLinks\n"));
	if (any_xgmi(c))
		fprintf(out, "%s",
		        _("  XGMI = Connection traversing AMD's XGMI links between GPUs of one "
		          "hive\n"));
}

void smi_topo_json(FILE *out, gpu_ctx *c)
{
	int n = gpu_count(c);
	jsonw w;
	char buf[16];
	jsonw_init(&w, out, true);
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
