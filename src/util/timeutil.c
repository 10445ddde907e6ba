#include "util/timeutil.h"

#include <errno.h>
#include <time.h>

int64_t gw_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

double gw_wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void gw_sleep_ns(int64_t ns)
{
	if (ns <= 0)
		return;
	struct timespec ts = {.tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL};
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

int gw_sleep_until_ns(int64_t deadline_ns)
{
	struct timespec ts = {.tv_sec = deadline_ns / 1000000000LL,
	                      .tv_nsec = deadline_ns % 1000000000LL};
	int rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	return rc == EINTR;
}
