/*
 * store_read.c - a .gpuwhy recording back into a timeline.
 *
 * Nothing damaged is read as a recording. The header is checked before SQLite
 * opens the file (what it is, and whether it is cut short); every step of every
 * query is checked; rows read by time must come in time order; and a recording
 * with an application id must match the digests its writer kept in meta
 * (store_int.h), so a changed value, a lost or a doubled row is found as well.
 * Everything is read in one read transaction: a recording still being written
 * is read as it was at one commit. Errors are one printable line: SQLite's
 * messages, which may quote a damaged schema, are not passed on.
 */
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/sql.h"
#include "store/store.h"
#include "store/store_int.h"
#include "util/err.h"
#include "util/fail.h"
#include "util/i18n.h"
#include "util/parse.h"
#include "util/xalloc.h"

#define DAMAGED N_("truncated or corrupt")
#define RECORD_ONE N_("record one with gpuwhy record or gpuwhy run")

/* One open recording being read. */
typedef struct {
	sqlite3 *db;
	const char *path;
	bool verify;          /* it has an application id, so digests to match */
	store_digests want;   /* the digests meta holds */
	store_digests got;    /* those of what was read */
	int rc;               /* the first SQLite error */
	const char *disorder; /* a table whose rows came out of time order */
	bool bad_digest_row;  /* a digest row gpuwhy would not have written */
} reader;

/* Whether the -wal that a WAL-mode database implies is next to it. */
static bool wal_beside(const char *path)
{
	char wal[4200];
	snprintf(wal, sizeof wal, "%s-wal", path);
	return access(wal, F_OK) == 0;
}

int store_sql_fail(gw_fail *err, const char *path, int rc)
{
	switch (rc & 0xff) {
	case SQLITE_NOMEM:
		return gw_fail_set(err, GW_EXIT_ENV, path, NULL, "out of memory");
	case SQLITE_IOERR:
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
	case SQLITE_CANTOPEN:
	case SQLITE_PERM:
	case SQLITE_READONLY:
		return gw_fail_set(err, GW_EXIT_ENV, path, NULL, "cannot read recording: %s",
		                   sqlite3_errstr(rc));
	default:
		/* A table or column missing, a malformed page or schema: damage. */
		return gw_fail_set(err, GW_EXIT_ENV, path, NULL, DAMAGED);
	}
}

/* A file without an application id: a recording from before it, by its tables? */
static int check_old_schema(const char *path, const sql_head *h, gw_fail *err)
{
	sqlite3 *db = NULL;
	int rc = sql_open_inspect(path, &db);
	int kind = rc == SQLITE_OK ? store_schema_kind(db) : STORE_SCHEMA_DAMAGED;
	sqlite3_close(db);
	if (kind == STORE_SCHEMA_OURS)
		return 0;
	if (kind == STORE_SCHEMA_EMPTY && h->wal && !wal_beside(path))
		return gw_fail_set(err, GW_EXIT_ENV, path,
		                   N_("copy its -wal file along with it, or copy it again once the "
		                      "recorder has stopped"),
		                   "incomplete recording: its data is in %s-wal, which was left "
		                   "behind",
		                   path);
	if (kind == STORE_SCHEMA_DAMAGED)
		return gw_fail_set(err, GW_EXIT_ENV, path, NULL, DAMAGED);
	return gw_fail_set(err, GW_EXIT_ENV, path, RECORD_ONE,
	                   kind == STORE_SCHEMA_EMPTY ? "not a gpuwhy recording (no meta table)"
	                                              : "not a gpuwhy recording");
}

/* What the first 100 bytes say, before SQLite opens the file. */
static int check_head(const char *path, bool *verify, gw_fail *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	sql_head h;
	if (fd < 0 || sql_read_head(fd, &h) != 0) {
		if (fd >= 0)
			close(fd);
		return gw_fail_set(err, GW_EXIT_ENV, path, N_("check the path"),
		                   "cannot open recording");
	}
	close(fd);
	if (!h.sqlite)
		return h.magic_prefix ? gw_fail_set(err, GW_EXIT_ENV, path, NULL, DAMAGED)
		                      : gw_fail_set(err, GW_EXIT_ENV, path, RECORD_ONE,
		                                    "not a gpuwhy recording");
	if (h.app_id == SQL_APP_QUEUE)
		return gw_fail_set(err, GW_EXIT_ENV, path, RECORD_ONE,
		                   "not a gpuwhy recording (a gpuwhy queue database)");
	if (h.app_id && h.app_id != SQL_APP_RECORDING)
		return gw_fail_set(err, GW_EXIT_ENV, path, RECORD_ONE, "not a gpuwhy recording");
	/* A -wal beside it may hold the pages the main file lacks (a recorder killed while
	 * it folded them in): then SQLite's recovery decides. */
	if (sql_head_damaged(&h) && !wal_beside(path))
		return gw_fail_set(err, GW_EXIT_ENV, path, NULL, DAMAGED);
	*verify = h.app_id == SQL_APP_RECORDING;
	return *verify ? 0 : check_old_schema(path, &h, err);
}

/* The schema version, in the read transaction just begun. */
static int check_version(reader *r, gw_fail *err)
{
	sqlite3_stmt *s;
	int rc = sqlite3_prepare_v2(r->db, "SELECT value FROM meta WHERE key='schema_version'", -1,
	                            &s, NULL);
	if (rc != SQLITE_OK)
		return store_sql_fail(err, r->path, rc);
	int ver = -1;
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		ver = sqlite3_column_int(s, 0);
		rc = sqlite3_step(s);
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return store_sql_fail(err, r->path, rc);
	if (ver < 1)
		return gw_fail_set(err, GW_EXIT_ENV, r->path, NULL,
		                   r->verify ? DAMAGED
		                             : "not a gpuwhy recording (no schema version)");
	if (ver > STORE_SCHEMA_VERSION)
		return gw_fail_set(err, GW_EXIT_ENV, r->path, N_("upgrade gpuwhy"),
		                   "recording schema %d is newer than this gpuwhy (%d)", ver,
		                   STORE_SCHEMA_VERSION);
	return 0;
}

/*
 * Open a recording for reading, in a read transaction. Read-write first:
 * after a SIGKILL the WAL must be recovered, which needs write access;
 * read-only still works for an intact file on a read-only disk.
 */
static int open_recording(const char *path, reader *r, gw_fail *err)
{
	*r = (reader){.path = path};
	int rc = check_head(path, &r->verify, err);
	if (rc)
		return rc;
	/* NOMUTEX: the connection is this thread's alone, and every value is read twice (the
	 * digest, the timeline): SQLite's lock around each call would cost a third. */
	if (sqlite3_open_v2(path, &r->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK) {
		sqlite3_close(r->db);
		if ((rc = sqlite3_open_v2(path, &r->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
		                          NULL)) != SQLITE_OK) {
			sqlite3_close(r->db);
			r->db = NULL;
			return store_sql_fail(err, path, rc);
		}
	}
	sqlite3_busy_timeout(r->db, 5000);
	rc = sqlite3_exec(r->db, "BEGIN", NULL, NULL, NULL);
	rc = rc == SQLITE_OK ? check_version(r, err) : store_sql_fail(err, path, rc);
	if (rc) {
		sqlite3_close(r->db);
		r->db = NULL;
	}
	return rc;
}

static void close_recording(reader *r)
{
	sqlite3_exec(r->db, "COMMIT", NULL, NULL, NULL);
	sqlite3_close(r->db);
	r->db = NULL;
}

/* Prepare sql; NULL (and r->rc) on failure. */
static sqlite3_stmt *query(reader *r, const char *sql)
{
	sqlite3_stmt *s = NULL;
	int rc = sqlite3_prepare_v2(r->db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK) {
		if (!r->rc)
			r->rc = rc;
		sqlite3_finalize(s);
		return NULL;
	}
	return s;
}

/* The next row of s: true for a row, false at the end or on an error (kept in r->rc). */
static bool next_row(reader *r, sqlite3_stmt *s)
{
	int rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		return true;
	if (rc != SQLITE_DONE && !r->rc)
		r->rc = rc;
	return false;
}

/* A row of table t: into its digest, and its time (column 0) after the last one's. */
static void row_seen(reader *r, sqlite3_stmt *s, store_table t, double *last_t)
{
	store_digest_row(&r->got.table[t], s, 0, sqlite3_column_count(s));
	if (!last_t)
		return;
	double tt = sqlite3_column_double(s, 0);
	if (tt < *last_t && !r->disorder)
		r->disorder = store_table_names[t];
	*last_t = tt;
}

static void meta_add(store_meta *m, int *cap, const char *k, const char *v)
{
	if (m->n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		m->keys = gw_xreallocarray(m->keys, (size_t)*cap, sizeof *m->keys);
		m->values = gw_xreallocarray(m->values, (size_t)*cap, sizeof *m->values);
	}
	m->keys[m->n] = gw_xstrdup(k ? k : "");
	m->values[m->n] = gw_xstrdup(v ? v : "");
	m->n++;
}

/* Meta, without the digest rows, which go to r->want. */
static store_meta *meta_load(reader *r)
{
	store_meta *m = gw_xcalloc(1, sizeof *m);
	sqlite3_stmt *s = query(r, "SELECT key, value FROM meta ORDER BY key");
	int cap = 0;
	while (s && next_row(r, s)) {
		/* The type first: reading a value as text converts one of another type. */
		bool text_key = sqlite3_column_type(s, 0) == SQLITE_TEXT;
		const char *k = text_key ? (const char *)sqlite3_column_text(s, 0) : NULL;
		if (store_digest_key(k)) {
			const char *v = sqlite3_column_type(s, 1) == SQLITE_TEXT
			                    ? (const char *)sqlite3_column_text(s, 1)
			                    : NULL;
			if (!store_digest_parse(k, v, &r->want))
				r->bad_digest_row = true;
			continue;
		}
		row_seen(r, s, ST_META, NULL);
		meta_add(m, &cap, (const char *)sqlite3_column_text(s, 0),
		         (const char *)sqlite3_column_text(s, 1));
	}
	sqlite3_finalize(s);
	return m;
}

/* Whether what was read of tables (a bit per store_table) matches the digests. */
static const char *digest_mismatch(reader *r, unsigned tables, bool schema)
{
	if (!r->verify)
		return NULL;
	if (r->bad_digest_row)
		return "meta";
	for (int t = 0; t < ST__COUNT; t++) {
		if (!(tables & (1u << t)))
			continue;
		const store_digest *a = &r->want.table[t], *b = &r->got.table[t];
		if (!(r->want.have & (1u << t)) || a->rows != b->rows || a->sum != b->sum)
			return store_table_names[t];
	}
	if (schema) {
		int rc = store_digest_schema(r->db, &r->got.schema);
		if (rc != SQLITE_OK && !r->rc)
			r->rc = rc;
		if (!(r->want.have & (1u << ST__COUNT)) ||
		    r->want.schema.rows != r->got.schema.rows ||
		    r->want.schema.sum != r->got.schema.sum)
			return "schema";
	}
	return NULL;
}

/* The verdict on what r read of tables: 0, or why it cannot be trusted. */
static int read_verdict(reader *r, unsigned tables, bool schema, gw_fail *err)
{
	if (r->rc)
		return store_sql_fail(err, r->path, r->rc);
	if (r->disorder)
		return gw_fail_set(err, GW_EXIT_ENV, r->path, NULL,
		                   "truncated or corrupt: the %s rows are out of time order",
		                   r->disorder);
	const char *bad = digest_mismatch(r, tables, schema);
	if (r->rc)
		return store_sql_fail(err, r->path, r->rc);
	if (bad)
		return gw_fail_set(err, GW_EXIT_ENV, r->path, NULL,
		                   "truncated or corrupt: %s does not match its digest", bad);
	return 0;
}

const char *store_meta_get(const store_meta *m, const char *key)
{
	for (int i = 0; m && i < m->n; i++)
		if (!strcmp(m->keys[i], key))
			return m->values[i];
	return NULL;
}

void store_meta_free(store_meta *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->n; i++) {
		free(m->keys[i]);
		free(m->values[i]);
	}
	free(m->keys);
	free(m->values);
	free(m);
}

int store_read_meta(const char *path, store_meta **out, gw_fail *err)
{
	reader r;
	*out = NULL;
	int rc = open_recording(path, &r, err);
	if (rc)
		return rc;
	store_meta *m = meta_load(&r);
	rc = read_verdict(&r, 1u << ST_META, true, err);
	close_recording(&r);
	if (rc)
		store_meta_free(m);
	else
		*out = m;
	return rc;
}

/* Find the sample index for time t (exact match of a written double, else nearest). */
static int sample_index(const timeline *tl, double t)
{
	int lo = 0, hi = tl->n - 1;
	if (hi < 0)
		return -1;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (tl->t[mid] + tl->t0_wall < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && fabs(tl->t[lo - 1] + tl->t0_wall - t) < fabs(tl->t[lo] + tl->t0_wall - t))
		lo--;
	return lo;
}

/* Parse "[1.0,null,3]" into up to n doubles (NAN for null). */
static int parse_array(const char *s, double *out, int n)
{
	int k = 0;
	if (!s || *s != '[')
		return 0;
	s++;
	while (*s && *s != ']' && k < n) {
		while (*s == ' ' || *s == ',')
			s++;
		if (!strncmp(s, "null", 4)) {
			out[k++] = NAN;
			s += 4;
			continue;
		}
		char *end;
		double v = gw_strtod_c(s, &end);
		if (end == s)
			break;
		out[k++] = v;
		s = end;
	}
	return k;
}

/* The most CPUs a sample has (a damaged array is found by the digest, not here). */
static int count_cpus(reader *r)
{
	sqlite3_stmt *s = query(r, "SELECT max(CASE WHEN json_valid(core_busy) THEN"
	                           " json_array_length(core_busy) END) FROM host_samples");
	int ncpu = 0;
	if (s && next_row(r, s)) {
		ncpu = sqlite3_column_int(s, 0);
		next_row(r, s);
	}
	sqlite3_finalize(s);
	return ncpu > 0 && ncpu <= 65536 ? ncpu : 0;
}

/* The column named col of s's rows, -1 when the file has none. */
static int column_named(sqlite3_stmt *s, const char *col)
{
	for (int i = 0; i < sqlite3_column_count(s); i++)
		if (!strcmp(sqlite3_column_name(s, i), col))
			return i;
	return -1;
}

/* The vendor as a model knows it; anything else (or none) is unknown. */
static void copy_vendor(char *out, size_t len, const char *v)
{
	bool known = v && (!strcmp(v, "nvidia") || !strcmp(v, "amd"));
	snprintf(out, len, "%s", known ? v : "");
}

static int load_gpus(reader *r, int *idx, char (*uuid)[96], char (*name)[96], char (*vendor)[8])
{
	sqlite3_stmt *s = query(r, "SELECT * FROM gpus ORDER BY idx");
	/* recordings older than the vendor column have none: its GPUs' vendor is unknown */
	int vcol = s ? column_named(s, "vendor") : -1;
	int n = 0;
	while (s && next_row(r, s)) {
		row_seen(r, s, ST_GPUS, NULL);
		if (n == GPU_MAX || sqlite3_column_count(s) < 3)
			continue;
		idx[n] = sqlite3_column_int(s, 0);
		const char *u = (const char *)sqlite3_column_text(s, 1);
		const char *nm = (const char *)sqlite3_column_text(s, 2);
		snprintf(uuid[n], 96, "%s", u ? u : "");
		snprintf(name[n], 96, "%s", nm ? nm : "");
		copy_vendor(vendor[n], 8,
		            vcol >= 0 ? (const char *)sqlite3_column_text(s, vcol) : NULL);
		n++;
	}
	sqlite3_finalize(s);
	return n;
}

static int pos_of(const int *idx, int n, int gpu)
{
	for (int i = 0; i < n; i++)
		if (idx[i] == gpu)
			return i;
	return -1;
}

/* A host_samples column name is its summary key with '_' for '.'. */
static bool host_key_is(const char *key, const char *col)
{
	for (; *key && *col; key++, col++)
		if ((*key == '.' ? '_' : *key) != *col)
			return false;
	return !*key && !*col;
}

/* Result column -> summary metric id, or one of these for the other columns. */
enum { HCOL_OTHER = -1, HCOL_INTERVAL = -2, HCOL_BUSY = -3, HCOL_IOWAIT = -4 };

static int host_col(const char *name)
{
	if (!name)
		return HCOL_OTHER;
	if (!strcmp(name, "interval"))
		return HCOL_INTERVAL;
	if (!strcmp(name, "core_busy"))
		return HCOL_BUSY;
	if (!strcmp(name, "core_iowait"))
		return HCOL_IOWAIT;
	for (int h = 0; h < HM__COUNT; h++)
		if (host_key_is(host_metrics[h].key, name))
			return h;
	return HCOL_OTHER;
}

static void load_host_row(sqlite3_stmt *s, const int *cols, int ncol, timeline *tl, int k,
                          double *busy, double *iowait)
{
	int nb = 0, ni = 0;
	for (int c = 1; c < ncol; c++) {
		if (cols[c] == HCOL_BUSY) {
			nb = parse_array((const char *)sqlite3_column_text(s, c), busy, tl->ncpu);
			continue;
		}
		if (cols[c] == HCOL_IOWAIT) {
			ni = parse_array((const char *)sqlite3_column_text(s, c), iowait, tl->ncpu);
			continue;
		}
		if (cols[c] == HCOL_OTHER || sqlite3_column_type(s, c) == SQLITE_NULL)
			continue;
		if (cols[c] == HCOL_INTERVAL)
			tl->interval[k] = sqlite3_column_double(s, c);
		else
			tl_set_host(tl, (host_metric_id)cols[c], k, sqlite3_column_double(s, c));
	}
	for (int c = 0; c < nb; c++)
		tl_set_cpu(tl, c, k, busy[c], c < ni ? iowait[c] : NAN);
}

static void load_samples(reader *r, timeline *tl)
{
	sqlite3_stmt *s = query(r, "SELECT * FROM host_samples ORDER BY t");
	if (!s)
		return;
	/* Columns by name: older files lack newer summary columns. */
	int ncol = sqlite3_column_count(s);
	int *cols = gw_xcalloc((size_t)ncol, sizeof *cols);
	double *tmp = gw_xcalloc(tl->ncpu ? (size_t)tl->ncpu : 1, sizeof *tmp);
	double *tmp2 = gw_xcalloc(tl->ncpu ? (size_t)tl->ncpu : 1, sizeof *tmp2);
	for (int c = 0; c < ncol; c++)
		cols[c] = host_col(sqlite3_column_name(s, c));
	bool first = true;
	double last = -INFINITY;
	while (next_row(r, s)) {
		row_seen(r, s, ST_HOST_SAMPLES, &last);
		double t = sqlite3_column_double(s, 0);
		if (first) {
			if (tl->t0_wall == 0 || t < tl->t0_wall)
				tl->t0_wall = t;
			first = false;
		}
		int k = tl_add_sample(tl, t - tl->t0_wall);
		load_host_row(s, cols, ncol, tl, k, tmp, tmp2);
	}
	free(cols);
	free(tmp);
	free(tmp2);
	sqlite3_finalize(s);
}

static void load_gpu_samples(reader *r, timeline *tl, const int *idx)
{
	sqlite3_stmt *s = query(r, "SELECT * FROM gpu_samples ORDER BY t");
	if (!s)
		return;
	/* Map result columns to metric ids by name: older files may lack newer columns. */
	int ncol = sqlite3_column_count(s);
	int *col_metric = gw_xcalloc((size_t)ncol, sizeof *col_metric);
	char name[128];
	for (int c = 0; c < ncol; c++) {
		col_metric[c] = -1;
		for (int m = 0; m < GM__COUNT; m++) {
			gpu_metric_column((gpu_metric_id)m, name, sizeof name);
			if (!strcmp(name, sqlite3_column_name(s, c)))
				col_metric[c] = m;
		}
	}
	double last = -INFINITY;
	while (next_row(r, s)) {
		row_seen(r, s, ST_GPU_SAMPLES, &last);
		int k = sample_index(tl, sqlite3_column_double(s, 0));
		int g = pos_of(idx, tl->ngpu, sqlite3_column_int(s, 1));
		if (k < 0 || g < 0)
			continue;
		if (sqlite3_column_int(s, 2))
			tl->gpu[g].lost_at_end = true;
		for (int c = 3; c < ncol; c++)
			if (col_metric[c] >= 0 && sqlite3_column_type(s, c) != SQLITE_NULL)
				tl_set_gpu(tl, g, (gpu_metric_id)col_metric[c], k,
				           sqlite3_column_double(s, c));
	}
	free(col_metric);
	sqlite3_finalize(s);
}

static double col_num(sqlite3_stmt *s, int c)
{
	return sqlite3_column_type(s, c) == SQLITE_NULL ? NAN : sqlite3_column_double(s, c);
}

/* A row of processes: who ran a command, for process_samples. */
typedef struct {
	int64_t pid;
	char *cmd, *user;
} proc_user;

static int proc_user_cmp(const void *a, const void *b)
{
	const proc_user *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return strcmp(x->cmd, y->cmd);
}

/* The processes table, read whole (for its digest) and sorted for lookups. */
static proc_user *load_users(reader *r, size_t *n)
{
	sqlite3_stmt *s = query(r, "SELECT * FROM processes");
	proc_user *u = NULL;
	size_t cap = 0;
	*n = 0;
	while (s && next_row(r, s)) {
		row_seen(r, s, ST_PROCESSES, NULL);
		const char *cmd = (const char *)sqlite3_column_text(s, 1);
		const char *user = (const char *)sqlite3_column_text(s, 2);
		if (!cmd || sqlite3_column_type(s, 0) == SQLITE_NULL)
			continue; /* joins nothing, as in SQL */
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			u = gw_xreallocarray(u, cap, sizeof *u);
		}
		u[*n] = (proc_user){sqlite3_column_int64(s, 0), gw_xstrdup(cmd),
		                    gw_xstrdup(user ? user : "")};
		(*n)++;
	}
	sqlite3_finalize(s);
	if (*n)
		qsort(u, *n, sizeof *u, proc_user_cmp);
	return u;
}

static const char *user_of(const proc_user *u, size_t n, int64_t pid, const char *cmd)
{
	if (!cmd || !n)
		return "";
	proc_user key = {.pid = pid, .cmd = (char *)cmd};
	const proc_user *hit = bsearch(&key, u, n, sizeof *u, proc_user_cmp);
	return hit ? hit->user : "";
}

/* process_samples' columns, found by name: files before the state column lack it. */
enum {
	PS_T,
	PS_PID,
	PS_PPID,
	PS_GPU,
	PS_IN_TREE,
	PS_ALIVE,
	PS_MEM,
	PS_SM,
	PS_CPU,
	PS_RSS,
	PS_CMD,
	PS_STATE,
	PS__COUNT
};

static void proc_columns(sqlite3_stmt *s, int *col)
{
	static const char *const names[PS__COUNT] = {"t",       "pid",     "ppid",        "gpu",
	                                             "in_tree", "alive",   "gpu_mem_mib", "sm_pct",
	                                             "cpu_pct", "rss_mib", "cmd",         "state"};
	for (int k = 0; k < PS__COUNT; k++) {
		col[k] = -1;
		for (int c = 0; c < sqlite3_column_count(s); c++)
			if (!strcmp(sqlite3_column_name(s, c), names[k]))
				col[k] = c;
	}
}

static double col_at(sqlite3_stmt *s, int c)
{
	return c < 0 ? NAN : col_num(s, c);
}

static void load_proc_row(sqlite3_stmt *s, const int *col, tl_proc *p, const timeline *tl,
                          const int *idx)
{
	p->s = sample_index(tl, sqlite3_column_double(s, col[PS_T]));
	p->pid = (unsigned)sqlite3_column_int64(s, col[PS_PID]);
	p->ppid = col[PS_PPID] < 0 ? 0 : (unsigned)sqlite3_column_int64(s, col[PS_PPID]);
	p->gpu = col[PS_GPU] < 0 || sqlite3_column_type(s, col[PS_GPU]) == SQLITE_NULL
	             ? -1
	             : pos_of(idx, tl->ngpu, sqlite3_column_int(s, col[PS_GPU]));
	p->in_tree = col[PS_IN_TREE] >= 0 && sqlite3_column_int(s, col[PS_IN_TREE]);
	p->alive = col[PS_ALIVE] >= 0 && sqlite3_column_int(s, col[PS_ALIVE]);
	p->gpu_mem_mib = col_at(s, col[PS_MEM]);
	p->sm_pct = col_at(s, col[PS_SM]);
	p->cpu_pct = col_at(s, col[PS_CPU]);
	p->rss_mib = col_at(s, col[PS_RSS]);
	const char *cmd =
	    col[PS_CMD] < 0 ? NULL : (const char *)sqlite3_column_text(s, col[PS_CMD]);
	snprintf(p->cmd, sizeof p->cmd, "%s", cmd ? cmd : "");
	/* Recordings before the state column read as state unknown. */
	const char *state =
	    col[PS_STATE] < 0 ? NULL : (const char *)sqlite3_column_text(s, col[PS_STATE]);
	p->state = state && state[0] ? state[0] : 0;
}

static void load_procs(reader *r, timeline *tl, const int *idx)
{
	size_t nu;
	proc_user *users = load_users(r, &nu);
	sqlite3_stmt *s = query(r, "SELECT * FROM process_samples ORDER BY t");
	int col[PS__COUNT];
	if (s)
		proc_columns(s, col);
	if (s && (col[PS_T] != 0 || col[PS_PID] < 0)) {
		if (!r->rc)
			r->rc = SQLITE_CORRUPT;
		sqlite3_finalize(s);
		s = NULL;
	}
	double last = -INFINITY;
	while (s && next_row(r, s)) {
		row_seen(r, s, ST_PROCESS_SAMPLES, &last);
		tl_proc *p = tl_add_proc(tl);
		load_proc_row(s, col, p, tl, idx);
		const char *cmd =
		    col[PS_CMD] < 0 ? NULL : (const char *)sqlite3_column_text(s, col[PS_CMD]);
		snprintf(p->user, sizeof p->user, "%s",
		         user_of(users, nu, sqlite3_column_int64(s, col[PS_PID]), cmd));
	}
	sqlite3_finalize(s);
	for (size_t i = 0; i < nu; i++) {
		free(users[i].cmd);
		free(users[i].user);
	}
	free(users);
}

static void load_steps_events(reader *r, timeline *tl, const int *idx)
{
	double last = -INFINITY;
	sqlite3_stmt *s = query(r, "SELECT * FROM steps ORDER BY t");
	while (s && next_row(r, s)) {
		row_seen(r, s, ST_STEPS, &last);
		tl_add_step(tl, sqlite3_column_double(s, 0) - tl->t0_wall,
		            (long)sqlite3_column_int64(s, 1));
	}
	sqlite3_finalize(s);
	last = -INFINITY;
	s = query(r, "SELECT * FROM events ORDER BY t");
	while (s && next_row(r, s)) {
		row_seen(r, s, ST_EVENTS, &last);
		const char *kind = (const char *)sqlite3_column_text(s, 1);
		int g = sqlite3_column_type(s, 2) == SQLITE_NULL
		            ? -1
		            : pos_of(idx, tl->ngpu, sqlite3_column_int(s, 2));
		tl_add_event(tl, sqlite3_column_double(s, 0) - tl->t0_wall, kind ? kind : "", g,
		             (long)sqlite3_column_int64(s, 3),
		             (const char *)sqlite3_column_text(s, 4));
	}
	sqlite3_finalize(s);
	s = query(r, "SELECT * FROM gpu_links");
	/* recordings older than the xgmi column have none: unknown */
	int xcol = s ? column_named(s, "xgmi") : -1;
	while (s && next_row(r, s)) {
		row_seen(r, s, ST_GPU_LINKS, NULL);
		int a = pos_of(idx, tl->ngpu, sqlite3_column_int(s, 0));
		int b = pos_of(idx, tl->ngpu, sqlite3_column_int(s, 1));
		if (a < 0 || b < 0)
			continue;
		if (sqlite3_column_type(s, 2) != SQLITE_NULL)
			tl->nvlinks[a][b] = sqlite3_column_int(s, 2);
		if (sqlite3_column_type(s, 3) != SQLITE_NULL)
			tl->topo[a][b] = sqlite3_column_int(s, 3);
		if (xcol >= 0 && sqlite3_column_type(s, xcol) != SQLITE_NULL)
			tl->xgmi[a][b] = sqlite3_column_int(s, xcol);
	}
	sqlite3_finalize(s);
}

static void load_facts(timeline *tl, const store_meta *m)
{
	const char *v;
	if ((v = store_meta_get(m, "command")))
		snprintf(tl->command, sizeof tl->command, "%s", v);
	if ((v = store_meta_get(m, "driver")))
		snprintf(tl->driver, sizeof tl->driver, "%s", v);
	if ((v = store_meta_get(m, "cuda_driver_version")))
		snprintf(tl->cuda, sizeof tl->cuda, "%s", v);
	if ((v = store_meta_get(m, "hostname")))
		snprintf(tl->hostname, sizeof tl->hostname, "%s", v);
	if ((v = store_meta_get(m, "exit_status")))
		tl->exit_status = atoi(v);
	if ((v = store_meta_get(m, "root_pid")))
		tl->have_root = atoi(v) > 0;
	double start, end;
	if ((v = store_meta_get(m, "start")) && gw_parse_double(v, &start))
		tl->t0_wall = start;
	if ((v = store_meta_get(m, "end")) && gw_parse_double(v, &end) && tl->t0_wall > 0 &&
	    end - tl->t0_wall > tl->duration)
		tl->duration = end - tl->t0_wall;
}

int store_read_timeline(const char *path, timeline **out, gw_fail *err)
{
	reader r;
	*out = NULL;
	int rc = open_recording(path, &r, err);
	if (rc)
		return rc;
	int idx[GPU_MAX];
	char uuid[GPU_MAX][96], name[GPU_MAX][96], vendor[GPU_MAX][8];
	int ngpu = load_gpus(&r, idx, uuid, name, vendor);
	store_meta *m = meta_load(&r);
	timeline *tl = tl_new(ngpu, count_cpus(&r));
	for (int g = 0; g < ngpu; g++) {
		tl->gpu[g].index = idx[g];
		memcpy(tl->gpu[g].uuid, uuid[g], sizeof tl->gpu[g].uuid);
		memcpy(tl->gpu[g].name, name[g], sizeof tl->gpu[g].name);
		memcpy(tl->gpu[g].vendor, vendor[g], sizeof tl->gpu[g].vendor);
	}
	load_facts(tl, m);
	load_samples(&r, tl);
	load_gpu_samples(&r, tl, idx);
	load_procs(&r, tl, idx);
	load_steps_events(&r, tl, idx);
	load_facts(tl, m); /* duration from meta end once samples are in */
	store_meta_free(m);
	rc = read_verdict(&r, (1u << ST__COUNT) - 1, true, err);
	close_recording(&r);
	if (rc) {
		tl_free(tl);
		return rc;
	}
	*out = tl;
	return 0;
}
