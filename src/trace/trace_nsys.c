/* trace_nsys.c - Nsight Systems SQLite export reader (export schemas 2.x and 3.x). */
#include "trace/trace_nsys.h"
#include "util/i18n.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "util/err.h"
#include "util/termsafe.h"

typedef struct {
	sqlite3 *db;
	trace_rank *r;
	const char *path;
	gw_fail *err;
} nsys_t;

/* The reasons are English (trace_read_file's callers word them): formatted here, passed as
 * data, never looked up in the catalogue. */
__attribute__((format(printf, 2, 3))) static int nsys_fail(nsys_t *n, const char *fmt, ...)
{
	char why[sizeof n->err->why];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	gw_fail_set(n->err, GW_EXIT_ENV, n->path, NULL, "%s", why);
	return -1;
}

static bool table_exists(nsys_t *n, const char *t)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(n->db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?",
	                       -1, &st, NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(st, 1, t, -1, SQLITE_STATIC);
	bool yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

static bool column_exists(nsys_t *n, const char *t, const char *col)
{
	char sql[160];
	snprintf(sql, sizeof sql, "SELECT 1 FROM pragma_table_info('%s') WHERE name=?", t);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(st, 1, col, -1, SQLITE_STATIC);
	bool yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

/* pid of a serialized globalPid/globalTid: bits 24..47. */
static int64_t gpid(sqlite3_int64 g)
{
	return (int64_t)((g >> 24) & 0xFFFFFF);
}

/* Correlation ids are per process: the key combines both. */
static int64_t corr_key(int64_t pid, sqlite3_int64 corr)
{
	return (pid << 32) | (int64_t)(corr & 0xFFFFFFFF);
}

static int push(nsys_t *n, int64_t start, int64_t end, int64_t stream, int64_t corr,
                const char *name, uint8_t cat, double bw, bool has_bw)
{
	trace_rank *r = n->r;
	uint32_t id = trace_names_intern(&r->names, name, strlen(name));
	if (id == UINT32_MAX)
		return -1;
	trace_event e = {
	    .ts = start,
	    .dur = end - start,
	    .corr = corr,
	    .stream = stream,
	    .name = id,
	    .cat = cat,
	    .flags = (uint8_t)((has_bw ? TRACE_EV_HAS_BW : 0) | (r->n == 0 ? TRACE_EV_ROW0 : 0))};
	if (!(has_bw ? trace_rank_push_bw(r, &e, bw) : trace_rank_push(r, &e)))
		return -1;
	if (!r->have_span || start < r->first_ts)
		r->first_ts = start;
	if (!r->have_span || end > r->last_end)
		r->last_end = end;
	r->have_span = true;
	r->n_rows++;
	r->n_events++;
	return 0;
}

/*
 * SQLite's message as one printable line. Its message for a damaged file
 * quotes the damaged schema (any bytes, control characters included), so a
 * damaged file is named so and no more; other messages are SQLite's own
 * words, escaped all the same.
 */
static const char *sqlite_why(nsys_t *n, int rc, char *buf, size_t len)
{
	int code = rc & 0xff;
	if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB)
		return "truncated or corrupt";
	return gw_term_safe(n->db ? sqlite3_errmsg(n->db) : "out of memory", buf, len);
}

static void unreadable(nsys_t *n, int rc)
{
	char safe[GW_TERM_SAFE_LEN(200)];
	nsys_fail(n, "not a readable SQLite database: %s", sqlite_why(n, rc, safe, sizeof safe));
}

static int sql_fail(nsys_t *n, const char *what)
{
	char safe[GW_TERM_SAFE_LEN(200)];
	nsys_fail(n, "%s: %s", what,
	          sqlite_why(n, sqlite3_extended_errcode(n->db), safe, sizeof safe));
	return -1;
}

static const char *copy_kind(int k)
{
	static const char *const kinds[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH",
	                                    "AtoA",    "AtoD", "DtoA", "DtoD", "HtoH",
	                                    "PtoP",    "HtoD", "DtoH", "DtoD"};
	return k >= 0 && k < (int)(sizeof kinds / sizeof *kinds) ? kinds[k] : "Unknown";
}

static const char *mem_kind(int k)
{
	static const char *const kinds[] = {"Pageable", "Pinned",        "Device",        "Array",
	                                    "Managed",  "Device Static", "Managed Static"};
	return k >= 0 && k < (int)(sizeof kinds / sizeof *kinds) ? kinds[k] : "Unknown";
}

/* Column or a constant when an older export lacks it. */
static const char *col_or(nsys_t *n, const char *t, const char *col, const char *dflt)
{
	return column_exists(n, t, col) ? col : dflt;
}

static int read_kernels(nsys_t *n)
{
	const char *T = "CUPTI_ACTIVITY_KIND_KERNEL";
	if (!table_exists(n, T))
		return 0;
	const char *name = column_exists(n, T, "demangledName") ? "demangledName"
	                   : column_exists(n, T, "shortName")   ? "shortName"
	                                                        : "mangledName";
	char sql[512];
	snprintf(sql, sizeof sql,
	         "SELECT k.start, k.end, k.streamId, k.correlationId, %s, s.value FROM %s k "
	         "LEFT JOIN StringIds s ON s.id = k.%s ORDER BY k.start",
	         col_or(n, T, "globalPid", "0"), T, name);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK)
		return sql_fail(n, "reading kernels");
	int rc = 0, s;
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		const char *nm = (const char *)sqlite3_column_text(st, 5);
		if (push(n, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
		         sqlite3_column_int64(st, 2),
		         corr_key(gpid(sqlite3_column_int64(st, 4)), sqlite3_column_int64(st, 3)),
		         nm ? nm : "", TRACE_CAT_KERNEL, 0, false) < 0) {
			rc = -1;
			nsys_fail(n, "out of memory");
			break;
		}
	}
	if (!rc && s != SQLITE_DONE)
		rc = sql_fail(n, "reading kernels");
	sqlite3_finalize(st);
	return rc;
}

static int read_memops(nsys_t *n, bool memset_table)
{
	const char *T = memset_table ? "CUPTI_ACTIVITY_KIND_MEMSET" : "CUPTI_ACTIVITY_KIND_MEMCPY";
	if (!table_exists(n, T))
		return 0;
	char sql[512];
	if (memset_table)
		snprintf(sql, sizeof sql,
		         "SELECT start, end, streamId, correlationId, %s, bytes, %s FROM %s "
		         "ORDER BY start",
		         col_or(n, T, "globalPid", "0"), col_or(n, T, "memKind", "2"), T);
	else
		snprintf(sql, sizeof sql,
		         "SELECT start, end, streamId, correlationId, %s, bytes, copyKind, %s, %s "
		         "FROM %s ORDER BY start",
		         col_or(n, T, "globalPid", "0"), col_or(n, T, "srcKind", "-1"),
		         col_or(n, T, "dstKind", "-1"), T);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK)
		return sql_fail(n, memset_table ? "reading memsets" : "reading memcpys");
	int rc = 0, s;
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t start = sqlite3_column_int64(st, 0), end = sqlite3_column_int64(st, 1);
		double bytes = (double)sqlite3_column_int64(st, 5);
		char name[96];
		if (memset_table)
			snprintf(name, sizeof name, "Memset (%s)",
			         mem_kind(sqlite3_column_int(st, 6)));
		else
			snprintf(name, sizeof name, "Memcpy %s (%s -> %s)",
			         copy_kind(sqlite3_column_int(st, 6)),
			         mem_kind(sqlite3_column_int(st, 7)),
			         mem_kind(sqlite3_column_int(st, 8)));
		/* bytes per ns is GB/s; a zero-length copy counts as 1 ns. */
		double bw = bytes / (double)(end > start ? end - start : 1);
		if (push(n, start, end, sqlite3_column_int64(st, 2),
		         corr_key(gpid(sqlite3_column_int64(st, 4)), sqlite3_column_int64(st, 3)),
		         name, memset_table ? TRACE_CAT_MEMSET : TRACE_CAT_MEMCPY, bw, true) < 0) {
			rc = -1;
			nsys_fail(n, "out of memory");
			break;
		}
	}
	if (!rc && s != SQLITE_DONE)
		rc = sql_fail(n, "reading memory operations");
	sqlite3_finalize(st);
	return rc;
}

static int read_syncs(nsys_t *n)
{
	const char *T = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
	if (!table_exists(n, T))
		return 0;
	char sql[512];
	snprintf(sql, sizeof sql,
	         "SELECT start, end, streamId, correlationId, %s, syncType FROM %s ORDER BY start",
	         col_or(n, T, "globalPid", "0"), T);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK)
		return sql_fail(n, "reading synchronizations");
	static const char *const names[] = {"Sync", "Event Sync", "Stream Wait Event",
	                                    "Stream Sync", "Context Sync"};
	int rc = 0, s;
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		int type = sqlite3_column_int(st, 5);
		const char *nm = type >= 0 && type <= 4 ? names[type] : names[0];
		/* Kineto gives Event Sync no stream. */
		int64_t stream = type == 1 ? -1 : sqlite3_column_int64(st, 2);
		if (push(n, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), stream,
		         corr_key(gpid(sqlite3_column_int64(st, 4)), sqlite3_column_int64(st, 3)),
		         nm, TRACE_CAT_SYNC, 0, false) < 0) {
			rc = -1;
			nsys_fail(n, "out of memory");
			break;
		}
	}
	if (!rc && s != SQLITE_DONE)
		rc = sql_fail(n, "reading synchronizations");
	sqlite3_finalize(st);
	return rc;
}

/* "cudaLaunchKernel_v7000" -> "cudaLaunchKernel". */
static void strip_version(char *s)
{
	size_t len = strlen(s), i = len;
	while (i > 0 && isdigit((unsigned char)s[i - 1]))
		i--;
	if (i < len && i >= 2 && s[i - 1] == 'v' && s[i - 2] == '_')
		s[i - 2] = 0;
}

static int read_runtime(nsys_t *n)
{
	const char *T = "CUPTI_ACTIVITY_KIND_RUNTIME";
	if (!table_exists(n, T))
		return 0;
	char sql[512];
	snprintf(sql, sizeof sql,
	         "SELECT r.start, r.end, r.correlationId, %s, s.value FROM %s r LEFT JOIN "
	         "StringIds s ON s.id = r.nameId WHERE r.correlationId IS NOT NULL "
	         "ORDER BY r.correlationId, r.start",
	         col_or(n, T, "globalTid", "0"), T);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK)
		return sql_fail(n, "reading runtime calls");
	int rc = 0, s;
	int64_t last = INT64_MIN;
	char name[256];
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t corr =
		    corr_key(gpid(sqlite3_column_int64(st, 3)), sqlite3_column_int64(st, 2));
		/* Exports can hold an outer and an inner row for one call: keep the outer one. */
		if (corr == last)
			continue;
		last = corr;
		const char *nm = (const char *)sqlite3_column_text(st, 4);
		snprintf(name, sizeof name, "%s", nm ? nm : "");
		strip_version(name);
		if (push(n, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), -1, corr,
		         name, TRACE_CAT_RUNTIME, 0, false) < 0) {
			rc = -1;
			nsys_fail(n, "out of memory");
			break;
		}
	}
	if (!rc && s != SQLITE_DONE)
		rc = sql_fail(n, "reading runtime calls");
	sqlite3_finalize(st);
	return rc;
}

static void read_meta(nsys_t *n)
{
	trace_rank *r = n->r;
	const char *meta = table_exists(n, "META_DATA_EXPORT")   ? "META_DATA_EXPORT"
	                   : table_exists(n, "EXPORT_META_DATA") ? "EXPORT_META_DATA"
	                                                         : NULL;
	char version[32] = "unknown";
	sqlite3_stmt *st;
	char sql[160];
	if (meta) {
		snprintf(sql, sizeof sql, "SELECT value FROM %s WHERE name='EXPORT_SCHEMA_VERSION'",
		         meta);
		if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) == SQLITE_OK) {
			if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
				snprintf(version, sizeof version, "%s",
				         (const char *)sqlite3_column_text(st, 0));
			sqlite3_finalize(st);
		}
	}
	snprintf(r->format, sizeof r->format, "Nsight Systems SQLite, export schema %s, ns",
	         version);
	snprintf(r->format_text, sizeof r->format_text,
	         _("Nsight Systems SQLite, export schema %s, ns"), version);
	if (table_exists(n, "TARGET_INFO_GPU") && column_exists(n, "TARGET_INFO_GPU", "name") &&
	    sqlite3_prepare_v2(n->db, "SELECT name FROM TARGET_INFO_GPU LIMIT 1", -1, &st, NULL) ==
	        SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
			snprintf(r->device_name, sizeof r->device_name, "%s",
			         (const char *)sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
	}
}

/* nsys has no rank: the last number in the file name (nsys profile -o rep_%q{RANK}). */
static void rank_from_name(trace_rank *r)
{
	const char *base = strrchr(r->path, '/');
	base = base ? base + 1 : r->path;
	const char *dot = strchr(base, '.');
	const char *end = dot ? dot : base + strlen(base);
	const char *p = end;
	while (p > base && isdigit((unsigned char)p[-1]))
		p--;
	if (p < end && end - p < 9) {
		r->rank = atoi(p);
		r->rank_found = true;
	}
}

int trace_nsys_read(const char *path, trace_rank *r, gw_fail *err)
{
	nsys_t n = {.r = r, .path = path, .err = err};
	r->source = TRACE_SRC_NSYS;
	if (sqlite3_open_v2(path, &n.db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		char safe[GW_TERM_SAFE_LEN(200)];
		nsys_fail(&n, "cannot open as SQLite: %s",
		          sqlite_why(&n, n.db ? sqlite3_extended_errcode(n.db) : SQLITE_NOMEM, safe,
		                     sizeof safe));
		sqlite3_close(n.db);
		return -1;
	}
	sqlite3_stmt *st;
	int prc = sqlite3_prepare_v2(n.db, "SELECT count(*) FROM sqlite_master", -1, &st, NULL);
	if (prc != SQLITE_OK) {
		unreadable(&n, prc);
		sqlite3_close(n.db);
		return -1;
	}
	int s = sqlite3_step(st);
	sqlite3_finalize(st);
	if (s != SQLITE_ROW) {
		unreadable(&n, sqlite3_extended_errcode(n.db));
		sqlite3_close(n.db);
		return -1;
	}
	static const char *const activity[] = {
	    "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
	    "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_RUNTIME",
	    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"};
	bool any = false;
	for (size_t i = 0; i < sizeof activity / sizeof *activity; i++)
		any = any || table_exists(&n, activity[i]);
	bool nsys = table_exists(&n, "StringIds") && (any || table_exists(&n, "EXPORT_META_DATA") ||
	                                              table_exists(&n, "META_DATA_EXPORT"));
	if (!nsys) {
		nsys_fail(&n, "an SQLite database, but not an Nsight Systems export "
		              "(no StringIds and CUPTI_ACTIVITY_KIND_* tables)");
		sqlite3_close(n.db);
		return -1;
	}
	read_meta(&n);
	rank_from_name(r);
	int rc = read_kernels(&n);
	if (!rc)
		rc = read_memops(&n, false);
	if (!rc)
		rc = read_memops(&n, true);
	if (!rc)
		rc = read_syncs(&n);
	if (!rc)
		rc = read_runtime(&n);
	sqlite3_close(n.db);
	if (!rc && !any)
		trace_rank_warn(r, "the export has no CUDA activity tables (was it recorded with "
		                   "--trace=cuda?)");
	return rc;
}
