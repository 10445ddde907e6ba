/* store.c - writing and reading .gpuwhy recordings (SQLite, WAL). */
#include "store/store.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/err.h"
#include "util/timeutil.h"

#define COMMIT_EVERY_NS 1000000000LL

struct store {
	sqlite3 *db;
	pthread_mutex_t mu;
	sqlite3_stmt *ins_gpu, *ins_host, *ins_proc, *ins_procname, *ins_step, *ins_event,
		*ins_meta;
	bool in_tx;
	int64_t tx_started;
	char err[256];
};

/* Numeric GPU metrics get a column; text ones live in the gpus table. */
static bool gpu_metric_stored(int id)
{
	/* the gpu column already holds the index */
	return gpu_metrics[id].fmt != GMF_STR && id != GM_INDEX;
}

static void host_column(int id, char *out, size_t len)
{
	snprintf(out, len, "%s", host_metrics[id].key);
	for (char *p = out; *p; p++)
		if (*p == '.')
			*p = '_';
}

static int fail(store *st, const char *what)
{
	if (!st->err[0])
		snprintf(st->err, sizeof st->err, "%s: %s", what, sqlite3_errmsg(st->db));
	return -1;
}

static int exec(store *st, const char *sql)
{
	char *msg = NULL;
	if (sqlite3_exec(st->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		if (!st->err[0])
			snprintf(st->err, sizeof st->err, "%s", msg ? msg : "SQL error");
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

/* Grow a heap string by printf. */
static void sb_printf(char **buf, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void sb_printf(char **buf, size_t *len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *b = realloc(*buf, *len + (size_t)n + 1);
	if (!b)
		abort();
	va_start(ap, fmt);
	vsnprintf(b + *len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	*buf = b;
	*len += (size_t)n;
}

static int create_schema(store *st)
{
	char *sql = NULL;
	size_t len = 0;
	char col[128];
	sb_printf(&sql, &len,
		  "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
		  "CREATE TABLE gpus(idx INTEGER PRIMARY KEY, uuid TEXT, name TEXT, pci_bus_id TEXT,"
		  " serial TEXT, vbios TEXT, architecture TEXT, numa_node INTEGER, cpu_affinity TEXT);"
		  "CREATE TABLE gpu_links(a INTEGER, b INTEGER, nvlinks INTEGER, topo INTEGER,"
		  " PRIMARY KEY(a, b));"
		  "CREATE TABLE gpu_samples(t REAL NOT NULL, gpu INTEGER NOT NULL, lost INTEGER");
	for (int i = 0; i < GM__COUNT; i++) {
		if (!gpu_metric_stored(i))
			continue;
		gpu_metric_column((gpu_metric_id)i, col, sizeof col);
		sb_printf(&sql, &len, ", \"%s\" REAL", col);
	}
	sb_printf(&sql, &len, ");CREATE INDEX gpu_samples_t ON gpu_samples(t);"
			      "CREATE TABLE host_samples(t REAL NOT NULL, interval REAL");
	for (int i = 0; i < HM__COUNT; i++) {
		host_column(i, col, sizeof col);
		sb_printf(&sql, &len, ", \"%s\" REAL", col);
	}
	sb_printf(&sql, &len,
		  ", core_busy TEXT, core_iowait TEXT);"
		  "CREATE INDEX host_samples_t ON host_samples(t);"
		  "CREATE TABLE processes(pid INTEGER NOT NULL, cmd TEXT NOT NULL, user TEXT,"
		  " first_t REAL, PRIMARY KEY(pid, cmd));"
		  "CREATE TABLE process_samples(t REAL NOT NULL, pid INTEGER NOT NULL, ppid INTEGER,"
		  " gpu INTEGER, in_tree INTEGER, alive INTEGER, gpu_mem_mib REAL, sm_pct REAL,"
		  " cpu_pct REAL, rss_mib REAL, cmd TEXT, state TEXT);"
		  "CREATE INDEX process_samples_t ON process_samples(t);"
		  "CREATE TABLE steps(t REAL NOT NULL, step INTEGER, line TEXT);"
		  "CREATE TABLE events(t REAL NOT NULL, kind TEXT NOT NULL, gpu INTEGER,"
		  " value INTEGER, text TEXT);");
	int rc = exec(st, sql);
	free(sql);
	return rc;
}

static int prepare(store *st, sqlite3_stmt **out, const char *sql)
{
	if (sqlite3_prepare_v2(st->db, sql, -1, out, NULL) != SQLITE_OK)
		return fail(st, "prepare");
	return 0;
}

static int prepare_all(store *st)
{
	char *sql = NULL;
	size_t len = 0;
	int n = 3;
	sb_printf(&sql, &len, "INSERT INTO gpu_samples VALUES(?,?,?");
	for (int i = 0; i < GM__COUNT; i++)
		if (gpu_metric_stored(i)) {
			sb_printf(&sql, &len, ",?");
			n++;
		}
	sb_printf(&sql, &len, ")");
	int rc = prepare(st, &st->ins_gpu, sql);
	free(sql);
	sql = NULL;
	len = 0;
	sb_printf(&sql, &len, "INSERT INTO host_samples VALUES(?,?");
	for (int i = 0; i < HM__COUNT; i++)
		sb_printf(&sql, &len, ",?");
	sb_printf(&sql, &len, ",?,?)");
	rc |= prepare(st, &st->ins_host, sql);
	free(sql);
	(void)n;
	rc |= prepare(st, &st->ins_proc,
		      "INSERT INTO process_samples VALUES(?,?,?,?,?,?,?,?,?,?,?,?)");
	rc |= prepare(st, &st->ins_procname,
		      "INSERT OR IGNORE INTO processes(pid, cmd, user, first_t) VALUES(?,?,?,?)");
	rc |= prepare(st, &st->ins_step, "INSERT INTO steps VALUES(?,?,?)");
	rc |= prepare(st, &st->ins_event, "INSERT INTO events VALUES(?,?,?,?,?)");
	rc |= prepare(st, &st->ins_meta, "INSERT OR REPLACE INTO meta VALUES(?,?)");
	return rc ? -1 : 0;
}

/* Refuse to clobber a file that is neither empty nor an earlier recording. */
static int check_replace(const char *path, char *err, size_t errlen)
{
	struct stat sb;
	if (stat(path, &sb) != 0)
		return 0;
	if (!S_ISREG(sb.st_mode)) {
		snprintf(err, errlen, "exists and is not a regular file");
		return -1;
	}
	if (sb.st_size == 0)
		return unlink(path);
	FILE *f = fopen(path, "rb");
	char head[16] = {0};
	if (f) {
		size_t n = fread(head, 1, sizeof head, f);
		(void)n;
		fclose(f);
	}
	if (memcmp(head, "SQLite format 3", 15) != 0) {
		snprintf(err, errlen, "exists and is not a gpuwhy recording (refusing to overwrite)");
		return -1;
	}
	char side[4096];
	snprintf(side, sizeof side, "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof side, "%s-shm", path);
	unlink(side);
	if (unlink(path) != 0) {
		snprintf(err, errlen, "cannot replace the existing file");
		return -1;
	}
	return 0;
}

int store_create(const char *path, store **out, char *err, size_t errlen)
{
	if (check_replace(path, err, errlen))
		return -1;
	store *st = calloc(1, sizeof *st);
	if (!st) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	pthread_mutex_init(&st->mu, NULL);
	int rc = sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "%s", st->db ? sqlite3_errmsg(st->db) : sqlite3_errstr(rc));
		sqlite3_close(st->db);
		pthread_mutex_destroy(&st->mu);
		free(st);
		return -1;
	}
	sqlite3_busy_timeout(st->db, 5000);
	if (exec(st, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;") ||
	    create_schema(st) || prepare_all(st)) {
		snprintf(err, errlen, "%s", st->err);
		store_close(st);
		unlink(path);
		return -1;
	}
	char v[32];
	snprintf(v, sizeof v, "%d", STORE_SCHEMA_VERSION);
	store_set_meta(st, "schema_version", v);
	store_set_meta(st, "tool_version", GPUWHY_VERSION);
	store_flush(st);
	*out = st;
	return 0;
}

const char *store_error(const store *st)
{
	return st->err[0] ? st->err : NULL;
}

/* Open a transaction if none; commit when the current one is a second old. */
static int tx_begin(store *st)
{
	if (st->in_tx)
		return 0;
	if (exec(st, "BEGIN"))
		return -1;
	st->in_tx = true;
	st->tx_started = gw_mono_ns();
	return 0;
}

static int tx_commit(store *st)
{
	if (!st->in_tx)
		return 0;
	st->in_tx = false;
	if (exec(st, "COMMIT")) {
		exec(st, "ROLLBACK");
		return -1;
	}
	return 0;
}

static int tx_maybe_commit(store *st)
{
	if (st->in_tx && gw_mono_ns() - st->tx_started >= COMMIT_EVERY_NS)
		return tx_commit(st);
	return 0;
}

static int step_done(store *st, sqlite3_stmt *s, const char *what)
{
	int rc = sqlite3_step(s);
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (rc != SQLITE_DONE)
		return fail(st, what);
	return 0;
}

static void bind_num(sqlite3_stmt *s, int i, double v)
{
	if (isnan(v))
		sqlite3_bind_null(s, i);
	else
		sqlite3_bind_double(s, i, v);
}

static void bind_text(sqlite3_stmt *s, int i, const char *t)
{
	if (t && *t)
		sqlite3_bind_text(s, i, t, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s, i);
}

int store_set_meta(store *st, const char *key, const char *value)
{
	pthread_mutex_lock(&st->mu);
	int rc = -1;
	if (!st->err[0] && !tx_begin(st)) {
		sqlite3_bind_text(st->ins_meta, 1, key, -1, SQLITE_TRANSIENT);
		bind_text(st->ins_meta, 2, value);
		rc = step_done(st, st->ins_meta, "meta");
	}
	pthread_mutex_unlock(&st->mu);
	return rc;
}

int store_add_gpu(store *st, const gpu_static *g)
{
	pthread_mutex_lock(&st->mu);
	int rc = -1;
	sqlite3_stmt *s = NULL;
	if (!st->err[0] && !tx_begin(st) &&
	    !prepare(st, &s, "INSERT OR REPLACE INTO gpus VALUES(?,?,?,?,?,?,?,?,?)")) {
		sqlite3_bind_int(s, 1, g->index);
		bind_text(s, 2, g->uuid);
		bind_text(s, 3, g->name);
		bind_text(s, 4, g->pci_bus_id);
		bind_text(s, 5, g->serial);
		bind_text(s, 6, g->vbios);
		bind_text(s, 7, g->arch ? gpu_arch_name(g->arch) : NULL);
		if (g->numa_ok)
			sqlite3_bind_int(s, 8, g->numa_node);
		bind_text(s, 9, g->cpu_affinity);
		rc = step_done(st, s, "gpus");
	}
	sqlite3_finalize(s);
	pthread_mutex_unlock(&st->mu);
	return rc;
}

int store_add_link(store *st, int a, int b, int nvlinks, int topo)
{
	pthread_mutex_lock(&st->mu);
	int rc = -1;
	sqlite3_stmt *s = NULL;
	if (!st->err[0] && !tx_begin(st) &&
	    !prepare(st, &s, "INSERT OR REPLACE INTO gpu_links VALUES(?,?,?,?)")) {
		sqlite3_bind_int(s, 1, a);
		sqlite3_bind_int(s, 2, b);
		if (nvlinks >= 0)
			sqlite3_bind_int(s, 3, nvlinks);
		if (topo >= 0)
			sqlite3_bind_int(s, 4, topo);
		rc = step_done(st, s, "gpu_links");
	}
	sqlite3_finalize(s);
	pthread_mutex_unlock(&st->mu);
	return rc;
}

static char *json_array(const double *x, int n)
{
	char *b = NULL;
	size_t len = 0;
	sb_printf(&b, &len, "[");
	for (int i = 0; i < n; i++) {
		if (isnan(x[i]))
			sb_printf(&b, &len, "%snull", i ? "," : "");
		else
			sb_printf(&b, &len, "%s%.1f", i ? "," : "", x[i]);
	}
	sb_printf(&b, &len, "]");
	return b;
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
			if (!gpu_metric_stored(i))
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
	bind_text(q, 3 + HM__COUNT, busy);
	bind_text(q, 4 + HM__COUNT, iow);
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
		bind_text(q, 3, p->user);
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
	bind_text(q, 5, text);
	return step_done(st, q, "events");
}

int store_write_snapshot(store *st, const snapshot *s, const int *gpu_index)
{
	pthread_mutex_lock(&st->mu);
	int rc = -1;
	if (!st->err[0] && !tx_begin(st) && !write_gpus(st, s, gpu_index) && !write_host(st, s) &&
	    !write_procs(st, s, gpu_index)) {
		rc = 0;
		for (int k = 0; k < s->nevent && !rc; k++) {
			const tl_event *e = &s->events[k];
			int gi = e->gpu >= 0 && e->gpu < s->ngpu ? gpu_index[e->gpu] : -1;
			rc = write_event_locked(st, e->t, e->kind, gi, e->value, e->text);
		}
		if (!rc)
			rc = tx_maybe_commit(st);
	}
	pthread_mutex_unlock(&st->mu);
	return rc;
}

int store_write_step(store *st, double t, long step, const char *line)
{
	pthread_mutex_lock(&st->mu);
	int rc = -1;
	if (!st->err[0] && !tx_begin(st)) {
		sqlite3_bind_double(st->ins_step, 1, t);
		sqlite3_bind_int64(st->ins_step, 2, step);
		bind_text(st->ins_step, 3, line);
		rc = step_done(st, st->ins_step, "steps");
		if (!rc)
			rc = tx_maybe_commit(st);
	}
	pthread_mutex_unlock(&st->mu);
	return rc;
}

int store_write_event(store *st, double t, const char *kind, int gpu_idx, long value,
		      const char *text)
{
	pthread_mutex_lock(&st->mu);
	int rc = -1;
	if (!st->err[0] && !tx_begin(st)) {
		rc = write_event_locked(st, t, kind, gpu_idx, value, text);
		if (!rc)
			rc = tx_maybe_commit(st);
	}
	pthread_mutex_unlock(&st->mu);
	return rc;
}

int store_flush(store *st)
{
	pthread_mutex_lock(&st->mu);
	int rc = st->err[0] ? -1 : tx_commit(st);
	pthread_mutex_unlock(&st->mu);
	return rc;
}

int store_close(store *st)
{
	if (!st)
		return 0;
	int rc = store_flush(st);
	sqlite3_stmt **stmts[] = {&st->ins_gpu,	 &st->ins_host,	 &st->ins_proc, &st->ins_procname,
				  &st->ins_step, &st->ins_event, &st->ins_meta};
	for (size_t i = 0; i < sizeof stmts / sizeof *stmts; i++)
		sqlite3_finalize(*stmts[i]);
	/* Checkpoint so the recording is one self-contained file after a clean stop. */
	if (!st->err[0])
		sqlite3_wal_checkpoint_v2(st->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
	sqlite3_close(st->db);
	pthread_mutex_destroy(&st->mu);
	rc = st->err[0] ? -1 : rc;
	free(st);
	return rc;
}
