/*
 * text.c - the terminal report: a header, the findings (most severe first)
 * with evidence and advice, each GPU's quadrant, then the seven-step chain
 * with sparklines. Colour only when asked (a TTY without NO_COLOR).
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "report/text_int.h"
#include "util/i18n.h"
#include "util/termsafe.h"
#include "util/textwidth.h"

#define WRAP_DEFAULT 100
#define WRAP (wrap_cols())
#define SPARK_W 48
#define MIB (1024.0 * 1024.0)

static const char *sev_color(const tx *t, diag_severity s)
{
	return col(t, s == DIAG_ERROR  ? "\033[1;31m"
	              : s == DIAG_WARN ? "\033[1;33m"
	                               : "\033[1;36m");
}

/*
 * The width text is wrapped at: COLUMNS when the user sets it (the POSIX
 * convention for a terminal's width; a very large value turns wrapping off),
 * else 100.
 */
static int wrap_cols(void)
{
	static int cols;
	if (!cols) {
		const char *e = getenv("COLUMNS");
		char *end = NULL;
		long v = e && *e ? strtol(e, &end, 10) : 0;
		cols = v >= 40 && end && *end == '\0' ? (v > 1000000 ? 1000000 : (int)v)
		                                      : WRAP_DEFAULT;
	}
	return cols;
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

/* Bytes of the UTF-8 character at p (1 for a stray byte). */
static size_t char_len(const char *p)
{
	unsigned char c = (unsigned char)*p;
	size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
	for (size_t i = 1; i < n; i++)
		if (((unsigned char)p[i] & 0xC0) != 0x80)
			return i;
	return n;
}

/* Punctuation a line must not start with (closing) or end with (opening). */
static bool no_break_before(const char *c)
{
	static const char *const closing[] = {"\u3002", "\uff0c", "\u3001", "\uff1b", "\uff1a",
	                                      "\uff09", "\u201d", "\uff01", "\uff1f", "\u300b"};
	for (size_t i = 0; i < sizeof closing / sizeof *closing; i++)
		if (!strncmp(c, closing[i], strlen(closing[i])))
			return true;
	return false;
}
static bool no_break_after(const char *c)
{
	static const char *const opening[] = {"\uff08", "\u201c", "\u300a"};
	for (size_t i = 0; i < sizeof opening / sizeof *opening; i++)
		if (!strncmp(c, opening[i], strlen(opening[i])))
			return true;
	return false;
}

/*
 * Chinese puts no spaces between words: a line may break between two
 * characters where either is wide (CJK), except before closing or after
 * opening punctuation. Returns the bytes of the longest
 * start of [p, e) that fits in `cols` columns and ends at such a break, 0
 * when there is none.
 */
static size_t cjk_break(const char *p, const char *e, int cols)
{
	size_t best = 0, off = 0, prev = 0;
	int w = 0, prev_wide = 0;
	while (p + off < e) {
		size_t n = char_len(p + off);
		int cw = gw_text_width_n(p + off, n), wide = cw > 1;
		if (off && (wide || prev_wide) && !no_break_before(p + off) &&
		    !no_break_after(p + prev))
			best = off;
		if (w + cw > cols)
			break;
		w += cw;
		prev = off;
		off += n;
		prev_wide = wide;
	}
	return p + off >= e ? (size_t)(e - p) : best;
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
		int wl = gw_text_width_n(p, (size_t)(e - p));
		/* A run of CJK text too long for the line is cut between its characters. */
		while (colno + (colno > indent) + wl > WRAP) {
			int room = WRAP - colno - (colno > indent);
			/* A bracketed threshold is never cut. */
			size_t cut = room > 0 && *p != '[' ? cjk_break(p, e, room) : 0;
			if (cut == 0 && colno == indent && *p != '[')
				cut = cjk_break(p, e, WRAP - indent);
			if (cut > 0 && cut < (size_t)(e - p)) {
				if (colno > indent)
					fputc(' ', out);
				fwrite(p, 1, cut, out);
				p += cut;
				wl = gw_text_width_n(p, (size_t)(e - p));
			} else if (colno == indent) {
				break; /* one unbreakable word longer than the line */
			}
			fprintf(out, "\n%*s", indent, "");
			colno = indent;
		}
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
		snprintf(buf, len, "%s", _("n/a"));
		return;
	}
	int dec = fabs(v) >= 100 || v == floor(v) ? 0 : fabs(v) >= 10 ? 1 : 2;
	snprintf(buf, len, "%.*f%s%s", dec, v, unit[0] ? " " : "", unit);
}

static void print_header(const tx *t, const timeline *tl, const diag_meta *meta,
                         const diag_result *r)
{
	FILE *o = t->out;
	fprintf(o, "%s%s%s: %s\n", BOLD(t), _("gpuwhy report"), RESET(t),
	        t->st->source ? t->st->source : "");
	/* A recording may come from anyone: what it says is escaped for the terminal. */
	char safe[GW_TERM_SAFE_LEN(1024)], hs[GW_TERM_SAFE_LEN(256)], ds[GW_TERM_SAFE_LEN(64)],
	    cs[GW_TERM_SAFE_LEN(64)];
	const char *cmd = diag_meta_get(meta, "command");
	if (cmd && *cmd) {
		label(o, "  ", _("command"), 10);
		fprintf(o, "%s\n", gw_term_safe(cmd, safe, sizeof safe));
	}
	const char *host = diag_meta_get(meta, "hostname"), *drv = diag_meta_get(meta, "driver");
	const char *cuda = diag_meta_get(meta, "cuda_driver_version");
	if (!cuda)
		cuda = diag_meta_get(meta, "cuda");
	const char *na = _("n/a");
	label(o, "  ", _("machine"), 10);
	fprintf(o, _("%s, driver %s, CUDA %s, "),
	        gw_term_safe(host && *host ? host : na, hs, sizeof hs),
	        gw_term_safe(drv && *drv ? drv : na, ds, sizeof ds),
	        gw_term_safe(cuda && *cuda ? cuda : na, cs, sizeof cs));
	if (tl->ngpu == 0)
		fprintf(o, "%s\n", _("no GPU recorded"));
	else
		fprintf(o, P_("%d GPU (%s)\n", "%d GPUs (%s)\n", tl->ngpu), tl->ngpu,
		        gw_term_safe(tl->gpu[0].name, safe, sizeof safe));
	label(o, "  ", _("recorded"), 10);
	fprintf(o, P_("%.1f s, %d sample", "%.1f s, %d samples", tl->n), tl->duration, tl->n);
	if (tl->exit_status >= 0)
		fprintf(o, _(", exit %d"), tl->exit_status);
	fprintf(o, _("; analysed %.1f-%.1f s\n"), r->t_from, r->t_to);
	label(o, "  ", _("goal"), 10);
	fprintf(o, "%s\n", report_goal_text(r->goal));
	if (r->steps.n > 0)
		label(o, "  ", _("steps"), 10);
	if (r->steps.n > 0 && r->steps.bursty)
		fprintf(
		    o,
		    _("%d, arriving in bursts (buffered output): not timed; mean %.0f ms over the "
		      "run (%.2f steps/s)\n"),
		    tl->nsteps, 1e3 * r->steps.mean, r->steps.per_s);
	else if (r->steps.n > 0)
		fprintf(o, _("%d; p50 %.0f ms  p90 %.0f ms  p99 %.0f ms  (%.2f steps/s)\n"),
		        tl->nsteps, 1e3 * r->steps.p50, 1e3 * r->steps.p90, 1e3 * r->steps.p99,
		        r->steps.per_s);
	fputc('\n', o);
}

static void print_finding(const tx *t, const timeline *tl, const diag_finding *f)
{
	FILE *o = t->out;
	/* TRANSLATORS: severities, shown in a column of five (ASCII) columns. */
	static const char *const tag[] = {N_("INFO"), N_("WARN"), N_("ERROR")};
	char gl[128] = "";
	size_t n = 0;
	for (int g = 0; g < tl->ngpu && g < 64 && n < sizeof gl; g++)
		if (f->gpus & (1ULL << g))
			n += (size_t)snprintf(gl + n, sizeof gl - n, "%s%d", n ? "," : "GPU ",
			                      tl->gpu[g].index);
	label_c(o, "  ", sev_color(t, f->severity), _(tag[f->severity]), RESET(t), 5);
	fprintf(o, " %s%s%s  ", BOLD(t), f->id, RESET(t));
	fprintf(o, _("(confidence %.2f)"), f->confidence);
	fprintf(o, "%s%s\n", gl[0] ? "  " : "", gl);
	fprintf(o, "        ");
	wrap(o, 8, 8, f->title);
	for (int i = 0; i < f->nev; i++) {
		const diag_evidence *e = &f->ev[i];
		char v[48], line[320], th[96] = "", who[16] = "";
		const char *unit = _(e->unit); /* "points" is a word; "%", "W" stay */
		fmt_value(e->value, unit, v, sizeof v);
		int met = diag_evidence_met(e);
		if (met >= 0) {
			char tv[48];
			fmt_value(e->threshold, unit, tv, sizeof tv);
			snprintf(th, sizeof th, "  [%s %s: %s]", e->cmp, tv,
			         met ? _("yes") : _("no"));
		}
		if (e->gpu >= 0 && e->gpu < tl->ngpu)
			snprintf(who, sizeof who, "GPU %d ", tl->gpu[e->gpu].index);
		snprintf(line, sizeof line, "%s%s, %s: %s%s", who, e->metric, e->stat, v, th);
		label_c(o, "        ", DIM(t), i ? "" : _("evidence"), RESET(t), 10);
		wrap(o, 18, 20, line);
	}
	if (f->nranges) {
		char when[400];
		size_t w = 0;
		for (int i = 0; i < f->nranges && w < sizeof when; i++)
			w +=
			    f->ranges[i].t0 == f->ranges[i].t1
			        ? (size_t)snprintf(when + w, sizeof when - w, _("%sat %.1f s"),
			                           i ? ", " : "", f->ranges[i].t0)
			        : (size_t)snprintf(when + w, sizeof when - w, "%s%.1f-%.1f s",
			                           i ? ", " : "", f->ranges[i].t0, f->ranges[i].t1);
		label_c(o, "        ", DIM(t), _("when"), RESET(t), 10);
		wrap(o, 18, 18, when);
	}
	if (f->note[0]) {
		label_c(o, "        ", DIM(t), _("note"), RESET(t), 10);
		wrap(o, 18, 18, f->note);
	}
	if (f->advice) {
		label_c(o, "        ", DIM(t), _("change"), RESET(t), 10);
		wrap(o, 18, 18, f->advice);
	}
	if (f->verify) {
		label_c(o, "        ", DIM(t), _("verify"), RESET(t), 10);
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
	fprintf(t->out, "%s%s%s: ", BOLD(t), _("Findings"), RESET(t));
	fprintf(t->out, P_("%d error", "%d errors", ne), ne);
	fprintf(t->out, "%s", _(", "));
	fprintf(t->out, P_("%d warning", "%d warnings", nw), nw);
	fprintf(t->out, "\n\n");
	for (int i = 0; i < r->n; i++)
		print_finding(t, tl, &r->f[i]);
}

static void print_gpus(const tx *t, const timeline *tl, const diag_result *r)
{
	if (r->ngpu == 0)
		return;
	FILE *o = t->out;
	fprintf(o, "%s%s%s\n", BOLD(t), _("GPUs: utilization x memory"), RESET(t));
	char sp[SPARK_W * 4 + 1], a[16], b[16], c[16], d[16];
	for (int g = 0; g < r->ngpu; g++) {
		const diag_gpu_summary *s = &r->gpu[g];
		const double *u = tl->gpu[g].m[GM_UTIL_GPU];
		if (!u)
			u = tl->gpu[g].m[GM_GPM_GR_ACTIVE];
		report_sparkline(u, r->from, r->to, 0, 100, 32, t->st->utf8, sp, sizeof sp);
		fprintf(o, "  GPU %-2d ", s->index);
		/* TRANSLATORS: whose GPU: the recorded job's or another's (a column of 5). */
		label(o, "", s->job ? _("job") : _("other"), 5);
		fprintf(o, _(" |%s| util %s %%  mem peak %s of %s GiB (%s %%)\n"), sp,
		        report_num(s->util_mean, 0, a, sizeof a),
		        report_num(s->mem_peak_mib / 1024, 1, b, sizeof b),
		        report_num(s->mem_total_mib / 1024, 1, c, sizeof c),
		        report_num(s->mem_peak_pct, 0, d, sizeof d));
		char q[320];
		snprintf(q, sizeof q, "%s: %s", diag_quadrant_name(s->quadrant),
		         _(diag_quadrant_meaning(s->quadrant)));
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
				what = _("util");
			} else {
				x = tl->gpu[g].m[GM_POWER_DRAW];
				hi = r->gpu[g].power_limit > 0 ? r->gpu[g].power_limit
				                               : tl_max(x, r->from, r->to);
				what = _("power");
			}
			if (!x)
				continue;
			report_sparkline(x, r->from, r->to, 0, hi, SPARK_W, u8, sp, sizeof sp);
			fprintf(o, "      %sGPU %-2d ", DIM(t), r->gpu[g].index);
			label(o, "", what, 5);
			fprintf(o, "%s |%s|\n", RESET(t), sp);
			shown++;
		}
	} else if (no == 3 && tl->h[HM_CPU_BUSY_MAX]) {
		report_sparkline(tl->h[HM_CPU_BUSY_MAX], r->from, r->to, 0, 100, SPARK_W, u8, sp,
		                 sizeof sp);
		label_c(o, "      ", DIM(t), _("busiest core"), RESET(t), 12);
		fprintf(o, " |%s|\n", sp);
	} else if (no == 4 && tl->h[HM_CPU_IOWAIT]) {
		report_sparkline(tl->h[HM_CPU_IOWAIT], r->from, r->to, 0, 100, SPARK_W, u8, sp,
		                 sizeof sp);
		label_c(o, "      ", DIM(t), _("iowait"), RESET(t), 12);
		fprintf(o, " |%s|\n", sp);
	}
}

static void print_chain(const tx *t, const timeline *tl, const diag_result *r)
{
	FILE *o = t->out;
	fprintf(o, "%s%s%s\n", BOLD(t), _("The seven-step chain"), RESET(t));
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
