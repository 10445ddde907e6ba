/*
 * quadrant.c - per-GPU summary numbers over the analysed window and the
 * utilization x memory quadrant:
 *   util high, task slow       -> the computation itself is the limit
 *   util low, memory high      -> too much held in memory, or a model too large for its work
 *   util low, memory low       -> CPU preprocessing, disk or network
 * plus the fourth corner (util high, memory low) where a larger batch fits.
 * The findings agree with it (docs/report.md, "Findings and the quadrant"): idle-full
 * on a job GPU is memory-full-compute-idle unless data-starved names a
 * saturated loader; low-utilization names only GPUs in no other corner than
 * idle-empty.
 */
#include <math.h>
#include <stdlib.h>

#include "diagnose/diag_int.h"

const char *diag_quadrant_name(diag_quadrant q)
{
	switch (q) {
	case DIAG_Q_BUSY_FULL:
		return "busy-full";
	case DIAG_Q_BUSY_ROOMY:
		return "busy-roomy";
	case DIAG_Q_IDLE_FULL:
		return "idle-full";
	case DIAG_Q_IDLE_EMPTY:
		return "idle-empty";
	default:
		return "unknown";
	}
}

const char *diag_quadrant_meaning(diag_quadrant q)
{
	switch (q) {
	case DIAG_Q_BUSY_FULL:
		return N_("busy and memory nearly full: the computation itself is the limit; go "
		          "faster "
		          "with lower precision, a more efficient model or more GPUs");
	case DIAG_Q_BUSY_ROOMY:
		return N_(
		    "busy with memory to spare: a larger batch (more work per kernel) can raise "
		    "throughput");
	case DIAG_Q_IDLE_FULL:
		return N_(
		    "memory held but little computed: weights or cached tensors wait for work; "
		    "find the stall, or the model is too large for its work");
	case DIAG_Q_IDLE_EMPTY:
		return N_("little memory and little compute: the bottleneck is before the GPU "
		          "(CPU preprocessing, disk or network)");
	default:
		return N_("not enough data");
	}
}

/* The percentiles ps[] of the non-NAN values of x in the window, from one sort. */
static void window_pcts(const diag_ctx *c, const double *x, const double *ps, int k, double *out)
{
	if (!x || c->to <= c->from) {
		for (int i = 0; i < k; i++)
			out[i] = NAN;
		return;
	}
	double *v = malloc((size_t)(c->to - c->from) * sizeof *v);
	if (!v)
		abort();
	int n = 0;
	for (int s = c->from; s < c->to; s++)
		if (!isnan(x[s]))
			v[n++] = x[s];
	tl_percentiles(v, n, ps, k, out);
	free(v);
}

void diag_gpu_summaries(diag_ctx *c)
{
	diag_result *r = c->res;
	r->ngpu = c->ngpu;
	r->gpu = calloc(c->ngpu ? (size_t)c->ngpu : 1, sizeof *r->gpu);
	if (!r->gpu)
		abort();
	for (int g = 0; g < c->ngpu; g++) {
		diag_gpu_summary *s = &r->gpu[g];
		s->pos = g;
		s->index = c->tl->gpu[g].index;
		s->job = c->job[g];
		s->util_mean = diag_mean(c, c->act[g]);
		static const double util_ps[] = {10, 90};
		double util_pct[2];
		window_pcts(c, c->act[g], util_ps, 2, util_pct);
		s->util_p10 = util_pct[0];
		s->util_p90 = util_pct[1];
		s->idle_pct = diag_idle_pct(c, g);
		s->sm_active_mean = diag_mean(c, diag_series(c, g, GM_GPM_SM_ACTIVE));
		s->dram_active_mean = diag_mean(c, diag_series(c, g, GM_GPM_DRAM_ACTIVE));
		s->mem_peak_mib = diag_max(c, diag_series(c, g, GM_MEM_USED));
		s->mem_total_mib = diag_mem_total(c, g);
		s->mem_peak_pct =
		    s->mem_total_mib > 0 ? 100 * s->mem_peak_mib / s->mem_total_mib : NAN;
		s->power_mean = diag_mean(c, diag_series(c, g, GM_POWER_DRAW));
		s->power_limit = diag_max(c, diag_series(c, g, GM_POWER_ENFORCED_LIMIT));
		if (isnan(s->power_limit))
			s->power_limit = diag_max(c, diag_series(c, g, GM_POWER_LIMIT));
		s->temp_max = diag_max(c, diag_series(c, g, GM_TEMP_GPU));
		/* No corner from a handful of samples: too-little-data gives no verdict, nor
		 * does the quadrant. */
		if (isnan(s->util_mean) || isnan(s->mem_peak_pct) ||
		    c->to - c->from < c->th->min_samples) {
			s->quadrant = DIAG_Q_UNKNOWN;
			continue;
		}
		bool busy = s->util_mean >= c->th->quad_util_pct;
		bool full = s->mem_peak_pct >= c->th->quad_mem_pct;
		s->quadrant = busy ? (full ? DIAG_Q_BUSY_FULL : DIAG_Q_BUSY_ROOMY)
		                   : (full ? DIAG_Q_IDLE_FULL : DIAG_Q_IDLE_EMPTY);
	}
}
