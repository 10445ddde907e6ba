/*
 * recorder.h - a sampler feeding a recording file: what `record`, `run` and
 * `top -o` share. Creating the file is the first thing done, so an
 * unwritable path fails before any command is started.
 */
#ifndef GPUWHY_RECORD_RECORDER_H
#define GPUWHY_RECORD_RECORDER_H

#include <stdbool.h>
#include <stdint.h>

#include "gpu/gpu.h"
#include "model/snapshot.h"

typedef struct recorder recorder;

/*
 * A recording starts fast, so that a job of a second has several samples:
 * every RECORDER_FAST_INTERVAL_NS during the first RECORDER_FAST_FOR_NS (when
 * the interval asked for is longer), then doubling up to the interval (0.1 s
 * for 1 s, then 0.2, 0.4, 0.8, 1 s). It also samples once more when it
 * finishes (a watched job's exit). Samples are not evenly spaced: weigh them
 * by the time each covers (tl_wmean).
 */
#define RECORDER_FAST_INTERVAL_NS 100000000LL
#define RECORDER_FAST_FOR_NS 1000000000LL

typedef struct {
	const char *path;
	int64_t interval_ns;
	gpu_ctx *gpu;                                      /* may be NULL (host only) */
	const char *command;                               /* watched command line, or NULL */
	void (*on_snapshot)(const snapshot *s, void *arg); /* optional extra consumer */
	void *arg;
} recorder_opts;

/* Returns 0 or GW_EXIT_ENV with a message printed. */
int recorder_open(const recorder_opts *o, recorder **out);
int recorder_follow(recorder *r, int pid);
int recorder_start(recorder *r);
/* Thread-safe: timestamped now. */
void recorder_step(recorder *r, long step, const char *line);
void recorder_event(recorder *r, const char *kind, int gpu_pos, long value, const char *text);
/* Stop sampling, write the end facts, close the file. Returns 0, or -1 if the file had errors. */
int recorder_finish(recorder *r, int exit_status);
/* recorder_finish, and *stored (if not NULL) = the samples the file holds at the end. */
int recorder_finish_stored(recorder *r, int exit_status, long *stored);
/* Samples committed to the file so far. */
long recorder_samples(const recorder *r);

/* Environment variables recorded in meta as env.<NAME> (and compared by `compare`). */
bool recorder_env_of_interest(const char *name);

#endif
