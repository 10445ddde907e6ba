/* model.c - the ring of recent snapshots and the view derived from it (see model.h). */
#include "top/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/window.h"

/* ------------------------------------------------------------------ snapshots */

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);
	if (!p)
		abort(); /* out of memory in a monitor: nothing sane to do */
	return p;
}

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
			m->nvlinks[i][j] = m->topo[i][j] = -1;
	m->ring = xcalloc(TOP_RING_CAP, sizeof *m->ring);
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
	free(m->rows);
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

static void trim_old_procs(top_model *m)
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
		m->trimmed++;
	}
}

void top_model_ingest(top_model *m, const snapshot *s)
{
	top_snapshot_copy(&m->ring[m->total % TOP_RING_CAP], s);
	m->total++;
	if (m->n < TOP_RING_CAP)
		m->n++;
	/* A frozen sample about to leave the ring ends the pause rather than vanish. */
	if (m->paused && m->frozen < m->total - m->n)
		m->paused = false;
	trim_old_procs(m);
}

const snapshot *top_model_shown(const top_model *m)
{
	return at_abs(m, shown_abs(m));
}

const snapshot *top_model_back(const top_model *m, int back)
{
	return at_abs(m, shown_abs(m) - back);
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
			m->rows = realloc(m->rows, (size_t)m->rows_cap * sizeof *m->rows);
			if (!m->rows)
				abort();
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
				snprintf(err, (size_t)errlen, "no GPU %s here", tok);
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
	tnode *t = xcalloc((size_t)s->nproc, sizeof *t);
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

timeline *top_model_window(const top_model *m, double seconds, int max_samples)
{
	long last = shown_abs(m);
	const snapshot *end = at_abs(m, last);
	if (!end || max_samples < 2)
		return NULL;
	long first = last;
	while (at_abs(m, first - 1) && at_abs(m, first - 1)->t_wall >= end->t_wall - seconds)
		first--;
	long count = last - first + 1;
	if (count < 2)
		return NULL;
	long stride = (count + max_samples - 1) / max_samples;
	const snapshot **v = xcalloc((size_t)count, sizeof *v);
	for (long a = first; a <= last; a++)
		v[a - first] = at_abs(m, a);
	timeline *tl = tl_from_snapshots(v, (int)count, (int)stride, m->ngpu, true);
	free(v);
	for (int g = 0; g < m->ngpu; g++) {
		tl->gpu[g].index = m->gpu[g].index;
		snprintf(tl->gpu[g].uuid, sizeof tl->gpu[g].uuid, "%s", m->gpu[g].uuid);
		snprintf(tl->gpu[g].name, sizeof tl->gpu[g].name, "%s", m->gpu[g].name);
	}
	memcpy(tl->nvlinks, m->nvlinks, sizeof tl->nvlinks);
	memcpy(tl->topo, m->topo, sizeof tl->topo);
	return tl;
}

void top_model_update_findings(top_model *m)
{
	timeline *tl = top_model_window(m, TOP_WINDOW_S, 120);
	m->nfindings = tl ? top_findings(tl, m->findings, TOP_FINDINGS_MAX) : 0;
	m->window_s = tl ? tl->t[tl->n - 1] - tl->t[0] : 0;
	tl_free(tl);
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
