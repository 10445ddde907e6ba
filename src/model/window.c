/* window.c - live snapshots as a timeline (see window.h). */
#include "model/window.h"

#include <math.h>

static void add_values(timeline *tl, const snapshot *s, int k)
{
	for (int g = 0; g < tl->ngpu && g < s->ngpu; g++) {
		const gpu_values *v = &s->gpu[g];
		if (v->lost)
			continue;
		for (int id = 0; id < GM__COUNT; id++)
			if (v->ok[id] && gpu_metrics[id].fmt != GMF_STR)
				tl_set_gpu(tl, g, (gpu_metric_id)id, k, v->v[id]);
	}
	for (int h = 0; h < HM__COUNT; h++)
		if (!isnan(s->h[h]))
			tl_set_host(tl, (host_metric_id)h, k, s->h[h]);
	for (int c = 0; c < s->ncpu; c++)
		if (!isnan(s->cpu_busy[c]))
			tl_set_cpu(tl, s->cpu_id[c], k, s->cpu_busy[c], s->cpu_iowait[c]);
}

static void add_procs(timeline *tl, const snapshot *s, int k, bool gpu_procs_are_job)
{
	for (int i = 0; i < s->nproc; i++) {
		tl_proc *p = tl_add_proc(tl);
		*p = s->procs[i];
		p->s = k;
		if (!gpu_procs_are_job)
			continue;
		/*
		 * The watched job is whatever runs on the GPUs: their processes and
		 * the families followed around them. A GPU nobody uses is then not
		 * read as the job's idle GPU. With no GPU process at all there is no
		 * job, and every GPU is looked at (have_root stays false).
		 */
		p->in_tree = p->alive;
		if (p->gpu >= 0 && p->alive)
			tl->have_root = true;
	}
}

static int max_ncpu(const snapshot *const *snaps, int n, int stride)
{
	int ncpu = 0;
	for (int a = n - 1; a >= 0; a -= stride)
		for (int c = 0; c < snaps[a]->ncpu; c++)
			if (snaps[a]->cpu_id[c] + 1 > ncpu)
				ncpu = snaps[a]->cpu_id[c] + 1;
	return ncpu;
}

timeline *tl_from_snapshots(const snapshot *const *snaps, int n, int stride, int ngpu,
                            bool gpu_procs_are_job)
{
	if (n < 1)
		return NULL;
	if (stride < 1)
		stride = 1;
	int start = (n - 1) % stride;
	timeline *tl = tl_new(ngpu, max_ncpu(snaps, n, stride));
	const snapshot *end = snaps[n - 1];
	for (int g = 0; g < ngpu; g++)
		tl->gpu[g].lost_at_end = g < end->ngpu && end->gpu[g].lost;
	double t0 = snaps[start]->t_wall;
	tl->t0_wall = t0;
	for (int a = start; a < n; a += stride) {
		int k = tl_add_sample(tl, snaps[a]->t_wall - t0);
		/* The achieved interval is the one before this sample only when none is skipped. */
		if (stride == 1)
			tl->interval[k] = snaps[a]->interval_s;
		tl_fill_from_snapshot(tl, snaps[a], k, gpu_procs_are_job);
	}
	for (int a = 0; a < n; a++)
		tl_add_snapshot_events(tl, snaps[a]);
	return tl;
}

void tl_fill_from_snapshot(timeline *tl, const snapshot *s, int k, bool gpu_procs_are_job)
{
	add_values(tl, s, k);
	add_procs(tl, s, k, gpu_procs_are_job);
}

void tl_add_snapshot_events(timeline *tl, const snapshot *s)
{
	for (int i = 0; i < s->nevent; i++) {
		const tl_event *e = &s->events[i];
		double t = e->t - tl->t0_wall < 0 ? 0 : e->t - tl->t0_wall;
		tl_add_event(tl, t, e->kind, e->gpu, e->value, e->text);
	}
}
