/*
 * sweep.h - change one variable at a time and find the setting that feeds
 * the GPU: the plan (variables, placeholders, configurations), the search
 * for the largest batch that fits, the memory model, the runner that runs
 * each configuration under `gpuwhy run`, its state file, and the results.
 *
 *   sweep_spec sp;  sweep_spec_init(&sp);
 *   sweep_var_parse(&sp, "workers=1,2,4", false, err, n);   // --vary
 *   sweep_var_parse(&sp, "batch=pow2:8..4096", true, ...);  // --search
 *   sweep_spec_check(&sp, err, n);                          // placeholders
 *   sweep_plan pl;  sweep_plan_build(&sp, &pl, err, n);     // configurations
 *
 * The pure parts (plan, placeholders, search, fit, statistics) do no I/O so
 * they are unit-tested directly; runner.c, state.c and render.c do the rest.
 */
#ifndef GPUWHY_SWEEP_SWEEP_H
#define GPUWHY_SWEEP_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SWEEP_MAX_VARS 8
#define SWEEP_NAME_MAX 32
#define SWEEP_DEFAULT_MAX_VALUES 64
#define SWEEP_DEFAULT_MAX_RUNS 1000

/* ---- variables and the plan ---- */
typedef struct {
	char name[SWEEP_NAME_MAX];
	char **values; /* --vary: the listed values; --search: the first (lower) bound */
	int nvalues;
	bool search;            /* --search: values found while sweeping */
	bool pow2;              /* search range given as pow2:LO..HI */
	long long lo, hi, step; /* search bounds and resolution */
} sweep_var;

typedef struct {
	sweep_var vars[SWEEP_MAX_VARS];
	int nvars;
	bool grid;
	int max_values; /* longest value list accepted (--max-values) */
	int max_runs;   /* most runs (configurations x repeats) accepted (--max-runs) */
	int repeat;
	char **cmd; /* the user's command, with placeholders (not owned) */
	int ncmd;
	char **env; /* NAME=TEMPLATE (not owned) */
	int nenv;
	const char *batch_var; /* the variable counting samples per step, or NULL */
} sweep_spec;

void sweep_spec_init(sweep_spec *sp);
void sweep_spec_free(sweep_spec *sp);
/* "name=v1,v2" (vary) or "name=pow2:LO..HI[:STEP]" / "name=LO..HI[:STEP]" (search). */
int sweep_var_parse(sweep_spec *sp, const char *arg, bool search, char *err, size_t errlen);
/* Every placeholder names a variable, every variable is used; the batch variable. */
int sweep_spec_check(sweep_spec *sp, char *err, size_t errlen);
int sweep_var_index(const sweep_spec *sp, const char *name);

/* One configuration: a value for every variable (strings owned by the plan). */
typedef struct {
	const char *val[SWEEP_MAX_VARS];
	int varied;     /* the variable changed against the baseline, -1 for the baseline itself */
	char name[512]; /* "workers=2,batch=16" */
	char file[320]; /* the same made safe for a file name */
} sweep_config;

typedef struct {
	sweep_config *c;
	int n, cap;
	char **owned; /* value strings made by the search */
	int nowned, owned_cap;
} sweep_plan;

/* The listed configurations: baseline first, then one variable at a time (or the grid). */
int sweep_plan_build(const sweep_spec *sp, sweep_plan *pl, char *err, size_t errlen);
/* Add (or find) the configuration of the baseline with variable v set to value. */
int sweep_plan_add(sweep_plan *pl, const sweep_spec *sp, int v, const char *value);
void sweep_plan_free(sweep_plan *pl);
void sweep_config_name(const sweep_spec *sp, sweep_config *c);

/* ---- placeholders ---- */
/*
 * Substitute {name} in tmpl with the configuration's values; {{ and }} are
 * literal braces. shell: the template is a shell script, so values are
 * single-quoted. Returns a malloc'd string, or NULL with err set (unknown
 * placeholder).
 */
char *sweep_subst(const sweep_spec *sp, const sweep_config *c, const char *tmpl, bool shell,
                  char *err, size_t errlen);
/* The placeholders of tmpl, for checking: calls fn for each name. */
int sweep_placeholders(const char *tmpl, int (*fn)(const char *name, size_t len, void *arg),
                       void *arg);
/* argv for a configuration: the command with values put in (NULL-terminated, malloc'd). */
char **sweep_argv(const sweep_spec *sp, const sweep_config *c, char *err, size_t errlen);
/* NAME=VALUE strings of --env for a configuration. */
char **sweep_envv(const sweep_spec *sp, const sweep_config *c, char *err, size_t errlen);
void sweep_strv_free(char **v);
/* True when argv runs a shell script given with -c (its script is argv[i] at *script). */
bool sweep_is_shell(char *const *argv, int argc, int *script);
/* Append s to out as one shell word (quoted only when it needs it). */
void sweep_shell_quote(const char *s, char *out, size_t len);

/* ---- search: doubling, then bisecting (pure) ---- */
typedef struct {
	long long lo, hi, step;
	long long good; /* largest value that ran, -1 none yet */
	long long bad;  /* smallest value that failed, -1 none yet */
	long long next; /* value to try next, -1 when done */
	int tried;
} sweep_search;

void sweep_search_init(sweep_search *s, long long lo, long long hi, long long step);
/* The value to try now, or -1 when the search has ended. */
long long sweep_search_next(const sweep_search *s);
void sweep_search_report(sweep_search *s, long long value, bool fits);

/* ---- memory model: peak = fixed + per_item x batch (pure) ---- */
typedef struct {
	int n;
	double fixed, per_item;       /* MiB, MiB per sample */
	double se_fixed, se_per_item; /* standard errors; NAN with fewer than 3 points */
	double cov;                   /* covariance of the two */
	double r2;
	double total_mib, headroom;        /* GPU memory, share kept free */
	double max_batch;                  /* largest batch that fits with the headroom */
	double max_batch_lo, max_batch_hi; /* 95 % interval; NAN when unknown */
	double boundary;                   /* the same without headroom: where OOM starts */
	double boundary_lo, boundary_hi;
} sweep_memfit;

/* Fit n points; false when fewer than two distinct batches or no growth. */
bool sweep_memfit_fit(const double *batch, const double *peak_mib, int n, double total_mib,
                      double headroom, sweep_memfit *out);

/* ---- statistics ---- */
/* Two-sided 95 % Student t quantile for dof degrees of freedom. */
double sweep_t95(int dof);
/* Mean of xs and half-width of its 95 % interval (NAN with fewer than two). */
void sweep_mean_ci(const double *xs, int n, double *mean, double *half);
/*
 * The knee of a throughput curve over ordered values: the first i where the
 * next value gains less than share (0.10 = 10 %). Returns n-1 when every
 * step gains more, -1 when n == 0.
 */
int sweep_knee(const double *thr, int n, double share);

/* ---- runs, their outcome and the sweep's state (state.c) ---- */
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

/* ---- running a configuration (runner.c) ---- */
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

/* ---- results (results.c, render.c) ---- */
/* Repeats of one configuration whose step series are kept apart (compare's runs a side). */
#define SWEEP_MAX_RUN_SERIES 16
typedef struct {
	bool ok; /* a recording with numbers */
	int nrep, nrep_ok;
	sweep_status status; /* of the last repeat */
	int exit_code;
	bool oom;
	int nsteps;                            /* timed intervals, all repeats */
	double *steps;                         /* pooled step intervals (s) */
	int nruns;                             /* repeats that timed steps (0: steps are one run) */
	int run_off[SWEEP_MAX_RUN_SERIES + 1]; /* repeat k's steps: [run_off[k], run_off[k+1]) */
	double mean, p50, p90, ci_half; /* step time (s) and 95 % CI half-width of the mean */
	bool ci_over_repeats;
	double steps_s, samples_s; /* throughput; samples NAN without a batch variable */
	double util, sm, mem_peak, mem_total, power, core_max, host_busy, tree_cores;
	char finding_id[40];
	char finding[240];             /* the top finding's title in English (results.json) */
	char finding_local[240];       /* the same in the language in force (the text) */
	double diff, diff_lo, diff_hi; /* mean step time vs baseline, 95 % CI (as compare's) */
	int verdict;         /* -1 faster than baseline, 0 no claim, +1 slower: compare's verdict */
	bool below_min_diff; /* significant but under compare_min_diff_pct: no meaningful change */
} sweep_result;

typedef struct {
	int var;
	int *cfg; /* configurations along this variable, ordered by value */
	int n;
	int knee;           /* index into cfg, -1 none */
	bool gaining;       /* every step gained: no knee within the values (knee = the last) */
	int best;           /* index into cfg, -1 none */
	char why[600];      /* English, for results.json */
	char why_text[600]; /* the same in the user's language, for text and HTML */
} sweep_var_result;

typedef struct {
	const sweep_spec *sp;
	const sweep_plan *pl;
	const sweep_state *st;
	sweep_result *res; /* per configuration of pl */
	sweep_var_result vr[SWEEP_MAX_VARS];
	int best;          /* configuration with the highest throughput, -1 none */
	double knee_share; /* --knee */
	double headroom;   /* --headroom */
	int warmup;        /* --warmup-steps */
	/* the search */
	int search_var;
	long long search_good, search_bad, search_step;
	int search_best; /* configuration of the best throughput among the search's */
	bool have_fit;
	sweep_memfit fit;
	int fit_check; /* 1 consistent with the boundary found, 0 not, -1 nothing to check */
} sweep_results;

/* Read every recording and compute everything above. Returns 0. */
int sweep_results_compute(sweep_results *R);
/* The part after reading (R->res filled): significance, best, curves, knees, why, memory. */
void sweep_results_analyse(sweep_results *R);
void sweep_results_free(sweep_results *R);
/* The throughput a configuration is judged by: samples/s when known, else steps/s. */
double sweep_result_thr(const sweep_results *R, int cfg);

void sweep_render_text(FILE *out, const sweep_results *R);
void sweep_render_json(FILE *out, const sweep_results *R);
void sweep_render_html(FILE *out, const sweep_results *R);

/* ---- the whole sweep (drive.c): plan, runs, search, results ---- */
#define SWEEP_OPTS_MAX_ENV 64
typedef struct {
	sweep_spec sp;
	const char *dir;
	char *env[SWEEP_OPTS_MAX_ENV];
	long long steps, warmup;
	int64_t duration_ns, interval_ns;
	double knee, headroom;
	const char *step_re;
	bool dry_run, json, queue;
	const char *resume, *queue_dir, *queue_mem;
} sweep_opts;

/* Run the sweep described by o into st (new, or loaded by --resume); gpus: global --gpus.
 * Returns the exit code. */
int sweep_drive(sweep_opts *o, sweep_state *st, const char *gpus);

#endif
