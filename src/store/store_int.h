/*
 * store_int.h - what the recording's writer (store.c), reader (store_read.c)
 * and export (store_export.c) share inside store/: the tables, the schema
 * and the digests that tell a damaged file from a good one.
 */
#ifndef GPUWHY_STORE_STORE_INT_H
#define GPUWHY_STORE_STORE_INT_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/fail.h"

/* The tables of a recording, in the order a flush copies them. */
typedef enum {
	ST_META,
	ST_GPUS,
	ST_GPU_LINKS,
	ST_GPU_SAMPLES,
	ST_HOST_SAMPLES,
	ST_PROCESSES,
	ST_PROCESS_SAMPLES,
	ST_STEPS,
	ST_EVENTS,
	ST__COUNT
} store_table;
extern const char *const store_table_names[ST__COUNT];

/* Numeric GPU metrics get a column of gpu_samples; text ones live in gpus. */
bool store_gpu_metric_stored(int id);
/* A host summary metric's column: its key with '_' for '.'. */
void store_host_column(int id, char *out, size_t len);

/* The tables and indexes, the application id and the user version, in db's open
 * transaction. A SQLite result code; err (when given) as sql_exec fills it. */
int store_schema_create(sqlite3 *db, gw_fail *err);
/* What the tables of db (an inspecting connection: sql_open_inspect) are. */
enum {
	STORE_SCHEMA_OURS,    /* a gpuwhy recording's (one written before recordings had an
	                         application id): meta as gpuwhy creates it, gpu_samples and
	                         host_samples, no table of another name */
	STORE_SCHEMA_EMPTY,   /* none at all */
	STORE_SCHEMA_OTHER,   /* another program's */
	STORE_SCHEMA_DAMAGED, /* the schema cannot be read */
};
int store_schema_kind(sqlite3 *db);

/*
 * A digest of a table's rows: how many, and the sum of a 64-bit hash of each
 * row's values (their types and exact bytes), so it does not depend on the order
 * the rows are read in. The writer keeps one per table in meta (digest.TABLE, and
 * digest.schema for the schema); a reader that sums what it read and finds another
 * digest has read a damaged file. Meta's own digest leaves out the digest rows.
 */
typedef struct {
	int64_t rows;
	uint64_t sum;
} store_digest;

typedef struct {
	store_digest table[ST__COUNT];
	store_digest schema;
	int64_t last_rowid[ST__COUNT]; /* writer: the rows already summed */
	unsigned have;                 /* reader: bit t set when digest.TABLE was found, bit
	                                  ST__COUNT for the schema's */
	bool written;                  /* writer: the digest rows are in meta */
} store_digests;

#define STORE_DIGEST_PREFIX "digest."

/* Fold the row at s (columns first..ncol-1) into d. */
void store_digest_row(store_digest *d, sqlite3_stmt *s, int first, int ncol);
/* Whether a meta key is one of the digest rows. */
bool store_digest_key(const char *key);
/* Take a digest row (key, value) into dg; false when it is not one gpuwhy writes. */
bool store_digest_parse(const char *key, const char *value, store_digests *dg);
/* The schema's digest (sqlite_master: type, name, table, SQL); SQLite's code. */
int store_digest_schema(sqlite3 *db, store_digest *d);
/* The writer: every digest of the file as it is now (a new file: quick). */
int store_digests_scan(sqlite3 *db, store_digests *dg);
/* The writer, inside a flush's transaction after its inserts: cur plus the new rows
 * into next, and the digest rows that changed written to meta. SQLite's code. */
int store_digests_update(sqlite3 *db, const store_digests *cur, store_digests *next);

/* The one line for a failed SQLite call on the recording at path: fixed words
 * ("truncated or corrupt", SQLite's name for an I/O error), never SQLite's message,
 * which may quote a damaged schema. Returns the exit code. */
int store_sql_fail(gw_fail *err, const char *path, int rc);

/*
 * Where a new recording is written (store_lock.c). The file is built beside
 * path under a temporary name and renamed over it once it is a recording, so a
 * writer killed at any moment leaves the earlier recording or the new one.
 */
typedef struct {
	char path[4096];
	char tmp[4200]; /* the new file until it is renamed; "" after */
	int old_fd;     /* the recording being replaced, locked; -1 when path is new */
	int fd;         /* the new file, locked: the writer's lock for the recording's life */
	mode_t mode;    /* the replaced file's permissions */
} store_target;

/*
 * Lock path's recording (when there is one) and create the new file beside it,
 * locked. A file that is not a gpuwhy recording is refused without being opened
 * for writing (nor anything beside it removed). Returns 0; -2 when another gpuwhy
 * holds the file (its why names the PID: wait, or record elsewhere); -1 for any
 * other refusal. On -2 and -1 err (when given) holds path as what, the one-line
 * reason as why (English; why_text in the user's language), code GW_EXIT_ENV.
 */
int store_target_open(const char *path, store_target *t, gw_fail *err);
/* Put the new file (a complete recording by now) at path. Returns 0; 1 when another
 * file appeared at path meanwhile (open again; err untouched); -1 with err filled as
 * store_target_open fills it. */
int store_target_commit(store_target *t, gw_fail *err);
/* Give up: the new file is removed, the locks released. */
void store_target_abort(store_target *t);

#endif
