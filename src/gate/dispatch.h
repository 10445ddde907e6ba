/*
 * dispatch.h - which queued request goes to which upstream, and when
 * (dispatch.c): fair order, batches, expiry. A handler of the loops that
 * makes transfers (xfer.h) and knows nothing of libcurl.
 */
#ifndef GPUWHY_GATE_DISPATCH_H
#define GPUWHY_GATE_DISPATCH_H

#include "gate/loop.h"
#include "gate/srv.h"

/* The loop's handler that dispatches (gate_loop_handle). */
extern const gate_loop_handler gate_dispatch_handler;
void gate_dispatch_free(gate_srv *g);

#endif
