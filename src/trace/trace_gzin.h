/* trace_gzin.h - a trace file's text, gzip or plain, read in order.
 *
 * What zlib's gzread gives (members one after another, trailing bytes after a member ignored,
 * plain files passed through), inflated by ISA-L's igzip where it is there at build time (about
 * twice zlib's speed, the CRC-32 computed as it goes), else by zlib with the CRC-32 computed by
 * libdeflate (or zlib's crc32); the check value is compared with each member's trailer together
 * with its length.
 */
#ifndef GPUWHY_TRACE_GZIN_H
#define GPUWHY_TRACE_GZIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/fail.h"

typedef struct trace_gzin trace_gzin;

/* NULL with errno set when the file cannot be opened or memory runs out. bufsz: the size of
 * the compressed input buffer. */
trace_gzin *trace_gzin_open(const char *path, size_t bufsz);
void trace_gzin_close(trace_gzin *g);
/* Up to len bytes of text into buf: their number, 0 at the end, -1 on an error. */
int trace_gzin_read(trace_gzin *g, void *buf, size_t len);
/* Bytes of the file consumed so far (for progress). */
uint64_t trace_gzin_offset(const trace_gzin *g);
/*
 * A plain regular file mapped read-only, so that its text is read in place instead of copied
 * by read(2): its bytes and *len, or NULL (gzip, a pipe or other non-regular file, an empty
 * file, or no mapping to be had: read it with trace_gzin_read). The mapping lives until
 * trace_gzin_close; a file cut shorter while it is mapped ends the process (SIGBUS), as it
 * would for any program reading a mapping.
 */
const unsigned char *trace_gzin_map(trace_gzin *g, size_t *len);
/* The mapped text before upto is read: its pages are given back (the resident size stays that
 * of the text in flight) and the progress offset moves there. */
void trace_gzin_map_done(trace_gzin *g, size_t upto);
/* Whether the file is passed through as it is (not gzip). */
bool trace_gzin_direct(const trace_gzin *g);
/* After a read returned n (0 or -1): 1 for a clean end, or -1 with err filled (GW_EXIT_ENV,
 * why in English: "read error: ...", "corrupt gzip data: ...", "truncated gzip file (...)";
 * what is left empty for the caller, which knows the file). */
int trace_gzin_status(const trace_gzin *g, int n, gw_fail *err);

#endif
