/*
 * compare_text.c - `gpuwhy compare` on a terminal: the verdict and the
 * interval behind it, one short line per thing that qualifies it (the
 * threshold, what one run can show, a run's drift, an outlying run, the
 * host's load), the table of both sides, the findings gone and new, and
 * what changed.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "report/report.h"
#include "report/text_int.h"
#include "util/i18n.h"
#include "util/termsafe.h"
#include "util/textwidth.h"

static void cmp_row(const tx *t, const char *what, double a, double b, const char *unit, int dec,
                    double scale, bool lower_better)
{
	char x[32], y[32], d[48] = "";
	if (isnan(a) && isnan(b))
		return; /* absent on both sides (no GPU, no GPM): nothing to compare */
	report_num(a * scale, dec, x, sizeof x);
	report_num(b * scale, dec, y, sizeof y);
	if (!isnan(a) && !isnan(b)) {
		double diff = (b - a) * scale;
		bool better = lower_better ? b < a : b > a;
		const char *c = diff == 0 ? "" : better ? col(t, "\033[32m") : col(t, "\033[31m");
		if (a != 0)
			snprintf(d, sizeof d, "%s%+.*f (%+.0f %%)%s", c, dec, diff,
			         100 * (b - a) / fabs(a), diff == 0 ? "" : RESET(t));
		else
			snprintf(d, sizeof d, "%s%+.*f%s", c, dec, diff, diff == 0 ? "" : RESET(t));
	}
	label(t->out, "  ", what, 22);
	fprintf(t->out, " %12s %12s  %s %s\n", x, y, d, unit);
}

static void cmp_ci_row(const tx *t, const char *what, const diag_diff *d)
{
	char a[32], b[32], ci[64] = "";
	report_num(1e3 * d->base, 1, a, sizeof a);
	report_num(1e3 * d->cand, 1, b, sizeof b);
	if (!isnan(d->lo))
		snprintf(ci, sizeof ci, _("%+.1f ms [95 %% CI %+.1f, %+.1f]"), 1e3 * d->diff,
		         1e3 * d->lo, 1e3 * d->hi);
	else if (!isnan(d->diff))
		snprintf(ci, sizeof ci, "%+.1f ms", 1e3 * d->diff);
	const char *c = "";
	if (!isnan(d->lo) && d->hi < 0)
		c = col(t, "\033[32m");
	else if (!isnan(d->lo) && d->lo > 0)
		c = col(t, "\033[31m");
	label(t->out, "  ", what, 22);
	fprintf(t->out, " %12s %12s  %s%s%s\n", a, b, c, ci, c[0] ? RESET(t) : "");
}

/* One run's load: the other processes' CPU, the busiest of them, the step excess. */
static void cmp_load_line(FILE *out, const char *run, const diag_host_load *l)
{
	char who[3 * (GW_TERM_SAFE_LEN(128) + 32)] = "";
	size_t o = 0;
	for (int i = 0; i < l->nhogs && o < sizeof who; i++) {
		char cmd[GW_TERM_SAFE_LEN(128)];
		o += (size_t)snprintf(who + o, sizeof who - o, _("%sPID %u %s (%.0f %%)"),
		                      i ? ", " : "", l->hog[i].pid,
		                      gw_term_safe(l->hog[i].cmd, cmd, sizeof cmd), l->hog[i].cpu);
	}
	label(out, "  ", run, 14);
	if (!l->loaded)
		fprintf(out, " %s\n", _("not loaded by other processes"));
	else if (!isnan(l->excess_pct))
		fprintf(out,
		        _(" other processes used %.0f %% of a core (%s); its mean step is %.1f %% "
		          "above its least disturbed steps (p10)\n"),
		        l->others_cpu, who, l->excess_pct);
	else
		fprintf(out, _(" other processes used %.0f %% of a core (%s)\n"), l->others_cpu,
		        who);
}

/* The processes named in a loaded run, for the line that withholds a claim. */
static void cmp_confounded(const tx *t, const diag_comparison *c)
{
	FILE *out = t->out;
	fprintf(out, "  %s%s%s\n", col(t, "\033[1;33m"),
	        _("load: other processes loaded the host during a run"), RESET(t));
	cmp_load_line(out, _("base:"), &c->load_base);
	cmp_load_line(out, _("candidate:"), &c->load_cand);
	if (c->interference_against)
		fprintf(
		    out, "    %s\n",
		    c->diff_pct < 0
		        ? _("only the candidate was loaded, which slows it: that cannot make it "
		            "look faster, so the change stands")
		        : _("only the base was loaded, which slows it: that cannot make the "
		            "candidate look slower, so the change stands"));
	else if (!isnan(c->interference_pct))
		fprintf(out,
		        _("    that load explains changes up to %.1f %% in this direction%s\n"),
		        c->interference_pct,
		        c->withheld_by_load ? _(": this one is not claimed; rerun on a quiet host")
		                            : "");
	else
		fprintf(out, "    %s\n",
		        _("without step times on both sides its effect cannot be bounded: rerun "
		          "both on a quiet host"));
}

static const char *verdict_words(const diag_comparison *c)
{
	if (c->verdict < 0)
		return _("The candidate is FASTER");
	if (c->verdict > 0)
		return _("The candidate is SLOWER");
	if (c->untimed)
		return _("Speed not compared");
	if (c->withheld_by_load)
		return _("No claim: the host was loaded");
	if (!c->by_steps)
		return _("No significant difference");
	/* Only an interval wholly inside the threshold says "no change"; a wide one
	 * that holds 0 holds meaningful changes too. */
	return c->equivalent ? _("No meaningful change") : _("Inconclusive");
}

/* How the interval was made: the runs, or each run's blocks. */
static void cmp_method(FILE *out, const diag_comparison *c)
{
	const diag_step_cmp *s = &c->steps;
	if (s->method == DIAG_CMP_RUNS) {
		fprintf(out,
		        _("  method: %d and %d runs, each run's mean one observation (Welch's t, "
		          "%.1f degrees of freedom)\n"),
		        s->nruns[0], s->nruns[1], s->df);
	} else {
		for (int side = 0; side < 2; side++)
			for (int i = 0; i < s->nruns[side]; i++) {
				const diag_run_noise *r = &s->run[side][i];
				char who[64];
				snprintf(who, sizeof who, s->nruns[side] > 1 ? "%s %d" : "%s",
				         side ? _("candidate") : _("base"), i + 1);
				if (r->period > 1)
					fprintf(out,
					        _("  method: %s: %d steps in blocks of %d (they "
					          "repeat every "
					          "%d steps)\n"),
					        who, r->n, r->block, r->period);
				else
					fprintf(out, _("  method: %s: %d steps in blocks of %d\n"),
					        who, r->n, r->block);
			}
		double half = (s->hi - s->lo) / 2;
		if (s->mean[0] > 0 && !isnan(half))
			fprintf(
			    out,
			    _("  one run per side measures the noise within a run, not between "
			      "runs: "
			      "it tells changes over %.1f %% from it. Repeat each side to measure "
			      "that too: gpuwhy compare A1 A2 A3 -- B1 B2 B3\n"),
			    100 * half / s->mean[0]);
	}
	if (s->quantum > 0 && s->mean[0] > 0 && 100 * s->quantum / s->mean[0] >= 0.05)
		fprintf(out,
		        _("  step timer: the interval is widened by %.2f ms for its resolution\n"),
		        1e3 * s->quantum);
}

/* The caveats: a run that drifted, a run far from its side's others. */
static void cmp_caveats(const tx *t, const diag_comparison *c)
{
	const diag_step_cmp *s = &c->steps;
	FILE *out = t->out;
	if (s->nruns[0] > 1 || s->nruns[1] > 1)
		for (int side = 0; side < 2; side++) {
			fprintf(out, "  %s",
			        side ? _("candidate runs (mean step, ms):")
			             : _("base runs (mean step, ms):"));
			for (int i = 0; i < s->nruns[side]; i++)
				fprintf(out, " %.1f", 1e3 * s->run[side][i].mean);
			fputc('\n', out);
		}
	if (s->drift_side >= 0) {
		const diag_run_noise *r = &s->run[s->drift_side][s->drift_run];
		fprintf(
		    out,
		    _("  %scaveat%s: %s run %d drifted %+.1f %% from its first half to its second "
		      "(warm-up, or a slower stretch); the verdict uses the whole run\n"),
		    col(t, "\033[1;33m"), RESET(t), s->drift_side ? _("candidate") : _("base"),
		    s->drift_run + 1, r->drift_pct);
	}
	if (s->outlier_side >= 0) {
		const diag_run_noise *r = &s->run[s->outlier_side][s->outlier_run];
		fprintf(
		    out,
		    _("  %scaveat%s: %s run %d is far from the others (%.1f ms); it is kept, and "
		      "widens the interval\n"),
		    col(t, "\033[1;33m"), RESET(t), s->outlier_side ? _("candidate") : _("base"),
		    s->outlier_run + 1, 1e3 * r->mean);
	}
}

/* Windows without step times: how busy the GPUs were on each side, with its interval. */
static void cmp_busy(const tx *t, const diag_comparison *c)
{
	const diag_busy_cmp *b = &c->busy;
	FILE *out = t->out;
	if (b->verdict == DIAG_BUSY_NONE)
		return;
	const char *w = b->verdict == DIAG_BUSY_MORE   ? _("the candidate's GPUs were BUSIER")
	                : b->verdict == DIAG_BUSY_LESS ? _("the candidate's GPUs were LESS BUSY")
	                : b->verdict == DIAG_BUSY_SAME ? _("the same busy share")
	                                               : _("inconclusive");
	fprintf(out,
	        _("GPU busy share: %s%s%s: %.1f %% -> %.1f %% (%+.1f points, 95 %% interval "
	          "%+.1f to %+.1f)\n"),
	        BOLD(t), w, RESET(t), b->side[0].mean, b->side[1].mean, b->diff, b->lo, b->hi);
	fprintf(out,
	        _("  each side's mean is judged in blocks of %d and %d samples (circular block "
	          "bootstrap, the length from the samples' own autocorrelation); changes under "
	          "%.1f points are none, and the same needs the whole interval within them "
	          "(--set compare_busy_pp=N)\n"),
	        b->side[0].block, b->side[1].block, b->min_pp);
	fprintf(out, _("  GPU-hours not busy: %.2f of %.2f -> %.2f of %.2f\n"),
	        b->side[0].not_busy_h, b->side[0].gpu_hours, b->side[1].not_busy_h,
	        b->side[1].gpu_hours);
	for (int i = 0; i < b->nrules; i++)
		fprintf(out, _("  GPU-hours under %s: %.2f -> %.2f\n"), b->rule[i].id,
		        b->rule[i].h[0], b->rule[i].h[1]);
}

static void cmp_verdict(const tx *t, const diag_comparison *c)
{
	FILE *out = t->out;
	fprintf(out, "%s%s%s", BOLD(t), verdict_words(c), RESET(t));
	if (c->by_steps)
		fprintf(
		    out,
		    _(": mean step time %+.1f ms (%+.1f %%), 95 %% interval %+.1f to %+.1f ms\n"),
		    1e3 * c->mean.diff, c->diff_pct, 1e3 * c->mean.lo, 1e3 * c->mean.hi);
	else if (c->untimed)
		fputs(_(" (no step times, and a log's or a window's length is no run time: the "
		        "utilization and findings below say what changed)\n"),
		      out);
	if (c->untimed)
		cmp_busy(t, c);
	else if (!c->by_steps && c->steps_bursty)
		fprintf(out,
		        _(" (step lines came in bursts, so step times were not compared: judged by "
		          "run time, %.1f s -> %.1f s, without a confidence interval)\n"),
		        c->base.duration, c->cand.duration);
	else if (!c->by_steps)
		fprintf(out,
		        _(" (no step times on both sides: judged by run time, %.1f s -> %.1f s, "
		          "without a confidence interval)\n"),
		        c->base.duration, c->cand.duration);
	if (c->by_steps) {
		fprintf(
		    out,
		    _("  threshold: changes under %.1f %% are none (--set compare_min_diff_pct=N; "
		      "0 leaves the interval alone)%s\n"),
		    c->min_diff_pct,
		    c->below_min_diff ? _(": this one is significant but smaller") : "");
		if (!c->verdict && !c->withheld_by_load && !c->equivalent)
			fprintf(out,
			        _("  the interval reaches past %.1f %%: it holds no change and a "
			          "meaningful one; more runs a side (compare A1 A2 A3 -- B1 B2 B3) "
			          "narrow it\n"),
			        c->min_diff_pct);
		cmp_method(out, c);
		cmp_caveats(t, c);
	}
	if (c->confounded)
		cmp_confounded(t, c);
	if (c->by_steps && c->p50_verdict != c->verdict && c->p50_verdict != 0)
		fprintf(out,
		        c->p50_verdict < 0
		            ? _("The median step got faster (p50 %+.1f ms) but the tail moved the "
		                "other way (p90 %+.1f ms, p99 %+.1f ms).\n")
		            : _("The median step got slower (p50 %+.1f ms) but the tail moved the "
		                "other way (p90 %+.1f ms, p99 %+.1f ms).\n"),
		        1e3 * c->p50.diff, 1e3 * c->p90.diff, 1e3 * c->p99.diff);
	fputc('\n', out);
}

/* The files of one side, as "a.gpuwhy" or "a1.gpuwhy a2.gpuwhy (2 runs)". */
static void cmp_files(FILE *out, const char *const *f, int n)
{
	for (int i = 0; i < n; i++)
		fprintf(out, "%s%s", i ? " " : "", f[i]);
}

void compare_text(FILE *out, const diag_comparison *c, const char *const *base, int nbase,
                  const char *const *cand, int ncand, const report_style *st)
{
	tx t = {out, st};
	fprintf(out, "%s%s%s: ", BOLD(&t), _("gpuwhy compare"), RESET(&t));
	cmp_files(out, base, nbase);
	fputs(" -> ", out);
	cmp_files(out, cand, ncand);
	fputs("\n\n", out);
	cmp_verdict(&t, c);

	char h1[64], h2[64];
	label(out, "  ", "", 22);
	fprintf(
	    out, " %s %s  %s\n", gw_text_cell(h1, sizeof h1, _("base"), 12, GW_ALIGN_RIGHT, NULL),
	    gw_text_cell(h2, sizeof h2, _("candidate"), 12, GW_ALIGN_RIGHT, NULL), _("difference"));
	cmp_ci_row(&t, _("step time mean (ms)"), &c->mean);
	cmp_ci_row(&t, _("step time p50 (ms)"), &c->p50);
	cmp_ci_row(&t, _("step time p90 (ms)"), &c->p90);
	cmp_ci_row(&t, _("step time p99 (ms)"), &c->p99);
	cmp_row(&t, _("throughput"), c->base.steps.per_s, c->cand.steps.per_s, _("steps/s"), 2, 1,
	        false);
	cmp_row(&t, _("step intervals timed"), c->base.steps.n, c->cand.steps.n, "", 0, 1, false);
	cmp_row(&t, _("run time"), c->base.duration, c->cand.duration, "s", 1, 1, true);
	label(out, "  ", _("analysed window (s)"), 22);
	fprintf(out, " %5.1f-%-6.1f %5.1f-%-6.1f\n", c->base.t_from, c->base.t_to, c->cand.t_from,
	        c->cand.t_to);
	cmp_row(&t, _("GPU utilization"), c->base.util_mean, c->cand.util_mean, "%", 1, 1, false);
	cmp_row(&t, _("SM activity"), c->base.sm_active_mean, c->cand.sm_active_mean, "%", 1, 1,
	        false);
	cmp_row(&t, _("memory peak"), c->base.mem_peak_mib, c->cand.mem_peak_mib, "GiB", 2,
	        1 / 1024.0, true);
	cmp_row(&t, _("power (mean per GPU)"), c->base.power_mean, c->cand.power_mean, "W", 0, 1,
	        true);
	fputc('\n', out);

	if (c->nfixed || c->nappeared) {
		fprintf(out, "%s%s%s\n", BOLD(&t), _("Findings"), RESET(&t));
		/* TRANSLATORS: findings of the base gone in the candidate, and new ones. */
		for (int i = 0; i < c->nfixed; i++) {
			label(out, "  ", _("gone:"), 6);
			fprintf(out, " %s\n", c->fixed[i]);
		}
		for (int i = 0; i < c->nappeared; i++) {
			label(out, "  ", _("new:"), 6);
			fprintf(out, " %s\n", c->appeared[i]);
		}
		fputc('\n', out);
	}
	fprintf(out, "%s%s%s\n", BOLD(&t), _("What changed"), RESET(&t));
	if (!c->nchanges)
		fprintf(out, "  %s\n",
		        _("nothing recorded differs (command, environment, GPUs, driver, host)"));
	for (int i = 0; i < c->nchanges; i++) {
		char w[GW_TERM_SAFE_LEN(128)], b[GW_TERM_SAFE_LEN(256)], a[GW_TERM_SAFE_LEN(256)];
		label(out, "  ", gw_term_safe(c->changes[i].what, w, sizeof w), 32);
		fprintf(out, " %s -> %s\n", gw_term_safe(c->changes[i].base, b, sizeof b),
		        gw_term_safe(c->changes[i].cand, a, sizeof a));
	}
	if (c->nchanges > 1) {
		fputc('\n', out);
		fprintf(out,
		        _("%sWarning%s: %d things changed at once; the difference cannot be "
		          "attributed to any one of them. Change one thing per comparison.\n"),
		        col(&t, "\033[1;33m"), RESET(&t), c->nchanges);
	}
}
