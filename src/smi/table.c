/*
 * table.c - `gpuwhy status --nvidia-smi`: nvidia-smi's boxed table, column for
 * column (91 wide), for people who compare screenshots. The first line names
 * gpuwhy and its version where nvidia-smi names itself.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "smi/smi.h"

#define RULE                                                                                       \
	"+-----------------------------------------+------------------------+--------------------" \
	"--+"
#define MIG_RULE                                                                                   \
	"+------------------+----------------------------------+-----------+---------------------" \
	"--+"
#define WIDE                                                                                       \
	"+---------------------------------------------------------------------------------------" \
	"--+"

static const char *onoff(const gpu_values *v, gpu_metric_id id, const char *on, const char *off)
{
	return !v->ok[id] ? "N/A" : v->v[id] != 0 ? on : off;
}

static const char *compute_mode(const gpu_values *v)
{
	if (!v->ok[GM_COMPUTE_MODE])
		return "N/A";
	switch ((int)v->v[GM_COMPUTE_MODE]) {
	case 0:
		return "Default";
	case 1:
		return "E. Thread";
	case 2:
		return "Prohibited";
	case 3:
		return "E. Process";
	default:
		return "N/A";
	}
}

static void num(char *out, size_t len, const gpu_values *v, gpu_metric_id id, const char *fmt)
{
	if (v->ok[id])
		snprintf(out, len, fmt, v->v[id]);
	else
		snprintf(out, len, "N/A");
}

static void gpu_rows(gpu_ctx *c, int i, const gpu_values *v)
{
	const gpu_static *s = gpu_static_info(c, i);
	char fan[8], temp[8], perf[8], pwr[16], cap[16], used[24], total[24], util[8], ecc[24];
	num(fan, sizeof fan, v, GM_FAN, "%.0f%%");
	num(temp, sizeof temp, v, GM_TEMP_GPU, "%.0fC");
	num(perf, sizeof perf, v, GM_PSTATE, "P%.0f");
	num(pwr, sizeof pwr, v, GM_POWER_DRAW, "%.0fW");
	num(cap, sizeof cap, v, GM_POWER_ENFORCED_LIMIT, "%.0fW");
	num(used, sizeof used, v, GM_MEM_USED, "%.0fMiB");
	num(total, sizeof total, v, GM_MEM_TOTAL, "%.0fMiB");
	num(util, sizeof util, v, GM_UTIL_GPU, "%.0f%%");
	/* ECC off prints Off, as nvidia-smi; unknown N/A. In MIG mode the errors
	 * are counted per instance and nvidia-smi 590 shows the mode: On. */
	if (v->ok[GM_ECC_MODE_CUR] && v->v[GM_ECC_MODE_CUR] == 0)
		snprintf(ecc, sizeof ecc, "Off");
	else if (v->ok[GM_ECC_MODE_CUR] && v->ok[GM_MIG_CURRENT] && v->v[GM_MIG_CURRENT] != 0)
		snprintf(ecc, sizeof ecc, "On");
	else
		num(ecc, sizeof ecc, v, GM_ECC_UNCORR_VOL, "%.0f");
	/* Segments 41, 24 and 22 wide between the bars. */
	if (v->lost) {
		printf("| %3d  %-31.31s%-4s|%19s %3s |%21s |\n", s->index, s->name, "",
		       s->pci_bus_id, "", "ERR!");
		printf("| %3s%6s%6s%16s / %5s |%11s / %9s |%8s%13s |\n", "ERR!", "", "", "ERR!", "",
		       "", "", "ERR!", "");
		printf("|%41s|%24s|%21s |\n", "", "", "");
		return;
	}
	printf("| %3d  %-31.31s%-4s|%19s %3s |%21s |\n", s->index, s->name[0] ? s->name : "N/A",
	       onoff(v, GM_PERSISTENCE, "On", "Off"), s->pci_bus_id[0] ? s->pci_bus_id : "N/A",
	       onoff(v, GM_DISPLAY_ACTIVE, "On", "Off"), ecc);
	printf("| %3s%6s%6s%16s / %5s |%11s / %9s |%8s%13s |\n", fan, temp, perf, pwr, cap, used,
	       total, util, compute_mode(v));
	printf("|%41s|%24s|%21s |\n", "", "", onoff(v, GM_MIG_CURRENT, "Enabled", "Disabled"));
}

/* nvidia-smi's "MIG devices:" box: 18, 34, 11 and 23 wide. */
static void mig_box(gpu_ctx *c)
{
	bool any = false;
	gpu_mig m[GPU_MIG_MAX];
	for (int i = 0; i < gpu_count(c); i++) {
		int n = gpu_mig_devices(c, i, m, GPU_MIG_MAX);
		for (int k = 0; k < n; k++) {
			const gpu_mig *d = &m[k];
			if (!any) {
				printf("\n" WIDE "\n"
				       "| MIG devices:                                             "
				       "                               |\n" MIG_RULE "\n"
				       "| GPU  GI  CI  MIG |              Shared Memory-Usage |    "
				       "    Vol|        Shared         |\n"
				       "|      ID  ID  Dev |                Shared BAR1-Usage | SM "
				       "    Unc| CE ENC  DEC  OFA  JPG |\n"
				       "|                  |                                  |    "
				       "    ECC|                       |\n"
				       "|==================+==================================+===="
				       "=======+=======================|\n");
				any = true;
			}
			char gi[8] = "N/A", ci[8] = "N/A", used[24] = "N/A", total[24] = "N/A";
			if (d->ids_ok) {
				snprintf(gi, sizeof gi, "%u", d->gi);
				snprintf(ci, sizeof ci, "%u", d->ci);
			}
			if (d->mem_ok) {
				snprintf(used, sizeof used, "%.0fMiB", d->mem_used_mib);
				snprintf(total, sizeof total, "%.0fMiB", d->mem_total_mib);
			}
			char sm[8] = "N/A";
			if (d->attr_ok)
				snprintf(sm, sizeof sm, "%u", d->sm_count);
			printf("|%3d %4s %3s %3d  |%19s / %8s    |%3s%7s |",
			       gpu_static_info(c, i)->index, gi, ci, d->index, used, total, sm,
			       "N/A");
			if (d->attr_ok)
				printf("%3u%4u%5u%5u%5u |\n", d->ce_count, d->enc_count,
				       d->dec_count, d->ofa_count, d->jpg_count);
			else
				printf("%22s |\n", "N/A");
			char b1u[24] = "N/A", b1t[24] = "N/A";
			if (d->bar1_ok) {
				snprintf(b1u, sizeof b1u, "%.0fMiB", d->bar1_used_mib);
				snprintf(b1t, sizeof b1t, "%.0fMiB", d->bar1_total_mib);
			}
			printf("|%18s|%19s / %8s    |%11s|%23s|\n", "", b1u, b1t, "", "");
			printf(MIG_RULE "\n");
		}
	}
}

static void procs(gpu_ctx *c)
{
	printf("\n" WIDE "\n"
	       "| Processes:                                                                       "
	       "       |\n"
	       "|  GPU   GI   CI              PID   Type   Process name                        GPU "
	       "Memory |\n"
	       "|        ID   ID                                                               "
	       "Usage      |\n"
	       "|=================================================================================="
	       "=======|\n");
	gpu_proc p[256];
	int any = 0;
	for (int i = 0; i < gpu_count(c); i++) {
		int n = gpu_processes(c, i, p, 256);
		for (int k = 0; k < n; k++) {
			char name[256], mem[24];
			if (!gpu_process_name(c, p[k].pid, name, sizeof name))
				snprintf(name, sizeof name, "N/A");
			if (p[k].mem_ok)
				snprintf(mem, sizeof mem, "%lluMiB",
				         (unsigned long long)(p[k].mem_bytes / 1048576ULL));
			else
				snprintf(mem, sizeof mem, "N/A");
			unsigned t = p[k].type;
			const char *type = t == (GPU_PROC_COMPUTE | GPU_PROC_GRAPHICS) ? "C+G"
			                   : (t & GPU_PROC_GRAPHICS)                   ? "G"
			                                                               : "C";
			/* Long names keep their end, where the program's name is, as nvidia-smi
			 * does. */
			size_t nl = strlen(name);
			const char *shown = nl > 36 ? name + nl - 33 : name;
			printf("|%5d%6s%5s%16u%7s   %s%-*s%10s |\n", gpu_static_info(c, i)->index,
			       "N/A", "N/A", p[k].pid, type, nl > 36 ? "..." : "",
			       nl > 36 ? 33 : 36, shown, mem);
			any = 1;
		}
	}
	if (!any)
		printf("|  No running processes found                                              "
		       "               |\n");
	printf(WIDE "\n");
}

void status_smi_print(gpu_ctx *c, const gpu_values *vals)
{
	char when[64], ver[40];
	time_t t = time(NULL);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(when, sizeof when, "%a %b %e %H:%M:%S %Y", &tm);
	printf("%s       \n" WIDE "\n", when);
	snprintf(ver, sizeof ver, "%s", GPUWHY_VERSION);
	const char *drv = gpu_driver_version(c), *cuda = gpu_cuda_driver_version(c);
	printf("| gpuwhy %-27sDriver Version: %-15sCUDA Version: %-9s|\n", ver,
	       drv[0] ? drv : "N/A", cuda[0] ? cuda : "N/A");
	printf(RULE "\n"
	            "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile "
	            "Uncorr. ECC |\n"
	            "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util "
	            " Compute M. |\n"
	            "|                                         |                        |          "
	            "     MIG M. |\n"
	            "|=========================================+========================+=========="
	            "============|\n");
	for (int i = 0; i < gpu_count(c); i++) {
		gpu_rows(c, i, &vals[i]);
		printf(RULE "\n");
	}
	mig_box(c);
	procs(c);
}
