/*
 * rules_host.c - rules where the host holds the GPU back: data-starved
 * (utilization jumping between 0 and 100 % while a core, the loader processes
 * or the disk are saturated) and host-swap.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/diag_int.h"

#define MIB (1024.0 * 1024.0)

/* Busy % of the busiest core at sample s: the host summary, else the per-core series. */
static double busiest_core(const diag_ctx *c, int s, int *core)
{
	const timeline *tl = c->tl;
	double v = tl_host_at(tl, HM_CPU_BUSY_MAX, s);
	double k = tl_host_at(tl, HM_CPU_BUSY_MAX_CORE, s);
	if (!isnan(v)) {
		*core = k >= 0 && k < 4096 ? (int)k : -1; /* a damaged file may hold anything */
		return v;
	}
	double best = NAN;
	*core = -1;
	for (int i = 0; i < tl->ncpu; i++) {
		double b = tl->cpu_busy[i] ? tl->cpu_busy[i][s] : NAN;
		if (!isnan(b) && (isnan(best) || b > best)) {
			best = b;
			*core = i;
		}
	}
	return best;
}

/* Mean of host series h over the samples of mask (NAN when none present). */
static double host_mean_mask(const diag_ctx *c, host_metric_id h, const bool *mask)
{
	double sum = 0;
	int n = 0;
	for (int s = c->from; s < c->to; s++) {
		double v = tl_host_at(c->tl, h, s);
		if (mask[s] && !isnan(v)) {
			sum += v;
			n++;
		}
	}
	return n ? sum / n : NAN;
}

/* Share of samples (driver sub-samples when present, else 1 Hz jumps) that swing idle <-> burst. */
static double oscillation_share(const diag_ctx *c, int g)
{
	const diag_thresholds *th = c->th;
	const double *mn = dx_series(c, g, GM_UTIL_SAMPLES_MIN), *mx = dx_series(c, g, GM_UTIL_SAMPLES_MAX);
	int n = 0, k = 0;
	if (dx_present(c, mn) > 0 && dx_present(c, mx) > 0) {
		for (int s = c->from; s < c->to; s++)
			if (!isnan(mn[s]) && !isnan(mx[s])) {
				n++;
				k += mn[s] <= th->idle_util_pct && mx[s] >= th->busy_util_pct;
			}
	} else if (c->act[g]) {
		const double *u = c->act[g];
		double swing = th->busy_util_pct - th->idle_util_pct;
		for (int s = c->from + 1; s < c->to; s++)
			if (!isnan(u[s]) && !isnan(u[s - 1])) {
				n++;
				k += fabs(u[s] - u[s - 1]) >= swing;
			}
	}
	return n ? (double)k / n : NAN;
}

/* Coefficient of variation of the power draw of GPU g over the window. */
static double power_cv(const diag_ctx *c, int g)
{
	const double *p = dx_series(c, g, GM_POWER_DRAW);
	double m = dx_mean(c, p);
	if (isnan(m) || m <= 0)
		return NAN;
	double ss = 0;
	int n = 0;
	for (int s = c->from; s < c->to; s++)
		if (!isnan(p[s])) {
			ss += (p[s] - m) * (p[s] - m);
			n++;
		}
	return n > 1 ? sqrt(ss / (n - 1)) / m : NAN;
}

typedef struct {
	int total;     /* tree processes that used CPU */
	int saturated; /* of which saturated most of the window */
	double top_cpu;
	unsigned top_pid;
} worker_stats;

/* Tree processes at or above a saturated core for most of their samples. */
static void tree_workers(const diag_ctx *c, worker_stats *w)
{
	const timeline *tl = c->tl;
	memset(w, 0, sizeof *w);
	/* Distinct PIDs: the records are per sample, so group them. */
	int cap = tl->nprocs ? tl->nprocs : 1, n = 0;
	struct agg {
		unsigned pid;
		int k, hot;
		double sum;
	} *a = calloc((size_t)cap, sizeof *a);
	if (!a)
		abort();
	for (int i = 0; i < tl->nprocs; i++) {
		const tl_proc *p = &tl->procs[i];
		if (!p->in_tree || isnan(p->cpu_pct) || p->s < c->from || p->s >= c->to)
			continue;
		int j = 0;
		while (j < n && a[j].pid != p->pid)
			j++;
		if (j == n)
			a[n++].pid = p->pid;
		a[j].k++;
		a[j].sum += p->cpu_pct;
		a[j].hot += p->cpu_pct >= c->th->core_saturated_pct;
	}
	for (int j = 0; j < n; j++) {
		double mean = a[j].sum / a[j].k;
		if (mean < 10) /* idle helpers (the launcher shell) do not count */
			continue;
		w->total++;
		if ((double)a[j].hot / a[j].k >= c->th->saturated_share)
			w->saturated++;
		if (mean > w->top_cpu) {
			w->top_cpu = mean;
			w->top_pid = a[j].pid;
		}
	}
	free(a);
}

void rule_data_starved(diag_ctx *c)
{
	const diag_thresholds *th = c->th;
	if (c->njob == 0 || c->to - c->from < th->min_samples)
		return;
	/*
	 * Starving GPUs: active at some point of the window (a GPU never used is
	 * imbalance, not starvation), idle a large share of it. A badly starved
	 * GPU may average under the idle threshold: that is the extreme case.
	 */
	uint64_t starving = 0;
	int worst = -1;
	double worst_idle = -1;
	for (int g = 0; g < c->ngpu; g++) {
		if (!c->job[g])
			continue;
		double idle = dx_idle_pct(c, g), peak = dx_max(c, c->act[g]);
		if (isnan(idle) || isnan(peak) || peak <= th->idle_util_pct)
			continue;
		if (idle >= th->starved_idle_pct) {
			starving |= 1ULL << g;
			if (idle > worst_idle) {
				worst_idle = idle;
				worst = g;
			}
		}
	}
	if (worst < 0)
		return;

	/*
	 * GPU gaps: samples where every GPU of the job idled a large share. A
	 * stall in the input pipeline leaves all ranks waiting together; one
	 * GPU busy while the others idle is sync-wait or imbalance instead.
	 */
	bool *gap = dx_mask_new(c);
	int ngap = 0;
	for (int s = c->from; s < c->to; s++) {
		int present = 0, idle = 0;
		for (int g = 0; g < c->ngpu; g++) {
			if (!c->job[g])
				continue;
			double i = dx_idle_at(c, g, s);
			if (isnan(i))
				continue;
			present++;
			idle += i >= th->starved_idle_pct;
		}
		if (present && idle == present) {
			gap[s] = true;
			ngap++;
		}
	}
	bool *cond = gap;
	bool *all = NULL;
	if (ngap < 2) {
		if (c->njob > 1) {
			free(gap);
			return; /* no common gaps across the job's GPUs */
		}
		/* One GPU idling a little in every sample: condition on the whole window. */
		all = dx_mask_new(c);
		for (int s = c->from; s < c->to; s++)
			all[s] = true;
		cond = all;
	}

	/* Cause 1: a saturated core while the GPU waits. */
	int nc = 0, hot = 0, core_votes[256] = {0};
	double core_sum = 0;
	for (int s = c->from; s < c->to; s++) {
		if (!cond[s])
			continue;
		int core;
		double b = busiest_core(c, s, &core);
		if (isnan(b))
			continue;
		nc++;
		core_sum += b;
		if (b >= th->core_saturated_pct) {
			hot++;
			if (core >= 0 && core < 256)
				core_votes[core]++;
		}
	}
	double core_share = nc ? (double)hot / nc : NAN, core_mean = nc ? core_sum / nc : NAN;
	int core = -1;
	for (int i = 0, best = 0; i < 256; i++)
		if (core_votes[i] > best) {
			best = core_votes[i];
			core = i;
		}
	bool cpu_cause = !isnan(core_share) && core_share >= th->saturated_share;

	/* Cause 2: the job's worker processes saturated. */
	worker_stats w;
	tree_workers(c, &w);
	bool worker_cause = w.saturated >= 1 && 2 * w.saturated >= w.total;

	/* Causes 3 and 4: storage during the gaps. */
	double iowait = host_mean_mask(c, HM_CPU_IOWAIT, cond);
	double disk_busy = host_mean_mask(c, HM_DISK_BUSY_MAX, cond);
	double disk_read = host_mean_mask(c, HM_DISK_READ, cond);
	bool io_cause = !isnan(iowait) && iowait >= th->iowait_pct;
	bool disk_cause = !isnan(disk_busy) && disk_busy >= th->disk_busy_pct;

	if (!cpu_cause && !worker_cause && !io_cause && !disk_cause) {
		free(gap);
		free(all);
		return;
	}
	double osc = oscillation_share(c, worst), pcv = power_cv(c, worst);
	bool oscillating = !isnan(osc) && osc >= th->oscillation_share;
	bool unstable = !isnan(pcv) && pcv >= th->power_cv;
	int causes = cpu_cause + worker_cause + io_cause + disk_cause;
	double conf = 0.55 + 0.1 * (causes - 1) + (oscillating ? 0.15 : 0) + (unstable ? 0.1 : 0);
	diag_finding *f = dx_add(c, "data-starved", DIAG_WARN, conf > 0.95 ? 0.95 : conf);
	f->gpus = starving;
	char gl[64], why[128];
	dx_gpu_list(c, starving, gl, sizeof gl);
	if (cpu_cause && core >= 0)
		snprintf(why, sizeof why, "core %d is at %.0f %%", core, core_mean);
	else if (cpu_cause)
		snprintf(why, sizeof why, "the busiest core is at %.0f %%", core_mean);
	else if (worker_cause)
		snprintf(why, sizeof why, "%d of %d worker processes are at 100 %% of a core",
			 w.saturated, w.total);
	else if (io_cause)
		snprintf(why, sizeof why, "iowait is %.0f %%", iowait);
	else
		snprintf(why, sizeof why, "the disk is %.0f %% busy", disk_busy);
	dx_title(f, "%s idle %.0f %% of %s while %s", gl, worst_idle, c->span, why);

	bool drv = dx_present(c, dx_series(c, worst, GM_UTIL_SAMPLES_MIN)) > 0;
	dx_ev(f, dx_act_key(c, worst), c->act[worst] ? "idle share (100 - mean)" : "mean idle share",
	      worst_idle, ">=", th->starved_idle_pct, "%", worst);
	if (!isnan(core_share))
		dx_ev(f, "cpu.busy.max", "share of gap samples saturated", 100 * core_share, ">=",
		      100 * th->saturated_share, "%", -1);
	if (!isnan(core_mean))
		dx_ev(f, "cpu.busy.max", "mean during gaps", core_mean, ">=", th->core_saturated_pct,
		      "%", -1);
	if (w.total > 0)
		dx_ev(f, "tree.cpu", "worker processes saturated", w.saturated, ">=",
		      (w.total + 1) / 2, "", -1);
	if (!isnan(iowait))
		dx_ev(f, "cpu.iowait", "mean during gaps", iowait, ">=", th->iowait_pct, "%", -1);
	if (!isnan(disk_busy))
		dx_ev(f, "disk.busy.max", "mean during gaps", disk_busy, ">=", th->disk_busy_pct, "%",
		      -1);
	if (!isnan(disk_read))
		dx_ev(f, "disk.read", "mean during gaps", disk_read / MIB, NULL, NAN, "MiB/s", -1);
	if (!isnan(osc))
		dx_ev(f, drv ? "utilization.gpu.samples" : "utilization.gpu",
		      "share of samples swinging idle<->busy", 100 * osc, ">=",
		      100 * th->oscillation_share, "%", worst);
	if (!isnan(pcv))
		dx_ev(f, "power.draw", "coefficient of variation", pcv, ">=", th->power_cv, "", worst);
	if (io_cause || disk_cause)
		dx_note(f, "Storage is part of the wait (iowait or disk busy during GPU gaps).");
	if (worker_cause && w.top_pid)
		dx_note(f, "Busiest job process: PID %u at %.0f %% of a core.", w.top_pid, w.top_cpu);
	dx_ranges_mask(c, f, ngap >= 2 ? gap : cond);
	dx_advice(c, f, "data-starved");
	free(gap);
	free(all);
}

void rule_host_swap(diag_ctx *c)
{
	const timeline *tl = c->tl;
	if (!tl->h[HM_SWAP_IN] && !tl->h[HM_SWAP_OUT])
		return;
	/* The whole recording: swapping before the GPU starts still slows the job. */
	double in = 0, out = 0, peak = 0;
	bool *mask = dx_mask_new(c);
	for (int s = 0; s < tl->n; s++) {
		double dt = tl->interval[s];
		if (isnan(dt))
			dt = tl->n > 1 ? tl->t[1] - tl->t[0] : 1;
		double a = tl_host_at(tl, HM_SWAP_IN, s), b = tl_host_at(tl, HM_SWAP_OUT, s);
		a = isnan(a) ? 0 : a;
		b = isnan(b) ? 0 : b;
		in += a * dt;
		out += b * dt;
		if (a + b > peak)
			peak = a + b;
		mask[s] = a + b > 0;
	}
	double total = (in + out) / MIB;
	if (total < c->th->swap_min_mib) {
		free(mask);
		return;
	}
	diag_finding *f = dx_add(c, "host-swap", DIAG_WARN, 0.9);
	dx_title(f, "The host swapped %.0f MiB during %s (peak %.1f MiB/s)", total,
		 c->o->live ? c->span : "the recording", peak / MIB);
	dx_ev(f, "swap.in+swap.out", "total swapped", total, ">=", c->th->swap_min_mib, "MiB", -1);
	dx_ev(f, "swap.in", "total", in / MIB, NULL, NAN, "MiB", -1);
	dx_ev(f, "swap.out", "total", out / MIB, NULL, NAN, "MiB", -1);
	double used = tl_max(tl->h[HM_SWAP_USED], 0, tl->n);
	if (!isnan(used))
		dx_ev(f, "swap.used", "peak", used, NULL, NAN, "MiB", -1);
	double avail = tl_min(tl->h[HM_MEM_AVAIL], 0, tl->n);
	if (!isnan(avail))
		dx_ev(f, "mem.available", "lowest", avail, NULL, NAN, "MiB", -1);
	/* Whole-recording ranges: widen the window temporarily. */
	diag_ctx whole = *c;
	whole.from = 0;
	whole.to = tl->n;
	dx_ranges_mask(&whole, f, mask);
	dx_advice(c, f, "host-swap");
	free(mask);
}
