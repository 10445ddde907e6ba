/*
 * rules_steps.c - what the step lines themselves say: step-bursts, when a
 * job's output is block-buffered (stdout to a pipe) and its step lines reach
 * gpuwhy many at once, so their times measure the flushes, not the steps.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "diagnose/diag_int.h"

void rule_step_bursts(diag_ctx *c)
{
	const diag_step_stats *st = &c->res->steps;
	if (!st->bursty)
		return;
	double *d;
	int n = tl_step_durations(c->tl, &d);
	double gap = c->th->step_burst_gap_ms / 1e3, longest = 0, sum = 0;
	int flushes = 0;
	for (int i = 0; i < n; i++) {
		if (d[i] >= gap) {
			flushes++;
			sum += d[i];
		}
		if (d[i] > longest)
			longest = d[i];
	}
	free(d);
	diag_finding *f = diag_add(c, DIAG_R_STEP_BURSTS, DIAG_WARN, 0.9);
	diag_title(f,
	           "Step lines arrive in bursts: %.0f %% of %d step intervals are under %.0f ms, "
	           "then %d gaps of %.2f s on average: the job's output is buffered, so step times "
	           "are not measured",
	           100 * st->burst_share, n, c->th->step_burst_gap_ms, flushes,
	           flushes ? sum / flushes : 0);
	DIAG_EV(f, DIAG_JOB, .metric = DIAG_EV_STEPS,
	        .stat = N_("share of intervals inside bursts"), .value = 100 * st->burst_share,
	        .cmp = ">=", .threshold = 100 * c->th->step_burst_share, .unit = "%");
	DIAG_EV(f, DIAG_JOB, .metric = DIAG_EV_STEPS, .stat = N_("intervals"), .value = n);
	DIAG_EV(f, DIAG_JOB, .metric = DIAG_EV_STEPS, .stat = N_("gaps between bursts"),
	        .value = flushes);
	DIAG_EV(f, DIAG_JOB, .metric = DIAG_EV_STEPS, .stat = N_("longest interval"),
	        .value = longest, .unit = "s");
	/* All lines in one flush at exit: only the run's length says how long a step took. */
	const timeline *tl = c->tl;
	double per = tl->duration > 0 && tl->nsteps > 0 ? tl->duration / tl->nsteps : st->mean;
	DIAG_EV(f, DIAG_JOB, .metric = DIAG_EV_STEPS, .stat = N_("run time per step"), .value = per,
	        .unit = "s");
	diag_note(f,
	          "Step percentiles and compare's step-time test are not used for these steps; the "
	          "run took %.4f s per step on average.",
	          per);
	if (c->tl->nsteps > 0)
		diag_add_range(f, c->tl->steps[0].t, c->tl->steps[c->tl->nsteps - 1].t);
	diag_advice(c, f, NULL);
}
