/*
 * memfit.c - the sweep's memory model: a least-squares fit of peak = fixed +
 * per-sample x batch, with the largest batch it predicts to fit.
 */
#include <math.h>
#include <stdlib.h>

#include "sweep/memfit.h"
#include "sweep/stats.h"

/* x where fixed + per_item x = limit, with its 95 % interval by the delta method. */
static void solve(const sweep_memfit *f, double limit, double *x, double *lo, double *hi)
{
	*x = (limit - f->fixed) / f->per_item;
	*lo = *hi = NAN;
	if (isnan(f->se_fixed))
		return;
	double b = f->per_item;
	double var = (f->se_fixed * f->se_fixed + *x * *x * f->se_per_item * f->se_per_item +
	              2 * *x * f->cov) /
	             (b * b);
	double h = sweep_t95(f->n - 2) * sqrt(var > 0 ? var : 0);
	*lo = *x - h;
	*hi = *x + h;
}

/*
 * Whether a run's (batch, peak) enters the fit. A GPU job that ran holds at
 * least its context, so a peak of 0 MiB means the samples missed its memory
 * (a short run on a slow machine read before the allocation showed): it
 * says nothing about how memory grows with the batch and would pull the
 * line down.
 */
static bool fit_point(double batch, double peak_mib)
{
	return !isnan(batch) && !isnan(peak_mib) && peak_mib > 0;
}

bool sweep_memfit_fit(const double *batch, const double *peak_mib, int n, double total_mib,
                      double headroom, sweep_memfit *out)
{
	*out = (sweep_memfit){.n = 0, .total_mib = total_mib, .headroom = headroom};
	double sx = 0, sy = 0;
	int m = 0;
	for (int i = 0; i < n; i++) {
		if (!fit_point(batch[i], peak_mib[i]))
			continue;
		sx += batch[i];
		sy += peak_mib[i];
		m++;
	}
	if (m < 2)
		return false;
	double mx = sx / m, my = sy / m, sxx = 0, sxy = 0, syy = 0;
	for (int i = 0; i < n; i++) {
		if (!fit_point(batch[i], peak_mib[i]))
			continue;
		sxx += (batch[i] - mx) * (batch[i] - mx);
		sxy += (batch[i] - mx) * (peak_mib[i] - my);
		syy += (peak_mib[i] - my) * (peak_mib[i] - my);
	}
	if (sxx <= 0)
		return false;
	out->n = m;
	out->per_item = sxy / sxx;
	out->fixed = my - out->per_item * mx;
	if (out->per_item <= 0)
		return false;
	double sse = syy - out->per_item * sxy;
	if (sse < 0)
		sse = 0;
	out->r2 = syy > 0 ? 1 - sse / syy : 1;
	out->se_fixed = out->se_per_item = out->cov = NAN;
	if (m >= 3) {
		double s2 = sse / (m - 2);
		out->se_per_item = sqrt(s2 / sxx);
		out->se_fixed = sqrt(s2 * (1.0 / m + mx * mx / sxx));
		out->cov = -mx * s2 / sxx;
	}
	solve(out, total_mib * (1 - headroom), &out->max_batch, &out->max_batch_lo,
	      &out->max_batch_hi);
	solve(out, total_mib, &out->boundary, &out->boundary_lo, &out->boundary_hi);
	return true;
}
