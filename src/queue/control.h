/*
 * control.h - what changes the queue's course from outside the worker (control.c):
 * cancelling and forgetting tasks, pausing, draining and resuming the queue or some of its
 * GPUs, waking or starting the worker after a change, and stopping it. The commands
 * print what happened; nothing here prints.
 */
#ifndef GPUWHY_QUEUE_CONTROL_H
#define GPUWHY_QUEUE_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "queue/db.h"
#include "util/fail.h"

/* The ids of every task that has not ended (`cancel --all`), oldest first; free *ids. */
void queue_ctl_unended(queue_db *st, int64_t **ids, int *n);

/* How a cancel went. */
typedef enum {
	QUEUE_CANCELLED,      /* it had not started: cancelled now, its record written */
	QUEUE_CANCEL_ASKED,   /* it runs: its shim is told, its record says so once it ends */
	QUEUE_CANCEL_ENDED,   /* it had already ended, *ended its state */
	QUEUE_CANCEL_UNKNOWN, /* it had already ended, and its state could not be read */
} queue_cancel_result;
/* Cancel task id: 0 and *res, > 0 no such task, < 0 the database failed. */
int queue_ctl_cancel(queue_db *st, int64_t id, queue_cancel_result *res, queue_state *ended);

/* Forget the done tasks (all: every ended one) and their logs; *n how many. 0 or
 * GW_EXIT_ENV. */
int queue_ctl_clean(queue_db *st, const char *dir, bool all, int *n);

/* Take the GPUs of list (indices or UUIDs) out of placement (add) or put them back: 0 and
 * the drained GPUs now in out; a bad list fills *e (what: --gpu) and returns its code;
 * GW_EXIT_ENV when the database failed (with e->code 0). */
int queue_ctl_drain_gpus(queue_db *st, const char *list, bool add, char *out, size_t len,
                         gw_fail *e);

typedef enum { QUEUE_PAUSE, QUEUE_DRAIN, QUEUE_RESUME } queue_mode;
/* Pause, drain or resume the queue: 0 or GW_EXIT_ENV. *start: a worker should be started
 * (resumed with tasks waiting). */
int queue_ctl_set_mode(queue_db *st, queue_mode m, bool *start);
/* After a change, start a worker (start, when none runs) and wake it: 0 or GW_EXIT_ENV
 * (no worker could be started; none is woken). */
int queue_ctl_kick(const char *dir, bool start);

/* How stopping the worker went. */
typedef enum {
	QUEUE_STOPPED,      /* it was signalled and has gone */
	QUEUE_STOP_NONE,    /* no worker runs */
	QUEUE_STOP_BAD_DIR, /* the directory is not one the queue trusts: *e */
	QUEUE_STOP_NO_PID,  /* worker.lock is held but names no pid */
	QUEUE_STOP_UNSENT,  /* the signal could not be sent: e->why_text says why */
	QUEUE_STOP_STUCK,   /* it did not stop within 15 s */
} queue_stop_result;
/* Stop the worker of dir with SIGTERM and wait until it has gone; *pid its pid. */
queue_stop_result queue_ctl_stop(const char *dir, const char *self_exe, int *pid, gw_fail *e);

#endif
