/*
 * say.h - a reason said twice (say.c): in English for the access log and
 * the metrics, and in the gate's language for the client and stderr.
 * Below every other seam of the running gate, and needs none of them.
 */
#ifndef GPUWHY_GATE_SAY_H
#define GPUWHY_GATE_SAY_H

#include <stddef.h>

/* Format into out (len bytes); a reason cut at the end still says why. */
void gate_cut(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A reason said twice: fmt into en, its translation into text (len bytes each). */
void gate_say(char *en, char *text, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
