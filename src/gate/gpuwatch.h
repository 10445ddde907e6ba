/*
 * gpuwatch.h - the GPUs as the gate sees them (gpuwatch.c): the project's
 * sampler, each tick copied into the gate's GPUs and the upstreams judged
 * again (route.h), the loops woken (loop.h).
 */
#ifndef GPUWHY_GATE_GPUWATCH_H
#define GPUWHY_GATE_GPUWATCH_H

#include <stddef.h>

#include "gate/srv.h"

typedef struct gate_gpuwatch gate_gpuwatch;
/* Start sampling the GPUs. Returns 0, 1 when no GPU can be read (notice in msg). */
int gate_gpuwatch_start(gate_srv *g, gate_gpuwatch **out, char *msg, size_t msglen);
void gate_gpuwatch_stop(gate_gpuwatch *w);

#endif
