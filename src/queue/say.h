/* say.h - the queue's stored texts (a task's error, its wait reason) in the user's language. */
#ifndef GPUWHY_QUEUE_SAY_H
#define GPUWHY_QUEUE_SAY_H

#include <stddef.h>

/* A stored error or wait reason (English) in the user's language, for text output: out,
 * or text itself when it has no translation. */
const char *queue_say(const char *text, char *out, size_t len);

#endif
