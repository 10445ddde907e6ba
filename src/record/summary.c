#include "record/summary.h"

#include <math.h>
#include <stdlib.h>

#include "diagnose/diag.h"
#include "store/store.h"
#include "util/fail.h"
#include "util/i18n.h"
#include "util/termsafe.h"
#include "util/textwidth.h"

static void fmt_or_na(char *buf, size_t len, const char *fmt, double v)
{
	if (isnan(v))
		snprintf(buf, len, "%s", _("n/a"));
	else
		snprintf(buf, len, fmt, v);
}

/* "  label      ": a label of 11 display columns after two spaces (translated labels are
 * not one column a byte). */
static void label(FILE *out, const char *text)
{
	fprintf(out, "  %s%*s", text, gw_text_pad(text, 11), "");
}

/* The diagnosis in brief: one line per warn/error finding, then where the details are. */
static void summary_findings(const diag_result *r, const char *path, FILE *out)
{
	int shown = 0;
	for (int i = 0; i < r->n; i++) {
		const diag_finding *f = &r->f[i];
		if (f->severity < DIAG_WARN)
			continue;
		/* Titles quote process names: escaped for the terminal. */
		char title[GW_TERM_SAFE_LEN(sizeof f->title)];
		label(out, shown ? "" : _("findings"));
		const char *sev = f->severity == DIAG_ERROR ? _("ERROR") : _("WARN");
		fprintf(out, "%s%*s %s: %s\n", sev, gw_text_pad(sev, 5), "", f->id,
		        gw_term_safe(f->title, title, sizeof title));
		shown++;
	}
	if (!shown) {
		const diag_finding *top = diag_top_finding(r);
		char title[GW_TERM_SAFE_LEN(sizeof top->title)];
		label(out, _("findings"));
		fprintf(out, "%s\n",
		        top ? gw_term_safe(top->title, title, sizeof title) : _("none"));
	}
	label(out, _("details"));
	fprintf(out, "gpuwhy report %s\n", path);
}

/*
 * The numbers are the diagnosis's own, over its analysed window (the samples
 * where the job's GPUs worked), so this summary, `report` and `compare` show
 * one value per fact.
 */
void summary_print(const timeline *tl, const char *path, FILE *out)
{
	diag_opts o;
	diag_opts_default(&o);
	diag_result r;
	diag_run(tl, &o, &r);
	fputc('\n', out);
	fprintf(out,
	        P_("gpuwhy: recorded %.1f s into %s (%d sample); analysed %.1f-%.1f s\n",
	           "gpuwhy: recorded %.1f s into %s (%d samples); analysed %.1f-%.1f s\n", tl->n),
	        tl->duration, path, tl->n, r.t_from, r.t_to);
	const diag_step_stats *st = &r.steps;
	label(out, _("steps"));
	if (st->n > 0 && st->bursty)
		fprintf(out,
		        _("%d, arriving in bursts (buffered output): not timed; mean %.0f ms\n"),
		        tl->nsteps, 1000 * st->mean);
	else if (st->n > 0)
		fprintf(out, _("%d, step time p50 %.0f ms  p90 %.0f ms  p99 %.0f ms\n"), tl->nsteps,
		        1000 * st->p50, 1000 * st->p90, 1000 * st->p99);
	else
		fprintf(out, _("%d (no step lines recognised; see --step-regex)\n"), tl->nsteps);
	for (int g = 0; g < tl->ngpu && g < r.ngpu; g++) {
		const tl_gpu *G = &tl->gpu[g];
		const diag_gpu_summary *s = &r.gpu[g];
		char util[32], idle[32], sm[32], mem[32], tot[32];
		fmt_or_na(util, sizeof util, "%.0f %%", s->util_mean);
		fmt_or_na(idle, sizeof idle, "%.0f %%", s->idle_pct);
		fmt_or_na(sm, sizeof sm, "%.0f %%", s->sm_active_mean);
		fmt_or_na(mem, sizeof mem, "%.0f", s->mem_peak_mib);
		fmt_or_na(tot, sizeof tot, "%.0f", s->mem_total_mib);
		fprintf(out, "  GPU %-2d     ", G->index);
		fprintf(out, _("util mean %s (idle %s)  SM active %s  memory peak %s / %s MiB%s\n"),
		        util, idle, sm, mem, tot, G->lost_at_end ? _("  LOST") : "");
	}
	if (tl->ngpu == 0) {
		label(out, _("GPUs"));
		fprintf(out, "%s\n", _("none recorded"));
	}
	double core = tl_max(tl->h[HM_CPU_BUSY_MAX], r.from, r.to);
	double iow = tl_mean(tl->h[HM_CPU_IOWAIT], r.from, r.to);
	double swp = tl_max(tl->h[HM_SWAP_IN], r.from, r.to);
	char c1[32], c2[32], c3[32];
	fmt_or_na(c1, sizeof c1, "%.0f %%", core);
	fmt_or_na(c2, sizeof c2, "%.1f %%", iow);
	fmt_or_na(c3, sizeof c3, "%.0f B/s", swp);
	label(out, _("host"));
	fprintf(out, _("busiest core peak %s  iowait mean %s  swap-in peak %s\n"), c1, c2, c3);
	if (tl->exit_status >= 0) {
		label(out, _("exit"));
		fprintf(out, "%d%s\n", tl->exit_status,
		        tl->exit_status > 128 ? _(" (killed by a signal)") : "");
	}
	summary_findings(&r, path, out);
	diag_result_free(&r);
}

int summary_print_file(const char *path, FILE *out)
{
	timeline *tl;
	gw_fail err;
	if (store_read_timeline(path, &tl, &err) != 0)
		return gw_fail_print(&err);
	summary_print(tl, path, out);
	tl_free(tl);
	return 0;
}
