/*
 * attrib.c - which GPU process belongs to which attempt, and how much
 * memory each attempt holds.
 *
 * A local attempt runs in the session its shim created (setsid), so a GPU
 * process whose session id is a running shim's PID is that attempt's, also
 * when it made a process group of its own. Processes that carry no such
 * session are foreign: they use the GPU and reserved nothing. Slurm jobs
 * on this machine are found by the attempt token in their environment.
 */
#include <dirent.h>
#include <stdlib.h>

#include "util/xalloc.h"
#include "queue/local.h"
#include "queue/submit.h"
#include "queue/procscan.h"

#define TOKEN_VAR "GPUWHY_ATTEMPT_TOKEN"

int64_t queue_token_gpu_mib(const queue_gpus *s, const char *token)
{
	int64_t best = -1;
	for (int i = 0; i < s->n; i++) {
		int64_t on_gpu = 0;
		bool seen = false;
		for (int k = 0; k < s->g[i].nproc; k++) {
			const queue_gpu_proc *p = &s->g[i].proc[k];
			if (!p->mem_ok || !queue_proc_has_env((int)p->pid, TOKEN_VAR, token))
				continue;
			on_gpu += p->mem_mib;
			seen = true;
		}
		if (seen && on_gpu > best)
			best = on_gpu;
	}
	return best;
}

int queue_token_pgid(const char *token)
{
	DIR *d = opendir("/proc");
	if (!d)
		return 0;
	int pg = 0;
	struct dirent *e;
	while (!pg && (e = readdir(d))) {
		int pid = atoi(e->d_name);
		queue_proc_stat ps;
		if (pid > 0 && queue_proc_has_env(pid, TOKEN_VAR, token) &&
		    queue_proc_read(pid, &ps))
			pg = ps.pgrp;
	}
	closedir(d);
	return pg;
}

/* The running attempt whose session holds pid: its slot, -1 foreign, -2 unknown. */
static int owner_of(const queue_local *l, unsigned pid)
{
	queue_proc_stat ps;
	if (l->env.pidns_nested || !queue_proc_read((int)pid, &ps))
		return -2;
	for (int r = 0; r < l->nrun; r++)
		if (ps.session == l->run[r]->shim_pid)
			return r;
	return -1;
}

void local_attribute(queue_local *l)
{
	const queue_gpus *s = l->env.gpus;
	for (int r = 0; r < l->nrun; r++)
		for (int k = 0; k < l->run[r]->ngpu; k++)
			l->run[r]->usage[k] = 0;
	for (int i = 0; i < s->n; i++) {
		const queue_gpu_seen *g = &s->g[i];
		l->foreign[i] = 0;
		l->foreign_mib[i] = 0;
		for (int k = 0; k < g->nproc; k++) {
			const queue_gpu_proc *p = &g->proc[k];
			int owner = owner_of(l, p->pid);
			l->foreign[i] += owner == -1;
			if (owner == -1 && p->mem_ok)
				l->foreign_mib[i] += p->mem_mib;
			if (owner < 0 || !p->mem_ok)
				continue;
			local_run *run = l->run[owner];
			for (int j = 0; j < run->ngpu; j++)
				if (run->gidx[j] == g->index)
					run->usage[j] += p->mem_mib;
		}
	}
	for (int r = 0; r < l->nrun; r++) {
		local_run *run = l->run[r];
		for (int j = 0; j < run->ngpu; j++)
			if (run->usage[j] > 0 && run->usage[j] > run->peak_gpu) {
				run->peak_gpu = run->usage[j];
				run->dirty = true;
			}
	}
}

void local_sample_rss(queue_local *l)
{
	if (l->nrun <= 0)
		return;
	size_t n = (size_t)(unsigned)l->nrun;
	int *sids = gw_xrealloc(NULL, n * sizeof *sids);
	int64_t *rss = gw_xrealloc(NULL, n * sizeof *rss);
	for (int r = 0; r < l->nrun; r++)
		sids[r] = l->run[r]->shim_pid;
	queue_sessions_rss_kib(sids, l->nrun, rss);
	for (int r = 0; r < l->nrun; r++)
		if (rss[r] > 0 && rss[r] > l->run[r]->peak_rss) {
			l->run[r]->peak_rss = rss[r];
			l->run[r]->dirty = true;
		}
	free(sids);
	free(rss);
}

void local_flush_peaks(queue_local *l)
{
	for (int r = 0; r < l->nrun; r++) {
		local_run *run = l->run[r];
		if (!run->dirty)
			continue;
		queue_db_peaks(l->env.st, run->task_id, run->n, run->peak_gpu, run->peak_rss);
		run->dirty = false;
	}
}
