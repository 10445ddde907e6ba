/* smilog_int.h - what the log readers share (smilog.c, smilog_csv.c, smilog_dmon.c). */
#ifndef GPUWHY_STORE_SMILOG_INT_H
#define GPUWHY_STORE_SMILOG_INT_H

#include "store/smilog.h"

/* What a column of the log holds. */
typedef enum {
	SLC_SKIP,   /* known but not a series (name of a static text), or unknown */
	SLC_METRIC, /* a metric of the table */
	SLC_STAMP,  /* nvidia-smi's timestamp: 2026/12/07 01:02:03.456 */
	SLC_EPOCH,  /* seconds since the epoch (gpuwhy export) */
	SLC_DATE,   /* dmon -o D: YYYYMMDD */
	SLC_TOD,    /* dmon -o T: HH:MM:SS */
	SLC_INDEX,
	SLC_UUID,
	SLC_BUS,
	SLC_NAME,
	SLC_DRIVER,
	SLC_LOST /* gpuwhy export's lost flag */
} sl_role;

typedef struct {
	sl_role role;
	int metric; /* gpu_metric_id for SLC_METRIC */
} sl_col;

#define SL_MAX_FIELDS 512

/* Rows gathered before the timeline is built (the GPUs are known only at the end). */
typedef struct {
	const char *name; /* the file, for errors */
	const smilog_opts *o;
	smilog_info *info;
	gw_fail *err;
	int ncols;
	sl_col cols[SL_MAX_FIELDS];
	bool has_time; /* some column gives the time */
	int ngpu;
	char gkey[GPU_MAX][160];
	int gindex[GPU_MAX];
	char guuid[GPU_MAX][96], gname[GPU_MAX][96];
	bool glost[GPU_MAX];
	char driver[96];
	long nrows, cap;
	int *rgpu;
	double *rt;     /* seconds since the epoch, NAN without times */
	double *rv;     /* nrows x ncols values, NAN absent */
	double tod_day; /* dmon -o T alone: days added when the time of day wrapped */
	double tod_last;
} sl_build;

/* A line of the buffer: text and length without the newline; had_nl false for a last line
 * cut short. */
typedef struct {
	const char *buf;
	size_t len, pos;
	long no; /* line number of the line last returned, from 1 */
} sl_lines;
bool sl_next_line(sl_lines *it, const char **line, size_t *n, bool *had_nl);

/* Whether the n bytes at line (not NUL-terminated) are only blanks. */
bool sl_blank(const char *line, size_t n);
/* Note a field that is ignored. */
void sl_note_unknown(sl_build *b, const char *field);
/* Take one row of fields (already split and trimmed). Returns 0 or the code set in b->err. */
int sl_add_fields(sl_build *b, char **f, int n, long line);
/* A value as the metric table holds it, NAN when absent or unreadable. */
double sl_value(const char *s, int metric);
/* Trim spaces in place; returns the start. */
char *sl_trim(char *s);
/* Split s in place at sep (or at runs of blanks when sep is ' '), trimming each; returns the
 * count, at most max (-1 when there are more). */
int sl_split(char *s, char sep, char **f, int max);

int sl_read_query_csv(sl_build *b, sl_lines *it);
int sl_read_export_csv(sl_build *b, sl_lines *it);
int sl_read_dmon(sl_build *b, sl_lines *it);
/* The column count differs from the header's: an incomplete last line is noted and skipped,
 * anything else is an error. Returns 0 to go on or the error code. */
int sl_bad_count(sl_build *b, bool had_nl, const sl_lines *it, int n);

#endif
