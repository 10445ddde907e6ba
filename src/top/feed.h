/*
 * feed.h - snapshots from the sampler thread to the UI thread.
 *
 * The sampler's callback (or the recorder's on_snapshot hook) calls
 * top_feed_push() on the sampling thread. It completes the GPU processes
 * with what the live view needs from the host (CPU %, RSS, parent, and the
 * processes around them: launchers, data-loader workers), copies the
 * result into a short queue under a mutex, and writes a byte to a pipe.
 * The UI thread polls that pipe beside stdin and drains the queue into its
 * model, so drawing never waits on NVML or /proc.
 */
#ifndef GPUWHY_TOP_FEED_H
#define GPUWHY_TOP_FEED_H

#include "model/snapshot.h"
#include "top/model.h"

#define TOP_FEED_QUEUE 32 /* snapshots waiting for the UI; beyond it the oldest are dropped */

typedef struct top_feed top_feed;

/* proc_root: NULL for /proc. NULL on failure (no memory, no pipe). */
top_feed *top_feed_new(const char *proc_root);
void top_feed_free(top_feed *f);

/* Sampling thread. The signature fits sampler_cb and recorder_opts.on_snapshot (arg = feed). */
void top_feed_push(const snapshot *s, void *feed);

/* UI thread: the descriptor to poll for input, and the queue moved into m. */
int top_feed_fd(const top_feed *f);
/* Returns how many snapshots were ingested; *dropped counts those lost to a full queue. */
int top_feed_drain(top_feed *f, top_model *m, long *dropped);

#endif
