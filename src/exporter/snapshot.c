/* snapshot.c - allocation of the exporter's snapshots. */
#include <stdlib.h>
#include <string.h>

#include "exporter/exporter.h"

exp_snapshot *exp_snapshot_new(int ngpus)
{
	exp_snapshot *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->gpus = calloc((size_t)(ngpus > 0 ? ngpus : 1), sizeof *s->gpus);
	if (!s->gpus) {
		free(s);
		return NULL;
	}
	s->ngpus = ngpus;
	return s;
}

void exp_snapshot_free(exp_snapshot *s)
{
	if (!s)
		return;
	free(s->host.cpus);
	free(s->gpus);
	free(s);
}

int exp_host_reserve(exp_host *h, int n)
{
	if (n <= h->cpus_cap)
		return 0;
	exp_cpu *p = realloc(h->cpus, (size_t)n * sizeof *p);
	if (!p)
		return -1;
	memset(p + h->cpus_cap, 0, (size_t)(n - h->cpus_cap) * sizeof *p);
	h->cpus = p;
	h->cpus_cap = n;
	return 0;
}
