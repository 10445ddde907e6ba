/*
 * compare.c - is the candidate recording faster than the base, and what
 * changed between them. Step times are compared by their mean (the
 * verdict: throughput) and at p50/p90/p99, each with a 95 %
 * bootstrap interval of the difference (DIAG_BOOTSTRAP_RESAMPLES resamples,
 * fixed seed, so the same two files always give the same answer). Change
 * one variable at a time, or the gain cannot be attributed to any of them.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/diag_int.h"

/* Without step markers, run time must differ by this much (%) to call one side faster. */
#define DIAG_COMPARE_DURATION_PCT 5.0
/* Steps per half below which a run's own drift is not estimated. */
#define DIAG_COMPARE_DRIFT_MIN_HALF 8

/* splitmix64: tiny, fast, and the same sequence on every platform. */
static uint64_t next_u64(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
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

/* Percentile p of xs, or their mean for DIAG_STAT_MEAN. */
static double stat_of(const double *xs, int n, double p)
{
	if (p >= 0)
		return tl_percentile(xs, n, p);
	if (n <= 0)
		return NAN;
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += xs[i];
	return sum / n;
}

/*
 * Percentiles ps[0..np) (or the mean, for DIAG_STAT_MEAN) of one resample
 * (with replacement) of the sorted xs, into out. Draws indices and counts
 * them, so each order statistic costs O(n), not a sort: the k-th smallest
 * drawn value is sorted[k-th smallest drawn index]. One resample serves all.
 */
static void resample_pcts(const double *sorted, int n, const double *ps, int np, int *counts,
                          uint64_t *rng, double *out)
{
	memset(counts, 0, (size_t)n * sizeof *counts);
	for (int i = 0; i < n; i++)
		counts[below(rng, (uint64_t)n)]++;
	for (int k = 0; k < np; k++) {
		if (ps[k] < 0) {
			double sum = 0;
			for (int i = 0; i < n; i++)
				sum += counts[i] * sorted[i];
			out[k] = sum / n;
			continue;
		}
		double pos = ps[k] / 100.0 * (n - 1);
		int lo = (int)floor(pos), hi = lo + 1 < n ? lo + 1 : lo;
		double vlo = NAN, vhi = NAN;
		int cum = 0;
		for (int i = 0; i < n && isnan(vhi); i++) {
			int next = cum + counts[i];
			if (isnan(vlo) && lo < next)
				vlo = sorted[i];
			if (hi < next)
				vhi = sorted[i];
			cum = next;
		}
		out[k] = vlo + (vhi - vlo) * (pos - lo);
	}
}

#define MAX_PCTS 8

void diag_bootstrap_diffs(const double *a, int na, const double *b, int nb, const double *ps,
                          int np, int resamples, uint64_t seed, diag_diff *out)
{
	np = np > MAX_PCTS ? MAX_PCTS : np;
	for (int k = 0; k < np; k++) {
		out[k].base = stat_of(a, na, ps[k]);
		out[k].cand = stat_of(b, nb, ps[k]);
		out[k].diff = out[k].cand - out[k].base;
		out[k].lo = out[k].hi = NAN;
	}
	if (na < 2 || nb < 2 || resamples < 10 || np <= 0)
		return;
	double *sa = malloc((size_t)na * sizeof *sa), *sb = malloc((size_t)nb * sizeof *sb);
	double *d = malloc((size_t)resamples * np * sizeof *d);
	int *counts = malloc((size_t)(na > nb ? na : nb) * sizeof *counts);
	if (!sa || !sb || !d || !counts)
		abort();
	memcpy(sa, a, (size_t)na * sizeof *sa);
	memcpy(sb, b, (size_t)nb * sizeof *sb);
	qsort(sa, (size_t)na, sizeof *sa, cmp_double);
	qsort(sb, (size_t)nb, sizeof *sb, cmp_double);
	uint64_t rng = seed;
	double pa[MAX_PCTS], pb[MAX_PCTS];
	for (int r = 0; r < resamples; r++) {
		resample_pcts(sa, na, ps, np, counts, &rng, pa);
		resample_pcts(sb, nb, ps, np, counts, &rng, pb);
		for (int k = 0; k < np; k++)
			d[(size_t)k * resamples + r] = pb[k] - pa[k];
	}
	for (int k = 0; k < np; k++) {
		out[k].lo = tl_percentile(d + (size_t)k * resamples, resamples, 2.5);
		out[k].hi = tl_percentile(d + (size_t)k * resamples, resamples, 97.5);
	}
	free(sa);
	free(sb);
	free(d);
	free(counts);
}

void diag_bootstrap_diff(const double *a, int na, const double *b, int nb, double p, int resamples,
                         uint64_t seed, diag_diff *out)
{
	diag_bootstrap_diffs(a, na, b, nb, &p, 1, resamples, seed, out);
}

void diag_summarize(const timeline *tl, const diag_result *res, diag_run_summary *out)
{
	memset(out, 0, sizeof *out);
	out->duration = tl->duration;
	out->t_from = res->t_from;
	out->t_to = res->t_to;
	out->steps = res->steps;
	out->njob = res->njob;
	double u = 0, sm = 0, pw = 0, mem = NAN;
	int nu = 0, nsm = 0, npw = 0;
	for (int g = 0; g < res->ngpu; g++) {
		const diag_gpu_summary *s = &res->gpu[g];
		if (!s->job)
			continue;
		if (!isnan(s->util_mean)) {
			u += s->util_mean;
			nu++;
		}
		if (!isnan(s->sm_active_mean)) {
			sm += s->sm_active_mean;
			nsm++;
		}
		if (!isnan(s->power_mean)) {
			pw += s->power_mean;
			npw++;
		}
		if (!isnan(s->mem_peak_mib) && (isnan(mem) || s->mem_peak_mib > mem))
			mem = s->mem_peak_mib;
	}
	out->util_mean = nu ? u / nu : NAN;
	out->sm_active_mean = nsm ? sm / nsm : NAN;
	out->power_mean = npw ? pw / npw : NAN;
	out->mem_peak_mib = mem;
}

/* ---- what changed ---- */

static void add_change(diag_comparison *c, const char *what, const char *a, const char *b)
{
	c->changes = realloc(c->changes, (size_t)(c->nchanges + 1) * sizeof *c->changes);
	if (!c->changes)
		abort();
	diag_change *x = &c->changes[c->nchanges++];
	snprintf(x->what, sizeof x->what, "%s", what);
	snprintf(x->base, sizeof x->base, "%s", a ? a : L_("(absent)"));
	snprintf(x->cand, sizeof x->cand, "%s", b ? b : L_("(absent)"));
}

#define MAX_TOK 128

typedef struct {
	char *buf;
	const char *key[MAX_TOK], *val[MAX_TOK]; /* options */
	int nopt;
	const char *env[MAX_TOK]; /* leading NAME=value assignments */
	int nenv;
	char positional[1024];
} parsed_cmd;

static bool is_env_assign(const char *t)
{
	if (!(isupper((unsigned char)*t) || *t == '_'))
		return false;
	for (const char *p = t; *p; p++) {
		if (*p == '=')
			return p > t;
		if (!(isupper((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_'))
			return false;
	}
	return false;
}

static bool is_option(const char *t)
{
	/* "-1" or "-0.5" are values, not options. */
	return t[0] == '-' && t[1] && !isdigit((unsigned char)t[1]) && t[1] != '.';
}

/* Split a command line into options (--k=v, --k v, -k v, flags) and the rest. */
static void parse_cmd(const char *cmd, parsed_cmd *p)
{
	memset(p, 0, sizeof *p);
	p->buf = strdup(cmd ? cmd : "");
	if (!p->buf)
		abort();
	char *tok[MAX_TOK];
	int n = 0;
	for (char *s = strtok(p->buf, " \t\n"); s && n < MAX_TOK; s = strtok(NULL, " \t\n"))
		tok[n++] = s;
	int i = 0;
	while (i < n && is_env_assign(tok[i]) && p->nenv < MAX_TOK)
		p->env[p->nenv++] = tok[i++];
	size_t o = 0;
	for (; i < n; i++) {
		if (is_option(tok[i]) && p->nopt < MAX_TOK) {
			char *eq = tok[i][1] == '-' ? strchr(tok[i], '=') : NULL;
			p->key[p->nopt] = tok[i];
			if (eq) {
				*eq = 0;
				p->val[p->nopt] = eq + 1;
			} else if (i + 1 < n && !is_option(tok[i + 1])) {
				p->val[p->nopt] = tok[++i];
			} else {
				p->val[p->nopt] = L_("(set)");
			}
			p->nopt++;
		} else if (o < sizeof p->positional) {
			o += (size_t)snprintf(p->positional + o, sizeof p->positional - o, "%s%s",
			                      o ? " " : "", tok[i]);
		}
	}
}

static const char *opt_get(const parsed_cmd *p, const char *key)
{
	for (int i = 0; i < p->nopt; i++)
		if (!strcmp(p->key[i], key))
			return p->val[i];
	return NULL;
}

static const char *env_get(const parsed_cmd *p, const char *name, size_t nlen)
{
	for (int i = 0; i < p->nenv; i++)
		if (!strncmp(p->env[i], name, nlen) && p->env[i][nlen] == '=')
			return p->env[i] + nlen + 1;
	return NULL;
}

static void diff_commands(diag_comparison *c, const char *a, const char *b)
{
	if (!a && !b)
		return;
	if (a && b && !strcmp(a, b))
		return;
	parsed_cmd pa, pb;
	parse_cmd(a, &pa);
	parse_cmd(b, &pb);
	int before = c->nchanges;
	char what[64];
	for (int pass = 0; pass < 2; pass++) {
		const parsed_cmd *x = pass ? &pb : &pa, *y = pass ? &pa : &pb;
		for (int i = 0; i < x->nopt; i++) {
			const char *other = opt_get(y, x->key[i]);
			if (pass && other)
				continue; /* present on both sides: handled in pass 0 */
			if (other && !strcmp(other, x->val[i]))
				continue;
			snprintf(what, sizeof what, L_("argument %s"), x->key[i]);
			if (pass)
				add_change(c, what, NULL, x->val[i]);
			else
				add_change(c, what, x->val[i], other);
		}
		for (int i = 0; i < x->nenv; i++) {
			size_t nl = (size_t)(strchr(x->env[i], '=') - x->env[i]);
			const char *other = env_get(y, x->env[i], nl);
			if (pass && other)
				continue;
			if (other && !strcmp(other, x->env[i] + nl + 1))
				continue;
			snprintf(what, sizeof what, L_("command env %.*s"), (int)nl, x->env[i]);
			if (pass)
				add_change(c, what, NULL, x->env[i] + nl + 1);
			else
				add_change(c, what, x->env[i] + nl + 1, other);
		}
	}
	if (strcmp(pa.positional, pb.positional))
		add_change(c, L_("command"), pa.positional[0] ? pa.positional : NULL,
		           pb.positional[0] ? pb.positional : NULL);
	if (c->nchanges == before) /* only spacing differs: still say so */
		add_change(c, L_("command"), a, b);
	free(pa.buf);
	free(pb.buf);
}

static void diff_key(diag_comparison *c, const char *what, const char *a, const char *b)
{
	if ((a || b) && (!a || !b || strcmp(a, b)))
		add_change(c, what, a, b);
}

static void diff_meta(diag_comparison *c, const diag_meta *a, const diag_meta *b)
{
	diff_commands(c, diag_meta_get(a, "command"), diag_meta_get(b, "command"));
	/* Environment variables of interest: every env.NAME key on either side. */
	for (int pass = 0; pass < 2; pass++) {
		const diag_meta *x = pass ? b : a, *y = pass ? a : b;
		for (int i = 0; x && i < x->n; i++) {
			const char *k = x->kv[i].key;
			if (strncmp(k, "env.", 4))
				continue;
			const char *other = diag_meta_get(y, k);
			if (pass && other)
				continue;
			char what[64];
			snprintf(what, sizeof what, L_("env %s"), k + 4);
			if (pass)
				diff_key(c, what, NULL, x->kv[i].value);
			else
				diff_key(c, what, x->kv[i].value, other);
		}
	}
	diff_key(c, L_("GPU set"), diag_meta_get(a, "gpus"), diag_meta_get(b, "gpus"));
	diff_key(c, L_("driver"), diag_meta_get(a, "driver"), diag_meta_get(b, "driver"));
	diff_key(c, "CUDA", diag_meta_get(a, "cuda"), diag_meta_get(b, "cuda"));
	diff_key(c, L_("host"), diag_meta_get(a, "hostname"), diag_meta_get(b, "hostname"));
}

/* warn/error finding ids of a that b does not have. */
static int missing_ids(const diag_result *a, const diag_result *b, const char **out, int max)
{
	int n = 0;
	for (int i = 0; i < a->n && n < max; i++) {
		const diag_finding *f = &a->f[i];
		if (f->severity < DIAG_WARN)
			continue;
		const diag_finding *g = diag_find(b, f->id);
		if (!g || g->severity < DIAG_WARN)
			out[n++] = f->id;
	}
	return n;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The median of d[0..n) (n >= 1), sorting a copy. NAN when out of memory. */
static double median_of(const double *d, int n)
{
	double *c = malloc((size_t)n * sizeof *c);
	if (!c)
		return NAN;
	memcpy(c, d, (size_t)n * sizeof *c);
	qsort(c, (size_t)n, sizeof *c, dbl_cmp);
	double m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
	free(c);
	return m;
}

/*
 * How far the two halves of one run's steps disagree, in % of its median:
 * the drift the machine's own state (other load, clocks) gives a run that
 * does not change. A difference between two runs smaller than that is not
 * the change's. Medians, so that a few steps stalled by a burst of other
 * load do not make every comparison on a busy machine "no change"; a
 * lasting shift of the step time still moves the median of its half.
 */
static double step_drift_pct(const double *d, int n)
{
	if (n < 2 * DIAG_COMPARE_DRIFT_MIN_HALF)
		return NAN;
	int h = n / 2;
	double a = median_of(d, h), b = median_of(d + h, n - h), m = median_of(d, n);
	return m > 0 ? 100 * fabs(b - a) / m : NAN;
}

/*
 * What a loaded run's excess can explain, in % of the base's mean step.
 * Load only ever slows steps: a run's undisturbed mean lies between its
 * quickest steps (p10) and its mean. So a loaded base can make the
 * candidate look faster (by up to its mean above its p10), a loaded
 * candidate can make it look slower (likewise), and neither can fake the
 * other direction: a candidate slowed by load that is still faster is
 * faster. The bound is taken in the direction of the observed change.
 */
static double explained_pct(const diag_comparison *out, int side)
{
	const diag_host_load *l = side ? &out->load_cand : &out->load_base;
	double mean = side ? out->mean.cand : out->mean.base;
	if (!l->loaded)
		return 0;
	if (isnan(l->excess_pct) || !(out->mean.base > 0))
		return NAN;
	/* mean - p10, with excess = (mean - p10) / p10 */
	return 100 * mean * l->excess_pct / (100 + l->excess_pct) / out->mean.base;
}

static void confound(diag_comparison *out)
{
	out->confounded = out->load_base.loaded || out->load_cand.loaded;
	if (!out->confounded)
		return;
	double faster = explained_pct(out, 0), slower = explained_pct(out, 1);
	double d = out->diff_pct;
	/* (no direction: either side's; unknown when a loaded side's is) */
	out->interference_pct = !isnan(d) && d < 0               ? faster
	                        : !isnan(d) && d > 0             ? slower
	                        : isnan(faster) || isnan(slower) ? NAN
	                                                         : fmax(faster, slower);
	/* the direction the load could not have produced */
	out->interference_against = !isnan(d) && d != 0 && out->interference_pct == 0;
	if (!isnan(out->interference_pct) && out->interference_pct > out->min_diff_pct)
		out->min_diff_pct = out->interference_pct;
}

void diag_compare(const timeline *base, const diag_meta *mbase, const timeline *cand,
                  const diag_meta *mcand, const diag_opts *o, diag_comparison *out)
{
	memset(out, 0, sizeof *out);
	dx_set_localize(o->localize);
	diag_meta ma = {0}, mb = {0};
	if (mbase)
		for (int i = 0; i < mbase->n; i++)
			diag_meta_set(&ma, mbase->kv[i].key, mbase->kv[i].value);
	if (mcand)
		for (int i = 0; i < mcand->n; i++)
			diag_meta_set(&mb, mcand->kv[i].key, mcand->kv[i].value);
	diag_meta_from_timeline(&ma, base);
	diag_meta_from_timeline(&mb, cand);

	diag_opts oa = *o, ob = *o;
	oa.meta = &ma;
	ob.meta = &mb;
	diag_result ra, rb;
	diag_run(base, &oa, &ra);
	diag_run(cand, &ob, &rb);
	diag_summarize(base, &ra, &out->base);
	diag_summarize(cand, &rb, &out->cand);

	double *da, *db;
	int na = diag_step_times(base, &da), nb = diag_step_times(cand, &db);
	static const double ps[4] = {DIAG_STAT_MEAN, 50, 90, 99};
	diag_diff dd[4];
	diag_bootstrap_diffs(da, na, db, nb, ps, 4, DIAG_BOOTSTRAP_RESAMPLES, DIAG_BOOTSTRAP_SEED,
	                     dd);
	out->mean = dd[0];
	out->p50 = dd[1];
	out->p90 = dd[2];
	out->p99 = dd[3];
	out->drift_pct = fmax(step_drift_pct(da, na), step_drift_pct(db, nb));
	diag_host_load_of(base, ra.t_from, ra.t_to, da, na, o->th.compare_host_load_pct,
	                  &out->load_base);
	diag_host_load_of(cand, rb.t_from, rb.t_to, db, nb, o->th.compare_host_load_pct,
	                  &out->load_cand);
	free(da);
	free(db);
	/*
	 * Faster means more steps per second: the mean step time decides. The
	 * median alone can improve while the tail (and the run) gets slower.
	 */
	out->steps_bursty = ra.steps.bursty || rb.steps.bursty;
	out->min_diff_pct = o->th.compare_min_diff_pct;
	out->diff_pct = NAN;
	out->interference_pct = NAN;
	if (out->mean.base > 0 && !isnan(out->mean.diff)) {
		out->diff_pct = 100 * out->mean.diff / out->mean.base;
		/* A difference the step timer cannot resolve is no difference. */
		double res = fmax(ra.steps.resolution, rb.steps.resolution);
		if (!isnan(res) && 100 * res / out->mean.base > out->min_diff_pct)
			out->min_diff_pct = 100 * res / out->mean.base;
		if (!isnan(out->drift_pct) && out->drift_pct > out->min_diff_pct)
			out->min_diff_pct = out->drift_pct;
	}
	confound(out);
	if (!isnan(out->mean.lo) && !out->steps_bursty) {
		out->by_steps = true;
		out->verdict = out->mean.hi < 0 ? -1 : out->mean.lo > 0 ? 1 : 0;
		out->p50_verdict = out->p50.hi < 0 ? -1 : out->p50.lo > 0 ? 1 : 0;
		if (out->verdict && fabs(out->diff_pct) < out->min_diff_pct) {
			out->below_interference = !isnan(out->interference_pct) &&
			                          fabs(out->diff_pct) < out->interference_pct;
			out->verdict = 0;
			out->below_min_diff = true;
		}
		if (out->p50_verdict && out->p50.base > 0 &&
		    fabs(100 * out->p50.diff / out->p50.base) < out->min_diff_pct)
			out->p50_verdict = 0;
	} else if (base->duration > 0 && cand->duration > 0) {
		double pct = 100 * (cand->duration - base->duration) / base->duration;
		out->verdict = pct <= -DIAG_COMPARE_DURATION_PCT  ? -1
		               : pct >= DIAG_COMPARE_DURATION_PCT ? 1
		                                                  : 0;
	}
	diff_meta(out, &ma, &mb);
	out->nfixed = missing_ids(&ra, &rb, out->fixed, 24);
	out->nappeared = missing_ids(&rb, &ra, out->appeared, 24);
	diag_result_free(&ra);
	diag_result_free(&rb);
	diag_meta_free(&ma);
	diag_meta_free(&mb);
}

void diag_comparison_free(diag_comparison *c)
{
	free(c->changes);
	memset(c, 0, sizeof *c);
}
