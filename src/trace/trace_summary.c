#include "trace/trace_summary.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "trace/trace_read.h"
#include "trace/trace_model.h"
#include "util/err.h"

int trace_summarize_file(const char *path, tl_trace_summary *out, char *err, size_t errsz)
{
	memset(out, 0, sizeof *out);
	trace_rank r;
	trace_rank_init(&r, path);
	if (trace_read_file(path, &r, NULL, 1, err, errsz) != 0) {
		trace_rank_free(&r);
		return GW_EXIT_ENV;
	}
	int64_t first = INT64_MAX, last = INT64_MIN, sum = 0;
	for (size_t i = 0; i < r.n; i++) {
		const trace_event *e = &r.ev[i];
		if (e->cat != TRACE_CAT_KERNEL || e->dur < 0)
			continue;
		out->kernels++;
		if ((double)e->dur < TL_KERNEL_SHORT_US * 1000.0)
			out->short_kernels++;
		sum += e->dur;
		if (e->ts < first)
			first = e->ts;
		if (e->ts + e->dur > last)
			last = e->ts + e->dur;
	}
	trace_rank_free(&r);
	if (out->kernels == 0) {
		snprintf(err, errsz, "no GPU kernels in the trace");
		return GW_EXIT_ENV;
	}
	out->kernel_s = (double)sum / 1e9;
	out->span_s = (double)(last - first) / 1e9;
	return 0;
}
