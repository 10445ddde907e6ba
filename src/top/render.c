/* render.c - one frame of `top` into a canvas (see render.h). */
#include "top/render.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "util/termsafe.h"

/* ------------------------------------------------------------------ glyphs */

typedef struct {
	const char *bar_l, *bar_r;
	const char *eighth[8]; /* partial horizontal fill, 1/8 .. 7/8 (index 0 unused) */
	const char *full;
	const char *level[9]; /* bottom-aligned column, 0/8 .. 8/8 */
	const char *dot, *up, *down;
	const char *t_mid, *t_last, *t_pipe, *t_none;
	const char *box_h, *box_v, *box_tl, *box_tr, *box_bl, *box_br;
} glyphs;

static const glyphs utf8_glyphs = {
    "▕",
    "▏",
    {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"},
    "█",
    {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"},
    "·",
    "▲",
    "▼",
    "├─",
    "└─",
    "│ ",
    "  ",
    "─",
    "│",
    "┌",
    "┐",
    "└",
    "┘",
};

static const glyphs ascii_glyphs = {
    "[",
    "]",
    {"", "", "", "", "", "", "", ""},
    "|",
    {" ", ".", ".", ":", ":", "+", "+", "#", "#"},
    "-",
    "^",
    "v",
    "|-",
    "`-",
    "| ",
    "  ",
    "-",
    "|",
    "+",
    "+",
    "+",
    "+",
};

typedef struct {
	top_canvas *c;
	const top_frame *f;
	const glyphs *g;
} ctx;

/* ------------------------------------------------------------------ numbers */

static void fmt_mib(double mib, char *out, size_t len)
{
	if (isnan(mib))
		snprintf(out, len, "n/a");
	else if (mib >= 1024.0 * 1024)
		snprintf(out, len, "%.1fT", mib / (1024.0 * 1024));
	else if (mib >= 1024)
		snprintf(out, len, "%.1fG", mib / 1024);
	else
		snprintf(out, len, "%.0fM", mib);
}

/* Bytes per second as "0", "12K", "1.2M", "3.4G". */
static void fmt_rate(double bps, char *out, size_t len)
{
	static const char units[] = "BKMGT";
	if (isnan(bps)) {
		snprintf(out, len, "n/a");
		return;
	}
	int u = 0;
	while (bps >= 1000 && u < 4) {
		bps /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(out, len, "%.0fB", bps);
	else
		snprintf(out, len, bps < 10 ? "%.1f%c" : "%.0f%c", bps, units[u]);
}

static void fmt_num(const gpu_values *v, gpu_metric_id id, const char *fmt, char *out, size_t len)
{
	if (!v->ok[id])
		snprintf(out, len, "n/a");
	else
		snprintf(out, len, fmt, v->v[id]);
}

static top_style load_style(double pct, double mid, double high)
{
	return isnan(pct)    ? TOP_S_DIM
	       : pct >= high ? TOP_S_HIGH
	       : pct >= mid  ? TOP_S_MID
	                     : TOP_S_OK;
}

/* ------------------------------------------------------------------ line writer */

/* Writes fields left to right and stops at the first that does not fit whole. */
typedef struct {
	ctx *x;
	top_rect r;
	int col, y;
	bool full;
} line;

static line line_at(ctx *x, top_rect r, int col, int y)
{
	return (line){x, r, col, y, false};
}

static int room(const line *l)
{
	return l->r.x + l->r.w - l->col;
}

static bool fits(line *l, int w)
{
	if (l->full || w > room(l)) {
		l->full = true;
		return false;
	}
	return true;
}

static void put(line *l, top_style st, const char *text)
{
	l->col = top_put(l->x->c, l->r, l->col, l->y, st, text);
}

static bool text(line *l, top_style st, const char *s)
{
	if (!fits(l, top_text_width(l->x->c, s)))
		return false;
	put(l, st, s);
	return true;
}

/* "label value" after gap spaces, as one field. */
static bool pair(line *l, int gap, const char *label, top_style st, const char *value)
{
	int w = gap + (label[0] ? (int)strlen(label) + 1 : 0) + top_text_width(l->x->c, value);
	if (!fits(l, w))
		return false;
	l->col += gap;
	if (label[0]) {
		put(l, TOP_S_DIM, label);
		l->col++;
	}
	put(l, st, value);
	return true;
}

/* A bar of w inner cells filled to frac (0..1), at the line's position. */
static void draw_bar(ctx *x, top_rect clip, int col, int y, int w, double frac, top_style st)
{
	const glyphs *g = x->g;
	col = top_put(x->c, clip, col, y, TOP_S_DIM, g->bar_l);
	if (isnan(frac))
		frac = 0;
	frac = frac < 0 ? 0 : frac > 1 ? 1 : frac;
	bool utf8 = x->c->utf8;
	int eighths = (int)lround(frac * w * (utf8 ? 8 : 1));
	int full = utf8 ? eighths / 8 : eighths, part = utf8 ? eighths % 8 : 0;
	for (int i = 0; i < w; i++) {
		const char *s = i < full ? g->full : i == full && part ? g->eighth[part] : " ";
		top_put(x->c, clip, col + i, y, st, s);
	}
	top_put(x->c, clip, col + w, y, TOP_S_DIM, g->bar_r);
}

/* "label [bar] value" as one field. */
static bool bar_field(line *l, int gap, const char *label, int w, double frac, top_style fill,
                      top_style vst, const char *value)
{
	int need = gap + (label[0] ? (int)strlen(label) + 1 : 0) + w + 2 + 1 +
	           top_text_width(l->x->c, value);
	if (!fits(l, need))
		return false;
	l->col += gap;
	if (label[0]) {
		put(l, TOP_S_DIM, label);
		l->col++;
	}
	draw_bar(l->x, l->r, l->col, l->y, w, frac, fill);
	l->col += w + 2 + 1;
	put(l, vst, value);
	return true;
}

/* ------------------------------------------------------------------ header */

/* Returns the first column the header left free. */
static int draw_header(ctx *x)
{
	const top_frame *f = x->f;
	const top_model *m = f->m;
	top_rect r = f->L->p[TOP_P_HEADER];
	top_fill(x->c, r, TOP_S_HEAD, L' ');
	line l = line_at(x, r, r.x, r.y);
	char buf[256];
	/* Most important first: what does not fit at the end is left out. */
	text(&l, TOP_S_HEAD, "gpuwhy top");
	int shown = top_model_gpus_shown(m), drawn = f->L->gpus_shown;
	if (m->ngpu) {
		if (drawn < shown)
			snprintf(buf, sizeof buf, "  %d/%d GPUs fit (g)", drawn, shown);
		else if (shown < m->ngpu)
			snprintf(buf, sizeof buf, "  %d of %d GPUs (g)", shown, m->ngpu);
		else
			snprintf(buf, sizeof buf, "  %d GPU%s", m->ngpu, m->ngpu == 1 ? "" : "s");
		text(&l, TOP_S_HEAD, buf);
	}
	if (m->paused)
		text(&l, TOP_S_HEAD, "  [PAUSED]");
	if (f->record_path) {
		const char *base = strrchr(f->record_path, '/');
		snprintf(buf, sizeof buf, "  [rec %s]", base ? base + 1 : f->record_path);
		text(&l, TOP_S_HEAD, buf);
	}
	const snapshot *s = top_model_shown(m);
	if (s) {
		time_t t = (time_t)s->t_wall;
		struct tm tm;
		localtime_r(&t, &tm);
		strftime(buf + 2, sizeof buf - 2, "%H:%M:%S", &tm);
		buf[0] = buf[1] = ' ';
		text(&l, TOP_S_HEAD, buf);
	}
	double iv = (double)f->interval_ns / 1e9;
	snprintf(buf, sizeof buf, iv < 1 ? "  every %.0f ms" : "  every %.3g s",
	         iv < 1 ? iv * 1000 : iv);
	text(&l, TOP_S_HEAD, buf);
	if (f->hostname && f->hostname[0]) {
		snprintf(buf, sizeof buf, "  on %s", f->hostname);
		text(&l, TOP_S_HEAD, buf);
	}
	return l.col;
}

/* Name the graph in the header, right-aligned above it, when the header leaves room. */
static void graph_caption(ctx *x, int header_end)
{
	const top_layout *L = x->f->L;
	top_rect gr = L->p[TOP_P_GRAPH], hr = L->p[TOP_P_HEADER];
	if (!gr.w || !L->graph_beside)
		return;
	const char *cap = "GPU util history ";
	int w = (int)strlen(cap);
	if (hr.x + hr.w - w >= header_end + 2 && hr.x + hr.w - w >= gr.x)
		top_put(x->c, hr, hr.x + hr.w - w, hr.y, TOP_S_HEAD, cap);
}

/* ------------------------------------------------------------------ GPUs */

/* The name without the vendor prefix every GPU shares. */
static const char *short_name(const char *name)
{
	return strncmp(name, "NVIDIA ", 7) ? name : name + 7;
}

static double power_limit(const gpu_values *v)
{
	if (v->ok[GM_POWER_ENFORCED_LIMIT] && v->v[GM_POWER_ENFORCED_LIMIT] > 0)
		return v->v[GM_POWER_ENFORCED_LIMIT];
	if (v->ok[GM_POWER_LIMIT] && v->v[GM_POWER_LIMIT] > 0)
		return v->v[GM_POWER_LIMIT];
	return NAN;
}

static double ratio(const gpu_values *v, gpu_metric_id a, gpu_metric_id b)
{
	if (!v->ok[a] || !v->ok[b] || v->v[b] <= 0)
		return NAN;
	return v->v[a] / v->v[b];
}

static double val(const gpu_values *v, gpu_metric_id id)
{
	return v->ok[id] ? v->v[id] : NAN;
}

static void fmt_pct(double v, char *out, size_t len)
{
	if (isnan(v))
		snprintf(out, len, "n/a");
	else
		snprintf(out, len, "%3.0f%%", v);
}

static void fmt_mem_pair(const gpu_values *v, char *out, size_t len)
{
	char a[16], b[16];
	fmt_mib(val(v, GM_MEM_USED), a, sizeof a);
	fmt_mib(val(v, GM_MEM_TOTAL), b, sizeof b);
	/* Padded, so the fields after it line up from GPU to GPU. */
	snprintf(out, len, "%5s/%s", a, b);
}

static void fmt_power(const gpu_values *v, char *out, size_t len)
{
	char a[16], b[16];
	fmt_num(v, GM_POWER_DRAW, "%.0f", a, sizeof a);
	double lim = power_limit(v);
	if (isnan(lim))
		snprintf(b, sizeof b, "n/a");
	else
		snprintf(b, sizeof b, "%.0f", lim);
	snprintf(out, len, "%3s/%sW", a, b);
}

/* "Gen5x16", or "Gen3x8<Gen5x16" when the link trained below its maximum. */
static bool fmt_link(const gpu_values *v, char *out, size_t len)
{
	char g[8], w[8], gm[8], wm[8];
	fmt_num(v, GM_PCIE_GEN_CUR, "%.0f", g, sizeof g);
	fmt_num(v, GM_PCIE_WIDTH_CUR, "%.0f", w, sizeof w);
	bool down = (v->ok[GM_PCIE_GEN_CUR] && v->ok[GM_PCIE_GEN_MAX] &&
	             v->v[GM_PCIE_GEN_CUR] < v->v[GM_PCIE_GEN_MAX]) ||
	            (v->ok[GM_PCIE_WIDTH_CUR] && v->ok[GM_PCIE_WIDTH_MAX] &&
	             v->v[GM_PCIE_WIDTH_CUR] < v->v[GM_PCIE_WIDTH_MAX]);
	if (down) {
		fmt_num(v, GM_PCIE_GEN_MAX, "%.0f", gm, sizeof gm);
		fmt_num(v, GM_PCIE_WIDTH_MAX, "%.0f", wm, sizeof wm);
		snprintf(out, len, "Gen%sx%s<Gen%sx%s", g, w, gm, wm);
	} else {
		snprintf(out, len, "Gen%sx%s", g, w);
	}
	return down;
}

static void fmt_pcie_io(const gpu_values *v, char *out, size_t len)
{
	char rx[16], tx[16];
	fmt_rate(v->ok[GM_PCIE_RX] ? v->v[GM_PCIE_RX] * 1048576.0 : NAN, rx, sizeof rx);
	fmt_rate(v->ok[GM_PCIE_TX] ? v->v[GM_PCIE_TX] * 1048576.0 : NAN, tx, sizeof tx);
	snprintf(out, len, "rx %s/s tx %s/s", rx, tx);
}

/* The clock event reasons in the driver's words, as status shows them. */
static void fmt_reasons(const gpu_values *v, char *out, size_t len)
{
	if (!v->ok[GM_CLK_REASONS]) {
		snprintf(out, len, "n/a");
		return;
	}
	gpu_reasons_display((uint64_t)v->v[GM_CLK_REASONS], out, len);
}

static bool reasons_bad(const gpu_values *v)
{
	static const gpu_metric_id bad[] = {GM_CLK_R_HW_SLOW, GM_CLK_R_HW_THERMAL,
	                                    GM_CLK_R_HW_POWER_BRAKE, GM_CLK_R_SW_THERMAL};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		if (v->ok[bad[i]] && v->v[bad[i]] >= 0.5)
			return true;
	return false;
}

static top_style temp_style(const gpu_values *v)
{
	if (!v->ok[GM_TEMP_GPU])
		return TOP_S_DIM;
	double slow = v->ok[GM_TEMP_SLOWDOWN] ? v->v[GM_TEMP_SLOWDOWN] : 85;
	return v->v[GM_TEMP_GPU] >= slow        ? TOP_S_HIGH
	       : v->v[GM_TEMP_GPU] >= slow - 10 ? TOP_S_MID
	                                        : TOP_S_NORMAL;
}

static top_style st_of(const char *s, top_style st)
{
	return strncmp(s, "n/a", 3) ? st : TOP_S_DIM;
}

/* One line per GPU: everything that fits, most important first. */
static void gpu_compact(ctx *x, top_rect r, int y, int g, const gpu_values *v)
{
	const top_gpu_info *gi = &x->f->m->gpu[g];
	line l = line_at(x, r, r.x, y);
	char buf[64], val_s[32];
	snprintf(buf, sizeof buf, "%2d", gi->index);
	text(&l, TOP_S_ACCENT, buf);
	double util = val(v, GM_UTIL_GPU);
	fmt_pct(util, val_s, sizeof val_s);
	bar_field(&l, 1, "", 10, util / 100, TOP_S_OK, st_of(val_s, TOP_S_NORMAL), val_s);
	if (v->ok[GM_GPM_SM_ACTIVE]) {
		snprintf(buf, sizeof buf, "%3.0f%%", v->v[GM_GPM_SM_ACTIVE]);
		pair(&l, 1, "sm", TOP_S_NORMAL, buf);
	}
	double mf = ratio(v, GM_MEM_USED, GM_MEM_TOTAL);
	fmt_mem_pair(v, buf, sizeof buf);
	bar_field(&l, 1, "mem", 5, mf, load_style(mf * 100, 80, 95), st_of(buf, TOP_S_NORMAL), buf);
	fmt_power(v, buf, sizeof buf);
	pair(&l, 1, "", load_style(100 * val(v, GM_POWER_DRAW) / power_limit(v), 90, 100), buf);
	fmt_num(v, GM_TEMP_GPU, "%.0fC", buf, sizeof buf);
	pair(&l, 1, "", temp_style(v), buf);
	fmt_num(v, GM_CLK_SM, "%4.0fMHz", buf, sizeof buf);
	pair(&l, 1, "", reasons_bad(v) ? TOP_S_HIGH : st_of(buf, TOP_S_NORMAL), buf);
	bool down = fmt_link(v, buf, sizeof buf);
	pair(&l, 1, "", down ? TOP_S_MID : TOP_S_NORMAL, buf);
	fmt_pcie_io(v, buf, sizeof buf);
	pair(&l, 1, "", TOP_S_NORMAL, buf);
	pair(&l, 1, "", TOP_S_DIM, short_name(gi->name));
}

static void gpu_full(ctx *x, top_rect r, int y, int rows, int g, const gpu_values *v)
{
	const top_gpu_info *gi = &x->f->m->gpu[g];
	char buf[96], vs[48];
	/* line 1: identity, util, SM active, memory */
	line l = line_at(x, r, r.x, y);
	snprintf(buf, sizeof buf, "GPU %d", gi->index);
	text(&l, TOP_S_ACCENT, buf);
	/* Narrow blocks: shorter name and bars, SM active as a number. */
	bool wide = r.w >= 100;
	snprintf(buf, sizeof buf, wide ? " %-16.16s" : " %-12.12s", short_name(gi->name));
	text(&l, TOP_S_DIM, buf);
	int bw = r.w >= 110 ? 14 : wide ? 10 : 8;
	double util = val(v, GM_UTIL_GPU);
	fmt_pct(util, vs, sizeof vs);
	/* MIG on: no whole-GPU utilization exists; say why instead of a bare n/a */
	if (gi->nmig > 0 && !v->ok[GM_UTIL_GPU])
		snprintf(vs, sizeof vs, "MIG");
	bar_field(&l, 1, "util", bw, util / 100, TOP_S_OK, st_of(vs, TOP_S_NORMAL), vs);
	double sm = val(v, GM_GPM_SM_ACTIVE);
	fmt_pct(sm, vs, sizeof vs);
	if (wide)
		bar_field(&l, 2, "SM", bw / 2, sm / 100, TOP_S_OK, st_of(vs, TOP_S_NORMAL), vs);
	else
		pair(&l, 2, "SM", st_of(vs, TOP_S_NORMAL), vs);
	double mf = ratio(v, GM_MEM_USED, GM_MEM_TOTAL);
	fmt_mem_pair(v, vs, sizeof vs);
	bar_field(&l, 2, "mem", bw, mf, load_style(mf * 100, 80, 95), st_of(vs, TOP_S_NORMAL), vs);
	if (rows < 2)
		return;
	/* line 2: power, temperature, clocks, PCIe */
	l = line_at(x, r, r.x + 6, y + 1);
	double lim = power_limit(v), pw = val(v, GM_POWER_DRAW);
	fmt_power(v, vs, sizeof vs);
	bar_field(&l, 0, "pwr", bw / 2, pw / lim, load_style(100 * pw / lim, 90, 100),
	          st_of(vs, TOP_S_NORMAL), vs);
	fmt_num(v, GM_TEMP_GPU, "%.0fC", vs, sizeof vs);
	pair(&l, 2, "temp", temp_style(v), vs);
	char a[16], b[16];
	fmt_num(v, GM_CLK_SM, "%4.0f", a, sizeof a);
	fmt_num(v, GM_CLK_MAX_SM, "%.0f", b, sizeof b);
	snprintf(vs, sizeof vs, "%s/%sMHz", a, b);
	pair(&l, 2, "sm clk", reasons_bad(v) ? TOP_S_HIGH : st_of(vs, TOP_S_NORMAL), vs);
	bool down = fmt_link(v, vs, sizeof vs);
	pair(&l, 2, "PCIe", down ? TOP_S_MID : TOP_S_NORMAL, vs);
	fmt_pcie_io(v, vs, sizeof vs);
	pair(&l, 1, "", TOP_S_NORMAL, vs);
	fmt_num(v, GM_CLK_MEM, "%.0fMHz", vs, sizeof vs);
	pair(&l, 2, "mem clk", st_of(vs, TOP_S_NORMAL), vs);
	if (rows < 3)
		return;
	/* line 3: state and reasons, fan, ECC, codecs */
	l = line_at(x, r, r.x + 6, y + 2);
	fmt_num(v, GM_PSTATE, "P%.0f", vs, sizeof vs);
	pair(&l, 0, "pstate", st_of(vs, TOP_S_NORMAL), vs);
	fmt_reasons(v, buf, sizeof buf);
	pair(&l, 2, "clocks held by", reasons_bad(v) ? TOP_S_HIGH : st_of(buf, TOP_S_NORMAL), buf);
	fmt_num(v, GM_FAN, "%.0f%%", vs, sizeof vs);
	pair(&l, 2, "fan", st_of(vs, TOP_S_NORMAL), vs);
	fmt_num(v, GM_ECC_UNCORR_VOL, "%.0f", vs, sizeof vs);
	bool ecc = v->ok[GM_ECC_UNCORR_VOL] && v->v[GM_ECC_UNCORR_VOL] > 0;
	pair(&l, 2, "ECC uncorr", ecc ? TOP_S_HIGH : st_of(vs, TOP_S_NORMAL), vs);
	fmt_num(v, GM_PCIE_REPLAY, "%.0f", vs, sizeof vs);
	pair(&l, 2, "replays", st_of(vs, TOP_S_NORMAL), vs);
	if (gi->nmig > 0) {
		/* MIG on: the driver has no whole-GPU utilization (util shows n/a) */
		snprintf(vs, sizeof vs, "%d instances, no GPU util", gi->nmig);
		pair(&l, 2, "MIG", TOP_S_MID, vs);
	}
	if (rows < 4)
		return;
	/* line 4: where it sits, and its MIG instances */
	l = line_at(x, r, r.x + 6, y + 3);
	pair(&l, 0, "bus", TOP_S_DIM, gi->pci_bus_id[0] ? gi->pci_bus_id : "n/a");
	if (gi->nmig > 0)
		pair(&l, 2, "MIG", TOP_S_DIM, gi->mig);
	else
		pair(&l, 2, "", TOP_S_DIM, gi->uuid[0] ? gi->uuid : "n/a");
}

/* The GPU positions on screen, in order: the shown ones that fit. */
static int visible_gpus(const top_frame *f, int *pos)
{
	int n = 0;
	for (int g = 0; g < f->m->ngpu && n < f->L->gpus_shown; g++)
		if (f->m->shown_gpu[g])
			pos[n++] = g;
	return n;
}

static void draw_gpus(ctx *x)
{
	const top_frame *f = x->f;
	top_rect r = f->L->p[TOP_P_GPUS];
	const snapshot *s = top_model_shown(f->m);
	if (f->m->ngpu == 0) {
		text(&(line){x, r, r.x, r.y, false}, TOP_S_DIM,
		     f->no_gpu ? f->no_gpu : "no GPU: showing the host only");
		return;
	}
	int pos[GPU_MAX], n = visible_gpus(f, pos);
	if (n == 0) {
		text(&(line){x, r, r.x, r.y, false}, TOP_S_DIM, "no GPU selected (g, then 'all')");
		return;
	}
	int gh = f->L->gpu_rows;
	for (int i = 0; i < n; i++) {
		int g = pos[i], y = r.y + i * gh;
		if (!s || g >= s->ngpu) {
			line l = line_at(x, r, r.x, y);
			char buf[64];
			snprintf(buf, sizeof buf, "GPU %d  waiting for the first sample",
			         f->m->gpu[g].index);
			text(&l, TOP_S_DIM, buf);
			continue;
		}
		const gpu_values *v = &s->gpu[g];
		if (v->lost) {
			line l = line_at(x, r, r.x, y);
			char buf[128];
			snprintf(buf, sizeof buf,
			         "GPU %d  LOST: fell off the bus; check the kernel log for Xid 79",
			         f->m->gpu[g].index);
			text(&l, TOP_S_ERR, buf);
			continue;
		}
		if (gh == 1)
			gpu_compact(x, r, y, g, v);
		else
			gpu_full(x, r, y, gh, g, v);
	}
}

/* Utilization history: one column per sample, the newest on the right. */
static void draw_history(ctx *x, top_rect area, int g)
{
	const top_model *m = x->f->m;
	int rows = area.h;
	for (int k = 0; k < area.w; k++) {
		double u;
		if (!top_model_util(m, k, g, &u))
			break;
		int col = area.x + area.w - 1 - k;
		if (isnan(u)) {
			/* Absent is not 0 %: a dim dot on the base line. */
			top_put(x->c, area, col, area.y + rows - 1, TOP_S_DIM, x->g->dot);
			continue;
		}
		u = u < 0 ? 0 : u > 100 ? 100 : u;
		int total = (int)lround(u / 100.0 * rows * 8);
		/* Above the column the cells stay blank (and unstyled: a styled blank
		 * looks the same but would count as a change on the next frame). */
		for (int r = 0; r < rows && total - r * 8 > 0; r++) {
			int fill = total - r * 8;
			fill = fill > 8 ? 8 : fill;
			top_put(x->c, area, col, area.y + rows - 1 - r, TOP_S_OK,
			        x->g->level[fill]);
		}
	}
}

static void draw_graph(ctx *x)
{
	const top_frame *f = x->f;
	top_rect r = f->L->p[TOP_P_GRAPH];
	if (!r.w || !r.h)
		return;
	int pos[GPU_MAX], n = visible_gpus(f, pos);
	int each = f->L->graph_rows;
	for (int i = 0; i < n; i++) {
		top_rect area = {r.x + 1, r.y + i * each, r.w - 1, each};
		if (!f->L->graph_beside) {
			char lab[16];
			snprintf(lab, sizeof lab, "%2d ", f->m->gpu[pos[i]].index);
			top_put(x->c, r, r.x, area.y, TOP_S_DIM, lab);
			area.x = r.x + 3;
			area.w = r.w - 3;
		}
		if (area.h > r.y + r.h - area.y)
			area.h = r.y + r.h - area.y;
		draw_history(x, area, pos[i]);
	}
}

/* ------------------------------------------------------------------ host */

static void draw_cpu_cells(ctx *x, top_rect r, const snapshot *s)
{
	const top_layout *L = x->f->L;
	for (int i = 0; i < s->ncpu; i++) {
		int row = i / L->cpu_per_row, col = i % L->cpu_per_row;
		if (row >= L->cpu_rows)
			break;
		int cx = r.x + col * TOP_CPU_CELL_W, y = r.y + row;
		top_rect cell = {cx, y, TOP_CPU_CELL_W, 1};
		top_putf(x->c, cell, cx, y, TOP_S_DIM, "%3d", s->cpu_id[i]);
		double b = s->cpu_busy[i];
		draw_bar(x, cell, cx + 3, y, TOP_CPU_CELL_W - 9, b / 100, load_style(b, 70, 90));
		if (isnan(b))
			top_put(x->c, cell, cx + TOP_CPU_CELL_W - 4, y, TOP_S_DIM, "n/a");
		else
			top_putf(x->c, cell, cx + TOP_CPU_CELL_W - 4, y,
			         b >= 90 ? TOP_S_HIGH : TOP_S_NORMAL, "%3.0f", b);
	}
}

static void draw_cpu_ticks(ctx *x, top_rect r, const snapshot *s)
{
	const top_layout *L = x->f->L;
	top_put(x->c, r, r.x, r.y, TOP_S_DIM, "cpu ");
	int per = L->cores_per_tick < 1 ? 1 : L->cores_per_tick;
	for (int t = 0; t * per < s->ncpu; t++) {
		/* A group shows its busiest core: one saturated core must stay visible. */
		double b = NAN;
		for (int i = t * per; i < (t + 1) * per && i < s->ncpu; i++)
			if (!isnan(s->cpu_busy[i]) && (isnan(b) || s->cpu_busy[i] > b))
				b = s->cpu_busy[i];
		int row = t / L->cpu_per_row, col = t % L->cpu_per_row;
		if (row >= L->cpu_rows)
			break;
		int lvl = isnan(b) ? 0 : (int)lround(b / 100 * 8);
		lvl = lvl < 0 ? 0 : lvl > 8 ? 8 : lvl;
		const char *glyph = isnan(b) ? "?" : lvl == 0 ? x->g->level[1] : x->g->level[lvl];
		top_put(x->c, r, r.x + 4 + col, r.y + row, load_style(b, 70, 90), glyph);
	}
}

static void draw_host(ctx *x)
{
	const top_frame *f = x->f;
	top_rect r = f->L->p[TOP_P_HOST];
	const snapshot *s = top_model_shown(f->m);
	if (!r.w || !r.h)
		return;
	if (!s) {
		top_put(x->c, r, r.x, r.y, TOP_S_DIM, "host: waiting for the first sample");
		return;
	}
	if (f->L->cpu_style == TOP_CPU_CELLS)
		draw_cpu_cells(x, r, s);
	else
		draw_cpu_ticks(x, r, s);
	const double *h = s->h;
	line l = line_at(x, r, r.x, r.y + f->L->cpu_rows);
	char a[16], b[16], buf[96];
	double mf = h[HM_MEM_USED] / h[HM_MEM_TOTAL];
	fmt_mib(h[HM_MEM_USED], a, sizeof a);
	fmt_mib(h[HM_MEM_TOTAL], b, sizeof b);
	snprintf(buf, sizeof buf, "%s/%s", a, b);
	bar_field(&l, 0, host_metrics[HM_MEM_USED].label, 8, mf, load_style(mf * 100, 80, 95),
	          st_of(buf, TOP_S_NORMAL), buf);
	fmt_mib(h[HM_SWAP_USED], a, sizeof a);
	pair(&l, 2, host_metrics[HM_SWAP_USED].label, st_of(a, TOP_S_NORMAL), a);
	fmt_rate(h[HM_SWAP_IN], a, sizeof a);
	fmt_rate(h[HM_SWAP_OUT], b, sizeof b);
	snprintf(buf, sizeof buf, "%s/%s", a, b);
	bool swapping = !isnan(h[HM_SWAP_IN]) && h[HM_SWAP_IN] > 1048576;
	pair(&l, 1, host_metrics[HM_SWAP_IN].label, swapping ? TOP_S_HIGH : TOP_S_NORMAL, buf);
	fmt_rate(h[HM_DISK_READ], a, sizeof a);
	fmt_rate(h[HM_DISK_WRITE], b, sizeof b);
	snprintf(buf, sizeof buf, "r %s w %s", a, b);
	pair(&l, 2, host_metrics[HM_DISK_READ].label, TOP_S_NORMAL, buf);
	if (!isnan(h[HM_DISK_BUSY_MAX])) {
		snprintf(buf, sizeof buf, "%.0f%%", h[HM_DISK_BUSY_MAX]);
		pair(&l, 1, host_metrics[HM_DISK_BUSY_MAX].label,
		     load_style(h[HM_DISK_BUSY_MAX], 70, 90), buf);
	}
	if (!isnan(h[HM_CPU_IOWAIT])) {
		snprintf(buf, sizeof buf, "%.0f%%", h[HM_CPU_IOWAIT]);
		pair(&l, 2, host_metrics[HM_CPU_IOWAIT].label, load_style(h[HM_CPU_IOWAIT], 10, 30),
		     buf);
	}
	fmt_rate(h[HM_NET_RX], a, sizeof a);
	fmt_rate(h[HM_NET_TX], b, sizeof b);
	snprintf(buf, sizeof buf, "rx %s tx %s", a, b);
	pair(&l, 2, host_metrics[HM_NET_RX].label, TOP_S_NORMAL, buf);
	if (!isnan(h[HM_LOAD1])) {
		snprintf(buf, sizeof buf, "%.2f", h[HM_LOAD1]);
		pair(&l, 2, host_metrics[HM_LOAD1].label, TOP_S_NORMAL, buf);
	}
}

/* ------------------------------------------------------------------ processes */

typedef struct {
	const char *title;
	int w;
	bool right;
	top_sort_key key;
	int drop; /* dropped first when narrow: highest first; 0 never */
} pcol;

enum { C_PID, C_USER, C_GPU, C_MEM, C_SM, C_CPU, C_RSS, C_CMD, C__N };
static const pcol pcols[C__N] = {
    [C_PID] = {"PID", 7, true, TOP_SORT_PID, 0}, [C_USER] = {"USER", 9, false, TOP_SORT_USER, 5},
    [C_GPU] = {"GPU", 4, true, TOP_SORT_GPU, 0}, [C_MEM] = {"GPU MEM", 8, true, TOP_SORT_GPUMEM, 0},
    [C_SM] = {"SM%", 4, true, TOP_SORT_SM, 3},   [C_CPU] = {"CPU%", 5, true, TOP_SORT_CPU, 2},
    [C_RSS] = {"RSS", 6, true, TOP_SORT_RSS, 4}, [C_CMD] = {"COMMAND", 0, false, TOP_SORT_CMD, 0},
};
#define CMD_MIN 12

/* Column x positions for width w (-1: column dropped). Returns the command's x. */
static int columns(int w, int *xs)
{
	bool on[C__N];
	for (int c = 0; c < C__N; c++)
		on[c] = true;
	for (;;) {
		int need = CMD_MIN;
		for (int c = 0; c < C_CMD; c++)
			need += on[c] ? pcols[c].w + 1 : 0;
		if (need <= w)
			break;
		int worst = -1;
		for (int c = 0; c < C_CMD; c++)
			if (on[c] && pcols[c].drop &&
			    (worst < 0 || pcols[c].drop > pcols[worst].drop))
				worst = c;
		if (worst < 0)
			break;
		on[worst] = false;
	}
	int x = 0;
	for (int c = 0; c < C__N; c++) {
		xs[c] = on[c] ? x : -1;
		if (on[c])
			x += pcols[c].w + 1;
	}
	return xs[C_CMD];
}

int top_render_proc_rows(const top_layout *L)
{
	int h = L->p[TOP_P_PROCS].h - 1;
	return h > 0 ? h : 0;
}

static void cell_text(ctx *x, top_rect r, int y, int c, const int *xs, top_style st, const char *s)
{
	if (xs[c] < 0)
		return;
	int w = c == C_CMD ? r.w - xs[c] : pcols[c].w;
	top_rect clip = {r.x + xs[c], y, w, 1};
	int tw = top_text_width(x->c, s);
	int col = pcols[c].right && tw < w ? clip.x + w - tw : clip.x;
	top_put(x->c, clip, col, y, st, s);
}

static void draw_proc_header(ctx *x, top_rect r, const int *xs)
{
	const top_model *m = x->f->m;
	top_fill(x->c, (top_rect){r.x, r.y, r.w, 1}, TOP_S_HEAD, L' ');
	for (int c = 0; c < C__N; c++) {
		char t[32];
		bool sorted = pcols[c].key == m->sort;
		/* The arrow says which end comes first: large amounts first is "down". */
		bool down = (m->sort == TOP_SORT_GPUMEM || m->sort == TOP_SORT_SM ||
		             m->sort == TOP_SORT_CPU || m->sort == TOP_SORT_RSS) != m->reverse;
		snprintf(t, sizeof t, "%s%s", pcols[c].title,
		         sorted ? (down ? x->g->down : x->g->up) : "");
		cell_text(x, r, r.y, c, xs, TOP_S_HEAD, t);
	}
	char info[96];
	if (m->filter[0])
		snprintf(info, sizeof info, "filter '%s': %d of %d ", m->filter, m->nrows,
		         m->nprocs_all);
	else
		snprintf(info, sizeof info, "%d process%s ", m->nrows, m->nrows == 1 ? "" : "es");
	int iw = top_text_width(x->c, info);
	if (xs[C_CMD] >= 0 && r.w - iw > xs[C_CMD] + 10)
		top_put(x->c, r, r.x + r.w - iw, r.y, TOP_S_HEAD, info);
}

static void draw_proc_row(ctx *x, top_rect r, int y, const int *xs, const tl_proc *p, bool sel)
{
	char b[160];
	top_style st = sel ? TOP_S_SEL : TOP_S_NORMAL;
	if (sel)
		top_fill(x->c, (top_rect){r.x, y, r.w, 1}, TOP_S_SEL, L' ');
	top_style dim = sel ? TOP_S_SEL : TOP_S_DIM;
	snprintf(b, sizeof b, "%u", p->pid);
	cell_text(x, r, y, C_PID, xs, st, b);
	char safe[GW_TERM_SAFE_LEN(sizeof p->cmd)];
	cell_text(x, r, y, C_USER, xs, p->user[0] ? st : dim,
	          p->user[0] ? gw_term_safe(p->user, safe, sizeof safe) : "?");
	snprintf(b, sizeof b, "%d", x->f->m->gpu[p->gpu].index);
	cell_text(x, r, y, C_GPU, xs, st, b);
	fmt_mib(p->gpu_mem_mib, b, sizeof b);
	cell_text(x, r, y, C_MEM, xs, isnan(p->gpu_mem_mib) ? dim : st, b);
	if (isnan(p->sm_pct))
		snprintf(b, sizeof b, "n/a");
	else
		snprintf(b, sizeof b, "%.0f", p->sm_pct);
	cell_text(x, r, y, C_SM, xs, isnan(p->sm_pct) ? dim : st, b);
	if (isnan(p->cpu_pct))
		snprintf(b, sizeof b, "n/a");
	else
		snprintf(b, sizeof b, "%.0f", p->cpu_pct);
	cell_text(x, r, y, C_CPU, xs,
	          isnan(p->cpu_pct)          ? dim
	          : !sel && p->cpu_pct >= 90 ? TOP_S_HIGH
	                                     : st,
	          b);
	fmt_mib(p->rss_mib, b, sizeof b);
	cell_text(x, r, y, C_RSS, xs, isnan(p->rss_mib) ? dim : st, b);
	if (!p->alive)
		cell_text(x, r, y, C_CMD, xs, dim,
		          "[not in /proc here: exited, or another PID namespace]");
	else
		cell_text(x, r, y, C_CMD, xs, st,
		          p->cmd[0] ? gw_term_safe(p->cmd, safe, sizeof safe) : "?");
}

static void draw_procs(ctx *x)
{
	const top_frame *f = x->f;
	const top_model *m = f->m;
	top_rect r = f->L->p[TOP_P_PROCS];
	if (!r.w || !r.h)
		return;
	int xs[C__N];
	columns(r.w, xs);
	draw_proc_header(x, r, xs);
	int visible = r.h - 1;
	if (m->nrows == 0) {
		const char *msg = "no GPU processes";
		if (!top_model_shown(m))
			msg = "waiting for the first sample";
		else if (m->filter[0])
			msg = "no process matches the filter (/ to change, Esc clears)";
		else if (m->ngpu)
			msg = "no process is using the shown GPUs";
		top_put(x->c, r, r.x + 1, r.y + 1, TOP_S_DIM, msg);
		return;
	}
	int first = m->scroll;
	if (m->sel >= first + visible)
		first = m->sel - visible + 1;
	for (int i = 0; i < visible && first + i < m->nrows; i++)
		draw_proc_row(x, r, r.y + 1 + i, xs, m->rows[first + i].p, first + i == m->sel);
}

int top_render_hit_column(const top_layout *L, int x)
{
	top_rect r = L->p[TOP_P_PROCS];
	int xs[C__N];
	columns(r.w, xs);
	int col = x - r.x, best = -1;
	for (int c = 0; c < C__N; c++)
		if (xs[c] >= 0 && col >= xs[c])
			best = c;
	return best < 0 ? -1 : (int)pcols[best].key;
}

int top_render_hit_row(const top_layout *L, const top_model *m, int x, int y, bool *header)
{
	top_rect r = L->p[TOP_P_PROCS];
	*header = false;
	if (!r.w || x < r.x || x >= r.x + r.w || y < r.y || y >= r.y + r.h)
		return -1;
	if (y == r.y) {
		*header = true;
		return -1;
	}
	int visible = r.h - 1, first = m->scroll;
	if (m->sel >= first + visible)
		first = m->sel - visible + 1;
	int row = first + (y - r.y - 1);
	return row < m->nrows ? row : -1;
}

/* ------------------------------------------------------------------ tree */

static void draw_tree(ctx *x)
{
	const top_frame *f = x->f;
	top_rect r = f->L->p[TOP_P_TREE];
	if (!r.w || !r.h)
		return;
	top_tree_line lines[256];
	int n = top_model_tree(f->m, lines, 256);
	top_fill(x->c, (top_rect){r.x, r.y, r.w, 1}, TOP_S_HEAD, L' ');
	char buf[200];
	if (f->m->sel >= 0)
		snprintf(buf, sizeof buf, " tree of PID %u: PID, CPU %%, RSS, command",
		         f->m->sel_pid);
	else
		snprintf(buf, sizeof buf, " process tree");
	top_put(x->c, r, r.x, r.y, TOP_S_HEAD, buf);
	/* Beside the list: a rule between the two. */
	if (r.x > 0)
		for (int y = r.y + 1; y < r.y + r.h; y++)
			top_put(x->c, r, r.x, y, TOP_S_DIM, x->g->box_v);
	if (n == 0) {
		top_put(x->c, r, r.x + 1, r.y + 1, TOP_S_DIM,
		        "select a GPU process (Up/Down) to see its tree");
		return;
	}
	/* Keep the selected process on screen when the tree is taller than the panel. */
	int sel = 0;
	for (int i = 0; i < n; i++)
		if (lines[i].selected)
			sel = i;
	int visible = r.h - 1, first = sel >= visible ? sel - visible + 1 : 0;
	for (int i = 0; i < visible && first + i < n; i++) {
		const top_tree_line *t = &lines[first + i];
		int y = r.y + 1 + i;
		top_style st = t->selected ? TOP_S_SEL : TOP_S_NORMAL;
		if (t->selected)
			top_fill(x->c, (top_rect){r.x, y, r.w, 1}, TOP_S_SEL, L' ');
		int col = r.x + 1;
		for (int d = 1; d < t->depth && d < 32; d++)
			col = top_put(x->c, r, col, y, t->selected ? st : TOP_S_DIM,
			              t->open & (1u << d) ? x->g->t_pipe : x->g->t_none);
		if (t->depth > 0)
			col = top_put(x->c, r, col, y, t->selected ? st : TOP_S_DIM,
			              t->last ? x->g->t_last : x->g->t_mid);
		const tl_proc *p = t->p;
		char cpu[16], rss[16];
		if (isnan(p->cpu_pct))
			snprintf(cpu, sizeof cpu, "n/a");
		else
			snprintf(cpu, sizeof cpu, "%.0f", p->cpu_pct);
		fmt_mib(p->rss_mib, rss, sizeof rss);
		snprintf(buf, sizeof buf, "%u %4s %5s ", p->pid, cpu, rss);
		col = top_put(x->c, r, col, y, st, buf);
		if (t->gpus) {
			char g[320] = "[GPU"; /* 64 GPUs of up to 4 characters each */
			for (int k = 0; k < f->m->ngpu && k < 64; k++) {
				size_t used = strlen(g);
				if (t->gpus & (1ULL << k))
					snprintf(g + used, sizeof g - used, " %d",
					         f->m->gpu[k].index);
			}
			size_t used = strlen(g);
			snprintf(g + used, sizeof g - used, "] ");
			col = top_put(x->c, r, col, y, t->selected ? st : TOP_S_ACCENT, g);
		}
		char safe[GW_TERM_SAFE_LEN(sizeof p->cmd)];
		top_put(x->c, r, col, y, st,
		        p->cmd[0] ? gw_term_safe(p->cmd, safe, sizeof safe) : "?");
	}
}

/* ------------------------------------------------------------------ status, keys */

static void draw_status(ctx *x)
{
	const top_frame *f = x->f;
	const top_model *m = f->m;
	top_rect r = f->L->p[TOP_P_STATUS];
	const char *prompt = f->in ? top_input_prompt(f->in) : NULL;
	if (prompt) {
		int col = top_put(x->c, r, r.x, r.y, TOP_S_ACCENT, prompt);
		col = top_put(x->c, r, col, r.y, TOP_S_NORMAL, f->in->buf);
		top_put(x->c, r, col, r.y, TOP_S_SEL, " ");
		return;
	}
	if (f->message) {
		top_put(x->c, r, r.x, r.y, TOP_S_ACCENT, f->message);
		return;
	}
	if (m->nfindings > 0) {
		const top_finding *fd = &m->findings[0];
		top_style st = fd->severity == TOP_SEV_ERROR  ? TOP_S_ERR
		               : fd->severity == TOP_SEV_WARN ? TOP_S_WARN
		                                              : TOP_S_NORMAL;
		char more[48] = "";
		if (m->nfindings > 1)
			snprintf(more, sizeof more, "  (+%d more: h)", m->nfindings - 1);
		int mw = (int)strlen(more);
		top_rect main = {r.x, r.y, r.w - mw > 10 ? r.w - mw : r.w, 1};
		int col = top_put(x->c, main, r.x, r.y, st, fd->text);
		int end = main.x + main.w;
		if (col > end) {
			/* Cut: say so; the help box (h) has the whole line. */
			top_put(x->c, main, end - 3, r.y, st, "...");
			col = end;
		}
		if (mw && main.w < r.w)
			top_put(x->c, r, col, r.y, TOP_S_DIM, more);
		return;
	}
	char buf[96];
	if (m->window_s >= 10)
		snprintf(buf, sizeof buf, "no findings over the last %.0f s", m->window_s);
	else
		snprintf(buf, sizeof buf, "no findings yet (%.1f s of samples)", m->window_s);
	top_put(x->c, r, r.x, r.y, TOP_S_DIM, buf);
}

static void draw_keys(ctx *x)
{
	const top_frame *f = x->f;
	top_rect r = f->L->p[TOP_P_KEYS];
	char buf[256];
	if (f->in && top_input_prompt(f->in))
		snprintf(buf, sizeof buf, "Enter apply  Esc %s  Backspace  Ctrl-U erase",
		         f->in->mode == TOP_IN_FILTER ? "clear" : "cancel");
	else
		top_keys_line(buf, sizeof buf, r.w);
	top_put(x->c, r, r.x, r.y, TOP_S_DIM, buf);
}

/* ------------------------------------------------------------------ help */

/*
 * text from row y on, broken at spaces to the width of r (a word longer than
 * the width is cut); continuation lines are indented by two. Returns the row
 * after the last one written.
 */
static int put_wrapped(ctx *x, top_rect r, int y, top_style st, const char *text)
{
	const char *p = text;
	int indent = 0;
	while (*p && y < r.y + r.h) {
		int w = r.w - indent;
		size_t len = strlen(p), cut = len;
		if (top_text_width(x->c, p) > w) {
			/* the last space that keeps the line within w columns */
			char buf[TOP_FINDING_LEN];
			cut = 0;
			for (size_t k = 1; k <= len && k < sizeof buf; k++) {
				memcpy(buf, p, k);
				buf[k] = '\0';
				if (top_text_width(x->c, buf) > w)
					break;
				if (p[k] == ' ' || p[k] == '\0')
					cut = k;
			}
			if (cut == 0)
				cut = (size_t)w < len ? (size_t)w : len;
		}
		char line_buf[TOP_FINDING_LEN];
		snprintf(line_buf, sizeof line_buf, "%.*s", (int)cut, p);
		top_put(x->c, r, r.x + indent, y++, st, line_buf);
		p += cut;
		while (*p == ' ')
			p++;
		indent = 2;
	}
	return y;
}

static void draw_help(ctx *x)
{
	const top_frame *f = x->f;
	const glyphs *g = x->g;
	int want_h = top_nkeys + 5 + (f->m->nfindings ? 3 * f->m->nfindings + 2 : 0);
	top_rect b = top_layout_box(f->L->cols, f->L->rows, 92, want_h);
	top_fill(x->c, b, TOP_S_NORMAL, L' ');
	for (int i = 1; i < b.w - 1; i++) {
		top_put(x->c, b, b.x + i, b.y, TOP_S_DIM, g->box_h);
		top_put(x->c, b, b.x + i, b.y + b.h - 1, TOP_S_DIM, g->box_h);
	}
	for (int i = 1; i < b.h - 1; i++) {
		top_put(x->c, b, b.x, b.y + i, TOP_S_DIM, g->box_v);
		top_put(x->c, b, b.x + b.w - 1, b.y + i, TOP_S_DIM, g->box_v);
	}
	top_put(x->c, b, b.x, b.y, TOP_S_DIM, g->box_tl);
	top_put(x->c, b, b.x + b.w - 1, b.y, TOP_S_DIM, g->box_tr);
	top_put(x->c, b, b.x, b.y + b.h - 1, TOP_S_DIM, g->box_bl);
	top_put(x->c, b, b.x + b.w - 1, b.y + b.h - 1, TOP_S_DIM, g->box_br);
	top_rect in = {b.x + 2, b.y + 1, b.w - 4, b.h - 2};
	int y = in.y;
	top_put(x->c, in, in.x, y++, TOP_S_ACCENT, "gpuwhy top: keys (any key closes this)");
	y++;
	top_rect what = {in.x + 10, in.y, in.w - 10, in.h};
	for (int i = 0; i < top_nkeys && y < in.y + in.h; i++) {
		top_put(x->c, in, in.x, y, TOP_S_ACCENT, top_keys[i].keys);
		y = put_wrapped(x, what, y, TOP_S_NORMAL, top_keys[i].what);
	}
	if (f->m->nfindings && y + 1 < in.y + in.h) {
		y++;
		char t[80];
		snprintf(t, sizeof t, "findings over the last %.0f s:", f->m->window_s);
		top_put(x->c, in, in.x, y++, TOP_S_ACCENT, t);
		for (int i = 0; i < f->m->nfindings && y < in.y + in.h; i++) {
			const top_finding *fd = &f->m->findings[i];
			top_style st = fd->severity == TOP_SEV_ERROR  ? TOP_S_ERR
			               : fd->severity == TOP_SEV_WARN ? TOP_S_WARN
			                                              : TOP_S_NORMAL;
			y = put_wrapped(x, in, y, st, fd->text);
		}
	}
}

/* ------------------------------------------------------------------ frame */

void top_render(top_canvas *c, const top_frame *f)
{
	ctx x = {c, f, c->utf8 ? &utf8_glyphs : &ascii_glyphs};
	top_canvas_clear(c);
	if (f->L->too_small) {
		top_rect all = {0, 0, c->cols, c->rows};
		top_putf(c, all, 0, 0, TOP_S_NORMAL, "terminal too small (%dx%d)", f->L->cols,
		         f->L->rows);
		top_putf(c, all, 0, 1, TOP_S_DIM, "need %dx%d; q quits", TOP_MIN_COLS,
		         TOP_MIN_ROWS);
		return;
	}
	graph_caption(&x, draw_header(&x));
	draw_gpus(&x);
	draw_graph(&x);
	draw_host(&x);
	draw_procs(&x);
	draw_tree(&x);
	draw_status(&x);
	draw_keys(&x);
	if (f->in && f->in->mode == TOP_IN_HELP)
		draw_help(&x);
}
