/*
 * fleet.c - a cluster's GPU-hours by state, and the diagnosis rules run on
 * each node's windows, merged across windows and ranked by what they cost.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/fleet.h"
#include "gpu/gpu_reasons.h"
#include "gpu/xid.h"
#include "util/i18n.h"
#include "util/hash.h"
#include "util/xalloc.h"

static const struct {
	const char *id, *label;
} state_names[FS__COUNT + 1] = {
    [FS_LOST] = {"lost", N_("lost or faulted")},
    [FS_THROTTLED] = {"throttled", N_("throttled (heat, hardware)")},
    [FS_POWER_CAPPED] = {"power-capped", N_("power-capped")},
    [FS_BUSY] = {"busy", N_("busy")},
    [FS_IDLE_HOLDING] = {"idle-holding-memory", N_("idle, holding memory")},
    [FS_IDLE_EMPTY] = {"idle-empty", N_("idle and empty")},
    [FS_NODATA] = {"no-data", N_("no data")},
};

const char *fleet_state_id(fleet_state s)
{
	return state_names[s].id;
}

const char *fleet_state_label(fleet_state s)
{
	return state_names[s].label;
}

double fleet_hours_lost(const fleet_hours *h)
{
	double sum = 0;
	for (int s = 0; s < FS__COUNT; s++)
		if (s != FS_BUSY)
			sum += h->h[s];
	return sum;
}

/* The sample from which GPU g is faulted (a hardware Xid) or lost; tl->n when never. */
static int gone_from(const timeline *tl, int g)
{
	int from = tl->n;
	for (int i = 0; i < tl->nevents; i++) {
		const tl_event *e = &tl->events[i];
		if (e->gpu != g)
			continue;
		const gpu_xid_info *x = gpu_xid_lookup(e->value);
		bool gone = !strcmp(e->kind, TL_EV_GPU_LOST) ||
		            (!strcmp(e->kind, TL_EV_XID) && x && x->hardware);
		int s = (int)lround(e->t / (tl->n > 1 ? tl->t[1] - tl->t[0] : 1));
		if (gone && s < from)
			from = s < 0 ? 0 : s;
	}
	return from;
}

static fleet_state state_at(const timeline *tl, int g, int s, int gone, const diag_thresholds *th)
{
	if (s >= gone)
		return FS_LOST;
	double u = tl_gpu_at(tl, g, GM_UTIL_GPU, s);
	if (!isfinite(u))
		return FS_NODATA;
	if (u > th->idle_util_pct) {
		double r = tl_gpu_at(tl, g, GM_CLK_REASONS, s);
		uint64_t m = isfinite(r) ? gpu_reasons_from_value(r) : 0;
		if (gpu_reasons_thermal(m) || gpu_reasons_hw_slowdown(m))
			return FS_THROTTLED;
		if (gpu_reasons_power_cap(m))
			return FS_POWER_CAPPED;
		return FS_BUSY;
	}
	double used = tl_gpu_at(tl, g, GM_MEM_USED, s), total = tl_gpu_at(tl, g, GM_MEM_TOTAL, s);
	if (isfinite(used) && isfinite(total) && total > 0 && used * 100 / total > th->idle_mem_pct)
		return FS_IDLE_HOLDING;
	return FS_IDLE_EMPTY;
}

static fleet_group *group_for(fleet_report *r, const char *name)
{
	for (int i = 0; i < r->ngroups; i++)
		if (!strcmp(r->group[i].name, name))
			return &r->group[i];
	r->group = gw_xrealloc(r->group, (size_t)(r->ngroups + 1) * sizeof *r->group);
	fleet_group *gr = &r->group[r->ngroups++];
	*gr = (fleet_group){0};
	snprintf(gr->name, sizeof gr->name, "%s", name);
	return gr;
}

static void add_hours(fleet_hours *h, fleet_state st, double hours)
{
	if (st == FS_NODATA)
		h->nodata_h += hours;
	else
		h->h[st] += hours;
}

const char *fleet_by_id(fleet_by b)
{
	static const char *const ids[] = {[FLEET_BY_NODE] = "node",
	                                  [FLEET_BY_GPU] = "gpu",
	                                  [FLEET_BY_JOB] = "job",
	                                  [FLEET_BY_USER] = "user",
	                                  [FLEET_BY_NAMESPACE] = "namespace",
	                                  [FLEET_BY_POD] = "pod"};
	return b >= 0 && b < (int)(sizeof ids / sizeof *ids) && ids[b] ? ids[b] : "node";
}

/* The group of GPU g's sample s when it depends on the sample (job, user, namespace, pod). */
static void sample_group(const prom_fleet *fl, const fleet_opts *o, const prom_node *nd, int g,
                         int s, char *out, size_t len)
{
	fleet_by by = o->by;
	int j = by == FLEET_BY_JOB || by == FLEET_BY_USER ? nd->job[g][s]
	        : by == FLEET_BY_POD                      ? nd->pod[g][s]
	                                                  : -1,
	    ns = nd->ns[g][s];
	if (by == FLEET_BY_JOB)
		snprintf(out, len, "%s", j >= 0 ? fl->jobs[j] : "(no job)");
	else if (by == FLEET_BY_USER)
		snprintf(out, len, "%s",
		         j >= 0 && o->job_user && o->job_user[j] ? o->job_user[j] : "(no user)");
	else if (by == FLEET_BY_NAMESPACE)
		snprintf(out, len, "%s", ns >= 0 ? fl->kube[ns] : "(no namespace)");
	else if (j >= 0) /* a pod's name is unique only in its namespace */
		snprintf(out, len, "%s/%s", ns >= 0 ? fl->kube[ns] : "", fl->kube[j]);
	else
		snprintf(out, len, "(no pod)");
}

/* The group of a sample's labels, looked up only when they change from the previous sample. */
typedef struct {
	int job, ns, pod, group;
} group_cache;

static fleet_group *group_of_sample(const prom_fleet *fl, const fleet_opts *o, const prom_node *nd,
                                    int g, int s, fleet_report *r, group_cache *c)
{
	int job = nd->job[g][s], ns = nd->ns[g][s], pod = nd->pod[g][s];
	if (c->group < 0 || job != c->job || ns != c->ns || pod != c->pod) {
		char name[320];
		sample_group(fl, o, nd, g, s, name, sizeof name);
		c->group = (int)(group_for(r, name) - r->group);
		*c = (group_cache){job, ns, pod, c->group};
	}
	return &r->group[c->group];
}

/* States of every sample into the totals and the groups; per node and GPU into states[][]. */
static void count_states(const prom_fleet *fl, const fleet_opts *o, const diag_thresholds *th,
                         fleet_report *r, unsigned char **states)
{
	double dh = fl->step / 3600.0;
	bool per_sample = o->by != FLEET_BY_NODE && o->by != FLEET_BY_GPU;
	for (int k = 0; k < fl->nnodes; k++) {
		const prom_node *nd = &fl->node[k];
		for (int g = 0; g < nd->tl->ngpu; g++) {
			int gone = gone_from(nd->tl, g);
			char name[320];
			snprintf(name, sizeof name, "%s/%d", nd->host, nd->gpus[g].gpu);
			int fixed =
			    per_sample
			        ? -1
			        : (int)(group_for(r, o->by == FLEET_BY_GPU ? name : nd->host) -
			                r->group);
			group_cache c = {.group = -1};
			r->ngpus++;
			for (int s = 0; s < fl->n; s++) {
				fleet_state st = state_at(nd->tl, g, s, gone, th);
				states[k][g * fl->n + s] = (unsigned char)st;
				add_hours(&r->total, st, dh);
				fleet_group *gr = fixed >= 0
				                      ? &r->group[fixed]
				                      : group_of_sample(fl, o, nd, g, s, r, &c);
				add_hours(&gr->hours, st, dh);
			}
		}
	}
}

/* Samples [a, b) of a node as a timeline of their own, times from 0. */
static timeline *window_of(const timeline *tl, int a, int b, const int *gone)
{
	timeline *w = tl_new(tl->ngpu, 0);
	snprintf(w->hostname, sizeof w->hostname, "%s", tl->hostname);
	w->t0_wall = tl->t0_wall + tl->t[a];
	for (int s = a; s < b; s++)
		tl_add_sample(w, tl->t[s] - tl->t[a]);
	for (int g = 0; g < tl->ngpu; g++) {
		w->gpu[g].index = tl->gpu[g].index;
		memcpy(w->gpu[g].uuid, tl->gpu[g].uuid, sizeof w->gpu[g].uuid);
		memcpy(w->gpu[g].name, tl->gpu[g].name, sizeof w->gpu[g].name);
		memcpy(w->gpu[g].vendor, tl->gpu[g].vendor, sizeof w->gpu[g].vendor);
		w->gpu[g].lost_at_end = tl->gpu[g].lost_at_end && gone[g] < b;
		for (int m = 0; m < GM__COUNT; m++)
			if (tl->gpu[g].m[m])
				for (int s = a; s < b; s++)
					tl_set_gpu(w, g, (gpu_metric_id)m, s - a,
					           tl->gpu[g].m[m][s]);
	}
	for (int m = 0; m < HM__COUNT; m++)
		for (int s = a; tl->h[m] && s < b; s++)
			tl_set_host(w, (host_metric_id)m, s - a, tl->h[m][s]);
	for (int i = 0; i < tl->nevents; i++) {
		const tl_event *e = &tl->events[i];
		if (e->t >= tl->t[a] && e->t <= tl->t[b - 1])
			tl_add_event(w, e->t - tl->t[a], e->kind, e->gpu, e->value, e->text);
	}
	return w;
}

/* Rules that say nothing about lost GPU-hours: their findings are not ranked. */
static bool ranked_rule(diag_rule r)
{
	return r != DIAG_R_HEALTHY && r != DIAG_R_NOT_CHECKED && r != DIAG_R_TOO_LITTLE_DATA &&
	       r != DIAG_R_STEP_BURSTS;
}

static void note_not_checked(fleet_report *r, const char *note)
{
	for (int i = 0; i < r->nnot_checked; i++)
		if (!strcmp(r->not_checked[i], note))
			return;
	if (r->nnot_checked < 8) {
		snprintf(r->not_checked[r->nnot_checked++], sizeof r->not_checked[0], "%s", note);
		return;
	}
	/* tells a note left out once from one left out again (each window repeats it) */
	uint64_t h = gw_fnv1a64(note, GW_FNV64_BASIS);
	for (int i = 0; i < r->not_checked_more; i++)
		if (r->more_hash[i] == h)
			return;
	r->more_hash =
	    gw_xrealloc(r->more_hash, (size_t)(r->not_checked_more + 1) * sizeof *r->more_hash);
	r->more_hash[r->not_checked_more++] = h;
}

/* The host queries (bits) whose series the finding's evidence cites, and those whose condition
 * held. */
static void host_evidence(const prom_fleet *fl, const diag_finding *f, fleet_finding *x)
{
	for (int e = 0; e < f->nev; e++)
		for (int q = 0; q < PROM_HOST_QUERIES; q++) {
			if (!fl->have_host[q] ||
			    strcmp(f->ev[e].metric, host_metrics[prom_host_metric(q)].key))
				continue;
			x->host_seen |= 1u << q;
			if (diag_evidence_met(&f->ev[e]) > 0)
				x->host_met |= 1u << q;
		}
}

/* Merge a window's finding into the one it continues, or add it. */
static void merge_finding(const prom_fleet *fl, fleet_report *r, int node, const diag_finding *f,
                          double t0, double t1)
{
	for (int i = 0; i < r->nf; i++) {
		fleet_finding *x = &r->f[i];
		if (x->node == node && x->rule == f->rule && x->gpus == f->gpus &&
		    fabs(x->t1 - t0) < 1) {
			x->t1 = t1;
			if (f->severity > x->severity)
				x->severity = f->severity;
			host_evidence(fl, f, x);
			return;
		}
	}
	if (r->nf == r->capf) {
		r->capf = r->capf ? 2 * r->capf : 32;
		r->f = gw_xrealloc(r->f, (size_t)r->capf * sizeof *r->f);
	}
	fleet_finding *x = &r->f[r->nf++];
	*x = (fleet_finding){.node = node,
	                     .rule = f->rule,
	                     .severity = f->severity,
	                     .gpus = f->gpus,
	                     .t0 = t0,
	                     .t1 = t1};
	snprintf(x->title, sizeof x->title, "%s", f->title);
	host_evidence(fl, f, x);
}

static void diagnose_node(const prom_fleet *fl, const fleet_opts *o, int k, fleet_report *r)
{
	const timeline *tl = fl->node[k].tl;
	int per = (int)fmax(2, round(o->window_s / fl->step)), gone[GPU_MAX];
	for (int g = 0; g < tl->ngpu; g++)
		gone[g] = gone_from(tl, g);
	for (int a = 0; a < tl->n; a += per) {
		int b = a + per < tl->n ? a + per : tl->n;
		if (b - a < 2)
			break;
		timeline *w = window_of(tl, a, b, gone);
		diag_opts d;
		diag_opts_default(&d);
		d.live = true; /* no warm-up trimming: a window of a long series */
		d.localize = o->localize;
		diag_result res;
		diag_run(w, &d, &res);
		double t0 = fl->from + a * fl->step, t1 = fl->from + b * fl->step;
		for (int i = 0; i < res.n; i++) {
			const diag_finding *f = &res.f[i];
			if (diag_not_checked_gpus(f)) {
				/* about these GPUs: said once per node, naming them */
				char line[1024];
				snprintf(line, sizeof line, "%s: %s. %s", fl->node[k].host,
				         f->title, f->note);
				note_not_checked(r, line);
			} else if (f->rule == DIAG_R_NOT_CHECKED && f->note[0])
				note_not_checked(r, f->note);
			else if (ranked_rule(f->rule) && f->gpus)
				merge_finding(fl, r, k, f, t0, t1);
		}
		diag_result_free(&res);
		tl_free(w);
	}
}

/* The fleet metric whose series show a rule's evidence best. */
static prom_fleet_metric evidence_metric(diag_rule r)
{
	switch (r) {
	case DIAG_R_THROTTLED:
	case DIAG_R_POWER_CAPPED:
		return PF_REASONS;
	case DIAG_R_GPU_FAULT:
		return PF_XID;
	case DIAG_R_MEMORY_FULL_IDLE:
	case DIAG_R_OOM_RISK:
		return PF_FB_USED;
	default:
		return PF_UTIL;
	}
}

/* NAME{<match>, <host label>="node", gpu=~"1|5"}: metric pm's series of the finding's GPUs. */
static void finding_selector(const prom_fleet *fl, const fleet_finding *x, prom_fleet_metric pm,
                             char *out, size_t len)
{
	const prom_node *nd = &fl->node[x->node];
	char base[640], gpus[400] = "";
	snprintf(base, sizeof base, "%s", fl->expr[pm]);
	size_t bl = strlen(base);
	bool braces = bl && base[bl - 1] == '}';
	if (braces)
		base[bl - 1] = 0;
	int n = 0;
	for (int g = 0; g < nd->tl->ngpu; g++)
		if (x->gpus >> g & 1) {
			size_t l = strlen(gpus);
			snprintf(gpus + l, sizeof gpus - l, "%s%d", n++ ? "|" : "",
			         nd->gpus[g].gpu);
		}
	/* gpuwhy exporter's own series name their node only by the scrape's instance */
	bool own = !strncmp(base, "gpuwhy_", 7) && *nd->instance;
	snprintf(out, len, "%s%s%s=\"%s\",gpu%s\"%s\"}", base, braces ? "," : "{",
	         own ? "instance" : nd->host_label, own ? nd->instance : nd->host,
	         n > 1 ? "=~" : "=", gpus);
}

/* The query behind a finding's evidence; for one held by the power cap with its limit known,
 * power over the limit (dcgm-exporter gives both series the same labels, so they pair up). */
static void finding_promql(const prom_fleet *fl, fleet_finding *x)
{
	if (isfinite(x->limit_w) && fl->have[PF_POWER]) {
		char p[690], l[690];
		finding_selector(fl, x, PF_POWER, p, sizeof p);
		finding_selector(fl, x, PF_POWER_LIMIT, l, sizeof l);
		snprintf(x->promql, sizeof x->promql, "%s / %s", p, l);
		return;
	}
	prom_fleet_metric pm = evidence_metric(x->rule);
	if (!fl->have[pm])
		pm = PF_UTIL;
	finding_selector(fl, x, pm, x->promql, sizeof x->promql);
	/* the host's evidence: the queries whose condition held first, then the others */
	for (int pass = 0; pass < 2; pass++)
		for (int q = 0; q < PROM_HOST_QUERIES && x->nhost_promql < FLEET_HOST_PROMQL; q++)
			if ((pass ? x->host_seen & ~x->host_met : x->host_met) >> q & 1)
				prom_host_node_expr(q, fl->node[x->node].host, fl->step,
				                    x->host_promql[x->nhost_promql++],
				                    sizeof x->host_promql[0]);
}

/* A finding the power cap explains (power-capped, or throttled with more power-capped samples
 * than thermal ones): the mean draw there and the lowest limit, else NAN. */
static void finding_power(const prom_fleet *fl, unsigned char **states, fleet_finding *x)
{
	const prom_node *nd = &fl->node[x->node];
	int a = (int)lround((x->t0 - fl->from) / fl->step),
	    b = (int)lround((x->t1 - fl->from) / fl->step), capped = 0, thermal = 0, np = 0;
	double pw = 0, lim = NAN;
	x->power_w = x->limit_w = NAN;
	if (x->rule != DIAG_R_POWER_CAPPED && x->rule != DIAG_R_THROTTLED)
		return;
	for (int g = 0; g < nd->tl->ngpu; g++)
		for (int s = a; x->gpus >> g & 1 && s < b && s < fl->n; s++) {
			int st = states[x->node][g * fl->n + s];
			thermal += st == FS_THROTTLED;
			if (st != FS_POWER_CAPPED)
				continue;
			capped++;
			double p = tl_gpu_at(nd->tl, g, GM_POWER_DRAW, s),
			       l = tl_gpu_at(nd->tl, g, GM_POWER_LIMIT, s);
			if (isfinite(p))
				pw += p, np++;
			if (isfinite(l) && l > 0 && !(l >= lim))
				lim = l;
		}
	if (!capped || capped <= thermal)
		return;
	x->power_w = np ? pw / np : NAN;
	x->limit_w = lim;
}

/* GPU-hours lost on the finding's GPUs in its time (not busy, or busy only u % of it); the
 * job seen there most. */
static void finding_cost(const prom_fleet *fl, unsigned char **states, fleet_finding *x)
{
	const prom_node *nd = &fl->node[x->node];
	int a = (int)lround((x->t0 - fl->from) / fl->step),
	    b = (int)lround((x->t1 - fl->from) / fl->step);
	int *votes = gw_xcalloc((size_t)fl->njobs + 1, sizeof *votes);
	for (int g = 0; g < nd->tl->ngpu; g++) {
		if (!(x->gpus >> g & 1))
			continue;
		for (int s = a; s < b && s < fl->n; s++) {
			int st = states[x->node][g * fl->n + s];
			double u = tl_gpu_at(nd->tl, g, GM_UTIL_GPU, s);
			if (st == FS_BUSY && isfinite(u)) /* working, but only u % of the time */
				x->lost_h += fl->step / 3600.0 * fmax(0, 1 - u / 100);
			else if (st != FS_NODATA)
				x->lost_h += fl->step / 3600.0;
			if (nd->job[g][s] >= 0)
				votes[nd->job[g][s]]++;
		}
	}
	int best = -1;
	for (int j = 0; j < fl->njobs; j++)
		if (votes[j] && (best < 0 || votes[j] > votes[best]))
			best = j;
	if (best >= 0)
		snprintf(x->job, sizeof x->job, "%s", fl->jobs[best]);
	free(votes);
}

static int finding_cmp(const void *a, const void *b)
{
	const fleet_finding *x = a, *y = b;
	if (x->lost_h != y->lost_h)
		return x->lost_h < y->lost_h ? 1 : -1;
	if (x->severity != y->severity)
		return x->severity < y->severity ? 1 : -1;
	if (x->node != y->node)
		return x->node - y->node;
	return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

static int group_cmp(const void *a, const void *b)
{
	double x = fleet_hours_lost(&((const fleet_group *)a)->hours),
	       y = fleet_hours_lost(&((const fleet_group *)b)->hours);
	if (x != y)
		return x < y ? 1 : -1;
	return strcmp(((const fleet_group *)a)->name, ((const fleet_group *)b)->name);
}

/* What a node_exporter series tells the rules: said when it is absent. */
static const char *host_series_why(const char *series)
{
	if (!strcmp(series, "node_cpu_seconds_total"))
		return N_("a saturated core or iowait on the node (data-starved, host-contention)");
	if (!strncmp(series, "node_disk_", 10))
		return N_("a saturated disk on the node (data-starved)");
	return N_("pressure: tasks stalled on I/O, a CPU or memory (data-starved)");
}

int fleet_host_absent(const prom_fleet *fl, const char **names, const char **why, int max)
{
	int n = 0;
	for (int q = 0; q < PROM_HOST_QUERIES && n < max; q++) {
		const char *name = prom_host_series(q);
		bool seen = false, dup = false;
		for (int p = 0; p < PROM_HOST_QUERIES; p++)
			if (!strcmp(prom_host_series(p), name)) {
				seen |= fl->have_host[p];
				dup |= p < q;
			}
		if (seen || dup)
			continue;
		names[n] = name;
		why[n++] = host_series_why(name);
	}
	return n;
}

void fleet_analyse(const prom_fleet *fl, const fleet_opts *o, fleet_report *out)
{
	*out = (fleet_report){0};
	diag_opts d;
	diag_opts_default(&d);
	unsigned char **states = gw_xcalloc((size_t)fl->nnodes + 1, sizeof *states);
	for (int k = 0; k < fl->nnodes; k++)
		states[k] = gw_xcalloc((size_t)fl->node[k].tl->ngpu * fl->n + 1, 1);
	count_states(fl, o, &d.th, out, states);
	for (int k = 0; k < fl->nnodes; k++)
		diagnose_node(fl, o, k, out);
	for (int i = 0; i < out->nf; i++) {
		finding_cost(fl, states, &out->f[i]);
		finding_power(fl, states, &out->f[i]);
		finding_promql(fl, &out->f[i]);
	}
	if (out->nf > 1) /* out->f is NULL when nothing was found */
		qsort(out->f, (size_t)out->nf, sizeof *out->f, finding_cmp);
	if (out->ngroups > 1)
		qsort(out->group, (size_t)out->ngroups, sizeof *out->group, group_cmp);
	out->states = states;
	out->nstates = fl->nnodes;
}

int fleet_heat_cols(int n, int *per)
{
	*per = n > FLEET_HEAT_COLS ? (n + FLEET_HEAT_COLS - 1) / FLEET_HEAT_COLS : 1;
	return n > 0 ? (n + *per - 1) / *per : 0;
}

fleet_state fleet_heat_cell(const fleet_report *r, int n, int k, int g, int a, int b)
{
	int count[FS__COUNT + 1] = {0};
	const unsigned char *st = r->states[k] + (size_t)g * n;
	for (int s = a; s < b && s < n; s++)
		count[st[s] <= FS__COUNT ? st[s] : FS_NODATA]++;
	int best = FS_NODATA;
	for (int s = FS__COUNT - 1; s >= 0; s--)
		if (count[s] && count[s] >= count[best])
			best = s;
	return (fleet_state)best;
}

void fleet_report_free(fleet_report *r)
{
	for (int k = 0; k < r->nstates; k++)
		free(r->states[k]);
	free(r->states);
	free(r->group);
	free(r->f);
	free(r->more_hash);
	*r = (fleet_report){0};
}
