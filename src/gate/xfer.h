/*
 * xfer.h - the transfers to upstreams (xfer.c), on each loop's curl multi:
 * the loop's handler for the multi's sockets and timer, easy handles, and
 * each transfer's outcome given to its requests (request.h). What a
 * transfer holds is xfer.c's alone.
 */
#ifndef GPUWHY_GATE_XFER_H
#define GPUWHY_GATE_XFER_H

#include <stdint.h>

#include "gate/loop.h"
#include "gate/srv.h"

/* The loop's handler of every transfer (gate_loop_handle). */
extern const gate_loop_handler gate_xfer_handler;
/* Give every loop its curl multi (after gate_loops_init). */
int gate_xfer_start(gate_srv *g);
/* End what is still in flight (the loops have ended) and free the multis. */
void gate_xfer_stop(gate_srv *g);
/* A transfer of members m (n, taken from the queue) to upstream up (mu
 * held), or NULL when it cannot be made; gate_xfer_hand starts it. */
gate_xfer *gate_xfer_new(gate_srv *g, int up, gate_req **m, int n, int64_t now);
/* Hand x to the loop of its first member, which starts it (mu held). */
void gate_xfer_hand(gate_xfer *x);

#endif
