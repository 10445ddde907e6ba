/*
 * child.h - run external programs with a deadline and capped output.
 *
 * The one way gpuwhy runs another program and reads what it says (doctor
 * probes, sweep runs, Slurm commands). A child must never hang gpuwhy:
 * every child runs in its own process group with stdin from /dev/null and
 * none of gpuwhy's other descriptors, its stdout and stderr are kept up to
 * a cap (the rest is drained and dropped so the child never blocks on a
 * full pipe), and when the deadline passes the whole group gets SIGKILL.
 * Safe to call from any thread: the child calls only async-signal-safe
 * functions before exec.
 */
#ifndef GPUWHY_UTIL_CHILD_H
#define GPUWHY_UTIL_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
	const char *path;  /* executable; NULL: argv[0] searched in PATH */
	char *const *argv; /* argv[0] included, NULL-terminated */
	char *const *envp; /* NULL: inherit this process's environment */
} gw_child_spec;

typedef struct {
	bool started;    /* fork and exec worked */
	int start_errno; /* why it did not start (ENOENT, EACCES, ...) when !started */
	bool exited;     /* ended with exit(); status is the exit code */
	int status;
	int signal; /* terminating signal when !exited (SIGKILL after a timeout) */
	bool timed_out;
	char *out; /* NUL-terminated, never NULL after a run */
	size_t out_len;
	bool out_truncated;
	char *err;
	size_t err_len;
	bool err_truncated;
} gw_child_result;

/*
 * Run n children at once and wait for all of them, at most timeout_ns in
 * total (0 or less: no limit). Each result gets at most cap bytes of stdout
 * and of stderr.
 * Returns 0; per-child outcomes are in results (free with gw_child_free).
 */
int gw_child_run_many(const gw_child_spec *specs, size_t n, int64_t timeout_ns, size_t cap,
                      gw_child_result *results);

/* One child: gw_child_run_many with n = 1. */
int gw_child_run(const gw_child_spec *spec, int64_t timeout_ns, size_t cap, gw_child_result *res);

void gw_child_free(gw_child_result *res);

/* True when the child ran and exited with status 0. */
bool gw_child_ok(const gw_child_result *res);

/*
 * Find an executable named name in a colon-separated directory list (like
 * PATH; NULL or "" finds nothing). A name with a '/' is checked as is.
 * Returns a malloc'd path or NULL.
 */
char *gw_which(const char *name, const char *path_list);

#endif
