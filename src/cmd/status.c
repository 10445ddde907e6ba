/* status.c - `gpuwhy status`: one screen of every GPU and its processes, like nvidia-smi. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

#include "cmd/cmd.h"
#include "smi/smi.h"
#include "util/opt.h"
#include "gpu/cell.h"
#include "gpu/gpu.h"
#include "host/host_pidbrief.h"
#include "util/termsafe.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/textwidth.h"
#include "util/fail.h"
#include "util/jsonw.h"

#define STATUS_MAX_PROCS 256

/*
 * "123" or "n/a" into buf, with a printf format for the number that may hold
 * its unit ("%.0fC"): an absent value is "n/a" alone, never "n/aC".
 */
static const char *num(const gpu_values *v, gpu_metric_id id, const char *fmt, char *buf,
                       size_t len)
{
	if (!v->ok[id])
		snprintf(buf, len, "%s", _("n/a"));
	else
		snprintf(buf, len, fmt, v->v[id]);
	return buf;
}

/* "used / total unit", or "n/a" alone when neither is known. */
static const char *pair_unit(const gpu_values *v, gpu_metric_id a, gpu_metric_id b,
                             const char *unit, char *buf, size_t len)
{
	if (!v->ok[a] && !v->ok[b]) {
		snprintf(buf, len, "%s", _("n/a"));
		return buf;
	}
	char x[24], y[24];
	num(v, a, "%.0f", x, sizeof x);
	num(v, b, "%.0f", y, sizeof y);
	/* the unit goes with a value, never with n/a (an APU's power has no cap: "33 W / n/a") */
	if (!v->ok[b])
		snprintf(buf, len, "%s %s / %s", x, unit, y);
	else
		snprintf(buf, len, "%s / %s %s", x, y, unit);
	return buf;
}

/* The PCIe link as "Gen5/5 x16/16" (current/max), or "n/a" when nothing of it is known. */
static const char *pcie_text(const gpu_values *v, char *buf, size_t len)
{
	static const gpu_metric_id ids[] = {GM_PCIE_GEN_CUR, GM_PCIE_GEN_MAX, GM_PCIE_WIDTH_CUR,
	                                    GM_PCIE_WIDTH_MAX};
	char t[4][12];
	bool any = false;
	for (int k = 0; k < 4; k++) {
		num(v, ids[k], "%.0f", t[k], sizeof t[k]);
		any |= v->ok[ids[k]] != 0;
	}
	if (!any)
		snprintf(buf, len, "%s", _("n/a"));
	else
		snprintf(buf, len, "Gen%s/%s x%s/%s", t[0], t[1], t[2], t[3]);
	return buf;
}

static void reason_text(const gpu_values *v, char *out, size_t len)
{
	if (!v->ok[GM_CLK_REASONS]) {
		snprintf(out, len, "%s", _("n/a"));
		return;
	}
	gpu_reasons_human((uint64_t)v->v[GM_CLK_REASONS], out, len);
}

static void print_gpu_text(gpu_ctx *c, int i, const gpu_values *v)
{
	const gpu_static *s = gpu_static_info(c, i);
	char a[32], b[80], d[80], g[32], h[32];
	char name[GW_TERM_SAFE_LEN(28)], bus[GW_TERM_SAFE_LEN(17)];
	gw_term_safe(s->name[0] ? s->name : "n/a", name, sizeof name);
	gw_term_safe(s->pci_bus_id[0] ? s->pci_bus_id : "n/a", bus, sizeof bus);
	printf("GPU %-2d %-28.28s %-17s ", s->index, name, bus);
	if (v->lost) {
		/* Xid is NVIDIA's word: an AMD card is worded from what amdgpu logs */
		if (!strcmp(s->vendor, "amd"))
			printf("%s\n",
			       _("LOST: the card left the bus or its driver; check the kernel "
			         "log for amdgpu GPU reset and ring timeout lines"));
		else
			printf("%s\n",
			       _("LOST: fell off the bus (GPU_IS_LOST); check the kernel log "
			         "for Xid 79"));
		return;
	}
	char pst[32];
	if (v->ok[GM_PSTATE])
		snprintf(pst, sizeof pst, "P%.0f", v->v[GM_PSTATE]);
	else
		snprintf(pst, sizeof pst, "%s", _("n/a"));
	printf("%s\n", pst);
	printf(_("       util %5s  mem %s  power %s  temp %s (slowdown %s)\n"),
	       num(v, GM_UTIL_GPU, "%.0f%%", a, sizeof a),
	       pair_unit(v, GM_MEM_USED, GM_MEM_TOTAL, "MiB", b, sizeof b),
	       pair_unit(v, GM_POWER_DRAW, GM_POWER_ENFORCED_LIMIT, "W", d, sizeof d),
	       num(v, GM_TEMP_GPU, "%.0fC", g, sizeof g),
	       num(v, GM_TEMP_SLOWDOWN, "%.0fC", h, sizeof h));
	char sm[80], mm[32], link[80];
	printf(_("       clocks SM %s  mem %s  PCIe %s"),
	       pair_unit(v, GM_CLK_SM, GM_CLK_MAX_SM, "MHz", sm, sizeof sm),
	       num(v, GM_CLK_MEM, "%.0f MHz", mm, sizeof mm), pcie_text(v, link, sizeof link));
	if (v->ok[GM_GPM_SM_ACTIVE])
		printf(_("  SM active %.0f%%"), v->v[GM_GPM_SM_ACTIVE]);
	putchar('\n');
	char reasons[256];
	reason_text(v, reasons, sizeof reasons);
	printf(_("       clocks held by: %s"), reasons);
	if (v->ok[GM_ECC_UNCORR_VOL])
		printf(_("  ECC uncorrected %.0f"), v->v[GM_ECC_UNCORR_VOL]);
	if (v->ok[GM_PERSISTENCE])
		fputs(v->v[GM_PERSISTENCE] != 0 ? _("  persistence on") : _("  persistence off"),
		      stdout);
	putchar('\n');
	char fan[16], cm[32], mig[16], disp[16];
	gpu_cell_text(c, i, v, GM_FAN, true, fan, sizeof fan);
	gpu_cell_text(c, i, v, GM_COMPUTE_MODE, true, cm, sizeof cm);
	gpu_cell_text(c, i, v, GM_MIG_CURRENT, true, mig, sizeof mig);
	gpu_cell_text(c, i, v, GM_DISPLAY_ACTIVE, true, disp, sizeof disp);
	const char *na = _("n/a");
	printf(_("       fan %s  compute mode %s  MIG %s  display active %s\n"),
	       v->ok[GM_FAN] ? fan : na, v->ok[GM_COMPUTE_MODE] ? cm : na,
	       v->ok[GM_MIG_CURRENT] ? mig : na, v->ok[GM_DISPLAY_ACTIVE] ? disp : na);
	gpu_mig m[GPU_MIG_MAX];
	int nm = gpu_mig_devices(c, i, m, GPU_MIG_MAX);
	for (int k = 0; k < nm; k++)
		printf(_("       MIG %d %-8s GI %u CI %u  mem %.0f / %.0f MiB  %u SMs  %s\n"),
		       m[k].index, m[k].profile[0] ? m[k].profile : na, m[k].gi, m[k].ci,
		       m[k].mem_used_mib, m[k].mem_total_mib, m[k].sm_count, m[k].uuid);
	if (nm && !v->ok[GM_UTIL_GPU])
		printf("%s\n", _("       (MIG on: the driver has no whole-GPU utilization; see "
		                 "per-instance memory and gpuwhy exporter's GPU_I_ID series)"));
}

typedef struct {
	int gpu;
	gpu_proc p;
	host_pid_brief h;
} status_proc;

static int collect_procs(gpu_ctx *c, status_proc *out, int max)
{
	int n = 0;
	gpu_proc buf[STATUS_MAX_PROCS];
	for (int i = 0; i < gpu_count(c) && n < max; i++) {
		int k = gpu_processes(c, i, buf, STATUS_MAX_PROCS);
		for (int j = 0; j < k && n < max; j++) {
			out[n].gpu = gpu_static_info(c, i)->index;
			out[n].p = buf[j];
			gpu_proc_brief(&buf[j], "/proc", &out[n].h);
			n++;
		}
	}
	return n;
}

/* s in a column of w display columns (a CJK character takes two), padded on
 * the left (right-aligned) or on the right; with cut, cut at a character
 * boundary where it is wider (else a wider s pushes the next column). */
static void put_col(const char *s, int w, bool right, bool cut)
{
	gw_align al = right ? GW_ALIGN_RIGHT : GW_ALIGN_LEFT;
	if (cut) {
		gw_text_fput_cell(stdout, s, w, al);
		return;
	}
	int padn = gw_text_pad(s, w);
	printf("%*s%s%*s", right ? padn : 0, "", s, right ? 0 : padn, "");
}

static void print_procs_text(const status_proc *ps, int n, bool nested)
{
	printf("\n%s\n", _("Processes:"));
	if (nested)
		printf("%s\n",
		       _("  (this process runs in a nested PID namespace: NVML reports host "
		         "PIDs, which\n   this container cannot see; run it with --pid=host "
		         "for users and commands)"));
	if (n == 0) {
		printf("%s\n", _("  none"));
		return;
	}
	/* TRANSLATORS: the column heads of the process table: keep them short. */
	printf("  %3s %8s ", "GPU", "PID");
	put_col(_("USER"), 10, false, false);
	putchar(' ');
	put_col(_("TYPE"), 4, true, false);
	putchar(' ');
	put_col(_("GPU MEM"), 10, true, false);
	printf(" %4s  %s\n", "SM%", _("COMMAND"));
	for (int k = 0; k < n; k++) {
		const status_proc *p = &ps[k];
		char mem[24], sm[16];
		snprintf(mem, sizeof mem, "%s", _("n/a"));
		snprintf(sm, sizeof sm, "%s", _("n/a"));
		if (p->p.mem_ok)
			snprintf(mem, sizeof mem, "%llu MiB",
			         (unsigned long long)(p->p.mem_bytes / (1024 * 1024)));
		if (p->p.util_ok)
			snprintf(sm, sizeof sm, "%u", p->p.sm_pct);
		const char *type = p->p.type == 3 ? "C+G" : p->p.type == 2 ? "G" : "C";
		/* A process names itself: its command never reaches the terminal raw. */
		char cmd[GW_TERM_SAFE_LEN(100)], user[GW_TERM_SAFE_LEN(32)];
		const char *raw = p->h.cmd[0]   ? p->h.cmd
		                  : p->h.exists ? _("n/a")
		                                : _("(not running here)");
		gw_term_safe(raw, cmd, sizeof cmd);
		gw_term_safe(p->h.user[0] ? p->h.user : _("n/a"), user, sizeof user);
		printf("  %3d %8u ", p->gpu, p->p.pid);
		put_col(user, 10, false, true);
		printf(" %4s ", type);
		put_col(mem, 10, true, false);
		putchar(' ');
		put_col(sm, 4, true, false);
		printf("  %.100s\n", cmd);
	}
}

static void print_json(gpu_ctx *c, const gpu_values *vals, const status_proc *ps, int np,
                       bool nested)
{
	jsonw w;
	jsonw_init(&w, stdout, true);
	jsonw_obj_begin(&w);
	jsonw_key(&w, "driver_version");
	jsonw_str(&w, gpu_driver_version(c)[0] ? gpu_driver_version(c) : NULL);
	jsonw_key(&w, "cuda_driver_version");
	jsonw_str(&w, gpu_cuda_driver_version(c)[0] ? gpu_cuda_driver_version(c) : NULL);
	jsonw_key(&w, "gpus");
	jsonw_arr_begin(&w);
	for (int i = 0; i < gpu_count(c); i++) {
		jsonw_obj_begin(&w);
		jsonw_key(&w, "lost");
		jsonw_bool(&w, vals[i].lost);
		for (int m = 0; m < GM__COUNT; m++) {
			if (!gpu_metric_readable((gpu_metric_id)m))
				continue;
			jsonw_key(&w, gpu_metrics[m].key);
			gpu_cell_json(c, i, &vals[i], (gpu_metric_id)m, &w);
		}
		char words[256];
		jsonw_key(&w, "clocks_event_reasons.words");
		if (vals[i].ok[GM_CLK_REASONS]) {
			gpu_reasons_words((uint64_t)vals[i].v[GM_CLK_REASONS], words, sizeof words);
			jsonw_str(&w, words);
		} else {
			jsonw_null(&w);
		}
		jsonw_obj_end(&w);
	}
	jsonw_arr_end(&w);
	jsonw_key(&w, "pid_namespace_nested");
	jsonw_bool(&w, nested);
	jsonw_key(&w, "processes");
	jsonw_arr_begin(&w);
	for (int k = 0; k < np; k++) {
		const status_proc *p = &ps[k];
		jsonw_obj_begin(&w);
		jsonw_key(&w, "gpu");
		jsonw_int(&w, p->gpu);
		jsonw_key(&w, "pid");
		jsonw_int(&w, p->p.pid);
		jsonw_key(&w, "type");
		jsonw_str(&w, p->p.type == 3 ? "C+G" : p->p.type == 2 ? "G" : "C");
		jsonw_key(&w, "gpu_memory_mib");
		if (p->p.mem_ok)
			jsonw_int(&w, (long long)(p->p.mem_bytes / (1024 * 1024)));
		else
			jsonw_null(&w);
		jsonw_key(&w, "sm_pct");
		if (p->p.util_ok)
			jsonw_int(&w, p->p.sm_pct);
		else
			jsonw_null(&w);
		jsonw_key(&w, "user");
		jsonw_str(&w, p->h.user[0] ? p->h.user : NULL);
		jsonw_key(&w, "command");
		jsonw_str(&w, p->h.cmd[0] ? p->h.cmd : NULL);
		jsonw_key(&w, "running_here");
		jsonw_bool(&w, p->h.exists);
		jsonw_obj_end(&w);
	}
	jsonw_arr_end(&w);
	jsonw_obj_end(&w);
}

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
	int np = collect_procs(c, ps, STATUS_MAX_PROCS);
	bool nested = host_pidns_nested("/proc");
	if (json) {
		print_json(c, vals, ps, np, nested);
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
			print_gpu_text(c, i, &vals[i]);
		print_procs_text(ps, np, nested);
	}
	free(ps);
	free(vals);
	gpu_close(c);
	return GW_EXIT_OK;
}
