/*
 * worker.h - the queue's worker: its loop (worker.c), log (worker_log.c), paths, and finding,
 * starting and waking it (worker_ctl.c).
 */
#ifndef GPUWHY_QUEUE_WORKER_H
#define GPUWHY_QUEUE_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/fail.h"

typedef struct {
	const char *dir;
	const char *gpus;     /* global --gpus */
	int64_t idle_exit_ns; /* stop after this long with nothing to do, 0 never */
	int ready_fd;         /* write one byte here once the lock is held, -1 none */
	const char *self_exe; /* gpuwhy binary for the shim */
} queue_worker_opts;

int queue_worker_run(const queue_worker_opts *o);

/* A time-stamped line in the worker's log (its stderr). */
void queue_worker_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Paths inside a queue directory. */
void queue_path(const char *dir, const char *leaf, char *out, size_t outlen);
void queue_log_path(const char *dir, int64_t id, char *out, size_t outlen);
void queue_status_path(const char *dir, int64_t id, int n, char *out, size_t outlen);

/* Whether pid is DIR's worker: holds worker.lock, runs self_exe, has `queue worker`
 * arguments. 0 yes, else -1 with e filled (GW_EXIT_ENV, what: DIR, why: the reason). */
int queue_worker_verify(const char *dir, int pid, const char *self_exe, gw_fail *e);
/* Verify as above, then signal it (through a pidfd where the kernel has them). */
int queue_worker_signal(const char *dir, int pid, int sig, const char *self_exe, gw_fail *e);

/* PID of the worker holding DIR's lock, 0 when none. */
int queue_worker_pid(const char *dir);
/* Start a detached worker unless one runs. 0 ok (or already running), else GW_EXIT code. */
int queue_worker_ensure(const char *dir, const char *self_exe);
/* Wake the worker (no-op when none listens): poke after a change of settings or a
 * cancel (it re-reads them); wake with QUEUE_POKE_ADD after adding tasks (a pass only). */
#define QUEUE_POKE_ADD 'a'
void queue_worker_poke(const char *dir);
void queue_worker_wake(const char *dir, char what);

#endif
