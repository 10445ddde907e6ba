/* trace_say.h - a trace reader's English error said in the user's language. */
#ifndef GPUWHY_CMD_TRACE_SAY_H
#define GPUWHY_CMD_TRACE_SAY_H

#include <stddef.h>

/* text in the user's language: out (len bytes), or text itself. */
const char *cmd_trace_say(const char *text, char *out, size_t len);

/* Prints a trace reader's error as the one line `gpuwhy: PATH: why (hint)`, in the user's
 * language, with the control characters of the path and of what other libraries said (a JSON
 * parser's newline, bytes of a damaged SQLite schema) escaped. Returns code. */
int cmd_trace_error(int code, const char *path, const char *hint, const char *err);

#endif
