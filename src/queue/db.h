/*
 * db.h - the queue's SQLite database, queue.db (db.c, db_task.c, db_attempt.c,
 * db_cfg.c; errors: qerr.c).
 */
#ifndef GPUWHY_QUEUE_DB_H
#define GPUWHY_QUEUE_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu/gpu.h"
#include "queue/oom.h"
#include "queue/spec.h"
#include "queue/state.h"
#include "util/fail.h"

typedef struct queue_db queue_db;

/* A task as stored: the spec plus its progress. */
typedef struct {
	int64_t id;
	queue_spec spec;
	queue_state state;
	int attempts;    /* attempts that ran the command */
	int budget_from; /* attempts before the last manual retry */
	int oom_count;
	int64_t mem_hint_mib;
	int per_gpu_hint;
	double not_before; /* cooldown end */
	bool cancel_requested;
	double submitted, started, ended;
	bool exit_ok;
	int exit_code, signal;
	char error[512];
	int64_t peak_gpu_mib, peak_rss_kib;
	char wait_reason[200];
	char gpus_used[256]; /* indices of the last attempt, "" none */
} queue_task;

void queue_task_free(queue_task *t);

typedef enum { QA_STARTING, QA_RUNNING, QA_ENDED } queue_astate;

typedef struct {
	int64_t task_id;
	int n;
	char token[40];
	queue_astate astate;
	queue_backend backend;
	char slurm_job[32];
	char slurm_state[48];
	int shim_pid;
	uint64_t shim_start; /* /proc/PID/stat starttime, guards against PID reuse */
	int task_pgid;
	char boot_id[48];
	char gpu_uuids[GPU_MAX * 16];
	char gpu_idx[256];
	int64_t reserved_mib;
	int per_gpu;
	double started, ended;
	bool exit_ok;
	int exit_code, signal;
	queue_outcome outcome;
	queue_oom_kind oom;
	char error[512];
	int64_t peak_gpu_mib, peak_rss_kib;
	int64_t log_offset;
	int runs; /* executions seen (Slurm may run a job twice) */
} queue_attempt;

/* Config keys (stored in the queue's database; `gpuwhy queue config`). */
typedef struct {
	const char *key, *def, *help;
} queue_config_key;
extern const queue_config_key queue_config_keys[];
const queue_config_key *queue_config_find(const char *key);
/* Validate a value for key; false with e filled (GW_EXIT_USAGE, what: the key). */
bool queue_config_check(const char *key, const char *value, gw_fail *e);

/* The queue's sources print nothing: a failure fills the gw_fail (util/fail.h) they are
 * given, or the store's own (queue_db_error), and the face prints or logs it. */

/* Resolve the queue directory: opt, else $GPUWHY_QUEUE, else XDG state. */
int queue_dir_resolve(const char *opt, char *out, size_t outlen, gw_fail *e);

/*
 * Create DIR (0700), its subdirectories and queue.db (0600) as needed, and
 * refuse them (GW_EXIT_ENV, e filled) when they are not owned by this user
 * or root, or are writable by group or others. check only looks.
 */
int queue_dir_prepare(const char *dir, gw_fail *e);
int queue_dir_check(const char *dir, gw_fail *e);

/* Open (and create) DIR/queue.db. On failure fills e and returns a GW_EXIT code. */
int queue_db_open(const char *dir, queue_db **out, gw_fail *e);
void queue_db_close(queue_db *st);
const char *queue_db_dir(const queue_db *st);
/* The last failure of a call on st (code 0: none). Every failure is also handed to the
 * function set with queue_db_on_error (the face's printer, the worker's log). */
const gw_fail *queue_db_error(const queue_db *st);
/* Fold the WAL into the database and empty it, when nobody else uses it at the moment: the
 * first connection after it (a lone `add` or `ls`) then has no WAL to read back. */
void queue_db_checkpoint(queue_db *st);
void queue_db_on_error(queue_db *st, void (*fn)(const gw_fail *e));

/* Insert tasks atomically; ids filled. Returns 0, -1 (a database error) or GW_EXIT_USAGE
 * (an `after` that names no task: nothing added); a message is printed. */
int queue_db_add(queue_db *st, queue_spec *specs, int n, int64_t *ids);
/* The same under a submission token (at most QUEUE_TOKEN_MAX bytes, NULL: none): a
 * submission whose token is stored already is not added again, and its ids are filled. */
#define QUEUE_TOKEN_MAX 64
int queue_db_add_token(queue_db *st, queue_spec *specs, int n, const char *token, int64_t *ids);
/* The ids of the tasks stored under token, first n of them into ids; how many (-1 error). */
int queue_db_token_ids(queue_db *st, const char *token, int n, int64_t *ids);

#endif
