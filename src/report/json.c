/*
 * json.c - the report and the comparison as JSON (schema in docs/report.md and docs/compare.md).
 * Absent numbers are null, never 0; GPUs are named by NVML index.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "report/report.h"
#include "util/jsonw.h"

static void num(jsonw *w, const char *k, double v)
{
	jsonw_key(w, k);
	jsonw_num(w, v);
}

static void str(jsonw *w, const char *k, const char *v)
{
	jsonw_key(w, k);
	jsonw_str(w, v);
}

static void integer(jsonw *w, const char *k, long long v)
{
	jsonw_key(w, k);
	jsonw_int(w, v);
}

static void boolean(jsonw *w, const char *k, bool v)
{
	jsonw_key(w, k);
	jsonw_bool(w, v);
}

/* Seconds into the recording as Unix time (null when the start is unknown). */
static void wall(jsonw *w, const timeline *tl, const char *k, double t)
{
	num(w, k, tl->t0_wall > 0 ? tl->t0_wall + t : NAN);
}

/* The recording's wall-clock start as Unix time and as UTC ISO 8601 (null when unknown). */
static void start_wall(jsonw *w, const timeline *tl)
{
	wall(w, tl, "start_wall", 0);
	char day[24] = "", u[40] = "";
	time_t s = (time_t)floor(tl->t0_wall);
	struct tm ut;
	if (tl->t0_wall > 0 && tl->t0_wall < 253402300799.0 && gmtime_r(&s, &ut) &&
	    strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &ut))
		snprintf(u, sizeof u, "%s.%03dZ", day,
		         (int)((tl->t0_wall - floor(tl->t0_wall)) * 1000) % 1000);
	str(w, "start_wall_utc", u[0] ? u : NULL);
}

static void gpu_index(jsonw *w, const timeline *tl, int pos)
{
	if (pos >= 0 && pos < tl->ngpu)
		jsonw_int(w, tl->gpu[pos].index);
	else
		jsonw_null(w);
}

static void finding(jsonw *w, const timeline *tl, const diag_finding *f)
{
	jsonw_obj_begin(w);
	str(w, "id", f->id);
	str(w, "severity", diag_severity_name(f->severity));
	num(w, "confidence", f->confidence);
	str(w, "title", f->title);
	jsonw_key(w, "gpus");
	jsonw_arr_begin(w);
	for (int g = 0; g < tl->ngpu && g < 64; g++)
		if (f->gpus & (1ULL << g))
			jsonw_int(w, tl->gpu[g].index);
	jsonw_arr_end(w);
	jsonw_key(w, "ranges");
	jsonw_arr_begin(w);
	for (int i = 0; i < f->nranges; i++) {
		jsonw_obj_begin(w);
		num(w, "from_s", f->ranges[i].t0);
		num(w, "to_s", f->ranges[i].t1);
		wall(w, tl, "from_wall", f->ranges[i].t0);
		wall(w, tl, "to_wall", f->ranges[i].t1);
		jsonw_obj_end(w);
	}
	jsonw_arr_end(w);
	jsonw_key(w, "evidence");
	jsonw_arr_begin(w);
	for (int i = 0; i < f->nev; i++) {
		const diag_evidence *e = &f->ev[i];
		jsonw_obj_begin(w);
		str(w, "metric", e->metric);
		str(w, "stat", e->stat);
		num(w, "value", e->value);
		str(w, "unit", e->unit);
		jsonw_key(w, "cmp");
		jsonw_str(w, e->cmp[0] ? e->cmp : NULL);
		num(w, "threshold", e->threshold);
		jsonw_key(w, "met");
		int met = diag_evidence_met(e);
		if (met < 0)
			jsonw_null(w);
		else
			jsonw_bool(w, met);
		jsonw_key(w, "gpu");
		gpu_index(w, tl, e->gpu);
		jsonw_obj_end(w);
	}
	jsonw_arr_end(w);
	jsonw_key(w, "note");
	jsonw_str(w, f->note[0] ? f->note : NULL);
	str(w, "advice", f->advice);
	str(w, "verify", f->verify);
	jsonw_obj_end(w);
}

static void steps(jsonw *w, const diag_step_stats *s)
{
	jsonw_obj_begin(w);
	integer(w, "intervals", s->n);
	num(w, "mean_s", s->mean);
	num(w, "p50_s", s->p50);
	num(w, "p90_s", s->p90);
	num(w, "p99_s", s->p99);
	num(w, "per_s", s->per_s);
	boolean(w, "bursty", s->bursty);
	num(w, "timer_resolution_s", s->resolution);
	jsonw_obj_end(w);
}

void report_json(FILE *out, const timeline *tl, const diag_meta *meta, const diag_result *r,
                 const report_style *st)
{
	jsonw w;
	jsonw_init(&w, out, true);
	jsonw_obj_begin(&w);
	integer(&w, "report_version", 1);
	str(&w, "source", st->source);
	str(&w, "goal", diag_goal_name(r->goal));
	integer(&w, "exit_code", diag_exit_code(r));

	jsonw_key(&w, "recording");
	jsonw_obj_begin(&w);
	str(&w, "command", diag_meta_get(meta, "command"));
	str(&w, "hostname", diag_meta_get(meta, "hostname"));
	str(&w, "driver", diag_meta_get(meta, "driver"));
	const char *cuda = diag_meta_get(meta, "cuda_driver_version");
	str(&w, "cuda", cuda ? cuda : diag_meta_get(meta, "cuda"));
	num(&w, "duration_s", tl->duration);
	start_wall(&w, tl);
	integer(&w, "samples", tl->n);
	jsonw_key(&w, "exit_status");
	if (tl->exit_status >= 0)
		jsonw_int(&w, tl->exit_status);
	else
		jsonw_null(&w);
	boolean(&w, "watched_command", tl->have_root);
	jsonw_key(&w, "env");
	jsonw_obj_begin(&w);
	for (int i = 0; meta && i < meta->n; i++)
		if (!strncmp(meta->kv[i].key, "env.", 4))
			str(&w, meta->kv[i].key + 4, meta->kv[i].value);
	jsonw_obj_end(&w);
	jsonw_obj_end(&w);

	jsonw_key(&w, "window");
	jsonw_obj_begin(&w);
	num(&w, "from_s", r->t_from);
	num(&w, "to_s", r->t_to);
	integer(&w, "samples", r->to - r->from);
	jsonw_obj_end(&w);

	jsonw_key(&w, "steps");
	steps(&w, &r->steps);

	jsonw_key(&w, "findings");
	jsonw_arr_begin(&w);
	for (int i = 0; i < r->n; i++)
		finding(&w, tl, &r->f[i]);
	jsonw_arr_end(&w);

	jsonw_key(&w, "gpus");
	jsonw_arr_begin(&w);
	for (int g = 0; g < r->ngpu; g++) {
		const diag_gpu_summary *s = &r->gpu[g];
		jsonw_obj_begin(&w);
		integer(&w, "index", s->index);
		str(&w, "uuid", tl->gpu[g].uuid);
		str(&w, "name", tl->gpu[g].name);
		/* null, not "", where the recording predates the vendor column */
		str(&w, "vendor", tl->gpu[g].vendor[0] ? tl->gpu[g].vendor : NULL);
		boolean(&w, "job", s->job);
		num(&w, "util_mean", s->util_mean);
		num(&w, "util_p10", s->util_p10);
		num(&w, "util_p90", s->util_p90);
		num(&w, "idle_pct", s->idle_pct);
		num(&w, "sm_active_mean", s->sm_active_mean);
		num(&w, "dram_active_mean", s->dram_active_mean);
		num(&w, "mem_peak_mib", s->mem_peak_mib);
		num(&w, "mem_total_mib", s->mem_total_mib);
		num(&w, "mem_peak_pct", s->mem_peak_pct);
		num(&w, "power_mean_w", s->power_mean);
		num(&w, "power_limit_w", s->power_limit);
		num(&w, "temp_max_c", s->temp_max);
		str(&w, "quadrant", diag_quadrant_name(s->quadrant));
		str(&w, "quadrant_meaning", diag_quadrant_meaning(s->quadrant));
		jsonw_obj_end(&w);
	}
	jsonw_arr_end(&w);

	jsonw_key(&w, "chain");
	jsonw_arr_begin(&w);
	static const char *const status[] = {"ok", "problem", "n/a"};
	for (int i = 0; i < DIAG_CHAIN_STEPS; i++) {
		const diag_chain_step *s = &r->chain[i];
		jsonw_obj_begin(&w);
		integer(&w, "step", s->no);
		str(&w, "question", s->question);
		str(&w, "status", status[s->status]);
		str(&w, "answer", s->answer);
		jsonw_key(&w, "findings");
		jsonw_arr_begin(&w);
		for (int k = 0; k < s->nfindings; k++)
			jsonw_str(&w, s->findings[k]);
		jsonw_arr_end(&w);
		jsonw_obj_end(&w);
	}
	jsonw_arr_end(&w);
	jsonw_obj_end(&w);
}

static void diff(jsonw *w, const char *k, const diag_diff *d)
{
	jsonw_key(w, k);
	jsonw_obj_begin(w);
	num(w, "base_s", d->base);
	num(w, "candidate_s", d->cand);
	num(w, "diff_s", d->diff);
	num(w, "ci95_low_s", d->lo);
	num(w, "ci95_high_s", d->hi);
	jsonw_obj_end(w);
}

static void summary(jsonw *w, const char *k, const diag_run_summary *s)
{
	jsonw_key(w, k);
	jsonw_obj_begin(w);
	num(w, "duration_s", s->duration);
	jsonw_key(w, "window");
	jsonw_obj_begin(w);
	num(w, "from_s", s->t_from);
	num(w, "to_s", s->t_to);
	jsonw_obj_end(w);
	jsonw_key(w, "steps");
	steps(w, &s->steps);
	num(w, "util_mean", s->util_mean);
	num(w, "sm_active_mean", s->sm_active_mean);
	num(w, "mem_peak_mib", s->mem_peak_mib);
	num(w, "power_mean_w", s->power_mean);
	integer(w, "job_gpus", s->njob);
	jsonw_obj_end(w);
}

/* What loaded the host during one run: the other processes, busiest first. */
static void host_load(jsonw *w, const char *k, const diag_host_load *l)
{
	jsonw_key(w, k);
	jsonw_obj_begin(w);
	boolean(w, "loaded", l->loaded);
	num(w, "other_processes_cpu_pct", l->others_cpu);
	num(w, "host_cpu_busy_pct", l->host_busy);
	num(w, "spare_cores", l->spare_cores);
	num(w, "step_excess_pct", l->excess_pct);
	jsonw_key(w, "busiest_other_processes");
	jsonw_arr_begin(w);
	for (int i = 0; i < l->nhogs; i++) {
		jsonw_obj_begin(w);
		integer(w, "pid", l->hog[i].pid);
		str(w, "command", l->hog[i].cmd);
		num(w, "cpu_pct", l->hog[i].cpu);
		jsonw_obj_end(w);
	}
	jsonw_arr_end(w);
	jsonw_obj_end(w);
}

/* One run of the step comparison: its steps, mean, blocks and drift. */
static void run_noise(jsonw *w, const diag_run_noise *r)
{
	jsonw_obj_begin(w);
	integer(w, "steps", r->n);
	num(w, "mean_s", r->mean);
	integer(w, "block", r->block);
	integer(w, "period", r->period);
	num(w, "mean_se_s", sqrt(r->var_mean));
	num(w, "drift_pct", r->drift_pct);
	num(w, "drift_se_pct", r->drift_se_pct);
	jsonw_obj_end(w);
}

/* Which run a caveat is about: {"side": "base", "run": 1} or null. */
static void which_run(jsonw *w, const char *k, int side, int run)
{
	jsonw_key(w, k);
	if (side < 0) {
		jsonw_null(w);
		return;
	}
	jsonw_obj_begin(w);
	str(w, "side", side ? "candidate" : "base");
	integer(w, "run", run + 1);
	jsonw_obj_end(w);
}

/* The one comparison of mean step times: method, interval, runs, caveats. */
static void step_cmp(jsonw *w, const diag_step_cmp *s)
{
	static const char *const method[] = {"none", "within-runs", "between-runs"};
	jsonw_key(w, "step_comparison");
	jsonw_obj_begin(w);
	str(w, "method", method[s->method]);
	num(w, "diff_s", s->diff);
	num(w, "lo_s", s->lo);
	num(w, "hi_s", s->hi);
	num(w, "diff_pct", s->diff_pct);
	num(w, "lo_pct", s->lo_pct);
	num(w, "hi_pct", s->hi_pct);
	num(w, "se_s", s->se);
	num(w, "df", isinf(s->df) ? NAN : s->df);
	num(w, "timer_quantum_s", s->quantum);
	boolean(w, "significant", s->significant);
	for (int side = 0; side < 2; side++) {
		jsonw_key(w, side ? "candidate_runs" : "base_runs");
		jsonw_arr_begin(w);
		for (int i = 0; i < s->nruns[side]; i++)
			run_noise(w, &s->run[side][i]);
		jsonw_arr_end(w);
	}
	which_run(w, "drift_caveat", s->drift_side, s->drift_run);
	which_run(w, "outlier_run", s->outlier_side, s->outlier_run);
	jsonw_obj_end(w);
}

static void files(jsonw *w, const char *k, const char *const *f, int n)
{
	jsonw_key(w, k);
	jsonw_arr_begin(w);
	for (int i = 0; i < n; i++)
		jsonw_str(w, f[i]);
	jsonw_arr_end(w);
}

/* Windows without step times: the busy share's comparison (null when not made). */
static void busy_side(jsonw *w, const char *k, const diag_busy_side *s)
{
	jsonw_key(w, k);
	jsonw_obj_begin(w);
	num(w, "mean_pct", s->mean);
	num(w, "se_pct", sqrt(s->var));
	jsonw_key(w, "samples");
	jsonw_int(w, s->samples);
	jsonw_key(w, "block");
	jsonw_int(w, s->block);
	num(w, "gpu_hours", s->gpu_hours);
	num(w, "not_busy_gpu_hours", s->not_busy_h);
	jsonw_obj_end(w);
}

static void busy_cmp(jsonw *w, const diag_busy_cmp *b)
{
	jsonw_key(w, "busy_share");
	if (b->verdict == DIAG_BUSY_NONE) {
		jsonw_null(w);
		return;
	}
	jsonw_obj_begin(w);
	str(w, "verdict", diag_busy_verdict_id(b->verdict));
	str(w, "judged_by", "busy-share-block-bootstrap-ci95");
	num(w, "diff_points", b->diff);
	num(w, "ci95_lo", b->lo);
	num(w, "ci95_hi", b->hi);
	num(w, "df", isfinite(b->df) ? b->df : NAN);
	num(w, "min_meaningful_diff_points", b->min_pp);
	busy_side(w, "base", &b->side[0]);
	busy_side(w, "candidate", &b->side[1]);
	jsonw_key(w, "findings_gpu_hours");
	jsonw_arr_begin(w);
	for (int i = 0; i < b->nrules; i++) {
		jsonw_obj_begin(w);
		str(w, "rule", b->rule[i].id);
		num(w, "base", b->rule[i].h[0]);
		num(w, "candidate", b->rule[i].h[1]);
		jsonw_obj_end(w);
	}
	jsonw_arr_end(w);
	jsonw_obj_end(w);
}

void compare_json(FILE *out, const diag_comparison *c, const char *const *base, int nbase,
                  const char *const *cand, int ncand)
{
	jsonw w;
	jsonw_init(&w, out, true);
	jsonw_obj_begin(&w);
	integer(&w, "compare_version", 3);
	str(&w, "base", base[0]);
	str(&w, "candidate", cand[0]);
	files(&w, "base_files", base, nbase);
	files(&w, "candidate_files", cand, ncand);
	str(&w, "verdict",
	    c->untimed                                              ? "not-compared"
	    : c->verdict < 0                                        ? "faster"
	    : c->verdict > 0                                        ? "slower"
	    : c->by_steps && !c->withheld_by_load && !c->equivalent ? "inconclusive"
	                                                            : "no-difference");
	str(&w, "judged_by", c->by_steps ? "step-time-mean-ci95" : c->untimed ? NULL : "run-time");
	num(&w, "min_meaningful_diff_pct", c->min_diff_pct);
	num(&w, "step_mean_diff_pct", c->diff_pct);
	boolean(&w, "below_min_meaningful_diff", c->below_min_diff);
	boolean(&w, "within_min_meaningful_diff", c->by_steps && c->equivalent);
	boolean(&w, "confounded", c->confounded);
	num(&w, "host_interference_pct", c->interference_pct);
	boolean(&w, "withheld_by_host_load", c->withheld_by_load);
	boolean(&w, "host_interference_against", c->interference_against);
	boolean(&w, "steps_bursty", c->steps_bursty);
	str(&w, "median_verdict",
	    !c->by_steps         ? NULL
	    : c->p50_verdict < 0 ? "faster"
	    : c->p50_verdict > 0 ? "slower"
	                         : "no-difference");
	step_cmp(&w, &c->steps);
	busy_cmp(&w, &c->busy);
	jsonw_key(&w, "bootstrap");
	jsonw_obj_begin(&w);
	integer(&w, "resamples", DIAG_BOOTSTRAP_RESAMPLES);
	integer(&w, "seed", (long long)(DIAG_BOOTSTRAP_SEED & 0x7fffffffffffffffULL));
	jsonw_key(&w, "blocks");
	jsonw_str(&w, "circular, each run's own length");
	jsonw_obj_end(&w);
	diff(&w, "step_mean", &c->mean);
	diff(&w, "step_p50", &c->p50);
	diff(&w, "step_p90", &c->p90);
	diff(&w, "step_p99", &c->p99);
	summary(&w, "base_run", &c->base);
	summary(&w, "candidate_run", &c->cand);
	jsonw_key(&w, "host_load");
	jsonw_obj_begin(&w);
	host_load(&w, "base", &c->load_base);
	host_load(&w, "candidate", &c->load_cand);
	jsonw_obj_end(&w);
	jsonw_key(&w, "changes");
	jsonw_arr_begin(&w);
	for (int i = 0; i < c->nchanges; i++) {
		jsonw_obj_begin(&w);
		str(&w, "what", c->changes[i].what);
		str(&w, "base", c->changes[i].base);
		str(&w, "candidate", c->changes[i].cand);
		jsonw_obj_end(&w);
	}
	jsonw_arr_end(&w);
	boolean(&w, "more_than_one_change", c->nchanges > 1);
	jsonw_key(&w, "findings_gone");
	jsonw_arr_begin(&w);
	for (int i = 0; i < c->nfixed; i++)
		jsonw_str(&w, c->fixed[i]);
	jsonw_arr_end(&w);
	jsonw_key(&w, "findings_new");
	jsonw_arr_begin(&w);
	for (int i = 0; i < c->nappeared; i++)
		jsonw_str(&w, c->appeared[i]);
	jsonw_arr_end(&w);
	jsonw_obj_end(&w);
}
