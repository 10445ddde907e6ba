/*
 * results_render.c - a sweep's results as a text table, as JSON, and as one
 * self-contained HTML page (the report's style sheet and palette) with SVG
 * bar charts of throughput and memory per configuration.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "report/report.h"
#include "sweep/memfit.h"
#include "sweep/plan.h"
#include "sweep/results.h"
#include "sweep/state.h"
#include "util/i18n.h"
#include "util/textwidth.h"
#include "util/jsonw.h"

static const char *num(double v, int dec, char *b, size_t n)
{
	return report_num(v, dec, b, n);
}

static const char *verdict_text(const sweep_result *r, char *b, size_t n)
{
	if (isnan(r->diff)) {
		snprintf(b, n, "-");
	} else {
		/* TRANSLATORS: the step-time difference to the baseline, as "+1.2 ms slower". */
		snprintf(b, n, _("%+.1f ms %s"), r->diff * 1000,
		         r->verdict < 0   ? _("faster")
		         : r->verdict > 0 ? _("slower")
		         : r->equivalent  ? _("no change")
		                          : _("inconclusive"));
	}
	return b;
}

/* s padded with blanks to width display columns (a CJK character takes two),
 * on the right (left) or the left; a wider s is never cut. */
static void put_col(FILE *o, const char *s, int width, bool left)
{
	int pad = gw_text_pad(s, width);
	fprintf(o, "%*s%s%*s", left ? 0 : pad, "", s, left ? pad : 0, "");
}

/* One line of the table: the columns of the header and the rows. */
enum { TEXT_COLS = 14 };
static void text_line(FILE *o, const char *const v[TEXT_COLS])
{
	static const int width[TEXT_COLS] = {32, 11, 14, 7, 7, 8, 9, 5, 5, 8, 6, 5, 18, 0};
	static const bool left[TEXT_COLS] = {true,  true,  true,  false, false, false, false,
	                                     false, false, false, false, false, true,  true};
	for (int i = 0; i < TEXT_COLS; i++) {
		if (i)
			fputs(i == TEXT_COLS - 2 ? "  " : " ", o);
		put_col(o, v[i], width[i], left[i]);
	}
	fputc('\n', o);
}

static void text_row(FILE *o, const sweep_results *R, int i)
{
	const sweep_result *r = &R->res[i];
	char m[48], p50[16], p90[16], sps[16], smp[16], u[16], sm[16], mem[16], pw[16], core[16],
	    vs[48];
	if (r->ok)
		snprintf(m, sizeof m, "%.1f±%s", r->mean * 1000,
		         num(r->ci_half * 1000, 1, (char[16]){0}, 16));
	else
		snprintf(m, sizeof m, "-");
	const char *const v[TEXT_COLS] = {R->pl->c[i].name,
	                                  r->nrep ? _(r->oom ? "oom" : sweep_status_name(r->status))
	                                          : _("not run"),
	                                  m,
	                                  num(r->p50 * 1000, 1, p50, sizeof p50),
	                                  num(r->p90 * 1000, 1, p90, sizeof p90),
	                                  num(r->steps_s, 2, sps, sizeof sps),
	                                  num(r->samples_s, 0, smp, sizeof smp),
	                                  num(r->util, 0, u, sizeof u),
	                                  num(r->sm, 0, sm, sizeof sm),
	                                  num(r->mem_peak, 0, mem, sizeof mem),
	                                  num(r->power, 0, pw, sizeof pw),
	                                  num(r->core_max, 0, core, sizeof core),
	                                  i == 0 ? _("baseline") : verdict_text(r, vs, sizeof vs),
	                                  r->finding_id[0] ? r->finding_id : (r->ok ? "-" : "")};
	text_line(o, v);
}

static void text_memory(FILE *o, const sweep_results *R)
{
	if (R->search_var >= 0) {
		const char *name = R->sp->vars[R->search_var].name;
		if (R->search_good < 0)
			fprintf(o, _("search %s: even %lld did not run\n"), name,
			        R->sp->vars[R->search_var].lo);
		else if (R->search_bad < 0)
			fprintf(o, _("search %s: every value up to %lld ran (the upper bound)\n"),
			        name, R->search_good);
		else
			fprintf(o, _("search %s: largest that runs %lld (%lld failed)\n"), name,
			        R->search_good, R->search_bad);
		if (R->search_best >= 0)
			fprintf(o, _("search %s: best throughput at %s\n"), name,
			        R->pl->c[R->search_best].name);
	}
	if (!R->have_fit)
		return;
	const sweep_memfit *f = &R->fit;
	char lo[24], hi[24];
	fprintf(o, _("memory model: peak = %.0f MiB + %.2f MiB x %s (%d points, R² %.4f)\n"),
	        f->fixed, f->per_item, R->sp->batch_var, f->n, f->r2);
	fprintf(o,
	        _("  fits with %.0f %% headroom up to %s %.0f (95 %% %s..%s); out of memory from "
	          "about %.0f of %.0f MiB\n"),
	        f->headroom * 100, R->sp->batch_var, floor(f->max_batch),
	        num(f->max_batch_lo, 0, lo, sizeof lo), num(f->max_batch_hi, 0, hi, sizeof hi),
	        floor(f->boundary), f->total_mib);
	if (R->fit_check >= 0)
		fprintf(o,
		        R->fit_check
		            ? _("  agrees with the search (%lld ran, %lld ran out of memory)\n")
		            : _("  DISAGREES with the search (%lld ran, %lld ran out of "
		                "memory)\n"),
		        R->search_good, R->search_bad);
}

void sweep_render_text(FILE *o, const sweep_results *R)
{
	int nrun = 0;
	for (int i = 0; i < R->pl->n; i++)
		nrun += R->res[i].nrep > 0;
	char what[96], host[96];
	snprintf(what, sizeof what, P_("%d configuration", "%d configurations", nrun), nrun);
	snprintf(host, sizeof host, P_("%d repeat", "%d repeats", R->sp->repeat), R->sp->repeat);
	/* TRANSLATORS: "gpuwhy sweep: DIR  (3 configurations, 1 repeat; host 16 cores, ". */
	fputc('\n', o);
	fprintf(o, _("gpuwhy sweep: %s  (%s, %s; host %d cores, "), R->st->dir, what, host,
	        R->st->ncpu);
	if (isnan(R->st->free_cores))
		fputs(_("free cores n/a)\n\n"), o);
	else
		fprintf(o, _("%.1f free at the start)\n\n"), R->st->free_cores);
	const char *const head[TEXT_COLS] = {_("CONFIG"),
	                                     _("STATUS"),
	                                     _("STEP ms ±95%"),
	                                     "p50",
	                                     "p90",
	                                     "steps/s",
	                                     "samples/s",
	                                     "GPU%",
	                                     "SM%",
	                                     _("MEM MiB"),
	                                     _("POW W"),
	                                     "CORE%",
	                                     _("VS BASELINE"),
	                                     _("TOP FINDING")};
	text_line(o, head);
	for (int i = 0; i < R->pl->n; i++)
		if (R->res[i].nrep > 0)
			text_row(o, R, i);
	fputc('\n', o);
	if (R->best >= 0) {
		double b = sweep_result_thr(R, R->best), base = sweep_result_thr(R, 0);
		bool steps = isnan(R->res[R->best].samples_s);
		const char *name = R->pl->c[R->best].name;
		if (R->res[0].ok && R->best != 0)
			fprintf(o,
			        steps ? _("best: %s (%.2f steps/s, x%.2f the baseline)\n")
			              : _("best: %s (%.2f samples/s, x%.2f the baseline)\n"),
			        name, b, b / base);
		else
			fprintf(o,
			        steps ? _("best: %s (%.2f steps/s)\n")
			              : _("best: %s (%.2f samples/s)\n"),
			        name, b);
	}
	for (int v = 0; v < R->sp->nvars; v++) {
		const sweep_var_result *vr = &R->vr[v];
		if (vr->n >= 2 && vr->gaining)
			fprintf(o, _("knee %s: none up to %s (still gaining)\n"),
			        R->sp->vars[v].name, R->pl->c[vr->cfg[vr->knee]].val[v]);
		else if (vr->n >= 2 && vr->knee >= 0)
			fprintf(o, _("knee %s: %s\n"), R->sp->vars[v].name,
			        R->pl->c[vr->cfg[vr->knee]].val[v]);
	}
	for (int v = 0; v < R->sp->nvars; v++)
		fprintf(o, _("why  %s\n"), R->vr[v].why_text);
	text_memory(o, R);
}

/* ---- JSON ---- */

static void json_num_or_null(jsonw *w, const char *k, double v)
{
	jsonw_key(w, k);
	jsonw_num(w, v);
}

static void json_config(jsonw *w, const sweep_results *R, int i)
{
	const sweep_config *c = &R->pl->c[i];
	const sweep_result *r = &R->res[i];
	jsonw_obj_begin(w);
	jsonw_key(w, "name");
	jsonw_str(w, c->name);
	jsonw_key(w, "values");
	jsonw_obj_begin(w);
	for (int v = 0; v < R->sp->nvars; v++) {
		jsonw_key(w, R->sp->vars[v].name);
		jsonw_str(w, c->val[v]);
	}
	jsonw_obj_end(w);
	jsonw_key(w, "status");
	jsonw_str(w, r->nrep ? (r->oom ? "oom" : sweep_status_name(r->status)) : "not_run");
	jsonw_key(w, "exit_code");
	if (r->exit_code >= 0)
		jsonw_int(w, r->exit_code);
	else
		jsonw_null(w);
	jsonw_key(w, "repeats");
	jsonw_int(w, r->nrep);
	jsonw_key(w, "repeats_ok");
	jsonw_int(w, r->nrep_ok);
	jsonw_key(w, "steps_timed");
	jsonw_int(w, r->nsteps);
	json_num_or_null(w, "step_mean_s", r->mean);
	json_num_or_null(w, "step_mean_ci95_s", r->ci_half);
	jsonw_key(w, "ci_over");
	jsonw_str(w, !r->ok ? NULL : r->ci_over_repeats ? "repeats" : "steps");
	json_num_or_null(w, "step_p50_s", r->p50);
	json_num_or_null(w, "step_p90_s", r->p90);
	json_num_or_null(w, "steps_per_s", r->steps_s);
	json_num_or_null(w, "samples_per_s", r->samples_s);
	json_num_or_null(w, "gpu_util_pct", r->util);
	json_num_or_null(w, "sm_active_pct", r->sm);
	json_num_or_null(w, "mem_peak_mib", r->mem_peak);
	json_num_or_null(w, "power_w", r->power);
	json_num_or_null(w, "host_busiest_core_pct", r->core_max);
	json_num_or_null(w, "host_busy_pct", r->host_busy);
	json_num_or_null(w, "job_cores", r->tree_cores);
	jsonw_key(w, "top_finding");
	jsonw_str(w, r->finding_id[0] ? r->finding_id : NULL);
	jsonw_key(w, "top_finding_title");
	jsonw_str(w, r->finding[0] ? r->finding : NULL);
	jsonw_key(w, "vs_baseline");
	jsonw_obj_begin(w);
	json_num_or_null(w, "mean_diff_s", r->diff);
	json_num_or_null(w, "ci95_lo_s", r->diff_lo);
	json_num_or_null(w, "ci95_hi_s", r->diff_hi);
	jsonw_key(w, "verdict");
	jsonw_str(w, i == 0           ? "baseline"
	             : isnan(r->diff) ? NULL
	             : r->verdict < 0 ? "faster"
	             : r->verdict > 0 ? "slower"
	             : r->equivalent  ? "no meaningful change"
	                              : "inconclusive");
	jsonw_obj_end(w);
	jsonw_obj_end(w);
}

static void json_memory(jsonw *w, const sweep_results *R)
{
	jsonw_key(w, "search");
	if (R->search_var < 0) {
		jsonw_null(w);
	} else {
		jsonw_obj_begin(w);
		jsonw_key(w, "variable");
		jsonw_str(w, R->sp->vars[R->search_var].name);
		jsonw_key(w, "largest_ok");
		if (R->search_good >= 0)
			jsonw_int(w, R->search_good);
		else
			jsonw_null(w);
		jsonw_key(w, "smallest_failed");
		if (R->search_bad >= 0)
			jsonw_int(w, R->search_bad);
		else
			jsonw_null(w);
		jsonw_key(w, "resolution");
		jsonw_int(w, R->search_step);
		jsonw_key(w, "best_throughput");
		jsonw_str(w, R->search_best >= 0 ? R->pl->c[R->search_best].name : NULL);
		jsonw_obj_end(w);
	}
	jsonw_key(w, "memory_model");
	if (!R->have_fit) {
		jsonw_null(w);
		return;
	}
	const sweep_memfit *f = &R->fit;
	jsonw_obj_begin(w);
	jsonw_key(w, "variable");
	jsonw_str(w, R->sp->batch_var);
	jsonw_key(w, "points");
	jsonw_int(w, f->n);
	json_num_or_null(w, "fixed_mib", f->fixed);
	json_num_or_null(w, "per_item_mib", f->per_item);
	json_num_or_null(w, "fixed_se_mib", f->se_fixed);
	json_num_or_null(w, "per_item_se_mib", f->se_per_item);
	json_num_or_null(w, "r2", f->r2);
	json_num_or_null(w, "usable_mib", f->total_mib);
	json_num_or_null(w, "headroom", f->headroom);
	json_num_or_null(w, "max_batch", floor(f->max_batch));
	json_num_or_null(w, "max_batch_ci95_lo", f->max_batch_lo);
	json_num_or_null(w, "max_batch_ci95_hi", f->max_batch_hi);
	json_num_or_null(w, "oom_boundary", f->boundary);
	json_num_or_null(w, "oom_boundary_ci95_lo", f->boundary_lo);
	json_num_or_null(w, "oom_boundary_ci95_hi", f->boundary_hi);
	jsonw_key(w, "agrees_with_search");
	if (R->fit_check < 0)
		jsonw_null(w);
	else
		jsonw_bool(w, R->fit_check == 1);
	jsonw_obj_end(w);
}

void sweep_render_json(FILE *o, const sweep_results *R)
{
	jsonw w;
	jsonw_init(&w, o, true);
	jsonw_obj_begin(&w);
	jsonw_key(&w, "dir");
	jsonw_str(&w, R->st->dir);
	jsonw_key(&w, "ncpu");
	jsonw_int(&w, R->st->ncpu);
	json_num_or_null(&w, "free_cores_at_start", R->st->free_cores);
	jsonw_key(&w, "repeat");
	jsonw_int(&w, R->sp->repeat);
	jsonw_key(&w, "batch_variable");
	jsonw_str(&w, R->sp->batch_var);
	json_num_or_null(&w, "knee_share", R->knee_share);
	jsonw_key(&w, "configurations");
	jsonw_arr_begin(&w);
	for (int i = 0; i < R->pl->n; i++)
		json_config(&w, R, i);
	jsonw_arr_end(&w);
	jsonw_key(&w, "best");
	jsonw_str(&w, R->best >= 0 ? R->pl->c[R->best].name : NULL);
	jsonw_key(&w, "variables");
	jsonw_arr_begin(&w);
	for (int v = 0; v < R->sp->nvars; v++) {
		const sweep_var_result *vr = &R->vr[v];
		jsonw_obj_begin(&w);
		jsonw_key(&w, "name");
		jsonw_str(&w, R->sp->vars[v].name);
		jsonw_key(&w, "knee");
		bool knee = vr->n >= 2 && vr->knee >= 0 && !vr->gaining;
		jsonw_str(&w, knee ? R->pl->c[vr->cfg[vr->knee]].val[v] : NULL);
		jsonw_key(&w, "still_gaining");
		jsonw_bool(&w, vr->n >= 2 && vr->gaining);
		jsonw_key(&w, "best");
		jsonw_str(&w, vr->best >= 0 ? R->pl->c[vr->cfg[vr->best]].val[v] : NULL);
		jsonw_key(&w, "why");
		jsonw_str(&w, vr->why);
		jsonw_obj_end(&w);
	}
	jsonw_arr_end(&w);
	json_memory(&w, R);
	jsonw_obj_end(&w);
	fputc('\n', o);
}

/* ---- HTML ---- */

/* A bar's value as people write it: three significant digits, never an exponent
 * (1020 MiB, not 1.02e+03). */
static const char *bar_num(double v, char *buf, size_t len)
{
	double a = fabs(v);
	snprintf(buf, len, "%.*f", a >= 100 ? 0 : a >= 10 ? 1 : 2, v);
	return buf;
}

/* Horizontal bars, one per configuration that ran; value(i) NAN draws no bar. */
static void html_bars(FILE *o, const sweep_results *R, const char *title, const char *unit,
                      double (*value)(const sweep_results *R, int i), int color)
{
	double mx = 0;
	int n = 0;
	for (int i = 0; i < R->pl->n; i++) {
		double v = value(R, i);
		if (R->res[i].nrep > 0)
			n++;
		if (!isnan(v) && v > mx)
			mx = v;
	}
	if (n == 0 || mx <= 0)
		return;
	const int row = 22, left = 260, width = 900;
	fprintf(o, "<figure><figcaption>");
	report_html_escape(o, title);
	fprintf(o, "</figcaption><svg viewBox=\"0 0 %d %d\" role=\"img\">\n", width, n * row + 6);
	int y = 3;
	for (int i = 0; i < R->pl->n; i++) {
		if (R->res[i].nrep == 0)
			continue;
		double v = value(R, i);
		fprintf(o, "<text class=\"lbl\" x=\"%d\" y=\"%d\" text-anchor=\"end\">", left - 6,
		        y + 15);
		report_html_escape(o, R->pl->c[i].name);
		fputs("</text>", o);
		if (!isnan(v)) {
			double w = (width - left - 110) * v / mx;
			char vb[32];
			bar_num(v, vb, sizeof vb);
			fprintf(
			    o,
			    "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"%s>"
			    "<title>%s %s</title></rect>",
			    left, y + 2, w, row - 6, report_html_color(color),
			    i == R->best ? " stroke=\"#212121\" stroke-width=\"2\"" : "", vb, unit);
			fprintf(o, "<text class=\"lbl\" x=\"%.1f\" y=\"%d\">%s %s</text>",
			        left + w + 6, y + 15, vb, unit);
		} else {
			fprintf(o, "<text class=\"lbl\" x=\"%d\" y=\"%d\">%s</text>", left + 6,
			        y + 15,
			        R->res[i].oom ? _("out of memory")
			                      : _(sweep_status_name(R->res[i].status)));
		}
		fputc('\n', o);
		y += row;
	}
	fputs("</svg></figure>\n", o);
}

static double v_thr(const sweep_results *R, int i)
{
	return R->res[i].ok ? sweep_result_thr(R, i) : NAN;
}
static double v_mem(const sweep_results *R, int i)
{
	return R->res[i].mem_peak;
}
static double v_util(const sweep_results *R, int i)
{
	return R->res[i].util;
}

static void html_td(FILE *o, double v, int dec)
{
	char b[32];
	fprintf(o, "<td class=\"n\">%s</td>", num(v, dec, b, sizeof b));
}

static void html_table(FILE *o, const sweep_results *R)
{
	/* TRANSLATORS: the heads of sweep's HTML table; units and p50/p90 as they are. */
	static const char *const head[] = {
	    N_("configuration"),  N_("status"),      N_("step mean ms"), N_("±95 % ms"),
	    N_("p50 ms"),         N_("p90 ms"),      N_("steps/s"),      N_("samples/s"),
	    N_("GPU %"),          N_("SM %"),        N_("memory MiB"),   N_("power W"),
	    N_("busiest core %"), N_("vs baseline"), N_("top finding")};
	fputs("<table><tr>", o);
	for (size_t h = 0; h < sizeof head / sizeof *head; h++) {
		fputs("<th>", o);
		report_html_escape(o, _(head[h]));
		fputs("</th>", o);
	}
	fputs("</tr>\n", o);
	for (int i = 0; i < R->pl->n; i++) {
		const sweep_result *r = &R->res[i];
		if (r->nrep == 0)
			continue;
		char vs[48];
		fputs("<tr><td>", o);
		report_html_escape(o, R->pl->c[i].name);
		fprintf(o, "</td><td>%s</td>", r->oom ? _("oom") : _(sweep_status_name(r->status)));
		html_td(o, r->mean * 1000, 1);
		html_td(o, r->ci_half * 1000, 1);
		html_td(o, r->p50 * 1000, 1);
		html_td(o, r->p90 * 1000, 1);
		html_td(o, r->steps_s, 2);
		html_td(o, r->samples_s, 0);
		html_td(o, r->util, 0);
		html_td(o, r->sm, 0);
		html_td(o, r->mem_peak, 0);
		html_td(o, r->power, 0);
		html_td(o, r->core_max, 0);
		fprintf(o, "<td>%s</td><td>",
		        i == 0 ? _("baseline") : verdict_text(r, vs, sizeof vs));
		/* The title in the language in force; results.json keeps the English. */
		report_html_escape(o, r->finding_local[0] ? r->finding_local : r->finding);
		fputs("</td></tr>\n", o);
	}
	fputs("</table>\n", o);
}

void sweep_render_html(FILE *o, const sweep_results *R)
{
	/* The page's language is the messages' ("zh_CN" -> "zh-CN"), as the report's. */
	char lang[16];
	snprintf(lang, sizeof lang, "%s", gw_i18n_lang());
	for (char *p = lang; *p; p++)
		if (*p == '_')
			*p = '-';
	fprintf(o,
	        "<!DOCTYPE html>\n<html lang=\"%s\"><head><meta charset=\"utf-8\">"
	        "<title>gpuwhy sweep</title><style>%s</style></head><body>\n",
	        lang, report_html_css());
	fputs("<h1>", o);
	report_html_escape(o, _("gpuwhy sweep:"));
	fputc(' ', o);
	report_html_escape(o, R->st->dir);
	fprintf(o, "</h1>\n<p>%s <code>", _("Command:"));
	for (int i = 0; i < R->sp->ncmd; i++) {
		report_html_escape(o, R->sp->cmd[i]);
		fputc(' ', o);
	}
	fprintf(o, "</code></p>\n<h2>%s</h2>\n", _("Configurations"));
	html_table(o, R);
	html_bars(o, R,
	          R->sp->batch_var ? _("Throughput (samples/s; steps/s where no batch)")
	                           : _("Throughput (steps/s)"),
	          "/s", v_thr, 0);
	html_bars(o, R, _("GPU utilization (mean %)"), "%", v_util, 2);
	html_bars(o, R, _("GPU memory peak (MiB)"), "MiB", v_mem, 1);
	fprintf(o, "<h2>%s</h2>\n<ul>\n", _("Why"));
	if (R->best >= 0) {
		fprintf(o, "<li><b>%s</b> ", _("best:"));
		report_html_escape(o, R->pl->c[R->best].name);
		fputs("</li>\n", o);
	}
	for (int v = 0; v < R->sp->nvars; v++) {
		fputs("<li>", o);
		report_html_escape(o, R->vr[v].why_text);
		fputs("</li>\n", o);
	}
	fputs("</ul>\n", o);
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (m) {
		text_memory(m, R);
		fclose(m);
		if (len) {
			fprintf(o, "<h2>%s</h2>\n<pre>", _("Memory"));
			report_html_escape(o, buf);
			fputs("</pre>\n", o);
		}
		free(buf);
	}
	fputs("</body></html>\n", o);
}
