/* live.c - one line about the top problem of a short window, for top's status line and the exporter. */
#include <stdio.h>

#include "diagnose/diag.h"

int diag_live_summary(const timeline *tl, const diag_opts *o, char *out, size_t len)
{
	if (len)
		out[0] = 0;
	diag_opts lo = *o;
	lo.live = true;
	diag_result r;
	diag_run(tl, &lo, &r);
	const diag_finding *f = diag_top_finding(&r);
	int sev = -1;
	/* Only problems earn the status line; "healthy" and info findings stay quiet. */
	if (f && f->severity >= DIAG_WARN) {
		snprintf(out, len, "%s: %s?", f->title, f->id);
		sev = (int)f->severity;
	}
	diag_result_free(&r);
	return sev;
}
