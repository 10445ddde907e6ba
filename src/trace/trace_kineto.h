/* trace_kineto.h - streaming reader for PyTorch profiler (Kineto) Chrome-trace JSON, plain or
 * gzip-compressed: yajl SAX callbacks over zlib gzread, so memory holds the kept event records,
 * never the document. */
#ifndef GPUWHY_TRACE_KINETO_H
#define GPUWHY_TRACE_KINETO_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/trace_model.h"
#include "util/fail.h"

/*
 * Reads path (.json or .json.gz, detected by content) into r, which trace_rank_init prepared.
 * progress, when not NULL, is advanced by the compressed bytes consumed as reading goes on.
 * With threads > 1 a large document is parsed in pieces on that many threads (the result is
 * the same as in one piece). Returns 0, or -1 with err (when given) filled: path as what, a
 * one-line reason in English as why (unreadable file, truncated gzip, invalid JSON, not a
 * Chrome trace, empty traceEvents; the faces word it), code GW_EXIT_ENV.
 */
int trace_kineto_read(const char *path, trace_rank *r, _Atomic uint64_t *progress, int threads,
                      gw_fail *err);

/* Documents of at least this many bytes (uncompressed) are parsed in pieces; 64 MiB unless
 * changed. */
void trace_kineto_set_parallel_min(uint64_t bytes);

/* How often a parallel read had to start over in one piece (the guessed cuts fell inside
 * strings or nested objects). */
unsigned long trace_kineto_restarts(void);

/* The same on a buffer already in memory (tests, fuzzing); what is r's path ("" when none). */
int trace_kineto_parse_mem(const void *buf, size_t len, trace_rank *r, gw_fail *err);

#endif
