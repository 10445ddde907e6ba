/* trace_kevent_diff.h - the whole-event reader against the callbacks on one document (for tests
 * and the fuzzer). */
#ifndef GPUWHY_TRACE_KEVENT_DIFF_H
#define GPUWHY_TRACE_KEVENT_DIFF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
	bool sax_ok, fast_ok; /* the scanner's verdict without and with the whole-event reader */
	bool same;            /* both accepted and left the same reader state and the same rank */
	long taken;           /* events the whole-event reader took */
} trace_kevent_diff;

/* Reads text as a whole Kineto document with the scanner twice: through the callbacks alone,
 * and offering each element of traceEvents to the whole-event reader. */
trace_kevent_diff trace_kevent_compare(const unsigned char *text, size_t len);

#endif
