/*
 * runner.h - running one configuration under `gpuwhy run`, here or as a
 * queue task (runner.c).
 */
#ifndef GPUWHY_SWEEP_RUNNER_H
#define GPUWHY_SWEEP_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
	const char *self; /* the gpuwhy binary */
	const char *gpus; /* global --gpus, or NULL */
	int64_t interval_ns;
	long long stop_steps; /* --stop-after-steps for run, 0 none */
	int64_t stop_ns;      /* --stop-after for run, 0 none */
	const char *step_re;
	const char *queue_dir; /* --queue: the queue directory, "" for the default; NULL: here */
	const char *queue_mem; /* --queue-mem SIZE for each task, or NULL */
} sweep_runner;

/* The argv of `gpuwhy run` for one run (NULL-terminated, malloc'd). */
char **sweep_run_argv(const sweep_runner *rn, const char *file, char **cmd);
/* Run it here, output to log; returns the exit status (128+N on a signal). */
int sweep_run_local(const sweep_runner *rn, char **argv, char **env, const char *log,
                    volatile int *interrupted);
/* Submit to the queue; the task id or -1 (message printed). */
long long sweep_queue_submit(const sweep_runner *rn, char **argv, char **env, const char *name);
/* Wait for a queue task; its exit code, or -1 if it did not end with one. */
int sweep_queue_wait(const sweep_runner *rn, long long id, volatile int *interrupted);
void sweep_queue_cancel(const sweep_runner *rn, long long id);

#endif
