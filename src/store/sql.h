/*
 * sql.h - the SQLite helpers every database of the project shares: the
 * recording (store.c) and the queue's state (queue/store*.c).
 *
 * They return SQLite result codes and fill the caller's gw_fail (when given)
 * with SQLite's words as why (English, as SQLite has them) and the database's
 * file as what, code GW_EXIT_ENV: what to print, and whether at all, is the
 * caller's business.
 */
#ifndef GPUWHY_STORE_SQL_H
#define GPUWHY_STORE_SQL_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/fail.h"

/*
 * Every database of the project says what it is in SQLite's application id
 * (the 4 bytes at offset 68 of the file, `PRAGMA application_id`), so a file
 * is known from its first 100 bytes before anything opens it with SQLite.
 */
#define SQL_APP_RECORDING 0x47505557u /* "GPUW": a recording (.gpuwhy) */
#define SQL_APP_QUEUE 0x47505551u     /* "GPUQ": a queue's queue.db */

/* What the first 100 bytes of a file say. */
typedef struct {
	off_t size;          /* of the file */
	size_t got;          /* header bytes read (up to 100) */
	bool sqlite;         /* starts with SQLite's magic string */
	bool magic_prefix;   /* what was read is a prefix of it (a truncated header) */
	unsigned page_size;  /* 0 when the field is not a valid page size */
	uint32_t page_count; /* the header's page count; 0 when SQLite would not trust it */
	uint32_t app_id;     /* application id */
	uint32_t user_version;
	bool wal; /* the file is in WAL mode */
} sql_head;

/* Read fd's header (pread: the offset is left alone). 0, or -1 with errno. */
int sql_read_head(int fd, sql_head *h);
/* Whether the header contradicts the file: a header cut short, no valid page size,
 * or fewer bytes than its pages (cut short, when no -wal beside it holds the rest). */
bool sql_head_damaged(const sql_head *h);
/*
 * Open path to look at it without changing anything: read-only, through the
 * `immutable` URI parameter, so SQLite takes no lock and neither reads nor
 * creates the -wal and -shm beside it (it sees the main file alone).
 */
int sql_open_inspect(const char *path, sqlite3 **db);
/* Whether path-wal or path-shm exists. */
bool sql_sidecars(const char *path);

/* Open path with flags (SQLITE_OPEN_*) and a busy timeout (ms, 0: never wait). On
 * failure *db is NULL and err (when given) says why, path as what. */
int sql_open(const char *path, int flags, int busy_ms, sqlite3 **db, gw_fail *err);

/*
 * WAL mode and synchronous=NORMAL: a commit is in the WAL file once it
 * returns, so it survives any process crash; only a power loss or kernel
 * crash can take back the last commits before a checkpoint (FULL would add
 * an fsync to every commit). Switching to WAL needs a moment alone with the
 * file: retried every 10 ms up to tries times while others hold it.
 */
int sql_wal(sqlite3 *db, int tries, gw_fail *err);

/* Whether rc says the file is damaged (corrupt, not a database, a format or range error). */
bool sql_is_corrupt(int rc);

/* Run SQL without results. The message goes to err unless err already holds a
 * failure (code not 0: the first error is the one to tell); sql_wal keeps it so too. */
int sql_exec(sqlite3 *db, const char *sql, gw_fail *err);
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
