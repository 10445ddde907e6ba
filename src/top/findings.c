/*
 * findings.c - live findings over a short window: a GPU idle while a core
 * is saturated, clocks held down by heat or power brakes, memory nearly
 * full, a GPU gone. Pure: a timeline in, lines out.
 */
#include "top/findings.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define IDLE_UTIL 10.0	     /* % utilization at or below which a sample counts as idle */
#define IDLE_SHARE 0.30	     /* of the window */
#define CORE_SATURATED 90.0  /* % busy of the busiest core */
#define CORE_SAT_SHARE 0.50  /* of the idle samples */
#define SLOWDOWN_SHARE 0.20  /* of the window */
#define MEM_FULL 0.95	     /* share of total memory */
#define MIN_SAMPLES 5
#define MIN_SPAN_S 10.0     /* idleness over a shorter stretch says little */

typedef struct {
	top_finding *out;
	int n, max;
} sink;

static void add(sink *k, top_severity sev, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void add(sink *k, top_severity sev, const char *fmt, ...)
{
	if (k->n >= k->max)
		return;
	top_finding *f = &k->out[k->n++];
	f->severity = sev;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->text, sizeof f->text, fmt, ap);
	va_end(ap);
}

/* The GPU held memory for a process somewhere in the window: idling matters only then. */
static bool gpu_in_use(const timeline *tl, int g)
{
	for (int i = 0; i < tl->nprocs; i++)
		if (tl->procs[i].gpu == g)
			return true;
	return false;
}

static void idle_rule(const timeline *tl, int g, double span, sink *k)
{
	const double *u = tl->gpu[g].m[GM_UTIL_GPU];
	const double *cmax = tl->h[HM_CPU_BUSY_MAX], *core = tl->h[HM_CPU_BUSY_MAX_CORE];
	if (!u || !gpu_in_use(tl, g))
		return;
	int present = 0, idle = 0, sat = 0;
	double sat_sum = 0;
	int votes[1024] = {0};
	for (int s = 0; s < tl->n; s++) {
		if (isnan(u[s]))
			continue;
		present++;
		if (u[s] > IDLE_UTIL)
			continue;
		idle++;
		if (cmax && !isnan(cmax[s]) && cmax[s] >= CORE_SATURATED) {
			sat++;
			sat_sum += cmax[s];
			if (core && !isnan(core[s]) && core[s] >= 0 && core[s] < 1024)
				votes[(int)core[s]]++;
		}
	}
	if (present < MIN_SAMPLES || span < MIN_SPAN_S || (double)idle / present < IDLE_SHARE)
		return;
	int idx = tl->gpu[g].index;
	double pct = 100.0 * idle / present;
	if (sat > 0 && (double)sat / idle >= CORE_SAT_SHARE) {
		int best = 0;
		for (int c = 1; c < 1024; c++)
			if (votes[c] > votes[best])
				best = c;
		add(k, TOP_SEV_WARN,
		    "GPU %d idle %.0f %% of the last %.0f s while core %d is at %.0f %%: data-starved?",
		    idx, pct, span, best, sat_sum / sat);
	} else {
		add(k, TOP_SEV_INFO,
		    "GPU %d idle %.0f %% of the last %.0f s although a process holds it: waiting on input, the host or other ranks?",
		    idx, pct, span);
	}
}

static void slowdown_rule(const timeline *tl, int g, double span, sink *k)
{
	static const struct {
		gpu_metric_id id;
		const char *what;
	} causes[] = {
		{GM_CLK_R_HW_THERMAL, "hardware thermal slowdown"},
		{GM_CLK_R_SW_THERMAL, "software thermal slowdown"},
		{GM_CLK_R_HW_POWER_BRAKE, "hardware power brake"},
		{GM_CLK_R_HW_SLOW, "hardware slowdown"},
	};
	for (size_t c = 0; c < sizeof causes / sizeof *causes; c++) {
		const double *r = tl->gpu[g].m[causes[c].id];
		double share = r ? tl_share(r, 0, tl->n, tl_pred_ge, 0.5) : NAN;
		if (isnan(share) || share < SLOWDOWN_SHARE)
			continue;
		double temp = tl_max(tl->gpu[g].m[GM_TEMP_GPU], 0, tl->n);
		char t[32] = "";
		if (!isnan(temp))
			snprintf(t, sizeof t, ", up to %.0f C", temp);
		add(k, TOP_SEV_WARN, "GPU %d clocks held down by %s %.0f %% of the last %.0f s%s",
		    tl->gpu[g].index, causes[c].what, 100 * share, span, t);
		return; /* one cause per GPU: the most specific comes first */
	}
}

static double last_present(const double *x, int n)
{
	for (int s = n - 1; x && s >= 0; s--)
		if (!isnan(x[s]))
			return x[s];
	return NAN;
}

static void memory_rule(const timeline *tl, int g, sink *k)
{
	double used = last_present(tl->gpu[g].m[GM_MEM_USED], tl->n);
	double total = last_present(tl->gpu[g].m[GM_MEM_TOTAL], tl->n);
	if (isnan(used) || isnan(total) || total <= 0 || used / total < MEM_FULL)
		return;
	add(k, TOP_SEV_WARN, "GPU %d memory %.0f %% full (%.0f of %.0f MiB): the next allocation may fail",
	    tl->gpu[g].index, 100 * used / total, used, total);
}

static bool lost(const timeline *tl, int g)
{
	if (tl->gpu[g].lost_at_end)
		return true;
	for (int i = 0; i < tl->nevents; i++)
		if (tl->events[i].gpu == g && !strcmp(tl->events[i].kind, TL_EV_GPU_LOST))
			return true;
	return false;
}

static int by_severity(const void *a, const void *b)
{
	const top_finding *x = a, *y = b;
	return (int)y->severity - (int)x->severity;
}

int top_findings(const timeline *tl, top_finding *out, int max)
{
	sink k = {out, 0, max};
	if (!tl || tl->n < 2)
		return 0;
	double span = tl->t[tl->n - 1] - tl->t[0];
	for (int g = 0; g < tl->ngpu; g++) {
		if (lost(tl, g)) {
			add(&k, TOP_SEV_ERROR, "GPU %d fell off the bus (NVML: GPU is lost): check the kernel log for Xid 79",
			    tl->gpu[g].index);
			continue;
		}
		slowdown_rule(tl, g, span, &k);
		idle_rule(tl, g, span, &k);
		memory_rule(tl, g, &k);
	}
	/* Stable for equal severities: insertion order is GPU order. */
	for (int i = 1; i < k.n; i++)
		for (int j = i; j > 0 && by_severity(&out[j - 1], &out[j]) > 0; j--) {
			top_finding t = out[j];
			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return k.n;
}
