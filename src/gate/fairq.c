/*
 * fairq.c - fair queueing across users: each user has a FIFO; users take
 * turns, `weight` requests per turn, and a user at its concurrency limit
 * is passed over without losing its place. One user's burst therefore
 * delays another user's single request by at most one turn per user.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/config.h"
#include "gate/fairq.h"

int gate_fairq_init(gate_fairq *q)
{
	memset(q, 0, sizeof *q);
	q->users = calloc(GATE_MAX_USERS, sizeof *q->users);
	return q->users ? 0 : -1;
}

void gate_fairq_free(gate_fairq *q)
{
	free(q->users);
	memset(q, 0, sizeof *q);
}

gate_user *gate_fairq_find(gate_fairq *q, const char *name)
{
	for (int i = 0; i < q->nusers; i++)
		if (!strcmp(q->users[i].name, name))
			return &q->users[i];
	return NULL;
}

gate_user *gate_fairq_user(gate_fairq *q, const char *name, long concurrency, long queue_max,
                           long weight)
{
	gate_user *u = gate_fairq_find(q, name);
	if (!u && q->nusers < GATE_MAX_USERS)
		u = &q->users[q->nusers++];
	for (int i = 0; !u && i < q->nusers; i++) {
		gate_user *x = &q->users[i];
		if (!x->refs && !x->queued && !x->inflight && !x->head)
			u = x;
	}
	if (!u)
		return NULL;
	if (strcmp(u->name, name) != 0) {
		memset(u, 0, sizeof *u);
		snprintf(u->name, sizeof u->name, "%s", name);
	}
	u->concurrency = concurrency > 0 ? concurrency : 1;
	u->queue_max = queue_max >= 0 ? queue_max : 0;
	u->weight = weight > 0 ? weight : 1;
	if (u->credit <= 0 || u->credit > u->weight)
		u->credit = u->weight;
	return u;
}

void gate_fairq_push(gate_fairq *q, gate_user *u, gate_qitem *it)
{
	it->user = u;
	it->next = NULL;
	it->prev = u->tail;
	if (u->tail)
		u->tail->next = it;
	else
		u->head = it;
	u->tail = it;
	u->queued++;
	q->total++;
}

void gate_fairq_remove(gate_fairq *q, gate_qitem *it)
{
	gate_user *u = it->user;
	if (it->prev)
		it->prev->next = it->next;
	else
		u->head = it->next;
	if (it->next)
		it->next->prev = it->prev;
	else
		u->tail = it->prev;
	it->next = it->prev = NULL;
	u->queued--;
	q->total--;
}

static bool may_go(const gate_user *u)
{
	return u->head && u->inflight < u->concurrency;
}

/* Where the round goes on; computed late, so a user added since is next in line. */
static int start_of(const gate_fairq *q)
{
	if (!q->nusers)
		return 0;
	return (q->cursor + (q->cursor_next ? 1 : 0)) % q->nusers;
}

gate_qitem *gate_fairq_peek(gate_fairq *q)
{
	int start = start_of(q);
	for (int k = 0; k < q->nusers; k++) {
		gate_user *u = &q->users[(start + k) % q->nusers];
		if (may_go(u))
			return u->head;
	}
	return NULL;
}

void gate_fairq_take(gate_fairq *q, gate_qitem *it)
{
	gate_user *u = it->user;
	int start = start_of(q);
	gate_fairq_remove(q, it);
	int idx = (int)(u - q->users);
	bool turn_over = --u->credit <= 0 || !u->head;
	if (turn_over)
		u->credit = u->weight;
	/* A user passed over (at its concurrency) keeps its place in line. */
	if (idx == start) {
		q->cursor = idx;
		q->cursor_next = turn_over;
	}
}

void gate_fairq_walk(gate_fairq *q, int (*fn)(gate_qitem *it, void *arg), void *arg)
{
	if (!q->nusers || !q->total)
		return;
	gate_qitem **pos = malloc((size_t)q->nusers * sizeof *pos);
	if (!pos)
		return;
	for (int i = 0; i < q->nusers; i++) {
		pos[i] = q->users[i].head;
		q->users[i].taken = 0;
	}
	bool any = true;
	int start = start_of(q);
	for (long round = 0; any; round++) {
		any = false;
		for (int k = 0; k < q->nusers; k++) {
			int i = (start + k) % q->nusers;
			gate_user *u = &q->users[i];
			/* The cursor's user may have used part of its turn already. */
			long quota = (round == 0 && k == 0) ? u->credit : u->weight;
			for (long j = 0; j < quota && pos[i]; j++) {
				if (u->inflight + u->taken >= u->concurrency) {
					pos[i] = NULL;
					break;
				}
				gate_qitem *it = pos[i];
				pos[i] = it->next;
				int r = fn(it, arg);
				if (r < 0)
					goto done;
				if (r > 0)
					u->taken++;
			}
			if (pos[i])
				any = true;
		}
	}
done:
	free(pos);
}
