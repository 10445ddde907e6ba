/*
 * window.c - the exporter's window of snapshots as a timeline, the type the
 * diagnosis rules read, through the conversion `top` uses too. Built on
 * first request and kept for the rest of the tick, so a findings source
 * that never asks for it costs nothing.
 */
#include <stdbool.h>
#include <stdio.h>

#include "exporter/findings.h"
#include "model/window.h"

static timeline *build(const exporter_window *w)
{
	const snapshot *last = w->snaps[w->len - 1];
	int ngpu = last->ngpu < w->ngpus ? last->ngpu : w->ngpus;
	/* Machine-wide, as a recording without a command: no process is "the job". */
	timeline *tl = tl_from_snapshots(w->snaps, w->len, 1, ngpu, false);
	if (w->driver)
		snprintf(tl->driver, sizeof tl->driver, "%s", w->driver);
	for (int g = 0; g < ngpu; g++) {
		tl->gpu[g].index = w->gpus[g].index;
		snprintf(tl->gpu[g].uuid, sizeof tl->gpu[g].uuid, "%s", w->gpus[g].uuid);
		snprintf(tl->gpu[g].name, sizeof tl->gpu[g].name, "%s", w->gpus[g].name);
		snprintf(tl->gpu[g].vendor, sizeof tl->gpu[g].vendor, "%s", w->gpus[g].vendor);
	}
	return tl;
}

const timeline *exporter_window_timeline(const exporter_window *w)
{
	if (!w || w->len <= 0 || !w->tl)
		return NULL;
	if (!*w->tl)
		*w->tl = build(w);
	return *w->tl;
}
