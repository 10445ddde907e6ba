/*
 * findings.h - the findings hook: a window of snapshots in, findings out; the window
 * as a timeline (window.c), the built-in checks (live_checks.c) and the diagnosis
 * rules (diag_findings.c).
 */
#ifndef GPUWHY_EXPORTER_FINDINGS_H
#define GPUWHY_EXPORTER_FINDINGS_H

#include "exporter/frame.h"
#include "model/snapshot.h"
#include "model/timeline.h"

/*
 * The newest len snapshots, oldest first; snaps[len-1] is the one being
 * published. gpus[0..ngpus) name the GPUs by position (index, UUID, name).
 * tl points at the owner's slot for the timeline form (NULL until asked
 * for, freed by the owner after the hook).
 */
typedef struct {
	const snapshot *const *snaps;
	int len;
	const exporter_gpu *gpus;
	int ngpus;
	const char *driver; /* NULL when unknown */
	timeline **tl;
} exporter_window;

/*
 * The window as a timeline (the type diagnosis rules read), through the
 * conversion `top` uses too (model/window.h): every present GPU and host
 * series, the cores, the processes and events the sampler saw. Built once
 * per window; NULL when the window is empty.
 */
const timeline *exporter_window_timeline(const exporter_window *w);

/*
 * The findings hook: fill out[0..max) with the findings that hold for the
 * latest window, return how many. Pure: no I/O, no clock. The diagnosis
 * module plugs in here (reading exporter_window_timeline(w)); exporter_live_findings
 * is the built-in source.
 */
typedef int (*exporter_findings_fn)(void *user, const exporter_window *w, exporter_finding *out,
                                    int max);

/*
 * Built-in checks on the latest sample:
 *   throttled      a clock-event reason other than gpu_idle is active
 *                  (error: hardware slowdown, thermal or power brake; warn:
 *                  software thermal; info: power cap, sync boost, app clocks)
 *   pcie_degraded  link width below the maximum, or link generation below the
 *                  maximum while the GPU is busy (idle GPUs lower it on purpose)
 *   gpu_lost       the GPU fell off the bus (error)
 */
int exporter_live_findings(void *user, const exporter_window *w, exporter_finding *out, int max);

/*
 * exporter_live_findings plus every diagnosis rule (src/diagnose, live mode) over
 * the window; rule ids become label values with '_' for '-' (data_starved).
 * What `gpuwhy exporter` uses.
 */
int exporter_diag_findings(void *user, const exporter_window *w, exporter_finding *out, int max);

#endif
