/*
 * store.c - the queue's state in SQLite (DIR/queue.db).
 *
 * WAL mode with a busy timeout, and every change in one BEGIN IMMEDIATE
 * transaction, so many `add` calls from many shells and the worker can
 * write at once without losing a task. The schema is documented in the
 * README ("State files"); states are stored as words so people can query
 * it with sqlite3.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "queue/queue.h"
#include "util/err.h"
#include "util/parse.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

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
};

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
    " gpus_used TEXT);"
    "CREATE INDEX IF NOT EXISTS tasks_state ON tasks(state, id);"
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

/* ---- config keys ---- */

const queue_config_key queue_config_keys[] = {
    {"per-gpu", "1", "tasks per GPU for tasks added without --per-gpu"},
    {"max-running", "0", "at most this many tasks at once (0: no limit but the GPUs)"},
    {"cpu-slots", "0", "CPU-only tasks (--gpus 0) at once (0: the number of CPUs)"},
    {"gpus", "", "GPU subset and preference order: indices or UUID prefixes (empty: all)"},
    {"drained-gpus", "", "GPUs that take no new tasks (set by drain/resume --gpu)"},
    {"foreign", "skip", "skip|allow GPUs that run processes not started by the queue"},
    {"place", "spread", "spread (fewest tasks first) or pack (fill in preference order)"},
    {"visible", "uuid",
     "CUDA_VISIBLE_DEVICES as uuid or index (with CUDA_DEVICE_ORDER=PCI_BUS_ID)"},
    {"sample-interval", "1s", "how often the worker samples GPU memory and task processes"},
    {"kill-grace", "10s", "SIGTERM to SIGKILL delay for timeouts and cancels"},
    {"slurm-poll", "2s", "how often the worker asks Slurm about its jobs"},
    {"backend", "local", "local|slurm for tasks added without --backend"},
    {"paused", "0", "1 while paused (set by pause/resume)"},
    {"draining", "0", "1 while draining (set by drain/resume)"},
    {NULL, NULL, NULL},
};

const queue_config_key *queue_config_find(const char *key)
{
	for (int i = 0; queue_config_keys[i].key; i++)
		if (!strcmp(queue_config_keys[i].key, key))
			return &queue_config_keys[i];
	return NULL;
}

bool queue_config_check(const char *key, const char *value, char *err, size_t errlen)
{
	long long x;
	int64_t ns;
	if (!queue_config_find(key)) {
		snprintf(err, errlen, "unknown key (gpuwhy queue config lists them)");
		return false;
	}
	bool ok = true;
	const char *want = "";
	if (!strcmp(key, "per-gpu")) {
		ok = gw_parse_int(value, 1, 1024, &x);
		want = "an integer from 1 to 1024";
	} else if (!strcmp(key, "max-running") || !strcmp(key, "cpu-slots")) {
		ok = gw_parse_int(value, 0, 100000, &x);
		want = "an integer >= 0";
	} else if (!strcmp(key, "foreign")) {
		ok = !strcmp(value, "skip") || !strcmp(value, "allow");
		want = "skip or allow";
	} else if (!strcmp(key, "place")) {
		ok = !strcmp(value, "spread") || !strcmp(value, "pack");
		want = "spread or pack";
	} else if (!strcmp(key, "visible")) {
		ok = !strcmp(value, "uuid") || !strcmp(value, "index");
		want = "uuid or index";
	} else if (!strcmp(key, "backend")) {
		ok = !strcmp(value, "local") || !strcmp(value, "slurm");
		want = "local or slurm";
	} else if (!strcmp(key, "sample-interval") || !strcmp(key, "slurm-poll")) {
		ok = gw_parse_duration_ns(value, 1000000000LL, &ns) && ns >= 50000000LL &&
		     ns <= 3600000000000LL;
		want = "a duration from 50ms to 1h";
	} else if (!strcmp(key, "kill-grace")) {
		ok = gw_parse_duration_ns(value, 1000000000LL, &ns) && ns <= 3600000000000LL;
		want = "a duration up to 1h";
	} else if (!strcmp(key, "paused") || !strcmp(key, "draining")) {
		ok = !strcmp(value, "0") || !strcmp(value, "1");
		want = "0 or 1";
	} else if (!strcmp(key, "gpus") || !strcmp(key, "drained-gpus")) {
		for (const char *p = value; *p && ok; p++)
			ok = (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
			     (*p >= 'A' && *p <= 'Z') || *p == '-' || *p == ',';
		want = "a comma-separated list of GPU indices or UUID prefixes";
	}
	if (!ok)
		snprintf(err, errlen, "'%s' is not %s", value, want);
	return ok;
}

/* ---- paths ---- */

void queue_path(const char *dir, const char *leaf, char *out, size_t outlen)
{
	snprintf(out, outlen, "%s/%s", dir, leaf);
}

void queue_log_path(const char *dir, int64_t id, char *out, size_t outlen)
{
	snprintf(out, outlen, "%s/logs/%lld.log", dir, (long long)id);
}

void queue_status_path(const char *dir, int64_t id, int n, char *out, size_t outlen)
{
	snprintf(out, outlen, "%s/run/%lld.%d.status", dir, (long long)id, n);
}

int queue_dir_resolve(const char *opt, char *out, size_t outlen)
{
	const char *env = getenv("GPUWHY_QUEUE");
	if (opt && *opt)
		snprintf(out, outlen, "%s", opt);
	else if (env && *env)
		snprintf(out, outlen, "%s", env);
	else {
		const char *state = getenv("XDG_STATE_HOME");
		const char *home = getenv("HOME");
		if (state && *state == '/')
			snprintf(out, outlen, "%s/gpuwhy/queue", state);
		else if (home && *home)
			snprintf(out, outlen, "%s/.local/state/gpuwhy/queue", home);
		else
			return gw_error(GW_EXIT_ENV, "queue directory", "use --queue DIR",
			                "neither XDG_STATE_HOME nor HOME is set");
	}
	/* Absolute, so a worker started from elsewhere and the shims agree on it. */
	if (out[0] != '/') {
		char cwd[PATH_MAX], tmp[2 * PATH_MAX + 2];
		if (!getcwd(cwd, sizeof cwd))
			return gw_error(GW_EXIT_ENV, "current directory", NULL, "%s",
			                strerror(errno));
		snprintf(tmp, sizeof tmp, "%s/%s", cwd, out);
		snprintf(out, outlen, "%s", tmp);
	}
	return 0;
}

/* ---- helpers ---- */

static int sql_fail(queue_store *st, const char *what)
{
	return gw_error(GW_EXIT_ENV, "queue database", NULL, "%s: %s", what,
	                sqlite3_errmsg(st->db));
}

static int exec(queue_store *st, const char *sql)
{
	char *msg = NULL;
	int rc = sqlite3_exec(st->db, sql, NULL, NULL, &msg);
	if (rc != SQLITE_OK) {
		gw_error(GW_EXIT_ENV, "queue database", NULL, "%s", msg ? msg : sqlite3_errstr(rc));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

/* A statement for sql: the cached one when it is free, else a new one (cached when
 * there is room). Give it back with done(). */
static sqlite3_stmt *prep(queue_store *st, const char *sql)
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
		sql_fail(st, "prepare");
		return NULL;
	}
	if (st->ncache < STMT_CACHE)
		st->cache[st->ncache++] = (cached_stmt){strdup(sql), s, true};
	return s;
}

/* Reset a cached statement for its next use (it holds no lock then); finalize others. */
static void done(queue_store *st, sqlite3_stmt *s)
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

/* Run a statement without results (BEGIN, COMMIT): one line printed on failure. */
static int run1(queue_store *st, const char *sql)
{
	sqlite3_stmt *s = prep(st, sql);
	if (!s)
		return -1;
	int rc = sqlite3_step(s);
	done(st, s);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		gw_error(GW_EXIT_ENV, "queue database", NULL, "%s", sqlite3_errmsg(st->db));
		return -1;
	}
	return 0;
}

static int begin(queue_store *st)
{
	return run1(st, "BEGIN IMMEDIATE");
}

static int commit(queue_store *st)
{
	return run1(st, "COMMIT");
}

static void rollback(queue_store *st)
{
	if (sqlite3_get_autocommit(st->db))
		return;
	sqlite3_stmt *s = prep(st, "ROLLBACK");
	if (s) {
		sqlite3_step(s);
		done(st, s);
	}
}

static void bind_text(sqlite3_stmt *s, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s, i);
}

/* -1 (unknown / not declared) is stored as NULL. */
static void bind_opt(sqlite3_stmt *s, int i, int64_t v)
{
	if (v < 0)
		sqlite3_bind_null(s, i);
	else
		sqlite3_bind_int64(s, i, v);
}

static int64_t col_opt(sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_NULL ? -1 : sqlite3_column_int64(s, i);
}

static void col_copy(sqlite3_stmt *s, int i, char *out, size_t outlen)
{
	const unsigned char *t = sqlite3_column_text(s, i);
	snprintf(out, outlen, "%s", t ? (const char *)t : "");
}

static char *col_dup(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);
	return t ? strdup((const char *)t) : NULL;
}

/* Run a statement that returns no rows; -1 on error. */
static int step_done(queue_store *st, sqlite3_stmt *s)
{
	int rc = sqlite3_step(s);
	done(st, s);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		sql_fail(st, "write");
		return -1;
	}
	return 0;
}

/* ---- open / close ---- */

int queue_store_open(const char *dir, queue_store **out)
{
	char path[PATH_MAX + 32];
	int prc = queue_dir_prepare(dir);
	if (prc)
		return prc;
	queue_store *st = calloc(1, sizeof *st);
	snprintf(st->dir, sizeof st->dir, "%s", dir);
	snprintf(path, sizeof path, "%s/queue.db", dir);
	if (sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
	    SQLITE_OK) {
		int rc = gw_error(GW_EXIT_ENV, path, NULL, "cannot open: %s",
		                  st->db ? sqlite3_errmsg(st->db) : "out of memory");
		sqlite3_close(st->db);
		free(st);
		return rc;
	}
	sqlite3_busy_timeout(st->db, 30000);
	/* The last connection to close does not checkpoint (an fsync and a rewrite for every
	 * `queue ls` when no worker runs); commits are in the WAL already, and the automatic
	 * checkpoint of a growing WAL still happens. */
	sqlite3_db_config(st->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	/* Switching to WAL needs a moment alone with the file: retry while others do it too. */
	int tries = 0;
	for (;;) {
		sqlite3_stmt *s = NULL;
		int rc = sqlite3_prepare_v2(st->db, "PRAGMA journal_mode=WAL", -1, &s, NULL);
		if (rc == SQLITE_OK)
			rc = sqlite3_step(s);
		done(st, s);
		if (rc == SQLITE_ROW || rc == SQLITE_DONE)
			break;
		if ((rc != SQLITE_BUSY && rc != SQLITE_LOCKED) || ++tries > 300) {
			int e = gw_error(GW_EXIT_ENV, path, NULL, "cannot use WAL mode: %s",
			                 sqlite3_errmsg(st->db));
			sqlite3_close(st->db);
			free(st);
			return e;
		}
		gw_sleep_ns(10000000);
	}
	/* synchronous=NORMAL in WAL mode: a commit is in the WAL file once it returns, so
	 * it survives any process crash (kill -9 of the worker, a shim or a client); only
	 * a power loss or kernel crash can take back the last commits before a checkpoint.
	 * FULL would add an fsync to every state change. */
	if (exec(st, "PRAGMA synchronous=NORMAL")) {
		queue_store_close(st);
		return GW_EXIT_ENV;
	}
	/* The schema is created once (user_version 1 says it is there), not checked in a
	 * write transaction by every client. */
	sqlite3_stmt *v = prep(st, "PRAGMA user_version");
	int version = v && sqlite3_step(v) == SQLITE_ROW ? sqlite3_column_int(v, 0) : 0;
	done(st, v);
	if (version < 1 &&
	    (begin(st) || exec(st, schema) || exec(st, "PRAGMA user_version = 1") || commit(st))) {
		rollback(st);
		queue_store_close(st);
		return GW_EXIT_ENV;
	}
	*out = st;
	return 0;
}

void queue_store_close(queue_store *st)
{
	if (!st)
		return;
	for (int i = 0; i < st->ncache; i++) {
		sqlite3_finalize(st->cache[i].s);
		free(st->cache[i].sql);
	}
	sqlite3_close(st->db);
	free(st);
}

const char *queue_store_dir(const queue_store *st)
{
	return st->dir;
}

/* ---- config ---- */

void queue_store_config_get(queue_store *st, const char *key, char *out, size_t outlen)
{
	const queue_config_key *k = queue_config_find(key);
	snprintf(out, outlen, "%s", k ? k->def : "");
	sqlite3_stmt *s = prep(st, "SELECT value FROM meta WHERE key = 'cfg.' || ?");
	if (!s)
		return;
	bind_text(s, 1, key);
	if (sqlite3_step(s) == SQLITE_ROW)
		col_copy(s, 0, out, outlen);
	done(st, s);
}

int64_t queue_store_config_int(queue_store *st, const char *key)
{
	char v[64];
	queue_store_config_get(st, key, v, sizeof v);
	int64_t ns;
	long long x;
	if (gw_parse_int(v, LLONG_MIN, LLONG_MAX, &x))
		return x;
	if (gw_parse_duration_ns(v, 1000000000LL, &ns))
		return ns;
	return 0;
}

int queue_store_config_set(queue_store *st, const char *key, const char *value)
{
	sqlite3_stmt *s = prep(st, "INSERT INTO meta(key, value) VALUES('cfg.' || ?, ?) "
	                           "ON CONFLICT(key) DO UPDATE SET value = excluded.value");
	if (!s)
		return -1;
	bind_text(s, 1, key);
	bind_text(s, 2, value);
	return step_done(st, s);
}

/* ---- tasks ---- */

static char *argv_json(const queue_spec *sp)
{
	json_t *a = json_array();
	for (int i = 0; i < sp->argc; i++)
		json_array_append_new(a, json_string(sp->argv[i]));
	char *s = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	return s;
}

static void argv_from_json(queue_spec *sp, const char *txt)
{
	json_t *a = txt ? json_loads(txt, 0, NULL) : NULL;
	size_t n = json_is_array(a) ? json_array_size(a) : 0;
	sp->argv = calloc(n + 1, sizeof *sp->argv);
	sp->argc = 0;
	for (size_t i = 0; i < n; i++) {
		json_t *w = json_array_get(a, i);
		sp->argv[sp->argc++] = strdup(json_is_string(w) ? json_string_value(w) : "");
	}
	json_decref(a);
}

static int task_state_locked(queue_store *st, int64_t id);

int queue_store_add(queue_store *st, queue_spec *specs, int n, int64_t *ids)
{
	if (begin(st))
		return -1;
	sqlite3_stmt *s =
	    prep(st, "INSERT INTO tasks(name, argv, cwd, env, gpus, mem_mib, per_gpu, retries,"
	             " retry_delay_ms, timeout_ms, after_id, allow_foreign, backend, host_mem_mib,"
	             " slurm_args, input, output, record_file, submitted)"
	             " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
	if (!s) {
		rollback(st);
		return -1;
	}
	double now = gw_wall_s();
	for (int i = 0; i < n; i++) {
		const queue_spec *sp = &specs[i];
		/* Checked here, in the same transaction: a task added earlier in the batch counts.
		 */
		if (sp->after_id > 0 && task_state_locked(st, sp->after_id) == -1) {
			char what[64];
			snprintf(what, sizeof what, "after %lld", (long long)sp->after_id);
			done(st, s);
			rollback(st);
			if (n > 1)
				return gw_error(
				    GW_EXIT_USAGE, what,
				    "task ids are the numbers `gpuwhy queue ls` shows",
				    "task %d of %d waits for task %lld, which does not exist; "
				    "nothing was added",
				    i + 1, n, (long long)sp->after_id);
			return gw_error(GW_EXIT_USAGE, what,
			                "task ids are the numbers `gpuwhy queue ls` shows",
			                "there is no task %lld", (long long)sp->after_id);
		}
		char *av = argv_json(sp);
		sqlite3_reset(s);
		bind_text(s, 1, sp->name);
		bind_text(s, 2, av);
		bind_text(s, 3, sp->cwd ? sp->cwd : "/");
		bind_text(s, 4, sp->env_json);
		sqlite3_bind_int(s, 5, sp->gpus);
		bind_opt(s, 6, sp->mem_mib);
		sqlite3_bind_int(s, 7, sp->per_gpu);
		sqlite3_bind_int(s, 8, sp->retries);
		sqlite3_bind_int64(s, 9, sp->retry_delay_ms);
		sqlite3_bind_int64(s, 10, sp->timeout_ms);
		bind_opt(s, 11, sp->after_id > 0 ? sp->after_id : -1);
		sqlite3_bind_int(s, 12, sp->allow_foreign);
		bind_text(s, 13, queue_backend_name(sp->backend));
		bind_opt(s, 14, sp->host_mem_mib);
		bind_text(s, 15, sp->slurm_args);
		bind_text(s, 16, sp->input);
		bind_text(s, 17, sp->output);
		bind_text(s, 18, sp->record_file);
		sqlite3_bind_double(s, 19, now);
		int rc = sqlite3_step(s);
		free(av);
		if (rc != SQLITE_DONE) {
			sql_fail(st, "add");
			done(st, s);
			rollback(st);
			return -1;
		}
		ids[i] = sqlite3_last_insert_rowid(st->db);
	}
	done(st, s);
	if (commit(st)) {
		rollback(st);
		return -1;
	}
	return 0;
}

#define TASK_COLS                                                                                  \
	"id, name, argv, cwd, env, gpus, mem_mib, per_gpu, retries, retry_delay_ms, timeout_ms,"   \
	" after_id, allow_foreign, backend, host_mem_mib, slurm_args, input, output,"              \
	" record_file, state, attempts, budget_from, oom_count, mem_hint_mib, per_gpu_hint,"       \
	" not_before, cancel_requested, submitted, started, ended, exit_code, signal, error,"      \
	" peak_gpu_mib, peak_rss_kib, wait_reason, gpus_used"

static void read_task(sqlite3_stmt *s, queue_task *t)
{
	memset(t, 0, sizeof *t);
	queue_spec_init(&t->spec);
	t->id = sqlite3_column_int64(s, 0);
	col_copy(s, 1, t->spec.name, sizeof t->spec.name);
	argv_from_json(&t->spec, (const char *)sqlite3_column_text(s, 2));
	t->spec.cwd = col_dup(s, 3);
	t->spec.env_json = col_dup(s, 4);
	t->spec.gpus = sqlite3_column_int(s, 5);
	t->spec.mem_mib = col_opt(s, 6);
	t->spec.per_gpu = sqlite3_column_int(s, 7);
	t->spec.retries = sqlite3_column_int(s, 8);
	t->spec.retry_delay_ms = sqlite3_column_int64(s, 9);
	t->spec.timeout_ms = sqlite3_column_int64(s, 10);
	t->spec.after_id = col_opt(s, 11) > 0 ? col_opt(s, 11) : 0;
	t->spec.allow_foreign = sqlite3_column_int(s, 12) != 0;
	const unsigned char *b = sqlite3_column_text(s, 13);
	t->spec.backend = b && !strcmp((const char *)b, "slurm") ? QB_SLURM : QB_LOCAL;
	t->spec.host_mem_mib = col_opt(s, 14);
	t->spec.slurm_args = col_dup(s, 15);
	t->spec.input = col_dup(s, 16);
	t->spec.output = col_dup(s, 17);
	t->spec.record_file = col_dup(s, 18);
	int state = queue_state_parse((const char *)sqlite3_column_text(s, 19));
	t->state = state < 0 ? QS_FAILED : (queue_state)state;
	t->attempts = sqlite3_column_int(s, 20);
	t->budget_from = sqlite3_column_int(s, 21);
	t->oom_count = sqlite3_column_int(s, 22);
	t->mem_hint_mib = col_opt(s, 23);
	t->per_gpu_hint = sqlite3_column_int(s, 24);
	t->not_before = sqlite3_column_double(s, 25);
	t->cancel_requested = sqlite3_column_int(s, 26) != 0;
	t->submitted = sqlite3_column_double(s, 27);
	t->started = sqlite3_column_double(s, 28);
	t->ended = sqlite3_column_double(s, 29);
	t->exit_ok = sqlite3_column_type(s, 30) != SQLITE_NULL;
	t->exit_code = sqlite3_column_int(s, 30);
	t->signal = sqlite3_column_int(s, 31);
	col_copy(s, 32, t->error, sizeof t->error);
	t->peak_gpu_mib = col_opt(s, 33);
	t->peak_rss_kib = col_opt(s, 34);
	col_copy(s, 35, t->wait_reason, sizeof t->wait_reason);
	col_copy(s, 36, t->gpus_used, sizeof t->gpus_used);
}

void queue_task_free(queue_task *t)
{
	if (t)
		queue_spec_free(&t->spec);
}

void queue_tasks_free(queue_task *t, int n)
{
	for (int i = 0; i < n; i++)
		queue_task_free(&t[i]);
	free(t);
}

int queue_store_get(queue_store *st, int64_t id, queue_task *out)
{
	sqlite3_stmt *s = prep(st, "SELECT " TASK_COLS " FROM tasks WHERE id = ?");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	int rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		read_task(s, out);
	done(st, s);
	return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? 1 : -1;
}

int queue_store_list(queue_store *st, int state, queue_task **out, int *n)
{
	sqlite3_stmt *s =
	    prep(st, state >= 0 ? "SELECT " TASK_COLS " FROM tasks WHERE state = ? ORDER BY id"
	                        : "SELECT " TASK_COLS " FROM tasks ORDER BY id");
	if (!s)
		return -1;
	if (state >= 0)
		bind_text(s, 1, queue_state_name((queue_state)state));
	int cap = 64, cnt = 0, rc;
	queue_task *v = malloc((size_t)cap * sizeof *v);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (cnt == cap) {
			cap *= 2;
			v = gw_xrealloc(v, (size_t)cap * sizeof *v);
		}
		read_task(s, &v[cnt++]);
	}
	done(st, s);
	if (rc != SQLITE_DONE) {
		queue_tasks_free(v, cnt);
		return sql_fail(st, "list"), -1;
	}
	*out = v;
	*n = cnt;
	return 0;
}

/* ---- attempts ---- */

#define ATT_COLS                                                                                   \
	"task_id, n, token, astate, backend, slurm_job, slurm_state, shim_pid, shim_start,"        \
	" task_pgid, boot_id, gpu_uuids, gpu_idx, reserved_mib, per_gpu, started, ended,"          \
	" exit_code, signal, outcome, oom, error, peak_gpu_mib, peak_rss_kib, log_offset, runs"

static const char *astate_name(queue_astate a)
{
	return a == QA_STARTING ? "starting" : a == QA_RUNNING ? "running" : "ended";
}

static queue_astate astate_parse(const char *s)
{
	if (s && !strcmp(s, "starting"))
		return QA_STARTING;
	if (s && !strcmp(s, "running"))
		return QA_RUNNING;
	return QA_ENDED;
}

static const char *oom_name(queue_oom_kind k)
{
	return k == QOOM_GPU ? "gpu" : k == QOOM_HOST ? "host" : NULL;
}

static void read_attempt(sqlite3_stmt *s, queue_attempt *a)
{
	memset(a, 0, sizeof *a);
	a->task_id = sqlite3_column_int64(s, 0);
	a->n = sqlite3_column_int(s, 1);
	col_copy(s, 2, a->token, sizeof a->token);
	a->astate = astate_parse((const char *)sqlite3_column_text(s, 3));
	const unsigned char *b = sqlite3_column_text(s, 4);
	a->backend = b && !strcmp((const char *)b, "slurm") ? QB_SLURM : QB_LOCAL;
	col_copy(s, 5, a->slurm_job, sizeof a->slurm_job);
	col_copy(s, 6, a->slurm_state, sizeof a->slurm_state);
	a->shim_pid = sqlite3_column_int(s, 7);
	a->shim_start = (uint64_t)sqlite3_column_int64(s, 8);
	a->task_pgid = sqlite3_column_int(s, 9);
	col_copy(s, 10, a->boot_id, sizeof a->boot_id);
	col_copy(s, 11, a->gpu_uuids, sizeof a->gpu_uuids);
	col_copy(s, 12, a->gpu_idx, sizeof a->gpu_idx);
	a->reserved_mib = col_opt(s, 13);
	a->per_gpu = sqlite3_column_int(s, 14);
	a->started = sqlite3_column_double(s, 15);
	a->ended = sqlite3_column_double(s, 16);
	a->exit_ok = sqlite3_column_type(s, 17) != SQLITE_NULL;
	a->exit_code = sqlite3_column_int(s, 17);
	a->signal = sqlite3_column_int(s, 18);
	int o = queue_outcome_parse((const char *)sqlite3_column_text(s, 19));
	a->outcome = o < 0 ? QO_NONE : (queue_outcome)o;
	const unsigned char *oom = sqlite3_column_text(s, 20);
	a->oom = !oom ? QOOM_NONE : !strcmp((const char *)oom, "gpu") ? QOOM_GPU : QOOM_HOST;
	col_copy(s, 21, a->error, sizeof a->error);
	a->peak_gpu_mib = col_opt(s, 22);
	a->peak_rss_kib = col_opt(s, 23);
	a->log_offset = sqlite3_column_int64(s, 24);
	a->runs = sqlite3_column_int(s, 25);
}

static int read_attempts(queue_store *st, sqlite3_stmt *s, queue_attempt **out, int *n)
{
	int cap = 8, cnt = 0, rc;
	queue_attempt *v = malloc((size_t)cap * sizeof *v);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (cnt == cap) {
			cap *= 2;
			v = gw_xrealloc(v, (size_t)cap * sizeof *v);
		}
		read_attempt(s, &v[cnt++]);
	}
	done(st, s);
	if (rc != SQLITE_DONE) {
		free(v);
		return sql_fail(st, "attempts"), -1;
	}
	*out = v;
	*n = cnt;
	return 0;
}

int queue_store_attempts(queue_store *st, int64_t id, queue_attempt **out, int *n)
{
	sqlite3_stmt *s =
	    prep(st, "SELECT " ATT_COLS " FROM attempts WHERE task_id = ? ORDER BY n");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	return read_attempts(st, s, out, n);
}

int queue_store_attempt_get(queue_store *st, int64_t id, int n, queue_attempt *out)
{
	sqlite3_stmt *s = prep(st, "SELECT " ATT_COLS " FROM attempts WHERE task_id = ? AND n = ?");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int(s, 2, n);
	int rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		read_attempt(s, out);
	done(st, s);
	return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? 1 : -1;
}

int queue_store_active(queue_store *st, int backend, queue_attempt **out, int *n)
{
	sqlite3_stmt *s = prep(st, "SELECT " ATT_COLS " FROM attempts WHERE astate != 'ended'"
	                           " AND (? < 0 OR backend = ?) ORDER BY task_id, n");
	if (!s)
		return -1;
	sqlite3_bind_int(s, 1, backend);
	bind_text(s, 2, queue_backend_name(backend == QB_SLURM ? QB_SLURM : QB_LOCAL));
	return read_attempts(st, s, out, n);
}

/* ---- user actions ---- */

static int task_state_locked(queue_store *st, int64_t id)
{
	sqlite3_stmt *s = prep(st, "SELECT state FROM tasks WHERE id = ?");
	if (!s)
		return -2;
	sqlite3_bind_int64(s, 1, id);
	int state = -1;
	if (sqlite3_step(s) == SQLITE_ROW)
		state = queue_state_parse((const char *)sqlite3_column_text(s, 0));
	done(st, s);
	return state;
}

int queue_store_state_of(queue_store *st, int64_t id)
{
	int s = task_state_locked(st, id);
	return s < -1 ? -1 : s;
}

int queue_store_cancel(queue_store *st, int64_t id, int *result, queue_attempt *active)
{
	memset(active, 0, sizeof *active);
	if (begin(st))
		return -1;
	int state = task_state_locked(st, id);
	if (state < 0) {
		rollback(st);
		return state == -1 ? 1 : -1;
	}
	int to = queue_transition((queue_state)state, QE_CANCEL);
	sqlite3_stmt *s;
	if (to == QS_CANCELLED) {
		s = prep(st, "UPDATE tasks SET state = 'cancelled', ended = ?, wait_reason = NULL,"
		             " error = 'cancelled while queued' WHERE id = ?");
		if (!s) {
			rollback(st);
			return -1;
		}
		sqlite3_bind_double(s, 1, gw_wall_s());
		sqlite3_bind_int64(s, 2, id);
		*result = 0;
	} else if (to >= 0) {
		s = prep(st, "UPDATE tasks SET cancel_requested = 1 WHERE id = ?");
		if (!s) {
			rollback(st);
			return -1;
		}
		sqlite3_bind_int64(s, 1, id);
		*result = 1;
	} else {
		*result = 2;
		rollback(st);
		return 0;
	}
	if (step_done(st, s)) {
		rollback(st);
		return -1;
	}
	if (*result == 1) {
		sqlite3_stmt *q = prep(st, "SELECT " ATT_COLS " FROM attempts WHERE task_id = ?"
		                           " AND astate != 'ended' ORDER BY n DESC LIMIT 1");
		if (q) {
			sqlite3_bind_int64(q, 1, id);
			if (sqlite3_step(q) == SQLITE_ROW)
				read_attempt(q, active);
			done(st, q);
		}
	}
	return commit(st) ? (rollback(st), -1) : 0;
}

int queue_store_retry(queue_store *st, int64_t id, int *result)
{
	if (begin(st))
		return -1;
	int state = task_state_locked(st, id);
	if (state < 0) {
		rollback(st);
		return state == -1 ? 1 : -1;
	}
	if (queue_transition((queue_state)state, QE_RETRY) != QS_QUEUED) {
		*result = 1;
		rollback(st);
		return 0;
	}
	sqlite3_stmt *s = prep(st, "UPDATE tasks SET state = 'queued', budget_from = attempts,"
	                           " not_before = 0, cancel_requested = 0, ended = NULL,"
	                           " error = NULL, wait_reason = NULL WHERE id = ?");
	if (!s) {
		rollback(st);
		return -1;
	}
	sqlite3_bind_int64(s, 1, id);
	if (step_done(st, s)) {
		rollback(st);
		return -1;
	}
	*result = 0;
	return commit(st) ? (rollback(st), -1) : 0;
}

/* ---- worker side ---- */

int queue_store_candidates(queue_store *st, queue_backend b, int64_t after_id, queue_candidate *out,
                           int max)
{
	sqlite3_stmt *s = prep(st, "SELECT id, gpus, mem_mib, mem_hint_mib, per_gpu, per_gpu_hint,"
	                           " allow_foreign, after_id, not_before FROM tasks"
	                           " WHERE state = 'queued' AND id > ? AND backend = ? ORDER BY id"
	                           " LIMIT ?");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, after_id);
	bind_text(s, 2, queue_backend_name(b));
	sqlite3_bind_int(s, 3, max);
	int n = 0;
	while (n < max && sqlite3_step(s) == SQLITE_ROW) {
		queue_candidate *c = &out[n++];
		c->id = sqlite3_column_int64(s, 0);
		c->gpus = sqlite3_column_int(s, 1);
		int64_t mem = col_opt(s, 2), hint = col_opt(s, 3);
		c->mem_mib = hint > mem ? hint : mem;
		c->per_gpu = sqlite3_column_int(s, 4);
		c->per_gpu_hint = sqlite3_column_int(s, 5);
		c->allow_foreign = sqlite3_column_int(s, 6) != 0;
		c->after_id = col_opt(s, 7) > 0 ? col_opt(s, 7) : 0;
		c->not_before = sqlite3_column_double(s, 8);
		c->backend = b;
	}
	done(st, s);
	return n;
}

static int fail_queued(queue_store *st, int64_t id, const char *error)
{
	sqlite3_stmt *s = prep(st, "UPDATE tasks SET state = 'failed', error = ?, ended = ?,"
	                           " wait_reason = NULL WHERE id = ? AND state = 'queued'");
	if (!s)
		return -1;
	bind_text(s, 1, error);
	sqlite3_bind_double(s, 2, gw_wall_s());
	sqlite3_bind_int64(s, 3, id);
	return step_done(st, s);
}

int queue_store_fail_now(queue_store *st, int64_t id, const char *error)
{
	return fail_queued(st, id, error);
}

int queue_store_dep_failed(queue_store *st, int64_t id, int64_t dep, queue_state dep_state)
{
	char msg[160];
	if ((int)dep_state < 0)
		snprintf(msg, sizeof msg, "waits for task %lld, which does not exist",
		         (long long)dep);
	else
		snprintf(msg, sizeof msg, "task %lld, which it waits for, ended %s", (long long)dep,
		         queue_state_name(dep_state));
	return fail_queued(st, id, msg);
}

int queue_store_begin_attempt(queue_store *st, queue_attempt *a, queue_state to)
{
	if (begin(st))
		return -1;
	sqlite3_stmt *s = prep(st, "UPDATE tasks SET state = ?, attempts = attempts + 1,"
	                           " started = COALESCE(started, ?), wait_reason = NULL,"
	                           " gpus_used = ? WHERE id = ? AND state = 'queued'");
	if (!s) {
		rollback(st);
		return -1;
	}
	bind_text(s, 1, queue_state_name(to));
	sqlite3_bind_double(s, 2, a->started);
	bind_text(s, 3, a->gpu_idx);
	sqlite3_bind_int64(s, 4, a->task_id);
	if (step_done(st, s)) {
		rollback(st);
		return -1;
	}
	if (sqlite3_changes(st->db) == 0) {
		rollback(st);
		return 1;
	}
	s = prep(st, "SELECT COALESCE(MAX(n), 0) + 1 FROM attempts WHERE task_id = ?");
	if (!s) {
		rollback(st);
		return -1;
	}
	sqlite3_bind_int64(s, 1, a->task_id);
	a->n = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int(s, 0) : 1;
	done(st, s);
	s = prep(st, "INSERT INTO attempts(task_id, n, token, astate, backend, boot_id, gpu_uuids,"
	             " gpu_idx, reserved_mib, per_gpu, started, log_offset)"
	             " VALUES(?,?,?,?,?,?,?,?,?,?,?,?)");
	if (!s) {
		rollback(st);
		return -1;
	}
	sqlite3_bind_int64(s, 1, a->task_id);
	sqlite3_bind_int(s, 2, a->n);
	bind_text(s, 3, a->token);
	bind_text(s, 4, astate_name(QA_STARTING));
	bind_text(s, 5, queue_backend_name(a->backend));
	bind_text(s, 6, a->boot_id);
	bind_text(s, 7, a->gpu_uuids);
	bind_text(s, 8, a->gpu_idx);
	bind_opt(s, 9, a->reserved_mib);
	sqlite3_bind_int(s, 10, a->per_gpu);
	sqlite3_bind_double(s, 11, a->started);
	sqlite3_bind_int64(s, 12, a->log_offset);
	if (step_done(st, s)) {
		rollback(st);
		return -1;
	}
	a->astate = QA_STARTING;
	return commit(st) ? (rollback(st), -1) : 0;
}

int queue_store_attempt_running(queue_store *st, const queue_attempt *a, bool *cancel)
{
	if (begin(st))
		return -1;
	sqlite3_stmt *s = prep(st, "UPDATE attempts SET astate = 'running', shim_pid = ?,"
	                           " shim_start = ?, task_pgid = ? WHERE task_id = ? AND n = ?");
	if (!s) {
		rollback(st);
		return -1;
	}
	sqlite3_bind_int(s, 1, a->shim_pid);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)a->shim_start);
	sqlite3_bind_int(s, 3, a->task_pgid);
	sqlite3_bind_int64(s, 4, a->task_id);
	sqlite3_bind_int(s, 5, a->n);
	if (step_done(st, s)) {
		rollback(st);
		return -1;
	}
	*cancel = false;
	s = prep(st, "SELECT cancel_requested FROM tasks WHERE id = ?");
	if (s) {
		sqlite3_bind_int64(s, 1, a->task_id);
		if (sqlite3_step(s) == SQLITE_ROW)
			*cancel = sqlite3_column_int(s, 0) != 0;
		done(st, s);
	}
	return commit(st) ? (rollback(st), -1) : 0;
}

/* The GPUs an attempt got, on the task too (Slurm tells us once the job runs). */
static int set_gpus_used(queue_store *st, const queue_attempt *a)
{
	if (!a->gpu_idx[0])
		return 0;
	sqlite3_stmt *s = prep(st, "UPDATE tasks SET gpus_used = ? WHERE id = ?");
	if (!s)
		return -1;
	bind_text(s, 1, a->gpu_idx);
	sqlite3_bind_int64(s, 2, a->task_id);
	return step_done(st, s);
}

int queue_store_attempt_slurm(queue_store *st, const queue_attempt *a)
{
	if (set_gpus_used(st, a) != 0)
		return -1;
	sqlite3_stmt *s =
	    prep(st, "UPDATE attempts SET astate = ?, slurm_job = ?, slurm_state = ?,"
	             " runs = ?, gpu_idx = ?, started = ? WHERE task_id = ? AND n = ?");
	if (!s)
		return -1;
	bind_text(s, 1, astate_name(a->astate));
	bind_text(s, 2, a->slurm_job[0] ? a->slurm_job : NULL);
	bind_text(s, 3, a->slurm_state[0] ? a->slurm_state : NULL);
	sqlite3_bind_int(s, 4, a->runs);
	bind_text(s, 5, a->gpu_idx);
	sqlite3_bind_double(s, 6, a->started);
	sqlite3_bind_int64(s, 7, a->task_id);
	sqlite3_bind_int(s, 8, a->n);
	return step_done(st, s);
}

int queue_store_task_began(queue_store *st, int64_t id)
{
	sqlite3_stmt *s = prep(st, "UPDATE tasks SET state = 'running' WHERE id = ?"
	                           " AND state = 'submitted'");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	return step_done(st, s);
}

int queue_store_finish(queue_store *st, const queue_attempt *a, const queue_retry_out *d,
                       int64_t task_peak_gpu, int64_t task_peak_rss)
{
	if (begin(st))
		return -1;
	sqlite3_stmt *s = prep(st, "UPDATE attempts SET astate = 'ended', started = ?, ended = ?,"
	                           " exit_code = ?, signal = ?, outcome = ?, oom = ?, error = ?,"
	                           " peak_gpu_mib = ?, peak_rss_kib = ?, runs = ?, slurm_state = ?,"
	                           " task_pgid = ?, gpu_idx = ? WHERE task_id = ? AND n = ?");
	if (!s) {
		rollback(st);
		return -1;
	}
	sqlite3_bind_double(s, 1, a->started);
	sqlite3_bind_double(s, 2, a->ended);
	if (a->exit_ok)
		sqlite3_bind_int(s, 3, a->exit_code);
	else
		sqlite3_bind_null(s, 3);
	sqlite3_bind_int(s, 4, a->signal);
	bind_text(s, 5, queue_outcome_name(a->outcome));
	bind_text(s, 6, oom_name(a->oom));
	bind_text(s, 7, a->error[0] ? a->error : NULL);
	bind_opt(s, 8, a->peak_gpu_mib);
	bind_opt(s, 9, a->peak_rss_kib);
	sqlite3_bind_int(s, 10, a->runs);
	bind_text(s, 11, a->slurm_state[0] ? a->slurm_state : NULL);
	sqlite3_bind_int(s, 12, a->task_pgid);
	bind_text(s, 13, a->gpu_idx);
	sqlite3_bind_int64(s, 14, a->task_id);
	sqlite3_bind_int(s, 15, a->n);
	if (step_done(st, s) || set_gpus_used(st, a)) {
		rollback(st);
		return -1;
	}
	bool final = queue_state_final(d->next);
	bool not_started = a->outcome == QO_NOT_STARTED;
	s = prep(st, "UPDATE tasks SET state = ?, attempts = attempts - ?, not_before = ?,"
	             " mem_hint_mib = COALESCE(?, mem_hint_mib),"
	             " per_gpu_hint = CASE WHEN ? > 0 THEN ? ELSE per_gpu_hint END,"
	             " oom_count = oom_count + ?, ended = ?, exit_code = ?, signal = ?, error = ?,"
	             " peak_gpu_mib = CASE WHEN ? IS NULL THEN peak_gpu_mib ELSE "
	             "MAX(COALESCE(peak_gpu_mib, 0), ?) END,"
	             " peak_rss_kib = CASE WHEN ? IS NULL THEN peak_rss_kib ELSE "
	             "MAX(COALESCE(peak_rss_kib, 0), ?) END,"
	             " cancel_requested = CASE WHEN ? THEN 0 ELSE cancel_requested END"
	             " WHERE id = ?");
	if (!s) {
		rollback(st);
		return -1;
	}
	double now = gw_wall_s();
	sqlite3_bind_text(s, 1, queue_state_name(d->next), -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 2, not_started ? 1 : 0);
	sqlite3_bind_double(
	    s, 3, d->next == QS_QUEUED && d->delay_ms > 0 ? now + (double)d->delay_ms / 1000.0 : 0);
	bind_opt(s, 4, d->mem_hint_mib);
	sqlite3_bind_int(s, 5, d->per_gpu_hint);
	sqlite3_bind_int(s, 6, d->per_gpu_hint);
	sqlite3_bind_int(s, 7, a->oom == QOOM_GPU ? 1 : 0);
	if (final)
		sqlite3_bind_double(s, 8, a->ended > 0 ? a->ended : now);
	else
		sqlite3_bind_null(s, 8);
	if (a->exit_ok)
		sqlite3_bind_int(s, 9, a->exit_code);
	else
		sqlite3_bind_null(s, 9);
	sqlite3_bind_int(s, 10, a->signal);
	bind_text(s, 11, d->next == QS_DONE ? NULL : d->why);
	bind_opt(s, 12, task_peak_gpu);
	bind_opt(s, 13, task_peak_gpu);
	bind_opt(s, 14, task_peak_rss);
	bind_opt(s, 15, task_peak_rss);
	sqlite3_bind_int(s, 16, final ? 1 : 0);
	sqlite3_bind_int64(s, 17, a->task_id);
	if (step_done(st, s)) {
		rollback(st);
		return -1;
	}
	return commit(st) ? (rollback(st), -1) : 0;
}

int queue_store_peaks(queue_store *st, int64_t id, int n, int64_t gpu_mib, int64_t rss_kib)
{
	sqlite3_stmt *s = prep(st, "UPDATE attempts SET peak_gpu_mib = ?, peak_rss_kib = ?"
	                           " WHERE task_id = ? AND n = ?");
	if (!s)
		return -1;
	bind_opt(s, 1, gpu_mib);
	bind_opt(s, 2, rss_kib);
	sqlite3_bind_int64(s, 3, id);
	sqlite3_bind_int(s, 4, n);
	return step_done(st, s);
}

int queue_store_wait_reason(queue_store *st, int64_t id, const char *reason)
{
	sqlite3_stmt *s = prep(st, "UPDATE tasks SET wait_reason = ? WHERE id = ?"
	                           " AND state = 'queued'");
	if (!s)
		return -1;
	bind_text(s, 1, reason && *reason ? reason : NULL);
	sqlite3_bind_int64(s, 2, id);
	return step_done(st, s);
}

int queue_store_cancel_requested(queue_store *st, int64_t id)
{
	sqlite3_stmt *s = prep(st, "SELECT cancel_requested FROM tasks WHERE id = ?");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	int v = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int(s, 0) : 0;
	done(st, s);
	return v;
}

int queue_store_count_state(queue_store *st, int state)
{
	sqlite3_stmt *s = prep(st, state >= 0 ? "SELECT COUNT(*) FROM tasks WHERE state = ?"
	                                      : "SELECT COUNT(*) FROM tasks");
	if (!s)
		return -1;
	if (state >= 0)
		bind_text(s, 1, queue_state_name((queue_state)state));
	int v = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int(s, 0) : -1;
	done(st, s);
	return v;
}

/* ---- GPU view ---- */

int queue_store_gpu_view_put(queue_store *st, const queue_gpu_row *rows, int n, double t)
{
	if (begin(st))
		return -1;
	if (exec(st, "DELETE FROM gpu_view")) {
		rollback(st);
		return -1;
	}
	sqlite3_stmt *s = prep(st, "INSERT INTO gpu_view(pos, idx, uuid, name, total_mib, free_mib,"
	                           " pending_mib, avail_mib, ntasks, cap, foreign_procs, state,"
	                           " tasks, t) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
	if (!s) {
		rollback(st);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		const queue_gpu_row *r = &rows[i];
		sqlite3_reset(s);
		sqlite3_bind_int(s, 1, i);
		sqlite3_bind_int(s, 2, r->index);
		bind_text(s, 3, r->uuid);
		bind_text(s, 4, r->name);
		bind_opt(s, 5, r->total_mib);
		bind_opt(s, 6, r->free_mib);
		bind_opt(s, 7, r->pending_mib);
		if (r->avail_mib == INT64_MIN)
			sqlite3_bind_null(s, 8);
		else
			sqlite3_bind_int64(s, 8, r->avail_mib);
		sqlite3_bind_int(s, 9, r->ntasks);
		sqlite3_bind_int(s, 10, r->cap);
		sqlite3_bind_int(s, 11, r->foreign);
		bind_text(s, 12, r->state);
		bind_text(s, 13, r->tasks);
		sqlite3_bind_double(s, 14, t);
		if (sqlite3_step(s) != SQLITE_DONE) {
			sql_fail(st, "gpu view");
			done(st, s);
			rollback(st);
			return -1;
		}
	}
	done(st, s);
	return commit(st) ? (rollback(st), -1) : 0;
}

int queue_store_gpu_view_get(queue_store *st, queue_gpu_row **rows, int *n, double *t)
{
	sqlite3_stmt *s = prep(st, "SELECT idx, uuid, name, total_mib, free_mib, pending_mib,"
	                           " avail_mib, ntasks, cap, foreign_procs, state, tasks, t"
	                           " FROM gpu_view ORDER BY pos");
	if (!s)
		return -1;
	int cap = 8, cnt = 0;
	queue_gpu_row *v = calloc((size_t)cap, sizeof *v);
	*t = 0;
	while (sqlite3_step(s) == SQLITE_ROW) {
		if (cnt == cap) {
			cap *= 2;
			v = gw_xrealloc(v, (size_t)cap * sizeof *v);
		}
		queue_gpu_row *r = &v[cnt++];
		memset(r, 0, sizeof *r);
		r->index = sqlite3_column_int(s, 0);
		col_copy(s, 1, r->uuid, sizeof r->uuid);
		col_copy(s, 2, r->name, sizeof r->name);
		r->total_mib = col_opt(s, 3);
		r->free_mib = col_opt(s, 4);
		r->pending_mib = col_opt(s, 5);
		r->avail_mib = sqlite3_column_type(s, 6) == SQLITE_NULL
		                   ? INT64_MIN
		                   : sqlite3_column_int64(s, 6);
		r->ntasks = sqlite3_column_int(s, 7);
		r->cap = sqlite3_column_int(s, 8);
		r->foreign = sqlite3_column_int(s, 9);
		col_copy(s, 10, r->state, sizeof r->state);
		col_copy(s, 11, r->tasks, sizeof r->tasks);
		*t = sqlite3_column_double(s, 12);
	}
	done(st, s);
	*rows = v;
	*n = cnt;
	return 0;
}

int queue_store_cancel_list(queue_store *st, int64_t *out, int max)
{
	sqlite3_stmt *s = prep(st, "SELECT id FROM tasks WHERE cancel_requested = 1"
	                           " AND state IN ('running', 'submitted') ORDER BY id LIMIT ?");
	if (!s)
		return -1;
	sqlite3_bind_int(s, 1, max);
	int n = 0;
	while (n < max && sqlite3_step(s) == SQLITE_ROW)
		out[n++] = sqlite3_column_int64(s, 0);
	done(st, s);
	return n;
}

int queue_store_clean(queue_store *st, bool all, int64_t **ids, int *n)
{
	*ids = NULL;
	*n = 0;
	if (begin(st))
		return -1;
	/* A task others still wait for (--after) stays: they need its outcome. */
	const char *where =
	    all ? "state IN ('done', 'failed', 'timeout', 'cancelled', 'lost') AND id NOT IN"
	          " (SELECT after_id FROM tasks WHERE after_id IS NOT NULL AND state IN"
	          " ('queued', 'submitted', 'running'))"
	        : "state = 'done' AND id NOT IN (SELECT after_id FROM tasks WHERE after_id IS"
	          " NOT NULL AND state IN ('queued', 'submitted', 'running'))";
	char sql[512];
	snprintf(sql, sizeof sql, "SELECT id FROM tasks WHERE %s ORDER BY id", where);
	sqlite3_stmt *s = prep(st, sql);
	if (!s) {
		rollback(st);
		return -1;
	}
	int cap = 64, cnt = 0;
	int64_t *v = malloc((size_t)cap * sizeof *v);
	while (sqlite3_step(s) == SQLITE_ROW) {
		if (cnt == cap) {
			cap *= 2;
			v = gw_xrealloc(v, (size_t)cap * sizeof *v);
		}
		v[cnt++] = sqlite3_column_int64(s, 0);
	}
	done(st, s);
	snprintf(sql, sizeof sql,
	         "DELETE FROM attempts WHERE task_id IN (SELECT id FROM tasks WHERE %s)", where);
	int rc = exec(st, sql);
	snprintf(sql, sizeof sql, "DELETE FROM tasks WHERE %s", where);
	if (!rc)
		rc = exec(st, sql);
	if (rc || commit(st)) {
		rollback(st);
		free(v);
		return -1;
	}
	*ids = v;
	*n = cnt;
	return 0;
}
