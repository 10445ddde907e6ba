/*
 * fleet.h - `gpuwhy fleet`: why every GPU of a cluster idles, from the
 * Prometheus it already runs. prom/ reads dcgm-exporter's series into one
 * timeline per node; here each GPU's samples get a state, each node's
 * windows go through the same diagnosis rules as a recording, and the
 * findings are ranked by the GPU-hours they cost, each with the PromQL and
 * time range behind it. `gpuwhy sim fleet` writes such series for a
 * simulated cluster with planted problems (simfleet.c).
 */
#ifndef GPUWHY_FLEET_FLEET_H
#define GPUWHY_FLEET_FLEET_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "diagnose/diag.h"
#include "prom/prom.h"
#include "util/fail.h"

/* What a GPU did at one sample; the first that holds, in this order, wins. */
typedef enum {
	FS_LOST,         /* its series stopped, or a hardware Xid: lost or faulted */
	FS_THROTTLED,    /* working, clocks held down by heat or a hardware slowdown */
	FS_POWER_CAPPED, /* working, clocks held down by the power cap */
	FS_BUSY,         /* working (utilization above idle_util_pct) */
	FS_IDLE_HOLDING, /* idle with memory above idle_mem_pct of capacity */
	FS_IDLE_EMPTY,   /* idle and empty */
	FS__COUNT,
	FS_NODATA = FS__COUNT /* no utilization sample */
} fleet_state;

/* "busy", "idle-empty", ... (stable, for JSON and tests). */
const char *fleet_state_id(fleet_state s);
/* A few words for people (English: _() it to print). */
const char *fleet_state_label(fleet_state s);

typedef enum {
	FLEET_BY_NODE,
	FLEET_BY_GPU,
	FLEET_BY_JOB,
	FLEET_BY_USER,      /* the job's user: Slurm's, else a user label */
	FLEET_BY_NAMESPACE, /* Kubernetes: the pod's namespace label */
	FLEET_BY_POD,       /* Kubernetes: namespace/pod */
} fleet_by;

/* "node", "gpu", "job", "user", "namespace", "pod" (as --by spells them). */
const char *fleet_by_id(fleet_by b);

typedef struct {
	double h[FS__COUNT]; /* GPU-hours per state */
	double nodata_h;     /* GPU-hours without a sample */
} fleet_hours;

/* GPU-hours that did no full-speed work: every state but busy. */
double fleet_hours_lost(const fleet_hours *h);

typedef struct {
	char name[320]; /* node, node/gpu, job, namespace or namespace/pod ("(no job)", "(no
	                   namespace)", "(no pod)" for samples without one) */
	fleet_hours hours;
} fleet_group;

#define FLEET_HOST_PROMQL 3

typedef struct {
	int node; /* index into prom_fleet.node */
	diag_rule rule;
	diag_severity severity;
	uint64_t gpus;   /* positions on the node */
	double t0, t1;   /* epoch seconds: the windows it was found in */
	double lost_h;   /* GPU-hours of its GPUs in [t0, t1) lost: not busy, or 1 - util of busy */
	char title[240]; /* the first window's title */
	char job[160];   /* the job on its GPUs at most samples, "" none */
	char promql[1400]; /* the query behind its evidence */
	/* node_exporter's queries behind its host evidence (a saturated core, a busy disk, I/O
	 * pressure), for its node alone; those whose condition held first. */
	char host_promql[FLEET_HOST_PROMQL][560];
	int nhost_promql;
	uint32_t host_met, host_seen; /* host queries (bits) its evidence cites; met: held */
	/* Held by the power cap: mean draw in its power-capped samples and the lowest limit
	 * (DCGM_FI_DEV_POWER_MGMT_LIMIT) there, W; NAN when not such a finding or not known. */
	double power_w, limit_w;
} fleet_finding;

typedef struct {
	fleet_hours total;
	fleet_group *group;
	int ngroups;
	fleet_finding *f; /* ranked: most GPU-hours first */
	int nf, capf;
	char not_checked[8][480]; /* distinct notes of rules that could not run */
	int nnot_checked;
	/* Distinct notes past those 8 (one per node beyond the eighth on a cluster of AMD
	 * GPUs): counted, so the report says how many it left out; their hashes tell repeats
	 * from new ones. */
	int not_checked_more;
	uint64_t *more_hash;
	int ngpus;
	/* The state of every sample, per node: states[k][g * n + s] for GPU position g and
	 * sample s (a fleet_state; FS_NODATA without one), for the heat map. */
	unsigned char **states;
	int nstates;
} fleet_report;

/* Which table --format csv writes: each its own header, every row the same columns. */
typedef enum {
	FLEET_CSV_STATES,   /* group_by,group,state,gpu_hours,share */
	FLEET_CSV_FINDINGS, /* fleet's findings, ranked */
	FLEET_CSV_EXPORTER, /* the exporters' own (gpuwhy_finding) */
} fleet_csv;

typedef struct {
	fleet_by by;
	fleet_csv csv;   /* the table --format csv writes */
	double window_s; /* diagnosis window */
	bool localize;   /* titles in the user's language (text), English (JSON) */
	/* --by user: per prom_fleet.jobs, the job's user (Slurm's, else the series' user
	 * label); NULL where unknown */
	char *const *job_user;
} fleet_opts;

/* node_exporter's series (distinct names) with no sample on any node, into names (at most max),
 * with what their absence leaves unchecked (English: _() it to print). Returns how many. */
int fleet_host_absent(const prom_fleet *fl, const char **names, const char **why, int max);

void fleet_analyse(const prom_fleet *fl, const fleet_opts *o, fleet_report *out);
void fleet_report_free(fleet_report *r);

void fleet_render_text(const prom_fleet *fl, const fleet_opts *o, const fleet_report *r, FILE *out);
void fleet_render_json(const prom_fleet *fl, const fleet_opts *o, const fleet_report *r, FILE *out);
/* o->csv's table: states, one row per group and state: group_by,group,state,gpu_hours,share
 * (fleet-wide rows first, group_by "fleet"); findings, one row per finding, ranked; exporter,
 * one row per finding a gpuwhy exporter reported itself. The columns are in docs/fleet.md. */
void fleet_render_csv(const prom_fleet *fl, const fleet_opts *o, const fleet_report *r, FILE *out);
/* One self-contained page (inline CSS and SVG, no script, no network): the hours, the worst
 * groups, the ranked findings with their PromQL and a heat map of every GPU against time. */
void fleet_render_html(const prom_fleet *fl, const fleet_opts *o, const fleet_report *r, FILE *out);

/* The heat map's columns: at most FLEET_HEAT_COLS, each *per samples (the last may hold
 * fewer). Returns the number of columns. */
#define FLEET_HEAT_COLS 288
int fleet_heat_cols(int n, int *per);
/* The state most samples [a, b) of GPU position g on node k had (ties go to the first in
 * fleet_state's order, the worse); FS_NODATA when most had none. */
fleet_state fleet_heat_cell(const fleet_report *r, int n, int k, int g, int a, int b);

/* ---- gpuwhy sim fleet ---- */
typedef struct {
	int nodes, gpus_per_node;
	double hours, step; /* seconds */
	double start;       /* epoch seconds of the first sample */
	const char *plant;  /* plant file, or NULL: every GPU busy and healthy */
} simfleet_opts;

/* Write the OpenMetrics text (ending in # EOF) to out. Returns 0 or err's code. */
int simfleet_write(const simfleet_opts *o, FILE *out, gw_fail *err);

/*
 * The same fleet point by point, for serving range queries without the text
 * (bench/fleet_serve.c): NULL when the plant file is bad (err says why).
 */
typedef struct simfleet simfleet;
simfleet *simfleet_open(const simfleet_opts *o, gw_fail *err);
void simfleet_close(simfleet *sf);
/* Samples per series (at o->start + s * o->step). */
long simfleet_samples(const simfleet *sf);
/* Whether the text has node_exporter series (a node with a data-starved plant). */
bool simfleet_node_cpu(const simfleet *sf);
/* Sample s of metric m of GPU g on node ni (from 0): false where the text has no point, else
 * the value as the text writes it into val, and in *job what tells its series apart (give it
 * to simfleet_labels). */
bool simfleet_point(const simfleet *sf, int ni, int g, long s, prom_fleet_metric m, char *val,
                    size_t len, const void **job);
/* That series' labels as the text writes them, braces included. */
void simfleet_labels(const simfleet *sf, int ni, int g, const void *job, char *buf, size_t len);

#endif
