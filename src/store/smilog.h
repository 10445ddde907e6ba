/*
 * smilog.h - logs a user already has, read into a timeline: the CSV of
 * `nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits] -l N`, the
 * table of `nvidia-smi dmon` (with or without -o DT), and the gpu table of
 * `gpuwhy export` as CSV.
 *
 * The format is told from the content, never from the file name. Fields are
 * matched to the metric table (gpu/metrics.def) by their nvidia-smi query
 * name or alias; fields it does not know are ignored and named in the info.
 * Values nvidia-smi could not read ([N/A], [Not Supported], [Unknown Error],
 * dmon's '-') are absent (NAN), never 0. Such a log holds GPU counters only:
 * no host, process or step series are made up.
 *
 * Nothing is printed: a failure fills the gw_fail (code GW_EXIT_USAGE when
 * the user must say more: the fields of a log without a header, the interval
 * of a log without times; GW_EXIT_ENV for an unreadable or malformed file).
 */
#ifndef GPUWHY_STORE_SMILOG_H
#define GPUWHY_STORE_SMILOG_H

#include <stdbool.h>
#include <stddef.h>

#include "model/timeline.h"
#include "util/fail.h"

typedef struct {
	const char *fields; /* the --query-gpu list of a log without header, or NULL */
	double interval;    /* seconds between samples of a log without times; 0 unknown */
} smilog_opts;

typedef enum {
	SMILOG_QUERY_CSV, /* nvidia-smi --query-gpu --format=csv */
	SMILOG_DMON,      /* nvidia-smi dmon */
	SMILOG_EXPORT_CSV /* gpuwhy export (gpu table, CSV) */
} smilog_format;

/* What the reader has to tell beside the timeline: the faces word it. */
typedef struct {
	smilog_format format;
	bool header;              /* the log had its own header (else --smi-fields) */
	bool timed;               /* the log had times (else --interval) */
	bool fields_given_unused; /* --smi-fields was given but the log has a header */
	bool no_gpu_id;           /* no index, pci.bus_id or uuid: every row taken as one GPU */
	long partial_line;        /* line number of an incomplete last line ignored, 0 none */
	long rows;                /* data rows read */
	char unknown[512];        /* fields ignored, comma-separated ("" none; "..." when cut) */
} smilog_info;

/* Whether the file starts like a SQLite database (a .gpuwhy recording). */
bool smilog_is_sqlite(const char *path);

/* Read the log at path. Returns 0 or a GW_EXIT_* code with err filled. */
int smilog_read(const char *path, const smilog_opts *o, timeline **out, smilog_info *info,
                gw_fail *err);

/* The same over a buffer; name is what errors call it. */
int smilog_parse(const char *buf, size_t len, const char *name, const smilog_opts *o,
                 timeline **out, smilog_info *info, gw_fail *err);

/* A short English name of the format ("nvidia-smi --query-gpu CSV"). */
const char *smilog_format_name(smilog_format f);

#endif
