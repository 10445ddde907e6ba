/* selfexe.h - where the running gpuwhy binary is, to start copies of itself. */
#ifndef GPUWHY_UTIL_SELFEXE_H
#define GPUWHY_UTIL_SELFEXE_H

#include <stddef.h>

/*
 * Absolute path of the running binary (from /proc/self/exe), read once and
 * kept: safe from any thread. NULL when /proc is not mounted or the path
 * does not fit PATH_MAX.
 */
const char *gw_self_exe(void);

/* Directory of gw_self_exe() without the trailing slash; 0, or -1 when unknown. */
int gw_self_dir(char *out, size_t outlen);

#endif
