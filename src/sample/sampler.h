/*
 * sampler.h - the sampling thread: GPUs and host read together at a fixed
 * cadence with drift correction, assembled into one snapshot per tick and
 * handed to a callback (the recorder, the live view, the exporter).
 *
 * Slow GPU fields are refreshed by the device layer's own thread, so a tick
 * never waits on ECC counters or the 20 ms PCIe throughput call.
 */
#ifndef GPUWHY_SAMPLE_SAMPLER_H
#define GPUWHY_SAMPLE_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>

#include "gpu/gpu.h"
#include "model/snapshot.h"

typedef struct sampler sampler;

#define SAMPLER_HOST_TOP 5
#define SAMPLER_HOST_TOP_MIN_PCT 5.0
#define SAMPLER_HOST_TOP_PERIOD_NS 1000000000LL
typedef void (*sampler_cb)(const snapshot *s, void *arg);

typedef struct {
	int64_t interval_ns; /* default 1 s */
	/*
	 * Sample every fast_interval_ns during the first fast_for_ns (short jobs),
	 * then at twice the last interval until interval_ns is reached; 0: off.
	 */
	int64_t fast_interval_ns, fast_for_ns;
	gpu_ctx *gpu;          /* may be NULL: host only */
	const char *proc_root; /* NULL = /proc */
	const char *sys_root;  /* NULL = /sys */
	bool follow_gpu_procs; /* also report host CPU/RSS of every GPU process */
	/* Also record the busiest host processes outside the followed tree
	 * (SAMPLER_HOST_TOP of them at SAMPLER_HOST_TOP_MIN_PCT of a core or
	 * more, once a second at most): who else loads the CPUs. */
	bool host_top;
	/* GPUs only: no host reading (summary, cores, followed tree, host processes). */
	bool gpu_only;
	sampler_cb cb;
	void *arg;
} sampler_opts;

sampler *sampler_new(const sampler_opts *o);
/* Follow these PIDs and their descendants (may be called while running). */
int sampler_follow(sampler *s, const int *pids, int n);
/* Take one snapshot now on the caller's thread (tests, --once). */
const snapshot *sampler_tick(sampler *s);
/*
 * Start the thread. Its first tick is at once, or, when a tick was already
 * taken with sampler_tick (a first reading the caller used), one interval
 * after that one.
 */
int sampler_start(sampler *s);
/* Stop the thread after the tick in progress; safe to call twice. */
void sampler_stop(sampler *s);
/*
 * Stop the thread, then take one last tick for the callback (the state at a
 * watched job's exit), unless the last one was taken under 20 ms ago or
 * none was ever taken.
 */
void sampler_finish(sampler *s);
void sampler_free(sampler *s);
/* Ticks taken and how many were late by more than half an interval. */
void sampler_stats(const sampler *s, long *ticks, long *late);
/* Change the interval of a running sampler (live views). */
void sampler_set_interval(sampler *s, int64_t interval_ns);

#endif
