/* trace_say.h - a trace reader's English error said in the user's language. */
#ifndef GPUWHY_CMD_TRACE_SAY_H
#define GPUWHY_CMD_TRACE_SAY_H

#include <stddef.h>

/* text in the user's language: out (len bytes), or text itself. */
const char *cmd_trace_say(const char *text, char *out, size_t len);

#endif
