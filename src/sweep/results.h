/*
 * results.h - a sweep's results: every recording read, compared with the
 * baseline, the best configuration, the knees, the memory model (results.c);
 * rendered as text, JSON or HTML (results_render.c).
 */
#ifndef GPUWHY_SWEEP_RESULTS_H
#define GPUWHY_SWEEP_RESULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "sweep/memfit.h"
#include "sweep/plan.h"
#include "sweep/state.h"

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
	bool below_min_diff; /* significant but under compare_min_diff_pct */
	bool equivalent;     /* the whole interval within compare_min_diff_pct: no change */
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

#endif
