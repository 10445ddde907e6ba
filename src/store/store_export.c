/* store_export.c - a recording's tables as typed rows, for `gpuwhy export`. */
#include "store/store_export.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "util/err.h"
#include "util/fail.h"

static const struct {
	const char *name, *sql;
} tables[] = {
    {"gpu", "SELECT * FROM gpu_samples ORDER BY t, gpu"},
    {"host", "SELECT * FROM host_samples ORDER BY t"},
    {"process", "SELECT ps.*, p.user FROM process_samples ps LEFT JOIN processes p"
                " ON p.pid = ps.pid AND p.cmd = ps.cmd ORDER BY ps.t, ps.pid"},
    {"steps", "SELECT * FROM steps ORDER BY t"},
    {"events", "SELECT * FROM events ORDER BY t"},
    {"meta", "SELECT * FROM meta ORDER BY key"},
    {"gpus", "SELECT * FROM gpus ORDER BY idx"},
};

struct store_export {
	sqlite3 *db;
	sqlite3_stmt *s;
	const char *path;
	int ncol;
	int step; /* the last sqlite3_step result */
	store_cell *cells;
};

static const char *table_sql(const char *table)
{
	for (size_t i = 0; i < sizeof tables / sizeof *tables; i++)
		if (!strcmp(tables[i].name, table))
			return tables[i].sql;
	return NULL;
}

bool store_export_known(const char *table)
{
	return table_sql(table) != NULL;
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
	const char *sql = table_sql(table);
	if (!sql)
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
	if (sqlite3_open_v2(path, &x->db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		return fail(x, gw_fail_set(err, GW_EXIT_ENV, path, NULL, "cannot open: %s",
		                           sqlite3_errmsg(x->db)));
	if (sqlite3_prepare_v2(x->db, sql, -1, &x->s, NULL) != SQLITE_OK)
		return fail(x, gw_fail_set(err, GW_EXIT_ENV, path, NULL, "cannot read table %s: %s",
		                           table, sqlite3_errmsg(x->db)));
	x->ncol = sqlite3_column_count(x->s);
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
	if (x->step != SQLITE_DONE && x->step != SQLITE_ROW && x->step != SQLITE_OK)
		rc = gw_fail_set(err, GW_EXIT_ENV, x->path, NULL, "read error: %s",
		                 x->step == SQLITE_NOMEM ? sqlite3_errstr(x->step)
		                                         : sqlite3_errmsg(x->db));
	return fail(x, rc);
}
