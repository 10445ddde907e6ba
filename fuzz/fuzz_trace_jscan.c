/* fuzz_trace_jscan.c - libFuzzer target: the fast JSON scanner against yajl. Whatever the
 * scanner accepts, yajl accepts with the same calls; whatever yajl rejects, the scanner does;
 * passing over values changes which calls are made, never the verdict. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "support/trace_jscan_diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const trace_jscan_mode modes[] = {
	    {.open = "[", .end_depth = 1},
	    {.open = "{[", .end_depth = 0},
	};
	/* The first byte picks the whole-document reading or one of the parts. */
	const trace_jscan_mode *m = NULL;
	if (size > 0 && data[0] < 2 * sizeof modes / sizeof *modes)
		m = &modes[data[0] % 2];
	trace_jscan_diff d = trace_jscan_compare(data + (size > 0), size - (size > 0), m);
	if (d.scan_ok && !d.same)
		abort();
	/* Passing over values: what it accepts, yajl accepts, with the same calls less those. */
	trace_jscan_diff k = trace_jscan_compare_skipping(data + (size > 0), size - (size > 0), m);
	if (k.scan_ok != d.scan_ok || (k.scan_ok && !k.same))
		abort();
	return 0;
}
