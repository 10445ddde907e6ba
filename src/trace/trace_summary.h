/* trace_summary.h - a profiler trace condensed for the diagnosis rules (kernel counts and times).
 */
#ifndef GPUWHY_TRACE_SUMMARY_H
#define GPUWHY_TRACE_SUMMARY_H

#include <stddef.h>

#include "model/timeline.h"
#include "util/fail.h"

/*
 * Read one trace file (Kineto JSON / JSON.gz or nsys SQLite) and summarise its
 * GPU kernels into out: how many, how many shorter than TL_KERNEL_SHORT_US,
 * their summed time and the span from the first to the last. Returns 0, or
 * GW_EXIT_ENV with *err filled as trace_read_file fills it.
 */
int trace_summarize_file(const char *path, tl_trace_summary *out, gw_fail *err);

#endif
