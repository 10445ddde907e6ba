/* export.c - `gpuwhy export`: a recording's tables as CSV or JSON Lines for pandas & co. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "store/store_export.h"
#include "util/err.h"
#include "util/jsonw.h"

static void usage(FILE *out)
{
	fputs("usage: gpuwhy export FILE [--format csv|jsonl] [--table "
	      "gpu|host|process|steps|events|meta|gpus]\n"
	      "\n"
	      "Writes one table of a recording to stdout: CSV with a header row (empty cell =\n"
	      "absent), or JSON Lines (absent = null). Default: --format csv --table gpu.\n"
	      "Times are seconds since the epoch.\n",
	      out);
}

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
	static const struct option opts[] = {{"format", required_argument, NULL, 'f'},
	                                     {"table", required_argument, NULL, 't'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	const char *format = "csv", *table = "gpu";
	int ch;
	while ((ch = getopt_long(argc, argv, "f:t:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'f':
			format = optarg;
			break;
		case 't':
			table = optarg;
			break;
		case 'h':
			usage(stdout);
			return GW_EXIT_OK;
		default:
			usage(stderr);
			return GW_EXIT_USAGE;
		}
	}
	if (strcmp(format, "csv") && strcmp(format, "jsonl"))
		return gw_error(GW_EXIT_USAGE, "--format", "use csv or jsonl",
		                "unknown format '%s'", format);
	if (!store_export_known(table))
		return gw_error(GW_EXIT_USAGE, "--table",
		                "gpu, host, process, steps, events, meta or gpus",
		                "unknown table '%s'", table);
	if (optind + 1 != argc) {
		usage(stderr);
		return gw_error(GW_EXIT_USAGE, "export", "gpuwhy export run.gpuwhy",
		                "give exactly one recording");
	}
	store_export *x;
	int rc = store_export_open(argv[optind], table, &x);
	if (rc)
		return rc;
	int ncol = store_export_columns(x);
	bool csv = !strcmp(format, "csv");
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
	return store_export_close(x);
}
