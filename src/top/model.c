/* model.c - the ring of recent snapshots and the view derived from it (see model.h). */
#include "top/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/window.h"
#include "util/i18n.h"
#include "util/xalloc.h"

/* ------------------------------------------------------------------ snapshots */

void top_snapshot_copy(snapshot *d, const snapshot *s)
{
	snapshot_copy(d, s);
}

/* ------------------------------------------------------------------ ring */

int top_model_init(top_model *m, int ngpu, const top_gpu_info *gpus)
{
	memset(m, 0, sizeof *m);
	if (ngpu < 0 || ngpu > GPU_MAX)
		return -1;
	m->ngpu = ngpu;
	for (int g = 0; g < ngpu; g++) {
		m->gpu[g] = gpus[g];
		m->shown_gpu[g] = true;
	}
	for (int i = 0; i < GPU_MAX; i++)
		for (int j = 0; j < GPU_MAX; j++)
			m->nvlinks[i][j] = m->topo[i][j] = m->xgmi[i][j] = -1;
	m->ring = gw_xcalloc(TOP_RING_CAP, sizeof *m->ring);
	m->util = gw_xcalloc((size_t)TOP_RING_CAP * (size_t)(ngpu ? ngpu : 1), sizeof *m->util);
	m->sort = TOP_SORT_GPU;
	m->sel = -1;
	m->sel_gpu = -1;
	return 0;
}

void top_model_free(top_model *m)
{
	if (m->ring)
		for (int i = 0; i < TOP_RING_CAP; i++)
			snapshot_free(&m->ring[i]);
	free(m->ring);
	free(m->util);
	free(m->rows);
	tl_free(m->win);
	memset(m, 0, sizeof *m);
}

static long shown_abs(const top_model *m)
{
	return m->paused ? m->frozen : m->total - 1;
}

static const snapshot *at_abs(const top_model *m, long a)
{
	if (a < 0 || a >= m->total || a < m->total - m->n)
		return NULL;
	return &m->ring[a % TOP_RING_CAP];
}

static void trim_old(top_model *m)
{
	const snapshot *shown = top_model_shown(m);
	if (!shown)
		return;
	double cutoff = shown->t_wall - TOP_WINDOW_S - 1;
	if (m->trimmed < m->total - m->n)
		m->trimmed = m->total - m->n;
	while (m->trimmed < m->total) {
		snapshot *old = &m->ring[m->trimmed % TOP_RING_CAP];
		if (old->t_wall >= cutoff)
			break;
		free(old->procs);
		old->procs = NULL;
		old->nproc = old->proc_cap = 0;
		free(old->gpu);
		old->gpu = NULL;
		old->ngpu = 0;
		m->trimmed++;
	}
}

/* The newest slot now holds s: its graph value, the count, the pause, the trim. */
static void ingested(top_model *m, long slot, const snapshot *s)
{
	double *u = &m->util[slot * m->ngpu];
	for (int g = 0; g < m->ngpu; g++)
		u[g] = g < s->ngpu && s->gpu[g].ok[GM_UTIL_GPU] ? s->gpu[g].v[GM_UTIL_GPU] : NAN;
	m->total++;
	if (m->n < TOP_RING_CAP)
		m->n++;
	/* A frozen sample about to leave the ring ends the pause rather than vanish. */
	if (m->paused && m->frozen < m->total - m->n)
		m->paused = false;
	trim_old(m);
}

void top_model_ingest(top_model *m, const snapshot *s)
{
	long slot = m->total % TOP_RING_CAP;
	top_snapshot_copy(&m->ring[slot], s);
	ingested(m, slot, s);
}

void top_model_ingest_take(top_model *m, snapshot *s)
{
	long slot = m->total % TOP_RING_CAP;
	snapshot old = m->ring[slot];
	m->ring[slot] = *s;
	*s = old;
	ingested(m, slot, &m->ring[slot]);
}

const snapshot *top_model_shown(const top_model *m)
{
	return at_abs(m, shown_abs(m));
}

const snapshot *top_model_back(const top_model *m, int back)
{
	return at_abs(m, shown_abs(m) - back);
}

bool top_model_util(const top_model *m, int back, int g, double *util)
{
	long a = shown_abs(m) - back;
	if (g < 0 || g >= m->ngpu || !at_abs(m, a))
		return false;
	*util = m->util[(a % TOP_RING_CAP) * m->ngpu + g];
	return true;
}

void top_model_pause(top_model *m, bool paused)
{
	m->paused = paused;
	if (paused)
		m->frozen = m->total - 1;
}

/* ------------------------------------------------------------------ rows */

static int cmp_num_desc(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) - isnan(b);
	return a > b ? -1 : a < b ? 1 : 0;
}

/* The key's own order: 0 when equal, sign as in qsort. NAN amounts sort last either way. */
static int cmp_key(const tl_proc *a, const tl_proc *b, top_sort_key key, bool *nan_tie)
{
	*nan_tie = false;
	switch (key) {
	case TOP_SORT_GPU:
		return a->gpu - b->gpu;
	case TOP_SORT_PID:
		return (a->pid > b->pid) - (a->pid < b->pid);
	case TOP_SORT_USER:
		return strcmp(a->user, b->user);
	case TOP_SORT_CMD:
		return strcmp(a->cmd, b->cmd);
	case TOP_SORT_GPUMEM:
	case TOP_SORT_SM:
	case TOP_SORT_CPU:
	case TOP_SORT_RSS: {
		double x = key == TOP_SORT_GPUMEM ? a->gpu_mem_mib
		           : key == TOP_SORT_SM   ? a->sm_pct
		           : key == TOP_SORT_CPU  ? a->cpu_pct
		                                  : a->rss_mib;
		double y = key == TOP_SORT_GPUMEM ? b->gpu_mem_mib
		           : key == TOP_SORT_SM   ? b->sm_pct
		           : key == TOP_SORT_CPU  ? b->cpu_pct
		                                  : b->rss_mib;
		*nan_tie = isnan(x) || isnan(y);
		return cmp_num_desc(x, y);
	}
	default:
		return 0;
	}
}

static int cmp_rows(const void *pa, const void *pb, void *arg)
{
	const top_model *m = arg;
	const tl_proc *a = ((const top_row *)pa)->p, *b = ((const top_row *)pb)->p;
	bool nan_involved;
	int c = cmp_key(a, b, m->sort, &nan_involved);
	if (c && m->reverse && !nan_involved)
		c = -c;
	if (!c)
		c = (a->pid > b->pid) - (a->pid < b->pid);
	if (!c)
		c = a->gpu - b->gpu;
	return c;
}

static bool matches(const tl_proc *p, const char *filter)
{
	if (!filter[0])
		return true;
	char pid[16];
	snprintf(pid, sizeof pid, "%u", p->pid);
	return strstr(pid, filter) || strcasestr(p->user, filter) || strcasestr(p->cmd, filter);
}

static void clamp_selection(top_model *m)
{
	if (m->nrows == 0) {
		m->sel = -1;
		m->scroll = 0;
		return;
	}
	if (m->sel < 0)
		m->sel = 0;
	if (m->sel >= m->nrows)
		m->sel = m->nrows - 1;
	m->sel_pid = m->rows[m->sel].p->pid;
	m->sel_gpu = m->rows[m->sel].p->gpu;
	if (m->scroll > m->sel)
		m->scroll = m->sel;
	if (m->scroll < 0)
		m->scroll = 0;
}

void top_model_refresh(top_model *m)
{
	m->nrows = 0;
	m->nprocs_all = 0;
	const snapshot *s = top_model_shown(m);
	for (int i = 0; s && i < s->nproc; i++) {
		const tl_proc *p = &s->procs[i];
		if (p->gpu < 0 || p->gpu >= m->ngpu)
			continue;
		m->nprocs_all++;
		if (!m->shown_gpu[p->gpu] || !matches(p, m->filter))
			continue;
		if (m->nrows == m->rows_cap) {
			m->rows_cap = m->rows_cap ? m->rows_cap * 2 : 64;
			m->rows = gw_xrealloc(m->rows, (size_t)m->rows_cap * sizeof *m->rows);
		}
		m->rows[m->nrows++].p = p;
	}
	if (m->nrows > 1)
		qsort_r(m->rows, (size_t)m->nrows, sizeof *m->rows, cmp_rows, m);
	/* Keep the selection on its process; when that is gone, on the same line. */
	for (int r = 0; r < m->nrows; r++)
		if (m->rows[r].p->pid == m->sel_pid && m->rows[r].p->gpu == m->sel_gpu) {
			m->sel = r;
			break;
		}
	clamp_selection(m);
}

void top_model_select_row(top_model *m, int row, int visible)
{
	if (m->nrows == 0)
		return;
	m->sel = row < 0 ? 0 : row >= m->nrows ? m->nrows - 1 : row;
	clamp_selection(m);
	if (visible < 1)
		visible = 1;
	if (m->sel >= m->scroll + visible)
		m->scroll = m->sel - visible + 1;
	int max_scroll = m->nrows > visible ? m->nrows - visible : 0;
	if (m->scroll > max_scroll)
		m->scroll = max_scroll;
}

void top_model_move(top_model *m, int delta, int visible)
{
	top_model_select_row(m, (m->sel < 0 ? 0 : m->sel) + delta, visible);
}

static const char *const sort_names[TOP_SORT__COUNT] = {
    [TOP_SORT_GPU] = "gpu",    [TOP_SORT_PID] = "pid", [TOP_SORT_USER] = "user",
    [TOP_SORT_GPUMEM] = "mem", [TOP_SORT_SM] = "sm",   [TOP_SORT_CPU] = "cpu",
    [TOP_SORT_RSS] = "rss",    [TOP_SORT_CMD] = "cmd",
};

const char *top_sort_name(top_sort_key key)
{
	return key >= 0 && key < TOP_SORT__COUNT ? sort_names[key] : "?";
}

int top_sort_parse(const char *name)
{
	for (int k = 0; k < TOP_SORT__COUNT; k++)
		if (!strcasecmp(name, sort_names[k]))
			return k;
	return -1;
}

void top_model_set_sort(top_model *m, top_sort_key key)
{
	if (key == m->sort)
		m->reverse = !m->reverse; /* choosing the current key again flips it */
	else
		m->reverse = false;
	m->sort = key;
	top_model_refresh(m);
}

void top_model_next_sort(top_model *m)
{
	m->sort = (top_sort_key)((m->sort + 1) % TOP_SORT__COUNT);
	m->reverse = false;
	top_model_refresh(m);
}

void top_model_set_filter(top_model *m, const char *text)
{
	snprintf(m->filter, sizeof m->filter, "%s", text ? text : "");
	top_model_refresh(m);
}

bool top_model_set_gpus(top_model *m, const char *list, char *err, int errlen)
{
	bool want[GPU_MAX] = {false};
	char copy[256];
	snprintf(copy, sizeof copy, "%s", list ? list : "");
	char *save = NULL;
	int picked = 0;
	for (char *tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		if (!strcasecmp(tok, "all")) {
			for (int g = 0; g < m->ngpu; g++)
				want[g] = true;
			picked++;
			continue;
		}
		char *end;
		long v = strtol(tok, &end, 10);
		int pos = -1;
		if (!*end && end != tok) {
			/* On screen GPUs are called by their NVML index, not their position. */
			for (int g = 0; g < m->ngpu; g++)
				if (m->gpu[g].index == v)
					pos = g;
			if (pos < 0) {
				snprintf(err, (size_t)errlen, _("no GPU %s here"), tok);
				return false;
			}
		} else {
			gpu_ident ids[GPU_MAX] = {{""}};
			for (int g = 0; g < m->ngpu; g++)
				snprintf(ids[g].uuid, sizeof ids[g].uuid, "%s", m->gpu[g].uuid);
			if (gpu_parse_selection(tok, ids, m->ngpu, &pos, 1, err, errlen) != 1)
				return false;
		}
		want[pos] = true;
		picked++;
	}
	for (int g = 0; g < m->ngpu; g++)
		m->shown_gpu[g] = picked ? want[g] : true;
	top_model_refresh(m);
	return true;
}

int top_model_gpus_shown(const top_model *m)
{
	int n = 0;
	for (int g = 0; g < m->ngpu; g++)
		n += m->shown_gpu[g];
	return n;
}

/* ------------------------------------------------------------------ tree */

typedef struct {
	unsigned pid, ppid;
	const tl_proc *p;
	uint64_t gpus;
	bool done;
} tnode;

static int tnode_find(const tnode *t, int n, unsigned pid)
{
	for (int i = 0; i < n; i++)
		if (t[i].pid == pid)
			return i;
	return -1;
}

static int cmp_tnode(const void *a, const void *b)
{
	const tnode *x = a, *y = b;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

typedef struct {
	tnode *t;
	int n;
	top_tree_line *out;
	int max, count;
	unsigned sel;
} tree_walk;

static void walk(tree_walk *w, int i, int depth, uint32_t open, bool last)
{
	if (w->count >= w->max || w->t[i].done)
		return;
	w->t[i].done = true; /* a ppid cycle (pid reuse) cannot loop */
	w->out[w->count++] = (top_tree_line){.p = w->t[i].p,
	                                     .depth = depth,
	                                     .open = open,
	                                     .last = last,
	                                     .gpus = w->t[i].gpus,
	                                     .selected = w->t[i].pid == w->sel};
	int kids[512], nk = 0;
	for (int k = 0; k < w->n && nk < 512; k++)
		if (w->t[k].ppid == w->t[i].pid && k != i && !w->t[k].done)
			kids[nk++] = k; /* t is sorted by pid, so children come in pid order */
	for (int k = 0; k < nk; k++) {
		bool lastk = k == nk - 1;
		uint32_t o = open;
		if (depth < 31 && !lastk)
			o |= 1u << (depth + 1);
		walk(w, kids[k], depth + 1, o, lastk);
	}
}

int top_model_tree(const top_model *m, top_tree_line *out, int max)
{
	const snapshot *s = top_model_shown(m);
	if (!s || m->sel < 0 || max <= 0)
		return 0;
	tnode *t = gw_xcalloc((size_t)s->nproc, sizeof *t);
	int n = 0;
	for (int i = 0; i < s->nproc; i++) {
		const tl_proc *p = &s->procs[i];
		int k = tnode_find(t, n, p->pid);
		if (k < 0) {
			k = n++;
			t[k] = (tnode){.pid = p->pid, .ppid = p->ppid, .p = p};
		}
		if (p->gpu >= 0 && p->gpu < 64)
			t[k].gpus |= 1ULL << p->gpu;
		/* Prefer the host record: it is there even when the GPU one lacks host data. */
		if (p->gpu < 0)
			t[k].p = p;
		if (!t[k].ppid)
			t[k].ppid = p->ppid;
	}
	qsort(t, (size_t)n, sizeof *t, cmp_tnode);
	int root = tnode_find(t, n, m->sel_pid);
	for (int hops = 0; root >= 0 && hops < 64; hops++) {
		int up = t[root].ppid ? tnode_find(t, n, t[root].ppid) : -1;
		if (up < 0 || up == root)
			break;
		root = up;
	}
	tree_walk w = {t, n, out, max, 0, m->sel_pid};
	if (root >= 0)
		walk(&w, root, 0, 0, true);
	free(t);
	return w.count;
}

/* ------------------------------------------------------------------ window */

/* Sample k of the window from s, as every live window is made (model/window.c). */
static void add_sample(timeline *tl, const snapshot *s, int k, bool whole)
{
	/* The achieved interval is the one before this sample only when none is skipped. */
	if (whole)
		tl->interval[k] = s->interval_s;
	tl_fill_from_snapshot(tl, s, k, true);
}

/* The samples of a window over `seconds` up to the shown one: every stride-th from start. */
typedef struct {
	long first, last, start, stride;
	int ncpu;
} win_range;

static bool window_range(const top_model *m, double seconds, int max_samples, win_range *w)
{
	long last = shown_abs(m);
	const snapshot *end = at_abs(m, last);
	if (!end || max_samples < 2)
		return false;
	long first = last;
	while (at_abs(m, first - 1) && at_abs(m, first - 1)->t_wall >= end->t_wall - seconds)
		first--;
	long count = last - first + 1;
	if (count < 2)
		return false;
	w->first = first;
	w->last = last;
	w->stride = (count + max_samples - 1) / max_samples;
	w->start = last - ((count - 1) / w->stride) * w->stride;
	w->ncpu = 0;
	for (long a = w->start; a <= last; a += w->stride)
		for (int c = 0; c < at_abs(m, a)->ncpu; c++)
			if (at_abs(m, a)->cpu_id[c] + 1 > w->ncpu)
				w->ncpu = at_abs(m, a)->cpu_id[c] + 1;
	return true;
}

/* Which GPUs the window's last sample has lost. */
static void window_lost(timeline *tl, const top_model *m, const snapshot *end)
{
	for (int g = 0; g < m->ngpu; g++)
		tl->gpu[g].lost_at_end = g < end->ngpu && end->gpu[g].lost;
}

/*
 * What the window takes from the model and its last sample rather than from
 * every sample. The model's part (names, links) never changes, so a window
 * moved along keeps it (window_advance).
 */
static void window_facts(timeline *tl, const top_model *m, const snapshot *end)
{
	for (int g = 0; g < m->ngpu; g++) {
		tl->gpu[g].index = m->gpu[g].index;
		snprintf(tl->gpu[g].uuid, sizeof tl->gpu[g].uuid, "%s", m->gpu[g].uuid);
		snprintf(tl->gpu[g].name, sizeof tl->gpu[g].name, "%s", m->gpu[g].name);
		snprintf(tl->gpu[g].vendor, sizeof tl->gpu[g].vendor, "%s", m->gpu[g].vendor);
	}
	memcpy(tl->nvlinks, m->nvlinks, sizeof tl->nvlinks);
	memcpy(tl->xgmi, m->xgmi, sizeof tl->xgmi);
	memcpy(tl->topo, m->topo, sizeof tl->topo);
	window_lost(tl, m, end);
}

/* Events of every sample, thinned or not: a lost GPU must not slip between strides. */
static void window_events(timeline *tl, const top_model *m, const win_range *w)
{
	tl->nevents = 0;
	for (long a = w->first; a <= w->last; a++)
		tl_add_snapshot_events(tl, at_abs(m, a));
}

static timeline *window_build(const top_model *m, const win_range *w)
{
	timeline *tl = tl_new(m->ngpu, w->ncpu);
	window_facts(tl, m, at_abs(m, w->last));
	double t0 = at_abs(m, w->start)->t_wall;
	tl->t0_wall = t0;
	for (long a = w->start; a <= w->last; a += w->stride)
		add_sample(tl, at_abs(m, a), tl_add_sample(tl, at_abs(m, a)->t_wall - t0),
		           w->stride == 1);
	window_events(tl, m, w);
	return tl;
}

timeline *top_model_window(const top_model *m, double seconds, int max_samples)
{
	win_range w;
	return window_range(m, seconds, max_samples, &w) ? window_build(m, &w) : NULL;
}

/*
 * Drop the first d samples of one series (n stay), leaving NAN behind as
 * tl_add_sample expects; a series with nothing left becomes NULL, as one
 * never present in the window would be.
 */
static void drop_series(double **p, int d, int n)
{
	double *v = *p;
	if (!v)
		return;
	memmove(v, v + d, (size_t)n * sizeof *v);
	for (int i = n; i < n + d; i++)
		v[i] = NAN;
	int k = 0;
	while (k < n && isnan(v[k]))
		k++;
	if (k == n) {
		free(v);
		*p = NULL;
	}
}

/* The window without its first d samples (fewer than it has); times are set by the caller. */
static void drop_front(timeline *tl, int d)
{
	int n = tl->n - d;
	for (int g = 0; g < tl->ngpu; g++)
		for (int id = 0; id < GM__COUNT; id++)
			drop_series(&tl->gpu[g].m[id], d, n);
	for (int c = 0; c < tl->ncpu; c++) {
		drop_series(&tl->cpu_busy[c], d, n);
		drop_series(&tl->cpu_iowait[c], d, n);
	}
	for (int h = 0; h < HM__COUNT; h++)
		drop_series(&tl->h[h], d, n);
	int k = 0;
	tl->have_root = false;
	for (int i = 0; i < tl->nprocs; i++) {
		if (tl->procs[i].s < d)
			continue;
		tl->procs[k] = tl->procs[i];
		tl->procs[k].s -= d;
		tl->have_root |= tl->procs[k].gpu >= 0 && tl->procs[k].alive;
		k++;
	}
	tl->nprocs = k;
	tl->n = n;
}

/*
 * Bring the kept window from the range it covers (m->win_*) to w: drop the
 * samples that left it, add the new ones, times again from the new first
 * sample. Only for unthinned windows that overlap; false when it cannot.
 */
static bool window_advance(top_model *m, const win_range *w)
{
	timeline *tl = m->win;
	if (!tl || w->stride != 1 || m->win_stride != 1 || w->first < m->win_first ||
	    w->last < m->win_last || w->first > m->win_last || w->ncpu != tl->ncpu ||
	    tl->ngpu != m->ngpu)
		return false;
	int d = (int)(w->first - m->win_first);
	if (d > 0)
		drop_front(tl, d);
	double t0 = at_abs(m, w->first)->t_wall;
	tl->t0_wall = t0;
	tl->duration = 0;
	for (int i = 0; i < tl->n; i++) {
		tl->t[i] = at_abs(m, w->first + i)->t_wall - t0;
		tl->interval[i] = at_abs(m, w->first + i)->interval_s;
		if (tl->t[i] > tl->duration)
			tl->duration = tl->t[i];
	}
	for (long a = m->win_last + 1; a <= w->last; a++)
		add_sample(tl, at_abs(m, a), tl_add_sample(tl, at_abs(m, a)->t_wall - t0), true);
	window_lost(tl, m, at_abs(m, w->last));
	window_events(tl, m, w);
	return true;
}

/*
 * Each refresh moves the window by a sample or two: rather than building it
 * again from every kept sample (most of the work of a refresh), the last
 * one is kept and moved along.
 */
const timeline *top_model_window_kept(top_model *m, double seconds, int max_samples)
{
	win_range w;
	if (!window_range(m, seconds, max_samples, &w)) {
		tl_free(m->win);
		m->win = NULL;
		return NULL;
	}
	if (!window_advance(m, &w)) {
		tl_free(m->win);
		m->win = window_build(m, &w);
	}
	m->win_first = w.start;
	m->win_last = w.last;
	m->win_stride = w.stride;
	return m->win;
}

void top_model_update_findings(top_model *m)
{
	const timeline *tl = top_model_window_kept(m, TOP_WINDOW_S, 120);
	m->nfindings = tl ? top_findings(tl, m->findings, TOP_FINDINGS_MAX) : 0;
	m->window_s = tl ? tl->t[tl->n - 1] - tl->t[0] : 0;
}

/* ------------------------------------------------------------------ interval */

static const int64_t interval_steps[] = {
    100000000LL, 200000000LL, 500000000LL, 1000000000LL, 2000000000LL, 5000000000LL, 10000000000LL,
};
#define NSTEPS ((int)(sizeof interval_steps / sizeof *interval_steps))

int64_t top_interval_clamp(int64_t ns)
{
	return ns < TOP_INTERVAL_MIN_NS   ? TOP_INTERVAL_MIN_NS
	       : ns > TOP_INTERVAL_MAX_NS ? TOP_INTERVAL_MAX_NS
	                                  : ns;
}

int64_t top_interval_step(int64_t cur, int dir)
{
	cur = top_interval_clamp(cur);
	if (dir > 0) {
		for (int i = 0; i < NSTEPS; i++)
			if (interval_steps[i] > cur)
				return interval_steps[i];
		return TOP_INTERVAL_MAX_NS;
	}
	if (dir < 0) {
		for (int i = NSTEPS - 1; i >= 0; i--)
			if (interval_steps[i] < cur)
				return interval_steps[i];
		return TOP_INTERVAL_MIN_NS;
	}
	return cur;
}
