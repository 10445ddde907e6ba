/* export.c - `gpuwhy export`: a recording's tables as CSV or JSON Lines for pandas & co. */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "util/opt.h"
#include "store/store.h"
#include "util/err.h"
#include "util/jsonw.h"

/* JSON Lines is what --format json gives too: one object per row. */
static const char *const formats[] = {"csv", "jsonl", "json", NULL};

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

static void csv_cell(const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, stdout);
		return;
	}
	putchar('"');
	for (; *s; s++) {
		if (*s == '"')
			putchar('"');
		putchar(*s);
	}
	putchar('"');
}

static void row_csv(sqlite3_stmt *s, int ncol)
{
	for (int c = 0; c < ncol; c++) {
		if (c)
			putchar(',');
		switch (sqlite3_column_type(s, c)) {
		case SQLITE_NULL:
			break;
		case SQLITE_INTEGER:
			printf("%lld", (long long)sqlite3_column_int64(s, c));
			break;
		case SQLITE_FLOAT:
			printf("%.15g", sqlite3_column_double(s, c));
			break;
		default:
			csv_cell((const char *)sqlite3_column_text(s, c));
			break;
		}
	}
	putchar('\n');
}

static void row_json(sqlite3_stmt *s, int ncol)
{
	jsonw w;
	jsonw_init(&w, stdout, false);
	jsonw_obj_begin(&w);
	for (int c = 0; c < ncol; c++) {
		jsonw_key(&w, sqlite3_column_name(s, c));
		switch (sqlite3_column_type(s, c)) {
		case SQLITE_NULL:
			jsonw_null(&w);
			break;
		case SQLITE_INTEGER:
			jsonw_int(&w, sqlite3_column_int64(s, c));
			break;
		case SQLITE_FLOAT:
			jsonw_num(&w, sqlite3_column_double(s, c));
			break;
		default:
			jsonw_str(&w, (const char *)sqlite3_column_text(s, c));
			break;
		}
	}
	jsonw_obj_end(&w);
	putchar('\n');
}

int cmd_export(int argc, char **argv, const gw_global *g)
{
	const char *table = "gpu";
	int format = 0;
	const opt_def opts[] = {
	    OPT_ENUM('f', "format", "FMT", &format, formats,
	             "csv (default; a header row, empty cell = absent) or jsonl (= json; absent = "
	             "null)"),
	    OPT_STRING('t', "table", "T", &table,
	               "gpu (default), host, process, steps, events, meta or gpus"),
	    OPT_END};
	const opt_cmd oc = {
	    .name = "export",
	    .usage = "export FILE [--format csv|jsonl] [--table gpu|host|process|steps|events|meta|"
	             "gpus]",
	    .about =
	        "Writes one table of a recording to stdout. Times are seconds since the epoch.",
	    .opts = opts,
	    .max_args = -1};
	int first, orc = opt_parse(&oc, argc, argv, &first);
	if (orc)
		return orc == OPT_HELP ? GW_EXIT_OK : orc;
	const char *sql = NULL;
	for (size_t i = 0; i < sizeof tables / sizeof *tables; i++)
		if (!strcmp(tables[i].name, table))
			sql = tables[i].sql;
	if (!sql)
		return gw_error(GW_EXIT_USAGE, "--table",
		                "gpu, host, process, steps, events, meta or gpus",
		                "unknown table '%s'", table);
	if (first + 1 != argc)
		return gw_error(GW_EXIT_USAGE, "export", "gpuwhy export run.gpuwhy",
		                "give exactly one recording");
	const char *path = argv[first];
	store_meta *m;
	int rc = store_read_meta(path, &m); /* validates the file and recovers its WAL */
	if (rc)
		return rc;
	store_meta_free(m);
	sqlite3 *db;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		rc = gw_error(GW_EXIT_ENV, path, NULL, "cannot open: %s", sqlite3_errmsg(db));
		sqlite3_close(db);
		return rc;
	}
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
		rc = gw_error(GW_EXIT_ENV, path, NULL, "cannot read table %s: %s", table,
		              sqlite3_errmsg(db));
		sqlite3_close(db);
		return rc;
	}
	int ncol = sqlite3_column_count(s);
	bool csv = format == 0;
	if (csv) {
		for (int c = 0; c < ncol; c++)
			printf("%s%s", c ? "," : "", sqlite3_column_name(s, c));
		putchar('\n');
	}
	int step;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		if (csv)
			row_csv(s, ncol);
		else
			row_json(s, ncol);
	}
	if (step != SQLITE_DONE)
		rc = gw_error(GW_EXIT_ENV, path, NULL, "read error: %s", sqlite3_errmsg(db));
	sqlite3_finalize(s);
	sqlite3_close(db);
	return rc;
}
