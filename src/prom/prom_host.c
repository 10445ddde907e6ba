/*
 * prom_host.c - node_exporter's series, where Prometheus has them, into each
 * node's host summary: from its CPU counters the busiest core's busy share,
 * the mean busy share and iowait (busy: neither idle nor iowait, as the host
 * table counts it); from its disk counters the busiest whole disk's busy
 * share and the read rate; from its pressure counters (PSI) the share of
 * time tasks waited for a CPU, or stalled on I/O or memory. So the
 * data-starved rule can cite a saturated core or saturated storage. A node
 * whose node_exporter is not scraped, or does not send a series, keeps it
 * absent.
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

/* The host's characters as a regex's, the backslash doubled inside the PromQL string. */
static char *regex_quote(char *p, const char *h)
{
	for (; *h; h++) {
		if (*h == '"')
			*p++ = '\\';
		else if (strchr(".+*?()[]{}|^$\\", *h))
			*p++ = '\\', *p++ = '\\';
		*p++ = *h;
	}
	return p;
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
		p = regex_quote(p, fl->node[i].host);
	}
	strcpy(p, ")(:[0-9]+)?\"");
	return out;
}

/* Whole physical disks: the devices /proc/diskstats lists beside them are left out, memory and
 * file-backed ones (ram, zram, loop, fd), partitions (their time is their disk's), and stacked
 * ones (dm-, md), whose requests are the same requests on the disks beneath them and which
 * read 100 % busy while any request is in flight though their disks may have room. */
#define DISK_WHOLE                                                                                 \
	"device!~\"(z?ram|loop|fd|dm-|md)[0-9]+|(h|s|v|xv)d[a-z]+[0-9]+|nvme[0-9]+n[0-9]+p[0-9]+|" \
	"mmcblk[0-9]+p[0-9]+\""

typedef enum { Q_CPU_MAX, Q_CPU_AVG, Q_IOWAIT, Q_DISK_BUSY, Q_DISK_READ, Q_PSI } host_q_kind;

/* What each host query reads, in query order: the first tells whether node_exporter is there. */
static const struct {
	host_metric_id id;
	const char *series; /* node_exporter's */
	host_q_kind kind;
	double scale; /* to the host table's unit: a share of time in percent, bytes/s */
} host_q[PROM_HOST_QUERIES] = {
    {HM_CPU_BUSY_MAX, NODE_CPU, Q_CPU_MAX, 100},
    {HM_CPU_BUSY_AVG, NODE_CPU, Q_CPU_AVG, 100},
    {HM_CPU_IOWAIT, NODE_CPU, Q_IOWAIT, 100},
    {HM_DISK_BUSY_MAX, "node_disk_io_time_seconds_total", Q_DISK_BUSY, 100},
    {HM_DISK_READ, "node_disk_read_bytes_total", Q_DISK_READ, 1},
    {HM_PSI_CPU_SOME, "node_pressure_cpu_waiting_seconds_total", Q_PSI, 100},
    {HM_PSI_IO_SOME, "node_pressure_io_waiting_seconds_total", Q_PSI, 100},
    {HM_PSI_IO_FULL, "node_pressure_io_stalled_seconds_total", Q_PSI, 100},
    {HM_PSI_MEM_SOME, "node_pressure_memory_waiting_seconds_total", Q_PSI, 100},
    {HM_PSI_MEM_FULL, "node_pressure_memory_stalled_seconds_total", Q_PSI, 100},
};

host_metric_id prom_host_metric(int i)
{
	return host_q[i].id;
}

const char *prom_host_series(int i)
{
	return host_q[i].series;
}

int prom_host_query_of(host_metric_id id)
{
	for (int i = 0; i < PROM_HOST_QUERIES; i++)
		if (host_q[i].id == id)
			return i;
	return -1;
}

static void fill(prom_fleet *fl, int qi, const prom_matrix *m)
{
	host_metric_id id = host_q[qi].id;
	for (int i = 0; i < m->n; i++) {
		const prom_series *s = &m->s[i];
		const char *inst = prom_label_get(s, "instance");
		prom_node *nd = inst ? node_of_instance(fl, inst) : NULL;
		for (int k = 0; nd && k < s->n; k++) {
			long at = lround((s->t[k] - fl->from) / fl->step);
			if (at >= 0 && at < fl->n && isfinite(s->v[k])) {
				tl_set_host(nd->tl, id, (int)at, host_q[qi].scale * s->v[k]);
				fl->have_host[qi] = true;
			}
		}
	}
}

void prom_host_expr(int qi, const char *inst, int range, char *e, size_t len)
{
	const char *busy = "1 - sum by (instance, cpu) (rate(" NODE_CPU "{mode=~\"idle|iowait\"";
	const char *name = host_q[qi].series;
	switch (host_q[qi].kind) {
	case Q_CPU_MAX:
		snprintf(e, len, "max by (instance) (%s%s}[%ds])))", busy, inst, range);
		break;
	case Q_CPU_AVG:
		snprintf(e, len, "avg by (instance) (%s%s}[%ds])))", busy, inst, range);
		break;
	case Q_IOWAIT:
		snprintf(e, len, "avg by (instance) (rate(%s{mode=\"iowait\"%s}[%ds]))", name, inst,
		         range);
		break;
	case Q_DISK_BUSY:
	case Q_DISK_READ:
		snprintf(e, len, "%s by (instance) (rate(%s{" DISK_WHOLE "%s}[%ds]))",
		         host_q[qi].kind == Q_DISK_BUSY ? "max" : "sum", name, inst, range);
		break;
	case Q_PSI: /* one series per node: max by drops the scrape's other labels */
		snprintf(e, len, "max by (instance) (rate(%s{%s}[%ds]))", name,
		         *inst ? inst + 1 : "", range);
		break;
	}
}

int prom_host_range(double step)
{
	/* a rate needs two scrapes inside its range, whatever the step */
	return (int)fmax(120, 2 * step);
}

int prom_fleet_host(const prom_conn *c, const prom_fleet_query *q, prom_fleet *fl, gw_fail *err)
{
	char *inst = instance_match(fl);
	int range = prom_host_range(q->step), rc = 0;
	size_t len = strlen(inst) + 512;
	char *expr = gw_xmalloc(len);
	for (int i = 0; rc == 0 && i < PROM_HOST_QUERIES; i++) {
		prom_host_expr(i, inst, range, expr, len);
		prom_matrix m = {0};
		rc = prom_query_range(c, expr, q->from, q->to, q->step, &m, err);
		if (rc == 0)
			fill(fl, i, &m);
		prom_matrix_free(&m);
		/* no node_exporter here: nothing more to ask */
		if (rc == 0 && i == 0 && !fl->have_host[0])
			break;
	}
	fl->have_node_cpu = rc == 0 && fl->have_host[0];
	free(expr);
	free(inst);
	return rc;
}

void prom_host_node_expr(int qi, const char *host, double step, char *out, size_t len)
{
	char *inst = gw_xmalloc(4 * strlen(host) + 40), *p = inst;
	p += sprintf(p, ",instance=~\"");
	p = regex_quote(p, host);
	strcpy(p, "(:[0-9]+)?\"");
	prom_host_expr(qi, inst, prom_host_range(step), out, len);
	free(inst);
}
