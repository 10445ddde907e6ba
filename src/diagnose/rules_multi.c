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
#include "gpu/gpu_reasons.h"

/* GPU g works in recurring bursts (it takes part in every step and waits in
 * between) rather than staying unused. */
static bool works_in_bursts(const diag_ctx *c, int g)
{
	bool *m = diag_mask_new(c);
	for (int s = c->from; s < c->to; s++)
		m[s] = c->act[g] && c->act[g][s] > c->th->idle_util_pct;
	int runs = diag_runs(c, m);
	free(m);
	return runs >= c->th->sync_min_episodes;
}

void rule_imbalance(diag_ctx *c)
{
	const diag_thresholds *th = c->th;
	const timeline *tl = c->tl;
	if (diag_has(c, DIAG_R_ALL_ON_GPU0) || c->to - c->from < th->min_samples || c->ngpu < 2)
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
			} else if (G[g].util_mean <= th->imbalance_idle_pct &&
			           !works_in_bursts(c, g)) {
				idle |= 1ULL << g;
				isum += G[g].util_mean;
				ni++;
			}
		}
		if (!busy || !idle)
			return;
		diag_finding *f = diag_add(c, DIAG_R_IMBALANCE, DIAG_WARN, 0.85);
		f->gpus = busy | idle;
		char bl[64], il[96];
		diag_gpu_list(c, busy, bl, sizeof bl);
		diag_gpu_list(c, idle, il, sizeof il);
		diag_title(f, "%s busy %.0f %% while %s of the job %s idle (mean %.0f %%)", bl,
		           G[top].util_mean, il, ni > 1 ? L_("stay") : L_("stays"), isum / ni);
		for (int g = 0; g < c->ngpu; g++) {
			if (busy & (1ULL << g))
				DIAG_EV(f, g, .metric = DIAG_GM(UTIL_GPU), .stat = N_("mean"),
				        .value = G[g].util_mean,
				        .cmp = ">=", .threshold = th->imbalance_busy_pct,
				        .unit = "%");
			if (idle & (1ULL << g))
				DIAG_EV(f, g, .metric = DIAG_GM(UTIL_GPU), .stat = N_("mean"),
				        .value = G[g].util_mean,
				        .cmp = "<=", .threshold = th->imbalance_idle_pct,
				        .unit = "%");
		}
		diag_note(f, "The job holds memory on every one of these GPUs but computes on %s.",
		          bl);
		diag_range_window(c, f);
		diag_advice(c, f, NULL);
		return;
	}
	/* One GPU used although the job asked for several. */
	int intended = diag_intended_gpus(c);
	if (c->njob != 1 || intended < 2)
		return;
	int g0 = 0;
	while (g0 < c->ngpu && !c->job[g0])
		g0++;
	diag_finding *f = diag_add(c, DIAG_R_IMBALANCE, DIAG_WARN, 0.7);
	diag_gpu(f, g0);
	diag_title(f, "The job asked for %d GPUs but only GPU %d did any work", intended,
	           tl->gpu[g0].index);
	DIAG_EV(f, DIAG_JOB, .metric = DIAG_EV_COMMAND, .stat = N_("GPUs the job asked for"),
	        .value = intended);
	DIAG_EV(f, DIAG_JOB, .metric = DIAG_EV_PROC_GPU,
	        .stat = N_("GPUs the job held a context on"), .value = 1, .cmp = "<",
	        .threshold = intended);
	if (!isnan(G[g0].util_mean))
		DIAG_EV(f, g0, .metric = DIAG_GM(UTIL_GPU), .stat = N_("mean"),
		        .value = G[g0].util_mean, .unit = "%");
	diag_range_window(c, f);
	diag_advice(c, f, NULL);
}

const char *diag_level_name(int level)
{
	if (gpu_topo_level_is_internal(level))
		return L_("the same board");
	const char *w = gpu_topo_level_name(level);
	return w ? w : "PCIe";
}

/* Either direction of a pair matrix: a reader may fill one half of it. */
static int pair_value(const int (*m)[GPU_MAX], int i, int j)
{
	return m[i][j] >= 0 ? m[i][j] : m[j][i];
}

link_kind diag_job_links(const diag_ctx *c, int *worst_level, int *min_links, bool *amd)
{
	link_kind k = LINK_NVLINK;
	*worst_level = -1;
	*min_links = -1;
	*amd = false;
	bool any = false;
	int nv_pairs = 0, xgmi_pairs = 0;
	for (int i = 0; i < c->ngpu; i++)
		for (int j = i + 1; j < c->ngpu; j++) {
			if (!c->job[i] || !c->job[j])
				continue;
			int nv = pair_value(c->tl->nvlinks, i, j),
			    lv = pair_value(c->tl->topo, i, j), xg = pair_value(c->tl->xgmi, i, j);
			any = true;
			if (nv > 0) {
				if (*min_links < 0 || nv < *min_links)
					*min_links = nv;
				nv_pairs++;
				continue;
			}
			if (xg > 0) {
				xgmi_pairs++;
				continue;
			}
			if (nv == 0 || xg == 0) {
				if (k != LINK_PCIE || lv > *worst_level)
					*amd = xg == 0;
				k = LINK_PCIE;
				if (lv > *worst_level)
					*worst_level = lv;
			} else if (k != LINK_PCIE) {
				k = LINK_UNKNOWN;
			}
		}
	if (!any)
		return LINK_UNKNOWN;
	if (k == LINK_NVLINK && xgmi_pairs > 0 && nv_pairs == 0) {
		*min_links = xgmi_pairs;
		return LINK_XGMI;
	}
	return k;
}

/*
 * What "working" means for sync-wait. Utilization first, but NCCL's collective
 * kernels spin while they wait, so a waiting GPU can read 100 % busy: then SM
 * activity (GPM) tells the straggler from the waiters, and without GPM the
 * power draw does (a spinning GPU draws far less than a computing one).
 */
typedef enum { W_SM, W_UTIL, W_POWER } work_kind;

typedef struct {
	work_kind kind;
	const double *x[GPU_MAX];
	double scale; /* power: 100 / the straggler's mean draw */
	double mean[GPU_MAX];
} work_sig;

static double work_at(const work_sig *w, int g, int s)
{
	return w->x[g] ? w->x[g][s] * w->scale : NAN;
}

/* Fill w for kind; false when a GPU of the job lacks the series. */
static bool work_init(const diag_ctx *c, work_kind kind, work_sig *w)
{
	memset(w, 0, sizeof *w);
	w->kind = kind;
	w->scale = 1;
	for (int g = 0; g < c->ngpu; g++) {
		if (!c->job[g])
			continue;
		w->x[g] = kind == W_UTIL ? c->act[g]
		          : kind == W_SM ? c->tl->gpu[g].m[GM_GPM_SM_ACTIVE]
		                         : c->tl->gpu[g].m[GM_POWER_DRAW];
		w->mean[g] = diag_mean(c, w->x[g]);
		if (isnan(w->mean[g]))
			return false;
	}
	return true;
}

/* The busiest GPU by w, or -1. */
static int straggler_of(const diag_ctx *c, const work_sig *w)
{
	int best = -1;
	for (int g = 0; g < c->ngpu; g++)
		if (c->job[g] && (best < 0 || w->mean[g] > w->mean[best]))
			best = g;
	return best;
}

typedef struct {
	work_kind kind;
	int strag, nothers, episodes;
	uint64_t others;
	double lag, deficit, share, strag_mean, others_mean; /* means in the signal's own unit */
	bool *wait;
	bool steady; /* accepted on steady waits with the smaller shortfall */
} sync_case;

/* Does the job wait on one straggler by signal kind? Fills sc (wait mask malloc'd) when so. */
static bool sync_by(const diag_ctx *c, work_kind kind, sync_case *sc)
{
	const diag_thresholds *th = c->th;
	work_sig w;
	if (!work_init(c, kind, &w))
		return false;
	int strag = straggler_of(c, &w);
	if (strag < 0 || !(w.mean[strag] > 0))
		return false;
	if (kind == W_POWER) {
		w.scale = 100 / w.mean[strag];
		for (int g = 0; g < c->ngpu; g++)
			w.mean[g] *= w.scale;
	}
	double om = 0;
	int no = 0;
	uint64_t others = 0;
	for (int g = 0; g < c->ngpu; g++)
		if (c->job[g] && g != strag) {
			om += w.mean[g];
			others |= 1ULL << g;
			no++;
		}
	om /= no;
	double lag = w.mean[strag] - om, deficit = 100 * (1 - om / w.mean[strag]);
	if (lag < th->sync_lag_pct ||
	    deficit < fmin(th->sync_wait_idle_pct, th->sync_steady_deficit_pct))
		return false;
	/*
	 * The waits, sample by sample: the straggler works while every other GPU
	 * falls short. Steady waits (the same straggler ahead and every other GPU
	 * short in most samples) are periodic structure a coarse mean misses, so
	 * they count with a smaller shortfall.
	 */
	bool steady = false;
	bool *wait = NULL;
	int nwait = 0, k = 0;
	for (int pass = 0; pass < 2; pass++) {
		double need = pass == 0 ? th->sync_wait_idle_pct : th->sync_steady_deficit_pct;
		free(wait);
		wait = diag_mask_new(c);
		nwait = k = 0;
		int ahead = 0;
		double keep = 1 - need / 100;
		for (int s = c->from; s < c->to; s++) {
			double sw = work_at(&w, strag, s);
			if (isnan(sw))
				continue;
			k++;
			double osum = 0;
			int on = 0;
			bool all_short = true, leads = true;
			for (int g = 0; g < c->ngpu; g++) {
				if (!(others & (1ULL << g)))
					continue;
				double u = work_at(&w, g, s);
				if (isnan(u) || u > sw * keep)
					all_short = false;
				if (!isnan(u) && u >= sw)
					leads = false;
				if (!isnan(u)) {
					osum += u;
					on++;
				}
			}
			ahead += leads;
			if (all_short && on && sw - osum / on >= th->sync_lag_pct) {
				wait[s] = true;
				nwait++;
			}
		}
		if (deficit >= th->sync_wait_idle_pct)
			break; /* the plain test holds */
		steady = k && 2 * nwait >= k && (double)ahead / k >= th->sync_steady_share;
		if (pass == 1 && !steady) {
			free(wait);
			return false;
		}
	}
	int episodes = diag_runs(c, wait);
	double share = k ? (double)nwait / k : 0;
	/* Periodic: separate waits, or waits inside most samples. */
	if (episodes < th->sync_min_episodes && share < 0.5) {
		free(wait);
		return false;
	}
	double unscale = kind == W_POWER ? 1 / w.scale : 1;
	*sc = (sync_case){kind,         strag,  no,
	                  episodes,     others, lag,
	                  deficit,      share,  w.mean[strag] * unscale,
	                  om * unscale, wait,   steady && deficit < th->sync_wait_idle_pct};
	return true;
}

void rule_sync_wait(diag_ctx *c)
{
	const diag_thresholds *th = c->th;
	const timeline *tl = c->tl;
	const diag_gpu_summary *G = c->res->gpu;
	if (c->njob < 2 || c->to - c->from < th->min_samples)
		return;
	/* Every GPU of the job takes part (one that never works is imbalance). */
	for (int g = 0; g < c->ngpu; g++)
		if (c->job[g] &&
		    (isnan(G[g].util_mean) || G[g].util_mean <= th->imbalance_idle_pct))
			return;
	/* All ranks starved for data wait together, not for one of them: only a
	 * straggler in SM activity (which spinning collectives do not fake) tells
	 * sync-wait apart then. */
	uint64_t jobm = 0;
	for (int g = 0; g < c->ngpu; g++)
		if (c->job[g])
			jobm |= 1ULL << g;
	const diag_finding *ds = diag_ctx_find(c, DIAG_R_DATA_STARVED);
	bool starved = ds && (ds->gpus & jobm) == jobm;
	sync_case sc;
	if (!sync_by(c, W_SM, &sc) &&
	    (starved || (!sync_by(c, W_UTIL, &sc) && !sync_by(c, W_POWER, &sc))))
		return;
	int strag = sc.strag, nothers = sc.nothers, episodes = sc.episodes;
	uint64_t others = sc.others;
	bool *wait = sc.wait;
	double share = sc.share;
	int level, links;
	bool amd;
	link_kind lk = diag_job_links(c, &level, &links, &amd);
	double conf = (sc.kind == W_POWER ? 0.5 : 0.6) + (lk == LINK_PCIE ? 0.15 : 0) +
	              (episodes >= th->sync_min_episodes ? 0.1 : 0);
	diag_finding *f = diag_add(c, DIAG_R_SYNC_WAIT, DIAG_WARN, conf);
	f->gpus = others | (1ULL << strag);
	char ol[96], link[96], times[48], what[64];
	diag_gpu_list(c, others, ol, sizeof ol);
	if (lk == LINK_PCIE)
		snprintf(link, sizeof link,
		         amd ? L_("; the GPUs talk over PCIe (%s), no XGMI")
		             : L_("; the GPUs talk over PCIe (%s), no NVLink"),
		         diag_level_name(level));
	else if (lk == LINK_NVLINK)
		snprintf(link, sizeof link, L_("; the GPUs are joined by NVLink (NV%d)"), links);
	else if (lk == LINK_XGMI)
		snprintf(link, sizeof link, L_("; the GPUs are joined by XGMI (one hive)"));
	else
		snprintf(link, sizeof link, L_("; the link between the GPUs is unknown"));
	if (episodes >= th->sync_min_episodes)
		snprintf(times, sizeof times, L_("%d times"), episodes);
	else
		snprintf(times, sizeof times, L_("in %.0f %% of samples"), 100 * share);
	static const gpu_metric_id sig_id[] = {GM_GPM_SM_ACTIVE, GM_UTIL_GPU, GM_POWER_DRAW};
	const char *sig_metric = gpu_metrics[sig_id[sc.kind]].key;
	if (sc.kind == W_POWER)
		snprintf(what, sizeof what, L_("power %.0f W vs %.0f W"), sc.others_mean,
		         sc.strag_mean);
	else
		snprintf(what, sizeof what, L_("%s %.0f %% vs %.0f %%"),
		         sc.kind == W_SM ? L_("SM activity") : L_("utilization"), sc.others_mean,
		         sc.strag_mean);
	diag_title(f, "%s wait%s in step for GPU %d (%s), %s%s", ol, nothers == 1 ? "s" : "",
	           tl->gpu[strag].index, what, times, link);
	DIAG_EV(f, strag, .metric = sig_metric,
	        .stat = sc.kind == W_POWER
	                    ? /* xgettext:no-c-format */ N_(
	                          "straggler minus others (% of the straggler's draw)")
	                    : N_("straggler minus others (mean)"),
	        .value = sc.lag, .cmp = ">=", .threshold = th->sync_lag_pct, .unit = N_("points"));
	DIAG_EV(f, DIAG_JOB, .metric = sig_metric,
	        .stat = sc.steady ? N_("shortfall of the waiting GPUs (steady waits)")
	                          : N_("shortfall of the waiting GPUs against the straggler"),
	        .value = sc.deficit, .cmp = ">=",
	        .threshold = sc.steady ? th->sync_steady_deficit_pct : th->sync_wait_idle_pct,
	        .unit = "%");
	DIAG_EV(f, DIAG_JOB, .metric = sig_metric, .stat = N_("wait episodes"), .value = episodes,
	        .cmp = ">=", .threshold = th->sync_min_episodes);
	/* or, when the waits are shorter than a sample, most samples hold one */
	DIAG_EV(f, DIAG_JOB, .metric = sig_metric, .stat = N_("share of samples with a wait"),
	        .value = 100 * share, .cmp = ">=", .threshold = 50, .unit = "%");
	double uo = 0;
	for (int g = 0; g < c->ngpu; g++)
		if (others & (1ULL << g))
			uo += G[g].util_mean / nothers;
	if (sc.kind != W_UTIL && G[strag].util_mean - uo < th->sync_lag_pct)
		diag_note(f,
		          "Utilization alone does not show the wait: the waiting GPUs' collective "
		          "kernels spin, so they read busy.");
	if (lk == LINK_PCIE)
		DIAG_EV(f, DIAG_JOB, .metric = DIAG_EV_TOPOLOGY,
		        .stat = N_("worst path between the job's GPUs (NVML level)"),
		        .value = level);
	else if (lk == LINK_NVLINK)
		DIAG_EV(f, DIAG_JOB, .metric = DIAG_EV_NVLINK,
		        .stat = N_("fewest links between two of the job's GPUs"), .value = links);
	else if (lk == LINK_XGMI)
		DIAG_EV(f, DIAG_JOB, .metric = DIAG_EV_XGMI,
		        .stat = N_("pairs of the job's GPUs in one XGMI hive"), .value = links);
	diag_note(f, "Straggler: GPU %d.", tl->gpu[strag].index);
	if (sc.steady)
		diag_note(
		    f,
		    "The shortfall is small on average but steady: GPU %d leads every other GPU "
		    "in at least %.0f %% of the samples.",
		    tl->gpu[strag].index, 100 * th->sync_steady_share);
	diag_ranges_mask(c, f, wait);
	diag_advice(c, f,
	            lk == LINK_PCIE     ? "pcie"
	            : lk == LINK_NVLINK ? "nvlink"
	            : lk == LINK_XGMI   ? "xgmi"
	                                : NULL);
	free(wait);
}
