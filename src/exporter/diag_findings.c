/*
 * diag_findings.c - the exporter's findings hook: the instant checks of
 * live_checks.c plus the diagnosis rules over the sampler's window, as
 * gpuwhy_finding{gpu, rule, severity} series for Prometheus alerting.
 */
#include <stdbool.h>
#include <string.h>

#include "diagnose/diag.h"
#include "exporter/findings.h"
#include "exporter/frame.h"

/* Rule ids are label values: "data-starved" becomes "data_starved" (snake_case like the names). */
static int add(exporter_finding *out, int n, int max, int gpu, diag_rule rule,
               exporter_severity sev)
{
	if (n >= max)
		return n;
	out[n].gpu = gpu;
	diag_rule_label(rule, out[n].rule, sizeof out[n].rule);
	out[n].severity = sev;
	return n + 1;
}

int exporter_diag_findings(void *user, const exporter_window *w, exporter_finding *out, int max)
{
	int n = exporter_live_findings(user, w, out, max);
	const timeline *tl = exporter_window_timeline(w);
	/* A few samples are too few for rules that look at shares of a window. */
	if (!tl || tl->n < 3)
		return n;
	diag_opts o;
	diag_opts_default(&o);
	o.live = true;
	diag_result r;
	diag_run(tl, &o, &r);
	for (int i = 0; i < r.n; i++) {
		const diag_finding *f = &r.f[i];
		/* The absence of series says "healthy"; an idle GPU, a window too
		 * short yet, or what a machine-wide view cannot check are no problems. */
		if (f->rule == DIAG_R_HEALTHY || f->rule == DIAG_R_GPU_IDLE ||
		    f->rule == DIAG_R_TOO_LITTLE_DATA || f->rule == DIAG_R_NOT_CHECKED)
			continue;
		exporter_severity sev = f->severity == DIAG_ERROR  ? EXPORTER_SEV_ERROR
		                        : f->severity == DIAG_WARN ? EXPORTER_SEV_WARN
		                                                   : EXPORTER_SEV_INFO;
		bool any = false;
		for (int p = 0; p < tl->ngpu && p < 64; p++) {
			if (!(f->gpus & (1ULL << p)))
				continue;
			n = add(out, n, max, tl->gpu[p].index, f->rule, sev);
			any = true;
		}
		if (!any)
			n = add(out, n, max, -1, f->rule, sev);
	}
	diag_result_free(&r);
	return n;
}
