/*
 * fail.h - an error held as data: what failed, why, and the hint.
 *
 * The layers below the faces never print: a source that fails fills a
 * gw_fail and returns its exit code, and the face that called it decides
 * whether to print it (gw_fail_print, the same one line as gw_error),
 * fold it into findings (doctor) or log it (the queue worker). The hint is
 * kept as written (English, marked N_()) and translated where it is printed.
 */
#ifndef GPUWHY_UTIL_FAIL_H
#define GPUWHY_UTIL_FAIL_H

#include <stddef.h>

typedef struct {
	int code; /* GW_EXIT_*; 0 while nothing failed */
	/* The input or thing that failed: a path (a file inside a directory of PATH_MAX, so
	 * the path is never cut), an option, "memory". */
	char what[4200];
	char what_text[256]; /* what in the user's language when it is a phrase; "": what */
	char why[640];       /* English: what JSON keeps */
	char why_text[640];  /* the same in the user's language, for gw_fail_print */
	char hint[256];      /* "" when there is none */
} gw_fail;

/*
 * Fill *f (when not NULL) and return code, so sources can write
 * `return gw_fail_set(err, GW_EXIT_ENV, path, NULL, "cannot open: %s", ...)`.
 * hint may be NULL.
 */
int gw_fail_set(gw_fail *f, int code, const char *what, const char *hint, const char *why_fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Print *f as gw_error does ("gpuwhy: what: why (hint)"); returns its code. Nothing when empty. */
int gw_fail_print(const gw_fail *f);

/* The line without "gpuwhy: ": "what: why (hint)". Returns out. */
const char *gw_fail_text(const gw_fail *f, char *out, size_t len);

#endif
