/* trace_verdict.c - the trace's one-word verdict and the evidence for it, from the analyses'
 * results (the thresholds in trace_analyze.h). */
#include "traceview/trace_analyze.h"
#include "traceview/trace_analyze_int.h"
#include "util/i18n.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *trace_verdict_word(trace_verdict_id v)
{
	switch (v) {
	case TRACE_VERDICT_HEALTHY:
		return N_("healthy");
	case TRACE_VERDICT_HOST_BOUND:
		return N_("host-bound");
	case TRACE_VERDICT_LAUNCH_BOUND:
		return N_("launch-bound");
	case TRACE_VERDICT_COMM_BOUND:
		return N_("communication-bound");
	default:
		return N_("n/a");
	}
}

const char *trace_verdict_id_str(trace_verdict_id v)
{
	switch (v) {
	case TRACE_VERDICT_HEALTHY:
		return "healthy";
	case TRACE_VERDICT_HOST_BOUND:
		return "host_bound";
	case TRACE_VERDICT_LAUNCH_BOUND:
		return "launch_bound";
	case TRACE_VERDICT_COMM_BOUND:
		return "communication_bound";
	default:
		return NULL;
	}
}

/* One sentence twice: English for JSON and CSV, the user's language for the text report. */
static void say2(char *en, size_t enlen, char *tr, size_t trlen, const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	vsnprintf(en, enlen, fmt, ap);
	vsnprintf(tr, trlen, _(fmt), ap2);
	va_end(ap2);
}

static void verdict_evidence(trace_verdict *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void verdict_evidence(trace_verdict *v, const char *fmt, ...)
{
	if (v->n_evidence >= TRACE_MAX_EVIDENCE)
		return;
	va_list ap;
	va_start(ap, fmt);
	int i = v->n_evidence++;
	say2(v->evidence[i], sizeof v->evidence[i], v->evidence_text[i], sizeof v->evidence_text[i],
	     fmt, ap);
	va_end(ap);
}

static void verdict_why(trace_verdict *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void verdict_why(trace_verdict *v, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say2(v->why, sizeof v->why, v->why_text, sizeof v->why_text, fmt, ap);
	va_end(ap);
}

static double share(int64_t part, int64_t whole)
{
	return whole > 0 ? (double)part / (double)whole : 0.0;
}

/* The verdict, in the words of the diagnosis rules, from the analyses above. */
void trace_an_verdict(const trace_result *res, trace_verdict *v)
{
	memset(v, 0, sizeof *v);
	const trace_temporal *t = &res->temporal;
	if (!t->valid || t->span <= 0) {
		v->id = TRACE_VERDICT_NONE;
		verdict_why(v, "no GPU activity in the trace");
		return;
	}
	int64_t cat[TRACE_IDLE_N] = {0}, launch_scale = 0, gaps = 0;
	for (size_t s = 0; s < res->n_idle; s++) {
		const trace_idle_stream *is = &res->idle[s];
		for (int k = 0; k < TRACE_IDLE_N; k++)
			cat[k] += is->time[k] > 0 ? is->time[k] : 0;
	}
	for (int k = 0; k < TRACE_IDLE_N; k++)
		gaps += cat[k];
	launch_scale = res->launch_scale_idle;
	double idle = share(t->idle, t->span), exposed = share(res->comm_exposed, t->span);
	const trace_launch *L = &res->launch;

	verdict_evidence(v, "GPU idle %.2f%% of the %.1f ms span, computing %.2f%%", t->idle_pct,
	                 (double)t->span / 1e6, t->compute_pct);
	if (gaps > 0)
		verdict_evidence(v,
		                 "idle gaps between kernels: host_wait %.0f%%, kernel_wait %.0f%%, "
		                 "other %.0f%%",
		                 100 * share(cat[TRACE_IDLE_HOST], gaps),
		                 100 * share(cat[TRACE_IDLE_KERNEL], gaps),
		                 100 * share(cat[TRACE_IDLE_OTHER], gaps));
	if (res->kunion[TRACE_KT_COMMUNICATION] > 0)
		verdict_evidence(v,
		                 "communication %.1f%% of the span, %.1f%% of it not overlapped by "
		                 "computation",
		                 100 * share(res->kunion[TRACE_KT_COMMUNICATION], t->span),
		                 100 *
		                     share(res->comm_exposed, res->kunion[TRACE_KT_COMMUNICATION]));
	if (gaps > 0)
		verdict_evidence(
		    v,
		    "%.0f%% of that idle time is in gaps under 100 us after a kernel (launch "
		    "overhead scale)",
		    100 * share(launch_scale, gaps));
	if (L->n)
		verdict_evidence(v,
		                 "%zu of %zu launches ran a kernel shorter than the launch call "
		                 "(median kernel %.1f us, median call %.1f us)",
		                 L->n_short, L->n, L->median_gpu_us, L->median_cpu_us);

	if (exposed >= TRACE_VERDICT_EXPOSED_COMM) {
		v->id = TRACE_VERDICT_COMM_BOUND;
		verdict_why(
		    v,
		    "communication kernels run alone for %.1f%% of the GPU span: computation "
		    "waits for them instead of overlapping",
		    100 * exposed);
	} else if (idle < TRACE_VERDICT_IDLE) {
		v->id = TRACE_VERDICT_HEALTHY;
		verdict_why(v,
		            "the GPU is busy %.1f%% of the span and communication is mostly hidden",
		            100 * (1 - idle));
	} else if (share(launch_scale, gaps) >= TRACE_VERDICT_LAUNCH_GAPS) {
		v->id = TRACE_VERDICT_LAUNCH_BOUND;
		verdict_why(v,
		            "the GPU idles %.1f%% of the span, mostly in gaps under 100 us between "
		            "kernels: launching them costs more than running them",
		            100 * idle);
	} else {
		v->id = TRACE_VERDICT_HOST_BOUND;
		verdict_why(
		    v,
		    "the GPU idles %.1f%% of the span in long gaps that the CPU side leaves "
		    "(data loading, Python, synchronization)",
		    100 * idle);
	}
}
