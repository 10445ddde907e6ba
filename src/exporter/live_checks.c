/*
 * live_checks.c - the exporter's built-in findings, computed from the latest
 * sample only. They feed gpuwhy_finding through the same hook
 * (exporter_findings_fn) that the diagnosis rules use, so the series is real
 * whichever source is plugged in.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "diagnose/diag.h"
#include "exporter/findings.h"
#include "exporter/frame.h"
#include "gpu/gpu_reasons.h"

static bool have(const gpu_values *v, gpu_metric_id id)
{
	return v->ok[id] != 0;
}

static int add(exporter_finding *out, int n, int max, int gpu, const char *rule,
               exporter_severity sev)
{
	if (n >= max)
		return n;
	out[n].gpu = gpu;
	snprintf(out[n].rule, sizeof out[n].rule, "%s", rule);
	out[n].severity = sev;
	return n + 1;
}

/* A finding named after a diagnosis rule, as its label ("pcie_degraded"). */
static int add_rule(exporter_finding *out, int n, int max, int gpu, diag_rule r,
                    exporter_severity sev)
{
	char label[32];
	diag_rule_label(r, label, sizeof label);
	return add(out, n, max, gpu, label, sev);
}

/* Worst severity among the active reasons other than gpu_idle; -1 when none. */
static int throttle_severity(uint64_t mask)
{
	switch (gpu_reasons_severity(mask)) {
	case GPU_REASON_SEV_HARDWARE:
		return EXPORTER_SEV_ERROR;
	case GPU_REASON_SEV_THERMAL:
		return EXPORTER_SEV_WARN;
	case GPU_REASON_SEV_SETTING:
		return EXPORTER_SEV_INFO; /* power cap, sync boost, application or display clocks */
	default:
		return -1;
	}
}

/* Busy enough that a lowered link generation is not power saving. */
static bool gpu_busy(const gpu_values *v)
{
	if (have(v, GM_CLK_REASONS) && gpu_reasons_idle((uint64_t)v->v[GM_CLK_REASONS]))
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

int exporter_live_findings(void *user, const exporter_window *w, exporter_finding *out, int max)
{
	(void)user;
	if (!w || w->len <= 0)
		return 0;
	const snapshot *s = w->snaps[w->len - 1];
	int n = 0;
	for (int i = 0; i < w->ngpus && i < s->ngpu; i++) {
		const exporter_gpu *g = &w->gpus[i];
		const gpu_values *v = &s->gpu[i];
		if (v->lost) {
			n = add(out, n, max, g->index, "gpu_lost", EXPORTER_SEV_ERROR);
			continue;
		}
		if (have(v, GM_CLK_REASONS)) {
			int sev = throttle_severity((uint64_t)v->v[GM_CLK_REASONS]);
			if (sev >= 0)
				n = add_rule(out, n, max, g->index, DIAG_R_THROTTLED,
				             (exporter_severity)sev);
		}
		if (pcie_degraded(v))
			n = add_rule(out, n, max, g->index, DIAG_R_PCIE_DEGRADED,
			             EXPORTER_SEV_WARN);
	}
	return n;
}
