/*
 * db.c - the queue's state in SQLite (DIR/queue.db): the connection,
 * its statement cache and transactions, the schema and the settings.
 *
 * WAL mode with a busy timeout, and every change in one BEGIN IMMEDIATE
 * transaction, so many `add` calls from many shells and the worker can
 * write at once without losing a task. The schema is documented in the
 * docs/queue.md ("Where the queue lives"); states are stored as words so people can query
 * it with sqlite3. Tasks are in db_task.c, attempts in db_attempt.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpu/gpu.h"
#include "queue/db_int.h"
#include "queue/db.h"
#include "queue/submit.h"
#include "queue/worker.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/parse.h"

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS tasks("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " name TEXT NOT NULL DEFAULT '', argv TEXT NOT NULL, cwd TEXT NOT NULL, env TEXT,"
    " gpus INTEGER NOT NULL, mem_mib INTEGER, per_gpu INTEGER NOT NULL DEFAULT 0,"
    " retries INTEGER NOT NULL DEFAULT 0, retry_delay_ms INTEGER NOT NULL DEFAULT 0,"
    " timeout_ms INTEGER NOT NULL DEFAULT 0, after_id INTEGER,"
    " allow_foreign INTEGER NOT NULL DEFAULT 0, backend TEXT NOT NULL DEFAULT 'local',"
    " host_mem_mib INTEGER, slurm_args TEXT, input TEXT, output TEXT, record_file TEXT,"
    " state TEXT NOT NULL DEFAULT 'queued', attempts INTEGER NOT NULL DEFAULT 0,"
    " budget_from INTEGER NOT NULL DEFAULT 0, oom_count INTEGER NOT NULL DEFAULT 0,"
    " mem_hint_mib INTEGER, per_gpu_hint INTEGER NOT NULL DEFAULT 0,"
    " not_before REAL NOT NULL DEFAULT 0, cancel_requested INTEGER NOT NULL DEFAULT 0,"
    " submitted REAL NOT NULL, started REAL, ended REAL, exit_code INTEGER, signal INTEGER,"
    " error TEXT, peak_gpu_mib INTEGER, peak_rss_kib INTEGER, wait_reason TEXT,"
    " gpus_used TEXT, submit_token TEXT);"
    "CREATE INDEX IF NOT EXISTS tasks_state ON tasks(state, id);"
    "CREATE UNIQUE INDEX IF NOT EXISTS tasks_token ON tasks(submit_token)"
    " WHERE submit_token IS NOT NULL;"
    "CREATE TABLE IF NOT EXISTS attempts("
    " task_id INTEGER NOT NULL, n INTEGER NOT NULL, token TEXT NOT NULL,"
    " astate TEXT NOT NULL, backend TEXT NOT NULL, slurm_job TEXT, slurm_state TEXT,"
    " shim_pid INTEGER, shim_start INTEGER, task_pgid INTEGER, boot_id TEXT,"
    " gpu_uuids TEXT, gpu_idx TEXT, reserved_mib INTEGER, per_gpu INTEGER,"
    " started REAL, ended REAL, exit_code INTEGER, signal INTEGER, outcome TEXT,"
    " oom TEXT, error TEXT, peak_gpu_mib INTEGER, peak_rss_kib INTEGER,"
    " log_offset INTEGER NOT NULL DEFAULT 0, runs INTEGER NOT NULL DEFAULT 0,"
    " PRIMARY KEY(task_id, n));"
    "CREATE INDEX IF NOT EXISTS attempts_active ON attempts(astate);"
    "CREATE TABLE IF NOT EXISTS gpu_view("
    " pos INTEGER PRIMARY KEY, idx INTEGER, uuid TEXT, name TEXT, total_mib INTEGER,"
    " free_mib INTEGER, pending_mib INTEGER, avail_mib INTEGER, ntasks INTEGER,"
    " cap INTEGER, foreign_procs INTEGER, state TEXT, tasks TEXT, t REAL);"
    "INSERT OR IGNORE INTO meta(key, value) VALUES('schema', '1');";

/* Version 2: a task remembers the token its client submitted it under, so a client whose
 * hand-off to the worker got no answer can tell whether the task was added. */
static const char schema_v2[] =
    "ALTER TABLE tasks ADD COLUMN submit_token TEXT;"
    "CREATE UNIQUE INDEX IF NOT EXISTS tasks_token ON tasks(submit_token)"
    " WHERE submit_token IS NOT NULL;";

/* SQL_APP_QUEUE in decimal, for the PRAGMA. */
#define QS_APP_ID_TEXT "1196447057"
_Static_assert(SQL_APP_QUEUE == 1196447057u, "QS_APP_ID_TEXT is SQL_APP_QUEUE");

/* Create the schema, or bring a version-1 one up to date, in one write transaction that
 * looks again (another client may have done it meanwhile). */
static int schema_ensure(queue_db *st)
{
	if (queue_db_begin(st))
		return -1;
	int v = sql_int(st->db, "PRAGMA user_version", 0);
	int rc = 0;
	if (v < 1)
		rc = queue_db_exec(st, schema);
	else if (v < 2)
		rc = queue_db_exec(st, schema_v2);
	if (!rc && v < 2)
		rc = queue_db_exec(st, "PRAGMA user_version = 2");
	bool adopt = !rc && sql_int(st->db, "PRAGMA application_id", 0) != (long long)SQL_APP_QUEUE;
	if (adopt)
		rc = queue_db_exec(st, "PRAGMA application_id = " QS_APP_ID_TEXT);
	if (rc || queue_db_commit(st)) {
		queue_db_rollback(st);
		return -1;
	}
	/* Once: the id into the main file's header, where the next open looks for it. */
	if (adopt)
		sqlite3_wal_checkpoint_v2(st->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
	return 0;
}

/* Every failure goes through here: kept for queue_db_error, handed to the face. */
static int report(queue_db *st)
{
	if (st->on_error)
		st->on_error(&st->err);
	return st->err.code;
}

int queue_db_fail(queue_db *st, const char *what)
{
	gw_fail_set(&st->err, GW_EXIT_ENV, "queue database", NULL, "%s: %s", what,
	            sqlite3_errmsg(st->db));
	return report(st);
}

int queue_db_usage(queue_db *st, const char *what, const char *hint, const char *why)
{
	gw_fail_set(&st->err, GW_EXIT_USAGE, what, hint, "%s", why);
	return report(st);
}

int queue_db_exec(queue_db *st, const char *sql)
{
	gw_fail err = {0};
	if (sql_exec(st->db, sql, &err) != SQLITE_OK) {
		gw_fail_set(&st->err, GW_EXIT_ENV, "queue database", NULL, "%s", err.why);
		report(st);
		return -1;
	}
	return 0;
}

/* A statement for sql: the cached one when it is free, else a new one (cached when
 * there is room). Give it back with queue_db_done(). */
sqlite3_stmt *queue_db_prep(queue_db *st, const char *sql)
{
	for (int i = 0; i < st->ncache; i++) {
		cached_stmt *c = &st->cache[i];
		if (!c->busy && !strcmp(c->sql, sql)) {
			c->busy = true;
			return c->s;
		}
	}
	sqlite3_stmt *s = NULL;
	if (sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, NULL) != SQLITE_OK) {
		queue_db_fail(st, "prepare");
		return NULL;
	}
	if (st->ncache < STMT_CACHE)
		st->cache[st->ncache++] = (cached_stmt){strdup(sql), s, true};
	return s;
}

/* Reset a cached statement for its next use (it holds no lock then); finalize others. */
void queue_db_done(queue_db *st, sqlite3_stmt *s)
{
	if (!s)
		return;
	for (int i = 0; i < st->ncache; i++)
		if (st->cache[i].s == s) {
			sqlite3_reset(s);
			sqlite3_clear_bindings(s);
			st->cache[i].busy = false;
			return;
		}
	sqlite3_finalize(s);
}

/* Run a statement without results (BEGIN, COMMIT); -1 (reported) on failure. */
static int run1(queue_db *st, const char *sql)
{
	sqlite3_stmt *s = queue_db_prep(st, sql);
	if (!s)
		return -1;
	int rc = sqlite3_step(s);
	queue_db_done(st, s);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		queue_db_fail(st, sql);
		return -1;
	}
	return 0;
}

int queue_db_begin(queue_db *st)
{
	return run1(st, "BEGIN IMMEDIATE");
}

int queue_db_commit(queue_db *st)
{
	return run1(st, "COMMIT");
}

void queue_db_rollback(queue_db *st)
{
	if (sqlite3_get_autocommit(st->db))
		return;
	sqlite3_stmt *s = queue_db_prep(st, "ROLLBACK");
	if (s) {
		sqlite3_step(s);
		queue_db_done(st, s);
	}
}

/* Run a statement that returns no rows; -1 on error. */
int queue_db_step_done(queue_db *st, sqlite3_stmt *s)
{
	int rc = sql_step_done(s);
	queue_db_done(st, s);
	if (rc != SQLITE_OK) {
		queue_db_fail(st, "write");
		return -1;
	}
	return 0;
}

/* The tables of a queue's database (and SQLite's own). */
static bool queue_table(const char *name)
{
	static const char *const names[] = {"meta", "tasks", "attempts", "gpu_view"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (!strcmp(name, names[i]))
			return true;
	return !strncmp(name, "sqlite_", 7);
}

/* Whether db's tables are a queue's: none yet, or tasks and no table of another name. */
static bool queue_tables(sqlite3 *db, int *ntables)
{
	sqlite3_stmt *s;
	*ntables = 0;
	if (sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'table'", -1, &s,
	                       NULL) != SQLITE_OK)
		return false;
	bool tasks = false, other = false;
	int rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(s, 0);
		(*ntables)++;
		other |= !name || !queue_table(name);
		tasks |= name && !strcmp(name, "tasks");
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE && !other && (tasks || *ntables == 0);
}

/*
 * A queue.db without an application id: a queue's from before it, by its tables? They
 * are looked at in the main file alone first; when it has none but a -wal beside it
 * may (a young queue), through a read-only connection that neither checkpoints nor
 * removes the -wal.
 */
static bool older_queue(const char *path)
{
	sqlite3 *db = NULL;
	int n = 0;
	bool ours = sql_open_inspect(path, &db) == SQLITE_OK && queue_tables(db, &n);
	sqlite3_close(db);
	if (!ours || n > 0 || !sql_sidecars(path))
		return ours;
	db = NULL;
	ours = sql_open(path, SQLITE_OPEN_READONLY, 1000, &db, NULL) == SQLITE_OK &&
	       sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL) == SQLITE_OK &&
	       queue_tables(db, &n);
	sqlite3_close(db);
	return ours;
}

/* Whether path is a queue's database (or empty: *fresh): nothing else is opened with SQLite. */
static int check_identity(const char *path, bool *fresh, gw_fail *e)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	sql_head h;
	if (fd < 0 || sql_read_head(fd, &h) != 0) {
		int err = errno;
		if (fd >= 0)
			close(fd);
		return gw_fail_set(e, GW_EXIT_ENV, path, NULL, "cannot open: %s", strerror(err));
	}
	close(fd);
	*fresh = h.size == 0;
	if (h.size == 0 || h.app_id == SQL_APP_QUEUE)
		return 0;
	if (h.sqlite && h.app_id == SQL_APP_RECORDING)
		return gw_fail_set(e, GW_EXIT_ENV, path, N_("use --queue DIR for another place"),
		                   "is a gpuwhy recording, not a queue database (refusing to use "
		                   "it)");
	if (h.sqlite && h.app_id == 0 && older_queue(path))
		return 0;
	return gw_fail_set(e, GW_EXIT_ENV, path, N_("use --queue DIR for another place"),
	                   "not a gpuwhy queue database (refusing to use it)");
}

int queue_db_open(const char *dir, queue_db **out, gw_fail *e)
{
	char path[PATH_MAX + 32];
	gw_fail err = {0};
	int prc = queue_dir_prepare(dir, e);
	if (prc)
		return prc;
	queue_db *st = calloc(1, sizeof *st);
	if (!st)
		return gw_fail_set(e, GW_EXIT_ENV, dir, NULL, "out of memory");
	snprintf(st->dir, sizeof st->dir, "%s", dir);
	snprintf(path, sizeof path, "%s/queue.db", dir);
	bool fresh = false;
	if ((prc = check_identity(path, &fresh, e)) != 0) {
		free(st);
		return prc;
	}
	/* NOMUTEX: a queue connection belongs to one thread (the worker's loop or a client's
	 * main), so SQLite's per-call locking of it is work for nothing. */
	if (sql_open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, 30000,
	             &st->db, &err) != SQLITE_OK) {
		free(st);
		return gw_fail_set(e, GW_EXIT_ENV, path, NULL, "cannot open: %s", err.why);
	}
	/* The last connection to close does not checkpoint (an fsync and a rewrite for every
	 * `queue ls` when no worker runs); commits are in the WAL already, and the automatic
	 * checkpoint of a growing WAL still happens. */
	sqlite3_db_config(st->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	/* A new file gets its id before WAL mode, so it is in the main file's header from
	 * the start (schema_ensure sets it otherwise). */
	if (fresh)
		sql_exec(st->db, "PRAGMA application_id = " QS_APP_ID_TEXT, NULL);
	/* Every change survives a kill -9 of the worker, a shim or a client (see sql_wal);
	 * the switch is retried for 3 s while other clients make it too. */
	if (sql_wal(st->db, 300, &err) != SQLITE_OK) {
		queue_db_close(st);
		return gw_fail_set(e, GW_EXIT_ENV, path, NULL, "cannot use WAL mode: %s", err.why);
	}
	/* The schema is created once (user_version 2 says it is there), not checked in a
	 * write transaction by every client. */
	if ((sql_int(st->db, "PRAGMA user_version", 0) < 2 ||
	     sql_int(st->db, "PRAGMA application_id", 0) != (long long)SQL_APP_QUEUE) &&
	    schema_ensure(st)) {
		if (e)
			*e = st->err;
		queue_db_close(st);
		return GW_EXIT_ENV;
	}
	*out = st;
	return 0;
}

void queue_db_checkpoint(queue_db *st)
{
	/* Only when no one reads or writes (no waiting): the worker calls it as it leaves. */
	sqlite3_busy_timeout(st->db, 0);
	sqlite3_wal_checkpoint_v2(st->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
	sqlite3_busy_timeout(st->db, 30000);
}

const gw_fail *queue_db_error(const queue_db *st)
{
	return &st->err;
}

void queue_db_on_error(queue_db *st, void (*fn)(const gw_fail *e))
{
	st->on_error = fn;
}

/*
 * The WAL's index lives in shared memory only while a connection is open. With no worker
 * holding one, each command starts by reading the whole WAL back, and the WAL is never
 * restarted (a new connection cannot know its frames were folded in already): it grew by
 * each `add --no-worker` and each `ls` read more. So a connection that closes while no
 * worker runs folds a WAL longer than this into the database and empties it (two fsyncs
 * every hundred or so commits), as the worker does when it stops.
 */
enum { QS_FOLD_WAL_BYTES = 512 << 10 };

static void fold_wal_alone(queue_db *st)
{
	char path[PATH_MAX + 16];
	struct stat sb;
	snprintf(path, sizeof path, "%s/queue.db-wal", st->dir);
	if (stat(path, &sb) != 0 || sb.st_size < QS_FOLD_WAL_BYTES)
		return;
	if (queue_worker_pid(st->dir) != 0)
		return; /* the worker's open connection keeps the index; it restarts the WAL */
	queue_db_checkpoint(st);
}

void queue_db_close(queue_db *st)
{
	if (!st)
		return;
	for (int i = 0; i < st->ncache; i++) {
		sqlite3_finalize(st->cache[i].s);
		free(st->cache[i].sql);
	}
	fold_wal_alone(st);
	sqlite3_close(st->db);
	free(st);
}

const char *queue_db_dir(const queue_db *st)
{
	return st->dir;
}

void queue_db_config_get(queue_db *st, const char *key, char *out, size_t outlen)
{
	const queue_config_key *k = queue_config_find(key);
	snprintf(out, outlen, "%s", k ? k->def : "");
	sqlite3_stmt *s = queue_db_prep(st, "SELECT value FROM meta WHERE key = 'cfg.' || ?");
	if (!s)
		return;
	sql_bind_text(s, 1, key);
	if (sqlite3_step(s) == SQLITE_ROW)
		sql_col_copy(s, 0, out, outlen);
	queue_db_done(st, s);
}

int64_t queue_db_config_int(queue_db *st, const char *key)
{
	char v[64];
	queue_db_config_get(st, key, v, sizeof v);
	int64_t ns;
	long long x;
	if (gw_parse_int(v, LLONG_MIN, LLONG_MAX, &x))
		return x;
	if (gw_parse_duration_ns(v, 1000000000LL, &ns))
		return ns;
	return 0;
}

int queue_db_config_set(queue_db *st, const char *key, const char *value)
{
	sqlite3_stmt *s =
	    queue_db_prep(st, "INSERT INTO meta(key, value) VALUES('cfg.' || ?, ?) "
	                      "ON CONFLICT(key) DO UPDATE SET value = excluded.value");
	if (!s)
		return -1;
	sql_bind_text(s, 1, key);
	sql_bind_text(s, 2, value);
	return queue_db_step_done(st, s);
}
