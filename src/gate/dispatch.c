/*
 * dispatch.c - which request goes where, and when: takes requests from
 * the fair queue, in fair order over every loop's requests, while an
 * upstream has a free slot (route.c picks it), forms batches on batchable
 * endpoints (batch.c decides their size), and hands each batch or request
 * to a transfer (xfer.c) on the loop that holds its (first) client.
 * Waiting requests time out here (503). It runs in any of the gate's
 * event loops, as a handler of theirs (loop.c), under the gate's mutex;
 * it knows nothing of libcurl.
 */
#include <stdlib.h>
#include <string.h>

#include "gate/batch.h"
#include "gate/dispatch.h"
#include "gate/metrics.h"
#include "gate/request.h"
#include "gate/route.h"
#include "gate/say.h"
#include "gate/xfer.h"
#include "util/i18n.h"
#include "util/timeutil.h"

/* Send members (already taken from the queue) to upstream up (mu held). */
static void send_to(gate_srv *g, int up, gate_req **m, int n, int64_t now, gate_resume_list *rl)
{
	gate_xfer *x = gate_xfer_new(g, up, m, n, now);
	if (!x) {
		for (int i = 0; i < n; i++) {
			gate_req_fail(m[i], 503, -1, 1, "the gate could not start the transfer");
			gate_rl_add(rl, m[i]);
		}
		return;
	}
	long inputs = 0;
	for (int i = 0; i < n; i++)
		inputs += m[i]->ninputs;
	uint64_t bid = m[0]->rule >= 0 ? ++g->next_batch : 0;
	if (bid)
		gate_hist_add(&g->m.batch_size, (double)inputs);
	if (n > 1)
		g->m.batches++;
	for (int i = 0; i < n; i++)
		gate_req_send(g, m[i], up, bid, inputs, now);
	g->up[up].inflight++;
	g->up[up].requests++;
	g->inflight_xfers++;
	gate_xfer_hand(x);
}

typedef struct {
	gate_req **c;
	long n, cap;
} cands;

static int collect(gate_qitem *it, void *arg)
{
	cands *c = arg;
	if (c->n == c->cap)
		return -1;
	c->c[c->n++] = (gate_req *)it;
	return 1;
}

/* Form the batch that r heads; returns how many members are in m (0: wait). */
static int form_batch(gate_srv *g, cands *c, long i, int64_t now, gate_req **m, int64_t *next,
                      bool *leftover)
{
	gate_req *r = c->c[i];
	const gate_batch_rule *rule = &r->brule;
	long total = r->ninputs;
	int64_t oldest = r->t_queued;
	int n = 1;
	m[0] = r;
	r->pass = g->pass;
	for (long j = i + 1; j < c->n; j++) {
		gate_req *s = c->c[j];
		if (s->state != RQ_QUEUED || s->rule < 0 || s->pass == g->pass ||
		    strcmp(s->bkey, r->bkey) != 0)
			continue;
		s->pass = g->pass;
		if (total + s->ninputs > rule->max_batch_size || n == 4096) {
			*leftover = true;
			continue;
		}
		m[n++] = s;
		total += s->ninputs;
		if (s->t_queued < oldest)
			oldest = s->t_queued;
	}
	int64_t due = oldest + rule->max_queue_delay_us * 1000LL;
	long size = gate_batch_choose(rule, total, now >= due);
	if (size == 0) {
		if (due < *next)
			*next = due;
		return 0;
	}
	long sum = 0;
	int k = 0;
	while (k < n && (k == 0 || sum + m[k]->ninputs <= size))
		sum += m[k++]->ninputs;
	if (k < n)
		*leftover = true;
	return k;
}

/*
 * How long a request just queued by its loop is left for that loop to
 * send: it dispatches right after reading the request, and sending from
 * there saves a hand-over (a wake-up of that loop) per request.
 */
#define HANDOFF_GRACE_NS 200000LL

static void dispatch(gate_srv *g, gate_loop *self, int64_t now, int64_t *next, gate_resume_list *rl)
{
	g->hold_why[0] = g->hold_why_text[0] = '\0';
	if (!g->q.total)
		return;
	long want = g->q.total < 65536 ? g->q.total : 65536;
	if (want > g->cand_cap) {
		gate_req **nc = realloc(g->cand, (size_t)want * sizeof *nc);
		if (!nc)
			return;
		g->cand = nc;
		g->cand_cap = want;
	}
	cands c = {.c = g->cand, .cap = want};
	gate_req *m[4096];
	gate_fairq_walk(&g->q, collect, &c);
	g->pass++;
	bool leftover = false;
	for (long i = 0; i < c.n; i++) {
		gate_req *r = c.c[i];
		if (r->state != RQ_QUEUED || r->pass == g->pass)
			continue;
		if (g->inflight_xfers >= g->cfg.max_inflight)
			break;
		/* Stop rather than skip it: the fair order holds across loops. */
		if (r->lp != self && now - r->t_queued < HANDOFF_GRACE_NS) {
			if (r->t_queued + HANDOFF_GRACE_NS < *next)
				*next = r->t_queued + HANDOFF_GRACE_NS;
			break;
		}
		bool held;
		int up =
		    gate_route_pick(g, &held, g->hold_why, g->hold_why_text, sizeof g->hold_why);
		if (up < 0)
			break;
		int n = 1;
		m[0] = r;
		if (r->rule >= 0) {
			n = form_batch(g, &c, i, now, m, next, &leftover);
			if (n == 0)
				continue;
		}
		for (int k = 0; k < n; k++)
			gate_fairq_take(&g->q, &m[k]->q);
		send_to(g, up, m, n, now, rl);
	}
	if (leftover)
		*next = now;
}

/* A request that waited its queue_timeout_ms while no upstream could take it:
 * the reasons are said in each language already. */
static void held_too_long(gate_srv *g, gate_req *r)
{
	char en[sizeof r->reason], text[sizeof r->reason];
	gate_cut(en, sizeof en, "waited %ld ms in the queue, held: %s", g->cfg.queue_timeout_ms,
	         g->hold_why);
	gate_cut(text, sizeof text, _("waited %ld ms in the queue, held: %s"),
	         g->cfg.queue_timeout_ms, g->hold_why_text);
	gate_req_fail_said(r, 503, GATE_R_GPU_HOLD, 5, en, text);
}

/* Fail requests that waited longer than queue_timeout_ms (mu held). */
static void expire(gate_srv *g, int64_t now, int64_t *next, gate_resume_list *rl, bool all)
{
	int64_t limit = g->cfg.queue_timeout_ms * 1000000LL;
	for (int i = 0; i < g->q.nusers; i++) {
		gate_user *u = &g->q.users[i];
		while (u->head) {
			gate_req *r = (gate_req *)u->head;
			if (!all && now - r->t_queued < limit) {
				if (r->t_queued + limit < *next)
					*next = r->t_queued + limit;
				break;
			}
			gate_fairq_remove(&g->q, &r->q);
			if (all)
				gate_req_fail(r, 503, GATE_R_DRAINING, 1,
				              "the gate shut down before this request was sent");
			else if (g->hold_why[0])
				held_too_long(g, r);
			else
				gate_req_fail(r, 503, GATE_R_QUEUE_TIMEOUT, 1,
				              "waited %ld ms in the queue (queue_timeout_ms)",
				              g->cfg.queue_timeout_ms);
			gate_rl_add(rl, r);
		}
	}
}

/* Expire and dispatch queued requests; *next is lowered to when to look again. */
static void dispatch_tick(gate_loop *l, int64_t *next)
{
	gate_srv *g = l->g;
	/* Nothing queued: no need for the lock. A request queued meanwhile by
	 * another loop is dispatched by that loop, and one queued before a slot
	 * here was freed is seen, since freeing it took the lock after the
	 * queueing did. */
	if (!__atomic_load_n(&g->q.total, __ATOMIC_RELAXED) &&
	    !__atomic_load_n(&g->abort_all, __ATOMIC_RELAXED))
		return;
	gate_resume_list rl;
	gate_rl_init(&rl);
	pthread_mutex_lock(&g->mu);
	bool abort_all = g->abort_all;
	int64_t now = gw_mono_ns();
	expire(g, now, next, &rl, abort_all);
	if (!abort_all)
		dispatch(g, l, now, next, &rl);
	pthread_mutex_unlock(&g->mu);
	gate_rl_run(&rl);
}

/* The gate stops (abort_all is set): every queued request is answered 503. */
static void dispatch_stop(gate_loop *l)
{
	int64_t next = INT64_MAX;
	dispatch_tick(l, &next);
}

const gate_loop_handler gate_dispatch_handler = {
    .tick = dispatch_tick,
    .stop = dispatch_stop,
};

void gate_dispatch_free(gate_srv *g)
{
	free(g->cand);
	g->cand = NULL;
	g->cand_cap = 0;
}
