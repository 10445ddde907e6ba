/*
 * stats.h - the statistics a sweep's step times are judged by: 95 %
 * intervals and the knee of a throughput curve (stats.c). Pure.
 */
#ifndef GPUWHY_SWEEP_STATS_H
#define GPUWHY_SWEEP_STATS_H

/* Two-sided 95 % Student t quantile for dof degrees of freedom. */
double sweep_t95(int dof);
/* Mean of xs and half-width of its 95 % interval (NAN with fewer than two). */
void sweep_mean_ci(const double *xs, int n, double *mean, double *half);
/*
 * The knee of a throughput curve over ordered values: the first i where the
 * next value gains less than share (0.10 = 10 %). Returns n-1 when every
 * step gains more, -1 when n == 0.
 */
int sweep_knee(const double *thr, int n, double share);

#endif
