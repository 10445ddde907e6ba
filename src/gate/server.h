/*
 * server.h - the client side of the gate (server.c): the listening
 * daemons of the loops and the metrics listener, each request read,
 * checked and handed to its life (request.h) or to a WebSocket (ws.h).
 */
#ifndef GPUWHY_GATE_SERVER_H
#define GPUWHY_GATE_SERVER_H

#include "gate/srv.h"
#include "util/fail.h"

/* 0, or GW_EXIT_ENV with *err filled (the gate, where it could not listen, a hint). */
int gate_server_start(gate_srv *g, gw_fail *err);
void gate_server_quiesce(gate_srv *g);
void gate_server_stop(gate_srv *g);

#endif
