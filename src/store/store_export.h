/*
 * store_export.h - a recording's tables, row by row, as typed cells: what
 * `gpuwhy export` writes as CSV or JSON Lines. Only store/ speaks SQL, so the
 * tables and their order live here.
 *
 * Tables: gpu (gpu_samples by t, gpu), host (host_samples by t), process
 * (process_samples by t, pid, with the user from processes), steps, events
 * (by t), meta (by key), gpus (by idx). Columns are the file's own, so a
 * recording from a build with more metrics exports them too.
 */
#ifndef GPUWHY_STORE_STORE_EXPORT_H
#define GPUWHY_STORE_STORE_EXPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "util/fail.h"

typedef enum {
	STORE_CELL_NULL, /* absent */
	STORE_CELL_INT,
	STORE_CELL_REAL,
	STORE_CELL_TEXT,
} store_cell_kind;

typedef struct {
	store_cell_kind kind;
	int64_t i;     /* STORE_CELL_INT */
	double r;      /* STORE_CELL_REAL */
	const char *s; /* STORE_CELL_TEXT, valid until the next row */
} store_cell;

typedef struct store_export store_export;

/* Whether table is one the export knows. */
bool store_export_known(const char *table);
/*
 * Open table of the recording at path (a known table). Returns 0, or a
 * GW_EXIT_* code with why in *err (when not NULL; unreadable file, not a
 * gpuwhy recording, a table the file lacks).
 */
int store_export_open(const char *path, const char *table, store_export **out, gw_fail *err);
int store_export_columns(const store_export *x);
const char *store_export_column(const store_export *x, int c);
/* The next row's store_export_columns() cells, or NULL at the end or on an error. */
const store_cell *store_export_next(store_export *x);
/* Close; returns 0, or GW_EXIT_ENV with why in *err (when not NULL) when reading failed. */
int store_export_close(store_export *x, gw_fail *err);

#endif
