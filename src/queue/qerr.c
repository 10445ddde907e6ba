/*
 * qerr.c - failures as data: the queue's sources describe what failed in
 * a queue_err and print nothing; the faces decide how to show it (one line
 * on stderr, a line in the worker's log).
 */
#include <stdarg.h>
#include <stdio.h>

#include "queue/queue.h"

int queue_err_set(queue_err *e, int code, const char *what, const char *hint, const char *fmt, ...)
{
	if (!e)
		return code;
	e->code = code;
	snprintf(e->what, sizeof e->what, "%s", what ? what : "");
	snprintf(e->hint, sizeof e->hint, "%s", hint ? hint : "");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->why, sizeof e->why, fmt, ap);
	va_end(ap);
	return code;
}
