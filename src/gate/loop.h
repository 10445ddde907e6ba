/*
 * loop.h - the gate's event loops (loop.c), the lowest seam of the running
 * gate: their threads, wake-ups and epoll sets, and the handlers the seams
 * above register with them. A lower file reaches a higher one only through
 * the handlers it was given.
 */
#ifndef GPUWHY_GATE_LOOP_H
#define GPUWHY_GATE_LOOP_H

#include <stdbool.h>
#include <stdint.h>

#include "gate/srv.h"
#include "util/mhd_dl.h"

/* What an epoll event of the loop is about: a tag in the top bits of its
 * data (below them a descriptor, or a pointer: user space ends at 2^47). */
#define GATE_TAG_MHD (1ULL << 56)
#define GATE_TAG_WAKE (2ULL << 56)
#define GATE_TAG_CURL (3ULL << 56)
#define GATE_TAG_WSU (4ULL << 56) /* a WebSocket's upstream socket */
#define GATE_TAG_WSC (5ULL << 56) /* a WebSocket's client socket */
#define GATE_TAG_MASK (0xffULL << 56)

/*
 * What a part of the gate asks of every event loop (gate_loop_handle).
 * Each pass a loop calls, handler by handler in the order registered:
 * tick (what is due; lower *next to when it next is), then settle
 * (whether work ended; if any did, the loop passes again at once), then
 * idle before it sleeps. An epoll event whose tag is one of tags goes to
 * event; stop ends what the handler holds when the gate stops (abort_all
 * is set). Every function is optional and runs in the loop's thread.
 */
typedef struct gate_loop_handler {
	uint64_t tags[2];
	void (*tick)(gate_loop *l, int64_t *next);
	void (*event)(gate_loop *l, uint64_t data, uint32_t events);
	bool (*settle)(gate_loop *l);
	void (*idle)(gate_loop *l, int64_t *next);
	void (*stop)(gate_loop *l);
} gate_loop_handler;

/* Register h with every loop (before gate_loop_start). */
void gate_loop_handle(gate_srv *g, const gate_loop_handler *h);
/* The loop the calling thread runs, NULL outside them. */
gate_loop *gate_loop_self(void);
/* Make the loops' epoll sets and wake-ups (cfg.workers of them). */
int gate_loops_init(gate_srv *g);
void gate_loops_free(gate_srv *g);
/* Start the loop threads once their daemons exist. */
int gate_loop_start(gate_srv *g);
/* Wake every loop (any thread): the queue, the GPUs or the config changed. */
void gate_loops_wake(gate_srv *g);
/* Wake one loop (any thread). */
void gate_loop_wake(gate_loop *l);
/* Stop accepting connections (each loop closes its listening socket). */
void gate_loop_quiesce(gate_srv *g);
/* End the loop threads; in-flight work is left to gate_xfer_stop. */
void gate_loop_stop(gate_srv *g);

/*
 * Resume a suspended connection of loop l (any thread; mu not needed). A
 * daemon run from an outside loop sees a resume only when it runs next,
 * so its loop is told to run it (and woken when that is another thread).
 */
static inline void gate_resume(gate_loop *l, struct MHD_Connection *c)
{
	MHD_resume_connection(c);
	__atomic_store_n(&l->mhd_kick, true, __ATOMIC_RELEASE);
	if (gate_loop_self() != l)
		gate_loop_wake(l);
}

#endif
