/*
 * route.h - which upstream may take work (route.c): each upstream's health
 * judged from its GPUs, and the pick of the one to send to now.
 */
#ifndef GPUWHY_GATE_ROUTE_H
#define GPUWHY_GATE_ROUTE_H

#include <stdbool.h>
#include <stddef.h>

#include "gate/srv.h"

/* Recompute each upstream's health from the GPUs (mu held). */
void gate_route_refresh(gate_srv *g);
/*
 * The upstream to send to now (mu held), or -1: *held is then true when
 * no upstream is healthy (why in why), false when all are merely full.
 */
int gate_route_pick(gate_srv *g, bool *held, char *why, char *why_text, size_t whylen);
/* Whether some upstream is healthy; why explains when none is (mu held),
 * why_text in the gate's language (both whylen bytes). */
bool gate_route_any_healthy(gate_srv *g, char *why, char *why_text, size_t whylen);

#endif
