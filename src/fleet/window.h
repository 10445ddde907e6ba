/*
 * window.h - one GPU's, one node's or one job's window of a cluster's
 * Prometheus as a timeline, so `report` and `compare` explain it exactly as
 * they explain a recording. A window is named by a spec, given as options
 * (report's --node/--gpu/--job/--from/--to/--since/--step) or as one
 * argument of `key=value` pairs (compare's sides):
 *
 *   node=node03,gpu=2,from=2026-01-02T00:00:00Z,to=2026-01-02T06:00:00Z
 *   job=101                    (the job's nodes, GPUs and times from Slurm,
 *                               else from dcgm-exporter's hpc_job label)
 *
 * Parsing and checking a spec are pure; loading asks Prometheus (and Slurm).
 */
#ifndef GPUWHY_FLEET_WINDOW_H
#define GPUWHY_FLEET_WINDOW_H

#include <stdbool.h>
#include <stddef.h>

#include "diagnose/diag.h"
#include "prom/prom.h"
#include "util/fail.h"

typedef struct {
	char node[256];  /* "" unless a node window */
	int gpu;         /* the gpu label, -1 for every GPU of the node */
	char job[128];   /* "" unless a job window */
	double from, to; /* epoch seconds, 0 when not given */
	double since;    /* seconds before `to` (or now), 0 when not given */
	double step;     /* seconds, 0: chosen from the range */
} fleet_window_spec;

/* An empty spec (gpu -1, nothing given). */
void fleet_window_spec_init(fleet_window_spec *s);

/* Epoch seconds or RFC 3339 UTC (2026-01-02T03:04:05Z) into *out; false otherwise. */
bool fleet_parse_time(const char *text, double *out);

/*
 * "node=N,gpu=I,from=T,to=T,since=D,step=D" or "job=ID,..." into s (keys in
 * any order, each at most once). False on an unknown key, a bad value or a
 * key given twice, with what (the pair at fault) and why (an English
 * constant marked N_(), to print with _()); the combination is checked by
 * fleet_window_check.
 */
bool fleet_window_spec_parse(const char *text, fleet_window_spec *s, char *what, size_t len,
                             const char **why);

/*
 * Whether the spec names one window: a node or a job (not both), gpu only
 * with a node, since not with from, a node window with a time range, from
 * before to. False with why (an English constant marked N_()).
 */
bool fleet_window_check(const fleet_window_spec *s, const char **why);

/*
 * The window's range: from, to and step (epoch seconds) once the spec's
 * parts and `now` are combined; the step, when not given, keeps a window at
 * about 2,000 samples and at least 15 s apart.
 */
void fleet_window_range(const fleet_window_spec *s, double now, double *from, double *to,
                        double *step);

/* What a window is, for a report's header: "node03 GPU 2 (Prometheus http://...)", "job 101
 * of alice on node01,node02 (Slurm) (Prometheus http://...)"; tl the loaded window or NULL. */
void fleet_window_describe(const fleet_window_spec *s, const timeline *tl, const char *url,
                           char *out, size_t len);

/*
 * Load the window: one timeline (a job on several nodes: their GPUs side by
 * side, each named by its node) and its meta (hostname, the job, the user).
 * Series Prometheus lacks stay absent. Returns 0, or err's exit code.
 */
int fleet_window_load(const prom_conn *c, const fleet_window_spec *s, timeline **tl,
                      diag_meta *meta, gw_fail *err);

/* Where `fleet --job ID` looks: Slurm's nodes (and GPUs) over its time, else its hpc_job label. */
typedef struct {
	char match[4096]; /* label matchers, without braces */
	bool slurm;       /* from Slurm: from and to are the job's */
	double from, to;
} fleet_job_where;

/* Fill *out for job; 0, or err's code (a job Slurm knows with no series in Prometheus). */
int fleet_job_scope(const prom_conn *c, const char *job, double now, fleet_job_where *out,
                    gw_fail *err);

/* users[i] (malloc'd) for each jobs[i] without one that Slurm knows (sacct, else scontrol). */
void fleet_job_users(char *const *jobs, int n, char **users);

#endif
