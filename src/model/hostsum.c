/* hostsum.c - the host summary from one host reading (see hostsum.h). */
#include "model/hostsum.h"

#include <math.h>
#include <string.h>

typedef enum { AGG_ONE, AGG_SUM, AGG_MAX, AGG_ARGMAX, AGG_COUNT } sum_agg;

typedef struct {
	sum_agg agg;
	enum host_table table;
	int src;
} sum_rule;

static const sum_rule rules[HM__COUNT] = {
#define HOST_SUM_METRIC(id, key, unit, agg, table, src, family, label, help)                       \
	{AGG_##agg, HOST_TABLE_##table, HOST_##table##_##src},
#include "host/host_metrics.def"
#undef HOST_SUM_METRIC
};

/* The rows of a per-device table and the stride to the next row's values. */
typedef struct {
	const host_val *first;
	const int *ids; /* CPU ids, NULL for other tables */
	size_t n, stride;
} rows;

static rows rows_of(const host_sample *h, enum host_table t)
{
	rows r = {0};
	switch (t) {
	case HOST_TABLE_CPU:
		r = (rows){h->ncpus ? h->cpus[0].v : NULL, NULL, h->ncpus, sizeof *h->cpus};
		r.ids = h->ncpus ? &h->cpus[0].id : NULL;
		break;
	case HOST_TABLE_DISK:
		r = (rows){h->ndisks ? h->disks[0].v : NULL, NULL, h->ndisks, sizeof *h->disks};
		break;
	case HOST_TABLE_NET:
		r = (rows){h->nnets ? h->nets[0].v : NULL, NULL, h->nnets, sizeof *h->nets};
		break;
	case HOST_TABLE_PROC:
		r = (rows){h->nprocs ? h->procs[0].v : NULL, NULL, h->nprocs, sizeof *h->procs};
		break;
	case HOST_TABLE_SYS:
		break;
	}
	return r;
}

static const host_val *row_val(const rows *r, size_t i, int src)
{
	return (const host_val *)((const char *)r->first + i * r->stride) + src;
}

static int row_id(const rows *r, size_t i)
{
	return *(const int *)((const char *)r->ids + i * r->stride);
}

static double aggregate(const host_sample *h, const sum_rule *u)
{
	if (u->agg == AGG_ONE)
		return u->table == HOST_TABLE_SYS && h->sys[u->src].ok ? h->sys[u->src].v : NAN;
	rows r = rows_of(h, u->table);
	if (u->agg == AGG_COUNT)
		return r.n ? (double)r.n : NAN;
	double acc = NAN;
	int best = -1;
	for (size_t i = 0; i < r.n; i++) {
		const host_val *v = row_val(&r, i, u->src);
		if (!v->ok || (r.ids && row_id(&r, i) < 0))
			continue;
		if (u->agg == AGG_SUM) {
			acc = (isnan(acc) ? 0 : acc) + v->v;
		} else if (isnan(acc) || v->v > acc) {
			acc = v->v;
			best = r.ids ? row_id(&r, i) : (int)i;
		}
	}
	if (u->agg == AGG_ARGMAX)
		return best >= 0 ? best : NAN;
	return acc;
}

void host_summary_fill(const host_sample *h, double out[HM__COUNT])
{
	for (int id = 0; id < HM__COUNT; id++) {
		double v = aggregate(h, &rules[id]);
		/* The recording keeps memory in MiB; the reader measures bytes. */
		if (!strcmp(host_metrics[id].unit, "MiB"))
			v /= 1048576.0;
		out[id] = v;
	}
}
