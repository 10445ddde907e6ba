/*
 * store_int.h - the queue database's connection and statement helpers,
 * shared by store.c (open, settings), store_task.c and store_attempt.c.
 * The SQLite helpers every database shares are in store/sql.h.
 */
#ifndef GPUWHY_QUEUE_STORE_INT_H
#define GPUWHY_QUEUE_STORE_INT_H

#include <limits.h>
#include <sqlite3.h>

#include "queue/store.h"
#include "queue/submit.h"
#include "store/sql.h"

/* Statements are compiled once per connection and kept: the worker runs the same
 * few dozen on every pass, and compiling costs more than running them. */
#define STMT_CACHE 64

typedef struct {
	char *sql;
	sqlite3_stmt *s;
	bool busy;
} cached_stmt;

struct queue_store {
	sqlite3 *db;
	char dir[PATH_MAX];
	cached_stmt cache[STMT_CACHE];
	int ncache;
	gw_fail err;                        /* the last failure */
	void (*on_error)(const gw_fail *e); /* the face's: print it, log it */
};

#define ATT_COLS                                                                                   \
	"task_id, n, token, astate, backend, slurm_job, slurm_state, shim_pid, shim_start,"        \
	" task_pgid, boot_id, gpu_uuids, gpu_idx, reserved_mib, per_gpu, started, ended,"          \
	" exit_code, signal, outcome, oom, error, peak_gpu_mib, peak_rss_kib, log_offset, runs"

/* Failures are kept in st->err and handed to st->on_error; nothing is printed here. */
/* A database failure ("queue database: what: SQLite's message"); returns GW_EXIT_ENV. */
int qs_fail(queue_store *st, const char *what);
/* A bad request (an id that does not exist, ...); returns GW_EXIT_USAGE. */
int qs_usage(queue_store *st, const char *what, const char *hint, const char *why);
/* Run SQL without results; -1 (reported) on failure. */
int qs_exec(queue_store *st, const char *sql);
/* A statement for sql: the cached one when it is free, else a new one (cached when
 * there is room). Give it back with qs_done(). NULL (reported) on failure. */
sqlite3_stmt *qs_prep(queue_store *st, const char *sql);
/* Reset a cached statement for its next use (it holds no lock then); finalize others. */
void qs_done(queue_store *st, sqlite3_stmt *s);
/* BEGIN IMMEDIATE, COMMIT (-1 reported on failure), ROLLBACK when one is open. */
int qs_begin(queue_store *st);
int qs_commit(queue_store *st);
void qs_rollback(queue_store *st);
/* Step a statement that returns no rows and give it back; -1 (reported) on error. */
int qs_step_done(queue_store *st, sqlite3_stmt *s);

/* State of task id inside a transaction: -1 no such task, -2 database error. */
int qs_task_state(queue_store *st, int64_t id);
/* The attempt in the current row of a SELECT ATT_COLS. */
void qs_read_attempt(sqlite3_stmt *s, queue_attempt *a);

#endif
