/* sql.c - the SQLite helpers shared by the recording and the queue's state. */
#include "store/sql.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/err.h"
#include "util/strbuf.h"

/* SQLite's words, kept as they are ("%s": never looked up in the catalogue), unless err
 * already holds the first failure. The database's file is what failed. */
static void say(gw_fail *err, sqlite3 *db, const char *msg)
{
	if (!err || err->code)
		return;
	const char *file = db ? sqlite3_db_filename(db, "main") : NULL;
	gw_fail_set(err, GW_EXIT_ENV, file ? file : "", NULL, "%s", msg);
}

/* SQLite's allocation statistics take a global mutex on every malloc and free
 * (a tenth of a short command's SQLite work) and nothing reads them. Set before
 * the library initialises; when another open came first it stays as it was. */
static void configure(void)
{
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

int sql_open(const char *path, int flags, int busy_ms, sqlite3 **db, gw_fail *err)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, configure);
	int rc = sqlite3_open_v2(path, db, flags, NULL);
	if (rc != SQLITE_OK) {
		gw_fail_set(err, GW_EXIT_ENV, path, NULL, "%s",
		            *db ? sqlite3_errmsg(*db) : sqlite3_errstr(rc));
		sqlite3_close(*db);
		*db = NULL;
		return rc;
	}
	sqlite3_busy_timeout(*db, busy_ms);
	return SQLITE_OK;
}

int sql_wal(sqlite3 *db, int tries, gw_fail *err)
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
			say(err, db, sqlite3_errmsg(db));
			return rc;
		}
		nanosleep(&(struct timespec){0, 10000000}, NULL);
	}
	return sql_exec(db, "PRAGMA synchronous=NORMAL", err);
}

int sql_exec(sqlite3 *db, const char *sql, gw_fail *err)
{
	char *msg = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
	if (rc != SQLITE_OK)
		say(err, db, msg ? msg : sqlite3_errstr(rc));
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

static uint32_t be32(const unsigned char *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

int sql_read_head(int fd, sql_head *h)
{
	/* The 16 bytes every SQLite database starts with, the NUL included. */
	static const char magic[16] = "SQLite format 3";
	memset(h, 0, sizeof *h);
	struct stat sb;
	unsigned char b[100];
	if (fstat(fd, &sb) != 0)
		return -1;
	h->size = sb.st_size;
	ssize_t n = pread(fd, b, sizeof b, 0);
	if (n < 0)
		return -1;
	h->got = (size_t)n;
	size_t m = h->got < sizeof magic ? h->got : sizeof magic;
	h->magic_prefix = m > 0 && memcmp(b, magic, m) == 0;
	h->sqlite = h->got >= sizeof magic && h->magic_prefix;
	if (h->got < sizeof b || !h->sqlite)
		return 0;
	unsigned ps = (unsigned)b[16] << 8 | b[17];
	if (ps == 1)
		ps = 65536;
	if (ps >= 512 && ps <= 65536 && !(ps & (ps - 1)))
		h->page_size = ps;
	/* SQLite trusts the page count only when "version valid for" matches the change counter. */
	if (be32(b + 24) == be32(b + 92))
		h->page_count = be32(b + 28);
	h->user_version = be32(b + 60);
	h->app_id = be32(b + 68);
	h->wal = b[18] == 2 && b[19] == 2;
	return 0;
}

bool sql_head_damaged(const sql_head *h)
{
	if (h->got < 100)
		return h->magic_prefix;
	if (!h->page_size || h->size % h->page_size)
		return true;
	return (off_t)h->page_count * h->page_size > h->size;
}

int sql_open_inspect(const char *path, sqlite3 **db)
{
	/* A URI: every byte but the unreserved ones and '/' percent-encoded. */
	gw_strbuf uri = {0};
	gw_sb_printf(&uri, "file:");
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("/._-~", *p))
			gw_sb_putc(&uri, (char)*p);
		else
			gw_sb_printf(&uri, "%%%02X", *p);
	}
	gw_sb_printf(&uri, "?immutable=1");
	int rc = sql_open(gw_sb_str(&uri), SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, 0, db, NULL);
	gw_sb_free(&uri);
	return rc;
}

bool sql_sidecars(const char *path)
{
	char side[4200];
	snprintf(side, sizeof side, "%s-wal", path);
	if (access(side, F_OK) == 0)
		return true;
	snprintf(side, sizeof side, "%s-shm", path);
	return access(side, F_OK) == 0;
}

bool sql_is_corrupt(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
	case SQLITE_FORMAT:
	case SQLITE_RANGE:
		return true;
	default:
		return false;
	}
}
