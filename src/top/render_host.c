/* render_host.c - top's host line (cores, memory, IO, network, load), status line and keys. */
#include "top/render_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/i18n.h"
#include "util/textwidth.h"

/*
 * The host line's labels are the host table's (host_metrics.def, which has
 * no gettext marks): they reach the catalogue from this list, and
 * top_r_host_label is how they are printed.
 */
static const char *const host_labels[] = {
    /* TRANSLATORS: host memory, on top's host line */
    N_("mem"),
    N_("swap"),
    /* TRANSLATORS: swap in/out rates */
    N_("in/out"),
    N_("disk"),
    /* TRANSLATORS: the busiest disk's busy share */
    N_("busy"),
    N_("iowait"),
    /* TRANSLATORS: network */
    N_("net"),
    /* TRANSLATORS: load average */
    N_("load"),
};

bool top_r_host_label_listed(const char *label)
{
	for (size_t i = 0; i < sizeof host_labels / sizeof *host_labels; i++)
		if (!strcmp(host_labels[i], label))
			return true;
	return false;
}

static const char *label(host_metric_id id)
{
	return _(host_metrics[id].label);
}

/* ------------------------------------------------------------------ host */

static void draw_cpu_cells(top_rctx *x, top_rect r, const snapshot *s)
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
		top_r_bar(x, cell, cx + 3, y, TOP_CPU_CELL_W - 9, b / 100,
		          top_r_load_style(b, 70, 90));
		if (isnan(b))
			top_put(x->c, cell, cx + TOP_CPU_CELL_W - 4, y, TOP_S_DIM, "n/a");
		else
			top_putf(x->c, cell, cx + TOP_CPU_CELL_W - 4, y,
			         b >= 90 ? TOP_S_HIGH : TOP_S_NORMAL, "%3.0f", b);
	}
}

static void draw_cpu_ticks(top_rctx *x, top_rect r, const snapshot *s)
{
	const top_layout *L = x->f->L;
	/* TRANSLATORS: the label before one character per core */
	int lw = top_put(x->c, r, r.x, r.y, TOP_S_DIM, _("cpu ")) - r.x;
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
		top_put(x->c, r, r.x + lw + col, r.y + row, top_r_load_style(b, 70, 90), glyph);
	}
}

void top_r_host(top_rctx *x)
{
	const top_frame *f = x->f;
	top_rect r = f->L->p[TOP_P_HOST];
	const snapshot *s = top_model_shown(f->m);
	if (!r.w || !r.h)
		return;
	if (!s) {
		top_put(x->c, r, r.x, r.y, TOP_S_DIM, _("host: waiting for the first sample"));
		return;
	}
	if (f->L->cpu_style == TOP_CPU_CELLS)
		draw_cpu_cells(x, r, s);
	else
		draw_cpu_ticks(x, r, s);
	const double *h = s->h;
	top_line l = top_r_line_at(x, r, r.x, r.y + f->L->cpu_rows);
	char a[16], b[16], buf[96];
	double mf = h[HM_MEM_USED] / h[HM_MEM_TOTAL];
	top_r_fmt_mib(h[HM_MEM_USED], a, sizeof a);
	top_r_fmt_mib(h[HM_MEM_TOTAL], b, sizeof b);
	snprintf(buf, sizeof buf, "%s/%s", a, b);
	top_r_bar_field(&l, 0, label(HM_MEM_USED), 8, mf, top_r_load_style(mf * 100, 80, 95),
	                top_r_st_of(buf, TOP_S_NORMAL), buf);
	top_r_fmt_mib(h[HM_SWAP_USED], a, sizeof a);
	top_r_pair(&l, 2, label(HM_SWAP_USED), top_r_st_of(a, TOP_S_NORMAL), a);
	top_r_fmt_rate(h[HM_SWAP_IN], a, sizeof a);
	top_r_fmt_rate(h[HM_SWAP_OUT], b, sizeof b);
	snprintf(buf, sizeof buf, "%s/%s", a, b);
	bool swapping = !isnan(h[HM_SWAP_IN]) && h[HM_SWAP_IN] > 1048576;
	top_r_pair(&l, 1, label(HM_SWAP_IN), swapping ? TOP_S_HIGH : TOP_S_NORMAL, buf);
	top_r_fmt_rate(h[HM_DISK_READ], a, sizeof a);
	top_r_fmt_rate(h[HM_DISK_WRITE], b, sizeof b);
	/* TRANSLATORS: disk read and write rates */
	snprintf(buf, sizeof buf, _("r %s w %s"), a, b);
	top_r_pair(&l, 2, label(HM_DISK_READ), TOP_S_NORMAL, buf);
	if (!isnan(h[HM_DISK_BUSY_MAX])) {
		snprintf(buf, sizeof buf, "%.0f%%", h[HM_DISK_BUSY_MAX]);
		top_r_pair(&l, 1, label(HM_DISK_BUSY_MAX),
		           top_r_load_style(h[HM_DISK_BUSY_MAX], 70, 90), buf);
	}
	if (!isnan(h[HM_CPU_IOWAIT])) {
		snprintf(buf, sizeof buf, "%.0f%%", h[HM_CPU_IOWAIT]);
		top_r_pair(&l, 2, label(HM_CPU_IOWAIT), top_r_load_style(h[HM_CPU_IOWAIT], 10, 30),
		           buf);
	}
	top_r_fmt_rate(h[HM_NET_RX], a, sizeof a);
	top_r_fmt_rate(h[HM_NET_TX], b, sizeof b);
	/* TRANSLATORS: network receive and transmit rates */
	snprintf(buf, sizeof buf, _("rx %s tx %s"), a, b);
	top_r_pair(&l, 2, label(HM_NET_RX), TOP_S_NORMAL, buf);
	if (!isnan(h[HM_LOAD1])) {
		snprintf(buf, sizeof buf, "%.2f", h[HM_LOAD1]);
		top_r_pair(&l, 2, label(HM_LOAD1), TOP_S_NORMAL, buf);
	}
}

/* ------------------------------------------------------------------ status, keys */

void top_r_status(top_rctx *x)
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
			snprintf(more, sizeof more, _("  (+%d more: h)"), m->nfindings - 1);
		int mw = gw_text_width(more);
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
	char buf[160];
	if (m->window_s >= 10)
		snprintf(buf, sizeof buf, _("no findings over the last %.0f s"), m->window_s);
	else
		snprintf(buf, sizeof buf, _("no findings yet (%.1f s of samples)"), m->window_s);
	top_put(x->c, r, r.x, r.y, TOP_S_DIM, buf);
}

/* The key line depends only on the width (the language is chosen once): made once per width. */
static void keys_line(char *out, size_t len, int width)
{
	static char line[256];
	static int line_w = -1;
	if (width != line_w) {
		top_keys_line(line, sizeof line, width);
		line_w = width;
	}
	snprintf(out, len, "%s", line);
}

void top_r_keys(top_rctx *x)
{
	const top_frame *f = x->f;
	top_rect r = f->L->p[TOP_P_KEYS];
	char buf[256];
	if (f->in && top_input_prompt(f->in))
		snprintf(buf, sizeof buf, "%s",
		         f->in->mode == TOP_IN_FILTER
		             ? _("Enter apply  Esc clear  Backspace  Ctrl-U erase")
		             : _("Enter apply  Esc cancel  Backspace  Ctrl-U erase"));
	else
		keys_line(buf, sizeof buf, r.w);
	top_put(x->c, r, r.x, r.y, TOP_S_DIM, buf);
}
