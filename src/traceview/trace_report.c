/* trace_report.c - text, JSON (jansson) and CSV output of a trace job. Numbers are printed
 * with '.', whatever the locale (main sets only LC_CTYPE). */
#include "traceview/trace_report.h"
#include "util/i18n.h"
#include "util/jsonw.h"
#include "util/termsafe.h"
#include "util/textwidth.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ns as microseconds: whole numbers stay whole, others get three decimals. */
static const char *us(int64_t ns, char *buf, size_t sz)
{
	if (ns % 1000 == 0) {
		snprintf(buf, sz, "%" PRId64, ns / 1000);
	} else {
		uint64_t a = ns < 0 ? (uint64_t) - (ns + 1) + 1 : (uint64_t)ns;
		snprintf(buf, sz, "%s%" PRIu64 ".%03" PRIu64, ns < 0 ? "-" : "", a / 1000,
		         a % 1000);
	}
	return buf;
}

/* The same digits as printf's %llu / %lld and us() without printf's per-call cost: the launch
 * table has a line per launch, and formatting it with printf was a tenth of a run. */
static char *put_u64(char *p, uint64_t v)
{
	char t[20];
	int n = 0;
	do {
		t[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = t[--n];
	return p;
}

static char *put_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return put_u64(p, (uint64_t) - (v + 1) + 1);
	}
	return put_u64(p, (uint64_t)v);
}

static char *put_us(char *p, int64_t ns)
{
	if (ns % 1000 == 0)
		return put_i64(p, ns / 1000);
	uint64_t a = ns < 0 ? (uint64_t) - (ns + 1) + 1 : (uint64_t)ns;
	if (ns < 0)
		*p++ = '-';
	p = put_u64(p, a / 1000);
	unsigned f = (unsigned)(a % 1000);
	*p++ = '.';
	*p++ = (char)('0' + f / 100);
	*p++ = (char)('0' + f / 10 % 10);
	*p++ = (char)('0' + f % 10);
	return p;
}

static double us_d(int64_t ns)
{
	return (double)ns / 1000.0;
}

typedef struct {
	int mask;
	int64_t time;
} ktotal_t;

static int cmp_ktotal(const void *a, const void *b)
{
	const ktotal_t *x = a, *y = b;
	if (x->time != y->time)
		return x->time > y->time ? -1 : 1;
	return x->mask - y->mask;
}

/* HTA's kernel type breakdown: the combinations summed over the ranks, largest first. */
static size_t kernel_totals(const trace_job *job, ktotal_t out[TRACE_KMASK_N], int64_t *total)
{
	int64_t sum[TRACE_KMASK_N] = {0};
	*total = 0;
	for (size_t i = 0; i < job->n; i++) {
		const trace_job_item *it = &job->items[i];
		if (!it->analyzed)
			continue;
		for (int m = 1; m < TRACE_KMASK_N; m++)
			sum[m] += it->res.ktime[m];
	}
	size_t n = 0;
	for (int m = 1; m < TRACE_KMASK_N; m++) {
		if (sum[m] > 0)
			out[n++] = (ktotal_t){m, sum[m]};
		*total += sum[m];
	}
	qsort(out, n, sizeof *out, cmp_ktotal);
	return n;
}

static double kpct(int64_t t, int64_t total)
{
	return total ? trace_round(100.0 * ((double)t / (double)total), 1) : NAN;
}

/* ---------------------------------------------------------------- text */

/* fmt is "%W.Pf": n/a is printed in the same width. */
static void text_num(FILE *out, const char *fmt, double v)
{
	if (!isnan(v)) {
		fprintf(out, fmt, v);
		return;
	}
	int w = atoi(fmt + 1);
	const char *na = _("n/a");
	fprintf(out, "%*s%s", gw_text_pad(na, w), "", na);
}

/* s and spaces to fill cols display columns (a CJK character takes two). */
static void text_cell(FILE *out, const char *s, int cols)
{
	fprintf(out, "%s%*s", s, gw_text_pad(s, cols), "");
}

/* Spaces before s to right-align it in cols display columns, then s. */
static void text_rcell(FILE *out, const char *s, int cols)
{
	fprintf(out, "%*s%s", gw_text_pad(s, cols), "", s);
}

static void text_temporal(FILE *out, const trace_result *res)
{
	const trace_temporal *t = &res->temporal;
	char b[40];
	fputc('\n', out);
	fprintf(out, _("  Temporal breakdown (GPU span %s us)\n"), us(t->span, b, sizeof b));
	const struct {
		const char *label;
		int64_t time;
		double pct;
	} rows[] = {{N_("idle"), t->idle, t->idle_pct},
	            {N_("compute"), t->compute, t->compute_pct},
	            {N_("non-compute"), t->non_compute, t->non_compute_pct}};
	for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
		fputs("    ", out);
		text_cell(out, _(rows[i].label), 13);
		fprintf(out, " %14s us  %6.2f %%\n", us(rows[i].time, b, sizeof b), rows[i].pct);
	}
}

static void text_idle(FILE *out, const trace_result *res)
{
	if (!res->n_idle)
		return;
	fputc('\n', out);
	fprintf(out, _("  Idle time per stream (gaps between kernels, memcpys, memsets; us)\n"));
	/* TRANSLATORS: the heads of trace's idle table: stream, idle category, idle time,
	 * its share, number of gaps, mean, min, median and max gap. */
	const char *heads[] = {_("stream"), _("category"), _("idle"),   _("ratio"), _("gaps"),
	                       _("mean"),   _("min"),      _("median"), _("max")};
	const int widths[] = {-8, -12, 12, 6, 7, 10, 8, 10, 10};
	fputs("   ", out);
	for (int i = 0; i < 9; i++) {
		fputc(' ', out);
		if (widths[i] < 0)
			text_cell(out, heads[i], -widths[i]);
		else
			text_rcell(out, heads[i], widths[i]);
	}
	fputc('\n', out);
	for (size_t s = 0; s < res->n_idle; s++) {
		const trace_idle_stream *is = &res->idle[s];
		for (int k = 0; k < TRACE_IDLE_N; k++) {
			if (!is->present[k])
				continue;
			const trace_describe *d = &is->gaps[k];
			char b[40];
			fprintf(out, "    %-8" PRId64 " %-12s %12s ", is->stream,
			        trace_idle_cat_name((trace_idle_cat)k),
			        us(is->time[k], b, sizeof b));
			text_num(out, "%6.2f", trace_round(is->ratio[k], 2));
			fprintf(out, " %7zu ", d->count);
			text_num(out, "%10.2f", trace_round(d->mean, 2));
			fputc(' ', out);
			text_num(out, "%8.2f", d->min);
			fputc(' ', out);
			text_num(out, "%10.2f", trace_round(d->q50, 2));
			fputc(' ', out);
			text_num(out, "%10.2f", d->max);
			fputc('\n', out);
		}
	}
}

static int cmp_kernel_total(const void *a, const void *b)
{
	const trace_kernel_row *x = *(const trace_kernel_row *const *)a;
	const trace_kernel_row *y = *(const trace_kernel_row *const *)b;
	int tx = x->type == TRACE_KT_COMPUTATION ? 0 : x->type == TRACE_KT_COMMUNICATION ? 1 : 2;
	int ty = y->type == TRACE_KT_COMPUTATION ? 0 : y->type == TRACE_KT_COMMUNICATION ? 1 : 2;
	if (tx != ty)
		return tx - ty;
	bool ox = x->name == TRACE_NONE, oy = y->name == TRACE_NONE;
	if (ox != oy)
		return ox - oy;
	return (x->sum < y->sum) - (x->sum > y->sum);
}

static void text_kernels(FILE *out, const trace_result *res)
{
	char b[40], label[80];
	fputc('\n', out);
	fprintf(out, _("  Kernel types (us; overlaps counted once)\n"));
	bool any = false;
	for (int m = 1; m < TRACE_KMASK_N; m++) {
		if (res->ktime[m] <= 0)
			continue;
		trace_kmask_label(m, label, sizeof label);
		fprintf(out, "    %-56s %14s\n", label, us(res->ktime[m], b, sizeof b));
		any = true;
	}
	if (!any)
		fprintf(out, _("    (no computation, communication or memory kernels)\n"));
	if (isnan(res->overlap_pct))
		fputs(_("  Communication/computation overlap: n/a (no communication kernels)\n"),
		      out);
	else
		fprintf(out,
		        _("  Communication/computation overlap: %.2f %% of communication time runs "
		          "beside computation\n"),
		        res->overlap_pct);
	if (!res->n_kernels)
		return;
	fputc('\n', out);
	fprintf(out, _("  Top kernels per type (us)\n"));
	fputs("    ", out);
	/* TRANSLATORS: the heads of trace's kernel table. */
	text_cell(out, _("type"), 13);
	fputc(' ', out);
	text_rcell(out, _("total"), 12);
	fputc(' ', out);
	text_rcell(out, _("count"), 8);
	fputc(' ', out);
	text_rcell(out, _("mean"), 10);
	fputc(' ', out);
	text_rcell(out, _("max"), 10);
	fprintf(out, "  %s\n", _("name"));
	/* Largest first within a type, "others" last (HTA lists them by name). */
	const trace_kernel_row **ord = malloc(res->n_kernels * sizeof *ord);
	if (!ord)
		return;
	for (size_t i = 0; i < res->n_kernels; i++)
		ord[i] = &res->kernels[i];
	qsort(ord, res->n_kernels, sizeof *ord, cmp_kernel_total);
	for (size_t i = 0; i < res->n_kernels; i++) {
		const trace_kernel_row *k = ord[i];
		const char *name = trace_kernel_row_name(res, k);
		fprintf(out, "    %-13s %12s %8zu %10.2f %10s  %.100s%s\n",
		        trace_ktype_name(k->type), us(k->sum, b, sizeof b), k->count, k->mean,
		        us(k->max, label, sizeof label), name, strlen(name) > 100 ? "..." : "");
	}
	free(ord);
}

static void text_launch(FILE *out, const trace_result *res)
{
	const trace_launch *L = &res->launch;
	fputc('\n', out);
	fprintf(out,
	        P_("  Kernel launches: %zu launch/GPU pair\n",
	           "  Kernel launches: %zu launch/GPU pairs\n", L->n),
	        L->n);
	if (!L->n)
		return;
	const struct {
		const char *label;
		size_t n;
	} rows[] = {
	    {N_("short kernels (kernel shorter than its launch call <= 50 us):"), L->n_short},
	    {N_("runtime outliers (launch call > 50 us):"), L->n_runtime_outliers},
	    {N_("launch-delay outliers (kernel starts > 100 us after the call):"),
	     L->n_delay_outliers}};
	int w = 0;
	for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
		if (gw_text_width(_(rows[i].label)) > w)
			w = gw_text_width(_(rows[i].label));
	for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
		fputs("    ", out);
		text_cell(out, _(rows[i].label), w);
		fprintf(out, " %zu\n", rows[i].n);
	}
	fprintf(out,
	        _("    median launch call %.1f us, median kernel %.1f us, median delay %.1f us\n"),
	        L->median_cpu_us, L->median_gpu_us, L->median_delay_us);
}

static void text_counters(FILE *out, const trace_result *res)
{
	char b[40];
	if (res->n_queue) {
		fputc('\n', out);
		fprintf(out,
		        _("  Launch queue length per stream (at each launch and kernel start)\n"));
		for (size_t i = 0; i < res->n_queue; i++) {
			const trace_queue_stream *q = &res->queue[i];
			char sid[32];
			snprintf(sid, sizeof sid, "%" PRId64, q->stream);
			fprintf(out, _("    stream %-6s mean %8.2f  median %6.1f  max %6.0f"), sid,
			        q->len.mean, q->len.q50, q->len.max);
			if (q->blocked > 0)
				fprintf(out, _("  full (>= %d) for %s us"), TRACE_QUEUE_MAX,
				        us(q->blocked, b, sizeof b));
			fputc('\n', out);
		}
	}
	if (res->n_membw) {
		fputc('\n', out);
		fprintf(out, _("  Memory bandwidth (GB/s, while copies run)\n"));
		for (size_t i = 0; i < res->n_membw; i++) {
			const trace_membw *m = &res->membw[i];
			fprintf(out, _("    %-15s points %6zu  mean "), m->group, m->bw.count);
			text_num(out, "%10.3f", m->bw.mean);
			fputs(_("  max "), out);
			text_num(out, "%10.3f", m->bw.max);
			fputc('\n', out);
		}
	}
}

static void text_item(FILE *out, const trace_job *job, const trace_job_item *it)
{
	const trace_rank *r = &it->rank;
	const trace_result *res = &it->res;
	fprintf(out, _("== rank %d: %s\n"), r->rank, r->path);
	fprintf(out, _("  %s; %llu events, %zu GPU events analysed"),
	        r->format_text[0] ? r->format_text : r->format, (unsigned long long)r->n_events,
	        res->n_gpu_events);
	if (r->device_name[0])
		/* TRANSLATORS: the separator before the device's name. */
		fprintf(out, _("; %s"), r->device_name);
	if (r->world_size)
		fprintf(out, _("; world size %d"), r->world_size);
	fputc('\n', out);
	if (res->frame.filtered || (job->filter && res->frame.n_gpu_dropped))
		fprintf(out,
		        _("  ProfilerStep filter: events of the last step and uncorrelated GPU "
		          "events left out (%llu GPU events)\n"),
		        (unsigned long long)res->frame.n_gpu_dropped);
	const trace_verdict *v = &res->verdict;
	fputc('\n', out);
	fprintf(out, _("  Verdict: %s: %s\n"), _(trace_verdict_word(v->id)), v->why_text);
	for (int i = 0; i < v->n_evidence; i++)
		fprintf(out, "    - %s\n", v->evidence_text[i]);
	if (!res->temporal.valid) {
		fputc('\n', out);
		return;
	}
	text_temporal(out, res);
	text_idle(out, res);
	text_kernels(out, res);
	text_launch(out, res);
	text_counters(out, res);
	fputc('\n', out);
}

static void text_warnings(FILE *out, const trace_job_item *it)
{
	const trace_rank *r = &it->rank;
	const trace_result *res = &it->res;
	for (int i = 0; i < r->n_warnings; i++)
		fprintf(out, _("  warning: %s\n"),
		        r->warnings_text[i] ? r->warnings_text[i] : r->warnings[i]);
	if (it->analyzed && res->hta_would_fail) {
		char b[40];
		fprintf(
		    out,
		    _("  warning: non-compute time is %s us: %llu events got a negative duration "
		      "from HTA's ns rounding; HTA stops with an AssertionError here, gpuwhy goes "
		      "on "
		      "(--no-ns-rounding avoids it)\n"),
		    us(res->temporal.non_compute, b, sizeof b),
		    (unsigned long long)res->frame.n_neg_dur);
	}
}

void trace_report_text(FILE *out, const trace_job *job, const trace_job_opts *o)
{
	(void)o;
	size_t shown = 0;
	for (size_t i = 0; i < job->n; i++) {
		const trace_job_item *it = &job->items[i];
		if (it->failed || !it->selected)
			continue;
		if (shown++)
			fputc('\n', out);
		text_item(out, job, it);
		text_warnings(out, it);
	}
	ktotal_t kt[TRACE_KMASK_N];
	int64_t total;
	size_t n = kernel_totals(job, kt, &total);
	if (shown > 1 && n) {
		char b[40], label[80];
		fputc('\n', out);
		fprintf(out, _("== Kernel types, all ranks (us)\n"));
		for (size_t i = 0; i < n; i++) {
			trace_kmask_label(kt[i].mask, label, sizeof label);
			fprintf(out, "    %-56s %14s  %5.1f %%\n", label,
			        us(kt[i].time, b, sizeof b), kpct(kt[i].time, total));
		}
	}
	for (int i = 0; i < job->n_warnings; i++)
		fprintf(out, _("warning: %s\n"),
		        job->warnings_text[i] ? job->warnings_text[i] : job->warnings[i]);
}

void trace_report_warnings(FILE *err, const trace_job *job)
{
	char path[GW_TERM_SAFE_LEN(512)], why[GW_TERM_SAFE_LEN(512)], b[40];
	for (size_t i = 0; i < job->n; i++) {
		const trace_job_item *it = &job->items[i];
		const trace_rank *r = &it->rank;
		if (it->failed || !it->selected)
			continue;
		gw_term_safe(r->path, path, sizeof path);
		for (int w = 0; w < r->n_warnings; w++) {
			gw_term_safe(r->warnings_text[w] ? r->warnings_text[w] : r->warnings[w],
			             why, sizeof why);
			fprintf(err, _("gpuwhy: %s: warning: %s\n"), path, why);
		}
		if (it->analyzed && it->res.hta_would_fail)
			fprintf(
			    err,
			    _("gpuwhy: %s: warning: non-compute time is %s us: %llu events got a "
			      "negative duration from HTA's ns rounding; HTA stops with an "
			      "AssertionError here, gpuwhy goes on (--no-ns-rounding avoids it)\n"),
			    path, us(it->res.temporal.non_compute, b, sizeof b),
			    (unsigned long long)it->res.frame.n_neg_dur);
	}
	for (int i = 0; i < job->n_warnings; i++) {
		gw_term_safe(job->warnings_text[i] ? job->warnings_text[i] : job->warnings[i], why,
		             sizeof why);
		fprintf(err, _("gpuwhy: trace: warning: %s\n"), why);
	}
}

/* ---------------------------------------------------------------- JSON */

static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* A JSON string even from bytes that are not UTF-8 (file names): those become '?'. */
static json_t *jstr(const char *s)
{
	json_t *j = json_string(s);
	if (j)
		return j;
	char *copy = strdup(s);
	if (!copy)
		return json_null();
	for (char *p = copy; *p; p++)
		if ((unsigned char)*p >= 0x80 || (unsigned char)*p < 0x20)
			*p = '?';
	j = json_string(copy);
	free(copy);
	return j ? j : json_null();
}

static json_t *jus(int64_t ns)
{
	return ns % 1000 == 0 ? json_integer(ns / 1000) : json_real(us_d(ns));
}

static json_t *jdescribe(const trace_describe *d)
{
	return json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "count", (json_int_t)d->count,
	                 "mean", jnum(d->mean), "std", jnum(d->std), "min", jnum(d->min), "p25",
	                 jnum(d->q25), "p50", jnum(d->q50), "p75", jnum(d->q75), "max",
	                 jnum(d->max));
}

static json_t *json_item(const trace_job *job, const trace_job_item *it)
{
	const trace_rank *r = &it->rank;
	const trace_result *res = &it->res;
	const trace_verdict *v = &res->verdict;
	json_t *o = json_object();
	json_object_set_new(o, "rank", json_integer(r->rank));
	json_object_set_new(o, "file", jstr(r->path));
	json_object_set_new(o, "format", json_string(r->format));
	json_object_set_new(o, "device",
	                    r->device_name[0] ? json_string(r->device_name) : json_null());
	json_object_set_new(o, "world_size",
	                    r->world_size ? json_integer(r->world_size) : json_null());
	json_object_set_new(o, "events", json_integer((json_int_t)r->n_events));
	json_object_set_new(o, "gpu_events", json_integer((json_int_t)res->n_gpu_events));
	json_object_set_new(o, "profiler_step_filter",
	                    json_pack("{s:b, s:I}", "applied", res->frame.filtered,
	                              "gpu_events_dropped", (json_int_t)res->frame.n_gpu_dropped));
	json_object_set_new(o, "ns_rounding", json_boolean(res->frame.rounded));
	json_t *ev = json_array();
	for (int i = 0; i < v->n_evidence; i++)
		json_array_append_new(ev, json_string(v->evidence[i]));
	const char *vid = trace_verdict_id_str(v->id);
	json_object_set_new(o, "verdict",
	                    json_pack("{s:o, s:s, s:s, s:o}", "id",
	                              vid ? json_string(vid) : json_null(), "word",
	                              trace_verdict_word(v->id), "why", v->why, "evidence", ev));
	const trace_temporal *t = &res->temporal;
	json_object_set_new(o, "temporal",
	                    t->valid ? json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "span_us",
	                                         jus(t->span), "idle_us", jus(t->idle),
	                                         "compute_us", jus(t->compute), "non_compute_us",
	                                         jus(t->non_compute), "idle_pct", jnum(t->idle_pct),
	                                         "compute_pct", jnum(t->compute_pct),
	                                         "non_compute_pct", jnum(t->non_compute_pct))
	                             : json_null());
	json_t *idle = json_array();
	for (size_t s = 0; s < res->n_idle; s++) {
		const trace_idle_stream *is = &res->idle[s];
		json_t *cats = json_object();
		for (int k = 0; k < TRACE_IDLE_N; k++) {
			if (!is->present[k])
				continue;
			json_object_set_new(cats, trace_idle_cat_name((trace_idle_cat)k),
			                    json_pack("{s:o, s:o, s:o}", "idle_us",
			                              jus(is->time[k]), "ratio",
			                              jnum(trace_round(is->ratio[k], 2)), "gaps_us",
			                              jdescribe(&is->gaps[k])));
		}
		json_array_append_new(idle, json_pack("{s:I, s:o}", "stream",
		                                      (json_int_t)is->stream, "categories", cats));
	}
	json_object_set_new(o, "idle_streams", idle);
	json_t *kt = json_array();
	char label[80];
	for (int m = 1; m < TRACE_KMASK_N; m++) {
		if (res->ktime[m] <= 0)
			continue;
		trace_kmask_label(m, label, sizeof label);
		json_array_append_new(
		    kt, json_pack("{s:s, s:o}", "type", label, "time_us", jus(res->ktime[m])));
	}
	json_object_set_new(o, "kernel_types", kt);
	json_t *top = json_array();
	for (size_t i = 0; i < res->n_kernels; i++) {
		const trace_kernel_row *k = &res->kernels[i];
		json_array_append_new(top,
		                      json_pack("{s:s, s:o, s:I, s:o, s:o, s:o, s:o, s:o}", "type",
		                                trace_ktype_name(k->type), "name",
		                                jstr(trace_kernel_row_name(res, k)), "count",
		                                (json_int_t)k->count, "sum_us", jus(k->sum),
		                                "mean_us", jnum(k->mean), "min_us", jus(k->min),
		                                "max_us", jus(k->max), "std_us", jnum(k->std)));
	}
	json_object_set_new(o, "top_kernels", top);
	json_object_set_new(o, "comm_comp_overlap_pct", jnum(res->overlap_pct));
	json_object_set_new(o, "communication_exposed_us", jus(res->comm_exposed));
	const trace_launch *L = &res->launch;
	json_object_set_new(o, "launches",
	                    json_pack("{s:I, s:I, s:I, s:I, s:o, s:o, s:o}", "pairs",
	                              (json_int_t)L->n, "short_kernels", (json_int_t)L->n_short,
	                              "runtime_outliers", (json_int_t)L->n_runtime_outliers,
	                              "launch_delay_outliers", (json_int_t)L->n_delay_outliers,
	                              "median_call_us", jnum(L->median_cpu_us), "median_kernel_us",
	                              jnum(L->median_gpu_us), "median_delay_us",
	                              jnum(L->median_delay_us)));
	json_t *q = json_array();
	for (size_t i = 0; i < res->n_queue; i++) {
		json_t *d = jdescribe(&res->queue[i].len);
		json_object_set_new(d, "stream", json_integer(res->queue[i].stream));
		json_object_set_new(d, "full_queue_us", jus(res->queue[i].blocked));
		json_array_append_new(q, d);
	}
	json_object_set_new(o, "queue_length", q);
	json_t *mb = json_array();
	for (size_t i = 0; i < res->n_membw; i++) {
		json_t *d = jdescribe(&res->membw[i].bw);
		json_object_set_new(d, "name", json_string(res->membw[i].group));
		json_array_append_new(mb, d);
	}
	json_object_set_new(o, "memory_bandwidth_gbps", mb);
	json_t *w = json_array();
	for (int i = 0; i < r->n_warnings; i++)
		json_array_append_new(w, jstr(r->warnings[i]));
	if (res->hta_would_fail)
		json_array_append_new(w,
		                      json_string("negative non-compute time from HTA's ns "
		                                  "rounding (HTA stops with an AssertionError)"));
	json_object_set_new(o, "warnings", w);
	(void)job;
	return o;
}

int trace_report_json(FILE *out, const trace_job *job, const trace_job_opts *o)
{
	json_t *root = json_object();
	if (!root)
		return -1;
	json_object_set_new(root, "options",
	                    json_pack("{s:b, s:b, s:b}", "ns_rounding", o->prep.ns_rounding,
	                              "include_last_step", o->prep.include_last_step,
	                              "profiler_step_filter", job->filter));
	json_t *ranks = json_array(), *errors = json_array(), *warnings = json_array();
	for (size_t i = 0; i < job->n; i++) {
		const trace_job_item *it = &job->items[i];
		if (it->failed)
			json_array_append_new(errors,
			                      json_pack("{s:o, s:o}", "file", jstr(it->rank.path),
			                                "error", jstr(it->err)));
		else if (it->selected && it->analyzed)
			json_array_append_new(ranks, json_item(job, it));
	}
	json_object_set_new(root, "ranks", ranks);
	ktotal_t kt[TRACE_KMASK_N];
	int64_t total;
	size_t n = kernel_totals(job, kt, &total);
	json_t *all = json_array();
	char label[80];
	for (size_t i = 0; i < n; i++) {
		trace_kmask_label(kt[i].mask, label, sizeof label);
		json_array_append_new(all, json_pack("{s:s, s:o, s:o}", "type", label, "time_us",
		                                     jus(kt[i].time), "pct",
		                                     jnum(kpct(kt[i].time, total))));
	}
	json_object_set_new(root, "kernel_types_all_ranks", all);
	for (int i = 0; i < job->n_warnings; i++)
		json_array_append_new(warnings, jstr(job->warnings[i]));
	json_object_set_new(root, "warnings", warnings);
	json_object_set_new(root, "errors", errors);
	int rc = jsonw_tree_line(out, root, 15, JSONW_TREE_PRETTY);
	json_decref(root);
	return rc;
}

/* ---------------------------------------------------------------- CSV */

static void csv_num(FILE *out, const char *fmt, double v)
{
	if (!isnan(v))
		fprintf(out, fmt, v);
}

/* RFC 4180 quoting when the field needs it (kernel names carry commas). */
static void csv_str(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static void csv_describe(FILE *out, const trace_describe *d, const char *fmt)
{
	fprintf(out, "%zu", d->count);
	const double v[] = {d->mean, d->std, d->min, d->q25, d->q50, d->q75, d->max};
	for (size_t i = 0; i < 7; i++) {
		fputc(',', out);
		csv_num(out, fmt, v[i]);
	}
}

#define EACH_ITEM(job, it)                                                                         \
	for (const trace_job_item *it = (job)->items; it < (job)->items + (job)->n; it++)          \
		if (!it->failed && it->selected && it->analyzed)

/* Every idle category present on a stream of an analysed item, stream by stream. */
#define EACH_IDLE(it, is, k)                                                                       \
	for (size_t s_ = 0; s_ < (it)->res.n_idle; s_++)                                           \
		for (const trace_idle_stream *is = &(it)->res.idle[s_]; is; is = NULL)             \
			for (int k = 0; k < TRACE_IDLE_N; k++)                                     \
				if (is->present[k])

typedef struct {
	const trace_result *res;
	const trace_kernel_row *k;
} krow_ref;

static int cmp_krow(const void *a, const void *b)
{
	const krow_ref *x = a, *y = b;
	int c = strcmp(trace_ktype_name(x->k->type), trace_ktype_name(y->k->type));
	if (!c)
		c = strcmp(trace_kernel_row_name(x->res, x->k),
		           trace_kernel_row_name(y->res, y->k));
	if (!c)
		c = (x->res->r->rank > y->res->r->rank) - (x->res->r->rank < y->res->r->rank);
	return c;
}

static void csv_kernels(FILE *out, const trace_job *job)
{
	size_t n = 0;
	EACH_ITEM(job, it) n += it->res.n_kernels;
	krow_ref *refs = malloc((n + 1) * sizeof *refs);
	fputs("# kernel_breakdown\nname,sum (us),max (us),min (us),stddev,mean (us),kernel_type,"
	      "rank\n",
	      out);
	if (!refs)
		return;
	size_t k = 0;
	EACH_ITEM(job, it)
	for (size_t i = 0; i < it->res.n_kernels; i++)
		refs[k++] = (krow_ref){&it->res, &it->res.kernels[i]};
	qsort(refs, n, sizeof *refs, cmp_krow);
	char b[40];
	for (size_t i = 0; i < n; i++) {
		const trace_kernel_row *r = refs[i].k;
		csv_str(out, trace_kernel_row_name(refs[i].res, r));
		fprintf(out, ",%s,%.17g,%.17g,%.17g,%.17g,%s,%d\n", us(r->sum, b, sizeof b),
		        r->hta_max, r->hta_min, r->hta_std, r->hta_mean, trace_ktype_name(r->type),
		        refs[i].res->r->rank);
	}
	free(refs);
	fputc('\n', out);
}

/* The temporal breakdown and the idle time sections. */
static void csv_temporal_idle(FILE *out, const trace_job *job)
{
	char b[4][40];
	fputs("# temporal_breakdown\nrank,idle_time(us),compute_time(us),non_compute_time(us),"
	      "kernel_time(us),idle_time_pctg,compute_time_pctg,non_compute_time_pctg\n",
	      out);
	EACH_ITEM(job, it)
	{
		const trace_temporal *t = &it->res.temporal;
		if (!t->valid)
			continue;
		fprintf(out, "%d,%s,%s,%s,%s,%.2f,%.2f,%.2f\n", it->rank.rank,
		        us(t->idle, b[0], 40), us(t->compute, b[1], 40),
		        us(t->non_compute, b[2], 40), us(t->span, b[3], 40), t->idle_pct,
		        t->compute_pct, t->non_compute_pct);
	}
	fputs("\n# idle_time_breakdown\nrank,stream,idle_category,idle_time,idle_time_ratio\n",
	      out);
	EACH_ITEM(job, it)
	EACH_IDLE(it, is, k)
	{
		fprintf(out, "%d,%" PRId64 ",%s,%s,", it->rank.rank, is->stream,
		        trace_idle_cat_name((trace_idle_cat)k), us(is->time[k], b[0], 40));
		csv_num(out, "%.2f", trace_round(is->ratio[k], 2));
		fputc('\n', out);
	}
	fputs("\n# idle_interval_stats\nidle_category,rank,stream,count,mean,std,min,25%,50%,75%,"
	      "max\n",
	      out);
	EACH_ITEM(job, it)
	EACH_IDLE(it, is, k)
	{
		trace_describe d = is->gaps[k];
		d.mean = trace_round(d.mean, 2);
		d.std = trace_round(d.std, 2);
		d.min = trace_round(d.min, 2);
		d.q25 = trace_round(d.q25, 2);
		d.q50 = trace_round(d.q50, 2);
		d.q75 = trace_round(d.q75, 2);
		d.max = trace_round(d.max, 2);
		fprintf(out, "%s,%d,%" PRId64 ",", trace_idle_cat_name((trace_idle_cat)k),
		        it->rank.rank, is->stream);
		csv_describe(out, &d, "%.2f");
		fputc('\n', out);
	}
}

void trace_report_csv(FILE *out, const trace_job *job)
{
	char b[4][40];
	csv_temporal_idle(out, job);
	ktotal_t kt[TRACE_KMASK_N];
	int64_t total;
	size_t n = kernel_totals(job, kt, &total);
	char label[80];
	fputs("\n# kernel_type_breakdown\nkernel_type,sum,percentage\n", out);
	for (size_t i = 0; i < n; i++) {
		trace_kmask_label(kt[i].mask, label, sizeof label);
		fprintf(out, "%s,%s,%.1f\n", label, us(kt[i].time, b[0], 40),
		        kpct(kt[i].time, total));
	}
	fputs("\n# kernel_type_breakdown_rank\nrank,kernel_type,sum\n", out);
	EACH_ITEM(job, it)
	for (int m = 1; m < TRACE_KMASK_N; m++) {
		if (it->res.ktime[m] <= 0)
			continue;
		trace_kmask_label(m, label, sizeof label);
		fprintf(out, "%d,%s,%s\n", it->rank.rank, label, us(it->res.ktime[m], b[0], 40));
	}
	fputc('\n', out);
	csv_kernels(out, job);
	fputs("# comm_comp_overlap\nrank,comp_comm_overlap_pctg\n", out);
	EACH_ITEM(job, it)
	{
		fprintf(out, "%d,", it->rank.rank);
		csv_num(out, "%.2f", it->res.overlap_pct);
		fputc('\n', out);
	}
	fputs("\n# launch_summary\nrank,launches,short_kernels,runtime_outliers,"
	      "launch_delay_outliers\n",
	      out);
	EACH_ITEM(job, it)
	{
		const trace_launch *L = &it->res.launch;
		fprintf(out, "%d,%zu,%zu,%zu,%zu\n", it->rank.rank, L->n, L->n_short,
		        L->n_runtime_outliers, L->n_delay_outliers);
	}
	fputs("\n# launch_stats\nrank,correlation,cpu_duration,gpu_duration,launch_delay\n", out);
	EACH_ITEM(job, it)
	for (size_t i = 0; i < it->res.launch.n; i++) {
		const trace_launch_row *l = &it->res.launch.rows[i];
		char line[128], *p = put_i64(line, it->rank.rank);
		*p++ = ',';
		/* nsys correlation keys carry the process id in the high bits */
		p = put_i64(p, l->corr & 0xFFFFFFFF);
		*p++ = ',';
		p = put_us(p, l->cpu_dur);
		*p++ = ',';
		p = put_us(p, l->gpu_dur);
		*p++ = ',';
		p = put_us(p, l->delay);
		*p++ = '\n';
		fwrite(line, 1, (size_t)(p - line), out);
	}
	fputs("\n# queue_length_summary\nrank,stream,count,mean,std,min,25%,50%,75%,max,"
	      "full_queue_us\n",
	      out);
	EACH_ITEM(job, it)
	for (size_t i = 0; i < it->res.n_queue; i++) {
		const trace_queue_stream *q = &it->res.queue[i];
		fprintf(out, "%d,%" PRId64 ",", it->rank.rank, q->stream);
		csv_describe(out, &q->len, "%.17g");
		fprintf(out, ",%s\n", us(q->blocked, b[0], 40));
	}
	fputs("\n# memory_bw_summary\nrank,name,count,mean,std,min,25%,50%,75%,max\n", out);
	EACH_ITEM(job, it)
	for (size_t i = 0; i < it->res.n_membw; i++) {
		const trace_membw *m = &it->res.membw[i];
		fprintf(out, "%d,%s,", it->rank.rank, m->group);
		csv_describe(out, &m->bw, "%.17g");
		fputc('\n', out);
	}
	fputs("\n# verdict\nrank,verdict,why\n", out);
	EACH_ITEM(job, it)
	{
		fprintf(out, "%d,%s,", it->rank.rank, trace_verdict_word(it->res.verdict.id));
		csv_str(out, it->res.verdict.why);
		fputc('\n', out);
	}
}
