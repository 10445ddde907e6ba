/*
 * ws.h - WebSockets through the gate (ws.c): the upstream's handshake, the
 * client upgraded, bytes relayed both ways; a handler of the loops, all in
 * the loop's thread.
 */
#ifndef GPUWHY_GATE_WS_H
#define GPUWHY_GATE_WS_H

#include <stdbool.h>

#include "gate/loop.h"
#include "gate/srv.h"
#include "util/mhd_dl.h"

/* The loop's handler of every WebSocket (gate_loop_handle). */
extern const gate_loop_handler gate_ws_handler;
/* Whether the request asks for a WebSocket upgrade. */
bool gate_ws_wanted(struct MHD_Connection *c, const char *method);
/*
 * Check the limits and start the upstream side of r's upgrade, suspending
 * r until the upstream answers. False when r got an answer of the gate's
 * own instead (state RQ_READY).
 */
bool gate_ws_begin(gate_loop *l, gate_req *r);
/* The 101 answer for r (state RQ_WS_READY); its headers are r->rhdrs. */
struct MHD_Response *gate_ws_response(gate_req *r);
/* Free the ended ones (all once the daemon is gone). */
void gate_ws_reap(gate_loop *l);

#endif
