/*
 * place.h - the queue's placement: which GPUs a task goes on, given a view of them (place.c).
 */
#ifndef GPUWHY_QUEUE_PLACE_H
#define GPUWHY_QUEUE_PLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu/gpu.h"

/* One GPU as the scheduler sees it, in preference order. */
typedef struct {
	int index;    /* NVML index, for messages */
	bool usable;  /* present and not lost */
	bool drained; /* `queue drain --gpu`: no new tasks */
	bool total_ok;
	int64_t total_mib;
	bool free_ok;
	int64_t free_mib;    /* as last measured */
	int64_t pending_mib; /* reservations of our tasks on it not yet allocated */
	int64_t held_mib;    /* per task of ours on it, its reservation or its use if more */
	int64_t foreign_mib; /* what processes that are not ours use on it, where known */
	int ntasks;          /* queue tasks placed on it */
	int cap;             /* smallest per-GPU cap of those tasks (0 when none) */
	int foreign;         /* processes on it that are not ours */
} queue_gpu_view;

typedef enum { QP_SPREAD, QP_PACK } queue_place_mode;

typedef struct {
	int gpus;           /* number of GPUs wanted (>= 1) */
	int64_t mem_mib;    /* per GPU; -1 = not declared */
	int per_gpu;        /* at most this many queue tasks on each chosen GPU (>= 1) */
	bool allow_foreign; /* may share a GPU with processes that are not ours */
	queue_place_mode mode;
} queue_place_req;

typedef enum { QP_OK, QP_WAIT, QP_NEVER } queue_place_verdict;

typedef struct {
	queue_place_verdict verdict;
	int n;
	int pick[GPU_MAX]; /* positions in the view array */
	char reason[200];  /* why not (QP_WAIT / QP_NEVER) */
} queue_place_result;

/*
 * Memory available to a new task on v: measured free memory minus what
 * placed tasks have reserved but not yet allocated, and never more than
 * total minus what our tasks hold and foreign processes use. Free memory
 * and the process list are two readings, so a task can allocate between
 * them: its use then counts against its reservation while free memory does
 * not show it yet, and the first term alone would admit into its room.
 * -1 when neither free nor total memory is known.
 */
int64_t queue_gpu_available(const queue_gpu_view *v);

/* Choose GPUs for r. Pure: no I/O. Returns out->verdict. */
queue_place_verdict queue_place(const queue_gpu_view *v, int n, const queue_place_req *r,
                                queue_place_result *out);

#endif
