/*
 * follow.h - following tasks from outside the worker (follow.c): a task's log, all of it
 * or one attempt's part, copied as it grows (`queue log`), and how many of a set of tasks
 * have not ended or ended otherwise than done (`queue wait`).
 */
#ifndef GPUWHY_QUEUE_FOLLOW_H
#define GPUWHY_QUEUE_FOLLOW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "queue/db.h"

/* The bytes of task id's log that attempt (> 0; 0: all of them) wrote: [*from, *until),
 * *until -1 while the log may still grow. 0, or > 0 when the task has no such attempt. */
int queue_log_span(queue_db *st, int64_t id, int attempt, int64_t *from, int64_t *until);
/* Copy the log at path from *off (up to until, when >= 0) to out, moving *off on; true
 * when something was copied. */
bool queue_log_copy(const char *path, int64_t *off, int64_t until, FILE *out);

/* Of tasks ids (n of them; n 0: every task in the queue) count those that have not ended
 * and those that ended otherwise than done. 0, or the index + 1 of an id that names no
 * task. */
int queue_wait_count(queue_db *st, const int64_t *ids, int n, int *pending, int *bad);

#endif
