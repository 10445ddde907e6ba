/*
 * fleet_html.c - the fleet report as one self-contained HTML page: GPU-hours
 * per state, the worst groups, the findings ranked by GPU-hours lost with
 * their PromQL, and a heat map of every GPU (rows, by node) against time,
 * coloured by state. Inline CSS and SVG only: no script, no font, no network.
 *
 * The heat map stays small for a large fleet: at most FLEET_HEAT_COLS
 * columns (each the state most of its samples had) and, per node and state,
 * one SVG path of horizontal runs in a frame where a column is 1 unit wide
 * and a row 1 unit high ("M<col> <row>.5h<length>"), so its size follows the
 * number of state changes, not of samples.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fleet/fleet.h"
#include "report/report.h"
#include "util/i18n.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define HM_W 1000.0 /* heat map viewBox width */
#define HM_LW 110.0 /* its label column */
#define HM_TOP 18.0 /* room for the time axis */
#define HTML_GROUPS 25
#define HTML_FINDINGS 200

/* Colours of the states, FS__COUNT + 1 (no data last). */
static const char *const state_color[FS__COUNT + 1] = {
    [FS_LOST] = "#b71c1c",   [FS_THROTTLED] = "#ef6c00",    [FS_POWER_CAPPED] = "#fbc02d",
    [FS_BUSY] = "#43a047",   [FS_IDLE_HOLDING] = "#8e24aa", [FS_IDLE_EMPTY] = "#9e9e9e",
    [FS_NODATA] = "#f3f3f3",
};

static const char fleet_css[] = ".hm{border:1px solid #e0e0e0}.hm text{font-size:10px;fill:#424242}"
                                ".hm .sep{stroke:#fff;stroke-width:.6}"
                                ".sw.st{height:10px;border:0;width:14px}"
                                "td.pq{font-family:monospace;font-size:12px;word-break:break-all}";

static void iso(double t, char *out, size_t len)
{
	time_t s = (time_t)floor(t);
	struct tm tm;
	gmtime_r(&s, &tm);
	strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void head(FILE *o, const prom_fleet *fl, const fleet_report *r)
{
	char lang[16], a[32], b[32];
	snprintf(lang, sizeof lang, "%s", gw_i18n_lang());
	for (char *p = lang; *p; p++)
		if (*p == '_')
			*p = '-';
	iso(fl->from, a, sizeof a);
	iso(fl->to, b, sizeof b);
	fprintf(o,
	        "<!DOCTYPE html>\n<html lang=\"%s\">\n<head>\n<meta charset=\"utf-8\">\n"
	        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	        "<title>gpuwhy fleet %s .. %s</title>\n<style>%s%s</style>\n</head>\n<body>\n",
	        lang, a, b, report_html_css(), fleet_css);
	fprintf(o, "<h1>");
	fprintf(o, _("gpuwhy fleet: %d nodes, %d GPUs, %s .. %s (%.1f h) at %g s\n\n"), fl->nnodes,
	        r->ngpus, a, b, (fl->to - fl->from) / 3600, fl->step);
	fprintf(o, "</h1>\n");
}

static void swatch(FILE *o, fleet_state s)
{
	fprintf(o, "<span class=\"sw st\" style=\"background:%s\"></span>", state_color[s]);
}

static void hours_table(FILE *o, const fleet_report *r)
{
	double all = r->total.nodata_h;
	for (int s = 0; s < FS__COUNT; s++)
		all += r->total.h[s];
	fprintf(o, "<h2>%s</h2>\n<table class=\"hours\">\n", _("GPU-hours by state, fleet-wide:"));
	for (int s = 0; s <= FS__COUNT; s++) {
		double v = s == FS_NODATA ? r->total.nodata_h : r->total.h[s];
		if (s == FS_NODATA && v <= 0)
			continue;
		fprintf(o, "<tr id=\"h-%s\"><td>", fleet_state_id((fleet_state)s));
		swatch(o, (fleet_state)s);
		report_html_escape(o, _(fleet_state_label((fleet_state)s)));
		fprintf(o, "</td><td class=\"n\">%.1f</td><td class=\"n\">%.1f %%</td></tr>\n", v,
		        all > 0 ? 100 * v / all : 0.0);
	}
	fprintf(o, "</table>\n");
}

static void groups_table(FILE *o, const fleet_opts *opt, const fleet_report *r)
{
	fprintf(o, "<h2>");
	fprintf(o, _("By %s, most GPU-hours not busy first:\n"), fleet_by_id(opt->by));
	fprintf(o, "</h2>\n<table class=\"groups\">\n<tr><th></th>");
	for (int s = 0; s < FS__COUNT; s++) {
		fprintf(o, "<th>");
		swatch(o, (fleet_state)s);
		report_html_escape(o, _(fleet_state_label((fleet_state)s)));
		fprintf(o, "</th>");
	}
	fprintf(o, "<th>%s</th></tr>\n", _("not busy"));
	int n = r->ngroups < HTML_GROUPS ? r->ngroups : HTML_GROUPS;
	for (int i = 0; i < n; i++) {
		const fleet_group *g = &r->group[i];
		fprintf(o, "<tr><td>");
		report_html_escape(o, g->name);
		fprintf(o, "</td>");
		for (int s = 0; s < FS__COUNT; s++)
			fprintf(o, "<td class=\"n\">%.1f</td>", g->hours.h[s]);
		fprintf(o, "<td class=\"n\">%.1f</td></tr>\n", fleet_hours_lost(&g->hours));
	}
	fprintf(o, "</table>\n");
	if (r->ngroups > n) {
		fprintf(o, "<p class=\"legend\">");
		fprintf(o,
		        P_("%d more group in --format json or csv.",
		           "%d more groups in --format json or csv.", r->ngroups - n),
		        r->ngroups - n);
		fprintf(o, "</p>\n");
	}
}

static void gpu_list(const prom_node *nd, uint64_t mask, char *out, size_t len)
{
	out[0] = 0;
	for (int g = 0; g < nd->tl->ngpu; g++)
		if (mask >> g & 1) {
			size_t l = strlen(out);
			snprintf(out + l, len - l, "%s%d", l ? "," : "", nd->gpus[g].gpu);
		}
}

static void finding_row(FILE *o, const prom_fleet *fl, const fleet_finding *x, int i)
{
	const prom_node *nd = &fl->node[x->node];
	char gpus[200], a[32], b[32];
	gpu_list(nd, x->gpus, gpus, sizeof gpus);
	iso(x->t0, a, sizeof a);
	iso(x->t1, b, sizeof b);
	fprintf(o, "<tr class=\"f-%s\"><td class=\"n\">%d</td><td>",
	        diag_severity_name(x->severity), i + 1);
	report_html_escape(o, nd->host);
	fprintf(o, "</td><td>%s</td><td>", gpus);
	report_html_escape(o, x->job);
	fprintf(o, "</td><td><b>%s</b> <span class=\"sev\">%s</span><br>", diag_rule_id(x->rule),
	        diag_severity_name(x->severity));
	report_html_escape(o, x->title);
	if (isfinite(x->power_w) && isfinite(x->limit_w)) {
		fprintf(o, "<br>");
		fprintf(o, _("power %.0f W against its %.0f W limit (%.0f %%)\n"), x->power_w,
		        x->limit_w, 100 * x->power_w / x->limit_w);
	}
	fprintf(o, "</td><td class=\"n\">%.1f</td><td class=\"n\">%s<br>%s</td><td class=\"pq\">",
	        x->lost_h, a, b);
	report_html_escape(o, x->promql);
	for (int k = 0; k < x->nhost_promql; k++) {
		fprintf(o, "<br>");
		report_html_escape(o, x->host_promql[k]);
	}
	fprintf(o, "</td></tr>\n");
}

static void findings_table(FILE *o, const prom_fleet *fl, const fleet_report *r)
{
	fprintf(o, "<h2>%s</h2>\n", _("Findings, most GPU-hours lost first:"));
	if (!r->nf) {
		fprintf(o, "<p>%s</p>\n", _("none"));
		return;
	}
	fprintf(o,
	        "<table class=\"findings\">\n<tr><th></th><th>%s</th><th>GPU</th><th>%s</th>"
	        "<th>%s</th><th>%s</th><th>%s</th><th>PromQL</th></tr>\n",
	        _("node"), _("job"), _("finding"), _("GPU-h lost"), _("time (UTC)"));
	int n = r->nf < HTML_FINDINGS ? r->nf : HTML_FINDINGS;
	for (int i = 0; i < n; i++)
		finding_row(o, fl, &r->f[i], i);
	fprintf(o, "</table>\n");
	if (r->nf > n) {
		fprintf(o, "<p class=\"legend\">");
		fprintf(o,
		        P_("%d more finding in --format json.",
		           "%d more findings in --format json.", r->nf - n),
		        r->nf - n);
		fprintf(o, "</p>\n");
	}
	fprintf(o, "<p class=\"legend\">%s</p>\n",
	        _("Paste a finding's PromQL into Grafana's explore view over its time, at the "
	          "report's step."));
}

/* What gpuwhy exporters found themselves (their gpuwhy_finding series), where scraped. */
static void own_table(FILE *o, const prom_fleet *fl)
{
	if (!fl->nown)
		return;
	fprintf(o, "<h2>%s</h2>\n", _("Found by gpuwhy exporter itself (gpuwhy_finding):"));
	fprintf(o,
	        "<table class=\"own\">\n<tr><th>%s</th><th>GPU</th><th>%s</th><th>%s</th>"
	        "<th>%s</th></tr>\n",
	        _("node"), _("finding"), _("time (UTC)"), _("samples"));
	int n = fl->nown < HTML_FINDINGS ? fl->nown : HTML_FINDINGS;
	for (int i = 0; i < n; i++) {
		const prom_own_finding *x = &fl->own[i];
		char a[32], b[32];
		iso(x->t0, a, sizeof a);
		iso(x->t1, b, sizeof b);
		fprintf(o, "<tr class=\"own\"><td>");
		report_html_escape(o, fl->node[x->node].host);
		fprintf(o, "</td><td>%d</td><td><b>", x->gpu);
		report_html_escape(o, x->rule);
		fprintf(o, "</b> <span class=\"sev\">");
		report_html_escape(o, x->severity);
		fprintf(o,
		        "</span></td><td class=\"n\">%s<br>%s</td><td class=\"n\">%d</td></tr>\n",
		        a, b, x->samples);
	}
	fprintf(o, "</table>\n");
	if (fl->nown > n) {
		fprintf(o, "<p class=\"legend\">");
		fprintf(o,
		        P_("%d more finding in --format json.",
		           "%d more findings in --format json.", fl->nown - n),
		        fl->nown - n);
		fprintf(o, "</p>\n");
	}
}

/* A tick interval (seconds) that puts at most 8 ticks on span. */
static double tick_step(double span)
{
	static const double steps[] = {60,    300,   900,   1800,   3600,   7200,   10800,
	                               21600, 43200, 86400, 172800, 604800, 2592000};
	for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
		if (span / steps[i] <= 8)
			return steps[i];
	return span / 8;
}

static void heat_axis(FILE *o, const prom_fleet *fl, double plot_h)
{
	double span = fl->to - fl->from, dt = tick_step(span), pw = HM_W - HM_LW;
	for (double t = ceil(fl->from / dt) * dt; t <= fl->to; t += dt) {
		double x = HM_LW + pw * (t - fl->from) / span;
		time_t s = (time_t)t;
		struct tm tm;
		gmtime_r(&s, &tm);
		char lbl[32];
		strftime(lbl, sizeof lbl, dt >= 86400 ? "%m-%d" : "%H:%M", &tm);
		fprintf(o,
		        "<line class=\"grid\" x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.1f\"/>"
		        "<text x=\"%.1f\" y=\"12\" text-anchor=\"middle\">%s</text>\n",
		        x, HM_TOP - 4, x, HM_TOP + plot_h, x, lbl);
	}
}

/* One node's rows: per state, a path of runs of equal cells. */
static void heat_node(FILE *o, const prom_fleet *fl, const fleet_report *r, int k, int row0,
                      int ncol, int per, fleet_state *cells, gw_strbuf *d)
{
	const prom_node *nd = &fl->node[k];
	int ng = nd->tl->ngpu;
	for (int g = 0; g < ng; g++)
		for (int c = 0; c < ncol; c++)
			cells[g * ncol + c] =
			    fleet_heat_cell(r, fl->n, k, g, c * per, (c + 1) * per);
	fprintf(o, "<g class=\"node\" data-node=\"");
	report_html_escape(o, nd->host);
	fprintf(o, "\" data-row=\"%d\"><title>", row0);
	report_html_escape(o, nd->host);
	fprintf(o, ": GPU %d-%d</title>\n", ng ? nd->gpus[0].gpu : 0,
	        ng ? nd->gpus[ng - 1].gpu : 0);
	for (int s = 0; s < FS__COUNT; s++) {
		gw_sb_clear(d);
		for (int g = 0; g < ng; g++)
			for (int c = 0; c < ncol;) {
				int e = c;
				while (e < ncol && cells[g * ncol + e] == (fleet_state)s)
					e++;
				if (e > c)
					gw_sb_printf(d, "M%d %d.5h%d", c, row0 + g, e - c);
				c = e > c ? e : c + 1;
			}
		if (d->len)
			fprintf(o, "<path class=\"s-%s\" stroke=\"%s\" d=\"%s\"/>\n",
			        fleet_state_id((fleet_state)s), state_color[s], gw_sb_str(d));
	}
	fprintf(o, "</g>\n");
}

static void heat_legend(FILE *o, int per, double step)
{
	fprintf(o, "<p class=\"legend\">");
	for (int s = 0; s <= FS__COUNT; s++) {
		swatch(o, (fleet_state)s);
		report_html_escape(o, _(fleet_state_label((fleet_state)s)));
		fputc(' ', o);
	}
	fprintf(o, "<br>");
	fprintf(o,
	        _("One row per GPU, grouped by node; one column per %g s (%d samples): the state "
	          "most of its samples had."),
	        per * step, per);
	fprintf(o, "</p>\n");
}

static void heat_map(FILE *o, const prom_fleet *fl, const fleet_report *r)
{
	int per, ncol = fleet_heat_cols(fl->n, &per), rows = r->ngpus;
	fprintf(o, "<h2>%s</h2>\n", _("Every GPU against time"));
	if (!ncol || !rows)
		return;
	/* Rows 1 to 12 units high: a 1,000-GPU fleet fits about one screen height. */
	double rh = fmin(12, fmax(1, 900.0 / rows)), pw = HM_W - HM_LW, plot_h = rh * rows;
	fprintf(o,
	        "<figure><svg class=\"hm\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
	        "data-cols=\"%d\" data-rows=\"%d\" data-per=\"%d\">\n",
	        HM_W, HM_TOP + plot_h + 2, ncol, rows, per);
	heat_axis(o, fl, plot_h);
	fprintf(o, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.1f\" fill=\"%s\"/>\n",
	        HM_LW, HM_TOP, pw, plot_h, state_color[FS_NODATA]);
	/* Column c spans [c, c + 1), row i [i, i + 1): paths stay short integers. */
	fprintf(o,
	        "<g transform=\"translate(%.0f %.0f) scale(%.6f %.4f)\" fill=\"none\" "
	        "stroke-width=\"1\" shape-rendering=\"crispEdges\">\n",
	        HM_LW, HM_TOP, pw / ncol, rh);
	fleet_state *cells = gw_xcalloc((size_t)GPU_MAX * ncol, sizeof *cells);
	gw_strbuf d = {0};
	int row = 0;
	for (int k = 0; k < fl->nnodes; k++) {
		heat_node(o, fl, r, k, row, ncol, per, cells, &d);
		row += fl->node[k].tl->ngpu;
	}
	gw_sb_free(&d);
	free(cells);
	fprintf(o, "</g>\n");
	/* Node names where there is room for them (10 units apart), a line between nodes. */
	double last = -1e9;
	row = 0;
	for (int k = 0; k < fl->nnodes; k++) {
		double y = HM_TOP + row * rh;
		if (k && rh * fl->node[k].tl->ngpu >= 3)
			fprintf(
			    o,
			    "<line class=\"sep\" x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\"/>",
			    HM_LW, y, HM_W, y);
		if (y - last >= 10) {
			fprintf(o, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">", HM_LW - 4,
			        y + fmin(10, rh * fl->node[k].tl->ngpu));
			report_html_escape(o, fl->node[k].host);
			fprintf(o, "</text>\n");
			last = y;
		}
		row += fl->node[k].tl->ngpu;
	}
	fprintf(o, "</svg></figure>\n");
	heat_legend(o, per, fl->step);
}

static void missing(FILE *o, const prom_fleet *fl, const fleet_report *r)
{
	bool head_done = false;
	for (int m = 0; m < PF__COUNT; m++)
		if (!fl->have[m]) {
			if (!head_done)
				fprintf(o, "<h2>%s</h2>\n<ul>\n",
				        _("Not in Prometheus (the rules that need them were not "
				          "checked):"));
			head_done = true;
			fprintf(o, "<li><code>");
			report_html_escape(o, fl->expr[m]);
			fprintf(o, "</code></li>\n");
		}
	const char *hn[PROM_HOST_QUERIES], *hw[PROM_HOST_QUERIES];
	int nh = fleet_host_absent(fl, hn, hw, PROM_HOST_QUERIES);
	for (int i = 0; i < nh; i++) {
		if (!head_done)
			fprintf(o, "<h2>%s</h2>\n<ul>\n",
			        _("Not in Prometheus (the rules that need them were not "
			          "checked):"));
		head_done = true;
		fprintf(o, "<li><code>%s</code>: ", hn[i]);
		report_html_escape(o, _(hw[i]));
		fprintf(o, "</li>\n");
	}
	if (head_done)
		fprintf(o, "</ul>\n");
	for (int i = 0; i < r->nnot_checked; i++) {
		fprintf(o, "<p class=\"na\">");
		report_html_escape(o, r->not_checked[i]);
		fprintf(o, "</p>\n");
	}
	if (r->not_checked_more) {
		fprintf(o, "<p class=\"na\">");
		fprintf(o,
		        P_("... and %d more such note (another node or rule), left out.\n",
		           "... and %d more such notes (other nodes or rules), left out.\n",
		           r->not_checked_more),
		        r->not_checked_more);
		fprintf(o, "</p>\n");
	}
	if (fl->gpus_dropped) {
		fprintf(o, "<p>");
		fprintf(o, _("%d GPUs beyond %d on one node were left out.\n"), fl->gpus_dropped,
		        GPU_MAX);
		fprintf(o, "</p>\n");
	}
}

void fleet_render_html(const prom_fleet *fl, const fleet_opts *o, const fleet_report *r, FILE *out)
{
	head(out, fl, r);
	hours_table(out, r);
	findings_table(out, fl, r);
	own_table(out, fl);
	groups_table(out, o, r);
	heat_map(out, fl, r);
	missing(out, fl, r);
	fputs("<p class=\"legend\">", out);
	fprintf(out, _("Generated by gpuwhy %s."), GPUWHY_VERSION);
	fputs("</p>\n</body>\n</html>\n", out);
}
