/*
 * submit.h - the queue's submission socket: a one-command add handed to the worker (submit.c).
 */
#ifndef GPUWHY_QUEUE_SUBMIT_H
#define GPUWHY_QUEUE_SUBMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu/gpu.h"
#include "queue/retry.h"
#include "queue/spec.h"
#include "queue/state.h"
#include "queue/db.h"

/* A new submission's token (random, hex) into out (at least 33 bytes). */
void queue_submit_token(char *out, size_t len);

enum {
	QUEUE_SUBMIT_ADDED,      /* the worker added them: ids and *draining filled */
	QUEUE_SUBMIT_NOT_SENT,   /* no worker takes submissions here: add them to the database */
	QUEUE_SUBMIT_UNANSWERED, /* sent, no answer: add them under the same token */
};
/* Hand n tasks (at most 64) to the worker of dir, under token; backend_default: each
 * takes the queue's `config backend`. One of QUEUE_SUBMIT_*. */
int queue_submit_send(const char *dir, const queue_spec *specs, int n, bool backend_default,
                      const char *token, int64_t *ids, bool *draining);
/* The worker's side: the listening socket (-1 when it cannot have one: the client then
 * uses the database), its requests served (true when tasks were added; failures are not
 * reported to on_error: the client meets them again), and its removal. */
int queue_submit_listen(const char *dir);
bool queue_submit_serve(queue_db *st, int lfd, void (*on_error)(const gw_fail *e));
void queue_submit_close(const char *dir, int fd);

int queue_db_get(queue_db *st, int64_t id, queue_task *out); /* 0, 1 not found, -1 */
/* All tasks (or those in state, when state >= 0), ordered by id. */
int queue_db_list(queue_db *st, int state, queue_task **out, int *n);
void queue_tasks_free(queue_task *t, int n);
int queue_db_attempts(queue_db *st, int64_t id, queue_attempt **out, int *n);
int queue_db_attempt_get(queue_db *st, int64_t id, int n, queue_attempt *out);

/* Config: value into out (default when unset); set writes it. */
void queue_db_config_get(queue_db *st, const char *key, char *out, size_t outlen);
int64_t queue_db_config_int(queue_db *st, const char *key);
int queue_db_config_set(queue_db *st, const char *key, const char *value);

/*
 * User actions. Each returns 0 and sets *result to what happened:
 * cancel: 0 cancelled while queued, 1 cancel requested for an active attempt, 2 already final.
 * retry:  0 queued again, 1 not final (nothing done).
 */
int queue_db_cancel(queue_db *st, int64_t id, int *result, queue_attempt *active);
int queue_db_retry(queue_db *st, int64_t id, int *result);

/* Worker side. */
typedef struct {
	int64_t id;
	int gpus;
	int64_t mem_mib;  /* effective: max(declared, hint) */
	int per_gpu;      /* declared, 0 = queue default */
	int per_gpu_hint; /* lowered after an OOM, 0 = none */
	bool allow_foreign;
	queue_backend backend;
	int64_t after_id;
	double not_before;
} queue_candidate;
/* Queued tasks with an id above after_id, in id order (at most max). */
int queue_db_candidates(queue_db *st, queue_backend b, int64_t after_id, queue_candidate *out,
                        int max);
/* State of another task (for --after); -1 when it does not exist. */
int queue_db_state_of(queue_db *st, int64_t id);
int queue_db_dep_failed(queue_db *st, int64_t id, int64_t dep, queue_state dep_state);
/* queued -> running/submitted with a new attempt row: number a->n (the next one when
 * a->n <= 0), astate starting, or running with a->shim_pid and a->shim_start when
 * a->astate is QA_RUNNING (one commit for a shim that already waits). 1 = task no
 * longer queued. */
int queue_db_begin_attempt(queue_db *st, queue_attempt *a, queue_state to);
/* The number the next attempt of task id gets (only the worker adds attempts). */
int queue_db_next_attempt(queue_db *st, int64_t id);
/* starting -> running with the shim's identity; *cancel says a cancel arrived meanwhile. */
int queue_db_attempt_running(queue_db *st, const queue_attempt *a, bool *cancel);
int queue_db_attempt_slurm(queue_db *st, const queue_attempt *a);
/* Finish an attempt and apply the policy's decision to the task. */
int queue_db_finish(queue_db *st, const queue_attempt *a, const queue_retry_out *d,
                    int64_t task_peak_gpu, int64_t task_peak_rss);
int queue_db_peaks(queue_db *st, int64_t id, int n, int64_t gpu_mib, int64_t rss_kib);
int queue_db_wait_reason(queue_db *st, int64_t id, const char *reason);
/* n of them in one transaction. */
int queue_db_wait_reasons(queue_db *st, const int64_t *id, const char *const *reason, int n);
int queue_db_fail_now(queue_db *st, int64_t id, const char *error);
/* Active attempts (starting or running) of a backend. */
int queue_db_active(queue_db *st, int backend, queue_attempt **out, int *n);
int queue_db_cancel_requested(queue_db *st, int64_t id);
int queue_db_task_began(queue_db *st, int64_t id); /* submitted -> running */
int queue_db_count_state(queue_db *st, int state);
/* Active tasks with a cancel request (ids into out, at most max). */
int queue_db_cancel_list(queue_db *st, int64_t *out, int max);
/* Delete final tasks (done only unless all) and their attempts; ids of the deleted into *ids. */
int queue_db_clean(queue_db *st, bool all, int64_t **ids, int *n);

/* What the worker saw of the GPUs, for `queue gpus`. */
typedef struct {
	int index;
	char uuid[96], name[96];
	int64_t total_mib, free_mib, pending_mib; /* -1 unknown */
	int64_t avail_mib;                        /* may be negative; INT64_MIN unknown */
	int ntasks, cap, foreign;
	char state[24]; /* "ok", "drained", "lost", "excluded" */
	char tasks[128];
} queue_gpu_row;
int queue_db_gpu_view_put(queue_db *st, const queue_gpu_row *rows, int n, double t);
int queue_db_gpu_view_get(queue_db *st, queue_gpu_row **rows, int *n, double *t);

#endif
