/* status.h - `gpuwhy status`'s own view (status.c): every GPU's reading and the processes
 * on the GPUs, as text for people or as JSON. The command opens the GPUs, samples them and
 * prints the heading line. */
#ifndef GPUWHY_SMI_STATUS_H
#define GPUWHY_SMI_STATUS_H

#include <stdbool.h>
#include <stdio.h>

#include "gpu/gpu.h"
#include "host/host_pidbrief.h"

/* The most processes status lists (and reads from one GPU). */
#define STATUS_MAX_PROCS 256

/* One process on a GPU, with what /proc tells of it. */
typedef struct {
	int gpu;
	gpu_proc p;
	host_pid_brief h;
} status_proc;

/* The processes on every GPU, at most max; returns how many. */
int status_collect_procs(gpu_ctx *c, status_proc *out, int max);
/* GPU i's lines (v its reading). */
void status_render_gpu(FILE *out, gpu_ctx *c, int i, const gpu_values *v);
/* The process table; nested: this process runs in a nested PID namespace. */
void status_render_procs(FILE *out, const status_proc *ps, int n, bool nested);
/* Everything as one JSON object: versions, each GPU's readings (vals), the processes. */
void status_render_json(FILE *out, gpu_ctx *c, const gpu_values *vals, const status_proc *ps,
                        int np, bool nested);

#endif
