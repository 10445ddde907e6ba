/*
 * db_int.h - the queue database's connection and statement helpers,
 * shared by db.c (open, settings), db_task.c and db_attempt.c.
 * The SQLite helpers every database shares are in store/sql.h.
 */
#ifndef GPUWHY_QUEUE_DB_INT_H
#define GPUWHY_QUEUE_DB_INT_H

#include <limits.h>
#include <sqlite3.h>

#include "queue/db.h"
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

struct queue_db {
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
int queue_db_fail(queue_db *st, const char *what);
/* A bad request (an id that does not exist, ...); returns GW_EXIT_USAGE. */
int queue_db_usage(queue_db *st, const char *what, const char *hint, const char *why);
/* Run SQL without results; -1 (reported) on failure. */
int queue_db_exec(queue_db *st, const char *sql);
/* A statement for sql: the cached one when it is free, else a new one (cached when
 * there is room). Give it back with queue_db_done(). NULL (reported) on failure. */
sqlite3_stmt *queue_db_prep(queue_db *st, const char *sql);
/* Reset a cached statement for its next use (it holds no lock then); finalize others. */
void queue_db_done(queue_db *st, sqlite3_stmt *s);
/* BEGIN IMMEDIATE, COMMIT (-1 reported on failure), ROLLBACK when one is open. */
int queue_db_begin(queue_db *st);
int queue_db_commit(queue_db *st);
void queue_db_rollback(queue_db *st);
/* Step a statement that returns no rows and give it back; -1 (reported) on error. */
int queue_db_step_done(queue_db *st, sqlite3_stmt *s);

/* State of task id inside a transaction: -1 no such task, -2 database error. */
int queue_db_task_state(queue_db *st, int64_t id);
/* The attempt in the current row of a SELECT ATT_COLS. */
void queue_db_read_attempt(sqlite3_stmt *s, queue_attempt *a);

#endif
