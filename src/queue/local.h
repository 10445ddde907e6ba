/*
 * local.h - the local back end's state, shared by its files:
 *   local.c   the back-end table: recovery, cancels, following shims, concluding
 *   sched.c   the scheduler's view of the GPUs and the pass over queued tasks
 *   spawn.c   starting an attempt: its log header, environment and shim
 *   attrib.c  which GPU process and how much memory belongs to which attempt
 */
#ifndef GPUWHY_QUEUE_LOCAL_H
#define GPUWHY_QUEUE_LOCAL_H

#include "queue/backend.h"
#include "queue/place.h"
#include "queue/db.h"
#include "queue/submit.h"
#include "queue/shim.h"

#define LOCAL_REASONS 64 /* wait reasons are remembered for this many queued tasks */

/* One running attempt. */
typedef struct {
	int64_t task_id;
	int n;
	char token[40];
	int shim_pid;
	uint64_t shim_start;
	int sock; /* -1 when adopted from an earlier worker */
	int ngpu;
	int gidx[GPU_MAX]; /* NVML indices */
	int64_t reserved_mib;
	int per_gpu;
	double started;
	int64_t started_mono;
	int64_t usage[GPU_MAX]; /* MiB on each of its GPUs in the last sample after its start */
	int64_t peak_gpu, peak_rss;
	bool dirty, cancel_sent;
	int64_t log_offset;
	int task_pgid;    /* the command's PID (= process group), 0 until the shim says */
	bool have_status; /* the shim handed over its final status (no file then) */
	queue_status status;
} local_run;

typedef struct {
	int64_t id;
	unsigned hash;
} local_reason;

/* A shim of ours that waits for its next attempt. */
typedef struct {
	int pid;
	uint64_t start;
	int sock;
} local_shim;

#define LOCAL_IDLE_MAX 8 /* waiting shims kept; more are let go */

typedef struct {
	queue_backend_env env;
	local_run **run;
	int nrun, caprun;
	int *reap; /* shims that reported their end and are still exiting */
	int nreap, capreap;
	int foreign[GPU_MAX];         /* per sample position: processes that are not ours */
	int64_t foreign_mib[GPU_MAX]; /* and the memory they use, where reported */
	double next_due;              /* wall time a cooldown ends, 0 none */
	int64_t explain_at;           /* monotonic time the next pass says why every task waits */
	char *env_key;                /* the last task environment parsed (JSON), and its strings */
	char **env_base;
	int env_nbase;
	local_reason reasons[LOCAL_REASONS];
	local_shim idle[LOCAL_IDLE_MAX]; /* shims done with their attempt, reused */
	int nidle;
} queue_local;

/* sched.c */
/* Fill views (preference order) from the sample and the running attempts;
 * pos[k] is view k's position in the sample. */
int local_build_views(const queue_local *l, queue_gpu_view *v, int *pos);
/* The view as `queue gpus` shows it. */
void local_publish_view(queue_local *l);
/* One pass over the queued tasks (quick: only when a slot is free at all). */
void local_schedule(queue_local *l, bool quick);

/* spawn.c */
/* Start an attempt of task c on the sample positions pick[0..n). */
void local_start_task(queue_local *l, const queue_candidate *c, int per_gpu, const int *pick,
                      int n);
void local_run_add(queue_local *l, local_run *r);
/* A run for attempt a (identity, reservation, start, log offset) with socket sock. */
local_run *local_run_new(const queue_attempt *a, int sock);

/* local.c */
/* Wait for shim pid's exit later (it may still be exiting now). */
void local_reap_later(queue_local *l, int pid);
/* Keep a shim that is done with its attempt for the next one (or let it go). */
void local_idle_put(queue_local *l, const local_shim *sh);

/* attrib.c */
/* Who uses which GPU: usage, peaks and foreign counts from the sample. */
void local_attribute(queue_local *l);
/* Peak host memory of each attempt's session. */
void local_sample_rss(queue_local *l);
/* Store the peaks that changed. */
void local_flush_peaks(queue_local *l);
/* The process group of the attempt with this token, found by its environment; 0 none. */
int queue_token_pgid(const char *token);

#endif
