/*
 * prom_fleet.c - dcgm-exporter's series of a whole cluster into one
 * timeline per node. A GPU is its node (the Hostname label, as released
 * dcgm-exporters spell it, else hostname, else the scrape's instance) and
 * its gpu label; the series of one GPU split by job labels (hpc_job, pod)
 * join into one, and the job at each sample is kept beside the timeline.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/metrics.h"
#include "gpu/xid.h"
#include "prom/prom.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/xalloc.h"

/* dcgm-exporter 4.x's name for the clock event reasons (DCGM renamed the field). */
#define PROM_CLOCKS_EVENT_REASONS "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"
/* gpuwhy exporter's reasons, one 0/1 series per reason: they are there by default, while the
 * DCGM bitmask is not in dcgm-exporter's (nor gpuwhy exporter's) default counters. */
#define PROM_GPUWHY_REASONS "gpuwhy_gpu_throttle_reason"

static const gpu_metric_id fleet_ids[PF__COUNT] = {
    [PF_UTIL] = GM_UTIL_GPU,           [PF_FB_USED] = GM_MEM_USED,
    [PF_FB_FREE] = GM_MEM_FREE,        [PF_POWER] = GM_POWER_DRAW,
    [PF_TEMP] = GM_TEMP_GPU,           [PF_SM_CLOCK] = GM_CLK_SM,
    [PF_REASONS] = GM_CLK_REASONS,     [PF_XID] = GM_XID_LAST,
    [PF_SM_ACTIVE] = GM_GPM_SM_ACTIVE, [PF_POWER_LIMIT] = GM_POWER_LIMIT,
};

gpu_metric_id prom_fleet_metric_id(prom_fleet_metric m)
{
	return fleet_ids[m];
}

const char *prom_fleet_metric_name(prom_fleet_metric m)
{
	return gpu_metrics[fleet_ids[m]].dcgm;
}

const char *prom_match_inner(const char *match, size_t *n)
{
	const char *m = match ? match : "";
	while (*m == ' ')
		m++;
	*n = strlen(m);
	while (*n && m[*n - 1] == ' ')
		(*n)--;
	if (*n >= 2 && m[0] == '{' && m[*n - 1] == '}')
		m++, *n -= 2;
	return m;
}

void prom_selector(const char *name, const char *match, char *out, size_t len)
{
	size_t n;
	const char *m = prom_match_inner(match, &n);
	if (n)
		snprintf(out, len, "%s{%.*s}", name, (int)n, m);
	else
		snprintf(out, len, "%s", name);
}

static const char *const host_labels[] = {"Hostname", "hostname", "instance"};

static const char *series_host_label(const prom_series *s)
{
	for (size_t i = 0; i < sizeof host_labels / sizeof *host_labels; i++)
		if (prom_label_get(s, host_labels[i]))
			return host_labels[i];
	return host_labels[0];
}

static const char *series_host(const prom_series *s)
{
	const char *h = prom_label_get(s, series_host_label(s));
	return h ? h : "";
}

static int series_gpu(const prom_series *s)
{
	const char *g = prom_label_get(s, "gpu");
	char *end;
	long v = g ? strtol(g, &end, 10) : -1;
	return g && !*end && v >= 0 && v < 1000000 ? (int)v : -1;
}

/* The first of two labels that is set and not empty, else NULL. */
static const char *label2(const prom_series *s, const char *a, const char *b)
{
	const char *v = prom_label_get(s, a);
	if (!v || !*v)
		v = prom_label_get(s, b);
	return v && *v ? v : NULL;
}

/* The pod's labels as dcgm-exporter writes them, or with -o (--use-old-namespace). */
static const char *series_pod(const prom_series *s)
{
	return label2(s, "pod", "pod_name");
}

static const char *series_job(const prom_series *s)
{
	const char *j = prom_label_get(s, "hpc_job");
	return j && *j ? j : series_pod(s);
}

static prom_node *node_of(prom_fleet *fl, const char *host)
{
	for (int i = 0; i < fl->nnodes; i++)
		if (!strcmp(fl->node[i].host, host))
			return &fl->node[i];
	return NULL;
}

/* The node of a series; one without a host label of its own (gpuwhy exporter's gpuwhy_*
 * series) by the instance its node's utilization series was scraped from. */
prom_node *prom_series_node(prom_fleet *fl, const prom_series *s)
{
	prom_node *nd = node_of(fl, series_host(s));
	const char *inst = prom_label_get(s, "instance");
	if (nd || prom_label_get(s, "Hostname") || prom_label_get(s, "hostname") || !inst)
		return nd;
	for (int i = 0; i < fl->nnodes; i++)
		if (!strcmp(fl->node[i].instance, inst))
			return &fl->node[i];
	return NULL;
}

/* The position of the GPU with this label on the node, -1 when not there. */
static int gpu_pos(const prom_node *nd, int gpu)
{
	for (int g = 0; nd->tl && g < nd->tl->ngpu; g++)
		if (nd->gpus[g].gpu == gpu)
			return g;
	return -1;
}

static int gpu_cmp(const void *a, const void *b)
{
	return ((const prom_fleet_gpu *)a)->gpu - ((const prom_fleet_gpu *)b)->gpu;
}

static int node_cmp(const void *a, const void *b)
{
	return strcmp(((const prom_node *)a)->host, ((const prom_node *)b)->host);
}

/* Nodes and their GPUs from the utilization series (the nm chunks of its answer); timelines with
 * every sample, all absent. */
static void build_nodes(prom_fleet *fl, const prom_matrix *ms, int nm)
{
	size_t total = 1;
	for (int c = 0; c < nm; c++)
		total += (size_t)ms[c].n;
	prom_fleet_gpu(*gpus)[GPU_MAX] = gw_xcalloc(total, sizeof *gpus);
	int *ngpu = gw_xcalloc(total, sizeof *ngpu);
	fl->node = gw_xcalloc(total, sizeof *fl->node);
	for (int c = 0; c < nm; c++)
		for (int i = 0; i < ms[c].n; i++) {
			const prom_series *s = &ms[c].s[i];
			int gpu = series_gpu(s);
			prom_node *nd = node_of(fl, series_host(s));
			if (!nd) {
				nd = &fl->node[fl->nnodes++];
				snprintf(nd->host, sizeof nd->host, "%s", series_host(s));
				snprintf(nd->host_label, sizeof nd->host_label, "%s",
				         series_host_label(s));
				const char *inst = prom_label_get(s, "instance");
				snprintf(nd->instance, sizeof nd->instance, "%s", inst ? inst : "");
			}
			int k = (int)(nd - fl->node), j;
			for (j = 0; j < ngpu[k] && gpus[k][j].gpu != gpu; j++)
				;
			if (j < ngpu[k] || gpu < 0)
				continue;
			if (ngpu[k] == GPU_MAX) {
				fl->gpus_dropped++;
				continue;
			}
			prom_fleet_gpu *pg = &gpus[k][ngpu[k]++];
			pg->gpu = gpu;
			snprintf(pg->uuid, sizeof pg->uuid, "%s",
			         prom_label_get(s, "UUID") ? prom_label_get(s, "UUID") : "");
			snprintf(pg->model, sizeof pg->model, "%s",
			         prom_label_get(s, "modelName") ? prom_label_get(s, "modelName")
			                                        : "");
		}
	for (int k = 0; k < fl->nnodes; k++) {
		prom_node *nd = &fl->node[k];
		qsort(gpus[k], (size_t)ngpu[k], sizeof **gpus, gpu_cmp);
		memcpy(nd->gpus, gpus[k], sizeof nd->gpus);
		nd->tl = tl_new(ngpu[k], 0);
		nd->tl->t0_wall = fl->from;
		snprintf(nd->tl->hostname, sizeof nd->tl->hostname, "%s", nd->host);
		tl_reserve(nd->tl, fl->n);
		for (int s = 0; s < fl->n; s++)
			tl_add_sample(nd->tl, s * fl->step);
		for (int g = 0; g < ngpu[k]; g++) {
			tl_gpu *tg = &nd->tl->gpu[g];
			tg->index = nd->gpus[g].gpu;
			snprintf(tg->uuid, sizeof tg->uuid, "%s", nd->gpus[g].uuid);
			snprintf(tg->name, sizeof tg->name, "%s", nd->gpus[g].model);
			nd->job[g] = gw_xmalloc((size_t)(fl->n ? fl->n : 1) * sizeof(int));
			nd->ns[g] = gw_xmalloc((size_t)(fl->n ? fl->n : 1) * sizeof(int));
			nd->pod[g] = gw_xmalloc((size_t)(fl->n ? fl->n : 1) * sizeof(int));
			for (int s = 0; s < fl->n; s++)
				nd->job[g][s] = nd->ns[g][s] = nd->pod[g][s] = -1;
		}
	}
	if (fl->nnodes > 1)
		qsort(fl->node, (size_t)fl->nnodes, sizeof *fl->node, node_cmp);
	free(gpus);
	free(ngpu);
}

/* The index of v in the table (*tab, *n), added when new; -1 for NULL. */
static int intern(char ***tab, int *n, const char *v)
{
	if (!v)
		return -1;
	for (int i = 0; i < *n; i++)
		if (!strcmp((*tab)[i], v))
			return i;
	*tab = gw_xrealloc(*tab, (size_t)(*n + 1) * sizeof **tab);
	(*tab)[*n] = gw_xstrdup(v);
	return (*n)++;
}

/* The index of a job, its user slot kept beside it (NULL until a user label names one). */
static int job_index(prom_fleet *fl, const char *job)
{
	int n0 = fl->njobs, ji = intern(&fl->jobs, &fl->njobs, job);
	if (fl->njobs > n0) {
		fl->job_users =
		    gw_xrealloc(fl->job_users, (size_t)fl->njobs * sizeof *fl->job_users);
		fl->job_users[ji] = NULL;
	}
	return ji;
}

/* The points of one metric into the nodes' timelines (in the table's units). */
static void fill_metric(prom_fleet *fl, prom_fleet_metric pm, const prom_matrix *m)
{
	gpu_metric_id id = fleet_ids[pm];
	/* dcgm-exporter writes GPM percentages as 0..1 ratios */
	double scale = 1.0 / gpu_metric_dcgm_value(id, 1.0);
	for (int i = 0; i < m->n; i++) {
		const prom_series *s = &m->s[i];
		prom_node *nd = prom_series_node(fl, s);
		int g = nd ? gpu_pos(nd, series_gpu(s)) : -1;
		if (g < 0)
			continue;
		/* who ran there: from the utilization series, which every GPU has */
		bool who = pm == PF_UTIL;
		int ji = who ? job_index(fl, series_job(s)) : -1,
		    ni =
		        who ? intern(&fl->kube, &fl->nkube, label2(s, "namespace", "pod_namespace"))
		            : -1,
		    pi = who ? intern(&fl->kube, &fl->nkube, series_pod(s)) : -1;
		const char *user = ji >= 0 ? prom_label_get(s, "user") : NULL;
		if (user && *user && !fl->job_users[ji])
			fl->job_users[ji] = gw_xstrdup(user);
		for (int k = 0; k < s->n; k++) {
			long at = lround((s->t[k] - fl->from) / fl->step);
			if (at < 0 || at >= fl->n || !isfinite(s->v[k]))
				continue;
			tl_set_gpu(nd->tl, g, id, (int)at, s->v[k] * scale);
			if (ji >= 0)
				nd->job[g][at] = ji;
			if (ni >= 0)
				nd->ns[g][at] = ni;
			if (pi >= 0)
				nd->pod[g][at] = pi;
		}
	}
}

/* Derived facts: total memory, Xid events, GPUs whose series stopped while the node's went on. */
static void derive(prom_fleet *fl, prom_node *nd)
{
	timeline *tl = nd->tl;
	int node_last = -1, last[GPU_MAX];
	for (int g = 0; g < tl->ngpu; g++) {
		last[g] = -1;
		double prev = 0;
		for (int s = 0; s < tl->n; s++) {
			double u = tl_gpu_at(tl, g, GM_MEM_USED, s),
			       f = tl_gpu_at(tl, g, GM_MEM_FREE, s);
			if (isfinite(u) && isfinite(f))
				tl_set_gpu(tl, g, GM_MEM_TOTAL, s, u + f);
			if (isfinite(tl_gpu_at(tl, g, GM_UTIL_GPU, s)))
				last[g] = s;
			double x = tl_gpu_at(tl, g, GM_XID_LAST, s);
			if (isfinite(x) && x > 0 && x != prev)
				tl_add_event(tl, tl->t[s], TL_EV_XID, g, (long)x,
				             gpu_xid_meaning((long)x));
			if (isfinite(x))
				prev = x;
		}
		if (last[g] > node_last)
			node_last = last[g];
	}
	/* A GPU gone for two steps and a minute before its node's other GPUs is lost. */
	int gap = 2 + (int)ceil(60.0 / fl->step);
	for (int g = 0; g < tl->ngpu; g++)
		if (last[g] >= 0 && last[g] + gap < node_last) {
			tl->gpu[g].lost_at_end = true;
			tl_add_event(tl, tl->t[last[g]], TL_EV_GPU_LOST, g, 0,
			             "its series stopped while the node's other GPUs went on");
		}
}

/* What a fleet's batches share: the fleet, the utilization answer's chunks, the progress. */
typedef struct {
	prom_fleet *fl;
	const prom_fleet_query *q;
	prom_matrix *util;      /* one per chunk */
	int done, total;        /* requests of earlier batches; of all (estimated until known) */
	char util_req[1400];    /* what is asked for the utilization: see util_request */
	char reasons_req[8192]; /* gpuwhy exporter's reasons as one mask: see reasons_request */
} fleet_load;

static void util_sink(void *ctx, int tag, prom_matrix *m)
{
	fleet_load *l = ctx;
	l->util[tag] = *m; /* kept until the nodes are built from every chunk */
	*m = (prom_matrix){0};
}

/* tag: the metric. Points go straight into the timelines; the answer is freed. */
static void metric_sink(void *ctx, int tag, prom_matrix *m)
{
	fleet_load *l = ctx;
	fill_metric(l->fl, (prom_fleet_metric)tag, m);
	l->fl->have[tag] |= m->n > 0;
}

static void load_progress(void *ctx, int done, int total)
{
	fleet_load *l = ctx;
	(void)total;
	if (l->q->progress)
		l->q->progress(l->q->progress_ctx, l->done + done, l->total);
}

/* The chunks of the metrics [m0, m1) over [from, to], points per chunk, appended to reqs. */
static int plan(const prom_fleet *fl, double from, double to, double step, int m0, int m1,
                long points, prom_req **reqs, int n)
{
	for (int pm = m0; pm < m1; pm++) {
		double a, b;
		for (long k = 0; prom_range_chunk_n(from, to, step, points, k, &a, &b); k++) {
			*reqs = gw_xrealloc(*reqs, (size_t)(n + 1) * sizeof **reqs);
			(*reqs)[n++] =
			    (prom_req){.expr = fl->expr[pm], .from = a, .to = b, .tag = pm};
		}
	}
	return n;
}

/* Points per request that keep an answer of nseries series within PROM_REQ_POINTS. */
static long chunk_points(int nseries)
{
	long p = PROM_REQ_POINTS / (nseries > 0 ? nseries : 1);
	return p < 60 ? 60 : p > PROM_CHUNK_POINTS ? PROM_CHUNK_POINTS : p;
}

static int run_batch(const prom_conn *c, fleet_load *l, prom_req *r, int n,
                     void (*sink)(void *, int, prom_matrix *), gw_fail *err)
{
	prom_batch b = {.step = l->q->step,
	                .parallel = l->q->parallel > 0 ? l->q->parallel : PROM_PARALLEL,
	                .sink = sink,
	                .progress = load_progress,
	                .ctx = l};
	int rc = prom_fetch(c, r, n, &b, err);
	l->done += n;
	free(r);
	return rc;
}

/* The utilization, with a NaN wherever a GPU has only its Xid series: a GPU that fell off the
 * bus before Prometheus's first scrape of it has no utilization at all, only dcgm-exporter's
 * (or gpuwhy exporter's) Xid series, kept at 79, and must still be one of its node's GPUs.
 * The two share their labels, so `or` keeps the utilization wherever there is one. */
static void util_request(fleet_load *l)
{
	char xid[640];
	prom_selector(prom_fleet_metric_name(PF_XID), l->q->match, xid, sizeof xid);
	snprintf(l->util_req, sizeof l->util_req, "%s or (%s * NaN)", l->fl->expr[PF_UTIL], xid);
}

static void util_reqs(fleet_load *l, prom_req *r, int n)
{
	for (int i = 0; i < n; i++)
		r[i].expr = l->util_req;
}

/* The utilization series, whose GPUs make the fleet; an error when there are none. A first
 * short request tells how many series there are, and so how long the others may be. */
static int load_util(const prom_conn *c, fleet_load *l, gw_fail *err)
{
	prom_fleet *fl = l->fl;
	const prom_fleet_query *q = l->q;
	prom_selector(prom_fleet_metric_name(PF_UTIL), q->match, fl->expr[PF_UTIL],
	              sizeof fl->expr[PF_UTIL]);
	util_request(l);
	double probe_end = fmin(q->to, q->from + (PROM_PROBE_POINTS - 1) * q->step);
	prom_req *r = NULL;
	int n =
	    plan(fl, q->from, probe_end, q->step, PF_UTIL, PF_UTIL + 1, PROM_PROBE_POINTS, &r, 0);
	util_reqs(l, r, n);
	l->util = gw_xcalloc(1, sizeof *l->util);
	l->total = PF__COUNT;
	r[0].tag = 0;
	int rc = run_batch(c, l, r, n, util_sink, err), nu = 1;
	if (rc == 0 && probe_end < q->to) {
		long points = chunk_points(l->util[0].n);
		r = NULL;
		n = plan(fl, probe_end + q->step, q->to, q->step, PF_UTIL, PF_UTIL + 1, points, &r,
		         0);
		util_reqs(l, r, n);
		l->total = 1 + n * PF__COUNT;
		l->util = gw_xrealloc(l->util, (size_t)(n + 1) * sizeof *l->util);
		for (int i = 0; i < n; i++) {
			r[i].tag = i + 1;
			l->util[i + 1] = (prom_matrix){0};
		}
		nu += n;
		rc = run_batch(c, l, r, n, util_sink, err);
	}
	int series = 0;
	for (int i = 0; i < nu; i++)
		series += l->util[i].n;
	if (rc == 0 && series == 0)
		rc = gw_fail_set(
		    err, GW_EXIT_ENV, fl->expr[PF_UTIL],
		    N_("check --match, the time range and that dcgm-exporter is scraped"),
		    "no series in that time range");
	if (rc == 0) {
		fl->have[PF_UTIL] = true;
		build_nodes(fl, l->util, nu);
		for (int i = 0; i < nu; i++)
			fill_metric(fl, PF_UTIL, &l->util[i]);
	}
	for (int i = 0; i < nu; i++)
		prom_matrix_free(&l->util[i]);
	free(l->util);
	return rc;
}

/* gpuwhy exporter's per-reason series summed into NVML's mask, each reason times its bit
 * (the series differ in their reason label, so `or` keeps them all); shown and cited as the
 * per-reason series themselves. */
static void reasons_request(fleet_load *l)
{
	prom_fleet *fl = l->fl;
	prom_selector(PROM_GPUWHY_REASONS, l->q->match, fl->expr[PF_REASONS],
	              sizeof fl->expr[PF_REASONS]);
	char *o = l->reasons_req;
	size_t len = sizeof l->reasons_req, at = 0;
	bool first = true;
	at += (size_t)snprintf(o, len, "sum without (reason) (");
	for (unsigned bit = 0; bit < 64 && at < len; bit++) {
		const char *name = gpu_reason_name(1ULL << bit);
		if (!name)
			continue;
		/* the user's matchers, if any, after the reason */
		const char *m = strchr(fl->expr[PF_REASONS], '{');
		char sel[800];
		snprintf(sel, sizeof sel, "%s{reason=\"%s\"%s%s", PROM_GPUWHY_REASONS, name,
		         m ? "," : "}", m ? m + 1 : "");
		at += (size_t)snprintf(o + at, len - at, "%s%s * %llu", first ? "" : " or ", sel,
		                       (unsigned long long)(1ULL << bit));
		first = false;
	}
	if (at < len)
		snprintf(o + at, len - at, ")");
}

/* The other metrics, in chunks that keep each answer within PROM_REQ_POINTS; the clock reasons
 * under their newer name when the older has no series. */
static int load_rest(const prom_conn *c, fleet_load *l, gw_fail *err)
{
	prom_fleet *fl = l->fl;
	const prom_fleet_query *q = l->q;
	int ngpus = 0;
	for (int k = 0; k < fl->nnodes; k++)
		ngpus += fl->node[k].tl->ngpu;
	long points = chunk_points(ngpus);
	for (int pm = PF_UTIL + 1; pm < PF__COUNT; pm++)
		prom_selector(prom_fleet_metric_name((prom_fleet_metric)pm), q->match, fl->expr[pm],
		              sizeof fl->expr[pm]);
	prom_req *r = NULL;
	int n = plan(fl, q->from, q->to, q->step, PF_UTIL + 1, PF__COUNT, points, &r, 0);
	l->total = l->done + n;
	int rc = run_batch(c, l, r, n, metric_sink, err);
	if (rc == 0 && !fl->have[PF_REASONS]) {
		prom_selector(PROM_CLOCKS_EVENT_REASONS, q->match, fl->expr[PF_REASONS],
		              sizeof fl->expr[PF_REASONS]);
		r = NULL;
		n = plan(fl, q->from, q->to, q->step, PF_REASONS, PF_REASONS + 1, points, &r, 0);
		l->total += n;
		rc = run_batch(c, l, r, n, metric_sink, err);
	}
	if (rc == 0 && !fl->have[PF_REASONS]) {
		reasons_request(l);
		r = NULL;
		n = plan(fl, q->from, q->to, q->step, PF_REASONS, PF_REASONS + 1, points, &r, 0);
		for (int i = 0; i < n; i++)
			r[i].expr = l->reasons_req;
		l->total += n;
		rc = run_batch(c, l, r, n, metric_sink, err);
	}
	return rc;
}

int prom_fleet_load(const prom_conn *c, const prom_fleet_query *q, prom_fleet *out, gw_fail *err)
{
	*out = (prom_fleet){.from = q->from, .to = q->to, .step = q->step};
	out->n = (int)floor((q->to - q->from) / q->step + 1e-9) + 1;
	fleet_load l = {.fl = out, .q = q};
	int rc = load_util(c, &l, err);
	if (rc == 0)
		rc = load_rest(c, &l, err);
	if (rc == 0)
		rc = prom_fleet_host(c, q, out, err);
	if (rc == 0)
		rc = prom_fleet_own(c, q, out, err);
	if (rc == 0)
		rc = prom_fleet_vendor(c, q, out, err);
	for (int k = 0; rc == 0 && k < out->nnodes; k++)
		derive(out, &out->node[k]);
	if (rc)
		prom_fleet_free(out);
	return rc;
}

void prom_fleet_free(prom_fleet *fl)
{
	for (int k = 0; k < fl->nnodes; k++) {
		prom_node *nd = &fl->node[k];
		for (int g = 0; nd->tl && g < nd->tl->ngpu; g++) {
			free(nd->job[g]);
			free(nd->ns[g]);
			free(nd->pod[g]);
		}
		tl_free(nd->tl);
	}
	free(fl->node);
	for (int i = 0; i < fl->njobs; i++) {
		free(fl->jobs[i]);
		free(fl->job_users[i]);
	}
	free(fl->jobs);
	free(fl->job_users);
	for (int i = 0; i < fl->nkube; i++)
		free(fl->kube[i]);
	free(fl->kube);
	free(fl->own);
	*fl = (prom_fleet){0};
}
