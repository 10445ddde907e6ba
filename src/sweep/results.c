/*
 * results.c - from the recordings of a sweep to its answers: per
 * configuration the step-time statistics over repeats, throughput, the GPU
 * and host numbers and the top finding of its own diagnosis; per variable
 * the curve, its knee and a sentence saying why; the best configuration,
 * significance against the baseline (the same bootstrap as `compare`), and
 * the memory model checked against the out-of-memory boundary found.
 * Faster or slower than the baseline is compare's one comparison of step
 * times (diag_step_compare), each repeat a run.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/diag.h"
#include "store/store.h"
#include "util/fail.h"
#include "sweep/memfit.h"
#include "sweep/plan.h"
#include "sweep/results.h"
#include "sweep/state.h"
#include "sweep/stats.h"
#include "util/xalloc.h"
#include "util/i18n.h"

/* The numbers of one repeat averaged over repeats, by index. */
enum {
	RN_UTIL,
	RN_SM,
	RN_MEM_PEAK,
	RN_MEM_TOTAL,
	RN_POWER,
	RN_CORE_MAX,
	RN_HOST_BUSY,
	RN_TREE,
	RN__N
};

typedef struct {
	double mean, p50, p90;
	double m[RN__N];
} rep_numbers;

static void append(double **xs, int *n, const double *src, int m)
{
	if (m <= 0)
		return;
	*xs = gw_xrealloc(*xs, (size_t)(*n + m) * sizeof **xs);
	memcpy(*xs + *n, src, (size_t)m * sizeof *src);
	*n += m;
}

static bool has_oom(const timeline *tl)
{
	for (int i = 0; i < tl->nevents; i++)
		if (!strcmp(tl->events[i].kind, TL_EV_OOM))
			return true;
	return false;
}

/* GPU memory the job's GPUs offer: total less what the driver reserves. */
static double usable_total(const timeline *tl, const diag_result *dr)
{
	double best = NAN;
	for (int g = 0; g < dr->ngpu && g < tl->ngpu; g++) {
		if (!dr->gpu[g].job || isnan(dr->gpu[g].mem_total_mib))
			continue;
		double res = tl_max(tl->gpu[g].m[GM_MEM_RESERVED], 0, tl->n);
		double t = dr->gpu[g].mem_total_mib - (isnan(res) ? 0 : res);
		if (isnan(best) || t < best)
			best = t;
	}
	return best;
}

/* One recording: its numbers, its step intervals (after warm-up) appended to steps. */
/* The top finding's title as the user reads it: the diagnosis again, in the
 * language in force (the first run kept it English for results.json). */
static void local_title(const timeline *tl, sweep_result *r)
{
	diag_opts o;
	diag_opts_default(&o);
	diag_result dr;
	diag_run(tl, &o, &dr);
	const diag_finding *f = diag_top_finding(&dr);
	if (f && !strcmp(f->id, r->finding_id))
		snprintf(r->finding_local, sizeof r->finding_local, "%s", f->title);
	diag_result_free(&dr);
}

static bool read_rep(const char *file, int warmup, sweep_result *r, rep_numbers *rn)
{
	timeline *tl;
	gw_fail err;
	if (store_read_timeline(file, &tl, &err) != 0) {
		gw_fail_print(&err);
		return false;
	}
	double *d = NULL;
	int nd = tl_step_durations(tl, &d);
	int skip = warmup < nd ? warmup : nd;
	rn->mean = rn->p50 = rn->p90 = NAN;
	if (nd > skip) {
		double half;
		sweep_mean_ci(d + skip, nd - skip, &rn->mean, &half);
		rn->p50 = tl_percentile(d + skip, nd - skip, 50);
		rn->p90 = tl_percentile(d + skip, nd - skip, 90);
		if (r->nruns < SWEEP_MAX_RUN_SERIES) {
			r->run_off[r->nruns] = r->nsteps;
			append(&r->steps, &r->nsteps, d + skip, nd - skip);
			r->run_off[++r->nruns] = r->nsteps;
		}
	}
	free(d);
	diag_opts o;
	diag_opts_default(&o);
	o.localize = false; /* results.json is read by machines */
	diag_result dr;
	diag_run(tl, &o, &dr);
	diag_run_summary s;
	diag_summarize(tl, &dr, &s);
	rn->m[RN_UTIL] = s.util_mean;
	rn->m[RN_SM] = s.sm_active_mean;
	rn->m[RN_MEM_PEAK] = s.mem_peak_mib;
	rn->m[RN_POWER] = s.power_mean;
	rn->m[RN_MEM_TOTAL] = usable_total(tl, &dr);
	rn->m[RN_CORE_MAX] = tl_mean(tl->h[HM_CPU_BUSY_MAX], 0, tl->n);
	rn->m[RN_HOST_BUSY] = tl_mean(tl->h[HM_CPU_BUSY_AVG], 0, tl->n);
	double tree = tl_mean(tl->h[HM_TREE_CPU], 0, tl->n);
	rn->m[RN_TREE] = isnan(tree) ? NAN : tree / 100.0;
	const diag_finding *f = diag_top_finding(&dr);
	if (f && f->severity >= DIAG_WARN) {
		snprintf(r->finding_id, sizeof r->finding_id, "%s", f->id);
		snprintf(r->finding, sizeof r->finding, "%s", f->title);
		snprintf(r->finding_local, sizeof r->finding_local, "%s", f->title);
		if (gw_i18n_active())
			local_title(tl, r);
	}
	r->oom |= has_oom(tl);
	diag_result_free(&dr);
	tl_free(tl);
	return true;
}

/* Mean of the repeats' values, ignoring absent ones. */
static double avg(const rep_numbers *reps, int n, int idx)
{
	double s = 0;
	int k = 0;
	for (int i = 0; i < n; i++) {
		double v = reps[i].m[idx];
		if (!isnan(v)) {
			s += v;
			k++;
		}
	}
	return k ? s / k : NAN;
}

/* A result's repeats as runs of steps (one run of all its steps when kept pooled). */
static int result_runs(const sweep_result *r, diag_run_steps *out)
{
	if (r->nruns <= 0) {
		out[0] = (diag_run_steps){r->steps, r->nsteps, NAN};
		return 1;
	}
	for (int k = 0; k < r->nruns; k++)
		out[k] = (diag_run_steps){r->steps + r->run_off[k],
		                          r->run_off[k + 1] - r->run_off[k], NAN};
	return r->nruns;
}

/* One repeat's mean and 95 % half-width, from its steps in autocorrelation-sized blocks. */
static void step_mean_ci(const sweep_result *r, double *mean, double *half)
{
	diag_run_steps runs[SWEEP_MAX_RUN_SERIES];
	result_runs(r, runs);
	diag_run_noise nz;
	diag_run_noise_of(runs[0].t, runs[0].n, &nz);
	*mean = nz.mean;
	*half = nz.n >= 2 && nz.nblocks > 1
	            ? diag_t_quantile(0.975, nz.nblocks - 1) * sqrt(nz.var_mean)
	            : NAN;
}

/* Step statistics of the repeats that timed steps (nok of them, first in reps). */
static void step_stats(const sweep_results *R, const sweep_config *c, sweep_result *r,
                       const rep_numbers *reps, int nread)
{
	double means[64];
	int nok = 0;
	for (int i = 0; i < nread; i++)
		if (!isnan(reps[i].mean))
			means[nok++] = reps[i].mean;
	r->ok = nok > 0;
	r->mean = r->p50 = r->p90 = r->ci_half = r->steps_s = r->samples_s = NAN;
	if (!r->ok)
		return;
	r->ci_over_repeats = nok >= 2;
	if (r->ci_over_repeats)
		sweep_mean_ci(means, nok, &r->mean, &r->ci_half);
	else
		step_mean_ci(r, &r->mean, &r->ci_half);
	r->p50 = tl_percentile(r->steps, r->nsteps, 50);
	r->p90 = tl_percentile(r->steps, r->nsteps, 90);
	r->steps_s = r->mean > 0 ? 1 / r->mean : NAN;
	int bv = R->sp->batch_var ? sweep_var_index(R->sp, R->sp->batch_var) : -1;
	double b;
	char *end;
	if (bv >= 0 && (b = strtod(c->val[bv], &end)) > 0 && *end == '\0')
		r->samples_s = r->steps_s * b;
}

static void config_result(sweep_results *R, int ci)
{
	const sweep_config *c = &R->pl->c[ci];
	sweep_result *r = &R->res[ci];
	memset(r, 0, sizeof *r);
	r->exit_code = -1;
	r->diff = r->diff_lo = r->diff_hi = NAN;
	rep_numbers reps[64];
	int nread = 0;
	for (int k = 1; k <= R->sp->repeat; k++) {
		sweep_run *run = sweep_state_find((sweep_state *)R->st, c->name, k);
		if (!run)
			continue;
		r->nrep++;
		r->status = run->status;
		r->exit_code = run->exit_code;
		r->oom |= run->status == SWEEP_OOM;
		if (run->status == SWEEP_DONE && nread < 64 &&
		    read_rep(run->file, R->warmup, r, &reps[nread]))
			nread++;
	}
	r->nrep_ok = nread;
	step_stats(R, c, r, reps, nread);
	r->util = avg(reps, nread, RN_UTIL);
	r->sm = avg(reps, nread, RN_SM);
	r->mem_peak = avg(reps, nread, RN_MEM_PEAK);
	r->mem_total = avg(reps, nread, RN_MEM_TOTAL);
	r->power = avg(reps, nread, RN_POWER);
	r->core_max = avg(reps, nread, RN_CORE_MAX);
	r->host_busy = avg(reps, nread, RN_HOST_BUSY);
	r->tree_cores = avg(reps, nread, RN_TREE);
}

double sweep_result_thr(const sweep_results *R, int cfg)
{
	const sweep_result *r = &R->res[cfg];
	return !isnan(r->samples_s) ? r->samples_s : r->steps_s;
}

static void significance(sweep_results *R)
{
	const sweep_result *b = &R->res[0];
	diag_opts o;
	diag_opts_default(&o);
	diag_run_steps rb[SWEEP_MAX_RUN_SERIES], rc[SWEEP_MAX_RUN_SERIES];
	int nb = b->ok ? result_runs(b, rb) : 0;
	for (int i = 1; i < R->pl->n; i++) {
		sweep_result *r = &R->res[i];
		if (!r->ok || !b->ok)
			continue;
		diag_step_cmp c;
		diag_step_compare(rb, nb, rc, result_runs(r, rc), o.th.compare_min_diff_pct, &c);
		r->diff = c.diff;
		r->diff_lo = c.lo;
		r->diff_hi = c.hi;
		r->verdict = c.verdict;
		r->below_min_diff = c.below_min_diff;
		r->equivalent = c.equivalent;
	}
}

static double num_val(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	return *s && *end == '\0' ? v : NAN;
}

static const sweep_results *sort_ctx;
static int sort_var;

static int by_value(const void *a, const void *b)
{
	const sweep_config *ca = &sort_ctx->pl->c[*(const int *)a];
	const sweep_config *cb = &sort_ctx->pl->c[*(const int *)b];
	double x = num_val(ca->val[sort_var]), y = num_val(cb->val[sort_var]);
	if (isnan(x) || isnan(y))
		return *(const int *)a - *(const int *)b;
	return (x > y) - (x < y);
}

static const char *ms(double s, char *buf, size_t len)
{
	if (isnan(s))
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%.1f ms", s * 1000);
	return buf;
}

/*
 * Why the curve flattens at configuration k: the numbers recorded there.
 * The host counts as the limit only when the job itself holds the cores
 * (its process tree's CPU), not when other programs keep them busy.
 */
/* The sentences exist twice: in English for results.json, and in the user's
 * language for the text and the page. */
static const char *tr(bool human, const char *msgid) __attribute__((format_arg(2)));
static const char *tr(bool human, const char *msgid)
{
	return human ? _(msgid) : msgid;
}

static void knee_reason(const sweep_results *R, int k, bool human, char *out, size_t len)
{
	const sweep_result *r = &R->res[k];
	int ncpu = R->st->ncpu;
	double avail = !isnan(R->st->free_cores) && R->st->free_cores >= 0.5 ? R->st->free_cores
	                                                                     : (double)ncpu;
	if (!isnan(r->util) && r->util >= 90) {
		snprintf(
		    out, len,
		    tr(human,
		       N_("the GPU is busy %.0f %% of the time there, so it is the limit now")),
		    r->util);
	} else if (!isnan(r->tree_cores) && ncpu > 0 && r->tree_cores >= 0.8 * avail) {
		snprintf(
		    out, len,
		    tr(human, N_("the job uses %.1f of the host's %d cores there (%.1f were free "
		                 "when the sweep started): the host's CPU is saturated, so more "
		                 "of it does not help")),
		    r->tree_cores, ncpu, R->st->free_cores);
	} else if (!isnan(r->core_max) && r->core_max >= 95 && !isnan(r->tree_cores) &&
	           r->tree_cores >= 0.9) {
		snprintf(out, len,
		         tr(human, N_("one core is saturated there (busiest core %.0f %%)")),
		         r->core_max);
	} else if (r->finding[0]) {
		snprintf(out, len, tr(human, N_("its diagnosis says: %s")),
		         human ? r->finding_local : r->finding);
	} else if (!isnan(r->util)) {
		snprintf(
		    out, len,
		    tr(human, N_("GPU utilization is %.0f %% there and neither the GPU nor the "
		                 "job's CPU is saturated: the limit lies elsewhere (I/O, "
		                 "synchronisation)")),
		    r->util);
	} else {
		snprintf(out, len, "%s",
		         tr(human, N_("no GPU samples were recorded there (runs shorter than "
		                      "--interval)")));
	}
}

static void var_sentence(sweep_results *R, sweep_var_result *vr, bool human, char *out, size_t len)
{
	const sweep_spec *sp = R->sp;
	const char *name = sp->vars[vr->var].name;
	char a[32], b[32], why[400];
	int n = vr->n;
	if (!sp->vars[vr->var].search && sp->vars[vr->var].nvalues == 1) {
		snprintf(out, len, tr(human, N_("%s: held at %s")), name,
		         sp->vars[vr->var].values[0]);
		return;
	}
	if (n < 2) {
		snprintf(out, len,
		         tr(human, N_("%s: fewer than two values ran, nothing to compare")), name);
		return;
	}
	const sweep_config *c0 = &R->pl->c[vr->cfg[0]], *c1 = &R->pl->c[vr->cfg[1]];
	const sweep_result *r0 = &R->res[vr->cfg[0]], *r1 = &R->res[vr->cfg[1]];
	double gain = sweep_result_thr(R, vr->cfg[1]) / sweep_result_thr(R, vr->cfg[0]);
	size_t k = (size_t)snprintf(
	    out, len, tr(human, N_("%s: %s -> %s changes step time %s -> %s (throughput x%.2f)")),
	    name, c0->val[vr->var], c1->val[vr->var], ms(r0->mean, a, sizeof a),
	    ms(r1->mean, b, sizeof b), gain);
	if (k >= len)
		return;
	int knee = vr->knee;
	const sweep_config *ck = &R->pl->c[vr->cfg[knee]];
	if (knee == n - 1) {
		snprintf(out + k, len - k,
		         tr(human, N_("; it still gains at %s, the largest value that ran (try "
		                      "larger ones)")),
		         ck->val[vr->var]);
		return;
	}
	knee_reason(R, vr->cfg[knee], human, why, sizeof why);
	snprintf(out + k, len - k,
	         tr(human, N_("; beyond %s the next value gains under %.0f %%: %s")),
	         ck->val[vr->var], R->knee_share * 100, why);
}

static void curve(sweep_results *R, int v)
{
	sweep_var_result *vr = &R->vr[v];
	vr->var = v;
	vr->cfg = gw_xmalloc((size_t)R->pl->n * sizeof *vr->cfg);
	vr->n = 0;
	for (int i = 0; i < R->pl->n; i++)
		if ((R->pl->c[i].varied == v || R->pl->c[i].varied == -1) && R->res[i].ok)
			vr->cfg[vr->n++] = i;
	sort_ctx = R;
	sort_var = v;
	qsort(vr->cfg, (size_t)vr->n, sizeof *vr->cfg, by_value);
	double thr[256];
	int m = vr->n < 256 ? vr->n : 256;
	vr->best = -1;
	for (int i = 0; i < m; i++) {
		thr[i] = sweep_result_thr(R, vr->cfg[i]);
		if (vr->best < 0 || thr[i] > thr[vr->best])
			vr->best = i;
	}
	vr->knee = sweep_knee(thr, m, R->knee_share);
	vr->gaining = m >= 2 && vr->knee == m - 1;
	var_sentence(R, vr, false, vr->why, sizeof vr->why);
	var_sentence(R, vr, true, vr->why_text, sizeof vr->why_text);
}

static void memory_model(sweep_results *R)
{
	R->fit_check = -1;
	R->have_fit = false;
	int bv = R->sp->batch_var ? sweep_var_index(R->sp, R->sp->batch_var) : -1;
	if (bv < 0)
		return;
	int n = R->pl->n;
	double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
	double total = NAN;
	int m = 0;
	for (int i = 0; i < n; i++) {
		const sweep_config *c = &R->pl->c[i];
		if ((c->varied != bv && c->varied != -1) || isnan(R->res[i].mem_peak))
			continue;
		x[m] = num_val(c->val[bv]);
		y[m] = R->res[i].mem_peak;
		if (!isnan(R->res[i].mem_total))
			total = R->res[i].mem_total;
		m++;
	}
	if (!isnan(total))
		R->have_fit = sweep_memfit_fit(x, y, m, total, R->headroom, &R->fit);
	free(x);
	free(y);
	if (!R->have_fit || R->search_var != bv || R->search_good < 0 || R->search_bad < 0)
		return;
	/* The fit agrees when its boundary (or interval) meets the search's last bracket. */
	bool interval = !isnan(R->fit.boundary_lo);
	double lo = interval ? R->fit.boundary_lo : R->fit.boundary;
	double hi = interval ? R->fit.boundary_hi : R->fit.boundary;
	double slack = (double)R->search_step;
	R->fit_check = hi >= (double)R->search_good - slack && lo <= (double)R->search_bad + slack;
}

int sweep_results_compute(sweep_results *R)
{
	R->res = gw_xcalloc((size_t)(R->pl->n ? R->pl->n : 1), sizeof *R->res);
	for (int i = 0; i < R->pl->n; i++)
		config_result(R, i);
	sweep_results_analyse(R);
	return 0;
}

void sweep_results_analyse(sweep_results *R)
{
	significance(R);
	R->best = -1;
	for (int i = 0; i < R->pl->n; i++) {
		if (!R->res[i].ok)
			continue;
		if (R->best < 0 || sweep_result_thr(R, i) > sweep_result_thr(R, R->best))
			R->best = i;
	}
	for (int v = 0; v < R->sp->nvars; v++)
		curve(R, v);
	R->search_best = -1;
	if (R->search_var >= 0) {
		const sweep_var_result *vr = &R->vr[R->search_var];
		R->search_best = vr->best >= 0 ? vr->cfg[vr->best] : -1;
	}
	memory_model(R);
}

void sweep_results_free(sweep_results *R)
{
	if (R->res)
		for (int i = 0; i < R->pl->n; i++)
			free(R->res[i].steps);
	free(R->res);
	R->res = NULL;
	for (int v = 0; v < SWEEP_MAX_VARS; v++) {
		free(R->vr[v].cfg);
		R->vr[v].cfg = NULL;
	}
}
