/* status.c - `gpuwhy status`'s own view: every GPU's reading and the processes on the GPUs,
 * as text for people or JSON (the boxed nvidia-smi table is table.c's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "smi/status.h"
#include "gpu/cell.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/jsonw.h"
#include "util/termsafe.h"
#include "util/textwidth.h"

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

void status_render_gpu(FILE *out, gpu_ctx *c, int i, const gpu_values *v)
{
	const gpu_static *s = gpu_static_info(c, i);
	char a[32], b[80], d[80], g[32], h[32];
	char name[GW_TERM_SAFE_LEN(28)], bus[GW_TERM_SAFE_LEN(17)];
	gw_term_safe(s->name[0] ? s->name : "n/a", name, sizeof name);
	gw_term_safe(s->pci_bus_id[0] ? s->pci_bus_id : "n/a", bus, sizeof bus);
	fprintf(out, "GPU %-2d %-28.28s %-17s ", s->index, name, bus);
	if (v->lost) {
		/* Xid is NVIDIA's word: an AMD card is worded from what amdgpu logs */
		if (!strcmp(s->vendor, "amd"))
			fprintf(out, "%s\n",
			        _("LOST: the card left the bus or its driver; check the kernel "
			          "log for amdgpu GPU reset and ring timeout lines"));
		else
			fprintf(out, "%s\n",
			        _("LOST: fell off the bus (GPU_IS_LOST); check the kernel log "
			          "for Xid 79"));
		return;
	}
	char pst[32];
	if (v->ok[GM_PSTATE])
		snprintf(pst, sizeof pst, "P%.0f", v->v[GM_PSTATE]);
	else
		snprintf(pst, sizeof pst, "%s", _("n/a"));
	fprintf(out, "%s\n", pst);
	fprintf(out, _("       util %5s  mem %s  power %s  temp %s (slowdown %s)\n"),
	        num(v, GM_UTIL_GPU, "%.0f%%", a, sizeof a),
	        pair_unit(v, GM_MEM_USED, GM_MEM_TOTAL, "MiB", b, sizeof b),
	        pair_unit(v, GM_POWER_DRAW, GM_POWER_ENFORCED_LIMIT, "W", d, sizeof d),
	        num(v, GM_TEMP_GPU, "%.0fC", g, sizeof g),
	        num(v, GM_TEMP_SLOWDOWN, "%.0fC", h, sizeof h));
	char sm[80], mm[32], link[80];
	fprintf(out, _("       clocks SM %s  mem %s  PCIe %s"),
	        pair_unit(v, GM_CLK_SM, GM_CLK_MAX_SM, "MHz", sm, sizeof sm),
	        num(v, GM_CLK_MEM, "%.0f MHz", mm, sizeof mm), pcie_text(v, link, sizeof link));
	if (v->ok[GM_GPM_SM_ACTIVE])
		fprintf(out, _("  SM active %.0f%%"), v->v[GM_GPM_SM_ACTIVE]);
	fputc('\n', out);
	char reasons[256];
	reason_text(v, reasons, sizeof reasons);
	fprintf(out, _("       clocks held by: %s"), reasons);
	if (v->ok[GM_ECC_UNCORR_VOL])
		fprintf(out, _("  ECC uncorrected %.0f"), v->v[GM_ECC_UNCORR_VOL]);
	if (v->ok[GM_PERSISTENCE])
		fputs(v->v[GM_PERSISTENCE] != 0 ? _("  persistence on") : _("  persistence off"),
		      out);
	fputc('\n', out);
	char fan[16], cm[32], mig[16], disp[16];
	gpu_cell_text(c, i, v, GM_FAN, true, fan, sizeof fan);
	gpu_cell_text(c, i, v, GM_COMPUTE_MODE, true, cm, sizeof cm);
	gpu_cell_text(c, i, v, GM_MIG_CURRENT, true, mig, sizeof mig);
	gpu_cell_text(c, i, v, GM_DISPLAY_ACTIVE, true, disp, sizeof disp);
	const char *na = _("n/a");
	fprintf(out, _("       fan %s  compute mode %s  MIG %s  display active %s\n"),
	        v->ok[GM_FAN] ? fan : na, v->ok[GM_COMPUTE_MODE] ? cm : na,
	        v->ok[GM_MIG_CURRENT] ? mig : na, v->ok[GM_DISPLAY_ACTIVE] ? disp : na);
	gpu_mig m[GPU_MIG_MAX];
	int nm = gpu_mig_devices(c, i, m, GPU_MIG_MAX);
	for (int k = 0; k < nm; k++)
		fprintf(out, _("       MIG %d %-8s GI %u CI %u  mem %.0f / %.0f MiB  %u SMs  %s\n"),
		        m[k].index, m[k].profile[0] ? m[k].profile : na, m[k].gi, m[k].ci,
		        m[k].mem_used_mib, m[k].mem_total_mib, m[k].sm_count, m[k].uuid);
	if (nm && !v->ok[GM_UTIL_GPU])
		fprintf(out, "%s\n",
		        _("       (MIG on: the driver has no whole-GPU utilization; see "
		          "per-instance memory and gpuwhy exporter's GPU_I_ID series)"));
}

int status_collect_procs(gpu_ctx *c, status_proc *out, int max)
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
static void put_col(FILE *out, const char *s, int w, bool right, bool cut)
{
	gw_align al = right ? GW_ALIGN_RIGHT : GW_ALIGN_LEFT;
	if (cut) {
		gw_text_fput_cell(out, s, w, al);
		return;
	}
	int padn = gw_text_pad(s, w);
	fprintf(out, "%*s%s%*s", right ? padn : 0, "", s, right ? 0 : padn, "");
}

void status_render_procs(FILE *out, const status_proc *ps, int n, bool nested)
{
	fprintf(out, "\n%s\n", _("Processes:"));
	if (nested)
		fprintf(out, "%s\n",
		        _("  (this process runs in a nested PID namespace: NVML reports host "
		          "PIDs, which\n   this container cannot see; run it with --pid=host "
		          "for users and commands)"));
	if (n == 0) {
		fprintf(out, "%s\n", _("  none"));
		return;
	}
	/* TRANSLATORS: the column heads of the process table: keep them short. */
	fprintf(out, "  %3s %8s ", "GPU", "PID");
	put_col(out, _("USER"), 10, false, false);
	fputc(' ', out);
	put_col(out, _("TYPE"), 4, true, false);
	fputc(' ', out);
	put_col(out, _("GPU MEM"), 10, true, false);
	fprintf(out, " %4s  %s\n", "SM%", _("COMMAND"));
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
		fprintf(out, "  %3d %8u ", p->gpu, p->p.pid);
		put_col(out, user, 10, false, true);
		fprintf(out, " %4s ", type);
		put_col(out, mem, 10, true, false);
		fputc(' ', out);
		put_col(out, sm, 4, true, false);
		fprintf(out, "  %.100s\n", cmd);
	}
}

void status_render_json(FILE *out, gpu_ctx *c, const gpu_values *vals, const status_proc *ps,
                        int np, bool nested)
{
	jsonw w;
	jsonw_init(&w, out, true);
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
