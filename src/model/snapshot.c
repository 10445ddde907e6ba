#include "model/snapshot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

void snapshot_init(snapshot *s, int ngpu)
{
	memset(s, 0, sizeof *s);
	s->ngpu = ngpu;
	s->gpu = calloc(ngpu ? (size_t)ngpu : 1, sizeof *s->gpu);
	s->interval_s = NAN;
	for (int i = 0; i < HM__COUNT; i++)
		s->h[i] = NAN;
}

void snapshot_free(snapshot *s)
{
	free(s->gpu);
	free(s->cpu_id);
	free(s->cpu_busy);
	free(s->cpu_iowait);
	free(s->procs);
	free(s->events);
	memset(s, 0, sizeof *s);
}

void snapshot_clear(snapshot *s)
{
	s->nproc = 0;
	s->nevent = 0;
	s->gpu_procs_known = 0;
	for (int i = 0; i < HM__COUNT; i++)
		s->h[i] = NAN;
}

void snapshot_set_ncpu(snapshot *s, int ncpu)
{
	if (ncpu != s->ncpu) {
		s->cpu_id = gw_xrealloc(s->cpu_id, (size_t)ncpu * sizeof *s->cpu_id);
		s->cpu_busy = gw_xrealloc(s->cpu_busy, (size_t)ncpu * sizeof *s->cpu_busy);
		s->cpu_iowait = gw_xrealloc(s->cpu_iowait, (size_t)ncpu * sizeof *s->cpu_iowait);
		s->ncpu = ncpu;
	}
	for (int i = 0; i < ncpu; i++) {
		s->cpu_id[i] = i;
		s->cpu_busy[i] = s->cpu_iowait[i] = NAN;
	}
}

tl_proc *snapshot_add_proc(snapshot *s)
{
	if (s->nproc == s->proc_cap) {
		s->proc_cap = s->proc_cap ? s->proc_cap * 2 : 32;
		s->procs = gw_xrealloc(s->procs, (size_t)s->proc_cap * sizeof *s->procs);
	}
	tl_proc *p = &s->procs[s->nproc++];
	tl_proc_init(p);
	return p;
}

tl_event *snapshot_add_event(snapshot *s, const char *kind, int gpu, long value, const char *text)
{
	if (s->nevent == s->event_cap) {
		s->event_cap = s->event_cap ? s->event_cap * 2 : 8;
		s->events = gw_xrealloc(s->events, (size_t)s->event_cap * sizeof *s->events);
	}
	tl_event *e = &s->events[s->nevent++];
	tl_event_init(e, s->t_wall, kind, gpu, value, text);
	return e;
}

void snapshot_copy(snapshot *d, const snapshot *s)
{
	if (d->ngpu != s->ngpu || !d->gpu) {
		d->gpu = gw_xrealloc(d->gpu, (size_t)(s->ngpu ? s->ngpu : 1) * sizeof *d->gpu);
		d->ngpu = s->ngpu;
	}
	if (s->ngpu)
		memcpy(d->gpu, s->gpu, (size_t)s->ngpu * sizeof *d->gpu);
	snapshot_clear(d);
	d->t_wall = s->t_wall;
	d->t_mono_ns = s->t_mono_ns;
	d->interval_s = s->interval_s;
	d->gpu_procs_known = s->gpu_procs_known;
	memcpy(d->h, s->h, sizeof d->h);
	snapshot_set_ncpu(d, s->ncpu);
	if (s->ncpu) {
		memcpy(d->cpu_id, s->cpu_id, (size_t)s->ncpu * sizeof *d->cpu_id);
		memcpy(d->cpu_busy, s->cpu_busy, (size_t)s->ncpu * sizeof *d->cpu_busy);
		memcpy(d->cpu_iowait, s->cpu_iowait, (size_t)s->ncpu * sizeof *d->cpu_iowait);
	}
	for (int i = 0; i < s->nproc; i++)
		*snapshot_add_proc(d) = s->procs[i];
	for (int i = 0; i < s->nevent; i++)
		*snapshot_add_event(d, "", -1, 0, NULL) = s->events[i];
}
