/*
 * xalloc.h - allocation that does not return NULL.
 *
 * gpuwhy's one out-of-memory policy: a failed allocation prints
 * "gpuwhy: out of memory" and aborts. A monitor or recorder that keeps
 * going with a silently shortened record would report wrong findings, and
 * on Linux a failed malloc means the machine is already beyond saving.
 */
#ifndef GPUWHY_UTIL_XALLOC_H
#define GPUWHY_UTIL_XALLOC_H

#include <stddef.h>

void *gw_xmalloc(size_t n);
void *gw_xcalloc(size_t n, size_t size);
/* realloc(p, n) that never fails; n == 0 still returns a valid pointer. */
void *gw_xrealloc(void *p, size_t n);
/* realloc to n * size elements, with the multiplication checked. */
void *gw_xreallocarray(void *p, size_t n, size_t size);
char *gw_xstrdup(const char *s);
char *gw_xstrndup(const char *s, size_t n);

/* The policy itself, for code that allocates some other way (asprintf, sqlite3_mprintf). */
_Noreturn void gw_out_of_memory(void);

#endif
