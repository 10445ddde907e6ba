/*
 * fairq.h - per-user FIFO queues served round-robin with weights
 * (fairq.c). Pure: the gate's mutex guards it.
 */
#ifndef GPUWHY_GATE_FAIRQ_H
#define GPUWHY_GATE_FAIRQ_H

#include <stdbool.h>
#include <stdint.h>

/* A queued request's link; the first member of the server's request. */
typedef struct gate_qitem {
	struct gate_qitem *next, *prev;
	struct gate_user *user;
	int64_t t_enqueue_ns;
} gate_qitem;

typedef struct gate_user {
	char name[128];
	long concurrency, queue_max, weight;
	long inflight; /* requests of this user at an upstream */
	long queued;
	long websockets; /* open WebSockets (ws.c) */
	long credit;     /* picks left in the current turn */
	long taken;      /* scratch for gate_fairq_walk */
	long refs;       /* requests that name this user; 0: its slot may be reused */
	gate_qitem *head, *tail;
	uint64_t served, rejected;
} gate_user;

typedef struct {
	gate_user *users; /* fixed array of GATE_MAX_USERS: pointers stay valid */
	int nusers;
	int cursor;       /* the user served last ... */
	bool cursor_next; /* ... and whether its turn is over */
	long total;       /* queued requests */
} gate_fairq;

int gate_fairq_init(gate_fairq *q);
void gate_fairq_free(gate_fairq *q);
/*
 * Find or add a user; limits are updated. When the table is full, the slot
 * of a user with nothing queued, in flight or referenced is reused; NULL
 * when there is none.
 */
gate_user *gate_fairq_user(gate_fairq *q, const char *name, long concurrency, long queue_max,
                           long weight);
gate_user *gate_fairq_find(gate_fairq *q, const char *name);
/* Append it to u's FIFO. */
void gate_fairq_push(gate_fairq *q, gate_user *u, gate_qitem *it);
/* Remove it from its user's FIFO (it must be queued). */
void gate_fairq_remove(gate_fairq *q, gate_qitem *it);
/*
 * The next item in fair order among users below their concurrency, without
 * removing it; NULL when none may go.
 */
gate_qitem *gate_fairq_peek(gate_fairq *q);
/* Remove it and charge its user's turn (weight picks per turn). */
void gate_fairq_take(gate_fairq *q, gate_qitem *it);
/*
 * Visit queued items in fair order (round-robin across users, weight items
 * per turn, FIFO within each) without removing them. fn returns 1 to count
 * the item against its user's concurrency, 0 to pass it over, -1 to stop;
 * a user whose inflight plus counted items reaches its concurrency is
 * passed over from then on.
 */
void gate_fairq_walk(gate_fairq *q, int (*fn)(gate_qitem *it, void *arg), void *arg);

#endif
