/*
 * plan.h - what a sweep varies: its variables (--vary, --search), the
 * specification they make with the command, and the plan of configurations
 * (plan.c). Pure.
 *
 *   sweep_spec sp;  sweep_spec_init(&sp);
 *   sweep_var_parse(&sp, "workers=1,2,4", false, err, n);   // --vary
 *   sweep_var_parse(&sp, "batch=pow2:8..4096", true, ...);  // --search
 *   sweep_spec_check(&sp, err, n);                          // placeholders
 *   sweep_plan pl;  sweep_plan_build(&sp, &pl, err, n);     // configurations
 */
#ifndef GPUWHY_SWEEP_PLAN_H
#define GPUWHY_SWEEP_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "util/fail.h"

#define SWEEP_MAX_VARS 8
#define SWEEP_NAME_MAX 32
#define SWEEP_DEFAULT_MAX_VALUES 64
#define SWEEP_DEFAULT_MAX_RUNS 1000

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
int sweep_var_parse(sweep_spec *sp, const char *arg, bool search, gw_fail *err);
/* Every placeholder names a variable, every variable is used; the batch variable. */
int sweep_spec_check(sweep_spec *sp, gw_fail *err);
/* Both return 0, or GW_EXIT_USAGE with *err filled ("sweep", the why, --help as the hint). */
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

/* The listed configurations: baseline first, then one variable at a time (or the grid).
 * Returns 0, or GW_EXIT_USAGE with *err filled. */
int sweep_plan_build(const sweep_spec *sp, sweep_plan *pl, gw_fail *err);
/* Add (or find) the configuration of the baseline with variable v set to value. */
int sweep_plan_add(sweep_plan *pl, const sweep_spec *sp, int v, const char *value);
void sweep_plan_free(sweep_plan *pl);
void sweep_config_name(const sweep_spec *sp, sweep_config *c);

#endif
