/*
 * compare.c - is the candidate faster than the base, and what changed
 * between them. The verdict is the one comparison of mean step times
 * (stepcmp.c), qualified by the host's load; p50/p90/p99 are shown with
 * block bootstrap intervals (fixed seed, so the same files always give the
 * same answer). Change one variable at a time, or the gain cannot be
 * attributed to any of them.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/diag_int.h"

/* Without step markers, run time must differ by this much (%) to call one side faster. */
#define DIAG_COMPARE_DURATION_PCT 5.0

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

/* A finding (warn or error) counts for a side when most of its runs have it. */
static bool side_has(const diag_result *r, int n, const char *id)
{
	int k = 0;
	for (int i = 0; i < n; i++) {
		const diag_finding *g = diag_find(&r[i], id);
		k += g && g->severity >= DIAG_WARN;
	}
	return 2 * k > n;
}

/* warn/error finding ids of side a that side b does not have (each counted once). */
static int missing_ids(const diag_result *a, int na, const diag_result *b, int nb, const char **out,
                       int max)
{
	int n = 0;
	for (int r = 0; r < na; r++)
		for (int i = 0; i < a[r].n && n < max; i++) {
			const char *id = a[r].f[i].id;
			bool seen = false;
			for (int j = 0; j < n && !seen; j++)
				seen = !strcmp(out[j], id);
			if (!seen && a[r].f[i].severity >= DIAG_WARN && side_has(a, na, id) &&
			    !side_has(b, nb, id))
				out[n++] = id;
		}
	return n;
}

/*
 * What a loaded run's excess can explain, in % of the base's mean step.
 * Load only ever slows steps: a run's undisturbed mean lies between its
 * undisturbed step time (the p10 of its steps, a repeating pattern counted
 * as one step) and its mean. So a
 * loaded base can make the candidate look faster (by up to its mean above
 * that), a loaded candidate can make it look slower (likewise), and neither
 * can fake the other direction: a loaded candidate that is still faster is
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
	/* mean - undisturbed, with excess = (mean - undisturbed) / undisturbed */
	return 100 * mean * l->excess_pct / (100 + l->excess_pct) / out->mean.base;
}

/* Load qualifies a claim in the one direction it can fake; it never raises the threshold. */
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
	if (out->verdict && !out->interference_against &&
	    (isnan(out->interference_pct) || fabs(d) <= out->interference_pct)) {
		out->withheld_by_load = true;
		out->verdict = 0;
	}
}

/* The host load of a side: its most loaded run's (others' CPU), each run's own steps. */
static void side_load(const timeline *const *tl, const diag_result *r, const diag_run_steps *st,
                      int n, const double th, diag_host_load *out)
{
	memset(out, 0, sizeof *out);
	for (int i = 0; i < n; i++) {
		diag_host_load l;
		diag_host_load_of(tl[i], r[i].t_from, r[i].t_to, st[i].t, st[i].n, th, &l);
		bool worse = l.loaded && (!out->loaded || l.others_cpu > out->others_cpu);
		if (i == 0 || worse)
			*out = l;
	}
}

/* Each side's runs as step series for the one comparison (steps owned by *bufs). */
static void side_steps(const timeline *const *tl, const diag_result *r, int n, diag_run_steps *runs,
                       double **bufs)
{
	for (int i = 0; i < n; i++) {
		runs[i].n = diag_step_times(tl[i], &bufs[i]);
		runs[i].t = bufs[i];
		runs[i].resolution = r[i].steps.resolution;
	}
}

/* The mean of the runs' summaries, field by field (absent ones left out). */
static void side_summary(const timeline *const *tl, const diag_result *r, int n,
                         diag_run_summary *out)
{
	diag_summarize(tl[0], &r[0], out);
	if (n < 2)
		return;
	double *f[] = {&out->duration,   &out->util_mean,  &out->sm_active_mean, &out->mem_peak_mib,
	               &out->power_mean, &out->steps.mean, &out->steps.p50,      &out->steps.p90,
	               &out->steps.p99,  &out->steps.per_s};
	enum { NF = sizeof f / sizeof *f };
	double sum[NF] = {0};
	int k[NF] = {0}, steps = 0;
	for (int i = 0; i < n; i++) {
		diag_run_summary s;
		diag_summarize(tl[i], &r[i], &s);
		double *g[] = {&s.duration,   &s.util_mean,  &s.sm_active_mean, &s.mem_peak_mib,
		               &s.power_mean, &s.steps.mean, &s.steps.p50,      &s.steps.p90,
		               &s.steps.p99,  &s.steps.per_s};
		for (int j = 0; j < NF; j++)
			if (!isnan(*g[j])) {
				sum[j] += *g[j];
				k[j]++;
			}
		steps += s.steps.n;
	}
	for (int j = 0; j < NF; j++)
		*f[j] = k[j] ? sum[j] / k[j] : NAN;
	out->steps.n = steps;
}

/* Differences between a side's first run and its others, named for that side. */
static void diff_within(diag_comparison *c, const char *side, const diag_meta *m, int n)
{
	for (int i = 1; i < n; i++) {
		diag_comparison t = {0};
		diff_meta(&t, &m[0], &m[i]);
		for (int j = 0; j < t.nchanges; j++) {
			char what[64];
			snprintf(what, sizeof what, L_("%s run %d: %s"), side, i + 1,
			         t.changes[j].what);
			add_change(c, what, t.changes[j].base, t.changes[j].cand);
		}
		free(t.changes);
	}
}

/* The verdict from the one comparison of step times, or from run time without steps. */
static void judge(diag_comparison *out, const timeline *const *base, int nbase,
                  const timeline *const *cand, int ncand)
{
	const diag_step_cmp *s = &out->steps;
	out->diff_pct = s->diff_pct;
	out->below_min_diff = s->below_min_diff;
	out->equivalent = s->equivalent;
	if (s->method != DIAG_CMP_NONE && !isnan(out->mean.lo) && !out->steps_bursty) {
		out->by_steps = true;
		out->verdict = s->verdict;
		out->p50_verdict = out->p50.hi < 0 ? -1 : out->p50.lo > 0 ? 1 : 0;
		if (out->p50_verdict && out->p50.base > 0 &&
		    fabs(100 * out->p50.diff / out->p50.base) < out->min_diff_pct)
			out->p50_verdict = 0;
		return;
	}
	/* A log's or a window's length is what its writer or the user chose: it says
	 * nothing of how fast the work went, so no speed claim is made from it. */
	for (int i = 0; i < nbase + ncand; i++)
		if (tl_meta_get(i < nbase ? base[i] : cand[i - nbase], "source"))
			out->untimed = true;
	if (out->untimed)
		return;
	double a = 0, b = 0;
	for (int i = 0; i < nbase; i++)
		a += base[i]->duration / nbase;
	for (int i = 0; i < ncand; i++)
		b += cand[i]->duration / ncand;
	if (a > 0 && b > 0) {
		double pct = 100 * (b - a) / a;
		out->verdict = pct <= -DIAG_COMPARE_DURATION_PCT  ? -1
		               : pct >= DIAG_COMPARE_DURATION_PCT ? 1
		                                                  : 0;
	}
}

/* Each run's meta with the facts its timeline holds, and its diagnosis. */
static void diagnose_side(const timeline *const *tl, const diag_meta *m, int n, const diag_opts *o,
                          diag_meta *mo, diag_result *r)
{
	for (int i = 0; i < n; i++) {
		memset(&mo[i], 0, sizeof mo[i]);
		for (int j = 0; m && j < m[i].n; j++)
			diag_meta_set(&mo[i], m[i].kv[j].key, m[i].kv[j].value);
		diag_meta_from_timeline(&mo[i], tl[i]);
		diag_opts oi = *o;
		oi.meta = &mo[i];
		diag_run(tl[i], &oi, &r[i]);
	}
}

static void compare_steps(diag_comparison *out, const diag_run_steps *sa, int nbase,
                          const diag_run_steps *sb, int ncand, const diag_opts *o)
{
	diag_step_compare(sa, nbase, sb, ncand, o->th.compare_min_diff_pct, &out->steps);
	static const double ps[3] = {50, 90, 99};
	diag_diff dd[3];
	diag_bootstrap_diffs(sa, nbase, sb, ncand, ps, 3, DIAG_BOOTSTRAP_RESAMPLES,
	                     DIAG_BOOTSTRAP_SEED, dd);
	out->p50 = dd[0];
	out->p90 = dd[1];
	out->p99 = dd[2];
	const diag_step_cmp *s = &out->steps;
	out->mean = (diag_diff){s->mean[0], s->mean[1], s->diff, s->lo, s->hi};
}

void diag_compare_runs(const timeline *const *base, const diag_meta *mbase, int nbase,
                       const timeline *const *cand, const diag_meta *mcand, int ncand,
                       const diag_opts *o, diag_comparison *out)
{
	memset(out, 0, sizeof *out);
	nbase = nbase > DIAG_CMP_MAX_RUNS ? DIAG_CMP_MAX_RUNS : nbase;
	ncand = ncand > DIAG_CMP_MAX_RUNS ? DIAG_CMP_MAX_RUNS : ncand;
	out->nbase = nbase;
	out->ncand = ncand;
	diag_set_localize(o->localize);
	diag_meta ma[DIAG_CMP_MAX_RUNS], mb[DIAG_CMP_MAX_RUNS];
	diag_result ra[DIAG_CMP_MAX_RUNS], rb[DIAG_CMP_MAX_RUNS];
	diagnose_side(base, mbase, nbase, o, ma, ra);
	diagnose_side(cand, mcand, ncand, o, mb, rb);
	side_summary(base, ra, nbase, &out->base);
	side_summary(cand, rb, ncand, &out->cand);
	/* Each run's step times, read once for the comparison and the load. */
	diag_run_steps sa[DIAG_CMP_MAX_RUNS], sb[DIAG_CMP_MAX_RUNS];
	double *ba[DIAG_CMP_MAX_RUNS], *bb[DIAG_CMP_MAX_RUNS];
	side_steps(base, ra, nbase, sa, ba);
	side_steps(cand, rb, ncand, sb, bb);
	compare_steps(out, sa, nbase, sb, ncand, o);
	side_load(base, ra, sa, nbase, o->th.compare_host_load_pct, &out->load_base);
	side_load(cand, rb, sb, ncand, o->th.compare_host_load_pct, &out->load_cand);
	for (int i = 0; i < nbase; i++)
		free(ba[i]);
	for (int i = 0; i < ncand; i++)
		free(bb[i]);
	for (int i = 0; i < nbase; i++)
		out->steps_bursty |= ra[i].steps.bursty;
	for (int i = 0; i < ncand; i++)
		out->steps_bursty |= rb[i].steps.bursty;
	out->min_diff_pct = o->th.compare_min_diff_pct;
	out->interference_pct = NAN;
	/* Faster means more steps per second: the mean step time decides. The
	 * median alone can improve while the tail (and the run) gets slower. */
	judge(out, base, nbase, cand, ncand);
	if (out->untimed)
		diag_busy_compare(base, nbase, cand, ncand, o->th.compare_busy_pp, &out->busy);
	confound(out);
	diff_meta(out, &ma[0], &mb[0]);
	diff_within(out, L_("base"), ma, nbase);
	diff_within(out, L_("candidate"), mb, ncand);
	out->nfixed = missing_ids(ra, nbase, rb, ncand, out->fixed, 24);
	out->nappeared = missing_ids(rb, ncand, ra, nbase, out->appeared, 24);
	if (out->busy.verdict != DIAG_BUSY_NONE)
		diag_busy_findings(ra, nbase, rb, ncand, &out->busy);
	for (int i = 0; i < nbase; i++) {
		diag_result_free(&ra[i]);
		diag_meta_free(&ma[i]);
	}
	for (int i = 0; i < ncand; i++) {
		diag_result_free(&rb[i]);
		diag_meta_free(&mb[i]);
	}
}

void diag_compare(const timeline *base, const diag_meta *mbase, const timeline *cand,
                  const diag_meta *mcand, const diag_opts *o, diag_comparison *out)
{
	diag_compare_runs(&base, mbase, 1, &cand, mcand, 1, o, out);
}

void diag_comparison_free(diag_comparison *c)
{
	free(c->changes);
	memset(c, 0, sizeof *c);
}
