/*
 * rules_multi.c - rules across the GPUs of one job: imbalance (one GPU works,
 * the others it holds stay idle) and sync-wait (the GPUs idle in step while a
 * straggler computes, worse over PCIe than over NVLink), which reads the
 * interconnect between the GPUs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/diag_int.h"

void rule_imbalance(diag_ctx *c)
{
	const diag_thresholds *th = c->th;
	const timeline *tl = c->tl;
	if (dx_has(c, "all-on-gpu0") || c->to - c->from < th->min_samples || c->ngpu < 2)
		return;
	if (!tl->have_root || !c->tree_on_gpu)
		return; /* without the job's contexts, an idle GPU may simply not be ours */
	const diag_gpu_summary *G = c->res->gpu;
	if (c->njob >= 2) {
		/* The job holds contexts on several GPUs but works on some only. */
		uint64_t busy = 0, idle = 0;
		int top = -1;
		double isum = 0;
		int ni = 0;
		for (int g = 0; g < c->ngpu; g++) {
			if (!c->job[g] || isnan(G[g].util_mean))
				continue;
			if (G[g].util_mean >= th->imbalance_busy_pct) {
				busy |= 1ULL << g;
				if (top < 0 || G[g].util_mean > G[top].util_mean)
					top = g;
			} else if (G[g].util_mean <= th->imbalance_idle_pct) {
				idle |= 1ULL << g;
				isum += G[g].util_mean;
				ni++;
			}
		}
		if (!busy || !idle)
			return;
		diag_finding *f = dx_add(c, "imbalance", DIAG_WARN, 0.85);
		f->gpus = busy | idle;
		char bl[64], il[96];
		dx_gpu_list(c, busy, bl, sizeof bl);
		dx_gpu_list(c, idle, il, sizeof il);
		dx_title(f, "%s busy %.0f %% while %s of the job %s idle (mean %.0f %%)", bl,
			 G[top].util_mean, il, ni > 1 ? "stay" : "stays", isum / ni);
		for (int g = 0; g < c->ngpu; g++) {
			if (busy & (1ULL << g))
				dx_ev(f, "utilization.gpu", "mean", G[g].util_mean, ">=",
				      th->imbalance_busy_pct, "%", g);
			if (idle & (1ULL << g))
				dx_ev(f, "utilization.gpu", "mean", G[g].util_mean, "<=",
				      th->imbalance_idle_pct, "%", g);
		}
		dx_note(f, "The job holds memory on every one of these GPUs but computes on %s.", bl);
		dx_range_window(c, f);
		dx_advice(c, f, "imbalance");
		return;
	}
	/* One GPU used although the job asked for several. */
	int intended = dx_intended_gpus(c);
	if (c->njob != 1 || intended < 2)
		return;
	int g0 = 0;
	while (g0 < c->ngpu && !c->job[g0])
		g0++;
	diag_finding *f = dx_add(c, "imbalance", DIAG_WARN, 0.7);
	dx_gpu(f, g0);
	dx_title(f, "The job asked for %d GPUs but only GPU %d did any work", intended,
		 tl->gpu[g0].index);
	dx_ev(f, "command", "GPUs the job asked for", intended, NULL, NAN, "", -1);
	dx_ev(f, "process.gpu", "GPUs the job held a context on", 1, "<", intended, "", -1);
	if (!isnan(G[g0].util_mean))
		dx_ev(f, "utilization.gpu", "mean", G[g0].util_mean, NULL, NAN, "%", g0);
	dx_range_window(c, f);
	dx_advice(c, f, "imbalance");
}

/* Idle share (0..100) of GPU g at sample s. */
static double idle_at(const diag_ctx *c, int g, int s)
{
	double i = tl_gpu_at(c->tl, g, GM_UTIL_SAMPLES_IDLE, s);
	if (!isnan(i))
		return i;
	double u = c->act[g] ? c->act[g][s] : NAN;
	return isnan(u) ? NAN : 100 - u;
}

const char *dx_level_name(int level)
{
	switch (level) {
	case 0: return "the same board";
	case 10: return "PIX";
	case 20: return "PXB";
	case 30: return "PHB";
	case 40: return "NODE";
	case 50: return "SYS";
	default: return "PCIe";
	}
}

link_kind dx_job_links(const diag_ctx *c, int *worst_level, int *min_links)
{
	link_kind k = LINK_NVLINK;
	*worst_level = -1;
	*min_links = -1;
	bool any = false;
	for (int i = 0; i < c->ngpu; i++)
		for (int j = i + 1; j < c->ngpu; j++) {
			if (!c->job[i] || !c->job[j])
				continue;
			/* Either direction: a reader may fill one half of the matrix. */
			int nv = c->tl->nvlinks[i][j] >= 0 ? c->tl->nvlinks[i][j] : c->tl->nvlinks[j][i];
			int lv = c->tl->topo[i][j] >= 0 ? c->tl->topo[i][j] : c->tl->topo[j][i];
			any = true;
			if (nv > 0) {
				if (*min_links < 0 || nv < *min_links)
					*min_links = nv;
				continue;
			}
			if (nv == 0) {
				k = LINK_PCIE;
				if (lv > *worst_level)
					*worst_level = lv;
			} else if (k != LINK_PCIE) {
				k = LINK_UNKNOWN;
			}
		}
	return any ? k : LINK_UNKNOWN;
}

void rule_sync_wait(diag_ctx *c)
{
	const diag_thresholds *th = c->th;
	const timeline *tl = c->tl;
	const diag_gpu_summary *G = c->res->gpu;
	if (c->njob < 2 || c->to - c->from < th->min_samples)
		return;
	/* Every GPU of the job takes part (else it is imbalance); the busiest is the straggler. */
	int strag = -1, nothers = 0;
	for (int g = 0; g < c->ngpu; g++) {
		if (!c->job[g])
			continue;
		if (isnan(G[g].util_mean) || G[g].util_mean <= th->imbalance_idle_pct)
			return;
		if (strag < 0 || G[g].util_mean > G[strag].util_mean)
			strag = g;
	}
	double ou = 0, oi = 0;
	uint64_t others = 0;
	for (int g = 0; g < c->ngpu; g++)
		if (c->job[g] && g != strag) {
			ou += G[g].util_mean;
			oi += isnan(G[g].idle_pct) ? 0 : G[g].idle_pct;
			others |= 1ULL << g;
			nothers++;
		}
	ou /= nothers;
	oi /= nothers;
	double lag = G[strag].util_mean - ou;
	if (lag < th->sync_lag_pct || oi < th->sync_wait_idle_pct)
		return;
	/* The waits, sample by sample: the straggler works while every other GPU idles. */
	bool *wait = dx_mask_new(c);
	int nwait = 0, k = 0;
	for (int s = c->from; s < c->to; s++) {
		double su = c->act[strag][s];
		if (isnan(su))
			continue;
		k++;
		double osum = 0;
		int on = 0;
		bool all_idle = true;
		for (int g = 0; g < c->ngpu; g++) {
			if (!(others & (1ULL << g)))
				continue;
			double i = idle_at(c, g, s), u = c->act[g][s];
			if (isnan(i) || isnan(u) || i < th->sync_wait_idle_pct)
				all_idle = false;
			if (!isnan(u)) {
				osum += u;
				on++;
			}
		}
		if (all_idle && on && su - osum / on >= th->sync_lag_pct) {
			wait[s] = true;
			nwait++;
		}
	}
	int episodes = dx_runs(c, wait);
	double share = k ? (double)nwait / k : 0;
	/* Periodic: separate waits, or sub-sample waits in most samples. */
	if (episodes < th->sync_min_episodes && share < 0.5) {
		free(wait);
		return;
	}
	int level, links;
	link_kind lk = dx_job_links(c, &level, &links);
	double conf = 0.6 + (lk == LINK_PCIE ? 0.15 : 0) + (episodes >= th->sync_min_episodes ? 0.1 : 0);
	diag_finding *f = dx_add(c, "sync-wait", DIAG_WARN, conf);
	f->gpus = others | (1ULL << strag);
	char ol[96], link[96], times[48];
	dx_gpu_list(c, others, ol, sizeof ol);
	if (lk == LINK_PCIE)
		snprintf(link, sizeof link, "; the GPUs talk over PCIe (%s), no NVLink", dx_level_name(level));
	else if (lk == LINK_NVLINK)
		snprintf(link, sizeof link, "; the GPUs are joined by NVLink (NV%d)", links);
	else
		snprintf(link, sizeof link, "; the link between the GPUs is unknown");
	if (episodes >= th->sync_min_episodes)
		snprintf(times, sizeof times, "%d times", episodes);
	else
		snprintf(times, sizeof times, "in %.0f %% of samples", 100 * share);
	dx_title(f, "%s wait%s in step for GPU %d (utilization %.0f %% vs %.0f %%), %s%s", ol,
		 nothers == 1 ? "s" : "", tl->gpu[strag].index, ou, G[strag].util_mean, times, link);
	dx_ev(f, "utilization.gpu", "straggler minus others (mean)", lag, ">=", th->sync_lag_pct,
	      "points", strag);
	dx_ev(f, "utilization.gpu", "idle share of the waiting GPUs", oi, ">=", th->sync_wait_idle_pct,
	      "%", -1);
	dx_ev(f, "utilization.gpu", "wait episodes", episodes, ">=", th->sync_min_episodes, "", -1);
	if (lk == LINK_PCIE)
		dx_ev(f, "topology", "worst path between the job's GPUs (NVML level)", level, NULL, NAN,
		      "", -1);
	else if (lk == LINK_NVLINK)
		dx_ev(f, "nvlink", "fewest links between two of the job's GPUs", links, NULL, NAN, "",
		      -1);
	dx_note(f, "Straggler: GPU %d.", tl->gpu[strag].index);
	dx_ranges_mask(c, f, wait);
	dx_advice(c, f, lk == LINK_PCIE ? "sync-wait/pcie" : lk == LINK_NVLINK ? "sync-wait/nvlink" : "sync-wait");
	free(wait);
}
