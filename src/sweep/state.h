/*
 * state.h - a sweep's runs, their outcome, and its state file DIR/sweep.json
 * that --resume reads back (state.c).
 */
#ifndef GPUWHY_SWEEP_STATE_H
#define GPUWHY_SWEEP_STATE_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
	SWEEP_PENDING,
	SWEEP_RUNNING,
	SWEEP_DONE,
	SWEEP_FAILED,
	SWEEP_OOM,
	SWEEP_INTERRUPTED
} sweep_status;
const char *sweep_status_name(sweep_status s);
bool sweep_status_parse(const char *s, sweep_status *out);

typedef struct {
	char config[512];
	int rep;        /* 1.. */
	char file[400]; /* recording path */
	sweep_status status;
	int exit_code;         /* -1 unknown */
	double started, ended; /* Unix seconds, 0 unknown */
	long long queue_id;    /* queue task, 0 when run here */
} sweep_run;

typedef struct {
	char dir[300];
	char **args; /* the sweep's own options, as given (for --resume) */
	int nargs;
	sweep_run *r;
	int n, cap;
	double free_cores; /* idle cores when the sweep started, NAN unknown */
	int ncpu;
	/* Which GPUs the sweep used (--sim, --nvml, --gpus as environment), for --resume. */
	char *genv[4];
} sweep_state;

/* The variables of genv, in order. */
extern const char *const sweep_state_env_keys[4];
/* Remember them from the environment now / put back those not set now. */
void sweep_state_env_save(sweep_state *st);
void sweep_state_env_restore(const sweep_state *st);

sweep_run *sweep_state_find(sweep_state *st, const char *config, int rep);
sweep_run *sweep_state_add(sweep_state *st, const char *config, int rep, const char *file);
/* DIR/sweep.json, written to a temporary file and renamed (a kill leaves the old one). */
int sweep_state_save(const sweep_state *st);
/* Returns 0, GW_EXIT_USAGE when DIR holds no sweep, GW_EXIT_ENV on a bad file. */
int sweep_state_load(const char *dir, sweep_state *st);
void sweep_state_free(sweep_state *st);

#endif
