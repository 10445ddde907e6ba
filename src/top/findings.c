/*
 * findings.c - the status line's findings: the diagnosis rules over the
 * live window (diagnose/diag.h with live set), problems only, in the form
 * of diag_live_summary(): "<title>: <id>?".
 */
#include "top/findings.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "diagnose/diag.h"
#include "util/i18n.h"

/*
 * Findings about a GPU idling. In a live view where no process uses any
 * GPU, an idle GPU is simply free, not a problem (and a busy host core
 * then starves nothing).
 */
static bool about_idleness(diag_rule r)
{
	return r == DIAG_R_LOW_UTILIZATION || r == DIAG_R_DATA_STARVED;
}

static bool gpu_in_use(const timeline *tl)
{
	for (int i = 0; i < tl->nprocs; i++)
		if (tl->procs[i].gpu >= 0 && tl->procs[i].alive)
			return true;
	return false;
}

static void put(top_finding *out, const diag_finding *f)
{
	out->severity = (top_severity)f->severity;
	/* TRANSLATORS: a finding's title, then its id (kept as is), asked as a question */
	snprintf(out->text, sizeof out->text, _("%s: %s?"), _(f->title), f->id);
}

int top_findings(const timeline *tl, top_finding *out, int max)
{
	if (!tl || tl->n < 2 || max <= 0)
		return 0;
	diag_opts o;
	diag_opts_default(&o);
	o.live = true;
	diag_result r;
	diag_run(tl, &o, &r);
	bool in_use = gpu_in_use(tl);
	const diag_finding *top = diag_top_finding(&r);
	int n = 0;
	/* The most severe and confident problem first, as diag_live_summary() picks it. */
	if (top && top->severity >= DIAG_WARN && (in_use || !about_idleness(top->rule)))
		put(&out[n++], top);
	for (int i = 0; i < r.n && n < max; i++) {
		const diag_finding *f = &r.f[i];
		if (f == top || f->severity < DIAG_WARN || (!in_use && about_idleness(f->rule)))
			continue;
		put(&out[n++], f);
	}
	diag_result_free(&r);
	return n;
}
