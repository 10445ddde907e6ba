/*
 * busycmp.c - two windows without step times (Prometheus windows, nvidia-smi
 * logs) compared by how busy their GPUs were: the mean utilization of the
 * GPUs at each sample, a series whose samples (1 to 60 s apart) are strongly
 * autocorrelated, so the variance of its mean is not var/n. Each side's is
 * the circular block bootstrap's, exact, with the block length chosen from
 * the series' own autocorrelation (diag_run_noise_of, stepnoise.c: the
 * machinery that judges step times), and the difference gets a Welch t
 * interval whose degrees of freedom count blocks, not samples. A claim needs
 * the interval to exclude 0 and the change to reach compare_busy_pp; "same"
 * needs the whole interval inside +-compare_busy_pp (an equivalence test),
 * so a large change is never called no change and noise never a change.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/diag_int.h"
#include "util/xalloc.h"

const char *diag_busy_verdict_id(diag_busy_verdict v)
{
	switch (v) {
	case DIAG_BUSY_MORE:
		return "busier";
	case DIAG_BUSY_LESS:
		return "less-busy";
	case DIAG_BUSY_SAME:
		return "same-busy-share";
	case DIAG_BUSY_UNSURE:
		return "inconclusive";
	case DIAG_BUSY_NONE:
		break;
	}
	return "not-compared";
}

/* The GPUs' mean utilization at each sample that has one, in order; the count. */
static int busy_series(const timeline *tl, double **out, double *gpu_hours)
{
	double *x = gw_xmalloc(((size_t)tl->n + 1) * sizeof *x);
	int n = 0;
	*gpu_hours = 0;
	for (int s = 0; s < tl->n; s++) {
		double sum = 0;
		int k = 0;
		for (int g = 0; g < tl->ngpu; g++) {
			double u = tl_gpu_at(tl, g, GM_UTIL_GPU, s);
			if (isfinite(u))
				sum += u, k++;
		}
		if (!k)
			continue;
		x[n++] = sum / k;
		/* each sample stands for the time to the next one (the last: the one before) */
		double dt = s + 1 < tl->n ? tl->t[s + 1] - tl->t[s]
		            : s           ? tl->t[s] - tl->t[s - 1]
		                          : 0;
		*gpu_hours += k * dt / 3600;
	}
	*out = x;
	return n;
}

/* One side: the mean of its runs' means, and its variance (the runs independent). */
static void side(const timeline *const *tl, int n, diag_busy_side *o)
{
	double m = 0, v = 0, df = 0;
	memset(o, 0, sizeof *o);
	for (int i = 0; i < n; i++) {
		double *x, gh;
		int k = busy_series(tl[i], &x, &gh);
		diag_run_noise rn;
		diag_run_noise_of(x, k, &rn);
		free(x);
		o->samples += k;
		o->gpu_hours += gh;
		o->block = rn.block > o->block ? rn.block : o->block;
		m += rn.mean / n;
		v += rn.var_mean / ((double)n * n);
		df += rn.nblocks - 1;
	}
	o->mean = m;
	o->var = v;
	o->df = df;
	o->not_busy_h = o->gpu_hours * (1 - m / 100);
}

void diag_busy_compare(const timeline *const *base, int nbase, const timeline *const *cand,
                       int ncand, double min_pp, diag_busy_cmp *out)
{
	memset(out, 0, sizeof *out);
	out->min_pp = min_pp;
	out->diff = out->lo = out->hi = NAN;
	side(base, nbase, &out->side[0]);
	side(cand, ncand, &out->side[1]);
	const diag_busy_side *a = &out->side[0], *b = &out->side[1];
	if (a->samples < 2 || b->samples < 2 || !isfinite(a->var) || !isfinite(b->var))
		return;
	out->diff = b->mean - a->mean;
	double v = a->var + b->var;
	/* Welch-Satterthwaite, each side's degrees of freedom its blocks less one */
	double df = v > 0 && a->df > 0 && b->df > 0
	                ? v * v / (a->var * a->var / a->df + b->var * b->var / b->df)
	                : INFINITY;
	out->df = df;
	double h = (isfinite(df) ? diag_t_quantile(0.975, df) : 1.959964) * sqrt(v);
	out->lo = out->diff - h;
	out->hi = out->diff + h;
	if (out->lo > 0 && out->diff >= min_pp)
		out->verdict = DIAG_BUSY_MORE;
	else if (out->hi < 0 && out->diff <= -min_pp)
		out->verdict = DIAG_BUSY_LESS;
	else if (out->lo > -min_pp && out->hi < min_pp)
		out->verdict = DIAG_BUSY_SAME;
	else
		out->verdict = DIAG_BUSY_UNSURE;
}

/* The GPU-hours one side's findings of a rule cover: their ranges times their GPUs. */
static void add_side(diag_busy_cmp *out, const diag_result *r, int n, int k)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < r[i].n; j++) {
			const diag_finding *f = &r[i].f[j];
			if (f->severity < DIAG_WARN || !f->gpus)
				continue;
			int at = 0;
			while (at < out->nrules && strcmp(out->rule[at].id, f->id))
				at++;
			if (at == out->nrules) {
				if (at == DIAG_BUSY_RULES)
					continue;
				out->rule[out->nrules].id = f->id;
				out->rule[out->nrules].h[0] = out->rule[out->nrules].h[1] = 0;
				out->nrules++;
			}
			double sec = 0;
			for (int q = 0; q < f->nranges; q++)
				sec += f->ranges[q].t1 - f->ranges[q].t0;
			out->rule[at].h[k] += sec * __builtin_popcountll(f->gpus) / 3600;
		}
}

void diag_busy_findings(const diag_result *base, int nbase, const diag_result *cand, int ncand,
                        diag_busy_cmp *out)
{
	out->nrules = 0;
	add_side(out, base, nbase, 0);
	add_side(out, cand, ncand, 1);
	/* largest change first (a few rules: insertion sort) */
	for (int i = 1; i < out->nrules; i++)
		for (int j = i; j > 0; j--) {
			double a = fabs(out->rule[j - 1].h[1] - out->rule[j - 1].h[0]),
			       b = fabs(out->rule[j].h[1] - out->rule[j].h[0]);
			if (b <= a)
				break;
			__typeof__(out->rule[0]) t = out->rule[j];
			out->rule[j] = out->rule[j - 1];
			out->rule[j - 1] = t;
		}
}
