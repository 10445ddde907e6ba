/*
 * prom.h - Prometheus as a source: range queries over the HTTP API
 * (/api/v1/query_range, which Thanos, Mimir and VictoriaMetrics serve too)
 * and the fleet model built from dcgm-exporter's series: one timeline per
 * node, its GPUs in the `gpu` label's order, so the diagnosis rules that
 * explain one recording explain every node of a cluster.
 *
 *   prom_conn c = {.url = "http://prom:9090", .timeout_s = 30, .retries = 2};
 *   prom_fleet_query q = {.from = t0, .to = t1, .step = 15, .match = "Hostname=~\"a.*\""};
 *   prom_fleet fl;
 *   gw_fail err = {0};
 *   if (prom_fleet_load(&c, &q, &fl, &err)) ... gw_fail_print(&err);
 *   ...
 *   prom_fleet_free(&fl);
 *
 * Nothing here prints: failures are gw_fail (util/fail.h) for the face.
 */
#ifndef GPUWHY_PROM_PROM_H
#define GPUWHY_PROM_PROM_H

#include <stdbool.h>
#include <stddef.h>

#include "gpu/metrics.h"
#include "model/timeline.h"
#include "util/fail.h"

/* Prometheus refuses a range query of more than 11,000 points per series. */
#define PROM_MAX_POINTS 11000
/* One request asks for at most this many, leaving room for rounding at the ends. */
#define PROM_CHUNK_POINTS 10000

typedef struct {
	const char *url;         /* base, e.g. http://127.0.0.1:9090 (a path prefix is kept) */
	const char *bearer_file; /* a file holding the bearer token, or NULL */
	const char *cacert;      /* a CA bundle for https, or NULL */
	double timeout_s;        /* per request, connect included */
	int retries;             /* extra tries after a connection failure, a timeout or a 5xx */
} prom_conn;

typedef struct {
	char *name, *value;
} prom_label;

/* One series of a range answer: its labels (sorted by name) and its points. */
typedef struct {
	prom_label *labels;
	int nlabels;
	double *t, *v;
	int n, cap;
} prom_series;

typedef struct {
	prom_series *s;
	int n, cap;
} prom_matrix;

/* The value of label name on s, NULL when absent. */
const char *prom_label_get(const prom_series *s, const char *name);
void prom_matrix_free(prom_matrix *m);

/*
 * Parse one /api/v1/query_range answer into m, appending points to the
 * series with the same labels (so chunks of one query join up). Returns 0,
 * or GW_EXIT_ENV with *err filled: what (the query, may be NULL), why in
 * English ("ERRORTYPE: ERROR" from Prometheus, or what is malformed).
 */
int prom_parse_matrix(const char *body, size_t len, prom_matrix *m, const char *what, gw_fail *err);

/*
 * Chunk k (from 0) of a range query over [from, to] at step: [*start, *end]
 * holds at most PROM_CHUNK_POINTS points of the grid from + i*step, and
 * chunk k + 1 begins one step after chunk k's last point, so no point is
 * asked for twice or left out. False when chunk k would begin after to.
 */
bool prom_range_chunk(double from, double to, double step, long k, double *start, double *end);

/* As prom_range_chunk, with chunks of at most points points (1 .. PROM_CHUNK_POINTS). */
bool prom_range_chunk_n(double from, double to, double step, long points, long k, double *start,
                        double *end);

/* One range query of a batch: expr over [from, to], at most PROM_CHUNK_POINTS points. */
typedef struct {
	const char *expr;
	double from, to;
	int tag; /* the caller's: which metric, which chunk */
} prom_req;

typedef struct {
	double step;
	int parallel; /* requests in flight at once; below 1 is 1 */
	/* Each answer, parsed, as it arrives: one call at a time (the batch's lock), from any of
	 * the batch's threads; it may take what m holds (leaving it zeroed), else m is freed
	 * after. */
	void (*sink)(void *ctx, int tag, prom_matrix *m);
	/* After each request that succeeded: done of total, under the same lock; may be NULL. */
	void (*progress)(void *ctx, int done, int total);
	void *ctx;
} prom_batch;

/*
 * Run the n requests with at most b->parallel at once (threads, each request
 * with the connection's timeout and retries), parsing each answer in its
 * thread. The first failure stops new requests and is returned (0 or the
 * exit code of err) once those in flight are done.
 */
int prom_fetch(const prom_conn *c, const prom_req *r, int n, const prom_batch *b, gw_fail *err);

/*
 * Run expr over [from, to] at step (seconds, epoch), in chunks of at most
 * PROM_CHUNK_POINTS points, into m. Returns 0 or the exit code of err.
 */
int prom_query_range(const prom_conn *c, const char *expr, double from, double to, double step,
                     prom_matrix *m, gw_fail *err);

/* The metrics the fleet reads, in query order. */
typedef enum {
	PF_UTIL,
	PF_FB_USED,
	PF_FB_FREE,
	PF_POWER,
	PF_TEMP,
	PF_SM_CLOCK,
	PF_REASONS,
	PF_XID,
	PF_SM_ACTIVE,
	PF_POWER_LIMIT, /* DCGM_FI_DEV_POWER_MGMT_LIMIT: not in dcgm-exporter's default set */
	PF__COUNT
} prom_fleet_metric;

typedef struct {
	double from, to, step; /* epoch seconds; step > 0 */
	const char *match;     /* label matchers, with or without braces; NULL or "" for all */
	int parallel;          /* requests at once; 0 for PROM_PARALLEL */
	/* Requests done of (about) total, for a progress bar; may be NULL. */
	void (*progress)(void *ctx, int done, int total);
	void *progress_ctx;
} prom_fleet_query;

#define PROM_PARALLEL 4
/* The host queries node_exporter answers (CPU, disk, pressure), in query order. */
#define PROM_HOST_QUERIES 10
/* One request asks for about this many points of all its series together (about 3 MB of JSON,
 * some 2 MB once read), so memory is bounded by the requests in flight, not by the fleet's
 * size. The first request of the utilization series asks for PROM_PROBE_POINTS per series and
 * tells how many series there are. */
#define PROM_REQ_POINTS 125000L
#define PROM_PROBE_POINTS 240L

/* A GPU's name in the fleet. */
typedef struct {
	int gpu;        /* the gpu label */
	char uuid[96];  /* the UUID label, "" when absent */
	char model[96]; /* modelName */
} prom_fleet_gpu;

typedef struct {
	char host[256];      /* Hostname (or hostname, or instance) */
	char host_label[16]; /* which of those labels named it */
	char instance[256];  /* the scrape's instance: gpuwhy exporter's own series carry no host */
	timeline *tl;        /* samples at from + k*step; GPU positions as in gpus */
	prom_fleet_gpu gpus[GPU_MAX];
	int *job[GPU_MAX]; /* per sample: index into prom_fleet.jobs, -1 none */
	/* Kubernetes (dcgm-exporter's pod mapping): per sample, the pod's namespace and name as
	 * indices into prom_fleet.kube, -1 none. */
	int *ns[GPU_MAX], *pod[GPU_MAX];
} prom_node;

/* A finding gpuwhy exporter reported itself (its gpuwhy_finding series). */
typedef struct {
	int node; /* index into prom_fleet.node */
	int gpu;  /* the gpu label */
	char rule[48], severity[16];
	double t0, t1; /* the first and last sample where it held */
	int samples;   /* samples where it held */
} prom_own_finding;

typedef struct {
	double from, to, step;
	int n; /* samples per node */
	prom_node *node;
	int nnodes;
	char **jobs;      /* hpc_job (else namespace/pod) values seen */
	char **job_users; /* per job: the `user` label of its series, NULL when none */
	int njobs;
	char **kube; /* namespace and pod values seen (namespace, else pod_namespace; pod, else
	                pod_name) */
	int nkube;
	/* The PromQL each metric was read with ("" when it was not asked), and
	 * whether it answered with any series. */
	char expr[PF__COUNT][640];
	bool have[PF__COUNT];
	int gpus_dropped;   /* GPUs beyond GPU_MAX on one node, left out */
	bool have_node_cpu; /* node_exporter's CPU series were read into the host summary */
	/* Per host query (prom_host_series): whether it filled any node's host series. */
	bool have_host[PROM_HOST_QUERIES];
	prom_own_finding *own; /* by node, GPU, rule */
	int nown;
} prom_fleet;

/* Query i's host metric, and node_exporter's series it reads. */
host_metric_id prom_host_metric(int i);
const char *prom_host_series(int i);
/* The query that fills host metric id, -1 when none does. */
int prom_host_query_of(host_metric_id id);
/* The rate range (seconds) of the host queries at step. */
int prom_host_range(double step);
/* Query i's PromQL, inst the instance matchers with a leading comma ("" for every node):
 * ,instance=~"node01(:[0-9]+)?" cites one node. */
void prom_host_expr(int i, const char *inst, int range, char *out, size_t len);
/* Query i's PromQL for one node (its host, as the instance label names it) at step. */
void prom_host_node_expr(int i, const char *host, double step, char *out, size_t len);

/* The DCGM name a fleet metric reads first (from the metric table). */
const char *prom_fleet_metric_name(prom_fleet_metric m);
/* The metric table's id of a fleet metric. */
gpu_metric_id prom_fleet_metric_id(prom_fleet_metric m);

/*
 * Query every fleet metric and build one timeline per node. A matcher that
 * matches no GPU utilization series is an error (code GW_EXIT_PROBLEMS is
 * not used: GW_EXIT_ENV, "no series"), so is any HTTP or API failure.
 */
int prom_fleet_load(const prom_conn *c, const prom_fleet_query *q, prom_fleet *out, gw_fail *err);
void prom_fleet_free(prom_fleet *fl);

/*
 * node_exporter's node_cpu_seconds_total, where scraped, into each node's host
 * summary (busiest core, mean busy, iowait; percent), its instance label's host
 * matched to the node. Called by prom_fleet_load. Returns 0 or err's code.
 */
int prom_fleet_host(const prom_conn *c, const prom_fleet_query *q, prom_fleet *fl, gw_fail *err);

/* The node of a series: its Hostname (else hostname, else instance) label; a series without
 * a host label of its own (gpuwhy exporter's gpuwhy_*) by the instance of its node's
 * utilization series. NULL when none of the fleet's. */
prom_node *prom_series_node(prom_fleet *fl, const prom_series *s);

/*
 * gpuwhy exporter's own findings (gpuwhy_finding == 1 at each step), where it is scraped, into
 * fl->own, joined to the node by instance. Called by prom_fleet_load. Returns 0 or err's code.
 */
int prom_fleet_own(const prom_conn *c, const prom_fleet_query *q, prom_fleet *fl, gw_fail *err);
/* prom_own.c: each GPU's vendor from gpuwhy exporter's gpuwhy_gpu_info (its vendor label)
 * into the nodes' timelines (tl->gpu[].vendor); GPUs without one stay unknown. */
int prom_fleet_vendor(const prom_conn *c, const prom_fleet_query *q, prom_fleet *fl, gw_fail *err);

/* The matchers inside --match's braces ('{a="b"}' or 'a="b"', spaces around left out): where
 * they start in match, their length in *n (0: none). */
const char *prom_match_inner(const char *match, size_t *n);
/* The selector text for a metric: NAME{match} (NAME alone when match is empty). */
void prom_selector(const char *name, const char *match, char *out, size_t len);

#endif
