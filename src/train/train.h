/*
 * train.h - `gpuwhy sim train`'s synthetic training workload.
 *
 * A real workload on the host (worker processes burning CPU, ranks meeting
 * at a barrier) whose GPU phases are published to the simulated GPU through
 * its state files (sim/sim_state.h), so the GPU is busy exactly when the
 * workload says so. The GPU is read through the device layer (gpu/gpu.h).
 * The command face (options, usage) is cmd/sim.c.
 */
#ifndef GPUWHY_TRAIN_TRAIN_H
#define GPUWHY_TRAIN_TRAIN_H

#include <stdbool.h>

/* How the driver lists the job's processes (--hidden). */
enum { TRAIN_SHOWN, TRAIN_HIDDEN_PID, TRAIN_HIDDEN_NONE };

typedef struct {
	long long steps, workers, ranks, gpu, straggler, seed, oom_at, fail_at, fail_exit, prefetch;
	double cpu_ms, gpu_ms, kernel_us, straggler_ms, mem_mib, growth_mib, h2d_mib, allreduce_mib;
	int hidden;         /* TRAIN_* */
	double dram_pct;    /* memory-bound kernels' DRAM bandwidth, 0: from --kernel-us */
	bool buffered;      /* stdout block-buffered, as Python writes to a pipe */
	double io_ms;       /* I/O wait of preparing one batch (sleep, no CPU) */
	long long batch;    /* --batch: samples per step; 0 = not given */
	double per_item[3]; /* GPU ms, CPU ms, memory MiB per sample (see train_batch_*) */
} train_opts;

/* The per-sample knobs of --batch, in the order of train_opts.per_item. */
enum { TRAIN_ITEM_GPU_MS, TRAIN_ITEM_CPU_MS, TRAIN_ITEM_MEM_MIB };

/*
 * Run the workload with checked options on the simulated GPU named by
 * GPUWHY_SIM_SCENARIO. Returns the exit code: 0 done, 1 training failed,
 * o->fail_exit, 2 bad GPU choice, 3 no simulated GPU, 128+N on signal N.
 * Errors are printed in the `gpuwhy: ...` form, training output as
 * PyTorch prints it.
 */
int train_run(train_opts *o);

#endif
