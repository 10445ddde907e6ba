/*
 * record_status.h - the one-line progress display of `gpuwhy record` on a
 * terminal: elapsed time, samples written, file size and the live top
 * finding, redrawn in place once a second. Only created for a terminal.
 */
#ifndef GPUWHY_CMD_RECORD_STATUS_H
#define GPUWHY_CMD_RECORD_STATUS_H

#include <stdint.h>
#include <stdio.h>

#include "gpu/gpu.h"
#include "model/snapshot.h"

typedef struct record_status record_status;

/* A status line for recording path with the GPUs of gc (may be NULL), drawn on out. */
record_status *record_status_new(gpu_ctx *gc, const char *path, FILE *out);
/* The recorder's on_snapshot consumer (any thread): feeds the live diagnosis. */
void record_status_feed(const snapshot *s, void *arg);
/* Redraw when a second has passed since the last drawing (or it was never drawn). */
void record_status_tick(record_status *st, long samples, int64_t elapsed_ns);
/* Erase the line (before the final messages) and free; NULL is fine. */
void record_status_free(record_status *st);

#endif
