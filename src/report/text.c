/*
 * text.c - the terminal report: a header, the findings (most severe first)
 * with evidence and advice, each GPU's quadrant, then the seven-step chain
 * with sparklines. Colour only when asked (a TTY without NO_COLOR).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "util/termsafe.h"

#define WRAP 100
#define SPARK_W 48
#define MIB (1024.0 * 1024.0)

typedef struct {
	FILE *out;
	const report_style *st;
} tx;

static const char *col(const tx *t, const char *code)
{
	return t->st->color ? code : "";
}
#define RESET(t) col(t, "\033[0m")
#define BOLD(t) col(t, "\033[1m")
#define DIM(t) col(t, "\033[2m")

static const char *sev_color(const tx *t, diag_severity s)
{
	return col(t, s == DIAG_ERROR  ? "\033[1;31m"
	              : s == DIAG_WARN ? "\033[1;33m"
	                               : "\033[1;36m");
}

/* Print text wrapped at WRAP columns; continuation lines start with `indent` spaces. */
static void wrap_safe(FILE *out, int first_col, int indent, const char *text);

/* Findings quote the recording (commands, process names): escaped for the terminal first. */
static void wrap(FILE *out, int first_col, int indent, const char *text)
{
	size_t len = GW_TERM_SAFE_LEN(strlen(text));
	char *safe = malloc(len);
	if (!safe)
		return;
	wrap_safe(out, first_col, indent, gw_term_safe(text, safe, len));
	free(safe);
}

static void wrap_safe(FILE *out, int first_col, int indent, const char *text)
{
	int colno = first_col;
	const char *p = text;
	while (*p) {
		while (*p == ' ')
			p++;
		const char *e = p;
		while (*e && *e != ' ')
			e++;
		/* A bracketed threshold stays on one line. */
		if (*p == '[') {
			const char *close = strchr(p, ']');
			if (close && close - p < 40)
				e = close + 1;
		}
		/* Keep a number with its unit: "45 %" never breaks. */
		while (e[0] == ' ' && e[1] == '%') {
			e += 2;
			while (*e && *e != ' ')
				e++;
		}
		int wl = 0; /* display width: count UTF-8 lead bytes only */
		for (const char *q = p; q < e; q++)
			wl += ((unsigned char)*q & 0xC0) != 0x80;
		if (colno > indent && colno + 1 + wl > WRAP) {
			fprintf(out, "\n%*s", indent, "");
			colno = indent;
		} else if (colno > indent) {
			fputc(' ', out);
			colno++;
		}
		fwrite(p, 1, (size_t)(e - p), out);
		colno += wl;
		p = e;
	}
	fputc('\n', out);
}

static void fmt_value(double v, const char *unit, char *buf, size_t len)
{
	if (isnan(v)) {
		snprintf(buf, len, "n/a");
		return;
	}
	int dec = fabs(v) >= 100 || v == floor(v) ? 0 : fabs(v) >= 10 ? 1 : 2;
	snprintf(buf, len, "%.*f%s%s", dec, v, unit[0] ? " " : "", unit);
}

static void print_header(const tx *t, const timeline *tl, const diag_meta *meta,
                         const diag_result *r)
{
	FILE *o = t->out;
	fprintf(o, "%sgpuwhy report%s: %s\n", BOLD(t), RESET(t),
	        t->st->source ? t->st->source : "");
	/* A recording may come from anyone: what it says is escaped for the terminal. */
	char safe[GW_TERM_SAFE_LEN(1024)], hs[GW_TERM_SAFE_LEN(256)], ds[GW_TERM_SAFE_LEN(64)],
	    cs[GW_TERM_SAFE_LEN(64)];
	const char *cmd = diag_meta_get(meta, "command");
	if (cmd && *cmd)
		fprintf(o, "  command   %s\n", gw_term_safe(cmd, safe, sizeof safe));
	const char *host = diag_meta_get(meta, "hostname"), *drv = diag_meta_get(meta, "driver");
	const char *cuda = diag_meta_get(meta, "cuda_driver_version");
	if (!cuda)
		cuda = diag_meta_get(meta, "cuda");
	fprintf(o, "  machine   %s, driver %s, CUDA %s, ",
	        gw_term_safe(host && *host ? host : "n/a", hs, sizeof hs),
	        gw_term_safe(drv && *drv ? drv : "n/a", ds, sizeof ds),
	        gw_term_safe(cuda && *cuda ? cuda : "n/a", cs, sizeof cs));
	if (tl->ngpu == 0)
		fprintf(o, "no GPU recorded\n");
	else
		fprintf(o, "%d GPU%s (%s)\n", tl->ngpu, tl->ngpu == 1 ? "" : "s",
		        gw_term_safe(tl->gpu[0].name, safe, sizeof safe));
	fprintf(o, "  recorded  %.1f s, %d samples", tl->duration, tl->n);
	if (tl->exit_status >= 0)
		fprintf(o, ", exit %d", tl->exit_status);
	fprintf(o, "; analysed %.1f-%.1f s; goal %s\n", r->t_from, r->t_to,
	        diag_goal_name(r->goal));
	if (r->steps.n > 0 && r->steps.bursty)
		fprintf(
		    o,
		    "  steps     %d, arriving in bursts (buffered output): not timed; mean %.0f ms "
		    "over the run (%.2f steps/s)\n",
		    tl->nsteps, 1e3 * r->steps.mean, r->steps.per_s);
	else if (r->steps.n > 0)
		fprintf(o,
		        "  steps     %d; p50 %.0f ms  p90 %.0f ms  p99 %.0f ms  (%.2f steps/s)\n",
		        tl->nsteps, 1e3 * r->steps.p50, 1e3 * r->steps.p90, 1e3 * r->steps.p99,
		        r->steps.per_s);
	fputc('\n', o);
}

static void print_finding(const tx *t, const timeline *tl, const diag_finding *f)
{
	FILE *o = t->out;
	static const char *const tag[] = {"INFO ", "WARN ", "ERROR"};
	char gl[128] = "";
	size_t n = 0;
	for (int g = 0; g < tl->ngpu && g < 64 && n < sizeof gl; g++)
		if (f->gpus & (1ULL << g))
			n += (size_t)snprintf(gl + n, sizeof gl - n, "%s%d", n ? "," : "GPU ",
			                      tl->gpu[g].index);
	fprintf(o, "  %s%s%s %s%s%s  (confidence %.2f)%s%s\n", sev_color(t, f->severity),
	        tag[f->severity], RESET(t), BOLD(t), f->id, RESET(t), f->confidence,
	        gl[0] ? "  " : "", gl);
	fprintf(o, "        ");
	wrap(o, 8, 8, f->title);
	for (int i = 0; i < f->nev; i++) {
		const diag_evidence *e = &f->ev[i];
		char v[32], line[200], th[48] = "", who[16] = "";
		fmt_value(e->value, e->unit, v, sizeof v);
		int met = diag_evidence_met(e);
		if (met >= 0) {
			char tv[32];
			fmt_value(e->threshold, e->unit, tv, sizeof tv);
			snprintf(th, sizeof th, "  [%s %s: %s]", e->cmp, tv, met ? "yes" : "no");
		}
		if (e->gpu >= 0 && e->gpu < tl->ngpu)
			snprintf(who, sizeof who, "GPU %d ", tl->gpu[e->gpu].index);
		snprintf(line, sizeof line, "%s%s, %s: %s%s", who, e->metric, e->stat, v, th);
		fprintf(o, "        %s%-9s%s ", DIM(t), i ? "" : "evidence", RESET(t));
		wrap(o, 18, 20, line);
	}
	if (f->nranges) {
		char when[400];
		size_t w = 0;
		for (int i = 0; i < f->nranges && w < sizeof when; i++)
			w +=
			    f->ranges[i].t0 == f->ranges[i].t1
			        ? (size_t)snprintf(when + w, sizeof when - w, "%sat %.1f s",
			                           i ? ", " : "", f->ranges[i].t0)
			        : (size_t)snprintf(when + w, sizeof when - w, "%s%.1f-%.1f s",
			                           i ? ", " : "", f->ranges[i].t0, f->ranges[i].t1);
		fprintf(o, "        %swhen%s      ", DIM(t), RESET(t));
		wrap(o, 18, 18, when);
	}
	if (f->note[0]) {
		fprintf(o, "        %snote%s      ", DIM(t), RESET(t));
		wrap(o, 18, 18, f->note);
	}
	if (f->advice) {
		fprintf(o, "        %schange%s    ", DIM(t), RESET(t));
		wrap(o, 18, 18, f->advice);
	}
	if (f->verify) {
		fprintf(o, "        %sverify%s    ", DIM(t), RESET(t));
		wrap(o, 18, 18, f->verify);
	}
	fputc('\n', o);
}

static void print_findings(const tx *t, const timeline *tl, const diag_result *r)
{
	int ne = 0, nw = 0;
	for (int i = 0; i < r->n; i++) {
		ne += r->f[i].severity == DIAG_ERROR;
		nw += r->f[i].severity == DIAG_WARN;
	}
	fprintf(t->out, "%sFindings%s: %d error%s, %d warning%s\n\n", BOLD(t), RESET(t), ne,
	        ne == 1 ? "" : "s", nw, nw == 1 ? "" : "s");
	for (int i = 0; i < r->n; i++)
		print_finding(t, tl, &r->f[i]);
}

static void print_gpus(const tx *t, const timeline *tl, const diag_result *r)
{
	if (r->ngpu == 0)
		return;
	FILE *o = t->out;
	fprintf(o, "%sGPUs%s: utilization x memory\n", BOLD(t), RESET(t));
	char sp[SPARK_W * 4 + 1], a[16], b[16], c[16], d[16];
	for (int g = 0; g < r->ngpu; g++) {
		const diag_gpu_summary *s = &r->gpu[g];
		const double *u = tl->gpu[g].m[GM_UTIL_GPU];
		if (!u)
			u = tl->gpu[g].m[GM_GPM_GR_ACTIVE];
		report_sparkline(u, r->from, r->to, 0, 100, 32, t->st->utf8, sp, sizeof sp);
		fprintf(o, "  GPU %-2d %s |%s| util %s %%  mem peak %s of %s GiB (%s %%)\n",
		        s->index, s->job ? "job  " : "other", sp,
		        report_num(s->util_mean, 0, a, sizeof a),
		        report_num(s->mem_peak_mib / 1024, 1, b, sizeof b),
		        report_num(s->mem_total_mib / 1024, 1, c, sizeof c),
		        report_num(s->mem_peak_pct, 0, d, sizeof d));
		char q[320];
		snprintf(q, sizeof q, "%s: %s", diag_quadrant_name(s->quadrant),
		         diag_quadrant_meaning(s->quadrant));
		fprintf(o, "         ");
		wrap(o, 9, 11, q);
	}
	fputc('\n', o);
}

/* Sparklines that show a step's answer. */
static void step_sparks(const tx *t, const timeline *tl, const diag_result *r, int no)
{
	FILE *o = t->out;
	char sp[SPARK_W * 4 + 1];
	bool u8 = t->st->utf8;
	if (no == 2 || no == 5) {
		int shown = 0;
		for (int g = 0; g < r->ngpu && shown < 4; g++) {
			if (!r->gpu[g].job)
				continue;
			const double *x;
			double hi = 100;
			const char *what;
			if (no == 2) {
				x = tl->gpu[g].m[GM_UTIL_GPU] ? tl->gpu[g].m[GM_UTIL_GPU]
				                              : tl->gpu[g].m[GM_GPM_GR_ACTIVE];
				what = "util ";
			} else {
				x = tl->gpu[g].m[GM_POWER_DRAW];
				hi = r->gpu[g].power_limit > 0 ? r->gpu[g].power_limit
				                               : tl_max(x, r->from, r->to);
				what = "power";
			}
			if (!x)
				continue;
			report_sparkline(x, r->from, r->to, 0, hi, SPARK_W, u8, sp, sizeof sp);
			fprintf(o, "      %sGPU %-2d %s%s |%s|\n", DIM(t), r->gpu[g].index, what,
			        RESET(t), sp);
			shown++;
		}
	} else if (no == 3 && tl->h[HM_CPU_BUSY_MAX]) {
		report_sparkline(tl->h[HM_CPU_BUSY_MAX], r->from, r->to, 0, 100, SPARK_W, u8, sp,
		                 sizeof sp);
		fprintf(o, "      %sbusiest core%s |%s|\n", DIM(t), RESET(t), sp);
	} else if (no == 4 && tl->h[HM_CPU_IOWAIT]) {
		report_sparkline(tl->h[HM_CPU_IOWAIT], r->from, r->to, 0, 100, SPARK_W, u8, sp,
		                 sizeof sp);
		fprintf(o, "      %siowait      %s |%s|\n", DIM(t), RESET(t), sp);
	}
}

static void print_chain(const tx *t, const timeline *tl, const diag_result *r)
{
	FILE *o = t->out;
	fprintf(o, "%sThe seven-step chain%s\n", BOLD(t), RESET(t));
	for (int i = 0; i < DIAG_CHAIN_STEPS; i++) {
		const diag_chain_step *s = &r->chain[i];
		const char *mark, *c;
		if (s->status == DIAG_STEP_OK) {
			mark = t->st->utf8 ? "\u2713" : "ok";
			c = col(t, "\033[32m");
		} else if (s->status == DIAG_STEP_PROBLEM) {
			mark = t->st->utf8 ? "\u2717" : "!!";
			c = col(t, "\033[1;31m");
		} else {
			mark = t->st->utf8 ? "\u2013" : "--";
			c = DIM(t);
		}
		fprintf(o, "  %d %s%-2s%s %s\n", s->no, c, mark, RESET(t), s->question);
		fprintf(o, "      ");
		wrap(o, 6, 6, s->answer);
		step_sparks(t, tl, r, s->no);
		if (s->nfindings) {
			fprintf(o, "      %s->%s", DIM(t), RESET(t));
			for (int k = 0; k < s->nfindings; k++)
				fprintf(o, " %s", s->findings[k]);
			fputc('\n', o);
		}
	}
}

void report_text(FILE *out, const timeline *tl, const diag_meta *meta, const diag_result *r,
                 const report_style *st)
{
	tx t = {out, st};
	print_header(&t, tl, meta, r);
	print_findings(&t, tl, r);
	print_gpus(&t, tl, r);
	print_chain(&t, tl, r);
}

/* ---- compare ---- */

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
	fprintf(t->out, "  %-22s %12s %12s  %s %s\n", what, x, y, d, unit);
}

static void cmp_ci_row(const tx *t, const char *what, const diag_diff *d)
{
	char a[32], b[32], ci[64] = "";
	report_num(1e3 * d->base, 1, a, sizeof a);
	report_num(1e3 * d->cand, 1, b, sizeof b);
	if (!isnan(d->lo))
		snprintf(ci, sizeof ci, "%+.1f ms [95 %% CI %+.1f, %+.1f]", 1e3 * d->diff,
		         1e3 * d->lo, 1e3 * d->hi);
	else if (!isnan(d->diff))
		snprintf(ci, sizeof ci, "%+.1f ms", 1e3 * d->diff);
	const char *c = "";
	if (!isnan(d->lo) && d->hi < 0)
		c = col(t, "\033[32m");
	else if (!isnan(d->lo) && d->lo > 0)
		c = col(t, "\033[31m");
	fprintf(t->out, "  %-22s %12s %12s  %s%s%s\n", what, a, b, c, ci, c[0] ? RESET(t) : "");
}

void compare_text(FILE *out, const diag_comparison *c, const char *base, const char *cand,
                  const report_style *st)
{
	tx t = {out, st};
	fprintf(out, "%sgpuwhy compare%s: %s -> %s\n\n", BOLD(&t), RESET(&t), base, cand);
	const char *verdict;
	if (c->verdict < 0)
		verdict = "The candidate is FASTER";
	else if (c->verdict > 0)
		verdict = "The candidate is SLOWER";
	else if (c->below_min_diff)
		verdict = "No meaningful change";
	else
		verdict = "No significant difference";
	fprintf(out, "%s%s%s", BOLD(&t), verdict, RESET(&t));
	if (c->by_steps)
		fprintf(out,
		        " (mean step time %+.1f ms = %+.2f %%, 95 %% CI %+.1f to %+.1f ms; %d "
		        "bootstrap resamples)\n",
		        1e3 * c->mean.diff, c->diff_pct, 1e3 * c->mean.lo, 1e3 * c->mean.hi,
		        DIAG_BOOTSTRAP_RESAMPLES);
	else if (c->steps_bursty)
		fprintf(out,
		        " (step lines came in bursts, so step times were not compared: judged by "
		        "run time, %.1f s -> %.1f s, without a confidence interval)\n",
		        c->base.duration, c->cand.duration);
	else
		fprintf(out,
		        " (no step times on both sides: judged by run time, %.1f s -> %.1f s, "
		        "without a confidence interval)\n",
		        c->base.duration, c->cand.duration);
	if (c->by_steps)
		fprintf(
		    out,
		    "Changes of the mean step time under %.1f %% count as none (minimum meaningful "
		    "difference: --set compare_min_diff_pct=N, the step timer's resolution, or how "
		    "far each run's two halves disagree)%s\n",
		    c->min_diff_pct,
		    c->below_min_diff ? "; this one is significant but smaller" : "");
	if (c->by_steps && c->p50_verdict != c->verdict && c->p50_verdict != 0)
		fprintf(out,
		        "The median step got %s (p50 %+.1f ms) but the tail moved the other way "
		        "(p90 %+.1f ms, p99 %+.1f ms).\n",
		        c->p50_verdict < 0 ? "faster" : "slower", 1e3 * c->p50.diff,
		        1e3 * c->p90.diff, 1e3 * c->p99.diff);
	fputc('\n', out);

	fprintf(out, "  %-22s %12s %12s  %s\n", "", "base", "candidate", "difference");
	cmp_ci_row(&t, "step time mean (ms)", &c->mean);
	cmp_ci_row(&t, "step time p50 (ms)", &c->p50);
	cmp_ci_row(&t, "step time p90 (ms)", &c->p90);
	cmp_ci_row(&t, "step time p99 (ms)", &c->p99);
	cmp_row(&t, "throughput", c->base.steps.per_s, c->cand.steps.per_s, "steps/s", 2, 1, false);
	cmp_row(&t, "step intervals timed", c->base.steps.n, c->cand.steps.n, "", 0, 1, false);
	cmp_row(&t, "run time", c->base.duration, c->cand.duration, "s", 1, 1, true);
	fprintf(out, "  %-22s %5.1f-%-6.1f %5.1f-%-6.1f\n", "analysed window (s)", c->base.t_from,
	        c->base.t_to, c->cand.t_from, c->cand.t_to);
	cmp_row(&t, "GPU utilization", c->base.util_mean, c->cand.util_mean, "%", 1, 1, false);
	cmp_row(&t, "SM activity", c->base.sm_active_mean, c->cand.sm_active_mean, "%", 1, 1,
	        false);
	cmp_row(&t, "memory peak", c->base.mem_peak_mib, c->cand.mem_peak_mib, "GiB", 2, 1 / 1024.0,
	        true);
	cmp_row(&t, "power (mean per GPU)", c->base.power_mean, c->cand.power_mean, "W", 0, 1,
	        true);
	fputc('\n', out);

	if (c->nfixed || c->nappeared) {
		fprintf(out, "%sFindings%s\n", BOLD(&t), RESET(&t));
		for (int i = 0; i < c->nfixed; i++)
			fprintf(out, "  gone:  %s\n", c->fixed[i]);
		for (int i = 0; i < c->nappeared; i++)
			fprintf(out, "  new:   %s\n", c->appeared[i]);
		fputc('\n', out);
	}
	fprintf(out, "%sWhat changed%s\n", BOLD(&t), RESET(&t));
	if (!c->nchanges)
		fprintf(out,
		        "  nothing recorded differs (command, environment, GPUs, driver, host)\n");
	for (int i = 0; i < c->nchanges; i++) {
		char w[GW_TERM_SAFE_LEN(128)], b[GW_TERM_SAFE_LEN(256)], a[GW_TERM_SAFE_LEN(256)];
		fprintf(out, "  %-32s %s -> %s\n", gw_term_safe(c->changes[i].what, w, sizeof w),
		        gw_term_safe(c->changes[i].base, b, sizeof b),
		        gw_term_safe(c->changes[i].cand, a, sizeof a));
	}
	if (c->nchanges > 1)
		fprintf(out,
		        "\n%sWarning%s: %d things changed at once; the difference cannot be "
		        "attributed to any one of them. Change one thing per comparison.\n",
		        col(&t, "\033[1;33m"), RESET(&t), c->nchanges);
}
