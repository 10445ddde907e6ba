/*
 * stepnoise.c - how uncertain one run's mean step time is. Step times are
 * autocorrelated and often periodic (alternating loader workers, gradient
 * accumulation, evaluation every N steps), so the variance of their mean
 * is not var/n. It is estimated as the circular block bootstrap's variance
 * of the mean, computed exactly instead of by drawing resamples, with the
 * block length chosen from the run's own autocorrelation (Politis and
 * White 2004, as corrected by Patton, Politis and White 2009) and rounded
 * to whole periods when the steps repeat a pattern. docs/compare.md has
 * the formulas.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/diag_int.h"
#include "util/xalloc.h"

/* Below this many steps no autocorrelation is estimated: blocks of one. */
#define NOISE_MIN_STEPS 8
/* A lag whose autocorrelation reaches this, above its neighbours, is a period. */
#define NOISE_PERIOD_MIN_ACF 0.5
/* The quickest steps (a repeating pattern counted as one): the least disturbed. */
#define NOISE_UNDISTURBED_PCT 10.0

/* Autocovariances c[0..kmax] of x around its mean m (divided by n, as usual). */
static void autocov(const double *x, int n, double m, int kmax, double *c)
{
	for (int k = 0; k <= kmax; k++) {
		double s = 0;
		for (int i = 0; i + k < n; i++)
			s += (x[i] - m) * (x[i + k] - m);
		c[k] = s / n;
	}
}

/* The flat-top lag window: 1 up to half the bandwidth, then a linear taper. */
static double flat_top(double t)
{
	t = fabs(t);
	return t <= 0.5 ? 1 : t <= 1 ? 2 * (1 - t) : 0;
}

/*
 * m-hat: the smallest lag after which kn autocorrelations in a row are
 * insignificant (inside +-2 sqrt(log10 n / n)); kmax when there is none
 * (a periodic or long-memory run).
 */
static int insignificant_after(const double *c, int n, int kmax, int kn)
{
	double band = 2 * sqrt(log10((double)n) / n);
	for (int m = 0; m + kn <= kmax; m++) {
		int k = 1;
		while (k <= kn && fabs(c[m + k] / c[0]) < band)
			k++;
		if (k > kn)
			return m;
	}
	return kmax;
}

/* The lag of the strongest repeat: a local maximum of the ACF of at least 0.5; 0 none. */
static int dominant_period(const double *c, int kmax)
{
	int best = 0;
	for (int k = 2; k <= kmax; k++) {
		double r = c[k] / c[0];
		bool peak = r > c[k - 1] / c[0] && (k == kmax || r >= c[k + 1] / c[0]);
		if (peak && r >= NOISE_PERIOD_MIN_ACF && (!best || r > c[best] / c[0]))
			best = k;
	}
	return best;
}

/*
 * The circular block bootstrap's optimal block length for the mean,
 * b = (2 G^2 / D)^(1/3) n^(1/3) with G = sum lambda(k/M) |k| c(k),
 * D = 4/3 g^2, g = sum lambda(k/M) c(k), over |k| <= M = 2 m-hat; capped at
 * ceil(min(3 sqrt n, n/3)) and rounded to whole periods.
 */
static int block_length(const double *c, int n, int kmax, int *period)
{
	int bmax = (int)ceil(fmin(3 * sqrt((double)n), n / 3.0));
	int kn = (int)fmax(5, ceil(sqrt(log10((double)n))));
	int m = insignificant_after(c, n, kmax, kn);
	int M = 2 * m < kmax ? 2 * m : kmax;
	double G = 0, g = c[0];
	for (int k = 1; k <= M; k++) {
		double w = flat_top((double)k / M);
		G += 2 * w * k * c[k];
		g += 2 * w * c[k];
	}
	double D = 4.0 / 3.0 * g * g;
	/* g near 0: the run's mean barely varies (an alternating pattern); long blocks. */
	double b = D > 1e-12 * c[0] * c[0] ? cbrt(2 * G * G / D * n) : bmax;
	int L = (int)fmin(fmax(round(b), 1), bmax);
	*period = dominant_period(c, kmax);
	int p = *period;
	if (p > 1 && 2 * p <= n) {
		/* Whole periods per block, so a block's mean is the pattern's mean. */
		int up = (L + p - 1) / p * p;
		L = up <= bmax || up == p ? up : up - p;
	}
	return L;
}

/*
 * The exact circular block bootstrap variance of the mean with blocks of L:
 * a resample is k = n / L blocks drawn uniformly from the n circular blocks,
 * so Var* = (1/k) * (1/n) sum_i (B_i - mean)^2, B_i the mean of the block
 * starting at step i (their average is the mean exactly).
 */
static void block_variance(const double *x, int n, int L, diag_run_noise *o)
{
	double *bm = gw_xmalloc((size_t)n * sizeof *bm);
	double s = 0, ss = 0;
	for (int i = 0; i < L; i++)
		s += x[i % n];
	for (int i = 0; i < n; i++) {
		bm[i] = s / L;
		ss += (bm[i] - o->mean) * (bm[i] - o->mean);
		s += x[(i + L) % n] - x[i];
	}
	o->nblocks = (double)n / L;
	o->var_mean = ss / n / o->nblocks;
	free(bm);
}

/*
 * The run's least disturbed step time: the p10 of its steps, or of the means
 * of its circular runs of one period when the steps repeat a pattern (then
 * the quick steps of the pattern are no less disturbed than the slow ones).
 */
static double undisturbed(const double *x, int n, int p)
{
	p = p > 1 ? p : 1;
	double *m = gw_xmalloc((size_t)n * sizeof *m), s = 0;
	for (int i = 0; i < p; i++)
		s += x[i % n];
	for (int i = 0; i < n; i++) {
		m[i] = s / p;
		s += x[(i + p) % n] - x[i];
	}
	double u = tl_percentile(m, n, NOISE_UNDISTURBED_PCT);
	free(m);
	return u;
}

/*
 * The last h steps' mean minus the first h steps', in % of the run's mean,
 * h the most whole blocks in half the run: halves of whole periods, so an
 * alternating pattern makes no drift whatever the count's parity. Its
 * standard error: each half's mean has n/h times the mean's variance.
 */
static void drift(const double *x, int n, diag_run_noise *o)
{
	o->drift_pct = NAN;
	o->drift_se_pct = NAN;
	int h = n / 2 / o->block * o->block;
	if (n < 2 * NOISE_MIN_STEPS || h < 1 || !(o->mean > 0))
		return;
	double a = 0, b = 0;
	for (int i = 0; i < h; i++) {
		a += x[i];
		b += x[n - h + i];
	}
	o->drift_pct = 100 * (b - a) / h / o->mean;
	o->drift_se_pct = 100 * sqrt(2 * o->var_mean * n / h) / o->mean;
}

void diag_run_noise_of(const double *x, int n, diag_run_noise *o)
{
	memset(o, 0, sizeof *o);
	o->n = n;
	o->mean = o->var_mean = o->undisturbed = o->drift_pct = o->drift_se_pct = NAN;
	if (n < 1)
		return;
	double s = 0;
	for (int i = 0; i < n; i++)
		s += x[i];
	o->mean = s / n;
	o->block = 1;
	if (n < 2)
		return;
	if (n >= NOISE_MIN_STEPS) {
		int kmax = (int)ceil(sqrt((double)n)) + (int)fmax(5, ceil(sqrt(log10((double)n))));
		kmax = kmax < n - 1 ? kmax : n - 1;
		double *c = gw_xmalloc((size_t)(kmax + 1) * sizeof *c);
		autocov(x, n, o->mean, kmax, c);
		if (c[0] > 0)
			o->block = block_length(c, n, kmax, &o->period);
		free(c);
	}
	block_variance(x, n, o->block, o);
	o->undisturbed = undisturbed(x, n, o->period);
	drift(x, n, o);
}

/* ---- Student's t ---- */

/* The continued fraction of the regularized incomplete beta function (modified Lentz). */
static double beta_cf(double a, double b, double x)
{
	const double tiny = 1e-300;
	double c = 1, d = 1 - (a + b) * x / (a + 1);
	d = fabs(d) < tiny ? tiny : d;
	d = 1 / d;
	double h = d;
	for (int m = 1; m <= 300; m++) {
		for (int odd = 0; odd < 2; odd++) {
			double num =
			    odd ? -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
			        : m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
			d = 1 + num * d;
			d = fabs(d) < tiny ? tiny : d;
			c = 1 + num / c;
			c = fabs(c) < tiny ? tiny : c;
			d = 1 / d;
			h *= d * c;
			if (odd && fabs(d * c - 1) < 1e-15)
				return h;
		}
	}
	return h;
}

/* I_x(a, b). */
static double beta_inc(double a, double b, double x)
{
	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	double lf = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
	if (x < (a + 1) / (a + b + 2))
		return exp(lf) * beta_cf(a, b, x) / a;
	return 1 - exp(lf) * beta_cf(b, a, 1 - x) / b;
}

double diag_t_cdf(double t, double df)
{
	if (isnan(t) || !(df > 0))
		return NAN;
	if (isinf(df))
		return 0.5 * erfc(-t / sqrt(2));
	double tail = 0.5 * beta_inc(df / 2, 0.5, df / (df + t * t));
	return t >= 0 ? 1 - tail : tail;
}

double diag_t_quantile(double p, double df)
{
	if (!(p > 0 && p < 1) || !(df > 0))
		return NAN;
	if (p < 0.5)
		return -diag_t_quantile(1 - p, df);
	double lo = 0, hi = 1;
	while (diag_t_cdf(hi, df) < p && hi < 1e12)
		hi *= 2;
	for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
		double mid = (lo + hi) / 2;
		if (diag_t_cdf(mid, df) < p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}
