/*
 * store_export.c - a recording's tables as typed rows, for `gpuwhy export`.
 *
 * The file is checked as the reader checks it (store_read_meta), and the
 * rows exported are summed as they go: in a recording with digests, rows that
 * do not match theirs end the export with an error, as a damaged page does.
 */
#include "store/store_export.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/sql.h"
#include "store/store.h"
#include "store/store_int.h"
#include "util/err.h"
#include "util/fail.h"

static const struct {
	const char *name, *sql;
	store_table table;
	int extra; /* result columns after the table's own (not in its digest) */
} tables[] = {
    {"gpu", "SELECT * FROM gpu_samples ORDER BY t, gpu", ST_GPU_SAMPLES, 0},
    {"host", "SELECT * FROM host_samples ORDER BY t", ST_HOST_SAMPLES, 0},
    /* The users from a scan of the processes table (whose digest is checked first),
     * not through its primary key's index, which no digest covers. */
    {"process",
     "WITH p AS MATERIALIZED (SELECT pid, cmd, user FROM processes NOT INDEXED)"
     " SELECT ps.*, p.user FROM process_samples ps LEFT JOIN p"
     " ON p.pid = ps.pid AND p.cmd = ps.cmd ORDER BY ps.t, ps.pid",
     ST_PROCESS_SAMPLES, 1},
    {"steps", "SELECT * FROM steps ORDER BY t", ST_STEPS, 0},
    {"events", "SELECT * FROM events ORDER BY t", ST_EVENTS, 0},
    {"meta", "SELECT * FROM meta ORDER BY key", ST_META, 0},
    {"gpus", "SELECT * FROM gpus ORDER BY idx", ST_GPUS, 0},
};

struct store_export {
	sqlite3 *db;
	sqlite3_stmt *s;
	const char *path;
	int ncol;
	int step; /* the last sqlite3_step result */
	store_cell *cells;
	store_table table;
	int own; /* the table's own columns: the first own of ncol */
	bool verify;
	store_digests want, got;
};

static int table_index(const char *table)
{
	for (size_t i = 0; i < sizeof tables / sizeof *tables; i++)
		if (!strcmp(tables[i].name, table))
			return (int)i;
	return -1;
}

bool store_export_known(const char *table)
{
	return table_index(table) >= 0;
}

/* The digest row of table t into x->want; SQLITE_CORRUPT when it is missing or malformed. */
static int load_digest(store_export *x, store_table t)
{
	sqlite3_stmt *q;
	char key[64];
	snprintf(key, sizeof key, STORE_DIGEST_PREFIX "%s", store_table_names[t]);
	int rc = sqlite3_prepare_v2(x->db, "SELECT value FROM meta WHERE key = ?", -1, &q, NULL);
	if (rc != SQLITE_OK)
		return rc;
	sqlite3_bind_text(q, 1, key, -1, SQLITE_STATIC);
	if ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		const char *v = (const char *)sqlite3_column_text(q, 0);
		rc = store_digest_parse(key, v, &x->want) ? sqlite3_step(q) : SQLITE_CORRUPT;
	}
	sqlite3_finalize(q);
	return rc == SQLITE_DONE && (x->want.have & (1u << t)) ? SQLITE_OK
	       : rc == SQLITE_DONE || rc == SQLITE_ROW         ? SQLITE_CORRUPT
	                                                       : rc;
}

/* The processes table whole against its digest (the process table's users come from it). */
static int check_processes(store_export *x)
{
	sqlite3_stmt *q;
	int rc = load_digest(x, ST_PROCESSES);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(x->db, "SELECT * FROM processes", -1, &q, NULL);
	if (rc != SQLITE_OK)
		return rc;
	store_digest *d = &x->got.table[ST_PROCESSES], *w = &x->want.table[ST_PROCESSES];
	while ((rc = sqlite3_step(q)) == SQLITE_ROW)
		store_digest_row(d, q, 0, sqlite3_column_count(q));
	sqlite3_finalize(q);
	if (rc != SQLITE_DONE)
		return rc;
	return d->rows == w->rows && d->sum == w->sum ? SQLITE_OK : SQLITE_CORRUPT;
}

/* In the export's read transaction: what the rows must match, when the file has digests. */
static int load_digests(store_export *x)
{
	x->verify = sql_int(x->db, "PRAGMA application_id", 0) == (long long)SQL_APP_RECORDING;
	if (!x->verify)
		return SQLITE_OK;
	int rc = load_digest(x, x->table);
	if (rc == SQLITE_OK && x->table == ST_PROCESS_SAMPLES)
		rc = check_processes(x);
	return rc;
}

static int fail(store_export *x, int rc)
{
	sqlite3_finalize(x->s);
	sqlite3_close(x->db);
	free(x->cells);
	free(x);
	return rc;
}

int store_export_open(const char *path, const char *table, store_export **out, gw_fail *err)
{
	*out = NULL;
	int ti = table_index(table);
	if (ti < 0)
		return gw_fail_set(err, GW_EXIT_USAGE, table, NULL, "unknown table");
	store_meta *m;
	int rc = store_read_meta(path, &m, err); /* validates the file and recovers its WAL */
	if (rc)
		return rc;
	store_meta_free(m);
	store_export *x = calloc(1, sizeof *x);
	if (!x)
		return gw_fail_set(err, GW_EXIT_ENV, path, NULL, "out of memory");
	x->path = path;
	x->table = tables[ti].table;
	if ((rc = sqlite3_open_v2(path, &x->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
	                          NULL)) != SQLITE_OK)
		return fail(x, store_sql_fail(err, path, rc));
	/* One read transaction: the digest and the rows of the same commit. */
	sqlite3_busy_timeout(x->db, 5000);
	if ((rc = sqlite3_exec(x->db, "BEGIN", NULL, NULL, NULL)) != SQLITE_OK ||
	    (rc = load_digests(x)) != SQLITE_OK ||
	    (rc = sqlite3_prepare_v2(x->db, tables[ti].sql, -1, &x->s, NULL)) != SQLITE_OK)
		return fail(x, store_sql_fail(err, path, rc));
	x->ncol = sqlite3_column_count(x->s);
	x->own = x->ncol - tables[ti].extra;
	x->cells = calloc(x->ncol ? (size_t)x->ncol : 1, sizeof *x->cells);
	if (!x->cells)
		return fail(x, gw_fail_set(err, GW_EXIT_ENV, path, NULL, "out of memory"));
	x->step = SQLITE_OK;
	*out = x;
	return 0;
}

int store_export_columns(const store_export *x)
{
	return x->ncol;
}

const char *store_export_column(const store_export *x, int c)
{
	return sqlite3_column_name(x->s, c);
}

const store_cell *store_export_next(store_export *x)
{
	if (x->step != SQLITE_OK && x->step != SQLITE_ROW)
		return NULL;
	x->step = sqlite3_step(x->s);
	if (x->step != SQLITE_ROW)
		return NULL;
	/* Summed before the cells are read: reading a value as another type converts it. */
	bool digest_row = x->table != ST_META || sqlite3_column_type(x->s, 0) != SQLITE_TEXT ||
	                  !store_digest_key((const char *)sqlite3_column_text(x->s, 0));
	if (digest_row)
		store_digest_row(&x->got.table[x->table], x->s, 0, x->own);
	for (int c = 0; c < x->ncol; c++) {
		store_cell *cell = &x->cells[c];
		switch (sqlite3_column_type(x->s, c)) {
		case SQLITE_NULL:
			cell->kind = STORE_CELL_NULL;
			break;
		case SQLITE_INTEGER:
			cell->kind = STORE_CELL_INT;
			cell->i = sqlite3_column_int64(x->s, c);
			break;
		case SQLITE_FLOAT:
			cell->kind = STORE_CELL_REAL;
			cell->r = sqlite3_column_double(x->s, c);
			break;
		default:
			cell->kind = STORE_CELL_TEXT;
			cell->s = (const char *)sqlite3_column_text(x->s, c);
			if (!cell->s) { /* out of memory converting it: an error, not an absent cell
				         */
				x->step = SQLITE_NOMEM;
				return NULL;
			}
			break;
		}
	}
	return x->cells;
}

int store_export_close(store_export *x, gw_fail *err)
{
	if (!x)
		return 0;
	int rc = 0;
	const store_digest *a = &x->want.table[x->table], *b = &x->got.table[x->table];
	if (x->step == SQLITE_NOMEM)
		rc = gw_fail_set(err, GW_EXIT_ENV, x->path, NULL, "read error: %s",
		                 sqlite3_errstr(x->step));
	else if (x->step != SQLITE_DONE && x->step != SQLITE_ROW && x->step != SQLITE_OK)
		rc = store_sql_fail(err, x->path, x->step);
	else if (x->step == SQLITE_DONE && x->verify && (a->rows != b->rows || a->sum != b->sum))
		rc = gw_fail_set(err, GW_EXIT_ENV, x->path, NULL,
		                 "truncated or corrupt: %s does not match its digest",
		                 store_table_names[x->table]);
	return fail(x, rc);
}
