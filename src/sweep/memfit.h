/*
 * memfit.h - the memory model: peak = fixed + per_item x batch, fitted to
 * the runs, and the largest batch it predicts to fit (memfit.c). Pure.
 */
#ifndef GPUWHY_SWEEP_MEMFIT_H
#define GPUWHY_SWEEP_MEMFIT_H

#include <stdbool.h>

typedef struct {
	int n;
	double fixed, per_item;       /* MiB, MiB per sample */
	double se_fixed, se_per_item; /* standard errors; NAN with fewer than 3 points */
	double cov;                   /* covariance of the two */
	double r2;
	double total_mib, headroom;        /* GPU memory, share kept free */
	double max_batch;                  /* largest batch that fits with the headroom */
	double max_batch_lo, max_batch_hi; /* 95 % interval; NAN when unknown */
	double boundary;                   /* the same without headroom: where OOM starts */
	double boundary_lo, boundary_hi;
} sweep_memfit;

/* Fit n points; false when fewer than two distinct batches or no growth. */
bool sweep_memfit_fit(const double *batch, const double *peak_mib, int n, double total_mib,
                      double headroom, sweep_memfit *out);

#endif
