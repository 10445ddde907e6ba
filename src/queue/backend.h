/*
 * backend.h - the worker's pieces: what it knows of the GPUs, its settings,
 * and the interface its back ends implement.
 *
 * The worker (worker.c) owns the lock, the wake FIFO, the settings and the
 * loop. Everything about running tasks sits behind one back-end interface,
 * a table of functions, with two implementations: local.c (shims on this
 * machine, placed on the GPUs the sampler sees) and slurm_run.c (jobs placed
 * by Slurm). The worker calls only the table; the back ends share the
 * attempt conclusion in conclude.c, so neither knows the worker or the other.
 */
#ifndef GPUWHY_QUEUE_BACKEND_H
#define GPUWHY_QUEUE_BACKEND_H

#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include "gpu/gpu.h"
#include "queue/state.h"
#include "queue/place.h"
#include "queue/db.h"

/* ---------------------------------------------------------- GPU samples */

#define QUEUE_GPU_PROCS 64 /* processes kept per GPU */

typedef struct {
	unsigned pid;
	bool mem_ok;
	int64_t mem_mib;
} queue_gpu_proc;

typedef struct {
	int index;        /* gpuwhy's index */
	bool amd;         /* an AMD GPU: HIP_VISIBLE_DEVICES, not CUDA_VISIBLE_DEVICES, names it */
	int vendor_index; /* CUDA's number for NVIDIA, HIP's for AMD */
	char uuid[96], name[96];
	bool lost, total_ok, free_ok;
	int64_t total_mib, free_mib;
	int nproc;
	queue_gpu_proc proc[QUEUE_GPU_PROCS];
} queue_gpu_seen;

/* What the worker knows of the GPUs: the memory and processes of the project's
 * sampler's last snapshot, or why there is none (ok false). */
typedef struct {
	uint64_t seq; /* 0: nothing sampled yet */
	int64_t t_mono;
	double t_wall;
	bool ok;
	char err[200];
	int n;
	queue_gpu_seen g[GPU_MAX];
} queue_gpus;

/* Bytes of s that hold data (the GPUs past n are not copied). */
size_t queue_gpus_size(const queue_gpus *s);
/* The largest GPU's memory, -1 when none is known. */
int64_t queue_gpus_largest(const queue_gpus *s);

/*
 * The GPU watch (gpuwatch.c): opens NVML on a thread of its own (retrying
 * every ten minutes while there is no driver), then runs the project's
 * sampler at interval_ns. Each snapshot becomes a queue_gpus published under
 * a lock, and a byte on wake_fd tells the worker's loop.
 */
typedef struct queue_gpuwatch queue_gpuwatch;
queue_gpuwatch *queue_gpuwatch_start(const char *gpus_opt, const char *dir, int wake_fd,
                                     int64_t interval_ns);
/* Copy the latest sample into out when it is newer than out; true then. */
bool queue_gpuwatch_take(queue_gpuwatch *w, queue_gpus *out);
void queue_gpuwatch_set_interval(queue_gpuwatch *w, int64_t interval_ns);
void queue_gpuwatch_stop(queue_gpuwatch *w);

/* The most GPU memory on one GPU held by processes that carry this attempt
 * token in their environment (attrib.c); -1 when none is seen. */
int64_t queue_token_gpu_mib(const queue_gpus *s, const char *token);

/* Free a NULL-terminated vector of strings (an environment), NULL too (spawn.c). */
void queue_env_free(char **v);

/* ------------------------------------------------------------ settings */

/* The queue's settings as the worker last read them (`gpuwhy queue config`). */
typedef struct {
	int per_gpu_default, max_running, cpu_slots;
	bool foreign_allow, visible_index, paused, draining;
	queue_place_mode mode;
	int64_t grace_ns, slurm_poll_ns, sample_ns;
	char order[256], drained[256];
} queue_wconfig;

void queue_wconfig_load(queue_db *st, queue_wconfig *c);

/* Does a GPU list entry ("2", "GPU-8f2a", "8f2a") name g? */
bool queue_gpu_matches(const queue_gpu_seen *g, const char *tok);
/* Whether a comma-separated list names g. */
bool queue_gpu_in_list(const queue_gpu_seen *g, const char *list);

/* ------------------------------------------------------------ back ends */

/* What every back end is given when it opens; all of it outlives the back end. */
typedef struct {
	queue_db *st;
	const char *dir;
	const char *boot_id;
	bool pidns_nested;        /* GPU PIDs are not ours to look up in /proc */
	int devnull;              /* open /dev/null for the commands' stdin */
	const queue_wconfig *cfg; /* updated in place by the worker */
	const queue_gpus *gpus;   /* updated in place by the worker */
} queue_backend_env;

/* What the worker's loop saw since the last pass. */
typedef struct {
	int64_t now;   /* monotonic ns */
	bool poked;    /* settings may have changed, or a cancel was asked for */
	bool added;    /* tasks were added */
	bool quick;    /* a pass for new tasks only: nothing else changed */
	bool stopping; /* the worker stops: conclude what ended, start nothing */
} queue_pass;

typedef struct queue_backend_ops {
	queue_backend kind;
	void *(*open)(const queue_backend_env *env);
	/* Store what it measured and let go; attempts keep running for the next worker. */
	void (*close)(void *be);
	/* Pick up where an earlier worker left off (before the first pass). */
	void (*recover)(void *be);
	/* A new GPU sample is in env->gpus. */
	void (*observe)(void *be);
	/* Deliver the cancels users asked for. */
	void (*cancel)(void *be);
	/* Start or submit queued tasks that may go now. */
	void (*start)(void *be, const queue_pass *p);
	/* Descriptors to wait on (at most max), and how long the wait may last
	 * (ms, -1: no limit of its own). */
	int (*fds)(void *be, struct pollfd *out, int max);
	int64_t (*wait_ms)(void *be, int64_t now);
	/* Follow running attempts, with fds (as fds() gave them, revents set by the
	 * last wait), and conclude the ended ones. */
	void (*follow)(void *be, const queue_pass *p, const struct pollfd *fds, int n);
	/* Attempts it follows now. */
	int (*active)(const void *be);
} queue_backend_ops;

extern const queue_backend_ops queue_backend_local;
extern const queue_backend_ops queue_backend_slurm;

#endif
