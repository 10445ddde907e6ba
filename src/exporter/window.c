/*
 * window.c - the exporter's window of snapshots as a timeline, the type the
 * diagnosis rules read. Built on first request and kept for the rest of the
 * tick, so a findings source that never asks for it costs nothing.
 */
#include <math.h>
#include <stdio.h>

#include "exporter/exporter.h"

#define MIB 1048576.0

static double val_or_nan(exp_val v, double scale)
{
	return v.ok && isfinite(v.v) ? v.v * scale : NAN;
}

static void add_gpus(timeline *tl, const exp_snapshot *s, int k)
{
	for (int g = 0; g < s->ngpus && g < tl->ngpu; g++) {
		const gpu_values *v = &s->gpus[g].vals;
		if (v->lost)
			continue;
		for (int m = 0; m < GM__COUNT; m++)
			if (v->ok[m] && gpu_metrics[m].fmt != GMF_STR)
				tl_set_gpu(tl, g, (gpu_metric_id)m, k, v->v[m]);
	}
}

static void add_host(timeline *tl, const exp_host *h, int k)
{
	if (!h->present)
		return;
	tl_set_host(tl, HM_CPU_BUSY_AVG, k, val_or_nan(h->cpu_busy, 100));
	tl_set_host(tl, HM_CPU_IOWAIT, k, val_or_nan(h->cpu_iowait, 100));
	tl_set_host(tl, HM_MEM_TOTAL, k, val_or_nan(h->mem_total, 1 / MIB));
	tl_set_host(tl, HM_MEM_USED, k, val_or_nan(h->mem_used, 1 / MIB));
	tl_set_host(tl, HM_MEM_AVAIL, k, val_or_nan(h->mem_available, 1 / MIB));
	tl_set_host(tl, HM_SWAP_USED, k, val_or_nan(h->swap_used, 1 / MIB));
	double max = NAN;
	int max_core = -1;
	for (int c = 0; c < h->ncpus; c++) {
		const exp_cpu *cpu = &h->cpus[c];
		double busy = val_or_nan(cpu->busy, 100), iowait = val_or_nan(cpu->iowait, 100);
		tl_set_cpu(tl, cpu->id, k, busy, iowait);
		if (!isnan(busy) && (isnan(max) || busy > max)) {
			max = busy;
			max_core = cpu->id;
		}
	}
	if (max_core >= 0) {
		tl_set_host(tl, HM_CPU_BUSY_MAX, k, max);
		tl_set_host(tl, HM_CPU_BUSY_MAX_CORE, k, max_core);
	}
}

static void add_procs(timeline *tl, const exp_snapshot *s, int k)
{
	for (int g = 0; g < s->ngpus && g < tl->ngpu; g++) {
		const exp_gpu *x = &s->gpus[g];
		for (int p = 0; p < x->nprocs; p++) {
			tl_proc *t = tl_add_proc(tl);
			t->s = k;
			t->gpu = g;
			t->pid = x->procs[p].pid;
			t->alive = x->procs[p].command[0] != '\0';
			if (x->procs[p].mem_ok)
				t->gpu_mem_mib = (double)x->procs[p].mem_bytes / MIB;
			if (x->procs[p].sm_ok)
				t->sm_pct = x->procs[p].sm_ratio * 100;
			snprintf(t->cmd, sizeof t->cmd, "%s", x->procs[p].command);
		}
	}
}

static timeline *build(const exp_window *w)
{
	const exp_snapshot *first = w->snaps[0], *last = w->snaps[w->len - 1];
	int ncpu = 0;
	for (int k = 0; k < w->len; k++)
		for (int c = 0; c < w->snaps[k]->host.ncpus; c++)
			if (w->snaps[k]->host.cpus[c].id >= ncpu)
				ncpu = w->snaps[k]->host.cpus[c].id + 1;
	timeline *tl = tl_new(last->ngpus, ncpu);
	tl->t0_wall = first->t_wall;
	snprintf(tl->driver, sizeof tl->driver, "%s", last->driver);
	for (int g = 0; g < last->ngpus; g++) {
		tl->gpu[g].index = last->gpus[g].index;
		snprintf(tl->gpu[g].uuid, sizeof tl->gpu[g].uuid, "%s", last->gpus[g].uuid);
		snprintf(tl->gpu[g].name, sizeof tl->gpu[g].name, "%s", last->gpus[g].name);
		tl->gpu[g].lost_at_end = last->gpus[g].vals.lost;
	}
	for (int k = 0; k < w->len; k++) {
		const exp_snapshot *s = w->snaps[k];
		int i = tl_add_sample(tl, s->t_wall - first->t_wall);
		add_gpus(tl, s, i);
		add_host(tl, &s->host, i);
		add_procs(tl, s, i);
	}
	return tl;
}

const timeline *exp_window_timeline(const exp_window *w)
{
	if (!w || w->len <= 0 || !w->tl)
		return NULL;
	if (!*w->tl)
		*w->tl = build(w);
	return *w->tl;
}
