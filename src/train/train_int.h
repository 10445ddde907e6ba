/* train_int.h - what the parts of the training workload share (not for other modules). */
#ifndef GPUWHY_TRAIN_TRAIN_INT_H
#define GPUWHY_TRAIN_TRAIN_INT_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "gpu/gpu.h"
#include "sim_state.h"
#include "train/train.h"

/* Shared by the rank processes (anonymous shared mapping). */
typedef struct {
	uint32_t arrived;
	uint32_t generation; /* futex word of the barrier */
	uint32_t abort;      /* a rank failed: the others stop */
	double
	    link_bps[SIM_MAX_GPUS]; /* each rank's PCIe bandwidth now (all-reduce without NVLink) */
} train_shared;

/* The signal that asked the job to stop, 0 while it runs. */
extern volatile sig_atomic_t train_stop;

/* ---- the host side (train_host.c) ---- */

typedef struct {
	pid_t pid;
	int data_rd;   /* batches ready */
	int credit_wr; /* permission to prepare one more */
} train_worker;

int train_spawn_workers(const train_opts *o, train_worker *w);
void train_stop_workers(const train_opts *o, train_worker *w);
/* Wait for the next batch: from worker `which`, or prepared here. */
int train_next_batch(const train_opts *o, train_worker *w, long long which);
/* Sleep until monotonic time t; -1 when stopped by a signal. */
int train_sleep_until(int64_t t);
void train_futex_wake(uint32_t *addr);
int train_barrier(train_shared *sh, long long ranks, sim_wl *wl, int64_t *lease);

/* ---- the GPU as the job meets it (train_gpu.c) ---- */

typedef struct {
	const train_opts *o;
	gpu_ctx *gpu_ctx;
	train_shared *sh;
	long long rank;
	unsigned gpu; /* NVML index, as in gpu_ctx with every GPU selected */
	sim_wl *wl;
	double held;    /* bytes */
	bool nvlink;    /* collectives over NVLink (else PCIe) */
	double speed;   /* the GPU's speed for this job at the last look (1: full) */
	double h2d_bps; /* what its PCIe link carried then */
} train_rank;

int train_try_alloc(train_rank *r, double want, bool forced);
int train_gpu_step(train_rank *r, double h2d_bytes, double work_ms, unsigned kernel_us);
bool train_has_nvlink(train_rank *r);
void train_publish_link(train_rank *r);
int64_t train_allreduce_ns(train_rank *r, double bytes);

#endif
