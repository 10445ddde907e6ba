/*
 * live_checks.c - the exporter's built-in findings, computed from the latest
 * sample only. They feed gpuwhy_finding through the same hook
 * (exp_findings_fn) that the diagnosis rules use, so the series is real
 * whichever source is plugged in.
 */
#include <stdio.h>

#include "exporter/exporter.h"

/* nvmlClocksEventReason* bits (nvml.h). */
#define REASON_GPU_IDLE 0x1ULL
#define REASON_HW_SLOWDOWN 0x8ULL
#define REASON_SW_THERMAL 0x20ULL
#define REASON_HW_THERMAL 0x40ULL
#define REASON_HW_POWER_BRAKE 0x80ULL
#define REASON_KNOWN 0x1FFULL

static bool have(const gpu_values *v, gpu_metric_id id)
{
	return v->ok[id] != 0;
}

static int add(exp_finding *out, int n, int max, int gpu, const char *rule, exp_severity sev)
{
	if (n >= max)
		return n;
	out[n].gpu = gpu;
	snprintf(out[n].rule, sizeof out[n].rule, "%s", rule);
	out[n].severity = sev;
	return n + 1;
}

/* Worst severity among the active reasons other than gpu_idle; -1 when none. */
static int throttle_severity(uint64_t mask)
{
	mask &= REASON_KNOWN & ~REASON_GPU_IDLE;
	if (!mask)
		return -1;
	if (mask & (REASON_HW_SLOWDOWN | REASON_HW_THERMAL | REASON_HW_POWER_BRAKE))
		return EXP_SEV_ERROR;
	if (mask & REASON_SW_THERMAL)
		return EXP_SEV_WARN;
	return EXP_SEV_INFO; /* power cap, sync boost, application or display clocks */
}

/* Busy enough that a lowered link generation is not power saving. */
static bool gpu_busy(const gpu_values *v)
{
	if (have(v, GM_CLK_REASONS) && ((uint64_t)v->v[GM_CLK_REASONS] & REASON_GPU_IDLE))
		return false;
	return have(v, GM_UTIL_GPU) && v->v[GM_UTIL_GPU] > 0;
}

static bool pcie_degraded(const gpu_values *v)
{
	if (have(v, GM_PCIE_WIDTH_CUR) && have(v, GM_PCIE_WIDTH_MAX) &&
	    v->v[GM_PCIE_WIDTH_MAX] > 0 && v->v[GM_PCIE_WIDTH_CUR] < v->v[GM_PCIE_WIDTH_MAX])
		return true;
	return have(v, GM_PCIE_GEN_CUR) && have(v, GM_PCIE_GEN_MAX) && v->v[GM_PCIE_GEN_MAX] > 0 &&
	       v->v[GM_PCIE_GEN_CUR] < v->v[GM_PCIE_GEN_MAX] && gpu_busy(v);
}

int exp_live_findings(void *user, const exp_window *w, exp_finding *out, int max)
{
	(void)user;
	if (!w || w->len <= 0)
		return 0;
	const snapshot *s = w->snaps[w->len - 1];
	int n = 0;
	for (int i = 0; i < w->ngpus && i < s->ngpu; i++) {
		const exp_gpu *g = &w->gpus[i];
		const gpu_values *v = &s->gpu[i];
		if (v->lost) {
			n = add(out, n, max, g->index, "gpu_lost", EXP_SEV_ERROR);
			continue;
		}
		if (have(v, GM_CLK_REASONS)) {
			int sev = throttle_severity((uint64_t)v->v[GM_CLK_REASONS]);
			if (sev >= 0)
				n = add(out, n, max, g->index, "throttled", (exp_severity)sev);
		}
		if (pcie_degraded(v))
			n = add(out, n, max, g->index, "pcie_degraded", EXP_SEV_WARN);
	}
	return n;
}
