/* trace_read.h - one input file read into a trace_rank, whichever its kind and whether it is a
 * file or a stream. */
#ifndef GPUWHY_TRACE_READ_H
#define GPUWHY_TRACE_READ_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/trace_model.h"
#include "util/fail.h"

/* Reads one file of either kind (Kineto JSON, JSON.gz, nsys SQLite) into r, a large Kineto file
 * on up to threads threads, adding the bytes read to *progress (may be NULL): 0, or GW_EXIT_ENV
 * with *err filled (what the path, why the reader's reason in English: the faces word it in the
 * user's language, no hint: the face knows what to suggest). */
int trace_read_file(const char *path, trace_rank *r, _Atomic uint64_t *progress, int threads,
                    gw_fail *err);

#endif
