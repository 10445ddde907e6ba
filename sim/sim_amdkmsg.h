/*
 * sim_amdkmsg.h - what a scenario's AMD GPUs leave in the kernel log, and the
 * GPU resets behind it.
 *
 * A GPU with reset_at_s has a ring timeout at that time, "GPU reset begin!",
 * its card gone from the driver for back_after_s, then "GPU reset(N)
 * succeeded!" and the card back without the work it had (the scenario's
 * processes that started before the reset are gone, their memory freed). A
 * GPU with lost_after_s has the same timeout and a reset that failed. The
 * lines are the amdgpu driver's (6.x kernels, with the card's PCI address) in
 * dmesg's text form, "[    4.000000] amdgpu 0000:03:00.0: amdgpu: ...", the
 * timestamp being scenario seconds (the simulated machine booted at 0), so the
 * same parser that reads a real log reads them. Nothing here prints.
 */
#ifndef GPUWHY_SIM_AMDKMSG_H
#define GPUWHY_SIM_AMDKMSG_H

#include <stdbool.h>
#include <stddef.h>

#include "sim_scenario.h"

/* Whether GPU g is in its reset at scenario time t (its card gone from the driver). */
bool sim_amd_resetting(const sim_gpu *g, double t);

/* Whether scenario process p is on its GPU g at t: in its span, and not lost to a reset. */
bool sim_amd_proc_on(const sim_gpu *g, const sim_fproc *p, double t);

/*
 * The kernel log lines of the scenario's AMD GPUs with after < time <= upto
 * (after < 0: from the start), in time order, as text ending in a newline;
 * malloc'd, "" when none; NULL when out of memory.
 */
char *sim_amdkmsg_text(const sim_scenario *s, double after, double upto);

/*
 * Append those lines to the file at path (created 0600), in one write so that
 * a reader never sees part of a line. Returns 0, or -1 with errno set.
 */
int sim_amdkmsg_append(const sim_scenario *s, const char *path, double after, double upto);

#endif
