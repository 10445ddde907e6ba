/* sql.c - the SQLite helpers shared by the recording and the queue's state. */
#include "store/sql.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void say(char *err, size_t errlen, const char *msg)
{
	if (err && errlen && !err[0])
		snprintf(err, errlen, "%s", msg);
}

/* SQLite's allocation statistics take a global mutex on every malloc and free
 * (a tenth of a short command's SQLite work) and nothing reads them. Set before
 * the library initialises; when another open came first it stays as it was. */
static void configure(void)
{
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

int sql_open(const char *path, int flags, int busy_ms, sqlite3 **db, char *err, size_t errlen)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, configure);
	int rc = sqlite3_open_v2(path, db, flags, NULL);
	if (rc != SQLITE_OK) {
		if (err && errlen)
			snprintf(err, errlen, "%s", *db ? sqlite3_errmsg(*db) : sqlite3_errstr(rc));
		sqlite3_close(*db);
		*db = NULL;
		return rc;
	}
	sqlite3_busy_timeout(*db, busy_ms);
	return SQLITE_OK;
}

int sql_wal(sqlite3 *db, int tries, char *err, size_t errlen)
{
	for (int n = 0;; n++) {
		sqlite3_stmt *s = NULL;
		int rc = sqlite3_prepare_v2(db, "PRAGMA journal_mode=WAL", -1, &s, NULL);
		if (rc == SQLITE_OK)
			rc = sqlite3_step(s);
		sqlite3_finalize(s);
		if (rc == SQLITE_ROW || rc == SQLITE_DONE)
			break;
		if ((rc != SQLITE_BUSY && rc != SQLITE_LOCKED) || n >= tries) {
			say(err, errlen, sqlite3_errmsg(db));
			return rc;
		}
		nanosleep(&(struct timespec){0, 10000000}, NULL);
	}
	return sql_exec(db, "PRAGMA synchronous=NORMAL", err, errlen);
}

int sql_exec(sqlite3 *db, const char *sql, char *err, size_t errlen)
{
	char *msg = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
	if (rc != SQLITE_OK)
		say(err, errlen, msg ? msg : sqlite3_errstr(rc));
	sqlite3_free(msg);
	return rc;
}

void sql_rollback(sqlite3 *db)
{
	if (!sqlite3_get_autocommit(db))
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
}

long long sql_int(sqlite3 *db, const char *sql, long long def)
{
	sqlite3_stmt *q;
	long long v = def;
	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
		return def;
	if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return v;
}

int sql_step_done(sqlite3_stmt *s)
{
	int rc = sqlite3_step(s);
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
}

void sql_bind_text(sqlite3_stmt *s, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s, i);
}

void sql_bind_nonempty(sqlite3_stmt *s, int i, const char *v)
{
	sql_bind_text(s, i, v && *v ? v : NULL);
}

void sql_bind_opt(sqlite3_stmt *s, int i, int64_t v)
{
	if (v < 0)
		sqlite3_bind_null(s, i);
	else
		sqlite3_bind_int64(s, i, v);
}

int64_t sql_col_opt(sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_NULL ? -1 : sqlite3_column_int64(s, i);
}

void sql_col_copy(sqlite3_stmt *s, int i, char *out, size_t outlen)
{
	const unsigned char *t = sqlite3_column_text(s, i);
	snprintf(out, outlen, "%s", t ? (const char *)t : "");
}

char *sql_col_dup(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);
	return t ? strdup((const char *)t) : NULL;
}
