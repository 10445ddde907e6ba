/*
 * conclude.h - what the queue's back ends share: concluding an ended attempt (conclude.c).
 */
#ifndef GPUWHY_QUEUE_CONCLUDE_H
#define GPUWHY_QUEUE_CONCLUDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "queue/db.h"
#include "queue/submit.h"

/*
 * Conclude an attempt whose outcome, exit status, times, peaks and log
 * offset are filled in: look for out-of-memory messages in its part of the
 * log, apply the retry policy, store the result, append the task's record
 * file when it is final. largest_gpu_mib bounds an OOM retry's reservation
 * (-1 unknown). Returns the task's next state, or -1 on a database error.
 */
int queue_attempt_conclude(queue_db *st, queue_attempt *a, int64_t largest_gpu_mib);

/*
 * May queued task c start now (cooldown over, dependency done)? 1 yes;
 * 0 not yet (reason filled, *next_due lowered to the cooldown's end when
 * that is what it waits for); -1 it never will (its dependency ended badly
 * or is missing: the task is failed here).
 */
int queue_candidate_gate(queue_db *st, const queue_candidate *c, double now, char *reason,
                         size_t len, double *next_due);

/* Read the log from offset (at most max bytes from its end). malloc'd, NUL-terminated. */
char *queue_read_tail(const char *path, int64_t offset, size_t max, size_t *len);
/* Append a final record for a task to its record file (JSON Lines). */
void queue_write_record(queue_db *st, int64_t id);

#endif
