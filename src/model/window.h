/*
 * window.h - live snapshots as a timeline: the one conversion `top` and the
 * exporter share, so a diagnosis rule sees a live window the way it sees a
 * recording of the same moments (store/ writes the same snapshots and reads
 * them back into the same series).
 *
 *   timeline *tl = tl_from_snapshots(ring, n, 1, ngpu, false);
 *   tl->gpu[g].index = ...;  // identities and topology are the caller's
 */
#ifndef GPUWHY_MODEL_WINDOW_H
#define GPUWHY_MODEL_WINDOW_H

#include <stdbool.h>

#include "model/snapshot.h"
#include "model/timeline.h"

/*
 * A timeline of snaps[0..n) (oldest first) for ngpu GPUs: every stride-th
 * snapshot counting back from the newest becomes a sample (stride 1: all),
 * and the events of all of them are kept, so a lost GPU cannot slip between
 * strides. t = 0 at the first sample. Every present value is set, absent
 * stays NAN; a GPU's values are left out from the moment it is lost.
 * gpu_procs_are_job: the processes on the GPUs count as the watched job
 * (`top`: whatever runs there is what the user looks at); false keeps the
 * sampler's own in_tree, as a machine-wide recording does. The caller fills
 * the GPUs' index, UUID and name, and the topology. NULL when n < 1.
 */
timeline *tl_from_snapshots(const snapshot *const *snaps, int n, int stride, int ngpu,
                            bool gpu_procs_are_job);

/*
 * The pieces of that conversion, for a window kept and moved along
 * (`top`): sample k of tl (added with tl_add_sample) takes s's values and
 * processes; tl_add_snapshot_events adds s's events timed from tl->t0_wall.
 */
void tl_fill_from_snapshot(timeline *tl, const snapshot *s, int k, bool gpu_procs_are_job);
void tl_add_snapshot_events(timeline *tl, const snapshot *s);

#endif
