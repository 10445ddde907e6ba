/*
 * stepcmp.c - the one comparison of step times. Everything that says
 * "faster" or "slower" (compare, sweep, the demo) asks this file, so they
 * cannot disagree. docs/compare.md gives the method with its formulas:
 *
 * - several runs on each side: each run's mean step time is one
 *   observation, and Welch's t interval of the difference of the sides'
 *   means measures run-to-run variance instead of guessing it (the way
 *   pyperf's compare_to and hyperfine compare benchmarks);
 * - one run on a side: the variance of each side's mean comes from its own
 *   steps, autocorrelation and periods included (stepnoise.c), and the
 *   interval is Welch's with Satterthwaite's degrees of freedom from the
 *   number of blocks.
 *
 * A change is claimed when its 95 % interval excludes zero and it is at
 * least the practical threshold (compare_min_diff_pct) in % of the base's
 * mean. Nothing else raises that threshold: a run's drift and an outlying
 * run are caveats with their figures, and load qualifies a verdict in
 * compare.c, in the one direction load can fake. "No meaningful change"
 * needs the whole interval within the threshold both ways (equivalence);
 * an interval that reaches past it without a claim is inconclusive.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/diag_int.h"
#include "util/xalloc.h"

#define CMP_LEVEL 0.975 /* two-sided 95 % */

typedef struct {
	double mean, var, df; /* the side's mean, the variance of it, its degrees of freedom */
	double quantum;       /* the most the step timer's resolution can move the mean, s */
} side_est;

/*
 * One run per side (or mixed): the side's mean over all its steps, with the
 * variance of a step-weighted mean of independent runs, each run's degrees
 * of freedom its blocks less one (Satterthwaite).
 */
static void within_side(const diag_run_noise *r, const diag_run_steps *s, int n, side_est *e)
{
	double N = 0, sum = 0;
	for (int i = 0; i < n; i++) {
		N += r[i].n;
		sum += r[i].mean * r[i].n;
	}
	e->mean = sum / N;
	double v = 0, dd = 0;
	e->quantum = 0;
	for (int i = 0; i < n; i++) {
		double w = r[i].n / N, vi = w * w * r[i].var_mean;
		v += vi;
		if (vi > 0)
			dd += vi * vi / fmax(r[i].nblocks - 1, 1);
		if (!isnan(s[i].resolution))
			e->quantum = fmax(e->quantum, s[i].resolution / r[i].n);
	}
	e->var = v;
	e->df = dd > 0 ? v * v / dd : INFINITY;
}

/* Several runs per side: the run means are the observations. */
static void runs_side(const diag_run_noise *r, const diag_run_steps *s, int n, side_est *e)
{
	double sum = 0;
	e->quantum = 0;
	for (int i = 0; i < n; i++) {
		sum += r[i].mean;
		if (!isnan(s[i].resolution))
			e->quantum = fmax(e->quantum, s[i].resolution / r[i].n);
	}
	e->mean = sum / n;
	double ss = 0;
	for (int i = 0; i < n; i++)
		ss += (r[i].mean - e->mean) * (r[i].mean - e->mean);
	e->var = ss / (n - 1) / n;
	e->df = n - 1;
}

/* Timed runs (two steps or more) of one side into out->run[side]; their count. */
static int side_noise(const diag_run_steps *in, int n, diag_run_steps *kept, diag_run_noise *out)
{
	int k = 0;
	for (int i = 0; i < n && k < DIAG_CMP_MAX_RUNS; i++) {
		if (in[i].n < 2)
			continue;
		kept[k] = in[i];
		diag_run_noise_of(in[i].t, in[i].n, &out[k]);
		k++;
	}
	return k;
}

/* The run whose drift is both significant (two standard errors) and meaningful. */
static void find_drift(diag_step_cmp *c)
{
	double worst = 0;
	c->drift_side = c->drift_run = -1;
	for (int s = 0; s < 2; s++)
		for (int i = 0; i < c->nruns[s]; i++) {
			const diag_run_noise *r = &c->run[s][i];
			double d = fabs(r->drift_pct);
			if (isnan(d) || d < c->min_diff_pct || !(d > 2 * r->drift_se_pct) ||
			    d <= worst)
				continue;
			worst = d;
			c->drift_side = s;
			c->drift_run = i;
		}
}

/*
 * With three runs or more on a side, the run farthest from the median of
 * the others, when it is more than three times their range away and at
 * least the practical threshold (1 % when that is lower).
 */
static void find_outlier(diag_step_cmp *c)
{
	double worst = 0;
	c->outlier_side = c->outlier_run = -1;
	for (int s = 0; s < 2; s++) {
		int n = c->nruns[s];
		if (n < 3)
			continue;
		for (int i = 0; i < n; i++) {
			double o[DIAG_CMP_MAX_RUNS], lo = INFINITY, hi = -INFINITY;
			int k = 0;
			for (int j = 0; j < n; j++)
				if (j != i) {
					o[k++] = c->run[s][j].mean;
					lo = fmin(lo, c->run[s][j].mean);
					hi = fmax(hi, c->run[s][j].mean);
				}
			double med = tl_percentile(o, k, 50), dev = fabs(c->run[s][i].mean - med);
			double pct = med > 0 ? 100 * dev / med : NAN;
			if (dev > 3 * (hi - lo) && pct >= fmax(c->min_diff_pct, 1) && pct > worst) {
				worst = pct;
				c->outlier_side = s;
				c->outlier_run = i;
			}
		}
	}
}

void diag_step_compare(const diag_run_steps *base, int nbase, const diag_run_steps *cand, int ncand,
                       double min_diff_pct, diag_step_cmp *c)
{
	memset(c, 0, sizeof *c);
	c->min_diff_pct = min_diff_pct;
	c->mean[0] = c->mean[1] = c->diff = c->lo = c->hi = NAN;
	c->diff_pct = c->lo_pct = c->hi_pct = c->se = c->df = NAN;
	c->drift_side = c->drift_run = c->outlier_side = c->outlier_run = -1;
	diag_run_steps kept[2][DIAG_CMP_MAX_RUNS];
	c->nruns[0] = side_noise(base, nbase, kept[0], c->run[0]);
	c->nruns[1] = side_noise(cand, ncand, kept[1], c->run[1]);
	if (!c->nruns[0] || !c->nruns[1])
		return;
	c->method = c->nruns[0] >= 2 && c->nruns[1] >= 2 ? DIAG_CMP_RUNS : DIAG_CMP_WITHIN;
	side_est e[2];
	for (int s = 0; s < 2; s++) {
		if (c->method == DIAG_CMP_RUNS)
			runs_side(c->run[s], kept[s], c->nruns[s], &e[s]);
		else
			within_side(c->run[s], kept[s], c->nruns[s], &e[s]);
	}
	c->mean[0] = e[0].mean;
	c->mean[1] = e[1].mean;
	c->diff = e[1].mean - e[0].mean;
	double v = e[0].var + e[1].var;
	c->se = sqrt(v);
	double dd = (e[0].var > 0 ? e[0].var * e[0].var / e[0].df : 0) +
	            (e[1].var > 0 ? e[1].var * e[1].var / e[1].df : 0);
	c->df = dd > 0 ? v * v / dd : INFINITY;
	c->quantum = e[0].quantum + e[1].quantum;
	double half = (v > 0 ? diag_t_quantile(CMP_LEVEL, c->df) * c->se : 0) + c->quantum;
	c->lo = c->diff - half;
	c->hi = c->diff + half;
	if (c->mean[0] > 0) {
		c->diff_pct = 100 * c->diff / c->mean[0];
		c->lo_pct = 100 * c->lo / c->mean[0];
		c->hi_pct = 100 * c->hi / c->mean[0];
	}
	c->significant = c->lo > 0 || c->hi < 0;
	int dir = c->hi < 0 ? -1 : c->lo > 0 ? 1 : 0;
	c->equivalent = min_diff_pct > 0 && c->lo_pct > -min_diff_pct && c->hi_pct < min_diff_pct;
	if (dir && !isnan(c->diff_pct) && fabs(c->diff_pct) < min_diff_pct)
		c->below_min_diff = true;
	else
		c->verdict = dir;
	find_drift(c);
	find_outlier(c);
}

/* ---- percentiles: the circular block bootstrap, drawn ---- */

/* splitmix64: tiny, fast, and the same sequence on every platform. */
static uint64_t next_u64(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* A uniform index below n without a division (multiply-shift). */
static uint64_t below(uint64_t *rng, uint64_t n)
{
#ifdef __SIZEOF_INT128__
	return (uint64_t)(((unsigned __int128)next_u64(rng) * n) >> 64);
#else
	return next_u64(rng) % n;
#endif
}

/* One side's steps pooled, with each step's rank in sorted order and its run's blocks. */
typedef struct {
	int n, nruns;
	double *sorted; /* the pooled steps, ascending */
	int *rank;      /* rank[pooled position] = index in sorted */
	int off[DIAG_CMP_MAX_RUNS + 1], block[DIAG_CMP_MAX_RUNS];
} pooled;

typedef struct {
	double v;
	int pos;
} valpos;

static int by_value(const void *a, const void *b)
{
	const valpos *x = a, *y = b;
	if (x->v != y->v)
		return (x->v > y->v) - (x->v < y->v);
	return (x->pos > y->pos) - (x->pos < y->pos);
}

static void pool(const diag_run_steps *r, int nr, pooled *p)
{
	memset(p, 0, sizeof *p);
	for (int i = 0; i < nr && p->nruns < DIAG_CMP_MAX_RUNS; i++) {
		if (r[i].n < 1)
			continue;
		diag_run_noise nz;
		diag_run_noise_of(r[i].t, r[i].n, &nz);
		p->block[p->nruns] = nz.block;
		p->off[p->nruns++] = p->n;
		p->n += r[i].n;
	}
	p->off[p->nruns] = p->n;
	size_t cap = (size_t)(p->n ? p->n : 1);
	valpos *vp = gw_xmalloc(cap * sizeof *vp);
	p->rank = gw_xmalloc(cap * sizeof *p->rank);
	p->sorted = gw_xmalloc(cap * sizeof *p->sorted);
	for (int i = 0, k = 0; i < nr && k < p->nruns; i++) {
		if (r[i].n < 1)
			continue;
		for (int j = 0; j < r[i].n; j++)
			vp[p->off[k] + j] = (valpos){r[i].t[j], p->off[k] + j};
		k++;
	}
	qsort(vp, (size_t)p->n, sizeof *vp, by_value);
	for (int i = 0; i < p->n; i++) {
		p->rank[vp[i].pos] = i;
		p->sorted[i] = vp[i].v;
	}
	free(vp);
}

/* Draw one resample: each run rebuilt from its circular blocks, as counts per sorted rank. */
static void draw(const pooled *p, int *counts, uint64_t *rng)
{
	memset(counts, 0, (size_t)p->n * sizeof *counts);
	for (int r = 0; r < p->nruns; r++) {
		int o = p->off[r], n = p->off[r + 1] - o, L = p->block[r];
		for (int filled = 0; filled < n;) {
			int s = (int)below(rng, (uint64_t)n);
			for (int j = 0; j < L && filled < n; j++, filled++)
				counts[p->rank[o + (s + j) % n]]++;
		}
	}
}

/* Percentile ps[k] (or the mean) of the drawn resample, from its counts over sorted values. */
static double stat_of_counts(const pooled *p, const int *counts, double pc)
{
	int n = p->n;
	if (pc < 0) {
		double sum = 0;
		for (int i = 0; i < n; i++)
			sum += counts[i] * p->sorted[i];
		return sum / n;
	}
	double pos = pc / 100.0 * (n - 1);
	int lo = (int)floor(pos), hi = lo + 1 < n ? lo + 1 : lo;
	double vlo = NAN, vhi = NAN;
	for (int i = 0, cum = 0; i < n && isnan(vhi); i++) {
		int next = cum + counts[i];
		if (isnan(vlo) && lo < next)
			vlo = p->sorted[i];
		if (hi < next)
			vhi = p->sorted[i];
		cum = next;
	}
	return vlo + (vhi - vlo) * (pos - lo);
}

static double stat_of(const pooled *p, double pc)
{
	if (p->n <= 0)
		return NAN;
	if (pc >= 0)
		return tl_percentile(p->sorted, p->n, pc);
	double sum = 0;
	for (int i = 0; i < p->n; i++)
		sum += p->sorted[i];
	return sum / p->n;
}

#define MAX_PCTS 8

void diag_bootstrap_diffs(const diag_run_steps *a, int na, const diag_run_steps *b, int nb,
                          const double *ps, int np, int resamples, uint64_t seed, diag_diff *out)
{
	np = np > MAX_PCTS ? MAX_PCTS : np;
	pooled pa, pb;
	pool(a, na, &pa);
	pool(b, nb, &pb);
	for (int k = 0; k < np; k++) {
		out[k].base = stat_of(&pa, ps[k]);
		out[k].cand = stat_of(&pb, ps[k]);
		out[k].diff = out[k].cand - out[k].base;
		out[k].lo = out[k].hi = NAN;
	}
	if (pa.n >= 2 && pb.n >= 2 && resamples >= 10 && np > 0) {
		double *d = gw_xmalloc((size_t)resamples * np * sizeof *d);
		int *counts = gw_xmalloc((size_t)(pa.n > pb.n ? pa.n : pb.n) * sizeof *counts);
		uint64_t rng = seed;
		for (int r = 0; r < resamples; r++) {
			double va[MAX_PCTS];
			draw(&pa, counts, &rng);
			for (int k = 0; k < np; k++)
				va[k] = stat_of_counts(&pa, counts, ps[k]);
			draw(&pb, counts, &rng);
			for (int k = 0; k < np; k++)
				d[(size_t)k * resamples + r] =
				    stat_of_counts(&pb, counts, ps[k]) - va[k];
		}
		for (int k = 0; k < np; k++) {
			out[k].lo = tl_percentile(d + (size_t)k * resamples, resamples, 2.5);
			out[k].hi = tl_percentile(d + (size_t)k * resamples, resamples, 97.5);
		}
		free(d);
		free(counts);
	}
	free(pa.sorted);
	free(pa.rank);
	free(pb.sorted);
	free(pb.rank);
}

void diag_bootstrap_diff(const double *a, int na, const double *b, int nb, double p, int resamples,
                         uint64_t seed, diag_diff *out)
{
	diag_run_steps ra = {a, na, NAN}, rb = {b, nb, NAN};
	diag_bootstrap_diffs(&ra, 1, &rb, 1, &p, 1, resamples, seed, out);
}
