/* trace_jscan_diff.h - the scanner against yajl on one text (for tests and the fuzzer). */
#ifndef GPUWHY_TRACE_JSCAN_DIFF_H
#define GPUWHY_TRACE_JSCAN_DIFF_H

#include <stdbool.h>
#include <stddef.h>

#include "trace/trace_jscan.h"

typedef struct {
	bool yajl_ok, scan_ok; /* each one's verdict on the text */
	bool same;             /* when both accepted: the same calls with the same values */
} trace_jscan_diff;

/* Reads text (a whole document when m is NULL, else the part m describes: yajl is given its
 * open containers first and their closings after; m->end_depth at most strlen(m->open), no
 * end_after_comma) both ways, recording every call. */
trace_jscan_diff trace_jscan_compare(const unsigned char *text, size_t len,
                                     const trace_jscan_mode *m);

/* The same with the scanner passing over the value of every key that begins with 'x' (unless it
 * holds a "rank" key): same when the scanner's calls are yajl's without those values. */
trace_jscan_diff trace_jscan_compare_skipping(const unsigned char *text, size_t len,
                                              const trace_jscan_mode *m);

#endif
