/* snapshot.h - everything known at one instant: GPUs, host summary, per-core CPU, processes. */
#ifndef GPUWHY_MODEL_SNAPSHOT_H
#define GPUWHY_MODEL_SNAPSHOT_H

#include <stdint.h>

#include "gpu/gpu.h"
#include "model/timeline.h"

typedef struct {
	double t_wall;     /* seconds since the epoch */
	int64_t t_mono_ns; /* CLOCK_MONOTONIC */
	double interval_s; /* achieved interval since the previous snapshot, NAN for the first */
	int ngpu;
	gpu_values *gpu;     /* [ngpu], positions as in the sampler's GPU list */
	double h[HM__COUNT]; /* host summary, NAN = absent */
	int ncpu;
	int *cpu_id;                   /* [ncpu] N of cpuN */
	double *cpu_busy, *cpu_iowait; /* [ncpu], NAN = absent */
	int nproc, proc_cap;
	tl_proc *procs; /* GPU processes and the watched tree (field s unused) */
	int nevent, event_cap;
	tl_event *events; /* noticed during this snapshot; t is the wall clock */
	/* bit g: GPU g's process list was read (it may be empty); clear: unknown */
	uint64_t gpu_procs_known;
} snapshot;

void snapshot_init(snapshot *s, int ngpu);
void snapshot_free(snapshot *s);
/* Reset the per-instant lists (procs, events) before a new sample. */
void snapshot_clear(snapshot *s);
tl_proc *snapshot_add_proc(snapshot *s);
tl_event *snapshot_add_event(snapshot *s, const char *kind, int gpu, long value, const char *text);
void snapshot_set_ncpu(snapshot *s, int ncpu);
/* Make d a deep copy of s (d initialised, its storage reused). */
void snapshot_copy(snapshot *d, const snapshot *s);

#endif
