/*
 * rules_clock.c - rules about how fast the GPU may run: power-capped (a limit
 * set below the default), throttled (clocks held by the power cap, heat or
 * hardware slowdown) and pcie-degraded (the link below its maximum under load,
 * replays, AER errors).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/diag_int.h"
#include "gpu/gpu_reasons.h"

/* ---- throttled: clocks held down by power, heat or hardware slowdown ---- */

/* Clock-event reason bits active at sample s: the mask, else the per-reason series. */
static uint64_t reasons_at(const diag_ctx *c, int g, int s)
{
	double m = tl_gpu_at(c->tl, g, GM_CLK_REASONS, s);
	if (!isnan(m))
		return gpu_reasons_from_value(m);
	uint64_t r = 0;
	for (int k = 0; k < GPU_REASON__COUNT; k++) {
		gpu_metric_id id = gpu_reason_metric((gpu_reason)k);
		if (id != GM__COUNT && tl_gpu_at(c->tl, g, id, s) >= 1)
			r |= gpu_reason_bit((gpu_reason)k);
	}
	return r;
}

/* ---- power-capped: a limit set below the default holds clocks down under load ---- */

void rule_power_capped(diag_ctx *c)
{
	const diag_thresholds *th = c->th;
	const timeline *tl = c->tl;
	if (c->to - c->from < th->min_samples)
		return;
	diag_finding *f = NULL;
	bool *mask = diag_mask_new(c);
	for (int g = 0; g < c->ngpu; g++) {
		if (!c->job[g] || !c->act[g])
			continue;
		double def = diag_max(c, tl->gpu[g].m[GM_POWER_DEFAULT_LIMIT]);
		double lim = diag_min(c, tl->gpu[g].m[GM_POWER_ENFORCED_LIMIT]);
		if (isnan(lim))
			lim = diag_min(c, tl->gpu[g].m[GM_POWER_LIMIT]);
		if (!(def > 0) || !(lim > 0) || lim >= th->power_cap_ratio * def)
			continue;
		double maxclk = tl_max(tl->gpu[g].m[GM_CLK_MAX_SM], 0, tl->n);
		int busy = 0, bound = 0, nclk = 0;
		double clk = 0, pw = 0;
		int npw = 0;
		for (int s = c->from; s < c->to; s++) {
			if (!(c->act[g][s] >= th->quad_util_pct))
				continue;
			busy++;
			double p = tl_gpu_at(tl, g, GM_POWER_DRAW, s);
			bool at_cap = gpu_reasons_power_cap(reasons_at(c, g, s)) ||
			              (!isnan(p) && p >= th->power_cap_ratio * lim);
			if (!at_cap)
				continue;
			bound++;
			mask[s] = true;
			double k = tl_gpu_at(tl, g, GM_CLK_SM, s);
			if (!isnan(k)) {
				clk += k;
				nclk++;
			}
			if (!isnan(p)) {
				pw += p;
				npw++;
			}
		}
		double share = busy ? (double)bound / busy : 0;
		double ratio = nclk && maxclk > 0 ? clk / nclk / maxclk : NAN;
		if (share < th->throttle_share ||
		    !(isnan(ratio) || ratio <= th->throttle_clock_ratio))
			continue;
		if (!f) {
			f = diag_add(c, DIAG_R_POWER_CAPPED, DIAG_WARN, isnan(ratio) ? 0.6 : 0.85);
			char clock[64] = "";
			if (!isnan(ratio))
				snprintf(clock, sizeof clock,
				         L_("; clocks at %.0f of %.0f MHz (%.0f %%)"), clk / nclk,
				         maxclk, 100 * ratio);
			diag_title(
			    f,
			    "GPU %d power limit %.0f W is below its default %.0f W and holds it "
			    "back %.0f %% of busy time%s",
			    tl->gpu[g].index, lim, def, 100 * share, clock);
		}
		diag_gpu(f, g);
		DIAG_EV(f, g, .metric = DIAG_GM(POWER_ENFORCED_LIMIT), .stat = N_("lowest"),
		        .value = lim, .cmp = "<", .threshold = th->power_cap_ratio * def,
		        .unit = "W");
		DIAG_EV(f, g, .metric = DIAG_GM(POWER_DEFAULT_LIMIT), .stat = N_("value"),
		        .value = def, .unit = "W");
		DIAG_EV(f, g, .metric = DIAG_GM(CLK_R_SW_POWER),
		        .stat = N_("share of busy samples at the cap"), .value = 100 * share,
		        .cmp = ">=", .threshold = 100 * th->throttle_share, .unit = "%");
		if (npw)
			DIAG_EV(f, g, .metric = DIAG_GM(POWER_DRAW),
			        .stat = N_("mean while at the cap"), .value = pw / npw,
			        .unit = "W");
		if (!isnan(ratio)) {
			DIAG_EV(f, g, .metric = DIAG_GM(CLK_SM),
			        .stat = N_("mean while at the cap"), .value = clk / nclk,
			        .unit = "MHz");
			DIAG_EV(f, g, .metric = DIAG_GM(CLK_SM), .per = DIAG_GM(CLK_MAX_SM),
			        .stat = N_("mean while at the cap"), .value = 100 * ratio,
			        .cmp = "<=", .threshold = 100 * th->throttle_clock_ratio,
			        .unit = "%");
		}
	}
	if (f) {
		diag_ranges_mask(c, f, mask);
		diag_advice(c, f, NULL);
	}
	free(mask);
}

/* What the busy samples of one GPU say about its clocks. */
typedef struct {
	int busy, any, power, thermal, hw; /* busy samples: all, throttled, by each cause */
	int nclk, near, ntemp;             /* clock readings; temperatures near slowdown, all */
	double clk, maxclk, slow;          /* summed clock, max clock, slowdown temperature */
	double share, ratio, near_share;
	bool by_reason, by_temp;
} throttle_gpu;

/* Scan GPU g's window; mask gets the throttled busy samples. */
static void throttle_scan(const diag_ctx *c, int g, bool *mask, throttle_gpu *t)
{
	const diag_thresholds *th = c->th;
	const timeline *tl = c->tl;
	memset(t, 0, sizeof *t);
	t->maxclk = tl_max(tl->gpu[g].m[GM_CLK_MAX_SM], 0, tl->n);
	t->slow = tl_max(tl->gpu[g].m[GM_TEMP_SLOWDOWN], 0, tl->n);
	for (int s = c->from; s < c->to; s++) {
		double temp = tl_gpu_at(tl, g, GM_TEMP_GPU, s);
		if (!isnan(temp) && !isnan(t->slow)) {
			t->ntemp++;
			t->near += temp >= t->slow - th->temp_margin_c;
		}
		if (!(c->act[g][s] >= th->quad_util_pct))
			continue; /* idle clocks drop by design */
		t->busy++;
		uint64_t r = gpu_reasons_slowing(reasons_at(c, g, s));
		if (!r)
			continue;
		t->any++;
		t->power += gpu_reasons_power_cap(r);
		t->thermal += gpu_reasons_thermal(r);
		t->hw += gpu_reasons_hw_slowdown(r);
		double k = tl_gpu_at(tl, g, GM_CLK_SM, s);
		if (!isnan(k)) {
			t->clk += k;
			t->nclk++;
		}
		mask[s] = true;
	}
	t->share = t->busy ? (double)t->any / t->busy : 0;
	t->ratio = t->nclk && t->maxclk > 0 ? t->clk / t->nclk / t->maxclk : NAN;
	t->near_share = t->ntemp ? (double)t->near / t->ntemp : 0;
	bool clocks_down = isnan(t->ratio) || t->ratio <= th->throttle_clock_ratio;
	t->by_reason = t->share >= th->throttle_share && clocks_down;
	t->by_temp = t->near_share >= th->throttle_share;
}

/* The advice case for GPU g's throttling: "thermal", "hw" or "power". */
static const char *throttle_kind(const throttle_gpu *t)
{
	return t->thermal >= t->hw && t->thermal > 0 ? "thermal"
	       : t->hw > 0                           ? "hw"
	       : t->by_temp                          ? "thermal"
	                                             : "power";
}

static void throttle_title(const diag_ctx *c, diag_finding *f, int g, const throttle_gpu *t,
                           const char *kind)
{
	const timeline *tl = c->tl;
	const char *why = !strcmp(kind, "thermal") ? L_("thermal slowdown")
	                  : !strcmp(kind, "hw")    ? L_("hardware slowdown")
	                                           : L_("the power cap");
	char clock[64] = "", temp[64] = "";
	if (!isnan(t->ratio))
		snprintf(clock, sizeof clock, L_(" at %.0f of %.0f MHz (%.0f %%)"),
		         t->clk / t->nclk, t->maxclk, 100 * t->ratio);
	double tmax = diag_max(c, tl->gpu[g].m[GM_TEMP_GPU]);
	if (!isnan(tmax) && !isnan(t->slow))
		snprintf(temp, sizeof temp, L_("; up to %.0f C, slowdown at %.0f C"), tmax,
		         t->slow);
	if (t->by_reason)
		diag_title(f, "GPU %d clocks held%s by %s for %.0f %% of busy time%s",
		           tl->gpu[g].index, clock, why, 100 * t->share, temp);
	else
		diag_title(f,
		           "GPU %d runs within %.0f C of its slowdown temperature %.0f %% "
		           "of the time%s",
		           tl->gpu[g].index, c->th->temp_margin_c, 100 * t->near_share, temp);
}

static void throttle_evidence(const diag_ctx *c, diag_finding *f, int g, const throttle_gpu *t)
{
	const diag_thresholds *th = c->th;
	DIAG_EV(f, g, .metric = DIAG_EV_REASONS, .stat = N_("share of busy samples throttled"),
	        .value = 100 * t->share, .cmp = ">=", .threshold = 100 * th->throttle_share,
	        .unit = "%");
	if (t->thermal)
		DIAG_EV(f, g, .metric = DIAG_EV_REASONS,
		        .stat = N_("thermal share of busy samples"),
		        .value = 100.0 * t->thermal / t->busy,
		        .cmp = ">=", .threshold = 100 * th->throttle_severe_share, .unit = "%");
	if (t->hw)
		DIAG_EV(f, g, .metric = DIAG_GM(CLK_R_HW_SLOW), .stat = N_("share of busy samples"),
		        .value = 100.0 * t->hw / t->busy,
		        .cmp = ">=", .threshold = 100 * th->throttle_severe_share, .unit = "%");
	if (t->power)
		DIAG_EV(f, g, .metric = DIAG_GM(CLK_R_SW_POWER),
		        .stat = N_("share of busy samples"), .value = 100.0 * t->power / t->busy,
		        .unit = "%");
	if (!isnan(t->ratio))
		DIAG_EV(f, g, .metric = DIAG_GM(CLK_SM), .per = DIAG_GM(CLK_MAX_SM),
		        .stat = N_("mean while throttled"), .value = 100 * t->ratio,
		        .cmp = "<=", .threshold = 100 * th->throttle_clock_ratio, .unit = "%");
	if (t->ntemp)
		DIAG_EV(f, g, .metric = DIAG_GM(TEMP_GPU),
		        .stat = N_("share within margin of slowdown"), .value = 100 * t->near_share,
		        .cmp = ">=", .threshold = 100 * th->throttle_share, .unit = "%");
}

void rule_throttled(diag_ctx *c)
{
	const diag_thresholds *th = c->th;
	if (c->to - c->from < th->min_samples)
		return;
	bool *mask = diag_mask_new(c);
	diag_finding *f = NULL;
	const char *kind = "power";
	double worst_share = 0;
	for (int g = 0; g < c->ngpu; g++) {
		if (!c->job[g] || !c->act[g])
			continue;
		throttle_gpu t;
		throttle_scan(c, g, mask, &t);
		if (!t.by_reason && !t.by_temp)
			continue;
		const diag_finding *pc = diag_ctx_find(c, DIAG_R_POWER_CAPPED);
		if (pc && (pc->gpus & (1ULL << g)) && !t.thermal && !t.hw && !t.by_temp)
			continue; /* the cap someone set says it, with its numbers */
		double sev_share =
		    t.busy ? (double)(t.thermal > t.hw ? t.thermal : t.hw) / t.busy : 0;
		const char *k = throttle_kind(&t);
		/* At the power cap under full load the board does what it is built
		 * for; worth knowing, not a fault. Heat and hardware slowdown are. */
		diag_severity sev = !strcmp(k, "power") ? DIAG_INFO : DIAG_WARN;
		if (sev_share >= th->throttle_severe_share)
			sev = DIAG_ERROR;
		if (!f || sev > f->severity || t.share > worst_share) {
			if (!f)
				f = diag_add(c, DIAG_R_THROTTLED, sev, t.by_reason ? 0.85 : 0.6);
			if (sev > f->severity)
				f->severity = sev;
			worst_share = t.share;
			kind = k;
			throttle_title(c, f, g, &t, k);
		}
		diag_gpu(f, g);
		throttle_evidence(c, f, g, &t);
	}
	if (f) {
		diag_ranges_mask(c, f, mask);
		if (f->nranges == 0)
			diag_range_window(c, f);
		diag_advice(c, f, kind);
	}
	free(mask);
}

/* ---- pcie-degraded: link below its maximum under load, replays rising ---- */

void rule_pcie_degraded(diag_ctx *c)
{
	const diag_thresholds *th = c->th;
	const timeline *tl = c->tl;
	diag_finding *f = NULL;
	bool *mask = diag_mask_new(c);
	for (int g = 0; g < c->ngpu; g++) {
		if (!c->job[g])
			continue;
		double gmax = tl_max(tl->gpu[g].m[GM_PCIE_GEN_MAX], 0, tl->n);
		double wmax = tl_max(tl->gpu[g].m[GM_PCIE_WIDTH_MAX], 0, tl->n);
		int loaded = 0, low = 0;
		double gsum = 0, wsum = 0;
		for (int s = c->from; s < c->to; s++) {
			/* Links drop generation when idle to save power: judge under load only. */
			if (!c->act[g] || !(c->act[g][s] >= th->quad_util_pct))
				continue;
			double gc = tl_gpu_at(tl, g, GM_PCIE_GEN_CUR, s),
			       wc = tl_gpu_at(tl, g, GM_PCIE_WIDTH_CUR, s);
			if (isnan(gc) && isnan(wc))
				continue;
			loaded++;
			gsum += gc;
			wsum += wc;
			if ((!isnan(gc) && gc < gmax) || (!isnan(wc) && wc < wmax)) {
				low++;
				mask[s] = true;
			}
		}
		const double *rp = tl->gpu[g].m[GM_PCIE_REPLAY];
		double rise = diag_max(c, rp) - diag_min(c, rp);
		int aer = 0;
		for (int i = 0; i < tl->nevents; i++)
			if (!strcmp(tl->events[i].kind, TL_EV_AER) && (tl->events[i].gpu == g))
				aer++;
		double share = loaded ? (double)low / loaded : 0;
		bool degraded = loaded >= th->min_samples && share >= th->pcie_degraded_share;
		bool replays = !isnan(rise) && rise >= th->pcie_replay_min;
		if (!degraded && !replays && !aer)
			continue;
		if (!f) {
			f = diag_add(c, DIAG_R_PCIE_DEGRADED, DIAG_WARN,
			             degraded || aer ? 0.85 : 0.7);
			if (degraded)
				diag_title(f,
				           "GPU %d PCIe link at Gen%.0f x%.0f under load (max "
				           "Gen%.0f x%.0f)",
				           tl->gpu[g].index, gsum / loaded, wsum / loaded, gmax,
				           wmax);
			else if (replays)
				diag_title(f, "GPU %d PCIe replay counter rose by %.0f during %s",
				           tl->gpu[g].index, rise, c->span);
			else
				diag_title(f, "GPU %d reported %d PCIe AER error%s",
				           tl->gpu[g].index, aer, aer == 1 ? "" : "s");
		}
		diag_gpu(f, g);
		if (loaded) {
			DIAG_EV(f, g, .metric = DIAG_GM(PCIE_GEN_CUR),
			        .stat = N_("mean under load"), .value = gsum / loaded, .cmp = "<",
			        .threshold = gmax);
			DIAG_EV(f, g, .metric = DIAG_GM(PCIE_WIDTH_CUR),
			        .stat = N_("mean under load"), .value = wsum / loaded, .cmp = "<",
			        .threshold = wmax);
			DIAG_EV(
			    f, g, .metric = DIAG_EV_PCIE_LINK,
			    .stat = N_("share of loaded samples below max"), .value = 100 * share,
			    .cmp = ">=", .threshold = 100 * th->pcie_degraded_share, .unit = "%");
		}
		if (!isnan(rise))
			DIAG_EV(f, g, .metric = DIAG_GM(PCIE_REPLAY), .stat = N_("increase"),
			        .value = rise, .cmp = ">=", .threshold = th->pcie_replay_min);
		if (aer)
			DIAG_EV(f, g, .metric = TL_EV_AER, .stat = N_("events"), .value = aer,
			        .cmp = ">=", .threshold = 1);
	}
	if (f) {
		diag_ranges_mask(c, f, mask);
		if (f->nranges == 0)
			diag_range_window(c, f);
		diag_advice(c, f, NULL);
	}
	free(mask);
}
