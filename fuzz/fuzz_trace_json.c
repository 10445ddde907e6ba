/* fuzz_trace_json.c - libFuzzer target: the Kineto JSON reader, then HTA's loading rules and
 * every analysis on whatever it accepted. */
#include <stddef.h>
#include <stdint.h>

#include "traceview/trace_analyze.h"
#include "trace/trace_kineto.h"
#include "trace/trace_prep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	trace_rank r;
	trace_rank_init(&r, "fuzz.json");
	if (trace_kineto_parse_mem(data, size, &r, NULL) == 0) {
		trace_rank *rp = &r;
		/* Both rounding modes: they take different paths through the times. */
		for (int round = 0; round < 2; round++) {
			trace_prep_opts o = {.ns_rounding = round, .include_last_step = size & 1};
			trace_frame f;
			trace_result res;
			if (trace_prep(&r, &o, trace_prep_filter_applies(&rp, 1), &f) == 0) {
				if (trace_analyze(&r, &f, &res, 1) == 0)
					trace_result_free(&res);
			}
		}
	}
	trace_rank_free(&r);
	return 0;
}
