/* subproc.h - run a child program with a time limit and capture its output. */
#ifndef GPUWHY_UTIL_SUBPROC_H
#define GPUWHY_UTIL_SUBPROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
	bool started;   /* the program could be run at all */
	bool timed_out; /* killed (SIGKILL to its process group) at the limit */
	bool exited;    /* normal exit: exit_code is meaningful */
	int exit_code;
	int signal; /* killed by this signal, 0 when exited */
	char *out;  /* stdout, NUL-terminated (at most max_out bytes kept) */
	size_t out_len;
	char *err; /* stderr, likewise */
	size_t err_len;
} gw_subproc;

/*
 * Run argv[0] (searched in PATH) with envp (NULL: this process's
 * environment), stdin from /dev/null, in a process group of its own.
 * Waits at most timeout_ns (0: no limit). Returns 0 when it ran (look at
 * r->exited/exit_code), -1 when it could not be started (r->err says why).
 * Safe to call from any thread: the child only calls async-signal-safe
 * functions before exec.
 */
int gw_subproc_run(char *const argv[], char *const envp[], int64_t timeout_ns, size_t max_out,
                   gw_subproc *r);
void gw_subproc_free(gw_subproc *r);

#endif
