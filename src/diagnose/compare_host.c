/*
 * compare_host.c - what loaded the host during a compared run. Two
 * recordings of the same job differ by a few percent when other processes
 * take the CPU in one of them: the job's steps wait for a core now and
 * then. Such a run is confounded, and the part of its mean step time above
 * its undisturbed step time is how much of a difference the load can
 * explain. Only processes outside the job's tree count, each by name: the
 * job's own workers saturating the cores are the job, not other load.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/diag_int.h"

typedef struct {
	unsigned pid;
	double sum;
	const tl_proc *last;
} proc_sum;

static int cmp_sum(const void *a, const void *b)
{
	double x = ((const proc_sum *)a)->sum, y = ((const proc_sum *)b)->sum;
	return (x < y) - (x > y);
}

static bool in_window(const timeline *tl, int s, double t_from, double t_to)
{
	return s >= 0 && s < tl->n && tl->t[s] >= t_from && tl->t[s] <= t_to;
}

/*
 * Host-only records of processes outside the job in the window, by PID,
 * each divided by the number of process scans (a process seen in one scan
 * of five loaded the host a fifth of the time). Fills out's others and hogs.
 */
static void other_procs(const timeline *tl, double t_from, double t_to, diag_host_load *out)
{
	proc_sum *p = calloc(tl->nprocs ? (size_t)tl->nprocs : 1, sizeof *p);
	bool *scanned = calloc(tl->n ? (size_t)tl->n : 1, sizeof *scanned);
	if (!p || !scanned)
		abort();
	int n = 0, scans = 0;
	for (int i = 0; i < tl->nprocs; i++) {
		const tl_proc *r = &tl->procs[i];
		if (r->in_tree || r->gpu >= 0 || isnan(r->cpu_pct) ||
		    !in_window(tl, r->s, t_from, t_to))
			continue;
		scans += !scanned[r->s];
		scanned[r->s] = true;
		int j = 0;
		while (j < n && p[j].pid != r->pid)
			j++;
		if (j == n)
			p[n++].pid = r->pid;
		p[j].sum += r->cpu_pct;
		p[j].last = r;
	}
	if (scans > 0) {
		qsort(p, (size_t)n, sizeof *p, cmp_sum);
		out->others_cpu = 0;
		for (int j = 0; j < n; j++) {
			double cpu = p[j].sum / scans;
			out->others_cpu += cpu;
			if (j < DIAG_MAX_HOGS) {
				diag_host_hog *h = &out->hog[out->nhogs++];
				h->pid = p[j].pid;
				h->cpu = cpu;
				snprintf(h->cmd, sizeof h->cmd, "%s",
				         p[j].last->cmd[0] ? p[j].last->cmd : "?");
			}
		}
	}
	free(p);
	free(scanned);
}

static double host_mean(const timeline *tl, host_metric_id id, double t_from, double t_to)
{
	double sum = 0;
	int k = 0;
	for (int s = 0; s < tl->n; s++) {
		double v = tl_host_at(tl, id, s);
		if (!isnan(v) && in_window(tl, s, t_from, t_to)) {
			sum += v;
			k++;
		}
	}
	return k ? sum / k : NAN;
}

void diag_host_load_of(const timeline *tl, double t_from, double t_to, const double *steps,
                       int nsteps, double load_pct, diag_host_load *out)
{
	memset(out, 0, sizeof *out);
	out->others_cpu = out->host_busy = out->spare_cores = out->excess_pct = NAN;
	other_procs(tl, t_from, t_to, out);
	out->host_busy = host_mean(tl, HM_CPU_BUSY_AVG, t_from, t_to);
	if (!isnan(out->host_busy) && tl->ncpu > 0)
		out->spare_cores = tl->ncpu * (100 - out->host_busy) / 100;
	/* Others' CPU hurts the job only when the host has no core to spare for it. */
	out->loaded = !isnan(out->others_cpu) && out->others_cpu >= load_pct &&
	              (isnan(out->spare_cores) || out->spare_cores < 1);
	if (nsteps >= 2) {
		/* A periodic step pattern (alternating workers) counts as one step:
		 * its quick steps are no less disturbed than the rest. */
		diag_run_noise nz;
		diag_run_noise_of(steps, nsteps, &nz);
		if (nz.undisturbed > 0) /* (a skewed pattern can put its p10 above the mean) */
			out->excess_pct =
			    fmax(0, 100 * (nz.mean - nz.undisturbed) / nz.undisturbed);
	}
}
