#include "trace/trace_summary.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "trace/trace_read.h"
#include "trace/trace_model.h"
#include "util/err.h"

int trace_summarize_file(const char *path, tl_trace_summary *out, gw_fail *err)
{
	memset(out, 0, sizeof *out);
	trace_rank r;
	trace_rank_init(&r, path);
	int rc = trace_read_file(path, &r, NULL, 1, err);
	if (rc != 0) {
		trace_rank_free(&r);
		return rc;
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
	if (out->kernels == 0)
		return gw_fail_set(err, GW_EXIT_ENV, path, NULL, "%s",
		                   "no GPU kernels in the trace");
	out->kernel_s = (double)sum / 1e9;
	out->span_s = (double)(last - first) / 1e9;
	return 0;
}
