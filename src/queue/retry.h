/*
 * retry.h - the queue's retry policy: what happens after an attempt ends (retry.c).
 */
#ifndef GPUWHY_QUEUE_RETRY_H
#define GPUWHY_QUEUE_RETRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "queue/oom.h"
#include "queue/state.h"

typedef struct {
	queue_outcome outcome;
	bool exit_ok; /* exit_code is meaningful */
	int exit_code;
	int signal; /* 0 when none */
	queue_oom_kind oom;
	int64_t tried_mib;       /* from the OOM message, -1 unknown */
	int attempts_used;       /* attempts counted against the budget, this one included */
	int retries;             /* --retries */
	int64_t retry_delay_ms;  /* --retry-delay */
	int64_t mem_mib;         /* reservation this attempt had, -1 none */
	int64_t peak_gpu_mib;    /* this attempt's peak on one GPU, -1 unknown */
	int64_t largest_gpu_mib; /* largest GPU in the queue's view, -1 unknown */
	int per_gpu;             /* cap this attempt had */
} queue_retry_in;

typedef struct {
	queue_state next;     /* QS_QUEUED to retry, else a final state */
	int64_t delay_ms;     /* cooldown before the retry */
	int64_t mem_hint_mib; /* reservation for the next attempt, -1 = unchanged */
	int per_gpu_hint;     /* cap for the next attempt, 0 = unchanged */
	char why[512];        /* one line for the record */
} queue_retry_out;

void queue_retry_decide(const queue_retry_in *in, queue_retry_out *out);

/*
 * A delay or time limit in seconds as the queue writes it, without the unit:
 * "0.1", "1.5", "30", "3600" (a long one in whole seconds, never "3.6e+03").
 * Returns buf.
 */
const char *queue_seconds_text(double s, char *buf, size_t len);

#endif
