/* render_proc.c - top's process list (columns, sorting titles, mouse hits) and process tree. */
#include "top/render_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/i18n.h"
#include "util/termsafe.h"

/* ------------------------------------------------------------------ processes */

typedef struct {
	const char *title;
	int w;
	bool right;
	top_sort_key key;
	int drop; /* dropped first when narrow: highest first; 0 never */
} pcol;

enum { C_PID, C_USER, C_GPU, C_MEM, C_SM, C_CPU, C_RSS, C_CMD, C__N };
/* Titles are translated where drawn; a translation must fit the column (or loses its end). */
static const pcol pcols[C__N] = {
    [C_PID] = {"PID", 7, true, TOP_SORT_PID, 0},
    /* TRANSLATORS: process list column, at most 9 columns wide */
    [C_USER] = {N_("USER"), 9, false, TOP_SORT_USER, 5},
    [C_GPU] = {"GPU", 4, true, TOP_SORT_GPU, 0},
    /* TRANSLATORS: process list column (GPU memory of the process), at most 7 columns */
    [C_MEM] = {N_("GPU MEM"), 8, true, TOP_SORT_GPUMEM, 0},
    [C_SM] = {"SM%", 4, true, TOP_SORT_SM, 3},
    [C_CPU] = {"CPU%", 5, true, TOP_SORT_CPU, 2},
    /* TRANSLATORS: process list column (resident host memory), at most 5 columns */
    [C_RSS] = {N_("RSS"), 6, true, TOP_SORT_RSS, 4},
    /* TRANSLATORS: process list column */
    [C_CMD] = {N_("COMMAND"), 0, false, TOP_SORT_CMD, 0},
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

static void cell_text(top_rctx *x, top_rect r, int y, int c, const int *xs, top_style st,
                      const char *s)
{
	if (xs[c] < 0)
		return;
	int w = c == C_CMD ? r.w - xs[c] : pcols[c].w;
	top_rect clip = {r.x + xs[c], y, w, 1};
	int tw = top_text_width(x->c, s);
	int col = pcols[c].right && tw < w ? clip.x + w - tw : clip.x;
	top_put(x->c, clip, col, y, st, s);
}

static void draw_proc_header(top_rctx *x, top_rect r, const int *xs)
{
	const top_model *m = x->f->m;
	top_fill(x->c, (top_rect){r.x, r.y, r.w, 1}, TOP_S_HEAD, L' ');
	for (int c = 0; c < C__N; c++) {
		char t[32];
		bool sorted = pcols[c].key == m->sort;
		/* The arrow says which end comes first: large amounts first is "down". */
		bool down = (m->sort == TOP_SORT_GPUMEM || m->sort == TOP_SORT_SM ||
		             m->sort == TOP_SORT_CPU || m->sort == TOP_SORT_RSS) != m->reverse;
		snprintf(t, sizeof t, "%s%s", _(pcols[c].title),
		         sorted ? (down ? x->g->down : x->g->up) : "");
		cell_text(x, r, r.y, c, xs, TOP_S_HEAD, t);
	}
	char info[160];
	if (m->filter[0])
		snprintf(info, sizeof info, _("filter '%s': %d of %d "), m->filter, m->nrows,
		         m->nprocs_all);
	else
		snprintf(info, sizeof info, P_("%d process ", "%d processes ", m->nrows), m->nrows);
	int iw = top_text_width(x->c, info);
	if (xs[C_CMD] >= 0 && r.w - iw > xs[C_CMD] + 10)
		top_put(x->c, r, r.x + r.w - iw, r.y, TOP_S_HEAD, info);
}

static void draw_proc_row(top_rctx *x, top_rect r, int y, const int *xs, const tl_proc *p, bool sel)
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
	top_r_fmt_mib(p->gpu_mem_mib, b, sizeof b);
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
	top_r_fmt_mib(p->rss_mib, b, sizeof b);
	cell_text(x, r, y, C_RSS, xs, isnan(p->rss_mib) ? dim : st, b);
	if (!p->alive)
		cell_text(x, r, y, C_CMD, xs, dim,
		          _("[not in /proc here: exited, or another PID namespace]"));
	else
		cell_text(x, r, y, C_CMD, xs, st,
		          p->cmd[0] ? gw_term_safe(p->cmd, safe, sizeof safe) : "?");
}

void top_r_procs(top_rctx *x)
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
		const char *msg = _("no GPU processes");
		if (!top_model_shown(m))
			msg = _("waiting for the first sample");
		else if (m->filter[0])
			msg = _("no process matches the filter (/ to change, Esc clears)");
		else if (m->ngpu)
			msg = _("no process is using the shown GPUs");
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

void top_r_tree(top_rctx *x)
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
		snprintf(buf, sizeof buf, _(" tree of PID %u: PID, CPU %%, RSS, command"),
		         f->m->sel_pid);
	else
		snprintf(buf, sizeof buf, "%s", _(" process tree"));
	top_put(x->c, r, r.x, r.y, TOP_S_HEAD, buf);
	/* Beside the list: a rule between the two. */
	if (r.x > 0)
		for (int y = r.y + 1; y < r.y + r.h; y++)
			top_put(x->c, r, r.x, y, TOP_S_DIM, x->g->box_v);
	if (n == 0) {
		top_put(x->c, r, r.x + 1, r.y + 1, TOP_S_DIM,
		        _("select a GPU process (Up/Down) to see its tree"));
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
		top_r_fmt_mib(p->rss_mib, rss, sizeof rss);
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
