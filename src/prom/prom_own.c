/*
 * prom_own.c - what gpuwhy exporters found themselves: their gpuwhy_finding
 * series (1 while a finding holds, gone when it no longer does), where
 * Prometheus has them, as one entry per node, GPU, rule and severity with
 * the first and last step it held at. They sit beside fleet's own findings:
 * an exporter sees what Prometheus does not (the processes on its GPUs, the
 * host's CPUs at its own cadence), fleet sees the whole range.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prom/prom.h"
#include "util/xalloc.h"

#define PROM_OWN_SERIES "gpuwhy_finding"
/* gpuwhy exporter's static facts of a GPU; its vendor label says whose driver it was read
 * through ("nvidia", "amd"), which no DCGM series says. */
#define PROM_INFO_SERIES "gpuwhy_gpu_info"

static int own_cmp(const void *a, const void *b)
{
	const prom_own_finding *x = a, *y = b;
	if (x->node != y->node)
		return x->node - y->node;
	if (x->gpu != y->gpu)
		return x->gpu - y->gpu;
	int c = strcmp(x->rule, y->rule);
	return c ? c : strcmp(x->severity, y->severity);
}

/* The entry of this node, GPU, rule and severity, added when new (series split by other
 * labels, a job's, join). */
static prom_own_finding *own_entry(prom_fleet *fl, int node, int gpu, const char *rule,
                                   const char *sev)
{
	for (int i = 0; i < fl->nown; i++) {
		prom_own_finding *o = &fl->own[i];
		if (o->node == node && o->gpu == gpu && !strcmp(o->rule, rule) &&
		    !strcmp(o->severity, sev))
			return o;
	}
	fl->own = gw_xrealloc(fl->own, (size_t)(fl->nown + 1) * sizeof *fl->own);
	prom_own_finding *o = &fl->own[fl->nown++];
	*o = (prom_own_finding){.node = node, .gpu = gpu, .t0 = INFINITY, .t1 = -INFINITY};
	snprintf(o->rule, sizeof o->rule, "%s", rule);
	snprintf(o->severity, sizeof o->severity, "%s", sev);
	return o;
}

static void own_fill(prom_fleet *fl, const prom_matrix *m)
{
	for (int i = 0; i < m->n; i++) {
		const prom_series *s = &m->s[i];
		prom_node *nd = prom_series_node(fl, s);
		const char *rule = prom_label_get(s, "rule"), *sev = prom_label_get(s, "severity"),
		           *g = prom_label_get(s, "gpu");
		char *end;
		long gpu = g ? strtol(g, &end, 10) : -1;
		if (!nd || !rule || !*rule || !g || *end || gpu < 0 || gpu > 1000000)
			continue;
		prom_own_finding *o = NULL;
		for (int k = 0; k < s->n; k++) {
			if (!(s->v[k] > 0.5) || s->t[k] < fl->from || s->t[k] > fl->to)
				continue;
			if (!o)
				o = own_entry(fl, (int)(nd - fl->node), (int)gpu, rule,
				              sev ? sev : "");
			o->t0 = fmin(o->t0, s->t[k]);
			o->t1 = fmax(o->t1, s->t[k]);
			o->samples++;
		}
	}
}

/* max_over_time over one step, not the bare series: a query_range step sees a series only
 * where a sample lies within the lookback and before its staleness marker, so a finding that
 * held for one scrape (a severity that lasted a second before it rose) falls between two
 * steps whenever the scrape ran late. Windows of one step each, left-open, hold every raw
 * sample exactly once. */
int prom_fleet_own(const prom_conn *c, const prom_fleet_query *q, prom_fleet *fl, gw_fail *err)
{
	char sel[640], expr[700];
	prom_selector(PROM_OWN_SERIES, q->match, sel, sizeof sel);
	snprintf(expr, sizeof expr, "max_over_time(%s[%lldms])", sel,
	         (long long)llround(fmax(q->step, 0.001) * 1000));
	prom_matrix m = {0};
	int rc = prom_query_range(c, expr, q->from, q->to, q->step, &m, err);
	if (rc == 0)
		own_fill(fl, &m);
	prom_matrix_free(&m);
	if (fl->nown > 1)
		qsort(fl->own, (size_t)fl->nown, sizeof *fl->own, own_cmp);
	return rc;
}

/* Each GPU's vendor from its gpuwhy_gpu_info series, onto the node's timeline; a GPU no
 * gpuwhy exporter describes (dcgm-exporter's) keeps "" (unknown). */
static void vendor_fill(prom_fleet *fl, const prom_matrix *m)
{
	for (int i = 0; i < m->n; i++) {
		const prom_series *s = &m->s[i];
		prom_node *nd = prom_series_node(fl, s);
		const char *v = prom_label_get(s, "vendor"), *g = prom_label_get(s, "gpu");
		char *end;
		long gpu = g ? strtol(g, &end, 10) : -1;
		if (!nd || !nd->tl || !v || !g || *end || (strcmp(v, "nvidia") && strcmp(v, "amd")))
			continue;
		for (int k = 0; k < nd->tl->ngpu; k++)
			if (nd->gpus[k].gpu == gpu)
				snprintf(nd->tl->gpu[k].vendor, sizeof nd->tl->gpu[k].vendor, "%s",
				         v);
	}
}

/*
 * The info series of the loaded nodes. Under a node's or job's matchers (Hostname="n1")
 * they would match nothing: gpuwhy's own series carry no host label, only the scrape's
 * instance, so those ask by the nodes' instances (a regex's '.' may match more, which
 * vendor_fill's exact join to the node drops). Too many nodes for one request: none.
 */
static bool info_selector(const prom_fleet_query *q, const prom_fleet *fl, char *sel, size_t len)
{
	if (!q->match || !*q->match) {
		prom_selector(PROM_INFO_SERIES, q->match, sel, len);
		return true;
	}
	size_t at = (size_t)snprintf(sel, len, "%s{instance=~\"", PROM_INFO_SERIES);
	int n = 0;
	for (int k = 0; k < fl->nnodes && at < len; k++) {
		const char *inst = fl->node[k].instance;
		if (!*inst || strpbrk(inst, "\"\\|()[]{}*+?^$"))
			continue;
		at += (size_t)snprintf(sel + at, len - at, "%s%s", n++ ? "|" : "", inst);
	}
	if (at < len)
		at += (size_t)snprintf(sel + at, len - at, "\"}");
	return n > 0 && at < len;
}

int prom_fleet_vendor(const prom_conn *c, const prom_fleet_query *q, prom_fleet *fl, gw_fail *err)
{
	char sel[640], expr[700];
	if (!info_selector(q, fl, sel, sizeof sel))
		return 0;
	/* one value per GPU and vendor over the range: the facts do not change */
	snprintf(expr, sizeof expr, "max by (instance, Hostname, hostname, gpu, vendor) (%s)", sel);
	prom_matrix m = {0};
	int rc = prom_query_range(c, expr, q->from, q->to, q->step, &m, err);
	if (rc == 0)
		vendor_fill(fl, &m);
	prom_matrix_free(&m);
	return rc;
}
