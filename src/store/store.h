/*
 * store.h - the recording file (.gpuwhy): SQLite in WAL mode.
 *
 * Tables (documented in docs/recording.md; `sqlite3 run.gpuwhy .schema` shows them):
 *   meta(key, value)              schema_version, tool_version, hostname, driver,
 *                                 cuda_driver_version, command, start, end, exit_status,
 *                                 interval, env.<NAME> for environment variables of interest
 *   gpus(idx, uuid, name, ...)    static facts, one row per recorded GPU
 *   gpu_links(a, b, nvlinks, topo) interconnect between GPU indices
 *   gpu_samples(t, gpu, lost, <one REAL column per metric of metrics.def>)  NULL = absent
 *   host_samples(t, interval, <host summary columns>, core_busy, core_iowait)  per-core JSON arrays
 *   processes(pid, cmd, user, first_t)  process_samples(t, pid, ppid, gpu, in_tree, alive, ...)
 *   steps(t, step, line)          events(t, kind, gpu, value, text)
 * t is wall-clock seconds since the epoch. gpu is the NVML index (NULL for host-only rows).
 *
 * Writes are staged in memory and committed at least once a second, so a
 * recorder killed with SIGKILL loses at most the last second; the WAL is
 * checkpointed into the main file every 2 s and at close, so the .gpuwhy alone
 * holds the recording up to then. The writer holds a lock on the file for its
 * whole life (a second writer is refused). While another process holds the
 * file's write lock, snapshots wait in memory (GPUWHY_RECORD_BACKLOG, default
 * 3000); what the limit drops becomes a record_gap event.
 *
 * The file says what it is in SQLite's header: application id "GPUW"
 * (SQL_APP_RECORDING) and user_version STORE_SCHEMA_VERSION (older recordings
 * have neither, and meta's schema_version). Every commit also writes the
 * digests of the tables it changed (meta rows digest.TABLE, store_int.h), which
 * the readers check: a damaged file is refused, never read as another recording.
 */
#ifndef GPUWHY_STORE_STORE_H
#define GPUWHY_STORE_STORE_H

#include <stddef.h>

#include "gpu/gpu.h"
#include "model/snapshot.h"
#include "model/timeline.h"
#include "util/fail.h"

#define STORE_SCHEMA_VERSION 1

typedef struct store store;

/* Samples a lock stall dropped: value = how many, t = the first. */
#define STORE_EV_GAP "record_gap"

/*
 * Create a new recording at path. An existing file is replaced only when it is
 * a gpuwhy recording (by its application id, or by its tables in a recording
 * older than the id) or empty; the new file is built beside it and renamed over
 * it once it is a recording, so the name always leads to one of the two. Returns
 * 0, or GW_EXIT_ENV with *err filled: what is path, why one line (the PID of
 * another gpuwhy that holds the file), the hint what to do instead (a file that
 * is not a recording is left as it was, and so are the -wal and -shm beside it).
 */
int store_create(const char *path, store **out, gw_fail *err);
int store_set_meta(store *st, const char *key, const char *value);
int store_add_gpu(store *st, const gpu_static *g);
/* What joins two GPUs; -1 in a field: unknown (stored as NULL). */
typedef struct {
	int nvlinks; /* active NVLinks */
	int topo;    /* nvmlGpuTopologyLevel_t */
	int xgmi;    /* AMD pairs: 1 in one XGMI hive, 0 not */
} store_link;
int store_add_link(store *st, int a_idx, int b_idx, const store_link *l);
/* gpu_index maps snapshot GPU positions to NVML indices. */
int store_write_snapshot(store *st, const snapshot *s, const int *gpu_index);
int store_write_step(store *st, double t_wall, long step, const char *line);
int store_write_event(store *st, double t_wall, const char *kind, int gpu_idx, long value,
                      const char *text);
/* Commit what is pending now (it stays pending while another process holds the lock). */
int store_flush(store *st);
/* Fold the WAL into the main file now. */
int store_checkpoint(store *st);
/* Snapshots committed to the file so far. */
long store_samples(store *st);
/* Commit and close; returns 0 or -1 if anything failed since creation. */
int store_close(store *st);
/* store_close, and *stored (if not NULL) = the snapshots the file holds. */
int store_close_counted(store *st, long *stored);
/* The first error seen (e.g. "database or disk is full"), or NULL. */
const char *store_error(const store *st);

/*
 * What the writer has to tell while it records: a stall behind another
 * process's write lock, what it cost, a -wal left beside the file. Each
 * notice names the recording (what) and says why, with a hint where there
 * is one; its code is 0. Called from the thread that flushes or closes.
 * Without a handler (the default) notices are not reported.
 */
typedef void (*store_notice_fn)(void *ctx, const gw_fail *notice);
void store_set_notice(store *st, store_notice_fn fn, void *ctx);

typedef struct {
	int n;
	char **keys;
	char **values;
} store_meta;

/*
 * Read a whole recording. Returns 0, or a GW_EXIT_* code with why in *err
 * (when not NULL; unreadable file, not a gpuwhy recording, newer schema).
 * Nothing is printed: the face prints err (gw_fail_print).
 */
int store_read_timeline(const char *path, timeline **out, gw_fail *err);
int store_read_meta(const char *path, store_meta **out, gw_fail *err);
const char *store_meta_get(const store_meta *m, const char *key);
void store_meta_free(store_meta *m);

#endif
