/*
 * sched.c - the local back end's scheduler: the GPUs as placement sees
 * them, and one pass over the queued tasks.
 *
 * Placement counts memory that placed tasks reserved but have not
 * allocated yet (see place.c), so a burst of starts does not over-admit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gpu/gpu.h"
#include "queue/local.h"
#include "queue/state.h"
#include "queue/place.h"
#include "queue/submit.h"
#include "queue/worker.h"
#include "queue/conclude.h"
#include "util/hash.h"
#include "util/timeutil.h"

#define CANDIDATES 512 /* queued tasks looked at per pass */
#define BATCH 64
#define FIRST_BATCH 4           /* read first when the pass stops at the last start */
#define EXPLAIN_NS 1000000000LL /* how often a pass reads past the last start */

bool queue_gpu_matches(const queue_gpu_seen *g, const char *tok)
{
	if (!*tok)
		return false;
	bool digits = true;
	for (const char *p = tok; *p; p++)
		digits &= *p >= '0' && *p <= '9';
	if (digits)
		return atoi(tok) == g->index;
	const char *u = g->uuid;
	if (!strncasecmp(u, "GPU-", 4) && strncasecmp(tok, "GPU-", 4))
		u += 4;
	return !strncasecmp(u, tok, strlen(tok));
}

bool queue_gpu_in_list(const queue_gpu_seen *g, const char *list)
{
	char copy[256], *save = NULL;
	snprintf(copy, sizeof copy, "%s", list);
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
		if (queue_gpu_matches(g, t))
			return true;
	return false;
}

/* Sample positions in preference order; returns how many are in the subset. */
static int gpu_order(const queue_local *l, int *pos)
{
	const queue_gpus *s = l->env.gpus;
	const char *order = l->env.cfg->order;
	int n = 0;
	if (!order[0]) {
		for (int i = 0; i < s->n; i++)
			pos[n++] = i;
		return n;
	}
	char copy[256], *save = NULL;
	snprintf(copy, sizeof copy, "%s", order);
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
		for (int i = 0; i < s->n; i++) {
			bool dup = false;
			for (int k = 0; k < n; k++)
				dup |= pos[k] == i;
			if (!dup && queue_gpu_matches(&s->g[i], t))
				pos[n++] = i;
		}
	return n;
}

/* What the running attempts hold on GPU x (its reservations and tasks). */
static void add_runs(const queue_local *l, const queue_gpus *s, queue_gpu_view *x)
{
	for (int r = 0; r < l->nrun; r++) {
		const local_run *run = l->run[r];
		for (int j = 0; j < run->ngpu; j++) {
			if (run->gidx[j] != x->index)
				continue;
			x->ntasks++;
			if (x->cap == 0 || run->per_gpu < x->cap)
				x->cap = run->per_gpu;
			/* A task that started after the sample has allocated nothing in it. */
			int64_t used = run->started_mono < s->t_mono ? run->usage[j] : 0;
			if (run->reserved_mib < 0) {
				x->held_mib += used;
				continue;
			}
			x->held_mib += run->reserved_mib > used ? run->reserved_mib : used;
			if (run->reserved_mib > used)
				x->pending_mib += run->reserved_mib - used;
		}
	}
}

int local_build_views(const queue_local *l, queue_gpu_view *v, int *pos)
{
	const queue_gpus *s = l->env.gpus;
	int n = gpu_order(l, pos);
	for (int k = 0; k < n; k++) {
		const queue_gpu_seen *g = &s->g[pos[k]];
		queue_gpu_view *x = &v[k];
		memset(x, 0, sizeof *x);
		x->index = g->index;
		x->usable = !g->lost;
		x->drained = queue_gpu_in_list(g, l->env.cfg->drained);
		x->total_ok = g->total_ok;
		x->total_mib = g->total_mib;
		x->free_ok = g->free_ok;
		x->free_mib = g->free_mib;
		x->foreign = l->foreign[pos[k]];
		x->foreign_mib = l->foreign_mib[pos[k]];
		add_runs(l, s, x);
	}
	return n;
}

static void row_head(queue_gpu_row *r, const queue_gpu_seen *g)
{
	memset(r, 0, sizeof *r);
	r->index = g->index;
	snprintf(r->uuid, sizeof r->uuid, "%s", g->uuid);
	snprintf(r->name, sizeof r->name, "%s", g->name);
	r->total_mib = g->total_ok ? g->total_mib : -1;
	r->free_mib = g->free_ok ? g->free_mib : -1;
}

static void row_of_view(const queue_local *l, queue_gpu_row *r, const queue_gpu_seen *g,
                        const queue_gpu_view *v)
{
	row_head(r, g);
	r->pending_mib = v->pending_mib;
	int64_t a = queue_gpu_available(v);
	r->avail_mib = g->free_ok || g->total_ok ? a : INT64_MIN;
	r->ntasks = v->ntasks;
	r->cap = v->cap;
	r->foreign = v->foreign;
	snprintf(r->state, sizeof r->state, "%s", g->lost ? "lost" : v->drained ? "drained" : "ok");
	size_t used = 0;
	for (int i = 0; i < l->nrun; i++)
		for (int j = 0; j < l->run[i]->ngpu; j++)
			if (l->run[i]->gidx[j] == g->index && used + 24 < sizeof r->tasks)
				used += (size_t)snprintf(r->tasks + used, sizeof r->tasks - used,
				                         "%s%lld", used ? "," : "",
				                         (long long)l->run[i]->task_id);
}

void local_publish_view(queue_local *l)
{
	const queue_gpus *s = l->env.gpus;
	queue_gpu_view v[GPU_MAX];
	int pos[GPU_MAX];
	int n = s->ok ? local_build_views(l, v, pos) : 0;
	queue_gpu_row rows[GPU_MAX];
	int nr = 0;
	for (int k = 0; k < n; k++)
		row_of_view(l, &rows[nr++], &s->g[pos[k]], &v[k]);
	/* GPUs outside the configured subset are listed too, so `queue gpus` explains them. */
	for (int i = 0; i < s->n; i++) {
		bool in = false;
		for (int k = 0; k < n; k++)
			in |= pos[k] == i;
		if (in)
			continue;
		queue_gpu_row *r = &rows[nr++];
		row_head(r, &s->g[i]);
		r->pending_mib = -1;
		r->avail_mib = INT64_MIN;
		snprintf(r->state, sizeof r->state, "excluded");
	}
	queue_db_gpu_view_put(l->env.st, rows, nr, s->t_wall);
}

static unsigned hash_str(const char *s)
{
	return gw_fnv1a32(s, GW_FNV32_BASIS);
}

#define REASONS_PER_PASS 32

/* One pass's state: the views as this pass's starts change them, and the wait
 * reasons it found (stored together at its end). */
typedef struct {
	queue_gpu_view view[GPU_MAX];
	int pos[GPU_MAX];
	int nv;
	int cpu_running;
	double now;
	int nreason;
	int64_t reason_id[REASONS_PER_PASS];
	char reason[REASONS_PER_PASS][200];
} sched_pass;

/* A waiting task's reason, to be stored when it changed (`queue ls` shows them). */
static void set_reason(queue_local *l, sched_pass *p, int64_t id, const char *reason)
{
	unsigned h = hash_str(reason);
	local_reason *slot = &l->reasons[(uint64_t)id % LOCAL_REASONS];
	if (slot->id == id && slot->hash == h)
		return;
	if (p->nreason >= REASONS_PER_PASS)
		return;
	slot->id = id;
	slot->hash = h;
	p->reason_id[p->nreason] = id;
	snprintf(p->reason[p->nreason++], sizeof p->reason[0], "%s", reason);
}

static bool full(const queue_local *l)
{
	return l->env.cfg->max_running > 0 && l->nrun >= l->env.cfg->max_running;
}

/* Could anything more start at all? (No: stop reading candidates.) */
static bool room(const queue_local *l, const sched_pass *p)
{
	if (full(l))
		return false;
	if (p->cpu_running < l->env.cfg->cpu_slots)
		return true;
	for (int k = 0; k < p->nv; k++) {
		const queue_gpu_view *v = &p->view[k];
		if (v->usable && !v->drained && (v->cap == 0 || v->ntasks < v->cap))
			return true;
	}
	return false;
}

/* Count a start at once: the next candidate sees this reservation. */
static void count_start(sched_pass *p, const queue_place_result *res, int per_gpu, int64_t mem_mib)
{
	for (int k = 0; k < res->n; k++) {
		queue_gpu_view *x = &p->view[res->pick[k]];
		x->ntasks++;
		if (x->cap == 0 || per_gpu < x->cap)
			x->cap = per_gpu;
		if (mem_mib >= 0) {
			x->pending_mib += mem_mib;
			x->held_mib += mem_mib;
		}
	}
}

/* A task that wants GPUs: place it, or say why it waits. */
static void place_gpu_task(queue_local *l, sched_pass *p, const queue_candidate *c)
{
	const queue_gpus *s = l->env.gpus;
	const queue_wconfig *cfg = l->env.cfg;
	if (!s->ok) {
		set_reason(l, p, c->id, s->seq ? s->err : "waiting for the first GPU sample");
		return;
	}
	int per_gpu = c->per_gpu > 0 ? c->per_gpu : cfg->per_gpu_default;
	if (c->per_gpu_hint > 0 && c->per_gpu_hint < per_gpu)
		per_gpu = c->per_gpu_hint;
	queue_place_req req = {.gpus = c->gpus,
	                       .mem_mib = c->mem_mib,
	                       .per_gpu = per_gpu,
	                       .allow_foreign = c->allow_foreign || cfg->foreign_allow,
	                       .mode = cfg->mode};
	int usable = 0;
	for (int k = 0; k < p->nv; k++)
		usable += p->view[k].usable;
	if (usable == 0) {
		/* A subset that matches nothing or GPUs all lost: wait, do not fail work. */
		set_reason(l, p, c->id,
		           "no usable GPU in the queue's view (see gpuwhy queue gpus)");
		return;
	}
	queue_place_result res;
	queue_place(p->view, p->nv, &req, &res);
	if (res.verdict == QP_NEVER) {
		queue_db_fail_now(l->env.st, c->id, res.reason);
		queue_worker_log("task %lld failed: %s", (long long)c->id, res.reason);
		queue_write_record(l->env.st, c->id);
		return;
	}
	if (res.verdict == QP_WAIT) {
		set_reason(l, p, c->id, res.reason);
		return;
	}
	int pick[GPU_MAX];
	for (int k = 0; k < res.n; k++)
		pick[k] = p->pos[res.pick[k]];
	int before = l->nrun;
	local_start_task(l, c, per_gpu, pick, res.n);
	if (l->nrun != before)
		count_start(p, &res, per_gpu, c->mem_mib);
}

static void consider(queue_local *l, sched_pass *p, const queue_candidate *c)
{
	char reason[200];
	int gate = queue_candidate_gate(l->env.st, c, p->now, reason, sizeof reason, &l->next_due);
	if (gate < 0)
		return;
	if (gate == 0) {
		set_reason(l, p, c->id, reason);
		return;
	}
	if (c->gpus > 0) {
		place_gpu_task(l, p, c);
		return;
	}
	if (p->cpu_running >= l->env.cfg->cpu_slots) {
		snprintf(reason, sizeof reason, "waiting for a CPU slot (%d in use)",
		         p->cpu_running);
		set_reason(l, p, c->id, reason);
		return;
	}
	local_start_task(l, c, 0, NULL, 0);
	p->cpu_running++;
}

/* The pass over the candidates. */
static void pass(queue_local *l, sched_pass *p, bool quick)
{
	p->nv = l->env.gpus->ok ? local_build_views(l, p->view, p->pos) : 0;
	for (int r = 0; r < l->nrun; r++)
		p->cpu_running += l->run[r]->ngpu == 0;
	if (quick && !room(l, p))
		return;
	/* Once nothing more can start, a pass stops: reading and weighing the tasks behind
	 * cost more than starting one. At most once a second it reads on to the end of the
	 * batch, to say why each of them waits (ls, show) and to conclude what their gates
	 * decide (an --after task that failed, a cooldown's end). */
	int64_t mono = gw_mono_ns();
	bool explain = mono >= l->explain_at;
	if (explain)
		l->explain_at = mono + EXPLAIN_NS;
	queue_candidate cand[BATCH];
	int64_t last = 0;
	int seen = 0, want = explain ? BATCH : FIRST_BATCH;
	/* Candidates in batches: with a long queue and no room, only the head is read. */
	for (;; want = BATCH) {
		int nc = queue_db_candidates(l->env.st, QB_LOCAL, last, cand, want);
		for (int i = 0; i < nc; i++, seen++) {
			if (full(l) || (!explain && !room(l, p)))
				return;
			consider(l, p, &cand[i]);
		}
		if (nc < want || seen >= CANDIDATES || !room(l, p))
			return;
		last = cand[nc - 1].id;
	}
}

void local_schedule(queue_local *l, bool quick)
{
	const queue_wconfig *cfg = l->env.cfg;
	if (cfg->paused || cfg->draining || full(l))
		return;
	sched_pass p = {.now = gw_wall_s()};
	pass(l, &p, quick);
	/* After the starts (their go-ahead is sent), in one transaction: one each was a
	 * burst of commits once a second in the middle of a drain. */
	if (p.nreason > 0) {
		const char *text[REASONS_PER_PASS];
		for (int i = 0; i < p.nreason; i++)
			text[i] = p.reason[i];
		queue_db_wait_reasons(l->env.st, p.reason_id, text, p.nreason);
	}
}
