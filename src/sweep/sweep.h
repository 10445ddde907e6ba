/*
 * sweep.h - `gpuwhy sweep`: change one variable at a time and find the
 * setting that feeds the GPU. The whole sweep (drive.c): the plan, the runs,
 * the search for the largest batch that fits, the results.
 *
 * Its seams, one header each: plan.h (variables and configurations),
 * subst.h (placeholders), search.h, memfit.h (the memory model), stats.h,
 * state.h (runs and sweep.json), runner.h (one run under `gpuwhy run`),
 * results.h (reading, judging and rendering the results). The pure ones
 * (plan, placeholders, search, fit, statistics) do no I/O, so they are
 * unit-tested directly.
 */
#ifndef GPUWHY_SWEEP_SWEEP_H
#define GPUWHY_SWEEP_SWEEP_H

#include <stdbool.h>
#include <stdint.h>

#include "sweep/plan.h"
#include "sweep/state.h"

#define SWEEP_OPTS_MAX_ENV 64
typedef struct {
	sweep_spec sp;
	const char *dir;
	char *env[SWEEP_OPTS_MAX_ENV];
	long long steps, warmup;
	int64_t duration_ns, interval_ns;
	double knee, headroom;
	const char *step_re;
	bool dry_run, json, queue;
	const char *resume, *queue_dir, *queue_mem;
} sweep_opts;

/* Run the sweep described by o into st (new, or loaded by --resume); gpus: global --gpus.
 * Returns the exit code. */
int sweep_drive(sweep_opts *o, sweep_state *st, const char *gpus);

#endif
