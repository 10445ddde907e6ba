/*
 * termsafe.h - text from others (process names, commands, task names) made
 * safe to print on a terminal.
 *
 * A name may carry a newline that forges a table row, or ESC/OSC/CSI
 * sequences (C0 ESC, C1 CSI 0x9b, as UTF-8 or as a raw byte) that retitle,
 * recolour or reprogram the viewer's terminal. Every human-readable face
 * prints such text through gw_term_safe; JSON and CSV keep the exact string.
 */
#ifndef GPUWHY_UTIL_TERMSAFE_H
#define GPUWHY_UTIL_TERMSAFE_H

#include <stddef.h>

/*
 * Copy s into out (len bytes, always NUL-terminated when len > 0) with
 * control characters escaped: \n \r \t as themselves, other C0 bytes, DEL,
 * C1 code points, bidirectional overrides and bytes that are not valid UTF-8
 * as \xHH or \uHHHH. Printable text, UTF-8 included, is kept. The result is
 * cut at a character boundary when out is too small. Returns out; s NULL
 * gives "".
 */
char *gw_term_safe(const char *s, char *out, size_t len);

/* Bytes out must have to hold n bytes escaped without a cut (at most 4 per byte). */
#define GW_TERM_SAFE_LEN(n) ((n)*4 + 1)

#endif
