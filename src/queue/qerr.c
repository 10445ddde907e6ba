/*
 * qerr.c - failures as data: the queue's sources describe what failed in
 * a queue_err and print nothing; the faces decide how to show it (one line
 * on stderr, a line in the worker's log).
 */
#include <stdarg.h>
#include <stdio.h>

#include "queue/store.h"
#include "util/i18n.h"

int queue_err_set(queue_err *e, int code, const char *what, const char *hint, const char *fmt, ...)
{
	if (!e)
		return code;
	e->code = code;
	snprintf(e->what, sizeof e->what, "%s", what ? what : "");
	snprintf(e->hint, sizeof e->hint, "%s", hint ? hint : "");
	va_list ap;
	va_start(ap, fmt);
	/* fmt is a message (xgettext knows queue_err_set); the hint stays English
	 * and is translated where it is printed. */
	vsnprintf(e->why, sizeof e->why, _(fmt), ap);
	va_end(ap);
	return code;
}
