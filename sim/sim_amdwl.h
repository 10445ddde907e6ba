/*
 * sim_amdwl.h - the workloads of `gpuwhy sim train` on a simulated AMD GPU.
 *
 * A workload publishes its GPU phases and memory in the scenario's state
 * directory (sim_state.h, files w<pid>-g<gpu>.state, gpu being gpuwhy's index
 * of the GPU); the simulated NVML adds them to its NVIDIA GPUs, and this
 * reads them for an AMD GPU's files: its activity over the last moments, the
 * memory of the workloads still running, and each one as a DRM client with
 * its VRAM and engine time. Nothing here prints.
 */
#ifndef GPUWHY_SIM_AMDWL_H
#define GPUWHY_SIM_AMDWL_H

#include <stdint.h>

#define SIM_AMDWL_PROCS 32

typedef struct {
	unsigned pid;       /* the PID the driver shows (its own, or another namespace's) */
	uint64_t mem_bytes; /* VRAM it holds */
	double busy_s;      /* GPU time it has used since it started */
} sim_amdwl_proc;

typedef struct {
	double busy, sm, dram; /* shares (0-1) of the window the GPU was busy, SMs, DRAM */
	double act30;          /* 0.35 busy + 0.65 SM share over the last 30 s (temperature) */
	uint64_t mem_bytes;    /* memory of the workloads still running */
	int n;                 /* listed processes */
	sim_amdwl_proc procs[SIM_AMDWL_PROCS];
} sim_amdwl;

/*
 * The workloads on GPU gpu (gpuwhy's index) in state directory dir, over the
 * window_s seconds before now_ns (CLOCK_MONOTONIC: workloads run in real time,
 * also while the scenario clock is pinned). out is all zero when there are none.
 */
void sim_amdwl_read(const char *dir, unsigned gpu, int64_t now_ns, double window_s, sim_amdwl *out);

#endif
