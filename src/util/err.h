/* err.h - exit codes and one-line error messages, the same for every command. */
#ifndef GPUWHY_UTIL_ERR_H
#define GPUWHY_UTIL_ERR_H

#include <stdarg.h>

/* Exit codes (documented in docs/global-options.md). */
enum {
	GW_EXIT_OK = 0,       /* success */
	GW_EXIT_PROBLEMS = 1, /* the command worked and found problems */
	GW_EXIT_USAGE = 2,    /* bad command line or bad input value */
	GW_EXIT_ENV = 3,      /* environment or I/O error: no driver, unreadable file */
};

/*
 * Print "gpuwhy: <what>: <why> (<hint>)" to stderr. hint may be NULL.
 * Returns code so callers can write `return gw_error(GW_EXIT_USAGE, ...)`.
 */
int gw_error(int code, const char *what, const char *hint, const char *why_fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Verbosity (-v): debug messages go to stderr only when enabled. */
extern int gw_verbose;
void gw_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
