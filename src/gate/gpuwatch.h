/*
 * gpuwatch.h - the GPUs as the gate sees them (gpuwatch.c): the project's
 * sampler, each tick copied into the gate's GPUs and the upstreams judged
 * again (route.h), the loops woken (loop.h).
 */
#ifndef GPUWHY_GATE_GPUWATCH_H
#define GPUWHY_GATE_GPUWATCH_H

#include "gate/srv.h"
#include "util/fail.h"

typedef struct gate_gpuwatch gate_gpuwatch;
/*
 * Start sampling the GPUs: 0, or GW_EXIT_ENV with *err filled when no GPU
 * can be read: what is `--upstream URL@GPU`, why is the reason (gpu_open's
 * own line is English in both wordings, as it always was), the hint says
 * to drop @GPU. The gate words it: an error where an upstream names its
 * GPUs, a notice where it only would use them.
 */
int gate_gpuwatch_start(gate_srv *g, gate_gpuwatch **out, gw_fail *err);
void gate_gpuwatch_stop(gate_gpuwatch *w);

#endif
