/*
 * html.c - the report as one self-contained HTML page: inline CSS, inline
 * SVG charts (utilization and SM activity, memory, power against the limit,
 * clocks with throttle bands, PCIe, host CPU and iowait, step time) with the
 * GPU's idle gaps shaded, and every finding linked to its time ranges on a
 * findings timeline. No script, no network, no external asset.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu/gpu_reasons.h"
#include "report/report.h"
#include "util/i18n.h"
#include "util/xalloc.h"

#define CW 1000 /* chart viewBox width */
#define CH 210  /* chart viewBox height */
#define ML 62   /* margins */
#define MR 12
#define MT 16
#define MB 26
#define MIB (1024.0 * 1024.0)

static const char *const palette[8] = {"#1e88e5", "#d81b60", "#43a047", "#8e24aa",
                                       "#fb8c00", "#00897b", "#6d4c41", "#3949ab"};

typedef struct {
	FILE *o;
	const timeline *tl;
	const diag_result *r;
	const report_style *st;
	double t0, t1; /* x range of every chart */
	bool *gap;     /* samples where every job GPU idled */
	bool *thr;     /* samples where a job GPU was throttled */
	bool *lost;    /* samples after a job GPU fell off the bus */
	bool any_gap, any_thr, any_lost;
	/* What the chart being drawn shows, so its legend names that and only that. */
	struct drawn {
		bool gap, thr, lost, marks;
	} * drawn;
	double idle_pct; /* utilization at or below which a sample is idle (the diagnosis's) */
	int ngpu_show;   /* job GPUs drawn (at most 8) */
	int show[8];
} hx;

typedef struct {
	double y0, y1;
} chart;

static void esc(FILE *o, const char *s);

void report_html_escape(FILE *o, const char *s)
{
	esc(o, s);
}

const char *report_html_color(int i)
{
	return palette[(i % 8 + 8) % 8];
}

static void esc(FILE *o, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", o);
			break;
		case '<':
			fputs("&lt;", o);
			break;
		case '>':
			fputs("&gt;", o);
			break;
		case '"':
			fputs("&quot;", o);
			break;
		case '\'':
			fputs("&#39;", o);
			break;
		default:
			fputc(*s, o);
		}
	}
}

/* x of time t in a chart whose plot starts at left margin ml. */
static double Xm(const hx *h, double t, int ml)
{
	double span = h->t1 > h->t0 ? h->t1 - h->t0 : 1;
	return ml + (t - h->t0) / span * (CW - ml - MR);
}

static double X(const hx *h, double t)
{
	return Xm(h, t, ML);
}

static double Y(const chart *c, double v)
{
	double span = c->y1 > c->y0 ? c->y1 - c->y0 : 1;
	double y = MT + (1 - (v - c->y0) / span) * (CH - MT - MB);
	return y < MT - 2 ? MT - 2 : y > CH - MB ? CH - MB : y;
}

/* A round step for about n ticks over span; 0 when span is not a positive finite number. */
static double nice_step(double span, int n)
{
	if (!(span > 0) || !isfinite(span))
		return 0;
	double raw = span / n, p = pow(10, floor(log10(raw)));
	double m = raw / p;
	double st = (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
	return isfinite(st) && st > 0 ? st : 0;
}

/* Local wall-clock time (HH:MM:SS) of t seconds into the recording; "" when unknown. */
static void clock_of(const hx *h, double t, char *out, size_t len)
{
	out[0] = '\0';
	double w = h->tl->t0_wall + t;
	if (!(h->tl->t0_wall > 0) || !isfinite(w) || w > 253402300799.0)
		return;
	time_t s = (time_t)floor(w);
	struct tm tm;
	if (localtime_r(&s, &tm))
		strftime(out, len, "%H:%M:%S", &tm);
}

static void band_rect(const hx *h, double a, double b, double t0, double t1, const char *cls,
                      const char *tip)
{
	if (b - a < 1.5)
		b = a + 1.5;
	fprintf(h->o, "<rect class=\"%s\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\"><title>",
	        cls, a, MT, b - a, CH - MT - MB);
	esc(h->o, tip);
	char c0[16], c1[16];
	clock_of(h, t0, c0, sizeof c0);
	clock_of(h, t1, c1, sizeof c1);
	fprintf(h->o, " %.1f-%.1f s (%s-%s)</title></rect>\n", t0, t1, c0, c1);
}

/*
 * Bands where mask is true over samples [0, n), in class cls. Runs closer
 * than two pixels merge, so a day of short gaps stays a few hundred shapes.
 */
static bool bands(const hx *h, const bool *mask, const char *cls, const char *tip)
{
	const timeline *tl = h->tl;
	double a = NAN, b = NAN, t0 = 0, t1 = 0;
	for (int s = 0; s < tl->n; s++) {
		if (!mask[s])
			continue;
		int e = s;
		while (e + 1 < tl->n && mask[e + 1])
			e++;
		double r0 = s > 0 ? tl->t[s - 1] : tl->t[s], r1 = tl->t[e];
		double x0 = X(h, r0), x1 = X(h, r1);
		if (!isnan(a) && x0 - b < 2) {
			b = x1 > b ? x1 : b;
			t1 = r1;
		} else {
			if (!isnan(a))
				band_rect(h, a, b, t0, t1, cls, tip);
			a = x0;
			b = x1;
			t0 = r0;
			t1 = r1;
		}
		s = e;
	}
	if (!isnan(a))
		band_rect(h, a, b, t0, t1, cls, tip);
	return !isnan(a);
}

/*
 * Invisible columns across the plot whose tooltips give the time under the
 * pointer as seconds and wall-clock time (the page runs no script), so a
 * moment lines up with logs and Grafana. Shaded spans drawn on top keep
 * their own tooltips.
 */
static void hover_strip(const hx *h)
{
	if (!(h->tl->t0_wall > 0))
		return;
	enum { COLS = 60 };
	double dt = (h->t1 - h->t0) / COLS;
	for (int k = 0; k < COLS; k++) {
		double a = h->t0 + k * dt, b = a + dt;
		char c0[16], c1[16];
		clock_of(h, a, c0, sizeof c0);
		clock_of(h, b, c1, sizeof c1);
		fprintf(h->o,
		        "<rect class=\"hov\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\">"
		        "<title>%.1f-%.1f s, %s-%s</title></rect>",
		        X(h, a), MT, X(h, b) - X(h, a), CH - MT - MB, a, b, c0, c1);
	}
	fputc('\n', h->o);
}

static void chart_begin(const hx *h, const chart *c, const char *id, const char *title,
                        const char *unit)
{
	FILE *o = h->o;
	fprintf(o, "<figure id=\"%s\"><figcaption>", id);
	esc(o, title);
	fprintf(o, "</figcaption>\n<svg viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"", CW, CH);
	esc(o, title);
	fputs("\">\n", o);
	/* grid and axes */
	double ys = nice_step(c->y1 - c->y0, 4);
	for (int k = 0; ys > 0 && k <= 12 && c->y0 + k * ys <= c->y1 + 1e-9; k++) {
		double v = c->y0 + k * ys;
		double y = Y(c, v);
		fprintf(o, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>", ML,
		        y, CW - MR, y);
		fprintf(o,
		        "<text class=\"lbl\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
		        ML - 6, y + 4, v);
	}
	fprintf(o, "<text class=\"lbl\" x=\"4\" y=\"%d\">", MT - 4);
	esc(o, unit);
	fputs("</text>\n", o);
	double xs = nice_step(h->t1 - h->t0, 8);
	for (int k = 0; xs > 0 && k <= 20; k++) {
		double t = (ceil(h->t0 / xs) + k) * xs;
		if (t > h->t1 + 1e-9)
			break;
		char ck[16];
		clock_of(h, t, ck, sizeof ck);
		fprintf(o,
		        "<text class=\"lbl\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g "
		        "s<title>%s</title></text>",
		        X(h, t), CH - 8, t, ck);
	}
	fprintf(o, "\n<line class=\"ax\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>", ML, CH - MB,
	        CW - MR, CH - MB);
	fprintf(o, "<line class=\"ax\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", ML, MT, ML,
	        CH - MB);
	hover_strip(h);
	*h->drawn = (struct drawn){0};
	h->drawn->gap = bands(h, h->gap, "gap", _("GPU idle"));
	h->drawn->thr =
	    bands(h, h->thr, "thr",
	          _("throttled: clocks held down (power cap, thermal or hardware slowdown)"));
	h->drawn->lost = bands(h, h->lost, "lost", _("GPU lost: fell off the bus"));
}

/* Finding ranges (warn and error) as marks along the top of a chart. */
static void finding_marks(const hx *h)
{
	for (int i = 0; i < h->r->n; i++) {
		const diag_finding *f = &h->r->f[i];
		if (f->severity < DIAG_WARN)
			continue;
		for (int k = 0; k < f->nranges; k++) {
			double a = X(h, f->ranges[k].t0), b = X(h, f->ranges[k].t1);
			if (b - a < 2)
				b = a + 2;
			fprintf(h->o,
			        "<a href=\"#f-%d\"><rect class=\"%s\" x=\"%.1f\" y=\"%d\" "
			        "width=\"%.1f\" "
			        "height=\"4\"><title>%s</title></rect></a>",
			        i, f->severity == DIAG_ERROR ? "fe" : "fw", a, MT - 8, b - a,
			        f->id);
			h->drawn->marks = true;
		}
	}
	fputc('\n', h->o);
}

/*
 * The shaded spans and finding marks this chart shows, with what each means.
 * The utilization chart states the idle threshold even with nothing shaded:
 * a flat line at 23 % is then seen to be above it, not missed.
 */
static void band_legend(const hx *h, bool util)
{
	FILE *o = h->o;
	if (h->drawn->marks)
		fprintf(o, " <span class=\"sw fmk\"></span>%s",
		        _("a finding's time window (click for the finding)"));
	if (h->drawn->gap) {
		fputs(" <span class=\"sw gapk\"></span>", o);
		fprintf(o,
		        _("GPU idle (utilization at or below %g %%, the diagnosis's idle threshold "
		          "idle_util_pct)"),
		        h->idle_pct);
	} else if (util) {
		fputs(" ", o);
		fprintf(o,
		        _("not shaded: utilization stayed above the idle threshold, %g %% "
		          "(idle_util_pct)"),
		        h->idle_pct);
	}
	if (h->drawn->thr)
		fprintf(
		    o, " <span class=\"sw thrk\"></span>%s",
		    _("throttled (SW Power Cap, SW/HW Thermal Slowdown, HW Slowdown or HW Power "
		      "Brake)"));
	if (h->drawn->lost)
		fprintf(o, " <span class=\"sw lostk\"></span>%s", _("GPU lost (off the bus)"));
}

/* util: the utilization chart, whose legend states the idle threshold */
static void chart_end(const hx *h, const char *legend, bool util)
{
	finding_marks(h);
	fprintf(h->o, "</svg>\n<div class=\"legend\">%s", legend);
	band_legend(h, util);
	fputs("</div></figure>\n", h->o);
}

/* The pixel column of time t, bounded whatever t is (a damaged file may hold anything). */
static int colx(const hx *h, double t)
{
	double x = X(h, t);
	return x > -1 && x < CW + 1 ? (int)x : -1;
}

/*
 * A series as one path, broken at absent values. Long series are reduced to
 * the min and max of each pixel column, so oscillations stay visible.
 */
static void series(const hx *h, const chart *c, const double *x, double scale, const char *color,
                   bool dashed)
{
	const timeline *tl = h->tl;
	if (!x || tl->n == 0)
		return;
	FILE *o = h->o;
	fprintf(o, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\"%s d=\"", color,
	        dashed ? " stroke-dasharray=\"5 3\"" : "");
	bool pen = false;
	int s = 0;
	while (s < tl->n) {
		int col = colx(h, tl->t[s]);
		double mn = NAN, mx = NAN;
		int e = s;
		bool hole = false;
		while (e < tl->n && colx(h, tl->t[e]) == col) {
			double v = x[e] * scale;
			if (isnan(v))
				hole = true;
			else {
				mn = isnan(mn) || v < mn ? v : mn;
				mx = isnan(mx) || v > mx ? v : mx;
			}
			e++;
		}
		if (isnan(mn)) {
			pen = false;
		} else {
			double px = X(h, tl->t[s]);
			fprintf(o, "%c%.1f %.1f", pen ? 'L' : 'M', px, Y(c, mn));
			if (mx != mn)
				fprintf(o, "L%.1f %.1f", px, Y(c, mx));
			pen = !hole;
		}
		s = e;
	}
	fputs("\"/>\n", o);
}

static void hline(const hx *h, const chart *c, double v, const char *color, const char *tip)
{
	if (isnan(v))
		return;
	fprintf(
	    h->o,
	    "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1\" "
	    "stroke-dasharray=\"2 3\"><title>",
	    ML, Y(c, v), CW - MR, Y(c, v), color);
	esc(h->o, tip);
	fputs("</title></line>\n", h->o);
}

static void legend_add(char *buf, size_t len, const char *color, bool dashed, const char *label)
{
	size_t o = strlen(buf);
	snprintf(buf + o, len - o, "<span class=\"sw%s\" style=\"border-color:%s\"></span>%s ",
	         dashed ? " d" : "", color, label);
}

/* Largest value of metric id over the shown GPUs times scale (NAN when none). */
static double gpu_max(const hx *h, gpu_metric_id id, double scale)
{
	double m = NAN;
	for (int i = 0; i < h->ngpu_show; i++) {
		double v = tl_max(h->tl->gpu[h->show[i]].m[id], 0, h->tl->n) * scale;
		if (!isnan(v) && (isnan(m) || v > m))
			m = v;
	}
	return m;
}

static bool any_gpu_series(const hx *h, gpu_metric_id id)
{
	for (int i = 0; i < h->ngpu_show; i++)
		if (h->tl->gpu[h->show[i]].m[id])
			return true;
	return false;
}

static const double *activity(const timeline *tl, int g)
{
	const tl_gpu *G = &tl->gpu[g];
	return G->m[GM_UTIL_GPU] ? G->m[GM_UTIL_GPU] : G->m[GM_GPM_GR_ACTIVE];
}

static void chart_util(hx *h)
{
	chart c = {0, 100};
	char leg[2048] = "", lab[64];
	chart_begin(h, &c, "chart-util", _("GPU utilization (solid) and SM activity (dashed)"),
	            "%");
	for (int i = 0; i < h->ngpu_show; i++) {
		int g = h->show[i];
		const char *col = palette[i % 8];
		series(h, &c, activity(h->tl, g), 1, col, false);
		series(h, &c, h->tl->gpu[g].m[GM_GPM_SM_ACTIVE], 1, col, true);
		snprintf(lab, sizeof lab, _("GPU %d utilization"), h->tl->gpu[g].index);
		legend_add(leg, sizeof leg, col, false, lab);
		if (h->tl->gpu[g].m[GM_GPM_SM_ACTIVE]) {
			snprintf(lab, sizeof lab, _("GPU %d SM active"), h->tl->gpu[g].index);
			legend_add(leg, sizeof leg, col, true, lab);
		}
	}
	chart_end(h, leg, true);
}

/* Memory, power, SM clock: each GPU's series against its capacity or limit. */
static void chart_vs_limit(hx *h, const char *id, const char *title, const char *unit,
                           gpu_metric_id val, gpu_metric_id lim, gpu_metric_id lim2, double scale,
                           const char *what)
{
	if (!any_gpu_series(h, val))
		return;
	double top = gpu_max(h, val, scale), l = gpu_max(h, lim, scale);
	if (isnan(l) && lim2 != lim)
		l = gpu_max(h, lim2, scale);
	if (!isnan(l) && (isnan(top) || l > top))
		top = l;
	chart c = {0, isnan(top) || top <= 0 ? 1 : top * 1.05};
	char leg[2048] = "", lab[96];
	chart_begin(h, &c, id, title, unit);
	for (int i = 0; i < h->ngpu_show; i++) {
		int g = h->show[i];
		const char *col = palette[i % 8];
		series(h, &c, h->tl->gpu[g].m[val], scale, col, false);
		double gl = tl_max(h->tl->gpu[g].m[lim], 0, h->tl->n);
		if (isnan(gl) && lim2 != lim)
			gl = tl_max(h->tl->gpu[g].m[lim2], 0, h->tl->n);
		snprintf(lab, sizeof lab, "GPU %d %s", h->tl->gpu[g].index, what);
		legend_add(leg, sizeof leg, col, false, lab);
		if (!isnan(gl)) {
			hline(h, &c, gl * scale, col, _("limit"));
			snprintf(lab, sizeof lab, _("GPU %d limit"), h->tl->gpu[g].index);
			legend_add(leg, sizeof leg, col, true, lab);
		}
	}
	chart_end(h, leg, false);
}

static void chart_pcie(hx *h)
{
	bool nv = any_gpu_series(h, GM_PCIE_RX) || any_gpu_series(h, GM_PCIE_TX);
	bool gpm = any_gpu_series(h, GM_GPM_PCIE_RX) || any_gpu_series(h, GM_GPM_PCIE_TX);
	if (!nv && !gpm)
		return;
	gpu_metric_id rx = nv ? GM_PCIE_RX : GM_GPM_PCIE_RX, tx = nv ? GM_PCIE_TX : GM_GPM_PCIE_TX;
	double scale = nv ? 1 : 1 / MIB;
	double top = fmax(gpu_max(h, rx, scale), gpu_max(h, tx, scale));
	chart c = {0, isnan(top) || top <= 0 ? 1 : top * 1.05};
	char leg[2048] = "", lab[64];
	chart_begin(h, &c, "chart-pcie",
	            _("PCIe throughput: host to GPU (solid), GPU to host (dashed)"), "MiB/s");
	for (int i = 0; i < h->ngpu_show; i++) {
		int g = h->show[i];
		const char *col = palette[i % 8];
		series(h, &c, h->tl->gpu[g].m[rx], scale, col, false);
		series(h, &c, h->tl->gpu[g].m[tx], scale, col, true);
		snprintf(lab, sizeof lab, "GPU %d rx", h->tl->gpu[g].index);
		legend_add(leg, sizeof leg, col, false, lab);
		snprintf(lab, sizeof lab, "GPU %d tx", h->tl->gpu[g].index);
		legend_add(leg, sizeof leg, col, true, lab);
	}
	chart_end(h, leg, false);
}

static void chart_host(hx *h)
{
	const timeline *tl = h->tl;
	if (!tl->h[HM_CPU_BUSY_MAX] && !tl->h[HM_CPU_IOWAIT] && !tl->h[HM_CPU_BUSY_AVG])
		return;
	chart c = {0, 100};
	char leg[512] = "";
	chart_begin(h, &c, "chart-host", _("Host: busiest core, all cores, iowait"), "%");
	series(h, &c, tl->h[HM_CPU_BUSY_MAX], 1, "#c62828", false);
	series(h, &c, tl->h[HM_CPU_BUSY_AVG], 1, "#757575", false);
	series(h, &c, tl->h[HM_CPU_IOWAIT], 1, "#6a1b9a", true);
	legend_add(leg, sizeof leg, "#c62828", false, _("busiest core"));
	legend_add(leg, sizeof leg, "#757575", false, _("all cores"));
	legend_add(leg, sizeof leg, "#6a1b9a", true, "iowait");
	chart_end(h, leg, false);
}

static void chart_steps(hx *h)
{
	const timeline *tl = h->tl;
	if (tl->nsteps < 2)
		return;
	double top = 0;
	for (int i = 1; i < tl->nsteps; i++)
		top = fmax(top, tl->steps[i].t - tl->steps[i - 1].t);
	chart c = {0, top > 0 ? top * 1e3 * 1.05 : 1};
	chart_begin(h, &c, "chart-steps", _("Step time (time since the previous step)"), "ms");
	FILE *o = h->o;
	if (tl->nsteps <= 400) {
		for (int i = 1; i < tl->nsteps; i++)
			fprintf(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2\" fill=\"#37474f\"/>",
			        X(h, tl->steps[i].t),
			        Y(&c, 1e3 * (tl->steps[i].t - tl->steps[i - 1].t)));
	} else {
		/* Many steps: the min and max of each pixel column, as for the series. */
		fputs("<path fill=\"none\" stroke=\"#37474f\" stroke-width=\"1\" d=\"", o);
		bool pen = false;
		int i = 1;
		while (i < tl->nsteps) {
			int col = colx(h, tl->steps[i].t);
			double mn = INFINITY, mx = -INFINITY;
			int e = i;
			while (e < tl->nsteps && colx(h, tl->steps[e].t) == col) {
				double d = 1e3 * (tl->steps[e].t - tl->steps[e - 1].t);
				mn = fmin(mn, d);
				mx = fmax(mx, d);
				e++;
			}
			if (col >= 0 && isfinite(mn)) {
				fprintf(o, "%c%d %.1f", pen ? 'L' : 'M', col, Y(&c, mn));
				if (mx != mn)
					fprintf(o, "L%d %.1f", col, Y(&c, mx));
				pen = true;
			}
			i = e;
		}
		fputs("\"/>", o);
	}
	fputc('\n', o);
	double p50 = h->r->steps.p50;
	if (!isnan(p50))
		hline(h, &c, 1e3 * p50, "#37474f", _("median step time"));
	char leg[512];
	snprintf(leg, sizeof leg,
	         "<span class=\"sw\" style=\"border-color:#37474f\"></span>%s "
	         "<span class=\"sw d\" style=\"border-color:#37474f\"></span>%s",
	         _("step time"), _("median"));
	chart_end(h, leg, false);
}

/* One row per finding with its time ranges, each linked to the finding's card. */
#define STRIP_ML 170 /* room for the finding ids */
static void timeline_strip(hx *h)
{
	const diag_result *r = h->r;
	int rows = r->n ? r->n : 1, H = 30 + 18 * rows;
	FILE *o = h->o;
	const char *cap = _("Findings over time");
	fprintf(o, "<figure id=\"timeline\"><figcaption>%s</figcaption>\n", cap);
	fprintf(o, "<svg viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"%s\">\n", CW, H, cap);
	fprintf(o, "<line class=\"ax\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", STRIP_ML,
	        H - 20, CW - MR, H - 20);
	for (int i = 0; i < r->n; i++) {
		const diag_finding *f = &r->f[i];
		int y = 8 + 18 * i;
		const char *cls = f->severity == DIAG_ERROR  ? "fe"
		                  : f->severity == DIAG_WARN ? "fw"
		                                             : "fi";
		fprintf(o, "<a href=\"#f-%d\"><text class=\"lbl\" x=\"4\" y=\"%d\">%s</text></a>",
		        i, y + 10, f->id);
		for (int k = 0; k < f->nranges; k++) {
			double a = Xm(h, f->ranges[k].t0, STRIP_ML),
			       b = Xm(h, f->ranges[k].t1, STRIP_ML);
			if (b - a < 3)
				b = a + 3;
			fprintf(o,
			        "<a href=\"#f-%d\"><rect class=\"%s\" x=\"%.1f\" y=\"%d\" "
			        "width=\"%.1f\" "
			        "height=\"12\"><title>%s %.1f-%.1f s</title></rect></a>",
			        i, cls, a, y, b - a, f->id, f->ranges[k].t0, f->ranges[k].t1);
		}
		fputc('\n', o);
	}
	double xs = nice_step(h->t1 - h->t0, 8);
	for (int k = 0; xs > 0 && k <= 20; k++) {
		double t = (ceil(h->t0 / xs) + k) * xs;
		if (t > h->t1 + 1e-9)
			break;
		fprintf(
		    o, "<text class=\"lbl\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g s</text>",
		    Xm(h, t, STRIP_ML), H - 6, t);
	}
	fputs("\n</svg></figure>\n", o);
}

static void finding_card(hx *h, int i)
{
	const diag_finding *f = &h->r->f[i];
	const timeline *tl = h->tl;
	FILE *o = h->o;
	static const char *const sev[] = {N_("INFO"), N_("WARN"), N_("ERROR")};
	fprintf(o, "<div class=\"f %s\" id=\"f-%d\">\n<p><span class=\"sev\">%s</span> <b>%s</b> ",
	        diag_severity_name(f->severity), i, _(sev[f->severity]), f->id);
	fputs("<span class=\"conf\">", o);
	fprintf(o, _("(confidence %.2f)"), f->confidence);
	fputs("</span>", o);
	for (int g = 0; g < tl->ngpu && g < 64; g++)
		if (f->gpus & (1ULL << g))
			fprintf(o, " <span class=\"gpu\">GPU %d</span>", tl->gpu[g].index);
	fputs("</p>\n<p class=\"title\">", o);
	esc(o, f->title);
	fputs("</p>\n", o);
	if (f->nev) {
		fprintf(
		    o,
		    "<table><tr><th>GPU</th><th>%s</th><th>%s</th><th>%s</th><th>%s</th><th></th>"
		    "</tr>\n",
		    _("metric"), _("statistic"), _("value"), _("threshold"));
		for (int k = 0; k < f->nev; k++) {
			const diag_evidence *e = &f->ev[k];
			fputs("<tr><td>", o);
			if (e->gpu >= 0 && e->gpu < tl->ngpu)
				fprintf(o, "%d", tl->gpu[e->gpu].index);
			fputs("</td><td>", o);
			esc(o, e->metric);
			fputs("</td><td>", o);
			esc(o, e->stat);
			fprintf(o, "</td><td class=\"n\">%.4g ", e->value);
			esc(o, _(e->unit));
			fputs("</td><td class=\"n\">", o);
			int met = diag_evidence_met(e);
			if (met >= 0) {
				esc(o, e->cmp);
				fprintf(o, " %.4g ", e->threshold);
				esc(o, _(e->unit));
			}
			fprintf(o, "</td><td class=\"%s\">%s</td></tr>\n", met > 0 ? "ok" : "na",
			        met > 0    ? _("met")
			        : met == 0 ? _("not met")
			                   : "");
		}
		fputs("</table>\n", o);
	}
	if (f->nranges) {
		fprintf(o, "<p><b>%s</b>: ", _("When"));
		for (int k = 0; k < f->nranges; k++)
			if (f->ranges[k].t0 == f->ranges[k].t1)
				fprintf(o, _("%sat %.1f s"), k ? ", " : "", f->ranges[k].t0);
			else
				fprintf(o, "%s%.1f-%.1f s", k ? ", " : "", f->ranges[k].t0,
				        f->ranges[k].t1);
		fprintf(o, " (<a href=\"#timeline\">%s</a>)</p>\n", _("on the timeline"));
	}
	if (f->note[0]) {
		fprintf(o, "<p><b>%s</b>: ", _("Note"));
		esc(o, f->note);
		fputs("</p>\n", o);
	}
	if (f->advice) {
		fprintf(o, "<p><b>%s</b>: ", _("Change"));
		esc(o, f->advice);
		fputs("</p>\n", o);
	}
	if (f->verify) {
		fprintf(o, "<p><b>%s</b>: ", _("Verify"));
		esc(o, f->verify);
		fputs("</p>\n", o);
	}
	fputs("</div>\n", o);
}

static void gpu_table(hx *h)
{
	const diag_result *r = h->r;
	if (!r->ngpu)
		return;
	FILE *o = h->o;
	char a[16], b[16], c[16], d[16], e[16], f[16], g2[16];
	fprintf(o, "<h2>%s</h2>\n<table><tr><th>GPU</th>", _("GPUs: utilization x memory"));
	const char *th[] = {N_("job"),         N_("util mean"), N_("idle"),    N_("SM active"),
	                    N_("memory peak"), N_("power"),     N_("quadrant")};
	for (size_t k = 0; k < sizeof th / sizeof *th; k++)
		fprintf(o, "<th>%s</th>", _(th[k]));
	fputs("</tr>\n", o);
	for (int g = 0; g < r->ngpu; g++) {
		const diag_gpu_summary *s = &r->gpu[g];
		fprintf(o, "<tr><td>%d ", s->index);
		esc(o, h->tl->gpu[g].name);
		fprintf(o,
		        "</td><td>%s</td><td class=\"n\">%s %%</td><td class=\"n\">%s %%</td>"
		        "<td class=\"n\">%s %%</td><td class=\"n\">%s / %s GiB</td>"
		        "<td class=\"n\">%s / %s W</td><td><b>%s</b>: ",
		        s->job ? _("yes") : _("no"), report_num(s->util_mean, 0, a, sizeof a),
		        report_num(s->idle_pct, 0, b, sizeof b),
		        report_num(s->sm_active_mean, 0, c, sizeof c),
		        report_num(s->mem_peak_mib / 1024, 1, d, sizeof d),
		        report_num(s->mem_total_mib / 1024, 1, e, sizeof e),
		        report_num(s->power_mean, 0, f, sizeof f),
		        report_num(s->power_limit, 0, g2, sizeof g2),
		        diag_quadrant_name(s->quadrant));
		esc(o, _(diag_quadrant_meaning(s->quadrant)));
		fputs("</td></tr>\n", o);
	}
	fputs("</table>\n", o);
}

static void chain_list(hx *h)
{
	FILE *o = h->o;
	static const char *const mark[] = {"&#10003;", "&#10007;", "&#8211;"};
	static const char *const cls[] = {"ok", "bad", "na"};
	fprintf(o, "<h2>%s</h2>\n<ol class=\"chain\">\n", _("The seven-step chain"));
	for (int i = 0; i < DIAG_CHAIN_STEPS; i++) {
		const diag_chain_step *s = &h->r->chain[i];
		fprintf(o, "<li><span class=\"%s\">%s</span> <b>", cls[s->status], mark[s->status]);
		esc(o, s->question);
		fputs("</b><br>", o);
		esc(o, s->answer);
		for (int k = 0; k < s->nfindings; k++) {
			int idx = -1;
			for (int j = 0; j < h->r->n; j++)
				if (!strcmp(h->r->f[j].id, s->findings[k]))
					idx = j;
			fprintf(o, " <a href=\"#f-%d\">%s</a>", idx, s->findings[k]);
		}
		fputs("</li>\n", o);
	}
	fputs("</ol>\n", o);
}

/* The wall-clock start, local with its UTC offset (which makes it one instant
 * anywhere), for lining up with logs. */
static void started_row(const hx *h)
{
	double w = h->tl->t0_wall;
	if (!(w > 0) || w > 253402300799.0)
		return;
	time_t s = (time_t)floor(w);
	struct tm lt;
	char l[40] = "";
	if (localtime_r(&s, &lt))
		strftime(l, sizeof l, "%Y-%m-%d %H:%M:%S %z", &lt);
	fprintf(h->o, "<tr><th>%s</th><td>", _("started"));
	fprintf(h->o, _("%s; chart times are seconds from here, hover for the clock time"), l);
	fputs("</td></tr>\n", h->o);
}

static void header(hx *h, const diag_meta *meta)
{
	FILE *o = h->o;
	const timeline *tl = h->tl;
	const diag_result *r = h->r;
	fprintf(o, "<h1>%s: ", _("gpuwhy report"));
	esc(o, h->st->source ? h->st->source : "");
	fputs("</h1>\n<table class=\"facts\">\n", o);
	const char *cmd = diag_meta_get(meta, "command");
	if (cmd) {
		fprintf(o, "<tr><th>%s</th><td><code>", _("command"));
		esc(o, cmd);
		fputs("</code></td></tr>\n", o);
	}
	const char *keys[][2] = {
	    {"hostname", N_("host")}, {"driver", N_("driver")}, {"cuda_driver_version", "CUDA"}};
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
		const char *v = diag_meta_get(meta, keys[i][0]);
		if (!v || !*v)
			continue;
		fprintf(o, "<tr><th>%s</th><td>", _(keys[i][1]));
		esc(o, v);
		fputs("</td></tr>\n", o);
	}
	started_row(h);
	fprintf(o, "<tr><th>%s</th><td>", _("recorded"));
	fprintf(o, P_("%.1f s, %d sample", "%.1f s, %d samples", tl->n), tl->duration, tl->n);
	if (tl->exit_status >= 0)
		fprintf(o, _(", exit status %d"), tl->exit_status);
	fprintf(o, "</td></tr>\n<tr><th>%s</th><td>", _("analysed"));
	fprintf(o, _("%.1f-%.1f s"), r->t_from, r->t_to);
	fprintf(o, "</td></tr>\n<tr><th>%s</th><td>", _("goal"));
	esc(o, report_goal_text(r->goal));
	fputs("</td></tr>\n", o);
	if (r->steps.n > 0) {
		fprintf(o, "<tr><th>%s</th><td>", _("steps"));
		fprintf(o, _("%d; p50 %.1f ms, p90 %.1f ms, p99 %.1f ms; %.2f steps/s"), tl->nsteps,
		        1e3 * r->steps.p50, 1e3 * r->steps.p90, 1e3 * r->steps.p99, r->steps.per_s);
		fputs("</td></tr>\n", o);
	}
	fputs("</table>\n", o);
}

static const char css[] =
    /* Fonts that render CJK where a page in Chinese needs them, Latin ones first. */
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI','PingFang SC','Hiragino Sans GB',"
    "'Microsoft YaHei','Noto Sans CJK SC','Source Han Sans SC','WenQuanYi Micro Hei',"
    "sans-serif;margin:0 auto;"
    "max-width:1100px;padding:16px 20px;color:#212121;background:#fff}"
    "h1{font-size:20px;margin:8px 0}h2{font-size:17px;border-bottom:1px solid #ddd;"
    "padding-bottom:3px;margin-top:28px}"
    "table{border-collapse:collapse;margin:6px 0}td,th{padding:2px 8px;text-align:left;"
    "border-bottom:1px solid #eee;vertical-align:top}td.n{text-align:right;"
    "font-variant-numeric:tabular-nums;white-space:nowrap}"
    ".facts th{color:#616161;font-weight:normal}"
    ".f{border-left:6px solid #9e9e9e;padding:4px 14px;margin:12px 0;background:#fafafa}"
    ".f.error{border-color:#c62828}.f.warn{border-color:#ef8f00}.f.info{border-color:#1e88e5}"
    ".f p{margin:5px 0}.f .title{font-size:15px}"
    ".sev{font-weight:bold;text-transform:uppercase;font-size:12px;letter-spacing:.05em}"
    ".conf,.gpu{color:#616161;font-size:12px;margin-left:8px}"
    "figure{margin:14px 0}figcaption{font-weight:bold;margin-bottom:2px}"
    "svg{display:block;width:100%;height:auto;background:#fff}"
    ".ax{stroke:#9e9e9e;stroke-width:1}.grid{stroke:#eeeeee;stroke-width:1}"
    ".lbl{font-size:11px;fill:#616161}"
    ".gap{fill:#9e9e9e;fill-opacity:.2}.thr{fill:#ff9800;fill-opacity:.25}"
    ".fe{fill:#c62828}.fw{fill:#ef8f00}.fi{fill:#1e88e5}"
    ".legend{font-size:12px;color:#424242}"
    ".sw{display:inline-block;width:18px;height:0;border-top:2px solid;margin:0 4px 3px 10px;"
    "vertical-align:middle}.sw.d{border-top-style:dashed}"
    ".sw.gapk{height:10px;border:0;background:rgba(158,158,158,.35)}"
    ".sw.fmk{height:4px;border:0;background:#ef8f00}"
    ".sw.thrk{height:10px;border:0;background:rgba(255,152,0,.4)}"
    ".lost{fill:#b71c1c;fill-opacity:.18}.hov{fill:#000;fill-opacity:0}"
    ".sw.lostk{height:10px;border:0;background:rgba(183,28,28,.35)}"
    ".chain li{margin:6px 0}.ok{color:#2e7d32}.bad{color:#c62828}.na{color:#9e9e9e}"
    ":target{outline:3px solid #1e88e5;outline-offset:2px}"
    "code{font-size:13px}";

/* When GPU g (a position) fell off the bus: its gpu_lost event, else NAN. */
static double lost_at(const timeline *tl, int g)
{
	for (int i = 0; i < tl->nevents; i++)
		if (tl->events[i].gpu == g && strcmp(tl->events[i].kind, TL_EV_GPU_LOST) == 0)
			return tl->events[i].t;
	return NAN;
}

/* A job GPU's sample is throttled when the power cap or a thermal/hardware slowdown holds it. */
static bool throttled_at(const timeline *tl, int g, int s)
{
	double m = tl_gpu_at(tl, g, GM_CLK_REASONS, s);
	/* power cap, HW/thermal slowdowns; only exact integer masks count */
	if (gpu_reasons_slowing(gpu_reasons_from_value(m)))
		return true;
	return tl_gpu_at(tl, g, GM_CLK_R_SW_POWER, s) >= 1 ||
	       tl_gpu_at(tl, g, GM_CLK_R_HW_SLOW, s) >= 1 ||
	       tl_gpu_at(tl, g, GM_CLK_R_HW_THERMAL, s) >= 1 ||
	       tl_gpu_at(tl, g, GM_CLK_R_SW_THERMAL, s) >= 1;
}

/*
 * The shaded spans. Idle is what the diagnosis calls idle: every job GPU at
 * or below idle_util_pct (utilization, or the driver's sub-samples when that
 * is absent). Throttled: any job GPU held down. Lost: after any job GPU fell
 * off the bus (it has no readings to be idle or busy with).
 */
static void shade_masks(hx *h)
{
	const timeline *tl = h->tl;
	diag_opts def;
	diag_opts_default(&def);
	h->idle_pct = (h->st->opts ? h->st->opts : &def)->th.idle_util_pct;
	size_t n = tl->n ? (size_t)tl->n : 1;
	h->gap = gw_xcalloc(n, sizeof *h->gap);
	h->thr = gw_xcalloc(n, sizeof *h->thr);
	h->lost = gw_xcalloc(n, sizeof *h->lost);
	double lost_t = NAN;
	for (int i = 0; i < h->ngpu_show; i++) {
		double t = lost_at(tl, h->show[i]);
		if (!isnan(t) && !(t >= lost_t))
			lost_t = t;
	}
	for (int s = 0; s < tl->n; s++) {
		int present = 0, idle_n = 0;
		for (int i = 0; i < h->ngpu_show; i++) {
			int g = h->show[i];
			const double *a = activity(tl, g);
			double u = a && !isnan(a[s])
			               ? a[s]
			               : 100 - tl_gpu_at(tl, g, GM_UTIL_SAMPLES_IDLE, s);
			if (!isnan(u)) {
				present++;
				idle_n += u <= h->idle_pct;
			}
			h->thr[s] |= throttled_at(tl, g, s);
		}
		h->lost[s] = !isnan(lost_t) && tl->t[s] >= lost_t;
		h->gap[s] = !h->lost[s] && present > 0 && idle_n == present;
		h->any_gap |= h->gap[s];
		h->any_thr |= h->thr[s];
		h->any_lost |= h->lost[s];
	}
}

const char *report_html_css(void)
{
	return css;
}

void report_html(FILE *out, const timeline *tl, const diag_meta *meta, const diag_result *r,
                 const report_style *st)
{
	struct drawn drawn = {0};
	hx h = {.o = out, .tl = tl, .r = r, .st = st, .drawn = &drawn};
	h.t0 = 0;
	h.t1 = tl->duration;
	if (tl->n > 0 && tl->t[tl->n - 1] > h.t1)
		h.t1 = tl->t[tl->n - 1];
	if (!(h.t1 > h.t0) || !isfinite(h.t1))
		h.t1 = h.t0 + 1;
	/* The GPUs drawn: the job's, at most 8 (the table lists all). */
	for (int g = 0; g < r->ngpu && h.ngpu_show < 8; g++)
		if (r->gpu[g].job)
			h.show[h.ngpu_show++] = g;
	shade_masks(&h);

	/* The page's language is the messages' ("zh_CN" -> "zh-CN"): browsers pick CJK fonts by it.
	 */
	char lang[16];
	snprintf(lang, sizeof lang, "%s", gw_i18n_lang());
	for (char *p = lang; *p; p++)
		if (*p == '_')
			*p = '-';
	fprintf(out,
	        "<!DOCTYPE html>\n<html lang=\"%s\">\n<head>\n<meta charset=\"utf-8\">\n"
	        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	        "<title>%s: ",
	        lang, _("gpuwhy report"));
	esc(out, st->source ? st->source : "");
	fprintf(out, "</title>\n<style>%s</style>\n</head>\n<body>\n", css);
	header(&h, meta);

	int ne = 0, nw = 0;
	for (int i = 0; i < r->n; i++) {
		ne += r->f[i].severity == DIAG_ERROR;
		nw += r->f[i].severity == DIAG_WARN;
	}
	fprintf(out, "<h2>%s: ", _("Findings"));
	fprintf(out, P_("%d error", "%d errors", ne), ne);
	fputs(_(", "), out);
	fprintf(out, P_("%d warning", "%d warnings", nw), nw);
	fputs("</h2>\n", out);
	timeline_strip(&h);
	for (int i = 0; i < r->n; i++)
		finding_card(&h, i);

	fprintf(out, "<h2>%s</h2>\n", _("Charts"));
	if (h.ngpu_show)
		chart_util(&h);
	chart_vs_limit(&h, "chart-mem", _("GPU memory used against capacity"), "GiB", GM_MEM_USED,
	               GM_MEM_TOTAL, GM_MEM_TOTAL, 1 / 1024.0, _("memory used"));
	chart_vs_limit(&h, "chart-power", _("Power draw against the limit"), "W", GM_POWER_DRAW,
	               GM_POWER_ENFORCED_LIMIT, GM_POWER_LIMIT, 1, _("power"));
	chart_vs_limit(&h, "chart-clocks", _("SM clock against its maximum, throttled time shaded"),
	               "MHz", GM_CLK_SM, GM_CLK_MAX_SM, GM_CLK_MAX_SM, 1, _("SM clock"));
	chart_pcie(&h);
	chart_host(&h);
	chart_steps(&h);
	gpu_table(&h);
	chain_list(&h);
	fputs("<p class=\"legend\">", out);
	fprintf(out, _("Generated by gpuwhy %s."), GPUWHY_VERSION);
	fputs("</p>\n</body>\n</html>\n", out);
	free(h.gap);
	free(h.thr);
	free(h.lost);
}
