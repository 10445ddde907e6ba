/*
 * stats.c - the numbers a sweep's step times are judged by: 95 % intervals
 * over repeats and the knee of a throughput curve.
 */
#include <math.h>

#include "sweep/stats.h"

double sweep_t95(int dof)
{
	static const double t[] = {NAN,   12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
	                           2.306, 2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
	                           2.120, 2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
	                           2.064, 2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
	if (dof <= 0)
		return NAN;
	if (dof < (int)(sizeof t / sizeof *t))
		return t[dof];
	if (dof < 60)
		return 2.00;
	if (dof < 120)
		return 1.98;
	return 1.96;
}

void sweep_mean_ci(const double *xs, int n, double *mean, double *half)
{
	*mean = *half = NAN;
	if (n <= 0)
		return;
	double s = 0;
	for (int i = 0; i < n; i++)
		s += xs[i];
	*mean = s / n;
	if (n < 2)
		return;
	double ss = 0;
	for (int i = 0; i < n; i++)
		ss += (xs[i] - *mean) * (xs[i] - *mean);
	*half = sweep_t95(n - 1) * sqrt(ss / (n - 1) / n);
}

int sweep_knee(const double *thr, int n, double share)
{
	if (n <= 0)
		return -1;
	for (int i = 0; i + 1 < n; i++) {
		if (isnan(thr[i]) || isnan(thr[i + 1]) || thr[i] <= 0)
			return i;
		if ((thr[i + 1] - thr[i]) / thr[i] < share)
			return i;
	}
	return n - 1;
}
