/*
 * simgpu.c - the simulated GPU as `gpuwhy sim`'s own commands use it: the scenario --sim
 * named, the simulated library opened through the device layer, the shipped scenarios'
 * names, and one GPU's reading as `sim show` prints it.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/simgpu.h"
#include "gpu/loader.h"
#include "util/err.h"
#include "util/fail.h"
#include "util/i18n.h"

const char *train_sim_scenario(void)
{
	const char *s = getenv("GPUWHY_SIM_SCENARIO");
	return s && *s ? s : NULL;
}

/* The simulated GPU through the device layer. Returns 0 or a GW_EXIT_* code (message printed). */
int train_sim_open(gpu_ctx **ctx, const char *who)
{
	if (!train_sim_scenario())
		return gw_error(GW_EXIT_USAGE, who, N_("run it as gpuwhy --sim SCENARIO sim ..."),
		                "needs the simulated GPU");
	const char *lib = getenv("GPUWHY_NVML");
	if (!lib || !*lib) {
		lib = gpu_sim_library(NULL);
		if (!lib)
			return gw_error(GW_EXIT_ENV, who,
			                N_("build it with make, or set GPUWHY_SIM_LIB"),
			                "simulated libnvidia-ml.so.1 not found");
		setenv("GPUWHY_NVML", lib, 1);
	}
	gw_fail gf;
	gpu_open_opts go = {.failure = &gf};
	return gpu_open(&go, ctx) != 0 ? gw_fail_print(&gf) : 0;
}

static int names_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t train_sim_scenario_names(DIR *d, char **names, size_t max)
{
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < max) {
		size_t len = strlen(e->d_name);
		if (len > 5 && !strcmp(e->d_name + len - 5, ".json") &&
		    (names[n] = strndup(e->d_name, len - 5)))
			n++;
	}
	qsort(names, n, sizeof *names, names_cmp);
	return n;
}

/* A reading as sim show prints it: the integer the driver gave, "n/a" when absent. */
static void show_val(FILE *out, const gpu_values *v, gpu_metric_id id, const char *key,
                     const char *fmt)
{
	fprintf(out, "%s=", key);
	if (v->ok[id])
		fprintf(out, fmt, v->v[id]);
	else
		fputs("n/a", out);
	fputc(' ', out);
}

void train_sim_show_gpu(FILE *out, gpu_ctx *ctx, int i)
{
	gpu_values v;
	gpu_sample(ctx, i, &v);
	if (v.lost) {
		fprintf(out, "gpu=%d lost\n", i);
		return;
	}
	fprintf(out, "gpu=%d ", i);
	show_val(out, &v, GM_UTIL_GPU, "util", "%.0f");
	show_val(out, &v, GM_UTIL_MEM, "mem_util", "%.0f");
	show_val(out, &v, GM_MEM_USED, "mem_used_mib", "%.0f");
	show_val(out, &v, GM_MEM_TOTAL, "mem_total_mib", "%.0f");
	show_val(out, &v, GM_POWER_DRAW, "power_w", "%.2f");
	show_val(out, &v, GM_TEMP_GPU, "temp_c", "%.0f");
	show_val(out, &v, GM_CLK_SM, "sm_mhz", "%.0f");
	if (v.ok[GM_CLK_REASONS])
		fprintf(out, "reasons=0x%llx ", (unsigned long long)v.v[GM_CLK_REASONS]);
	else
		fputs("reasons=n/a ", out);
	if (v.ok[GM_PCIE_GEN_CUR] && v.ok[GM_PCIE_WIDTH_CUR])
		fprintf(out, "pcie=gen%.0fx%.0f ", v.v[GM_PCIE_GEN_CUR], v.v[GM_PCIE_WIDTH_CUR]);
	else
		fputs("pcie=n/a ", out);
	show_val(out, &v, GM_PCIE_REPLAY, "replay", "%.0f");
	fputs("procs=", out);
	gpu_proc procs[64];
	int n = gpu_processes(ctx, i, procs, 64), shown = 0;
	for (int k = 0; k < n; k++) {
		if (!(procs[k].type & GPU_PROC_COMPUTE))
			continue;
		fprintf(out, "%s%u:%llu", shown++ ? "," : "", procs[k].pid,
		        procs[k].mem_ok ? (unsigned long long)(procs[k].mem_bytes >> 20) : 0ULL);
	}
	if (!shown)
		fputc('-', out);
	fputc('\n', out);
}
