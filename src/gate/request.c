/*
 * request.c - a request's whole life in the gate, from its first byte to
 * its last reference: created when libmicrohttpd names its URI, admitted
 * to the fair queue or refused, taken to an upstream, answered whole or
 * streamed, answered by the gate itself when it cannot go on, and freed.
 * Every change of its state is made here, whoever causes it: the client
 * side (server.c), the dispatcher (dispatch.c), a transfer (xfer.c) or a
 * WebSocket's handshake (ws.c) call these functions and never write its
 * state themselves.
 *
 * A request suspended while it waits is resumed here too (gate_resume,
 * the resume list): a connection is resumed after the gate's mutex is let
 * go, since libmicrohttpd takes a lock of its own.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/loop.h"
#include "gate/metrics.h"
#include "gate/request.h"
#include "gate/route.h"
#include "gate/say.h"
#include "util/i18n.h"
#include "util/jsonw.h"
#include "util/timeutil.h"

/* ------------------------------------------------------------ birth, end */

gate_req *gate_req_new(gate_loop *l, struct MHD_Connection *c, const char *uri)
{
	gate_req *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->uri = strdup(uri ? uri : "/");
	pthread_mutex_init(&r->smu, NULL);
	r->g = l->g;
	r->lp = l;
	r->conn = c;
	r->refs = 1;
	r->rule = -1;
	r->up = -1;
	r->t_arrive = gw_mono_ns();
	return r;
}

static void req_free(gate_req *r)
{
	curl_slist_free_all(r->fwd);
	json_decref(r->jroot);
	free(r->bkey);
	free(r->uri);
	free(r->url);
	free(r->body);
	free(r->rbody);
	free(r->rhdrs);
	free(r->sbuf);
	pthread_mutex_destroy(&r->smu);
	free(r);
}

void gate_req_unref(gate_req *r)
{
	if (--r->refs == 0)
		req_free(r);
}

void gate_req_end(gate_srv *g, gate_req *r)
{
	if (r->state == RQ_QUEUED)
		gate_fairq_remove(&g->q, &r->q);
	if (r->u)
		r->u->refs--;
	if (r->status) {
		int cls_i = r->status / 100;
		g->m.responses[cls_i >= 1 && cls_i <= 5 ? cls_i : 0]++;
		if (r->t_done)
			gate_hist_add(&g->m.latency, (double)(r->t_done - r->t_arrive) / 1e9);
	}
	pthread_mutex_lock(&r->smu);
	r->conn_gone = true;
	pthread_mutex_unlock(&r->smu);
	gate_req_unref(r);
}

/* ------------------------------------------------- the gate's own answers */

void gate_req_fail(gate_req *r, int status, int reason, long retry_after_s, const char *fmt, ...)
{
	va_list ap, aq;
	char why[sizeof r->reason], msg[sizeof r->reason];
	va_start(ap, fmt);
	va_copy(aq, ap);
	vsnprintf(why, sizeof why, fmt, ap);
	vsnprintf(msg, sizeof msg, strcmp(fmt, "%s") ? _(fmt) : fmt, aq);
	va_end(aq);
	va_end(ap);
	gate_req_fail_said(r, status, reason, retry_after_s, why, msg);
}

void gate_req_fail_said(gate_req *r, int status, int reason, long retry_after_s, const char *why,
                        const char *msg)
{
	/* The access log keeps the English reason; the body speaks to the person
	 * who sent the request, in the gate's language. */
	snprintf(r->reason, sizeof r->reason, "%s", why);
	gate_srv *g = r->g;
	if (reason >= 0 && reason < GATE_R__COUNT) {
		g->m.rejected[reason]++;
		snprintf(r->reason_code, sizeof r->reason_code, "%s", gate_reason_names[reason]);
		if (r->u)
			r->u->rejected++;
	} else {
		snprintf(r->reason_code, sizeof r->reason_code, "upstream");
	}
	json_t *j = json_pack("{s:{s:s,s:s,s:s}}", "error", "message", msg, "type", "gpuwhy_gate",
	                      "code", r->reason_code);
	free(r->rbody);
	r->rbody = j ? jsonw_tree_text(j, 0, 0) : NULL;
	json_decref(j);
	if (r->rbody) {
		r->rlen = strlen(r->rbody);
		r->rbody[r->rlen++] = '\n'; /* replaces the terminator: rlen counts bytes */
	} else {
		r->rlen = 0;
	}
	free(r->rhdrs);
	r->rhdrs = strdup("Content-Type: application/json\n");
	r->status = status;
	r->retry_after_s = retry_after_s;
	r->state = RQ_READY;
}

void gate_req_fail_held(gate_req *r, const char *why, const char *why_text)
{
	char en[sizeof r->reason], text[sizeof r->reason];
	gate_cut(en, sizeof en, "held: %s", why);
	gate_cut(text, sizeof text, _("held: %s"), why_text);
	gate_req_fail_said(r, 503, GATE_R_GPU_HOLD, 5, en, text);
}

/* ------------------------------------------------------------- the queue */

bool gate_admit_open(gate_srv *g, gate_req *r)
{
	if (g->draining) {
		gate_req_fail(r, 503, GATE_R_DRAINING, 1, "the gate is shutting down");
		return false;
	}
	if (!r->u) {
		gate_req_fail(r, 503, GATE_R_TOO_MANY_USERS, 1,
		              "too many distinct users (%d); retry later", GATE_MAX_USERS);
		return false;
	}
	return true;
}

bool gate_req_admit(gate_srv *g, gate_req *r)
{
	char why[1200], why_text[1200];
	if (!gate_admit_open(g, r))
		return false;
	gate_user *u = r->u;
	if (u->inflight + u->queued >= u->concurrency + u->queue_max) {
		gate_req_fail(
		    r, 429, GATE_R_USER_QUEUE_FULL, 1,
		    "user %s has %ld in flight and %ld queued (concurrency %ld, queue %ld)",
		    u->name, u->inflight, u->queued, u->concurrency, u->queue_max);
		return false;
	}
	if (g->q.total >= g->cfg.queue_size) {
		gate_req_fail(r, 503, GATE_R_QUEUE_FULL, 1,
		              "the gate's queue is full (%ld waiting)", g->q.total);
		return false;
	}
	if (!gate_route_any_healthy(g, why, why_text, sizeof why)) {
		gate_req_fail_held(r, why, why_text);
		fprintf(stderr, _("gpuwhy gate: holding new work: %s\n"), why_text);
		return false;
	}
	r->t_queued = gw_mono_ns();
	r->q.t_enqueue_ns = r->t_queued;
	gate_fairq_push(&g->q, u, &r->q);
	r->state = RQ_QUEUED;
	MHD_suspend_connection(r->conn);
	return true;
}

void gate_req_requeue_alone(gate_srv *g, gate_req *r, int64_t now)
{
	r->rule = -1;
	r->retried = true;
	r->batch_id = 0;
	r->batch_size = 0;
	r->t_queued = r->q.t_enqueue_ns = now;
	r->state = RQ_QUEUED;
	gate_fairq_push(&g->q, r->u, &r->q);
	g->m.batch_retries++;
}

/* ---------------------------------------------------------- at upstreams */

void gate_req_send(gate_srv *g, gate_req *r, int up, uint64_t batch_id, long inputs, int64_t now)
{
	r->refs++;
	r->state = RQ_INFLIGHT;
	r->t_sent = now;
	r->up = up;
	r->batch_id = batch_id;
	r->batch_size = (int)inputs;
	if (r->u) {
		r->u->inflight++;
		r->u->served++;
	}
	gate_hist_add(&g->m.queue_wait, (double)(now - r->t_queued) / 1e9);
	g->inflight++;
}

void gate_req_back(gate_srv *g, gate_req *r)
{
	if (r->u)
		r->u->inflight--;
	g->inflight--;
}

void gate_req_answer(gate_req *r, int status, char *body, size_t len, char *hdrs)
{
	r->status = status;
	free(r->rbody);
	free(r->rhdrs);
	r->rbody = body;
	r->rlen = len;
	r->rhdrs = hdrs;
	r->state = RQ_READY;
}

void gate_req_answered(gate_req *r)
{
	r->t_done = gw_mono_ns();
	r->state = RQ_SENT;
}

/* --------------------------------------------------------------- streams */

void gate_req_stream_begin(gate_req *r, gate_xfer *x, int status, const char *hdrs)
{
	gate_srv *g = r->g;
	pthread_mutex_lock(&g->mu);
	r->status = status;
	free(r->rhdrs);
	r->rhdrs = hdrs ? strdup(hdrs) : NULL;
	r->state = RQ_STREAMING;
	r->x = x;
	pthread_mutex_unlock(&g->mu);
	gate_resume(r->lp, r->conn);
}

void gate_buf_add(char **b, size_t *len, size_t *cap, const char *p, size_t n)
{
	if (*len + n + 1 > *cap) {
		size_t nc = *cap ? *cap : 1024;
		while (nc < *len + n + 1)
			nc *= 2;
		char *nb = realloc(*b, nc);
		if (!nb)
			return;
		*b = nb;
		*cap = nc;
	}
	memcpy(*b + *len, p, n);
	*len += n;
	(*b)[*len] = '\0';
}

int gate_req_stream_put(gate_req *r, const char *p, size_t n)
{
	pthread_mutex_lock(&r->smu);
	if (r->conn_gone) {
		pthread_mutex_unlock(&r->smu);
		return -1;
	}
	if (r->slen - r->soff >= GATE_STREAM_HIGH) {
		pthread_mutex_unlock(&r->smu);
		return 1;
	}
	gate_buf_add(&r->sbuf, &r->slen, &r->scap, p, n);
	bool wake = r->s_waiting && !r->conn_gone;
	r->s_waiting = false;
	if (wake)
		gate_resume(r->lp, r->conn);
	pthread_mutex_unlock(&r->smu);
	return 0;
}

bool gate_req_stream_drained(gate_req *r)
{
	pthread_mutex_lock(&r->smu);
	bool go = r->conn_gone || r->slen - r->soff <= GATE_STREAM_LOW;
	pthread_mutex_unlock(&r->smu);
	return go;
}

void gate_req_stream_end(gate_req *r)
{
	r->x = NULL;
	pthread_mutex_lock(&r->smu);
	r->s_done = true;
	bool wake = r->s_waiting && !r->conn_gone;
	r->s_waiting = false;
	if (wake)
		gate_resume(r->lp, r->conn);
	pthread_mutex_unlock(&r->smu);
}

ssize_t gate_req_stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)pos;
	gate_req *r = cls;
	pthread_mutex_lock(&r->smu);
	if (r->slen > r->soff) {
		size_t n = r->slen - r->soff < max ? r->slen - r->soff : max;
		memcpy(buf, r->sbuf + r->soff, n);
		r->soff += n;
		if (r->soff == r->slen)
			r->soff = r->slen = 0;
		r->bytes_out += n;
		pthread_mutex_unlock(&r->smu);
		return (ssize_t)n;
	}
	if (r->s_done) {
		pthread_mutex_unlock(&r->smu);
		return MHD_CONTENT_READER_END_OF_STREAM;
	}
	/* Nothing yet: sleep until the transfer writes more (it resumes us). */
	r->s_waiting = true;
	MHD_suspend_connection(r->conn);
	pthread_mutex_unlock(&r->smu);
	return 0;
}

void gate_req_stream_free(void *cls)
{
	gate_req *r = cls;
	gate_srv *g = r->g; /* r may be freed by the unref */
	pthread_mutex_lock(&g->mu);
	gate_req_unref(r);
	pthread_mutex_unlock(&g->mu);
}

/* ------------------------------------------------------------ WebSockets */

void gate_req_ws_wait(gate_req *r, gate_ws *w, int up, const char *url)
{
	r->refs++;
	r->up = up;
	free(r->url);
	r->url = strdup(url);
	r->ws = w;
	r->state = RQ_WS;
}

bool gate_req_ws_ready(gate_req *r, char *hdrs)
{
	free(r->rhdrs);
	r->rhdrs = hdrs;
	r->status = 101;
	r->state = RQ_WS_READY;
	return r->conn_gone;
}

void gate_req_ws_done(gate_req *r)
{
	r->ws = NULL;
	gate_req_unref(r);
}

/* ---------------------------------------------------------- resume lists */

void gate_rl_init(gate_resume_list *l)
{
	l->c = l->inl;
	l->n = 0;
	l->cap = 16;
}

void gate_rl_add(gate_resume_list *l, gate_req *r)
{
	if (r->conn_gone)
		return; /* its connection is closed: nothing to resume */
	if (l->n == l->cap) {
		int nc = l->cap * 2;
		gate_resume_one *np = l->c == l->inl ? malloc((size_t)nc * sizeof *np)
		                                     : realloc(l->c, (size_t)nc * sizeof *np);
		if (!np) {
			/* Resuming now is safe, only slower: MHD takes its own lock. */
			gate_resume(r->lp, r->conn);
			return;
		}
		if (l->c == l->inl)
			memcpy(np, l->inl, sizeof l->inl);
		l->c = np;
		l->cap = nc;
	}
	l->c[l->n++] = (gate_resume_one){r->conn, r->lp};
}

/* A suspended connection stays until resumed, so these are still there. */
void gate_rl_run(gate_resume_list *l)
{
	for (int i = 0; i < l->n; i++)
		gate_resume(l->c[i].l, l->c[i].c);
	l->n = 0;
	if (l->c != l->inl)
		free(l->c);
	gate_rl_init(l);
}
