/* store.c - writing and reading .gpuwhy recordings (SQLite, WAL). */
#include "store/store.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "store/sql.h"
#include "store/store_int.h"
#include "util/err.h"
#include "util/fail.h"
#include "util/i18n.h"
#include "util/strbuf.h"
#include "util/timeutil.h"

#define COMMIT_EVERY_NS 1000000000LL
#define CHECKPOINT_EVERY_NS 2000000000LL
#define STALL_TELL_S 5.0
#define CLOSE_WAIT_NS 10000000000LL
#define BACKLOG_DEFAULT 3000
#define OTHER_PER_SAMPLE 16 /* steps and events that may wait per waiting sample */

/* The tables, in the order a flush copies them, and how rows meet existing ones. */
static const struct {
	const char *name, *verb;
} tables[] = {
    {"meta", "INSERT OR REPLACE"},
    {"gpus", "INSERT OR REPLACE"},
    {"gpu_links", "INSERT OR REPLACE"},
    {"gpu_samples", "INSERT"},
    {"host_samples", "INSERT"},
    {"processes", "INSERT OR IGNORE"},
    {"process_samples", "INSERT"},
    {"steps", "INSERT"},
    {"events", "INSERT"},
};
#define NTABLES (sizeof tables / sizeof *tables)

/*
 * Rows are staged in TEMP tables (memory, never locked by anyone else) and a
 * flush moves them into the file in one write transaction once a second. A
 * flush that finds another process holding the file's write lock leaves them
 * staged for the next: sampling never waits for the file. At most backlog_max
 * snapshots wait; beyond that their samples are dropped and the gap becomes
 * an event once the lock frees.
 */
struct store {
	sqlite3 *db;
	pthread_mutex_t mu;
	sqlite3_stmt *ins_gpu, *ins_host, *ins_proc, *ins_procname, *ins_step, *ins_event,
	    *ins_meta, *ins_gap;
	char *flush_sql;
	char path[4096];
	int lock_fd;
	bool staged_rows; /* anything waits in the TEMP tables */
	long staged;      /* snapshots staged since the last flush */
	long stored;      /* snapshots committed to the file */
	long in_main;     /* of which checkpointed into the main file */
	long backlog_max;
	long dropped;       /* snapshots whose samples were dropped in this stall */
	long staged_other;  /* steps and events staged since the last flush */
	long dropped_other; /* steps and events dropped in this stall */
	double drop_t0, drop_t1;
	double stall_since; /* wall time of a stall's first refused flush, 0 = none */
	bool stall_told;
	int64_t last_flush_try;
	sqlite3 *ckpt_db; /* the checkpoint thread's own connection */
	pthread_t ckpt_thread;
	pthread_mutex_t ckpt_mu;
	pthread_cond_t ckpt_cv;
	bool ckpt_running, ckpt_stop;
	store_digests dg; /* of what the file holds (store_int.h) */
	char err[256];
	store_notice_fn notice; /* who hears about lock stalls and a -wal left behind */
	void *notice_ctx;
};

void store_set_notice(store *st, store_notice_fn fn, void *ctx)
{
	st->notice = fn;
	st->notice_ctx = ctx;
}

/* Tell the face about the recording (what = its path); it decides how to say it. */
static void notify(store *st, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void notify(store *st, const char *hint, const char *fmt, ...)
{
	if (!st->notice)
		return;
	char why[512];
	va_list ap, aq;
	va_start(ap, fmt);
	va_copy(aq, ap);
	vsnprintf(why, sizeof why, fmt, ap);
	gw_fail n;
	gw_fail_set(&n, 0, st->path, hint, "%s", why);
	/* why stays English (logs keep it); the face prints it in the user's language. */
	vsnprintf(n.why_text, sizeof n.why_text, _(fmt), aq);
	va_end(aq);
	va_end(ap);
	st->notice(st->notice_ctx, &n);
}

static int fail(store *st, const char *what)
{
	if (!st->err[0])
		snprintf(st->err, sizeof st->err, "%s: %s", what, sqlite3_errmsg(st->db));
	return -1;
}

/* A failure kept in st->err, the first one (what store_error tells). */
static int keep(store *st, int rc, const gw_fail *f)
{
	if (rc == SQLITE_OK)
		return 0;
	if (!st->err[0])
		snprintf(st->err, sizeof st->err, "%.*s", (int)sizeof st->err - 1, f->why);
	return -1;
}

static int exec(store *st, const char *sql)
{
	gw_fail f = {0};
	return keep(st, sql_exec(st->db, sql, &f), &f);
}

static int prepare(store *st, sqlite3_stmt **out, const char *sql)
{
	if (sqlite3_prepare_v2(st->db, sql, -1, out, NULL) != SQLITE_OK)
		return fail(st, "prepare");
	return 0;
}

static int prepare_all(store *st)
{
	gw_strbuf sql = {0};
	int n = 3;
	gw_sb_printf(&sql, "INSERT INTO temp.gpu_samples VALUES(?,?,?");
	for (int i = 0; i < GM__COUNT; i++)
		if (store_gpu_metric_stored(i)) {
			gw_sb_printf(&sql, ",?");
			n++;
		}
	gw_sb_printf(&sql, ")");
	int rc = prepare(st, &st->ins_gpu, gw_sb_str(&sql));
	gw_sb_clear(&sql);
	gw_sb_printf(&sql, "INSERT INTO temp.host_samples VALUES(?,?");
	for (int i = 0; i < HM__COUNT; i++)
		gw_sb_printf(&sql, ",?");
	gw_sb_printf(&sql, ",?,?)");
	rc |= prepare(st, &st->ins_host, gw_sb_str(&sql));
	gw_sb_free(&sql);
	(void)n;
	rc |= prepare(st, &st->ins_proc,
	              "INSERT INTO temp.process_samples VALUES(?,?,?,?,?,?,?,?,?,?,?,?)");
	rc |= prepare(st, &st->ins_procname,
	              "INSERT INTO temp.processes(pid, cmd, user, first_t) VALUES(?,?,?,?)");
	rc |= prepare(st, &st->ins_step, "INSERT INTO temp.steps VALUES(?,?,?)");
	rc |= prepare(st, &st->ins_event, "INSERT INTO temp.events VALUES(?,?,?,?,?)");
	rc |= prepare(st, &st->ins_meta, "INSERT INTO temp.meta VALUES(?,?)");
	rc |= prepare(st, &st->ins_gap, "INSERT INTO main.events VALUES(?,?,NULL,?,?)");
	return rc ? -1 : 0;
}

static int step_done(store *st, sqlite3_stmt *s, const char *what)
{
	return sql_step_done(s) == SQLITE_OK ? 0 : fail(st, what);
}

/* TEMP copies of every table (no constraints: the flush applies them) and the flush itself. */
static int create_staging(store *st)
{
	gw_strbuf sql = {0}, flush = {0};
	gw_sb_printf(&sql, "PRAGMA temp_store=MEMORY;");
	for (size_t i = 0; i < NTABLES; i++) {
		gw_sb_printf(&sql, "CREATE TEMP TABLE %s AS SELECT * FROM main.%s WHERE 0;",
		             tables[i].name, tables[i].name);
		gw_sb_printf(&flush, "%s INTO main.%s SELECT * FROM temp.%s ORDER BY rowid;",
		             tables[i].verb, tables[i].name, tables[i].name);
	}
	for (size_t i = 0; i < NTABLES; i++)
		gw_sb_printf(&flush, "DELETE FROM temp.%s;", tables[i].name);
	int rc = exec(st, gw_sb_str(&sql));
	gw_sb_free(&sql);
	st->flush_sql = gw_sb_take(&flush);
	return rc;
}

static long backlog_limit(void)
{
	const char *e = getenv("GPUWHY_RECORD_BACKLOG");
	char *end;
	long v = e ? strtol(e, &end, 10) : 0;
	return e && *e && !*end && v >= 1 && v <= 10000000 ? v : BACKLOG_DEFAULT;
}

static void checkpoint_stop(store *st);

static void store_free(store *st)
{
	sqlite3_stmt **stmts[] = {&st->ins_gpu,  &st->ins_host,  &st->ins_proc, &st->ins_procname,
	                          &st->ins_step, &st->ins_event, &st->ins_meta, &st->ins_gap};
	for (size_t i = 0; i < sizeof stmts / sizeof *stmts; i++)
		sqlite3_finalize(*stmts[i]);
	checkpoint_stop(st);
	sqlite3_close(st->db);
	/* Closing the lock's descriptor drops the lock: only after SQLite is done. */
	if (st->lock_fd >= 0)
		close(st->lock_fd);
	pthread_mutex_destroy(&st->mu);
	free(st->flush_sql);
	free(st);
}

/*
 * A checkpoint writes pages in place, so one cut short by a full disk leaves
 * the main file inconsistent without its WAL. Afterwards the file is
 * page_count pages long: only checkpoint when the disk and the file size
 * limit leave room for that.
 */
static bool room_for_checkpoint(const store *st, sqlite3 *db)
{
	struct stat ds;
	long long pages = sql_int(db, "PRAGMA main.page_count", -1);
	long long psize = sql_int(db, "PRAGMA main.page_size", -1);
	if (pages < 0 || psize <= 0 || fstat(st->lock_fd, &ds) != 0)
		return false;
	unsigned long long target = (unsigned long long)pages * (unsigned long long)psize;
	unsigned long long have = (unsigned long long)ds.st_size;
	if (target <= have)
		return true;
	struct statvfs vfs;
	if (fstatvfs(st->lock_fd, &vfs) == 0) {
		unsigned long long blocks = geteuid() == 0 ? vfs.f_bfree : vfs.f_bavail;
		if (blocks * (unsigned long long)vfs.f_frsize < target - have)
			return false;
	}
	struct rlimit rl;
	if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    target > (unsigned long long)rl.rlim_cur)
		return false;
	return true;
}

/* Fold the WAL into the main file through db; *complete when all of it went in. */
static int checkpoint_db(const store *st, sqlite3 *db, int mode, bool *complete)
{
	*complete = false;
	if (!room_for_checkpoint(st, db))
		return SQLITE_FULL;
	int nlog = 0, nckpt = 0;
	int rc = sqlite3_wal_checkpoint_v2(db, "main", mode, &nlog, &nckpt);
	*complete = rc == SQLITE_OK && nckpt >= nlog;
	return rc == SQLITE_OK || rc == SQLITE_BUSY ? 0 : rc;
}

/* The same on the writer's connection (st->mu held), so the .gpuwhy alone is the recording. */
static int checkpoint(store *st, int mode)
{
	bool complete;
	int rc = checkpoint_db(st, st->db, mode, &complete);
	if (complete)
		st->in_main = st->stored;
	return rc;
}

static void no_room(store *st, int rc)
{
	if (!st->err[0])
		snprintf(st->err, sizeof st->err, "%s",
		         rc == SQLITE_FULL
		             /* Kept in English (the recording's events hold it), said
		              * where it is printed. */
		             ? N_("no room left on the disk (or under the file size limit) "
		                  "to fold the WAL into the file")
		             : sqlite3_errstr(rc));
}

/*
 * The periodic checkpoint runs on a thread and a connection of its own: it
 * fsyncs, and sampling never waits for the disk. A checkpoint that finds no
 * room stops the recording: writing on would only grow a WAL that cannot be
 * folded in.
 */
static void checkpoint_tick(store *st)
{
	pthread_mutex_lock(&st->mu);
	long before = st->stored;
	bool stopped = st->err[0] != '\0';
	pthread_mutex_unlock(&st->mu);
	if (stopped)
		return;
	bool complete;
	int rc = checkpoint_db(st, st->ckpt_db, SQLITE_CHECKPOINT_PASSIVE, &complete);
	pthread_mutex_lock(&st->mu);
	if (rc)
		no_room(st, rc);
	else if (complete && before > st->in_main)
		st->in_main = before;
	pthread_mutex_unlock(&st->mu);
}

static void *checkpoint_main(void *arg)
{
	store *st = arg;
	pthread_mutex_lock(&st->ckpt_mu);
	while (!st->ckpt_stop) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += CHECKPOINT_EVERY_NS / 1000000000LL;
		pthread_cond_timedwait(&st->ckpt_cv, &st->ckpt_mu, &ts);
		if (st->ckpt_stop)
			break;
		pthread_mutex_unlock(&st->ckpt_mu);
		checkpoint_tick(st);
		pthread_mutex_lock(&st->ckpt_mu);
	}
	pthread_mutex_unlock(&st->ckpt_mu);
	return NULL;
}

static int checkpoint_start(store *st)
{
	if (sql_open(st->path, SQLITE_OPEN_READWRITE, 0, &st->ckpt_db, NULL) != SQLITE_OK)
		return -1;
	sqlite3_db_config(st->ckpt_db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	sqlite3_wal_autocheckpoint(st->ckpt_db, 0);
	pthread_mutex_init(&st->ckpt_mu, NULL);
	pthread_cond_init(&st->ckpt_cv, NULL);
	if (pthread_create(&st->ckpt_thread, NULL, checkpoint_main, st) != 0) {
		pthread_cond_destroy(&st->ckpt_cv);
		pthread_mutex_destroy(&st->ckpt_mu);
		return -1;
	}
	st->ckpt_running = true;
	return 0;
}

static void checkpoint_stop(store *st)
{
	if (st->ckpt_running) {
		pthread_mutex_lock(&st->ckpt_mu);
		st->ckpt_stop = true;
		pthread_cond_signal(&st->ckpt_cv);
		pthread_mutex_unlock(&st->ckpt_mu);
		pthread_join(st->ckpt_thread, NULL);
		pthread_cond_destroy(&st->ckpt_cv);
		pthread_mutex_destroy(&st->ckpt_mu);
		st->ckpt_running = false;
	}
	sqlite3_close(st->ckpt_db);
	st->ckpt_db = NULL;
}

/* The meta rows every recording starts with, and the digests (store_int.h). */
static int first_rows(sqlite3 *db, const char *path, gw_fail *err)
{
	char sql[256];
	snprintf(sql, sizeof sql,
	         "INSERT INTO main.meta VALUES('schema_version', '%d'), ('tool_version', '%s')",
	         STORE_SCHEMA_VERSION, GPUWHY_VERSION);
	int rc = sql_exec(db, sql, err);
	store_digests cur, next;
	if (rc == SQLITE_OK)
		rc = store_digests_scan(db, &cur);
	if (rc == SQLITE_OK)
		rc = store_digests_update(db, &cur, &next);
	if (rc != SQLITE_OK && !err->code)
		gw_fail_set(err, GW_EXIT_ENV, path, NULL, "%s", sqlite3_errmsg(db));
	return rc;
}

/*
 * Build a recording at path (the new file of a store_target): in WAL mode,
 * the schema and the first meta rows folded into the main file, the -wal and
 * -shm gone, so it is a recording on its own before it takes the name.
 */
static int build_file(const char *path, gw_fail *err)
{
	sqlite3 *db;
	*err = (gw_fail){0};
	if (sql_open(path, SQLITE_OPEN_READWRITE, 0, &db, err) != SQLITE_OK)
		return -1;
	int rc = sql_wal(db, 0, err);
	if (rc == SQLITE_OK)
		rc = sql_exec(db, "BEGIN", err);
	if (rc == SQLITE_OK)
		rc = store_schema_create(db, err);
	if (rc == SQLITE_OK)
		rc = first_rows(db, path, err);
	if (rc == SQLITE_OK)
		rc = sql_exec(db, "COMMIT", err);
	if (rc == SQLITE_OK && sqlite3_wal_checkpoint_v2(db, "main", SQLITE_CHECKPOINT_TRUNCATE,
	                                                 NULL, NULL) != SQLITE_OK)
		rc = SQLITE_FULL;
	/* The last connection: closing removes the emptied -wal and the -shm. */
	if (sqlite3_close(db) != SQLITE_OK || (rc == SQLITE_OK && sql_sidecars(path)))
		rc = rc ? rc : SQLITE_FULL;
	if (rc != SQLITE_OK && !err->code)
		gw_fail_set(err, GW_EXIT_ENV, path, NULL,
		            "no room on the disk (or under the file size limit)");
	return rc == SQLITE_OK ? 0 : -1;
}

/* Build the new file and give it the name; the locked descriptor of the recording in *fd. */
static int place_file(const char *path, int *fd, gw_fail *err)
{
	for (int attempt = 0; attempt < 8; attempt++) {
		store_target t;
		int rc = store_target_open(path, &t, err);
		if (rc)
			return rc;
		rc = build_file(t.tmp, err);
		if (!rc)
			rc = store_target_commit(&t, err);
		if (!rc) {
			*fd = t.fd;
			return 0;
		}
		store_target_abort(&t);
		if (rc != 1)
			return -1;
	}
	gw_fail_set(err, GW_EXIT_ENV, path, NULL,
	            "the file keeps being replaced by another process");
	return -1;
}

/* The writer's connection to the recording at path, which st->lock_fd holds. */
static int open_writer(store *st, gw_fail *err)
{
	/* Never wait for the file's write lock: a refused flush retries a second later. */
	if (sql_open(st->path, SQLITE_OPEN_READWRITE, 0, &st->db, err) != SQLITE_OK)
		return -1;
	struct stat a, b;
	if (fstat(st->lock_fd, &a) != 0 || stat(st->path, &b) != 0 || a.st_ino != b.st_ino ||
	    a.st_dev != b.st_dev) {
		gw_fail_set(err, GW_EXIT_ENV, st->path, NULL,
		            "the file keeps being replaced by another process");
		return -1;
	}
	/* Checkpoints are ours alone (see room_for_checkpoint); none behind our back. */
	sqlite3_db_config(st->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	sqlite3_wal_autocheckpoint(st->db, 0);
	gw_fail wal = {0};
	if (keep(st, sql_wal(st->db, 0, &wal), &wal) || create_staging(st) || prepare_all(st) ||
	    store_digests_scan(st->db, &st->dg) != SQLITE_OK || checkpoint_start(st)) {
		if (!st->err[0]) {
			gw_fail_set(err, GW_EXIT_ENV, st->path, NULL,
			            "cannot start the checkpoint thread");
			return -1;
		}
		/* SQLite's words, English; shown through the catalogue as they always were. */
		gw_fail_set(err, GW_EXIT_ENV, st->path, NULL, "%s", st->err);
		snprintf(err->why_text, sizeof err->why_text, "%s", _(st->err));
		return -1;
	}
	st->dg.written = true;
	st->in_main = st->stored;
	return 0;
}

static int create(const char *path, store **out, gw_fail *err)
{
	int lock_fd;
	int lrc = place_file(path, &lock_fd, err);
	if (lrc)
		return lrc;
	store *st = calloc(1, sizeof *st);
	if (!st) {
		close(lock_fd);
		/* "%s": as it has always been printed, untranslated. */
		gw_fail_set(err, GW_EXIT_ENV, path, NULL, "%s", "out of memory");
		return -1;
	}
	st->lock_fd = lock_fd;
	snprintf(st->path, sizeof st->path, "%s", path);
	st->backlog_max = backlog_limit();
	pthread_mutex_init(&st->mu, NULL);
	/* On a failure from here on, the file at path is an empty recording: it stays. */
	if (open_writer(st, err)) {
		store_free(st);
		return -1;
	}
	*out = st;
	return 0;
}

int store_create(const char *path, store **out, gw_fail *err)
{
	gw_fail why = {0};
	int rc = create(path, out, &why);
	if (rc == 0)
		return 0;
	/* The reason as the recorder has always cut it. */
	why.why[255] = why.why_text[255] = '\0';
	/* Every command that records names its file with -o. */
	gw_fail_set(err, GW_EXIT_ENV, path,
	            rc == -2 ? N_("wait for it to finish, or record to another file with -o")
	                     : N_("choose a writable path with -o"),
	            "%s", why.why);
	if (err)
		snprintf(err->why_text, sizeof err->why_text, "%s", why.why_text);
	return GW_EXIT_ENV;
}

const char *store_error(const store *st)
{
	return st->err[0] ? st->err : NULL;
}

static void clock_text(double t, char *out, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;
	localtime_r(&tt, &tm);
	strftime(out, len, "%H:%M:%S", &tm);
}

/* A flush was refused: another process holds the write lock. */
static void stall_note(store *st)
{
	double now = gw_wall_s();
	if (st->stall_since == 0)
		st->stall_since = now;
	if (!st->stall_told && now - st->stall_since >= STALL_TELL_S) {
		st->stall_told = true;
		notify(st, NULL,
		       "another process holds the recording's write lock; samples wait in "
		       "memory (up to %ld)",
		       st->backlog_max);
	}
}

/* "12 samples (and 3 steps or events) from 10:01:02 to 10:01:09": English for
 * the gap event the recording keeps, the user's language (human) for a notice. */
static void gap_text(const store *st, bool human, char *out, size_t len)
{
	char a[16], b[16], other[96] = "";
	clock_text(st->drop_t0, a, sizeof a);
	clock_text(st->drop_t1, b, sizeof b);
	if (st->dropped_other)
		snprintf(other, sizeof other,
		         human ? P_(" (and %ld step or event)", " (and %ld steps or events)",
		                    st->dropped_other)
		               : " (and %ld steps or events)",
		         st->dropped_other);
	snprintf(out, len,
	         human
	             ? P_("%ld sample%s from %s to %s", "%ld samples%s from %s to %s", st->dropped)
	             : "%ld samples%s from %s to %s",
	         st->dropped, other, a, b);
}

static void note_drop(store *st, double t)
{
	if (!st->dropped && !st->dropped_other)
		st->drop_t0 = t;
	st->drop_t1 = t;
}

/* Inside the flush transaction: the samples a stall dropped become an event. */
static int write_gap(store *st)
{
	char what[96], text[256];
	gap_text(st, false, what, sizeof what);
	snprintf(text, sizeof text, "%s not recorded: another process held the file's write lock",
	         what);
	sqlite3_stmt *q = st->ins_gap;
	sqlite3_bind_double(q, 1, st->drop_t0);
	sqlite3_bind_text(q, 2, STORE_EV_GAP, -1, SQLITE_STATIC);
	sqlite3_bind_int64(q, 3, st->dropped);
	sqlite3_bind_text(q, 4, text, -1, SQLITE_TRANSIENT);
	return step_done(st, q, "events");
}

/* The flush after a stall went through: say what the stall cost. */
static void stall_end(store *st, long written)
{
	double waited = st->stall_since ? gw_wall_s() - st->stall_since : 0;
	if (st->dropped || st->dropped_other) {
		char what[160];
		gap_text(st, true, what, sizeof what);
		notify(st, N_("a gap event marks it; GPUWHY_RECORD_BACKLOG holds more samples"),
		       "%s not recorded: another process held the write lock for %.1f s", what,
		       waited);
	} else if (st->stall_told || waited >= 1.0) {
		notify(st, NULL,
		       "writes waited %.1f s for another process's write lock; the %ld samples "
		       "held meanwhile are written",
		       waited, written);
	}
	st->stall_since = 0;
	st->stall_told = false;
	st->dropped = 0;
	st->dropped_other = 0;
}

/* A flush failed for good (disk full, I/O): keep what the file has, stop writing. */
static int flush_failed(store *st)
{
	if (!st->err[0])
		snprintf(st->err, sizeof st->err, "%s", sqlite3_errmsg(st->db));
	sql_rollback(st->db);
	/* What was committed moves into the main file while it still can. */
	checkpoint(st, SQLITE_CHECKPOINT_PASSIVE);
	return -1;
}

/* Move the staged rows into the file. 0 done, 1 refused (lock held elsewhere), -1 failed. */
static int flush_locked(store *st)
{
	if (st->err[0])
		return -1;
	st->last_flush_try = gw_mono_ns();
	if (!st->staged_rows && !st->dropped && !st->dropped_other)
		return 0;
	int rc = sqlite3_exec(st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) {
		stall_note(st);
		return 1;
	}
	if (rc != SQLITE_OK)
		return flush_failed(st);
	if ((st->dropped || st->dropped_other) && write_gap(st))
		return flush_failed(st);
	store_digests next;
	if (exec(st, st->flush_sql) || store_digests_update(st->db, &st->dg, &next) != SQLITE_OK ||
	    exec(st, "COMMIT"))
		return flush_failed(st);
	st->dg = next;
	long written = st->staged;
	st->stored += st->staged;
	st->staged = 0;
	st->staged_other = 0;
	st->staged_rows = false;
	if (st->stall_since || st->dropped || st->dropped_other)
		stall_end(st, written);
	return 0;
}

/* After a staged write: flush when the last attempt is a second old. */
static int maybe_flush(store *st)
{
	st->staged_rows = true;
	if (gw_mono_ns() - st->last_flush_try < COMMIT_EVERY_NS)
		return 0;
	return flush_locked(st) < 0 ? -1 : 0;
}

static void bind_num(sqlite3_stmt *s, int i, double v)
{
	if (isnan(v))
		sqlite3_bind_null(s, i);
	else
		sqlite3_bind_double(s, i, v);
}

int store_set_meta(store *st, const char *key, const char *value)
{
	pthread_mutex_lock(&st->mu);
	int rc = -1;
	if (!st->err[0]) {
		sqlite3_bind_text(st->ins_meta, 1, key, -1, SQLITE_TRANSIENT);
		sql_bind_nonempty(st->ins_meta, 2, value);
		rc = step_done(st, st->ins_meta, "meta");
		st->staged_rows = true;
	}
	pthread_mutex_unlock(&st->mu);
	return rc;
}

int store_add_gpu(store *st, const gpu_static *g)
{
	pthread_mutex_lock(&st->mu);
	int rc = -1;
	sqlite3_stmt *s = NULL;
	st->staged_rows = true;
	if (!st->err[0] && !prepare(st, &s, "INSERT INTO temp.gpus VALUES(?,?,?,?,?,?,?,?,?,?)")) {
		sqlite3_bind_int(s, 1, g->index);
		sql_bind_nonempty(s, 2, g->uuid);
		sql_bind_nonempty(s, 3, g->name);
		sql_bind_nonempty(s, 4, g->pci_bus_id);
		sql_bind_nonempty(s, 5, g->serial);
		sql_bind_nonempty(s, 6, g->vbios);
		sql_bind_nonempty(s, 7, g->arch ? gpu_arch_name(g->arch) : NULL);
		if (g->numa_ok)
			sqlite3_bind_int(s, 8, g->numa_node);
		sql_bind_nonempty(s, 9, g->cpu_affinity);
		sql_bind_nonempty(s, 10, g->vendor);
		rc = step_done(st, s, "gpus");
	}
	sqlite3_finalize(s);
	pthread_mutex_unlock(&st->mu);
	return rc;
}

int store_add_link(store *st, int a, int b, const store_link *l)
{
	pthread_mutex_lock(&st->mu);
	int rc = -1;
	sqlite3_stmt *s = NULL;
	st->staged_rows = true;
	if (!st->err[0] && !prepare(st, &s, "INSERT INTO temp.gpu_links VALUES(?,?,?,?,?)")) {
		sqlite3_bind_int(s, 1, a);
		sqlite3_bind_int(s, 2, b);
		if (l->nvlinks >= 0)
			sqlite3_bind_int(s, 3, l->nvlinks);
		if (l->topo >= 0)
			sqlite3_bind_int(s, 4, l->topo);
		if (l->xgmi >= 0)
			sqlite3_bind_int(s, 5, l->xgmi);
		rc = step_done(st, s, "gpu_links");
	}
	sqlite3_finalize(s);
	pthread_mutex_unlock(&st->mu);
	return rc;
}

static char *json_array(const double *x, int n)
{
	gw_strbuf b = {0};
	gw_sb_putc(&b, '[');
	for (int i = 0; i < n; i++) {
		if (isnan(x[i]))
			gw_sb_printf(&b, "%snull", i ? "," : "");
		else
			gw_sb_printf(&b, "%s%.1f", i ? "," : "", x[i]);
	}
	gw_sb_putc(&b, ']');
	return gw_sb_take(&b);
}

static int write_gpus(store *st, const snapshot *s, const int *gpu_index)
{
	for (int g = 0; g < s->ngpu; g++) {
		const gpu_values *v = &s->gpu[g];
		sqlite3_stmt *q = st->ins_gpu;
		sqlite3_bind_double(q, 1, s->t_wall);
		sqlite3_bind_int(q, 2, gpu_index[g]);
		sqlite3_bind_int(q, 3, v->lost);
		int k = 4;
		for (int i = 0; i < GM__COUNT; i++) {
			if (!store_gpu_metric_stored(i))
				continue;
			if (v->ok[i])
				sqlite3_bind_double(q, k, v->v[i]);
			k++;
		}
		if (step_done(st, q, "gpu_samples"))
			return -1;
	}
	return 0;
}

static int write_host(store *st, const snapshot *s)
{
	sqlite3_stmt *q = st->ins_host;
	sqlite3_bind_double(q, 1, s->t_wall);
	bind_num(q, 2, s->interval_s);
	for (int i = 0; i < HM__COUNT; i++)
		bind_num(q, 3 + i, s->h[i]);
	char *busy = s->ncpu ? json_array(s->cpu_busy, s->ncpu) : NULL;
	char *iow = s->ncpu ? json_array(s->cpu_iowait, s->ncpu) : NULL;
	sql_bind_nonempty(q, 3 + HM__COUNT, busy);
	sql_bind_nonempty(q, 4 + HM__COUNT, iow);
	int rc = step_done(st, q, "host_samples");
	free(busy);
	free(iow);
	return rc;
}

static int write_procs(store *st, const snapshot *s, const int *gpu_index)
{
	for (int k = 0; k < s->nproc; k++) {
		const tl_proc *p = &s->procs[k];
		sqlite3_stmt *q = st->ins_procname;
		sqlite3_bind_int64(q, 1, p->pid);
		sqlite3_bind_text(q, 2, p->cmd, -1, SQLITE_TRANSIENT);
		sql_bind_nonempty(q, 3, p->user);
		sqlite3_bind_double(q, 4, s->t_wall);
		if (step_done(st, q, "processes"))
			return -1;
		q = st->ins_proc;
		sqlite3_bind_double(q, 1, s->t_wall);
		sqlite3_bind_int64(q, 2, p->pid);
		if (p->ppid)
			sqlite3_bind_int64(q, 3, p->ppid);
		if (p->gpu >= 0 && p->gpu < s->ngpu)
			sqlite3_bind_int(q, 4, gpu_index[p->gpu]);
		sqlite3_bind_int(q, 5, p->in_tree);
		sqlite3_bind_int(q, 6, p->alive);
		bind_num(q, 7, p->gpu_mem_mib);
		bind_num(q, 8, p->sm_pct);
		bind_num(q, 9, p->cpu_pct);
		bind_num(q, 10, p->rss_mib);
		sqlite3_bind_text(q, 11, p->cmd, -1, SQLITE_TRANSIENT);
		if (p->state) {
			char stc[2] = {p->state, 0};
			sqlite3_bind_text(q, 12, stc, 1, SQLITE_TRANSIENT);
		} else {
			sqlite3_bind_null(q, 12);
		}
		if (step_done(st, q, "process_samples"))
			return -1;
	}
	return 0;
}

static int write_event_locked(store *st, double t, const char *kind, int gpu, long value,
                              const char *text)
{
	sqlite3_stmt *q = st->ins_event;
	sqlite3_bind_double(q, 1, t);
	sqlite3_bind_text(q, 2, kind, -1, SQLITE_TRANSIENT);
	if (gpu >= 0)
		sqlite3_bind_int(q, 3, gpu);
	sqlite3_bind_int64(q, 4, value);
	sql_bind_nonempty(q, 5, text);
	st->staged_other++;
	return step_done(st, q, "events");
}

/*
 * Steps and events wait too, up to OTHER_PER_SAMPLE for each sample that
 * may wait; when full, write now, and drop only when that is refused.
 */
static bool other_room(store *st, double t)
{
	if (st->staged_other < st->backlog_max * OTHER_PER_SAMPLE || flush_locked(st) == 0)
		return true;
	note_drop(st, t);
	st->dropped_other++;
	return false;
}

static int write_events(store *st, const snapshot *s, const int *gpu_index)
{
	int rc = 0;
	for (int k = 0; k < s->nevent && !rc; k++) {
		const tl_event *e = &s->events[k];
		int gi = e->gpu >= 0 && e->gpu < s->ngpu ? gpu_index[e->gpu] : -1;
		rc = write_event_locked(st, e->t, e->kind, gi, e->value, e->text);
	}
	return rc;
}

int store_write_snapshot(store *st, const snapshot *s, const int *gpu_index)
{
	pthread_mutex_lock(&st->mu);
	int rc = -1;
	/* A full backlog first tries to write now; only a refused flush drops samples. */
	if (st->err[0] || (st->staged >= st->backlog_max && flush_locked(st) < 0)) {
		/* stopped: nothing more is written */
	} else if (st->staged >= st->backlog_max) {
		/* The backlog is full: the samples are dropped, the events still kept. */
		note_drop(st, s->t_wall);
		st->dropped++;
		rc = write_events(st, s, gpu_index);
		if (!rc)
			rc = maybe_flush(st);
	} else if (!write_gpus(st, s, gpu_index) && !write_host(st, s) &&
	           !write_procs(st, s, gpu_index) && !write_events(st, s, gpu_index)) {
		st->staged++;
		rc = maybe_flush(st);
	}
	pthread_mutex_unlock(&st->mu);
	return rc;
}

int store_write_step(store *st, double t, long step, const char *line)
{
	pthread_mutex_lock(&st->mu);
	int rc = -1;
	if (!st->err[0] && !other_room(st, t)) {
		rc = st->err[0] ? -1 : 0;
	} else if (!st->err[0]) {
		sqlite3_bind_double(st->ins_step, 1, t);
		sqlite3_bind_int64(st->ins_step, 2, step);
		sql_bind_nonempty(st->ins_step, 3, line);
		st->staged_other++;
		rc = step_done(st, st->ins_step, "steps");
		if (!rc)
			rc = maybe_flush(st);
	}
	pthread_mutex_unlock(&st->mu);
	return rc;
}

int store_write_event(store *st, double t, const char *kind, int gpu_idx, long value,
                      const char *text)
{
	pthread_mutex_lock(&st->mu);
	int rc = -1;
	if (!st->err[0] && !other_room(st, t)) {
		rc = st->err[0] ? -1 : 0;
	} else if (!st->err[0]) {
		rc = write_event_locked(st, t, kind, gpu_idx, value, text);
		if (!rc)
			rc = maybe_flush(st);
	}
	pthread_mutex_unlock(&st->mu);
	return rc;
}

int store_flush(store *st)
{
	pthread_mutex_lock(&st->mu);
	int rc = flush_locked(st);
	pthread_mutex_unlock(&st->mu);
	return rc < 0 ? -1 : 0;
}

int store_checkpoint(store *st)
{
	pthread_mutex_lock(&st->mu);
	int rc = checkpoint(st, SQLITE_CHECKPOINT_PASSIVE);
	pthread_mutex_unlock(&st->mu);
	return rc ? -1 : 0;
}

long store_samples(store *st)
{
	pthread_mutex_lock(&st->mu);
	long n = st->stored;
	pthread_mutex_unlock(&st->mu);
	return n;
}

/* The last flush: wait a bounded time for a write lock another process holds. */
static void final_flush(store *st)
{
	int64_t t0 = gw_mono_ns();
	bool told = false;
	while (flush_locked(st) == 1) {
		if (gw_mono_ns() - t0 >= CLOSE_WAIT_NS) {
			snprintf(
			    st->err, sizeof st->err,
			    "%ld samples not written: another process still holds the write lock",
			    st->staged);
			return;
		}
		if (!told)
			notify(st, NULL, "waiting for another process's write lock");
		told = true;
		gw_sleep_ns(100000000LL);
	}
}

int store_close(store *st)
{
	return store_close_counted(st, NULL);
}

int store_close_counted(store *st, long *stored)
{
	if (stored)
		*stored = 0;
	if (!st)
		return 0;
	/* First the checkpoint thread: it takes st->mu. */
	checkpoint_stop(st);
	pthread_mutex_lock(&st->mu);
	final_flush(st);
	/* Checkpoint so the recording is one self-contained file after any stop,
	 * a disk-full one included (what was committed is all there is). */
	sqlite3_busy_timeout(st->db, 1000);
	if (checkpoint(st, SQLITE_CHECKPOINT_TRUNCATE))
		checkpoint(st, SQLITE_CHECKPOINT_PASSIVE);
	if (st->in_main >= st->stored)
		/* Folded in whole: let SQLite remove the now empty -wal and -shm. */
		sqlite3_db_config(st->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0, NULL);
	else
		notify(st, NULL,
		       "the last %ld samples are only in %s-wal (no room to fold them into the "
		       "file): keep the two files together",
		       st->stored - st->in_main, st->path);
	int rc = st->err[0] ? -1 : 0;
	if (stored)
		*stored = st->stored;
	pthread_mutex_unlock(&st->mu);
	store_free(st);
	return rc;
}
