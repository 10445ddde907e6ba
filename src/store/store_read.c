/* store_read.c - a .gpuwhy recording back into a timeline. */
#include <math.h>
#include <stdbool.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/store.h"
#include "util/err.h"
#include "util/fail.h"
#include "util/i18n.h"
#include "util/parse.h"
#include "util/i18n.h"

/* Whether the -wal file that a WAL-mode database implies is next to it. */
static bool wal_beside(const char *path)
{
	char wal[4200];
	snprintf(wal, sizeof wal, "%s-wal", path);
	return access(wal, F_OK) == 0;
}

/*
 * Read-write first: after a SIGKILL the WAL must be recovered, which needs
 * write access; read-only still works for an intact file on a read-only disk.
 */
static int open_recording(const char *path, sqlite3 **db, gw_fail *err)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return gw_fail_set(err, GW_EXIT_ENV, path, N_("check the path"),
		                   "cannot open recording");
	unsigned char head[20] = {0};
	size_t n = fread(head, 1, sizeof head, f);
	fclose(f);
	/* Bytes 18 and 19 are 2 in a database in WAL mode. */
	bool wal_mode = n == sizeof head && head[18] == 2 && head[19] == 2;
	/* Checked before opening: opening creates an empty -wal. */
	bool wal_missing = wal_mode && !wal_beside(path);
	if (n < 16 || memcmp(head, "SQLite format 3", 15) != 0)
		return gw_fail_set(err, GW_EXIT_ENV, path,
		                   N_("record one with gpuwhy record or gpuwhy run"),
		                   "not a gpuwhy recording");
	if (sqlite3_open_v2(path, db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		sqlite3_close(*db);
		if (sqlite3_open_v2(path, db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
			int rc = gw_fail_set(err, GW_EXIT_ENV, path, NULL,
			                     "cannot open recording: %s", sqlite3_errmsg(*db));
			sqlite3_close(*db);
			return rc;
		}
	}
	sqlite3_busy_timeout(*db, 5000);
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(*db, "SELECT value FROM meta WHERE key='schema_version'", -1, &s,
	                       NULL) != SQLITE_OK) {
		sqlite3_close(*db);
		if (wal_missing)
			return gw_fail_set(
			    err, GW_EXIT_ENV, path,
			    N_("copy its -wal file along with it, or copy it again once the "
			       "recorder has stopped"),
			    "incomplete recording: its data is in %s-wal, which was left "
			    "behind",
			    path);
		return gw_fail_set(err, GW_EXIT_ENV, path,
		                   N_("record one with gpuwhy record or gpuwhy run"),
		                   "not a gpuwhy recording (no meta table)");
	}
	int ver = -1;
	if (sqlite3_step(s) == SQLITE_ROW)
		ver = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	if (ver < 1) {
		sqlite3_close(*db);
		return gw_fail_set(err, GW_EXIT_ENV, path, NULL,
		                   "not a gpuwhy recording (no schema version)");
	}
	if (ver > STORE_SCHEMA_VERSION) {
		sqlite3_close(*db);
		return gw_fail_set(err, GW_EXIT_ENV, path, N_("upgrade gpuwhy"),
		                   "recording schema %d is newer than this gpuwhy (%d)", ver,
		                   STORE_SCHEMA_VERSION);
	}
	return 0;
}

static int meta_load(sqlite3 *db, store_meta **out)
{
	store_meta *m = calloc(1, sizeof *m);
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(db, "SELECT key, value FROM meta ORDER BY key", -1, &s, NULL) !=
	    SQLITE_OK) {
		free(m);
		return -1;
	}
	int cap = 0;
	while (sqlite3_step(s) == SQLITE_ROW) {
		if (m->n == cap) {
			cap = cap ? cap * 2 : 16;
			m->keys = realloc(m->keys, (size_t)cap * sizeof *m->keys);
			m->values = realloc(m->values, (size_t)cap * sizeof *m->values);
		}
		const char *k = (const char *)sqlite3_column_text(s, 0);
		const char *v = (const char *)sqlite3_column_text(s, 1);
		m->keys[m->n] = strdup(k ? k : "");
		m->values[m->n] = strdup(v ? v : "");
		m->n++;
	}
	sqlite3_finalize(s);
	*out = m;
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
	sqlite3 *db;
	int rc = open_recording(path, &db, err);
	if (rc)
		return rc;
	rc = meta_load(db, out) ? gw_fail_set(err, GW_EXIT_ENV, path, NULL, "cannot read meta") : 0;
	sqlite3_close(db);
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

static int count_cpus(sqlite3 *db)
{
	sqlite3_stmt *s;
	int ncpu = 0;
	if (sqlite3_prepare_v2(db, "SELECT max(json_array_length(core_busy)) FROM host_samples", -1,
	                       &s, NULL) == SQLITE_OK) {
		if (sqlite3_step(s) == SQLITE_ROW)
			ncpu = sqlite3_column_int(s, 0);
		sqlite3_finalize(s);
	}
	return ncpu;
}

static int load_gpus(sqlite3 *db, int *idx, char (*uuid)[96], char (*name)[96])
{
	sqlite3_stmt *s;
	int n = 0;
	if (sqlite3_prepare_v2(db, "SELECT idx, uuid, name FROM gpus ORDER BY idx", -1, &s, NULL) !=
	    SQLITE_OK)
		return -1;
	while (sqlite3_step(s) == SQLITE_ROW && n < GPU_MAX) {
		idx[n] = sqlite3_column_int(s, 0);
		const char *u = (const char *)sqlite3_column_text(s, 1);
		const char *nm = (const char *)sqlite3_column_text(s, 2);
		snprintf(uuid[n], 96, "%s", u ? u : "");
		snprintf(name[n], 96, "%s", nm ? nm : "");
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

static void load_samples(sqlite3 *db, timeline *tl)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(db, "SELECT * FROM host_samples ORDER BY t", -1, &s, NULL) !=
	    SQLITE_OK)
		return;
	/* Columns by name: older files lack newer summary columns. */
	int ncol = sqlite3_column_count(s);
	int *cols = calloc((size_t)ncol, sizeof *cols);
	double *tmp = calloc(tl->ncpu ? (size_t)tl->ncpu : 1, sizeof *tmp);
	double *tmp2 = calloc(tl->ncpu ? (size_t)tl->ncpu : 1, sizeof *tmp2);
	if (!cols || !tmp || !tmp2)
		goto out;
	for (int c = 0; c < ncol; c++)
		cols[c] = host_col(sqlite3_column_name(s, c));
	bool first = true;
	while (sqlite3_step(s) == SQLITE_ROW) {
		double t = sqlite3_column_double(s, 0);
		if (first) {
			if (tl->t0_wall == 0 || t < tl->t0_wall)
				tl->t0_wall = t;
			first = false;
		}
		int k = tl_add_sample(tl, t - tl->t0_wall);
		load_host_row(s, cols, ncol, tl, k, tmp, tmp2);
	}
out:
	free(cols);
	free(tmp);
	free(tmp2);
	sqlite3_finalize(s);
}

static void load_gpu_samples(sqlite3 *db, timeline *tl, const int *idx)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(db, "SELECT * FROM gpu_samples ORDER BY t", -1, &s, NULL) !=
	    SQLITE_OK)
		return;
	/* Map result columns to metric ids by name: older files may lack newer columns. */
	int ncol = sqlite3_column_count(s);
	int *col_metric = calloc((size_t)ncol, sizeof *col_metric);
	char name[128];
	for (int c = 0; c < ncol; c++) {
		col_metric[c] = -1;
		for (int m = 0; m < GM__COUNT; m++) {
			gpu_metric_column((gpu_metric_id)m, name, sizeof name);
			if (!strcmp(name, sqlite3_column_name(s, c)))
				col_metric[c] = m;
		}
	}
	while (sqlite3_step(s) == SQLITE_ROW) {
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

static void load_procs(sqlite3 *db, timeline *tl, const int *idx)
{
	sqlite3_stmt *s;
	/* Recordings before the state column read as state unknown. */
	bool with_state =
	    sqlite3_prepare_v2(db,
	                       "SELECT ps.t, ps.pid, ps.ppid, ps.gpu, ps.in_tree, ps.alive,"
	                       " ps.gpu_mem_mib, ps.sm_pct, ps.cpu_pct, ps.rss_mib, ps.cmd, p.user,"
	                       " ps.state FROM process_samples ps LEFT JOIN processes p"
	                       " ON p.pid = ps.pid AND p.cmd = ps.cmd ORDER BY ps.t",
	                       -1, &s, NULL) == SQLITE_OK;
	if (!with_state &&
	    sqlite3_prepare_v2(db,
	                       "SELECT ps.t, ps.pid, ps.ppid, ps.gpu, ps.in_tree, ps.alive,"
	                       " ps.gpu_mem_mib, ps.sm_pct, ps.cpu_pct, ps.rss_mib, ps.cmd, p.user"
	                       " FROM process_samples ps LEFT JOIN processes p"
	                       " ON p.pid = ps.pid AND p.cmd = ps.cmd ORDER BY ps.t",
	                       -1, &s, NULL) != SQLITE_OK)
		return;
	while (sqlite3_step(s) == SQLITE_ROW) {
		tl_proc *p = tl_add_proc(tl);
		p->s = sample_index(tl, sqlite3_column_double(s, 0));
		p->pid = (unsigned)sqlite3_column_int64(s, 1);
		p->ppid = (unsigned)sqlite3_column_int64(s, 2);
		p->gpu = sqlite3_column_type(s, 3) == SQLITE_NULL
		             ? -1
		             : pos_of(idx, tl->ngpu, sqlite3_column_int(s, 3));
		p->in_tree = sqlite3_column_int(s, 4);
		p->alive = sqlite3_column_int(s, 5);
		p->gpu_mem_mib = col_num(s, 6);
		p->sm_pct = col_num(s, 7);
		p->cpu_pct = col_num(s, 8);
		p->rss_mib = col_num(s, 9);
		const char *cmd = (const char *)sqlite3_column_text(s, 10);
		const char *user = (const char *)sqlite3_column_text(s, 11);
		snprintf(p->cmd, sizeof p->cmd, "%s", cmd ? cmd : "");
		snprintf(p->user, sizeof p->user, "%s", user ? user : "");
		const char *state = with_state ? (const char *)sqlite3_column_text(s, 12) : NULL;
		p->state = state && state[0] ? state[0] : 0;
	}
	sqlite3_finalize(s);
}

static void load_steps_events(sqlite3 *db, timeline *tl, const int *idx)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(db, "SELECT t, step FROM steps ORDER BY t", -1, &s, NULL) ==
	    SQLITE_OK) {
		while (sqlite3_step(s) == SQLITE_ROW)
			tl_add_step(tl, sqlite3_column_double(s, 0) - tl->t0_wall,
			            (long)sqlite3_column_int64(s, 1));
		sqlite3_finalize(s);
	}
	if (sqlite3_prepare_v2(db, "SELECT t, kind, gpu, value, text FROM events ORDER BY t", -1,
	                       &s, NULL) == SQLITE_OK) {
		while (sqlite3_step(s) == SQLITE_ROW) {
			const char *kind = (const char *)sqlite3_column_text(s, 1);
			int g = sqlite3_column_type(s, 2) == SQLITE_NULL
			            ? -1
			            : pos_of(idx, tl->ngpu, sqlite3_column_int(s, 2));
			tl_add_event(tl, sqlite3_column_double(s, 0) - tl->t0_wall,
			             kind ? kind : "", g, (long)sqlite3_column_int64(s, 3),
			             (const char *)sqlite3_column_text(s, 4));
		}
		sqlite3_finalize(s);
	}
	if (sqlite3_prepare_v2(db, "SELECT a, b, nvlinks, topo FROM gpu_links", -1, &s, NULL) ==
	    SQLITE_OK) {
		while (sqlite3_step(s) == SQLITE_ROW) {
			int a = pos_of(idx, tl->ngpu, sqlite3_column_int(s, 0));
			int b = pos_of(idx, tl->ngpu, sqlite3_column_int(s, 1));
			if (a < 0 || b < 0)
				continue;
			if (sqlite3_column_type(s, 2) != SQLITE_NULL)
				tl->nvlinks[a][b] = sqlite3_column_int(s, 2);
			if (sqlite3_column_type(s, 3) != SQLITE_NULL)
				tl->topo[a][b] = sqlite3_column_int(s, 3);
		}
		sqlite3_finalize(s);
	}
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
	sqlite3 *db;
	int rc = open_recording(path, &db, err);
	if (rc)
		return rc;
	int idx[GPU_MAX];
	char uuid[GPU_MAX][96], name[GPU_MAX][96];
	int ngpu = load_gpus(db, idx, uuid, name);
	store_meta *m = NULL;
	if (ngpu < 0 || meta_load(db, &m)) {
		sqlite3_close(db);
		return gw_fail_set(err, GW_EXIT_ENV, path, NULL,
		                   "recording is damaged (cannot read gpus/meta)");
	}
	timeline *tl = tl_new(ngpu, count_cpus(db));
	for (int g = 0; g < ngpu; g++) {
		tl->gpu[g].index = idx[g];
		snprintf(tl->gpu[g].uuid, sizeof tl->gpu[g].uuid, "%s", uuid[g]);
		snprintf(tl->gpu[g].name, sizeof tl->gpu[g].name, "%s", name[g]);
	}
	load_facts(tl, m);
	load_samples(db, tl);
	load_gpu_samples(db, tl, idx);
	load_procs(db, tl, idx);
	load_steps_events(db, tl, idx);
	load_facts(tl, m); /* duration from meta end once samples are in */
	store_meta_free(m);
	sqlite3_close(db);
	*out = tl;
	return 0;
}
