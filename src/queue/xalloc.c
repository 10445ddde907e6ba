/* xalloc.c - allocation that does not return NULL. */
#include <stdlib.h>

#include "queue/queue.h"

void *queue_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		abort(); /* out of memory while keeping records: nothing sane to do */
	return q;
}
