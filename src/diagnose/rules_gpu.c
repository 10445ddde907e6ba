/*
 * rules_gpu.c - rules read from the GPU's own counters: faults, out of
 * memory, small kernels, memory bandwidth, memory held while idle, plain
 * low utilization, MIG blindness, too little data, idle GPUs and "healthy".
 * Clocks and the PCIe link are in rules_clock.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/diag_int.h"
#include "gpu/xid.h"

#define GIB 1024.0

/* ---- gpu-fault: Xid, fell off the bus, uncorrectable ECC, failed row remapping ---- */

/* One evidence line and one note sentence per distinct Xid (number and GPU), first time kept. */
static void cite_xid(diag_finding *f, const tl_event *e, const timeline *tl, int *cited)
{
	char stat[64];
	const char *meaning =
	    e->value > 0 ? L_(gpu_xid_meaning(e->value)) : L_("number unreadable");
	snprintf(stat, sizeof stat, L_("at %.1f s: %s"), e->t, meaning);
	DIAG_EV(f, e->gpu, .metric = TL_EV_XID, .stat = stat, .value = (double)e->value);
	if ((*cited)++ >= 3)
		return;
	const gpu_xid_info *x = e->value > 0 ? gpu_xid_lookup(e->value) : NULL;
	char where[32] = "";
	if (e->gpu >= 0 && e->gpu < tl->ngpu)
		snprintf(where, sizeof where, L_(" on GPU %d"), tl->gpu[e->gpu].index);
	diag_note(f, "Xid %ld%s at %.1f s: %s%s%s.", e->value, where, e->t, meaning,
	          x ? (x->hardware ? L_(" (hardware). ") : L_(" (usually the application). ")) : "",
	          x ? L_(x->action) : "");
}

static const char *amdgpu_fault_name(long v)
{
	switch (v) {
	case TL_AMDGPU_RING_TIMEOUT:
		return N_("ring timeout");
	case TL_AMDGPU_RESET:
		return N_("GPU reset");
	case TL_AMDGPU_RESET_OK:
		return N_("GPU reset succeeded");
	default:
		return N_("GPU reset failed");
	}
}

/*
 * amdgpu's ring timeouts and resets: faults the way an Xid is (the job's work
 * on that GPU is lost). One evidence line per kind and GPU; a failed reset is
 * hardware. Returns the count; *first is the first event.
 */
static int amdgpu_faults(diag_ctx *c, diag_finding **f, bool *hw, const tl_event **first)
{
	const timeline *tl = c->tl;
	int n = 0;
	for (int i = 0; i < tl->nevents; i++) {
		const tl_event *e = &tl->events[i];
		if (strcmp(e->kind, TL_EV_AMDGPU) != 0)
			continue;
		if (!*f)
			*f = diag_add(c, DIAG_R_GPU_FAULT, DIAG_ERROR, 0.95);
		diag_gpu(*f, e->gpu);
		diag_add_range(*f, e->t, e->t);
		if (!n++)
			*first = e;
		*hw |= e->value == TL_AMDGPU_RESET_FAILED;
		bool again = false;
		for (int k = 0; k < i; k++)
			again |= !strcmp(tl->events[k].kind, TL_EV_AMDGPU) &&
			         tl->events[k].value == e->value && tl->events[k].gpu == e->gpu;
		if (!again) {
			char stat[64];
			snprintf(stat, sizeof stat, L_("at %.1f s: %s"), e->t,
			         L_(amdgpu_fault_name(e->value)));
			DIAG_EV(*f, e->gpu, .metric = TL_EV_AMDGPU, .stat = stat,
			        .value = (double)e->value);
		}
	}
	return n;
}

void rule_gpu_fault(diag_ctx *c)
{
	const timeline *tl = c->tl;
	diag_finding *f = NULL;
	int nx = 0, lost = 0, cited = 0;
	long first_xid = 0;
	double first_t = NAN, lost_t = NAN;
	bool hw = false;
	for (int i = 0; i < tl->nevents; i++) {
		const tl_event *e = &tl->events[i];
		bool xid = !strcmp(e->kind, TL_EV_XID), gone = !strcmp(e->kind, TL_EV_GPU_LOST);
		if (!xid && !gone)
			continue;
		if (!f)
			f = diag_add(c, DIAG_R_GPU_FAULT, DIAG_ERROR, 0.95);
		diag_gpu(f, e->gpu);
		diag_add_range(f, e->t, e->t);
		if (xid) {
			if (!nx++) {
				first_xid = e->value;
				first_t = e->t;
			}
			const gpu_xid_info *x = gpu_xid_lookup(e->value);
			hw |= !x || x->hardware;
			/* the same Xid again on the same GPU adds no evidence line */
			bool again = false;
			for (int k = 0; k < i; k++)
				again |= !strcmp(tl->events[k].kind, TL_EV_XID) &&
				         tl->events[k].value == e->value &&
				         tl->events[k].gpu == e->gpu;
			if (!again)
				cite_xid(f, e, tl, &cited);
		} else {
			lost++;
			if (isnan(lost_t))
				lost_t = e->t;
		}
	}
	for (int g = 0; g < c->ngpu; g++) {
		if (tl->gpu[g].lost_at_end && !lost) {
			if (!f)
				f = diag_add(c, DIAG_R_GPU_FAULT, DIAG_ERROR, 0.95);
			diag_gpu(f, g);
			lost++;
		}
		const double *ecc = tl->gpu[g].m[GM_ECC_UNCORR_VOL];
		double d = tl_max(ecc, 0, tl->n) - tl_min(ecc, 0, tl->n);
		if (d > 0) {
			if (!f)
				f = diag_add(c, DIAG_R_GPU_FAULT, DIAG_ERROR, 0.9);
			diag_gpu(f, g);
			hw = true;
			DIAG_EV(f, g, .metric = DIAG_GM(ECC_UNCORR_VOL),
			        .stat = N_("increase during the run"), .value = d, .cmp = ">",
			        .threshold = 0);
		}
		double rf = tl_max(tl->gpu[g].m[GM_REMAP_FAILURE], 0, tl->n);
		if (rf >= 1) {
			if (!f)
				f = diag_add(c, DIAG_R_GPU_FAULT, DIAG_ERROR, 0.9);
			diag_gpu(f, g);
			hw = true;
			DIAG_EV(f, g, .metric = DIAG_GM(REMAP_FAILURE), .stat = N_("value"),
			        .value = rf, .cmp = ">=", .threshold = 1);
		}
	}
	const tl_event *amd = NULL;
	int namd = amdgpu_faults(c, &f, &hw, &amd);
	if (!f)
		return;
	char gl[64], at[32] = "", xs[112] = "";
	diag_gpu_list(c, f->gpus, gl, sizeof gl);
	const char *first_meaning =
	    first_xid > 0 ? L_(gpu_xid_meaning(first_xid)) : L_("number unreadable");
	if (nx)
		snprintf(xs, sizeof xs, L_("Xid %ld: %s"), first_xid, first_meaning);
	if (lost) {
		if (!isnan(lost_t))
			snprintf(at, sizeof at, L_(" at %.1f s"), lost_t);
		diag_title(f, "%s fell off the bus%s%s%s", gl, at, nx ? L_("; first ") : "", xs);
	} else if (nx) {
		diag_title(f, "Xid %ld on %s at %.1f s: %s; %d Xid event%s", first_xid, gl, first_t,
		           first_meaning, nx, nx == 1 ? "" : "s");
	} else if (namd) {
		diag_title(f, "amdgpu %s on %s at %.1f s; %d amdgpu fault event%s",
		           L_(amdgpu_fault_name(amd->value)), gl, amd->t, namd,
		           namd == 1 ? "" : "s");
	} else {
		diag_title(f, "%s reported uncorrectable memory errors", gl);
	}
	if (lost)
		DIAG_EV(f, DIAG_JOB, .metric = TL_EV_GPU_LOST, .stat = N_("events"), .value = lost,
		        .cmp = ">=", .threshold = 1);
	if (nx)
		DIAG_EV(f, DIAG_JOB, .metric = TL_EV_XID, .stat = N_("events"), .value = nx,
		        .cmp = ">=", .threshold = 1);
	if (namd)
		DIAG_EV(f, DIAG_JOB, .metric = TL_EV_AMDGPU, .stat = N_("events"), .value = namd,
		        .cmp = ">=", .threshold = 1);
	diag_advice(c, f, !lost && nx && !hw ? "xid-app" : NULL);
}

/* ---- oom: an out-of-memory message or exit ---- */

static bool mentions_gpu(const char *s)
{
	return strstr(s, "CUDA") || strstr(s, "cuda") || strstr(s, "GPU") || strstr(s, "HIP");
}

void rule_oom(diag_ctx *c)
{
	const timeline *tl = c->tl;
	const tl_event *e = NULL;
	int count = 0;
	for (int i = 0; i < tl->nevents; i++)
		if (!strcmp(tl->events[i].kind, TL_EV_OOM)) {
			if (!e)
				e = &tl->events[i];
			count++;
		}
	if (!e)
		return;
	bool gpu = e->gpu >= 0 || mentions_gpu(e->text);
	diag_finding *f = diag_add(c, DIAG_R_OOM, DIAG_ERROR, 0.95);
	diag_add_range(f, e->t, e->t);
	/* The message's first sentence ("...: CUDA out of memory."), else its start. */
	char text[96];
	snprintf(text, sizeof text, "%.95s", e->text[0] ? e->text : L_("out of memory"));
	char *stop = strstr(text, ". ");
	if (stop && stop - text > 12)
		stop[1] = 0;
	else if (strlen(e->text) > sizeof text - 1)
		memcpy(text + sizeof text - 4, "...", 4);
	if (gpu) {
		/* The GPU named by the event, else the job GPU whose memory peaked highest. */
		int g = e->gpu;
		double best = -1;
		for (int k = 0; e->gpu < 0 && k < c->ngpu; k++)
			if (c->job[k] && c->res->gpu[k].mem_peak_pct > best) {
				best = c->res->gpu[k].mem_peak_pct;
				g = k;
			}
		if (g >= 0 && g < c->ngpu) {
			diag_gpu(f, g);
			double peak = tl_max(tl->gpu[g].m[GM_MEM_USED], 0, tl->n),
			       tot = diag_mem_total(c, g);
			diag_title(f, "Out of GPU memory on GPU %d at %.1f s: %s", tl->gpu[g].index,
			           e->t, text);
			if (!isnan(peak))
				DIAG_EV(f, g, .metric = DIAG_GM(MEM_USED), .stat = N_("peak"),
				        .value = peak, .unit = "MiB");
			if (!isnan(tot))
				DIAG_EV(f, g, .metric = DIAG_GM(MEM_TOTAL), .stat = N_("capacity"),
				        .value = tot, .unit = "MiB");
		} else {
			diag_title(f, "Out of GPU memory at %.1f s: %s", e->t, text);
		}
		diag_advice(c, f, NULL);
	} else {
		diag_title(f, "Out of host memory at %.1f s: %s", e->t, text);
		double used = tl_max(tl->h[HM_MEM_USED], 0, tl->n),
		       tot = tl_max(tl->h[HM_MEM_TOTAL], 0, tl->n);
		if (!isnan(used))
			DIAG_EV(f, DIAG_JOB, .metric = DIAG_HM(MEM_USED), .stat = N_("peak"),
			        .value = used, .unit = "MiB");
		if (!isnan(tot))
			DIAG_EV(f, DIAG_JOB, .metric = DIAG_HM(MEM_TOTAL), .stat = N_("capacity"),
			        .value = tot, .unit = "MiB");
		diag_advice(c, f, "host");
	}
	DIAG_EV(f, DIAG_JOB, .metric = TL_EV_OOM, .stat = N_("events"), .value = count,
	        .cmp = ">=", .threshold = 1);
	if (tl->exit_status > 0)
		diag_note(f, "The job exited with status %d.", tl->exit_status);
}

/* ---- oom-risk: peak memory within a margin of capacity ---- */

void rule_oom_risk(diag_ctx *c)
{
	if (diag_has(c, DIAG_R_OOM))
		return; /* it happened: the oom finding says it all */
	const timeline *tl = c->tl;
	diag_finding *f = NULL;
	double worst_pct = 0;
	int worst = -1;
	bool *mask = diag_mask_new(c);
	for (int g = 0; g < c->ngpu; g++) {
		if (!c->job[g])
			continue;
		const double *used = tl->gpu[g].m[GM_MEM_USED];
		double peak = tl_max(used, 0, tl->n), tot = diag_mem_total(c, g);
		if (isnan(peak) || !(tot > 0))
			continue;
		double pct = 100 * peak / tot, limit = 100 - c->th->oom_margin_pct;
		if (!(pct >= limit) || !isfinite(pct))
			continue;
		if (!f)
			f = diag_add(c, DIAG_R_OOM_RISK, DIAG_WARN, 0.8);
		diag_gpu(f, g);
		DIAG_EV(f, g, .metric = DIAG_GM(MEM_USED), .stat = N_("peak share of capacity"),
		        .value = pct, .cmp = ">=", .threshold = limit, .unit = "%");
		for (int s = 0; s < tl->n; s++)
			if (!isnan(used[s]) && 100 * used[s] / tot >= limit)
				mask[s] = true;
		if (worst < 0 || pct > worst_pct) {
			worst_pct = pct;
			worst = g;
		}
	}
	if (f) {
		double peak = tl_max(tl->gpu[worst].m[GM_MEM_USED], 0, tl->n),
		       tot = diag_mem_total(c, worst);
		diag_title(f,
		           "GPU %d memory peaked at %.1f of %.1f GiB (%.1f %%), within %.0f %% of "
		           "capacity",
		           tl->gpu[worst].index, peak / GIB, tot / GIB, worst_pct,
		           c->th->oom_margin_pct);
		diag_ctx whole = *c;
		whole.from = 0;
		whole.to = tl->n;
		diag_ranges_mask(&whole, f, mask);
		diag_advice(c, f, NULL);
	}
	free(mask);
}

/* ---- launch-bound: busy but not computing (small kernels, launch overhead) ---- */

/*
 * Ranks of one job run the same kernels: when another GPU of the job is as
 * busy and draws more than launch_power_ratio of its limit, GPU g's low draw
 * is a collective spinning while it waits for that one, not small kernels.
 * Only the power evidence is fooled so; SM activity is not.
 */
static bool waits_for_a_rank(const diag_ctx *c, int g)
{
	const diag_gpu_summary *G = c->res->gpu;
	for (int h = 0; h < c->ngpu; h++) {
		if (h == g || !c->job[h] || isnan(G[h].util_mean) ||
		    G[h].util_mean < c->th->launch_util_pct || !(G[h].power_limit > 0))
			continue;
		if (G[h].power_mean / G[h].power_limit > c->th->launch_power_ratio)
			return true;
	}
	return false;
}

void rule_launch_bound(diag_ctx *c)
{
	const diag_thresholds *th = c->th;
	diag_finding *f = NULL;
	int worst = -1;
	double worst_sm = INFINITY, wu = NAN, wp = NAN;
	/* GPUs waiting at a collective spin with few SMs busy: that is sync-wait, not small
	 * kernels. */
	const diag_finding *sw = diag_ctx_find(c, DIAG_R_SYNC_WAIT);
	uint64_t waiting = sw ? sw->gpus : 0;
	/* Busy DRAM with moderate SMs is memory-bound: kernels that wait on memory
	 * leave SMs idle too, and small kernels are not the cause there. */
	const diag_finding *mb = diag_ctx_find(c, DIAG_R_MEMORY_BOUND);
	waiting |= mb ? mb->gpus : 0;
	const diag_finding *ds = diag_ctx_find(c, DIAG_R_DATA_STARVED);
	waiting |= ds ? ds->gpus : 0;
	if (c->to - c->from >= th->min_samples) {
		for (int g = 0; g < c->ngpu; g++) {
			if (!c->job[g] || (waiting & (1ULL << g)))
				continue;
			diag_gpu_summary *s = &c->res->gpu[g];
			if (isnan(s->util_mean) || s->util_mean < th->launch_util_pct)
				continue;
			double ratio = s->power_limit > 0 ? s->power_mean / s->power_limit : NAN;
			bool sm_low = !isnan(s->sm_active_mean) &&
			              s->sm_active_mean <= th->launch_sm_active_pct;
			bool pw_low = !isnan(ratio) && ratio <= th->launch_power_ratio;
			double conf;
			if (!isnan(s->sm_active_mean))
				conf = sm_low ? (pw_low ? 0.85 : 0.7) : 0;
			else if (pw_low && !waits_for_a_rank(c, g))
				conf = 0.45; /* light kernels or small ones: can't tell apart */
			else
				conf = 0;
			if (conf == 0)
				continue;
			if (!f)
				f = diag_add(c, DIAG_R_LAUNCH_BOUND, DIAG_WARN, conf);
			else if (conf > f->confidence)
				f->confidence = conf;
			diag_gpu(f, g);
			DIAG_EV(f, g, .metric = DIAG_GM(UTIL_GPU), .stat = N_("mean"),
			        .value = s->util_mean,
			        .cmp = ">=", .threshold = th->launch_util_pct, .unit = "%");
			if (!isnan(s->sm_active_mean))
				DIAG_EV(f, g, .metric = DIAG_GM(GPM_SM_ACTIVE), .stat = N_("mean"),
				        .value = s->sm_active_mean,
				        .cmp = "<=", .threshold = th->launch_sm_active_pct,
				        .unit = "%");
			if (!isnan(ratio))
				DIAG_EV(f, g, .metric = DIAG_GM(POWER_DRAW),
				        .per = DIAG_GM(POWER_LIMIT), .stat = N_("mean"),
				        .value = 100 * ratio,
				        .cmp = "<=", .threshold = 100 * th->launch_power_ratio,
				        .unit = "%");
			double key = isnan(s->sm_active_mean) ? 100 * ratio : s->sm_active_mean;
			if (key < worst_sm) {
				worst_sm = key;
				worst = g;
				wu = s->util_mean;
				wp = ratio;
			}
		}
	}
	const tl_trace_summary *tr = &c->tl->trace;
	double short_share = tr->kernels > 0 ? (double)tr->short_kernels / tr->kernels : NAN;
	bool trace_hit = !isnan(short_share) && short_share >= th->short_kernel_share;
	if (trace_hit) {
		if (!f) {
			f = diag_add(c, DIAG_R_LAUNCH_BOUND, DIAG_WARN, 0.8);
			for (int g = 0; g < c->ngpu; g++)
				if (c->job[g])
					diag_gpu(f, g);
		} else if (f->confidence < 0.95) {
			f->confidence += 0.1;
		}
		DIAG_EV(f, DIAG_JOB, .metric = DIAG_EV_TRACE_KERNELS,
		        .stat = N_("share shorter than 10 us"), .value = 100 * short_share,
		        .cmp = ">=", .threshold = 100 * th->short_kernel_share, .unit = "%");
		DIAG_EV(f, DIAG_JOB, .metric = DIAG_EV_TRACE_KERNELS, .stat = N_("count"),
		        .value = (double)tr->kernels);
		if (tr->kernels > 0 && tr->kernel_s > 0)
			DIAG_EV(f, DIAG_JOB, .metric = DIAG_EV_TRACE_KERNELS,
			        .stat = N_("mean duration"),
			        .value = 1e6 * tr->kernel_s / tr->kernels, .unit = "us");
	}
	if (!f)
		return;
	if (worst >= 0) {
		const diag_gpu_summary *s = &c->res->gpu[worst];
		char sm[48] = "", pw[48] = "";
		if (!isnan(s->sm_active_mean))
			snprintf(sm, sizeof sm, L_(" but its SMs are active only %.0f %%"),
			         s->sm_active_mean);
		if (!isnan(wp))
			snprintf(pw, sizeof pw, L_("%s it draws %.0f %% of its power limit"),
			         sm[0] ? L_(" and") : L_(" but"), 100 * wp);
		diag_title(f, "GPU %d is 'busy' %.0f %% of the time%s%s: many small kernels",
		           s->index, wu, sm, pw);
	} else {
		diag_title(
		    f, "%.0f %% of %ld traced kernels are shorter than their launch cost (10 us)",
		    100 * short_share, tr->kernels);
	}
	diag_range_window(c, f);
	diag_advice(c, f, NULL);
}

/* ---- memory-bound: DRAM busy while the SMs are moderately active ---- */

void rule_memory_bound(diag_ctx *c)
{
	const diag_thresholds *th = c->th;
	if (c->to - c->from < th->min_samples)
		return;
	diag_finding *f = NULL;
	diag_severity sev = c->o->goal == DIAG_GOAL_LATENCY ? DIAG_INFO : DIAG_WARN;
	for (int g = 0; g < c->ngpu; g++) {
		if (!c->job[g])
			continue;
		const diag_gpu_summary *s = &c->res->gpu[g];
		/* Without SM activity "moderate SMs" cannot be told: information only. */
		diag_severity gsev = isnan(s->sm_active_mean) ? DIAG_INFO : sev;
		bool gpm = !isnan(s->dram_active_mean);
		double dram =
		    gpm ? s->dram_active_mean : diag_mean(c, diag_series(c, g, GM_UTIL_MEM));
		if (isnan(dram) || dram < th->membound_dram_pct)
			continue;
		double conf;
		if (!isnan(s->sm_active_mean)) {
			if (s->sm_active_mean > th->membound_sm_max_pct ||
			    s->sm_active_mean <= th->idle_util_pct)
				continue;
			conf = gpm ? 0.8 : 0.65;
		} else {
			/* Without SM activity: kernels run (util high) and the memory
			 * controller is busy most of the time; weaker. */
			if (isnan(s->util_mean) || s->util_mean < th->quad_util_pct)
				continue;
			conf = 0.45;
		}
		if (f && gsev > f->severity)
			f->severity = gsev;
		if (!f) {
			f = diag_add(c, DIAG_R_MEMORY_BOUND, gsev, conf);
			diag_title(
			    f,
			    "GPU %d memory is active %.0f %% while %s: kernels wait on memory "
			    "bandwidth",
			    c->tl->gpu[g].index, dram,
			    isnan(s->sm_active_mean) ? L_("kernels run most of the time")
			                             : L_("the SMs are only moderately active"));
			if (!isnan(s->sm_active_mean)) {
				char t[80];
				snprintf(t, sizeof t, L_(" (SM %.0f %%)"), s->sm_active_mean);
				strncat(f->title, t, sizeof f->title - strlen(f->title) - 1);
			}
		}
		diag_gpu(f, g);
		DIAG_EV(f, g, .metric = gpm ? DIAG_GM(GPM_DRAM_ACTIVE) : DIAG_GM(UTIL_MEM),
		        .stat = N_("mean"), .value = dram,
		        .cmp = ">=", .threshold = th->membound_dram_pct, .unit = "%");
		if (!isnan(s->sm_active_mean))
			DIAG_EV(f, g, .metric = DIAG_GM(GPM_SM_ACTIVE), .stat = N_("mean"),
			        .value = s->sm_active_mean,
			        .cmp = "<=", .threshold = th->membound_sm_max_pct, .unit = "%");
		else
			DIAG_EV(f, g, .metric = DIAG_GM(UTIL_GPU), .stat = N_("mean"),
			        .value = s->util_mean, .cmp = ">=", .threshold = th->quad_util_pct,
			        .unit = "%");
	}
	if (f) {
		diag_range_window(c, f);
		diag_advice(c, f, NULL);
	}
}

/* ---- memory-full-compute-idle: the quadrant's idle-full corner ---- */

/* Memory at or above memfull_pct for most of the window, and idle meanwhile: the sure case. */
typedef struct {
	bool sustained;
	double held_pct;  /* mean share of capacity while at or above memfull_pct */
	double util_held; /* mean utilization meanwhile */
} full_case;

static void sustained_full(const diag_ctx *c, int g, full_case *fc)
{
	const diag_thresholds *th = c->th;
	const double *used = diag_series(c, g, GM_MEM_USED);
	double tot = diag_mem_total(c, g);
	memset(fc, 0, sizeof *fc);
	if (!used || !(tot > 0) || !c->act[g])
		return;
	int nfull = 0, nu = 0, npresent = 0;
	double usum = 0, msum = 0;
	for (int s = c->from; s < c->to; s++) {
		if (isnan(used[s]))
			continue;
		npresent++;
		if (100 * used[s] / tot < th->memfull_pct)
			continue;
		nfull++;
		msum += used[s];
		if (!isnan(c->act[g][s])) {
			usum += c->act[g][s];
			nu++;
		}
	}
	if (nu == 0 || 2 * nfull < npresent)
		return;
	fc->held_pct = 100 * msum / nfull / tot;
	fc->util_held = usum / nu;
	fc->sustained = fc->util_held <= th->memfull_util_pct;
}

/* Evidence for GPU g: the quadrant's two numbers, and the sure case's when it holds. */
static void full_evidence(const diag_ctx *c, diag_finding *f, int g, const full_case *fc)
{
	const diag_thresholds *th = c->th;
	const diag_gpu_summary *s = &c->res->gpu[g];
	if (fc->sustained) {
		DIAG_EV(f, g, .metric = DIAG_GM(MEM_USED),
		        .stat = N_("mean share of capacity while full"), .value = fc->held_pct,
		        .cmp = ">=", .threshold = th->memfull_pct, .unit = "%");
		DIAG_EV(f, g, .metric = DIAG_GM(UTIL_GPU), .stat = N_("mean while memory is full"),
		        .value = fc->util_held, .cmp = "<=", .threshold = th->memfull_util_pct,
		        .unit = "%");
	}
	DIAG_EV(f, g, .metric = DIAG_GM(MEM_USED), .stat = N_("peak share of capacity"),
	        .value = s->mem_peak_pct, .cmp = ">=", .threshold = th->quad_mem_pct, .unit = "%");
	DIAG_EV(f, g, .metric = diag_act_key(c, g), .stat = N_("mean"), .value = s->util_mean,
	        .cmp = "<", .threshold = th->quad_util_pct, .unit = "%");
}

/*
 * Every job GPU in the quadrant's idle-full corner (peak memory at or above
 * quad_mem_pct, mean utilization under quad_util_pct), whatever else is
 * found, so that the findings never contradict the quadrant. The one
 * exception is data-starved having found a saturated loader of the job
 * behind that GPU's idling: it says so itself. Memory at or above
 * memfull_pct most of the window is the sure case; a job process stopped or
 * held by a debugger through the idling is the surest, and is named.
 */
void rule_memory_full_idle(diag_ctx *c)
{
	const diag_thresholds *th = c->th;
	if (c->to - c->from < th->min_samples)
		return;
	diag_finding *f = NULL;
	diag_severity sev = c->o->goal == DIAG_GOAL_LATENCY ? DIAG_INFO : DIAG_WARN;
	bool *mask = diag_mask_new(c);
	int first = -1;
	full_case fc0 = {0};
	for (int g = 0; g < c->ngpu; g++) {
		const diag_gpu_summary *s = &c->res->gpu[g];
		if (!c->job[g] || s->quadrant != DIAG_Q_IDLE_FULL ||
		    (c->loader_bound & (1ULL << g)))
			continue;
		full_case fc;
		sustained_full(c, g, &fc);
		if (!f) {
			f = diag_add(c, DIAG_R_MEMORY_FULL_IDLE, sev, 0.6);
			first = g;
			fc0 = fc;
		}
		if (fc.sustained && f->confidence < 0.75)
			f->confidence = 0.75;
		diag_gpu(f, g);
		full_evidence(c, f, g, &fc);
		const double *used = diag_series(c, g, GM_MEM_USED);
		for (int k = c->from; used && k < c->to; k++)
			if (!isnan(used[k]) && 100 * used[k] / s->mem_total_mib >= th->quad_mem_pct)
				mask[k] = true;
	}
	if (f) {
		const diag_gpu_summary *s = &c->res->gpu[first];
		diag_title(f, "GPU %d memory %.0f %% full while utilization averages %.0f %%",
		           s->index, fc0.sustained ? fc0.held_pct : s->mem_peak_pct,
		           fc0.sustained ? fc0.util_held : s->util_mean);
		diag_ranges_mask(c, f, mask);
		diag_advice(c, f, NULL);
		diag_stop st;
		if (diag_stopped_job(c, &st)) {
			if (st.explains) {
				f->confidence = 0.85;
				diag_stop_title(f, &st);
			}
			diag_stop_cite(c, f, &st, first);
		}
	}
	free(mask);
}

/* ---- low-utilization: the GPU idles and no other rule says why ---- */

void rule_low_utilization(diag_ctx *c)
{
	const diag_thresholds *th = c->th;
	if (c->njob == 0 || c->to - c->from < th->min_samples)
		return;
	static const diag_rule explains[] = {
	    DIAG_R_NOT_ON_GPU, DIAG_R_DATA_STARVED, DIAG_R_SYNC_WAIT,        DIAG_R_HOST_CONTENTION,
	    DIAG_R_IMBALANCE,  DIAG_R_ALL_ON_GPU0,  DIAG_R_MEMORY_FULL_IDLE, DIAG_R_CONTENTION,
	    DIAG_R_GPU_FAULT,  DIAG_R_OOM};
	for (size_t i = 0; i < sizeof explains / sizeof *explains; i++)
		if (diag_has(c, explains[i]))
			return;
	/* A GPU in a busy corner of the quadrant is not under-used, whatever the thresholds. */
	bool busy[GPU_MAX];
	for (int g = 0; g < c->ngpu; g++)
		busy[g] = c->res->gpu[g].quadrant == DIAG_Q_BUSY_FULL ||
		          c->res->gpu[g].quadrant == DIAG_Q_BUSY_ROOMY;
	int worst = -1;
	double wu = INFINITY;
	for (int g = 0; g < c->ngpu; g++)
		if (c->job[g] && !busy[g] && c->res->gpu[g].util_mean < wu) {
			wu = c->res->gpu[g].util_mean;
			worst = g;
		}
	if (worst < 0 || isnan(wu) || wu >= th->lowutil_pct)
		return;
	bool latency = c->o->goal == DIAG_GOAL_LATENCY;
	diag_stop st;
	bool stopped = diag_stopped_job(c, &st);
	diag_finding *f = diag_add(c, DIAG_R_LOW_UTILIZATION, latency ? DIAG_INFO : DIAG_WARN,
	                           latency ? 0.6 : 0.5);
	bool gpu_only = diag_gpu_only(c);
	uint64_t m = 0;
	for (int g = 0; g < c->ngpu; g++)
		if (c->job[g] && !busy[g] && c->res->gpu[g].util_mean < th->lowutil_pct)
			m |= 1ULL << g;
	f->gpus = m;
	char gl[64];
	diag_gpu_list(c, m, gl, sizeof gl);
	if (latency && wu >= th->latency_ok_util_pct)
		diag_title(f, "%s utilization averages %.0f %%: a normal load for a latency goal",
		           gl, wu);
	else if (latency)
		diag_title(f, "%s utilization averages %.0f %%: room to batch requests", gl, wu);
	else if (stopped && st.explains)
		diag_title(f, "%s utilization averages %.0f %%", gl, wu);
	else if (gpu_only) /* the host was not seen: it may well explain the gaps */
		diag_title(
		    f,
		    "%s utilization averages %.0f %%; no GPU limit explains the gaps, the host "
		    "was not in the input",
		    gl, wu);
	else
		diag_title(
		    f, "%s utilization averages %.0f %% and no host or GPU limit explains the gaps",
		    gl, wu);
	if (stopped && st.explains && !latency)
		diag_stop_title(f, &st);
	DIAG_EV(f, worst, .metric = DIAG_GM(UTIL_GPU), .stat = N_("mean"), .value = wu, .cmp = "<",
	        .threshold = th->lowutil_pct, .unit = "%");
	double core = tl_mean(c->tl->h[HM_CPU_BUSY_MAX], c->from, c->to);
	if (!isnan(core))
		DIAG_EV(f, DIAG_JOB, .metric = DIAG_HM(CPU_BUSY_MAX), .stat = N_("mean"),
		        .value = core, .cmp = "<", .threshold = th->core_saturated_pct,
		        .unit = "%");
	double io = tl_mean(c->tl->h[HM_CPU_IOWAIT], c->from, c->to);
	if (!isnan(io))
		DIAG_EV(f, DIAG_JOB, .metric = DIAG_HM(CPU_IOWAIT), .stat = N_("mean"), .value = io,
		        .cmp = "<", .threshold = th->iowait_pct, .unit = "%");
	diag_range_window(c, f);
	diag_advice(c, f, gpu_only && !latency && !(stopped && st.explains) ? "gpu-only" : NULL);
	if (stopped)
		diag_stop_cite(c, f, &st, worst);
}

/*
 * ---- mig-no-utilization: what the rules cannot see on a partitioned GPU ----
 * With MIG on the driver reports no whole-GPU utilization, so every rule
 * that reads utilization is blind there; say so, with what remains visible
 * (memory, GPM activity where the GPU has it), instead of staying silent.
 */
void rule_mig_no_utilization(diag_ctx *c)
{
	uint64_t m = 0;
	int first = -1;
	for (int g = 0; g < c->ngpu; g++) {
		double mig = tl_max(c->tl->gpu[g].m[GM_MIG_CURRENT], c->from, c->to);
		if (isnan(mig) || mig < 1 || !isnan(c->res->gpu[g].util_mean))
			continue;
		m |= 1ULL << g;
		if (first < 0)
			first = g;
	}
	if (!m)
		return;
	diag_finding *f = diag_add(c, DIAG_R_MIG_NO_UTILIZATION, DIAG_INFO, 0.9);
	f->gpus = m;
	char gl[64];
	diag_gpu_list(c, m, gl, sizeof gl);
	diag_title(f,
	           "%s in MIG mode: the driver reports no whole-GPU utilization, so the "
	           "utilization rules cannot judge it",
	           gl);
	DIAG_EV(f, first, .metric = DIAG_GM(MIG_CURRENT), .stat = N_("max"), .value = 1, .cmp = "=",
	        .threshold = 1);
	double mem = tl_mean(c->tl->gpu[first].m[GM_MEM_USED], c->from, c->to);
	if (!isnan(mem))
		DIAG_EV(f, first, .metric = DIAG_GM(MEM_USED), .stat = N_("mean"), .value = mem,
		        .unit = "MiB");
	double sm = tl_mean(c->tl->gpu[first].m[GM_GPM_SM_ACTIVE], c->from, c->to);
	if (!isnan(sm))
		DIAG_EV(f, first, .metric = DIAG_GM(GPM_SM_ACTIVE), .stat = N_("mean"), .value = sm,
		        .unit = "%");
	diag_range_window(c, f);
	diag_advice(c, f, NULL);
}

/* ---- too-little-data: no verdict from a handful of samples ---- */

void rule_too_little_data(diag_ctx *c)
{
	const timeline *tl = c->tl;
	int k = c->to - c->from;
	if (tl->n > 0 && k >= c->th->min_samples)
		return;
	diag_finding *f = diag_add(c, DIAG_R_TOO_LITTLE_DATA, DIAG_INFO, 0.9);
	for (int g = 0; g < c->ngpu; g++)
		if (c->job[g])
			diag_gpu(f, g);
	double dur = tl->duration > 0 ? tl->duration : tl->n > 0 ? tl->t[tl->n - 1] : 0;
	if (tl->n == 0)
		diag_title(f,
		           "No samples were recorded (%.1f s): nothing to judge; record longer "
		           "or use --interval 100ms",
		           dur);
	else if (k == tl->n || k == 0)
		diag_title(f,
		           "%d sample%s over %.1f s: too short to judge; record longer or use "
		           "--interval 100ms",
		           tl->n, tl->n == 1 ? "" : "s", dur);
	else
		diag_title(
		    f,
		    "%d samples over %.1f s, %d of them with the GPU at work: too short to judge; "
		    "record longer or use --interval 100ms",
		    tl->n, dur, k);
	DIAG_EV(f, DIAG_JOB, .metric = DIAG_EV_SAMPLES, .stat = N_("in the analysed window"),
	        .value = k, .cmp = ">=", .threshold = c->th->min_samples);
	DIAG_EV(f, DIAG_JOB, .metric = DIAG_EV_SAMPLES, .stat = N_("recorded"), .value = tl->n);
	DIAG_EV(f, DIAG_JOB, .metric = DIAG_EV_DURATION, .stat = N_("recorded"), .value = dur,
	        .unit = "s");
	if (tl->n > 0)
		diag_add_range(f, 0, dur);
	diag_advice(c, f, NULL);
}

/* ---- gpu-idle: no GPU showed any work ---- */

void rule_gpu_idle(diag_ctx *c)
{
	const timeline *tl = c->tl;
	if (c->njob > 0 || c->ngpu == 0 || tl->n < c->th->min_samples)
		return;
	if (diag_has(c, DIAG_R_NOT_ON_GPU) || diag_has(c, DIAG_R_GPU_FAULT))
		return;
	diag_finding *f = diag_add(c, DIAG_R_GPU_IDLE, DIAG_INFO, 0.7);
	double peak = NAN;
	for (int g = 0; g < c->ngpu; g++) {
		diag_gpu(f, g);
		double m = tl_max(c->act[g], 0, tl->n);
		if (!isnan(m) && (isnan(peak) || m > peak))
			peak = m;
	}
	char gl[64];
	diag_gpu_list(c, f->gpus, gl, sizeof gl);
	if (!isnan(peak))
		diag_title(f,
		           "%s idle for the whole recording (utilization at most %.0f %%): no job "
		           "ran on %s",
		           gl, peak, c->ngpu == 1 ? L_("it") : L_("them"));
	else
		diag_title(f, "%s showed no work during the recording: no job ran on %s", gl,
		           c->ngpu == 1 ? L_("it") : L_("them"));
	if (!isnan(peak))
		DIAG_EV(f, DIAG_JOB, .metric = DIAG_GM(UTIL_GPU), .stat = N_("peak on any GPU"),
		        .value = peak, .cmp = "<=", .threshold = c->th->idle_util_pct, .unit = "%");
	diag_add_range(f, 0, tl->duration > 0 ? tl->duration : tl->t[tl->n - 1]);
	diag_advice(c, f, NULL);
}

/* ---- healthy: nothing wrong, said explicitly ---- */

void rule_healthy(diag_ctx *c)
{
	for (int i = 0; i < c->res->n; i++)
		if (c->res->f[i].severity >= DIAG_WARN)
			return;
	/* No verdict without evidence, and an idle GPU is not a healthy busy one. */
	if (diag_has(c, DIAG_R_TOO_LITTLE_DATA) || diag_has(c, DIAG_R_GPU_IDLE) || c->njob == 0)
		return;
	bool latency = c->o->goal == DIAG_GOAL_LATENCY;
	diag_finding *f = diag_add(c, DIAG_R_HEALTHY, DIAG_INFO, 0.8);
	double usum = 0, smsum = 0;
	int nu = 0, nsm = 0;
	for (int g = 0; g < c->ngpu; g++) {
		if (!c->job[g])
			continue;
		const diag_gpu_summary *s = &c->res->gpu[g];
		diag_gpu(f, g);
		if (!isnan(s->util_mean)) {
			usum += s->util_mean;
			nu++;
			DIAG_EV(f, g, .metric = DIAG_GM(UTIL_GPU), .stat = N_("mean"),
			        .value = s->util_mean, .unit = "%");
		}
		if (!isnan(s->sm_active_mean)) {
			smsum += s->sm_active_mean;
			nsm++;
			DIAG_EV(f, g, .metric = DIAG_GM(GPM_SM_ACTIVE), .stat = N_("mean"),
			        .value = s->sm_active_mean, .unit = "%");
		}
		if (s->power_limit > 0 && !isnan(s->power_mean))
			DIAG_EV(f, g, .metric = DIAG_GM(POWER_DRAW), .per = DIAG_GM(POWER_LIMIT),
			        .stat = N_("mean"), .value = 100 * s->power_mean / s->power_limit,
			        .unit = "%");
	}
	char busy[96] = "";
	if (nu && nsm)
		snprintf(busy, sizeof busy, L_(": utilization %.0f %%, SM activity %.0f %%"),
		         usum / nu, smsum / nsm);
	else if (nu)
		snprintf(busy, sizeof busy, L_(": utilization %.0f %%"), usum / nu);
	diag_title(f, "No problem found%s%s", latency ? L_(" for a latency goal") : "", busy);
	diag_range_window(c, f);
	diag_advice(c, f, diag_gpu_only(c) ? "gpu-only" : NULL);
}
