/*
 * sql.h - the SQLite helpers every database of the project shares: the
 * recording (store.c) and the queue's state (queue/store*.c).
 *
 * They return SQLite result codes and put messages in the caller's buffer:
 * what to print, and whether at all, is the caller's business.
 */
#ifndef GPUWHY_STORE_SQL_H
#define GPUWHY_STORE_SQL_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Open path with flags (SQLITE_OPEN_*) and a busy timeout (ms, 0: never wait). On
 * failure *db is NULL and err (when given) says why. */
int sql_open(const char *path, int flags, int busy_ms, sqlite3 **db, char *err, size_t errlen);

/*
 * WAL mode and synchronous=NORMAL: a commit is in the WAL file once it
 * returns, so it survives any process crash; only a power loss or kernel
 * crash can take back the last commits before a checkpoint (FULL would add
 * an fsync to every commit). Switching to WAL needs a moment alone with the
 * file: retried every 10 ms up to tries times while others hold it.
 */
int sql_wal(sqlite3 *db, int tries, char *err, size_t errlen);

/* Run SQL without results. The message goes to err unless err already holds one
 * (the first error is the one to tell). */
int sql_exec(sqlite3 *db, const char *sql, char *err, size_t errlen);
/* ROLLBACK when a transaction is open. */
void sql_rollback(sqlite3 *db);
/* The first column of the first row of sql (a PRAGMA, a count); def when none. */
long long sql_int(sqlite3 *db, const char *sql, long long def);

/* Step a statement that returns no rows, then reset it and clear its bindings for
 * its next use. SQLITE_DONE (or SQLITE_ROW) is SQLITE_OK. */
int sql_step_done(sqlite3_stmt *s);

/* Bindings where absent is NULL: a NULL string; a NULL or empty string; a
 * negative count or size (-1 = unknown). */
void sql_bind_text(sqlite3_stmt *s, int i, const char *v);
void sql_bind_nonempty(sqlite3_stmt *s, int i, const char *v);
void sql_bind_opt(sqlite3_stmt *s, int i, int64_t v);

/* Columns: NULL reads -1; text copied (NULL: ""); text duplicated (NULL: NULL). */
int64_t sql_col_opt(sqlite3_stmt *s, int i);
void sql_col_copy(sqlite3_stmt *s, int i, char *out, size_t outlen);
char *sql_col_dup(sqlite3_stmt *s, int i);

#endif
