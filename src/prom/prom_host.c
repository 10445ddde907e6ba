/*
 * prom_host.c - node_exporter's CPU series, where Prometheus has them, into
 * each node's host summary: the busiest core's busy share, the mean busy
 * share and iowait (busy: neither idle nor iowait, as the host table counts
 * it), so the data-starved rule can cite a saturated core. A node whose
 * node_exporter is not scraped keeps these series absent.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prom/prom.h"
#include "util/xalloc.h"

#define NODE_CPU "node_cpu_seconds_total"

/* The node an instance label ("node01:9100") names, NULL when none of the fleet's. */
static prom_node *node_of_instance(prom_fleet *fl, const char *inst)
{
	size_t n = strcspn(inst, ":");
	for (int i = 0; i < fl->nnodes; i++)
		if (strlen(fl->node[i].host) == n && !strncmp(fl->node[i].host, inst, n))
			return &fl->node[i];
	return NULL;
}

/* ,instance=~"(a|b)(:[0-9]+)?" for up to 200 nodes ("" beyond: every node_exporter is read). */
static char *instance_match(const prom_fleet *fl)
{
	size_t len = 32;
	for (int i = 0; i < fl->nnodes; i++)
		len += 2 * strlen(fl->node[i].host) * 2 + 1;
	char *out = gw_xmalloc(len), *p = out;
	*p = '\0';
	if (fl->nnodes > 200)
		return out;
	p += sprintf(p, ",instance=~\"(");
	for (int i = 0; i < fl->nnodes; i++) {
		if (i)
			*p++ = '|';
		for (const char *h = fl->node[i].host; *h; h++) {
			/* regex characters escaped, the backslash doubled inside the PromQL string
			 */
			if (*h == '"')
				*p++ = '\\';
			else if (strchr(".+*?()[]{}|^$\\", *h))
				*p++ = '\\', *p++ = '\\';
			*p++ = *h;
		}
	}
	strcpy(p, ")(:[0-9]+)?\"");
	return out;
}

static void fill(prom_fleet *fl, host_metric_id id, const prom_matrix *m)
{
	for (int i = 0; i < m->n; i++) {
		const prom_series *s = &m->s[i];
		const char *inst = prom_label_get(s, "instance");
		prom_node *nd = inst ? node_of_instance(fl, inst) : NULL;
		for (int k = 0; nd && k < s->n; k++) {
			long at = lround((s->t[k] - fl->from) / fl->step);
			if (at >= 0 && at < fl->n && isfinite(s->v[k]))
				tl_set_host(nd->tl, id, (int)at, 100 * s->v[k]);
		}
	}
}

/* The PromQL for one host metric over node_exporter's CPU counters, malloc'd. */
static char *host_expr(host_metric_id id, const char *inst, int range)
{
	size_t len = 2 * strlen(inst) + 256;
	char *e = gw_xmalloc(len);
	const char *busy = "1 - sum by (instance, cpu) (rate(" NODE_CPU "{mode=~\"idle|iowait\"";
	if (id == HM_CPU_BUSY_MAX)
		snprintf(e, len, "max by (instance) (%s%s}[%ds])))", busy, inst, range);
	else if (id == HM_CPU_BUSY_AVG)
		snprintf(e, len, "avg by (instance) (%s%s}[%ds])))", busy, inst, range);
	else
		snprintf(e, len, "avg by (instance) (rate(" NODE_CPU "{mode=\"iowait\"%s}[%ds]))",
		         inst, range);
	return e;
}

int prom_fleet_host(const prom_conn *c, const prom_fleet_query *q, prom_fleet *fl, gw_fail *err)
{
	static const host_metric_id ids[] = {HM_CPU_BUSY_MAX, HM_CPU_BUSY_AVG, HM_CPU_IOWAIT};
	char *inst = instance_match(fl);
	/* a rate needs two scrapes inside its range, whatever the step */
	int range = (int)fmax(120, 2 * q->step), rc = 0;
	for (size_t i = 0; rc == 0 && i < sizeof ids / sizeof *ids; i++) {
		char *expr = host_expr(ids[i], inst, range);
		prom_matrix m = {0};
		rc = prom_query_range(c, expr, q->from, q->to, q->step, &m, err);
		free(expr);
		if (rc == 0)
			fill(fl, ids[i], &m);
		bool none = m.n == 0;
		prom_matrix_free(&m);
		/* no node_exporter here: nothing more to ask */
		if (rc == 0 && i == 0 && none)
			break;
		fl->have_node_cpu = rc == 0;
	}
	free(inst);
	return rc;
}
