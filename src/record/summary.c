#include "record/summary.h"

#include <math.h>
#include <stdlib.h>

#include "diagnose/diag.h"
#include "store/store.h"
#include "util/termsafe.h"

static void fmt_or_na(char *buf, size_t len, const char *fmt, double v)
{
	if (isnan(v))
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, fmt, v);
}

/* The diagnosis in brief: one line per warn/error finding, then where the details are. */
static void summary_findings(const timeline *tl, const char *path, FILE *out)
{
	diag_opts o;
	diag_opts_default(&o);
	diag_result r;
	diag_run(tl, &o, &r);
	int shown = 0;
	for (int i = 0; i < r.n; i++) {
		const diag_finding *f = &r.f[i];
		if (f->severity < DIAG_WARN)
			continue;
		/* Titles quote process names: escaped for the terminal. */
		char title[GW_TERM_SAFE_LEN(sizeof f->title)];
		fprintf(out, "%s %-5s %s: %s\n", shown ? "            " : "  findings  ",
		        f->severity == DIAG_ERROR ? "ERROR" : "WARN", f->id,
		        gw_term_safe(f->title, title, sizeof title));
		shown++;
	}
	if (!shown) {
		const diag_finding *top = diag_top_finding(&r);
		char title[GW_TERM_SAFE_LEN(sizeof top->title)];
		fprintf(out, "  findings   %s\n",
		        top ? gw_term_safe(top->title, title, sizeof title) : "none");
	}
	fprintf(out, "  details    gpuwhy report %s\n", path);
	diag_result_free(&r);
}

void summary_print(const timeline *tl, const char *path, FILE *out)
{
	fprintf(out, "\ngpuwhy: recorded %.1f s into %s (%d samples)\n", tl->duration, path, tl->n);
	double *d = NULL;
	int nd = tl_step_durations(tl, &d);
	if (nd > 0) {
		fprintf(out, "  steps      %d, step time p50 %.0f ms  p90 %.0f ms  p99 %.0f ms\n",
		        tl->nsteps, 1000 * tl_percentile(d, nd, 50),
		        1000 * tl_percentile(d, nd, 90), 1000 * tl_percentile(d, nd, 99));
	} else {
		fprintf(out, "  steps      %d (no step lines recognised; see --step-regex)\n",
		        tl->nsteps);
	}
	free(d);
	for (int g = 0; g < tl->ngpu; g++) {
		const tl_gpu *G = &tl->gpu[g];
		char util[32], idle[32], sm[32], mem[32], tot[32];
		fmt_or_na(util, sizeof util, "%.0f %%", tl_wmean(tl, G->m[GM_UTIL_GPU], 0, tl->n));
		fmt_or_na(idle, sizeof idle, "%.0f %%",
		          100 * tl_wshare(tl, G->m[GM_UTIL_GPU], 0, tl->n, tl_pred_le, 5));
		fmt_or_na(sm, sizeof sm, "%.0f %%", tl_wmean(tl, G->m[GM_GPM_SM_ACTIVE], 0, tl->n));
		fmt_or_na(mem, sizeof mem, "%.0f", tl_max(G->m[GM_MEM_USED], 0, tl->n));
		fmt_or_na(tot, sizeof tot, "%.0f", tl_max(G->m[GM_MEM_TOTAL], 0, tl->n));
		fprintf(out,
		        "  GPU %-2d     util mean %s (samples at <=5 %%: %s)  SM active %s  memory "
		        "peak %s / %s MiB%s\n",
		        G->index, util, idle, sm, mem, tot, G->lost_at_end ? "  LOST" : "");
	}
	if (tl->ngpu == 0)
		fprintf(out, "  GPUs       none recorded\n");
	double core = tl_max(tl->h[HM_CPU_BUSY_MAX], 0, tl->n);
	double iow = tl_wmean(tl, tl->h[HM_CPU_IOWAIT], 0, tl->n);
	double swp = tl_max(tl->h[HM_SWAP_IN], 0, tl->n);
	char c1[32], c2[32], c3[32];
	fmt_or_na(c1, sizeof c1, "%.0f %%", core);
	fmt_or_na(c2, sizeof c2, "%.1f %%", iow);
	fmt_or_na(c3, sizeof c3, "%.0f B/s", swp);
	fprintf(out, "  host       busiest core peak %s  iowait mean %s  swap-in peak %s\n", c1, c2,
	        c3);
	if (tl->exit_status >= 0)
		fprintf(out, "  exit       %d%s\n", tl->exit_status,
		        tl->exit_status > 128 ? " (killed by a signal)" : "");
	summary_findings(tl, path, out);
}

int summary_print_file(const char *path, FILE *out)
{
	timeline *tl;
	int rc = store_read_timeline(path, &tl);
	if (rc)
		return rc;
	summary_print(tl, path, out);
	tl_free(tl);
	return 0;
}
