/*
 * oom.h - the queue's out-of-memory messages of CUDA and the frameworks in a log tail (oom.c).
 */
#ifndef GPUWHY_QUEUE_OOM_H
#define GPUWHY_QUEUE_OOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { QOOM_NONE, QOOM_GPU, QOOM_HOST } queue_oom_kind;

typedef struct {
	queue_oom_kind kind;
	const char *source; /* "pytorch", "tensorflow", "jax", "cuda", "nccl", "host", NULL */
	char line[256];     /* the matching line, trimmed */
	int64_t tried_mib;  /* size of the failed allocation when the message says it, else -1 */
} queue_oom_info;

/* Look for out-of-memory messages in a log tail. Pure. */
void queue_oom_scan(const char *text, size_t len, queue_oom_info *out);

#endif
