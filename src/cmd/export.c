/* export.c - `gpuwhy export`: a recording's tables as CSV or JSON Lines for pandas & co. */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "store/store_export.h"
#include "util/err.h"
#include "util/fail.h"
#include "util/i18n.h"
#include "util/jsonw.h"
#include "util/opt.h"

/* JSON Lines is what --format json gives too: one object per row. */
static const char *const formats[] = {"csv", "jsonl", "json", NULL};

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

static void row_csv(const store_cell *cells, int ncol)
{
	for (int c = 0; c < ncol; c++) {
		if (c)
			putchar(',');
		switch (cells[c].kind) {
		case STORE_CELL_NULL:
			break;
		case STORE_CELL_INT:
			printf("%lld", (long long)cells[c].i);
			break;
		case STORE_CELL_REAL:
			printf("%.15g", cells[c].r);
			break;
		case STORE_CELL_TEXT:
			csv_cell(cells[c].s);
			break;
		}
	}
	putchar('\n');
}

static void row_json(const store_export *x, const store_cell *cells, int ncol)
{
	jsonw w;
	jsonw_init(&w, stdout, false);
	jsonw_obj_begin(&w);
	for (int c = 0; c < ncol; c++) {
		jsonw_key(&w, store_export_column(x, c));
		switch (cells[c].kind) {
		case STORE_CELL_NULL:
			jsonw_null(&w);
			break;
		case STORE_CELL_INT:
			jsonw_int(&w, cells[c].i);
			break;
		case STORE_CELL_REAL:
			jsonw_num(&w, cells[c].r);
			break;
		case STORE_CELL_TEXT:
			jsonw_str(&w, cells[c].s);
			break;
		}
	}
	jsonw_obj_end(&w);
	putchar('\n');
}

int cmd_export(int argc, char **argv, const gw_global *g)
{
	(void)g;
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
	        N_("Writes one table of a recording to stdout. Times are seconds since the epoch."),
	    .opts = opts,
	    .max_args = -1};
	int first, orc = opt_parse(&oc, argc, argv, &first);
	if (orc)
		return orc == OPT_HELP ? GW_EXIT_OK : orc;
	if (!store_export_known(table))
		return gw_error(GW_EXIT_USAGE, "--table",
		                N_("gpu, host, process, steps, events, meta or gpus"),
		                "unknown table '%s'", table);
	if (first + 1 != argc)
		return gw_error(GW_EXIT_USAGE, "export", N_("gpuwhy export run.gpuwhy"),
		                "give exactly one recording");
	store_export *x;
	gw_fail err;
	if (store_export_open(argv[first], table, &x, &err) != 0)
		return gw_fail_print(&err);
	int ncol = store_export_columns(x);
	bool csv = format == 0;
	if (csv) {
		for (int c = 0; c < ncol; c++)
			printf("%s%s", c ? "," : "", store_export_column(x, c));
		putchar('\n');
	}
	const store_cell *cells;
	while ((cells = store_export_next(x))) {
		if (csv)
			row_csv(cells, ncol);
		else
			row_json(x, cells, ncol);
	}
	return store_export_close(x, &err) != 0 ? gw_fail_print(&err) : 0;
}
