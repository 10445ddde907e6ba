/* timeutil.h - monotonic and wall clocks, in nanoseconds / seconds. */
#ifndef GPUWHY_UTIL_TIMEUTIL_H
#define GPUWHY_UTIL_TIMEUTIL_H

#include <stdint.h>

int64_t gw_mono_ns(void);     /* CLOCK_MONOTONIC */
double gw_wall_s(void);       /* CLOCK_REALTIME, seconds since the epoch */
void gw_sleep_ns(int64_t ns); /* restarts on EINTR unless ns <= 0 */
/* Sleep until an absolute CLOCK_MONOTONIC deadline; returns early (non-zero) on a signal. */
int gw_sleep_until_ns(int64_t deadline_ns);

#endif
