/* fuzz_trace_kevent.c - libFuzzer target: the whole-event reader against the Kineto callbacks.
 * The input becomes the body of traceEvents; both readings must give the same verdict and,
 * where they accept, the same reader state and rank. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "support/trace_kevent_diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char head[] = "{\"traceEvents\": [", tail[] = "]}";
	if (size > 1 << 20)
		return 0;
	size_t n = sizeof head - 1 + size + sizeof tail - 1;
	unsigned char *doc = malloc(n);
	if (!doc)
		return 0;
	memcpy(doc, head, sizeof head - 1);
	memcpy(doc + sizeof head - 1, data, size);
	memcpy(doc + sizeof head - 1 + size, tail, sizeof tail - 1);
	trace_kevent_diff d = trace_kevent_compare(doc, n);
	free(doc);
	if (d.sax_ok != d.fast_ok || (d.sax_ok && !d.same))
		abort();
	return 0;
}
