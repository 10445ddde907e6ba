/* render_frame.c - one frame of `top` into a canvas (see render.h). */
#include "top/render.h"
#include "top/render_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "util/i18n.h"
#include "util/textwidth.h"

/* ------------------------------------------------------------------ glyphs */

static const top_glyphs utf8_glyphs = {
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

static const top_glyphs ascii_glyphs = {
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

const char *top_r_pgettext(const char *ctx_msgid, const char *msgid)
{
	const char *t = _(ctx_msgid);
	return t == ctx_msgid ? msgid : t;
}

/* ------------------------------------------------------------------ numbers */

/* The digits of rint(v), sign included, reversed into dig; returns their count. */
static int f0_digits(double v, char dig[24])
{
	double r = rint(v);
	unsigned long long u = (unsigned long long)fabs(r);
	int nd = 0;
	do {
		dig[nd++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	/* printf writes "-0" for a negative value that rounds to zero. */
	if (signbit(r))
		dig[nd++] = '-';
	return nd;
}

/* The fast path of top_r_fmt_f0 into buf; false when fmt or v is not one it covers. */
static bool f0_fast(char *buf, size_t cap, const char *fmt, double v)
{
	if (!isfinite(v) || fabs(v) >= 1e15)
		return false;
	size_t n = 0;
	bool conv = false;
	for (const char *p = fmt; *p;) {
		if (*p != '%' || p[1] == '%') {
			if (n + 1 >= cap)
				return false;
			buf[n++] = *p;
			p += *p == '%' ? 2 : 1;
			continue;
		}
		int w = 0;
		for (p++; *p >= '0' && *p <= '9' && w < 100; p++)
			w = w * 10 + (*p - '0');
		if (conv || strncmp(p, ".0f", 3) != 0)
			return false;
		p += 3;
		conv = true;
		char dig[24];
		int nd = f0_digits(v, dig);
		if (n + (size_t)(w > nd ? w : nd) + 1 >= cap)
			return false;
		for (int i = nd; i < w; i++)
			buf[n++] = ' ';
		while (nd)
			buf[n++] = dig[--nd];
	}
	buf[n] = 0;
	return conv;
}

void top_r_fmt_f0(char *out, size_t len, const char *fmt, double v)
{
	char buf[128];
	if (!f0_fast(buf, sizeof buf, fmt, v)) {
		snprintf(out, len, fmt, v);
		return;
	}
	if (len == 0)
		return;
	size_t n = strlen(buf);
	if (n >= len)
		n = len - 1;
	memcpy(out, buf, n);
	out[n] = 0;
}

void top_r_fmt_mib(double mib, char *out, size_t len)
{
	if (isnan(mib))
		snprintf(out, len, "n/a");
	else if (mib >= 1024.0 * 1024)
		snprintf(out, len, "%.1fT", mib / (1024.0 * 1024));
	else if (mib >= 1024)
		snprintf(out, len, "%.1fG", mib / 1024);
	else
		top_r_fmt_f0(out, len, "%.0fM", mib);
}

/* Bytes per second as "0", "12K", "1.2M", "3.4G". */
void top_r_fmt_rate(double bps, char *out, size_t len)
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
	if (u == 0) {
		top_r_fmt_f0(out, len, "%.0fB", bps);
	} else if (bps < 10) {
		snprintf(out, len, "%.1f%c", bps, units[u]);
	} else {
		const char fmt[] = {'%', '.', '0', 'f', units[u], 0};
		top_r_fmt_f0(out, len, fmt, bps);
	}
}

void top_r_fmt_num(const gpu_values *v, gpu_metric_id id, const char *fmt, char *out, size_t len)
{
	if (!v->ok[id])
		snprintf(out, len, "n/a");
	else
		top_r_fmt_f0(out, len, fmt, v->v[id]);
}

top_style top_r_load_style(double pct, double mid, double high)
{
	return isnan(pct)    ? TOP_S_DIM
	       : pct >= high ? TOP_S_HIGH
	       : pct >= mid  ? TOP_S_MID
	                     : TOP_S_OK;
}

top_style top_r_st_of(const char *s, top_style st)
{
	return strncmp(s, "n/a", 3) ? st : TOP_S_DIM;
}

/* ------------------------------------------------------------------ line writer */

top_line top_r_line_at(top_rctx *x, top_rect r, int col, int y)
{
	return (top_line){x, r, col, y, false};
}

int top_r_room(const top_line *l)
{
	return l->r.x + l->r.w - l->col;
}

bool top_r_fits(top_line *l, int w)
{
	if (l->full || w > top_r_room(l)) {
		l->full = true;
		return false;
	}
	return true;
}

void top_r_put(top_line *l, top_style st, const char *text)
{
	l->col = top_put(l->x->c, l->r, l->col, l->y, st, text);
}

bool top_r_text(top_line *l, top_style st, const char *s)
{
	if (!top_r_fits(l, top_text_width(l->x->c, s)))
		return false;
	top_r_put(l, st, s);
	return true;
}

/* "label value" after gap spaces, as one field. */
bool top_r_pair(top_line *l, int gap, const char *label, top_style st, const char *value)
{
	int w = gap + (label[0] ? top_text_width(l->x->c, label) + 1 : 0) +
	        top_text_width(l->x->c, value);
	if (!top_r_fits(l, w))
		return false;
	l->col += gap;
	if (label[0]) {
		top_r_put(l, TOP_S_DIM, label);
		l->col++;
	}
	top_r_put(l, st, value);
	return true;
}

/* A bar of w inner cells filled to frac (0..1), at the line's position. */
void top_r_bar(top_rctx *x, top_rect clip, int col, int y, int w, double frac, top_style st)
{
	const top_glyphs *g = x->g;
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
bool top_r_bar_field(top_line *l, int gap, const char *label, int w, double frac, top_style fill,
                     top_style vst, const char *value)
{
	int need = gap + (label[0] ? top_text_width(l->x->c, label) + 1 : 0) + w + 2 + 1 +
	           top_text_width(l->x->c, value);
	if (!top_r_fits(l, need))
		return false;
	l->col += gap;
	if (label[0]) {
		top_r_put(l, TOP_S_DIM, label);
		l->col++;
	}
	top_r_bar(l->x, l->r, l->col, l->y, w, frac, fill);
	l->col += w + 2 + 1;
	top_r_put(l, vst, value);
	return true;
}

/* ------------------------------------------------------------------ header */

/* Returns the first column the header left free. */
static int draw_header(top_rctx *x)
{
	const top_frame *f = x->f;
	const top_model *m = f->m;
	top_rect r = f->L->p[TOP_P_HEADER];
	top_fill(x->c, r, TOP_S_HEAD, L' ');
	top_line l = top_r_line_at(x, r, r.x, r.y);
	char buf[256];
	/* Most important first: what does not fit at the end is left out. */
	top_r_text(&l, TOP_S_HEAD, "gpuwhy top");
	int shown = top_model_gpus_shown(m), drawn = f->L->gpus_shown;
	if (m->ngpu) {
		if (drawn < shown)
			snprintf(buf, sizeof buf, _("  %d/%d GPUs fit (g)"), drawn, shown);
		else if (shown < m->ngpu)
			snprintf(buf, sizeof buf, _("  %d of %d GPUs (g)"), shown, m->ngpu);
		else
			snprintf(buf, sizeof buf, P_("  %d GPU", "  %d GPUs", m->ngpu), m->ngpu);
		top_r_text(&l, TOP_S_HEAD, buf);
	}
	if (m->paused)
		top_r_text(&l, TOP_S_HEAD, _("  [PAUSED]"));
	if (f->record_path) {
		const char *base = strrchr(f->record_path, '/');
		/* TRANSLATORS: recording what is shown into this file */
		snprintf(buf, sizeof buf, _("  [rec %s]"), base ? base + 1 : f->record_path);
		top_r_text(&l, TOP_S_HEAD, buf);
	}
	const snapshot *s = top_model_shown(m);
	if (s) {
		time_t t = (time_t)s->t_wall;
		struct tm tm;
		localtime_r(&t, &tm);
		strftime(buf + 2, sizeof buf - 2, "%H:%M:%S", &tm);
		buf[0] = buf[1] = ' ';
		top_r_text(&l, TOP_S_HEAD, buf);
	}
	double iv = (double)f->interval_ns / 1e9;
	/* One printed frame is not refreshed: what the interval means there is
	 * the span each rate (utilization, CPU %, IO) was measured over. */
	if (f->once && iv < 1)
		snprintf(buf, sizeof buf, _("  rates over %.0f ms"), iv * 1000);
	else if (f->once)
		snprintf(buf, sizeof buf, _("  rates over %.3g s"), iv);
	else if (iv < 1)
		snprintf(buf, sizeof buf, _("  every %.0f ms"), iv * 1000);
	else
		snprintf(buf, sizeof buf, _("  every %.3g s"), iv);
	top_r_text(&l, TOP_S_HEAD, buf);
	if (f->hostname && f->hostname[0]) {
		/* TRANSLATORS: the host name follows */
		snprintf(buf, sizeof buf, _("  on %s"), f->hostname);
		top_r_text(&l, TOP_S_HEAD, buf);
	}
	return l.col;
}

/* Name the graph in the header, right-aligned above it, when the header leaves room. */
static void graph_caption(top_rctx *x, int header_end)
{
	const top_layout *L = x->f->L;
	top_rect gr = L->p[TOP_P_GRAPH], hr = L->p[TOP_P_HEADER];
	if (!gr.w || !L->graph_beside)
		return;
	const char *cap = _("GPU util history ");
	int w = top_text_width(x->c, cap);
	if (hr.x + hr.w - w >= header_end + 2 && hr.x + hr.w - w >= gr.x)
		top_put(x->c, hr, hr.x + hr.w - w, hr.y, TOP_S_HEAD, cap);
}

/* ------------------------------------------------------------------ help */

/*
 * text from row y on, broken at spaces to the width of r (a word longer than
 * the width is cut); continuation lines are indented by two. Returns the row
 * after the last one written.
 */
static int wrap_text(top_rctx *x, top_rect r, int y, top_style st, const char *text, bool draw)
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
				if (p[k] != ' ' && p[k] != '\0')
					continue;
				memcpy(buf, p, k);
				buf[k] = '\0';
				if (top_text_width(x->c, buf) > w)
					break;
				cut = k;
			}
			/* No space in reach (a long word, or Chinese, which has none): break
			 * between characters. */
			if (cut == 0)
				cut = gw_text_fit(p, w, NULL);
			if (cut == 0)
				cut = len; /* not even one character fits: the clip cuts it */
		}
		if (draw) {
			char line_buf[TOP_FINDING_LEN];
			snprintf(line_buf, sizeof line_buf, "%.*s", (int)cut, p);
			top_put(x->c, r, r.x + indent, y, st, line_buf);
		}
		y++;
		p += cut;
		while (*p == ' ')
			p++;
		indent = 2;
	}
	return y;
}

static int put_wrapped(top_rctx *x, top_rect r, int y, top_style st, const char *text)
{
	return wrap_text(x, r, y, st, text, true);
}

/* Rows text takes wrapped to width w (as put_wrapped writes it). */
static int wrapped_rows(top_rctx *x, int w, const char *text)
{
	return wrap_text(x, (top_rect){0, 0, w, 1 << 20}, 0, TOP_S_NORMAL, text, false);
}

/* The help box's height for its inner width w: title, keys, findings, all wrapped. */
static int help_height(top_rctx *x, int w)
{
	int h = 2 + 2; /* the frame, the title and the blank line under it */
	for (int i = 0; i < top_nkeys; i++)
		h += wrapped_rows(x, w - 10, _(top_keys[i].what));
	const top_model *m = x->f->m;
	if (m->nfindings)
		h += 2;
	for (int i = 0; i < m->nfindings; i++)
		h += wrapped_rows(x, w, m->findings[i].text);
	return h;
}

static void draw_help(top_rctx *x)
{
	const top_frame *f = x->f;
	const top_glyphs *g = x->g;
	int bw = top_layout_box(f->L->cols, f->L->rows, 92, 1).w; /* the width it will get */
	top_rect b = top_layout_box(f->L->cols, f->L->rows, 92, help_height(x, bw - 4));
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
	top_put(x->c, in, in.x, y++, TOP_S_ACCENT, _("gpuwhy top: keys (any key closes this)"));
	y++;
	top_rect what = {in.x + 10, in.y, in.w - 10, in.h};
	for (int i = 0; i < top_nkeys && y < in.y + in.h; i++) {
		top_put(x->c, in, in.x, y, TOP_S_ACCENT, top_keys[i].keys);
		y = put_wrapped(x, what, y, TOP_S_NORMAL, _(top_keys[i].what));
	}
	if (f->m->nfindings && y + 1 < in.y + in.h) {
		y++;
		char t[80];
		snprintf(t, sizeof t, _("findings over the last %.0f s:"), f->m->window_s);
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

void top_r_blank(top_rctx *x, top_panel p)
{
	if (x->keep)
		top_fill(x->c, x->f->L->p[p], TOP_S_NORMAL, L' ');
}

/* Whether the last frame drawn with memo is still on c and can be drawn over. */
static bool memo_holds(const top_render_memo *memo, const top_canvas *c, const top_frame *f)
{
	return memo->valid && memo->c == c && memo->m == f->m && memo->cols == c->cols &&
	       memo->rows == c->rows && memo->utf8 == c->utf8 &&
	       !memcmp(&memo->L, f->L, sizeof memo->L);
}

void top_render(top_canvas *c, const top_frame *f)
{
	top_render_memo *memo = f->memo;
	bool help = f->in && f->in->mode == TOP_IN_HELP;
	top_rctx x = {c, f, c->utf8 ? &utf8_glyphs : &ascii_glyphs, NULL};
	if (memo && memo_holds(memo, c, f))
		x.keep = memo;
	else
		top_canvas_clear(c);
	if (memo) {
		/* The help box covers panels: the next frame must not keep what it hid. */
		memo->valid = !help && !f->L->too_small;
		memo->L = *f->L;
		memo->m = f->m;
		memo->c = c;
		memo->cols = c->cols;
		memo->rows = c->rows;
		memo->utf8 = c->utf8;
		if (!x.keep)
			memo->ngpu = 0;
	}
	if (f->L->too_small) {
		top_rect all = {0, 0, c->cols, c->rows};
		top_putf(c, all, 0, 0, TOP_S_NORMAL, _("terminal too small (%dx%d)"), f->L->cols,
		         f->L->rows);
		top_putf(c, all, 0, 1, TOP_S_DIM, _("need %dx%d; q quits"), TOP_MIN_COLS,
		         TOP_MIN_ROWS);
		return;
	}
	/* The header fills its own row; the GPU panel blanks only the blocks it redraws. */
	graph_caption(&x, draw_header(&x));
	top_r_gpus(&x);
	static const top_panel over[] = {TOP_P_GRAPH, TOP_P_HOST,   TOP_P_PROCS,
	                                 TOP_P_TREE,  TOP_P_STATUS, TOP_P_KEYS};
	for (size_t i = 0; i < sizeof over / sizeof *over; i++)
		top_r_blank(&x, over[i]);
	top_r_graph(&x);
	top_r_host(&x);
	top_r_procs(&x);
	top_r_tree(&x);
	top_r_status(&x);
	/* keys are for a screen that reads them; a printed frame has none */
	if (!f->once)
		top_r_keys(&x);
	if (help)
		draw_help(&x);
}
