/* worker_log.c - the worker's log: its stderr, one time-stamped line an event. */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "queue/worker.h"

void queue_worker_log(const char *fmt, ...)
{
	char ts[32];
	time_t t = time(NULL);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(ts, sizeof ts, "%Y-%m-%d %H:%M:%S", &tm);
	fprintf(stderr, "%s ", ts);
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}
