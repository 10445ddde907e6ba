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
	const double *mn = diag_series(c, g, GM_UTIL_SAMPLES_MIN),
	             *mx = diag_series(c, g, GM_UTIL_SAMPLES_MAX);
	int n = 0, k = 0;
	if (diag_present(c, mn) > 0 && diag_present(c, mx) > 0) {
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
	const double *p = diag_series(c, g, GM_POWER_DRAW);
	double m = diag_mean(c, p);
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

/* ---- foreign processes: the busiest host processes outside the job ---- */

typedef struct {
	unsigned pid;
	double cpu; /* mean % of one core over the samples it was seen in */
	const tl_proc *last;
} foreign_proc;

static int cmp_foreign(const void *a, const void *b)
{
	double x = ((const foreign_proc *)a)->cpu, y = ((const foreign_proc *)b)->cpu;
	return (x < y) - (x > y);
}

/*
 * Host-only process records outside the tree in the window (the recorder
 * keeps the busiest few per second), by mean CPU, busiest first; *total is
 * their summed mean CPU. Returns how many distinct PIDs, *out malloc'd.
 */
static int foreign_procs(const diag_ctx *c, foreign_proc **out, double *total)
{
	const timeline *tl = c->tl;
	foreign_proc *f = calloc(tl->nprocs ? (size_t)tl->nprocs : 1, sizeof *f);
	if (!f)
		abort();
	bool *scanned = diag_mask_new(c);
	int n = 0, scans = 0;
	for (int i = 0; i < tl->nprocs; i++) {
		const tl_proc *p = &tl->procs[i];
		if (p->in_tree || p->gpu >= 0 || isnan(p->cpu_pct) || p->s < c->from ||
		    p->s >= c->to)
			continue;
		if (!scanned[p->s]) {
			scans++;
			scanned[p->s] = true;
		}
		int j = 0;
		while (j < n && f[j].pid != p->pid)
			j++;
		if (j == n)
			f[n++].pid = p->pid;
		f[j].cpu += p->cpu_pct;
		f[j].last = p;
	}
	*total = 0;
	/* Over the scans, not the PID's own samples: a hog seen once is not a steady one. */
	for (int j = 0; j < n; j++) {
		f[j].cpu /= scans > 0 ? scans : 1;
		*total += f[j].cpu;
	}
	free(scanned);
	qsort(f, (size_t)n, sizeof *f, cmp_foreign);
	*out = f;
	return n;
}

typedef struct {
	int total;     /* tree processes that used CPU */
	int saturated; /* of which saturated most of the window */
	double top_cpu;
	unsigned top_pid;
	int loaders, loaders_saturated; /* those without a GPU context: data-loader workers */
	double fair;         /* the busiest foreign process's mean CPU, 0 when none recorded */
	double loader_cpu;   /* the loaders' summed mean CPU, % of one core */
	int known, runnable; /* the tree's process samples with a state, and those in R */
} worker_stats;

/* Does pid of the tree hold a GPU context at some sample? */
static bool on_gpu(const timeline *tl, unsigned pid)
{
	for (int i = 0; i < tl->nprocs; i++)
		if (tl->procs[i].pid == pid && tl->procs[i].in_tree && tl->procs[i].gpu >= 0)
			return true;
	return false;
}

/* Tree processes at or above a saturated core for most of their samples. */
static void tree_workers(const diag_ctx *c, worker_stats *w)
{
	const timeline *tl = c->tl;
	memset(w, 0, sizeof *w);
	/* Distinct PIDs: the records are per sample, so group them. */
	int cap = tl->nprocs ? tl->nprocs : 1, n = 0;
	struct agg {
		unsigned pid;
		int k, hot, known, runnable;
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
		a[j].known += p->state != 0;
		a[j].runnable += p->state == 'R';
		w->known += p->state != 0;
		w->runnable += p->state == 'R';
	}
	/* On a host other processes load, a CPU-bound worker gets only its share
	 * of a core: as much as the busiest foreign process (a hog) gets. */
	foreign_proc *fp;
	double ftotal;
	int nf = foreign_procs(c, &fp, &ftotal);
	w->fair = nf ? fp[0].cpu : 0;
	free(fp);
	for (int j = 0; j < n; j++) {
		double mean = a[j].sum / a[j].k;
		double ready = a[j].known ? (double)a[j].runnable / a[j].known : NAN;
		/* (a process seen a few times, starting up, proves nothing) */
		bool runnable = !isnan(ready) && ready >= c->th->runnable_share &&
		                a[j].known >= c->th->min_samples;
		bool loader = !on_gpu(tl, a[j].pid);
		/* Loaders that hardly work still count against those that are
		 * saturated: one busy process among many idle ones is not the data path. */
		if (loader && (mean >= 1 || runnable)) {
			w->loaders++;
			w->loader_cpu += mean;
		}
		/* Idle helpers (the launcher shell) do not count; a process runnable
		 * whenever sampled does, however little CPU a crowded host gives it. */
		if (mean < 10 && !runnable)
			continue;
		w->total++;
		/* Saturated: at a full core most of the time; or, on a host that
		 * others load, runnable (state R) whenever sampled (it waits for
		 * nothing but a CPU) or getting as much as the busiest hog. A
		 * process seen fewer than min_samples times (one starting up, a
		 * short-lived helper) proves nothing either way. */
		bool sat = a[j].k >= c->th->min_samples &&
		           ((double)a[j].hot / a[j].k >= c->th->saturated_share || runnable ||
		            (w->fair >= c->th->job_cpu_pct && mean >= w->fair / 2));
		w->saturated += sat;
		if (loader)
			w->loaders_saturated += sat;
		if (mean > w->top_cpu) {
			w->top_cpu = mean;
			w->top_pid = a[j].pid;
		}
	}
	free(a);
}

/* What rule_data_starved learns, step by step. */
typedef struct {
	uint64_t starving, waiting; /* GPUs idle for data; ranks waiting in collectives */
	int worst;                  /* the GPU that waits most */
	double worst_idle;
	worker_stats w;
	bool *gap; /* samples where every GPU of the job idled */
	int ngap;
	bool *all;                    /* the whole window, when there are too few gaps */
	bool *cond;                   /* the samples the causes are judged on: gap or all */
	double core_share, core_mean; /* the busiest core during cond */
	int core;                     /* the core most often saturated, -1 */
	double iowait, disk_busy, disk_read, job_cpu, job_read;
	double psi_io, psi_io_full, psi_cpu, psi_mem; /* pressure (PSI) during cond, NAN absent */
	bool followed; /* a job was followed (its tree's own CPU and I/O are known) */
	bool cpu_cause, worker_cause, io_cause, disk_cause, cpu_foreign, io_foreign;
} starve_case;

/* host-contention: the GPU waits while other processes, not the job, load the host. */
static void host_contention(diag_ctx *c, const starve_case *sc)
{
	const diag_thresholds *th = c->th;
	const worker_stats *w = &sc->w;
	uint64_t starving = sc->starving;
	int worst = sc->worst;
	double worst_idle = sc->worst_idle, core_mean = sc->core_mean, core_share = sc->core_share;
	double iowait = sc->iowait, job_cpu = sc->job_cpu;
	bool cpu_foreign = sc->cpu_foreign, io_foreign = sc->io_foreign;
	foreign_proc *fp;
	double ftotal;
	int nf = foreign_procs(c, &fp, &ftotal);
	/* A job whose processes seldom wait for a CPU (state R) is held back by
	 * something else (I/O, a remote service): the others' load is beside it. */
	double ready = w->known >= th->min_samples ? (double)w->runnable / w->known : NAN;
	bool asleep = cpu_foreign && !io_foreign && !isnan(ready) && ready < 1 - th->runnable_share;
	diag_finding *f = diag_add(c, DIAG_R_HOST_CONTENTION, DIAG_WARN,
	                           (nf > 0 ? 0.75 : 0.55) - (asleep ? 0.3 : 0));
	f->gpus = starving;
	char gl[64], who[160] = "";
	diag_gpu_list(c, starving, gl, sizeof gl);
	size_t o = 0;
	for (int i = 0; i < nf && i < 3 && o < sizeof who; i++)
		o += (size_t)snprintf(who + o, sizeof who - o, L_("%sPID %u %.24s (%.0f %%)"),
		                      i ? ", " : "", fp[i].pid,
		                      fp[i].last->cmd[0] ? fp[i].last->cmd : "?", fp[i].cpu);
	char jc[48] = "";
	if (!isnan(job_cpu))
		snprintf(jc, sizeof jc, L_("; the job itself uses %.0f %% of a core"), job_cpu);
	if (cpu_foreign && nf)
		diag_title(f, "%s idle %.0f %% of %s while other processes load the host: %s%s", gl,
		           worst_idle, c->span, who, jc);
	else if (cpu_foreign)
		diag_title(f,
		           "%s idle %.0f %% of %s while the busiest core is at %.0f %%, not by the "
		           "job%s",
		           gl, worst_idle, c->span, core_mean, jc);
	else
		diag_title(
		    f, "%s idle %.0f %% of %s while iowait is %.0f %% from other processes' I/O%s",
		    gl, worst_idle, c->span, iowait, jc);
	DIAG_EV(f, worst, .metric = diag_act_key(c, worst), .stat = N_("idle share (100 - mean)"),
	        .value = worst_idle, .cmp = ">=", .threshold = th->starved_idle_pct, .unit = "%");
	if (!isnan(core_share))
		DIAG_EV(f, DIAG_JOB, .metric = DIAG_HM(CPU_BUSY_MAX),
		        .stat = N_("share of gap samples saturated"), .value = 100 * core_share,
		        .cmp = ">=", .threshold = 100 * th->saturated_share, .unit = "%");
	if (!isnan(job_cpu))
		DIAG_EV(f, DIAG_JOB, .metric = DIAG_HM(TREE_CPU),
		        .stat = /* xgettext:no-c-format */ N_("mean during gaps (% of one core)"),
		        .value = job_cpu, .cmp = "<", .threshold = th->core_saturated_pct,
		        .unit = "%");
	if (io_foreign && !isnan(iowait))
		DIAG_EV(f, DIAG_JOB, .metric = DIAG_HM(CPU_IOWAIT), .stat = N_("mean during gaps"),
		        .value = iowait, .cmp = ">=", .threshold = th->iowait_pct, .unit = "%");
	if (!isnan(ready))
		DIAG_EV(f, DIAG_JOB, .metric = DIAG_EV_PROC_STATE,
		        .stat = N_("job samples runnable (R)"), .value = 100 * ready, .unit = "%");
	for (int i = 0; i < nf && i < 3; i++) {
		char stat[64];
		snprintf(stat, sizeof stat, L_("PID %u %.40s"), fp[i].pid, fp[i].last->cmd);
		DIAG_EV(f, DIAG_JOB, .metric = DIAG_EV_PROC_CPU, .stat = stat, .value = fp[i].cpu,
		        .unit = "%");
	}
	if (nf) {
		DIAG_EV(
		    f, DIAG_JOB, .metric = DIAG_EV_PROC_CPU,
		    .stat =
		        /* xgettext:no-c-format */ N_("other processes, summed (% of one core)"),
		    .value = ftotal, .unit = "%");
		double cap = 100.0 * (c->tl->ncpu > 0 ? c->tl->ncpu : 1);
		diag_note(f,
		          "Other processes took %.0f %% of one core (%.0f %% of the host's %d "
		          "core%s); the busiest: %s.",
		          ftotal, 100 * ftotal / cap, c->tl->ncpu, c->tl->ncpu == 1 ? "" : "s",
		          who);
	} else {
		diag_note(
		    f, "The recording has no per-process CPU of other processes (recorded by "
		       "an older gpuwhy?); the job's own CPU is low, so the load is not its own.");
	}
	diag_range_window(c, f);
	if (asleep)
		diag_note(
		    f,
		    "The job's processes were runnable in only %.0f %% of their samples: they "
		    "mostly wait on something other than a CPU, so this load is probably not "
		    "what holds the GPU back.",
		    100 * ready);
	diag_advice(c, f, NULL);
	free(fp);
}

/*
 * Multi-GPU starvation: every rank waits in its collectives for data, so
 * the GPUs read busy (the collective kernels spin) with few SMs active,
 * while the job's data-loader workers are saturated. Returns the ranks.
 */
static uint64_t ranks_waiting_for_data(const diag_ctx *c, const worker_stats *w)
{
	const diag_thresholds *th = c->th;
	if (c->njob < 2 || w->loaders == 0)
		return 0;
	/* Loaders at a full core each, or sharing a saturated host with the job
	 * using at least job_cpu_pct itself (on a shared host a CPU-bound loader
	 * gets only its share of a core). */
	bool loaders_bound = w->loaders_saturated > 0 && 2 * w->loaders_saturated >= w->loaders;
	if (!loaders_bound) {
		double sat = tl_share(c->tl->h[HM_CPU_BUSY_MAX], c->from, c->to, tl_pred_ge,
		                      th->core_saturated_pct);
		loaders_bound = sat >= th->saturated_share && w->loader_cpu >= th->job_cpu_pct;
	}
	if (!loaders_bound)
		return 0;
	uint64_t m = 0;
	for (int g = 0; g < c->ngpu; g++) {
		if (!c->job[g])
			continue;
		const diag_gpu_summary *G = &c->res->gpu[g];
		double sm = G->sm_active_mean, idle = diag_idle_pct(c, g);
		/* Without GPM a spinning collective shows as busy at low power. */
		double pw = G->power_limit > 0 ? G->power_mean / G->power_limit : NAN;
		bool waits = (!isnan(sm) && sm <= th->launch_sm_active_pct) ||
		             (!isnan(idle) && idle >= th->starved_idle_pct) ||
		             (isnan(sm) && !isnan(pw) && pw <= th->launch_power_ratio);
		if (!waits)
			return 0;
		m |= 1ULL << g;
	}
	return m;
}

/*
 * Starving GPUs: active at some point of the window (a GPU never used is
 * imbalance, not starvation), idle a large share of it. A badly starved
 * GPU may average under the idle threshold: that is the extreme case.
 * False when no GPU starves and no rank waits for data.
 */
static bool starving_gpus(const diag_ctx *c, starve_case *sc)
{
	const diag_thresholds *th = c->th;
	sc->worst = -1;
	sc->worst_idle = -1;
	for (int g = 0; g < c->ngpu; g++) {
		if (!c->job[g])
			continue;
		double idle = diag_idle_pct(c, g), peak = diag_max(c, c->act[g]);
		if (isnan(idle) || isnan(peak) || peak <= th->idle_util_pct)
			continue;
		if (idle >= th->starved_idle_pct) {
			sc->starving |= 1ULL << g;
			if (idle > sc->worst_idle) {
				sc->worst_idle = idle;
				sc->worst = g;
			}
		}
	}
	tree_workers(c, &sc->w);
	sc->waiting = ranks_waiting_for_data(c, &sc->w);
	if (sc->worst < 0 && !sc->waiting)
		return false;
	sc->starving |= sc->waiting;
	for (int g = 0; g < c->ngpu; g++) {
		if (!(sc->waiting & (1ULL << g)))
			continue;
		/* Waiting ranks: their SMs idle while utilization spins. */
		double sm = c->res->gpu[g].sm_active_mean, idle = diag_idle_pct(c, g);
		double wi = !isnan(sm) ? 100 - sm : idle;
		if (wi > sc->worst_idle) {
			sc->worst_idle = wi;
			sc->worst = g;
		}
	}
	return true;
}

/*
 * GPU gaps: samples where every GPU of the job idled a large share. A
 * stall in the input pipeline leaves all ranks waiting together; one
 * GPU busy while the others idle is sync-wait or imbalance instead.
 * False when a multi-GPU job has no common gaps.
 */
static bool gap_samples(const diag_ctx *c, starve_case *sc)
{
	const diag_thresholds *th = c->th;
	sc->gap = diag_mask_new(c);
	/* The window's first and last samples straddle the start and the end of
	 * the work: partly idle by nature, not gaps. */
	int edge = c->to - c->from > th->min_samples + 2 ? 1 : 0;
	for (int s = c->from + edge; s < c->to - edge && !sc->waiting; s++) {
		int present = 0, idle = 0;
		for (int g = 0; g < c->ngpu; g++) {
			if (!c->job[g])
				continue;
			double i = diag_idle_at(c, g, s);
			if (isnan(i))
				continue;
			present++;
			idle += i >= th->starved_idle_pct;
		}
		/* A job stopped (a breakpoint, SIGSTOP) waits for no data. */
		if (present && idle == present && !c->stopped[s]) {
			sc->gap[s] = true;
			sc->ngap++;
		}
	}
	sc->cond = sc->gap;
	if (sc->ngap >= 2)
		return true;
	if (c->njob > 1 && !sc->waiting)
		return false;
	/* One GPU idling a little in every sample (or ranks waiting in every
	 * sample): condition on the whole window. */
	sc->all = diag_mask_new(c);
	for (int s = c->from; s < c->to; s++)
		sc->all[s] = !c->stopped[s];
	sc->cond = sc->all;
	return true;
}

/* Cause 1: a saturated core while the GPU waits. */
static void busy_core(const diag_ctx *c, starve_case *sc)
{
	int nc = 0, hot = 0, core_votes[256] = {0};
	double core_sum = 0;
	for (int s = c->from; s < c->to; s++) {
		if (!sc->cond[s])
			continue;
		int core;
		double b = busiest_core(c, s, &core);
		if (isnan(b))
			continue;
		nc++;
		core_sum += b;
		if (b >= c->th->core_saturated_pct) {
			hot++;
			if (core >= 0 && core < 256)
				core_votes[core]++;
		}
	}
	sc->core_share = nc ? (double)hot / nc : NAN;
	sc->core_mean = nc ? core_sum / nc : NAN;
	sc->core = -1;
	for (int i = 0, best = 0; i < 256; i++)
		if (core_votes[i] > best) {
			best = core_votes[i];
			sc->core = i;
		}
	sc->cpu_cause = !isnan(sc->core_share) && sc->core_share >= c->th->saturated_share;
}

/* Causes 2 to 4 (workers, iowait, disk), then whose load each one is. */
static void load_causes(const diag_ctx *c, starve_case *sc)
{
	const diag_thresholds *th = c->th;
	const worker_stats *w = &sc->w;
	sc->worker_cause = w->saturated >= 1 && 2 * w->saturated >= w->total;
	sc->iowait = host_mean_mask(c, HM_CPU_IOWAIT, sc->cond);
	sc->disk_busy = host_mean_mask(c, HM_DISK_BUSY_MAX, sc->cond);
	sc->disk_read = host_mean_mask(c, HM_DISK_READ, sc->cond);
	sc->psi_io = host_mean_mask(c, HM_PSI_IO_SOME, sc->cond);
	sc->psi_io_full = host_mean_mask(c, HM_PSI_IO_FULL, sc->cond);
	sc->psi_cpu = host_mean_mask(c, HM_PSI_CPU_SOME, sc->cond);
	sc->psi_mem = host_mean_mask(c, HM_PSI_MEM_SOME, sc->cond);
	/* tasks stalled on I/O say storage as iowait does, also where iowait hides it (busy CPUs
	 * doing other work count no iowait) */
	sc->io_cause = (!isnan(sc->iowait) && sc->iowait >= th->iowait_pct) ||
	               (!isnan(sc->psi_io) && sc->psi_io >= th->psi_io_pct);
	sc->disk_cause = !isnan(sc->disk_busy) && sc->disk_busy >= th->disk_busy_pct;
	/*
	 * Whose load is it? With the job followed, a busy core is the job's
	 * only when the job itself uses about a core or more, and storage only
	 * when the job reads; otherwise other processes load the host.
	 */
	sc->followed = c->tl->have_root;
	sc->job_cpu = sc->followed ? host_mean_mask(c, HM_TREE_CPU, sc->cond) : NAN;
	sc->job_read = sc->followed ? host_mean_mask(c, HM_TREE_READ, sc->cond) : NAN;
	bool cpu_mine = !sc->followed || isnan(sc->job_cpu) || sc->job_cpu >= th->job_cpu_pct ||
	                w->saturated > 0;
	bool io_mine = !sc->followed || isnan(sc->job_read) || sc->job_read >= MIB;
	sc->cpu_foreign = sc->cpu_cause && !cpu_mine && !sc->worker_cause;
	sc->io_foreign = (sc->io_cause || sc->disk_cause) && !io_mine;
	sc->cpu_cause &= cpu_mine;
	sc->io_cause &= io_mine;
	sc->disk_cause &= io_mine;
}

/* Why the input waits on storage: iowait, the busy disk, I/O pressure, whichever say so. */
static void io_why(const diag_ctx *c, const starve_case *sc, char *why, size_t len)
{
	const diag_thresholds *th = c->th;
	size_t o = 0;
	if (!isnan(sc->iowait) && sc->iowait >= th->iowait_pct)
		o += (size_t)snprintf(why, len, L_("iowait is %.0f %%"), sc->iowait);
	else if (!isnan(sc->psi_io))
		o += (size_t)snprintf(why, len, L_("tasks stall on I/O %.0f %% of the time"),
		                      sc->psi_io);
	if (sc->disk_cause && o < len)
		snprintf(why + o, len - o, L_(" and the busiest disk is %.0f %% busy"),
		         sc->disk_busy);
}

static void starved_title(const diag_ctx *c, diag_finding *f, const starve_case *sc)
{
	const worker_stats *w = &sc->w;
	char gl[64], why[128];
	diag_gpu_list(c, sc->starving, gl, sizeof gl);
	if (sc->waiting && w->loaders_saturated)
		snprintf(why, sizeof why,
		         L_("%d of %d data-loader workers are at 100 %% of a core"),
		         w->loaders_saturated, w->loaders);
	else if (sc->waiting)
		snprintf(why, sizeof why,
		         L_("the job's %d data-loader workers use %.0f %% of a core on "
		            "a saturated host"),
		         w->loaders, w->loader_cpu);
	else if (sc->cpu_cause && sc->core >= 0)
		snprintf(why, sizeof why, L_("core %d is at %.0f %%"), sc->core, sc->core_mean);
	else if (sc->cpu_cause)
		snprintf(why, sizeof why, L_("the busiest core is at %.0f %%"), sc->core_mean);
	else if (sc->worker_cause)
		snprintf(why, sizeof why, L_("%d of %d worker processes are at 100 %% of a core"),
		         w->saturated, w->total);
	else if (sc->io_cause)
		io_why(c, sc, why, sizeof why);
	else
		snprintf(why, sizeof why, L_("the disk is %.0f %% busy"), sc->disk_busy);
	if (sc->waiting)
		diag_title(f, "%s wait for data in every step (SMs active %.0f %%) while %s", gl,
		           100 - sc->worst_idle, why);
	else
		diag_title(f, "%s idle %.0f %% of %s while %s", gl, sc->worst_idle, c->span, why);
}

/* Pressure (PSI), where the host reports it: I/O against its threshold, and the CPU and memory
 * stalls beside it (a loader short of a CPU, or reclaiming memory, waits too). */
static void starved_pressure_evidence(const diag_ctx *c, diag_finding *f, const starve_case *sc)
{
	if (!isnan(sc->psi_io))
		DIAG_EV(f, DIAG_JOB, .metric = DIAG_HM(PSI_IO_SOME), .stat = N_("mean during gaps"),
		        .value = sc->psi_io, .cmp = ">=", .threshold = c->th->psi_io_pct,
		        .unit = "%");
	if (!isnan(sc->psi_io_full) && sc->io_cause)
		DIAG_EV(f, DIAG_JOB, .metric = DIAG_HM(PSI_IO_FULL), .stat = N_("mean during gaps"),
		        .value = sc->psi_io_full, .unit = "%");
	if (!isnan(sc->psi_cpu))
		DIAG_EV(f, DIAG_JOB, .metric = DIAG_HM(PSI_CPU_SOME),
		        .stat = N_("mean during gaps"), .value = sc->psi_cpu, .unit = "%");
	if (!isnan(sc->psi_mem))
		DIAG_EV(f, DIAG_JOB, .metric = DIAG_HM(PSI_MEM_SOME),
		        .stat = N_("mean during gaps"), .value = sc->psi_mem, .unit = "%");
}

/* The host's side of the evidence: cores, the job's workers, storage. */
static void starved_host_evidence(const diag_ctx *c, diag_finding *f, const starve_case *sc)
{
	const diag_thresholds *th = c->th;
	const worker_stats *w = &sc->w;
	if (!isnan(sc->core_share))
		DIAG_EV(f, DIAG_JOB, .metric = DIAG_HM(CPU_BUSY_MAX),
		        .stat = N_("share of gap samples saturated"), .value = 100 * sc->core_share,
		        .cmp = ">=", .threshold = 100 * th->saturated_share, .unit = "%");
	if (!isnan(sc->core_mean))
		DIAG_EV(f, DIAG_JOB, .metric = DIAG_HM(CPU_BUSY_MAX),
		        .stat = N_("mean during gaps"), .value = sc->core_mean,
		        .cmp = ">=", .threshold = th->core_saturated_pct, .unit = "%");
	if (!isnan(sc->job_cpu))
		DIAG_EV(f, DIAG_JOB, .metric = DIAG_HM(TREE_CPU),
		        .stat = /* xgettext:no-c-format */ N_("mean during gaps (% of one core)"),
		        .value = sc->job_cpu, .unit = "%");
	if (w->total > 0)
		DIAG_EV(f, DIAG_JOB, .metric = DIAG_HM(TREE_CPU),
		        .stat = N_("worker processes saturated"), .value = w->saturated,
		        .cmp = ">=", .threshold = (w->total + 1) / 2);
	if (sc->waiting)
		DIAG_EV(f, DIAG_JOB, .metric = DIAG_HM(TREE_CPU),
		        .stat = N_("data-loader workers saturated"), .value = w->loaders_saturated,
		        .cmp = ">=", .threshold = (w->loaders + 1) / 2);
	if (!isnan(sc->iowait))
		DIAG_EV(f, DIAG_JOB, .metric = DIAG_HM(CPU_IOWAIT), .stat = N_("mean during gaps"),
		        .value = sc->iowait, .cmp = ">=", .threshold = th->iowait_pct, .unit = "%");
	if (!isnan(sc->disk_busy))
		DIAG_EV(f, DIAG_JOB, .metric = DIAG_HM(DISK_BUSY_MAX),
		        .stat = N_("mean during gaps"), .value = sc->disk_busy,
		        .cmp = ">=", .threshold = th->disk_busy_pct, .unit = "%");
	if (!isnan(sc->disk_read))
		DIAG_EV(f, DIAG_JOB, .metric = DIAG_HM(DISK_READ), .stat = N_("mean during gaps"),
		        .value = sc->disk_read / MIB, .unit = "MiB/s");
	starved_pressure_evidence(c, f, sc);
}

static void starved_notes(const diag_ctx *c, diag_finding *f, const starve_case *sc)
{
	if (sc->waiting)
		diag_note(
		    f, "Every rank waits in its collectives for the next batch: utilization "
		       "reads busy because the collective kernels spin, not because of small "
		       "kernels (not launch-bound), and no single rank is slower (not sync-wait).");
	if (!sc->followed)
		diag_note(
		    f, "No job followed: the CPU and I/O evidence is the whole host's, and part of "
		       "the load may be other processes'.");
	if (sc->io_cause || sc->disk_cause)
		diag_note(f, "Storage is part of the wait (iowait or disk busy during GPU gaps).");
	if (sc->followed) {
		foreign_proc *fp;
		double ftotal;
		int nf = foreign_procs(c, &fp, &ftotal);
		if (nf && ftotal >= c->th->job_cpu_pct)
			diag_note(
			    f,
			    "Other processes also load the host (%.0f %% of a core; busiest PID "
			    "%u %.40s at %.0f %%): the loaders get less of the CPU.",
			    ftotal, fp[0].pid, fp[0].last->cmd, fp[0].cpu);
		free(fp);
	}
	if (sc->worker_cause && sc->w.top_pid)
		diag_note(f, "Busiest job process: PID %u at %.0f %% of a core.", sc->w.top_pid,
		          sc->w.top_cpu);
}

/*
 * A saturated loader keeps GPUs in the quadrant's idle-full corner waiting:
 * that memory waits for data, so this finding, not memory-full-compute-idle,
 * answers for those GPUs, and says so.
 */
static void starved_memory_held(diag_ctx *c, diag_finding *f, const starve_case *sc)
{
	bool noted = false;
	for (int g = 0; g < c->ngpu; g++) {
		const diag_gpu_summary *s = &c->res->gpu[g];
		if (!(sc->starving & (1ULL << g)) || s->quadrant != DIAG_Q_IDLE_FULL)
			continue;
		c->loader_bound |= 1ULL << g;
		DIAG_EV(f, g, .metric = DIAG_GM(MEM_USED), .stat = N_("peak share of capacity"),
		        .value = s->mem_peak_pct, .cmp = ">=", .threshold = c->th->quad_mem_pct,
		        .unit = "%");
		if (!noted)
			diag_note(
			    f,
			    "GPU %d holds %.0f %% of its memory while it waits: the memory waits "
			    "for data, so feed the GPU faster before changing the batch or the "
			    "model (this is why memory-full-compute-idle is not reported).",
			    s->index, s->mem_peak_pct);
		noted = true;
	}
}

/* The data-starved finding from a case with at least one cause of the job's own. */
static void starved_finding(diag_ctx *c, const starve_case *sc)
{
	const diag_thresholds *th = c->th;
	int worst = sc->worst;
	double osc = oscillation_share(c, worst), pcv = power_cv(c, worst);
	bool oscillating = !isnan(osc) && osc >= th->oscillation_share;
	bool unstable = !isnan(pcv) && pcv >= th->power_cv;
	int causes = sc->cpu_cause + sc->worker_cause + sc->io_cause + sc->disk_cause;
	double conf = 0.55 + 0.1 * (causes - 1) + (oscillating ? 0.15 : 0) + (unstable ? 0.1 : 0);
	if (sc->waiting)
		conf += 0.15; /* every rank waits while the loaders are saturated */
	if (!sc->followed)
		conf -= 0.15; /* host-wide evidence: the load may be someone else's */
	diag_finding *f = diag_add(c, DIAG_R_DATA_STARVED, DIAG_WARN, conf > 0.95 ? 0.95 : conf);
	f->gpus = sc->starving;
	starved_title(c, f, sc);
	bool drv = diag_present(c, diag_series(c, worst, GM_UTIL_SAMPLES_MIN)) > 0;
	if (sc->waiting)
		DIAG_EV(f, worst, .metric = DIAG_GM(GPM_SM_ACTIVE),
		        .stat = N_("idle share of the SMs (100 - mean)"), .value = sc->worst_idle,
		        .cmp = ">=", .threshold = 100 - th->launch_sm_active_pct, .unit = "%");
	else
		DIAG_EV(f, worst, .metric = diag_act_key(c, worst),
		        .stat =
		            c->act[worst] ? N_("idle share (100 - mean)") : N_("mean idle share"),
		        .value = sc->worst_idle, .cmp = ">=", .threshold = th->starved_idle_pct,
		        .unit = "%");
	/* (before the host's evidence: the finding's evidence lines are limited) */
	if (sc->cpu_cause || sc->worker_cause || sc->waiting)
		starved_memory_held(c, f, sc);
	starved_host_evidence(c, f, sc);
	if (!isnan(osc))
		DIAG_EV(f, worst, .metric = drv ? DIAG_EV_UTIL_SAMPLES : DIAG_GM(UTIL_GPU),
		        .stat = N_("share of samples swinging idle<->busy"), .value = 100 * osc,
		        .cmp = ">=", .threshold = 100 * th->oscillation_share, .unit = "%");
	if (!isnan(pcv))
		DIAG_EV(f, worst, .metric = DIAG_GM(POWER_DRAW),
		        .stat = N_("coefficient of variation"), .value = pcv,
		        .cmp = ">=", .threshold = th->power_cv);
	starved_notes(c, f, sc);
	diag_ranges_mask(c, f, sc->ngap >= 2 ? sc->gap : sc->cond);
	diag_advice(c, f, NULL);
}

void rule_data_starved(diag_ctx *c)
{
	if (c->njob == 0 || c->to - c->from < c->th->min_samples)
		return;
	/* The GPUs idled mostly because the job was stopped: no data path to judge. */
	diag_stop st;
	if (diag_stopped_job(c, &st) && st.explains)
		return;
	starve_case sc = {0};
	if (!starving_gpus(c, &sc))
		return;
	if (gap_samples(c, &sc)) {
		busy_core(c, &sc);
		load_causes(c, &sc);
		if (sc.cpu_cause || sc.worker_cause || sc.io_cause || sc.disk_cause)
			starved_finding(c, &sc);
		else if ((sc.cpu_foreign || sc.io_foreign) && sc.worst >= 0)
			host_contention(c, &sc);
	}
	free(sc.gap);
	free(sc.all);
}

void rule_host_swap(diag_ctx *c)
{
	const timeline *tl = c->tl;
	if (!tl->h[HM_SWAP_IN] && !tl->h[HM_SWAP_OUT])
		return;
	/* The whole recording: swapping before the GPU starts still slows the job. */
	double in = 0, out = 0, peak = 0;
	bool *mask = diag_mask_new(c);
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
	diag_finding *f = diag_add(c, DIAG_R_HOST_SWAP, DIAG_WARN, 0.9);
	diag_title(f, "The host swapped %.0f MiB during %s (peak %.1f MiB/s)", total,
	           c->o->live ? c->span : L_("the recording"), peak / MIB);
	DIAG_EV(f, DIAG_JOB, .metric = DIAG_HM(SWAP_IN), .plus = DIAG_HM(SWAP_OUT),
	        .stat = N_("total swapped"), .value = total,
	        .cmp = ">=", .threshold = c->th->swap_min_mib, .unit = "MiB");
	DIAG_EV(f, DIAG_JOB, .metric = DIAG_HM(SWAP_IN), .stat = N_("total"), .value = in / MIB,
	        .unit = "MiB");
	DIAG_EV(f, DIAG_JOB, .metric = DIAG_HM(SWAP_OUT), .stat = N_("total"), .value = out / MIB,
	        .unit = "MiB");
	double used = tl_max(tl->h[HM_SWAP_USED], 0, tl->n);
	if (!isnan(used))
		DIAG_EV(f, DIAG_JOB, .metric = DIAG_HM(SWAP_USED), .stat = N_("peak"),
		        .value = used, .unit = "MiB");
	double avail = tl_min(tl->h[HM_MEM_AVAIL], 0, tl->n);
	if (!isnan(avail))
		DIAG_EV(f, DIAG_JOB, .metric = DIAG_HM(MEM_AVAIL), .stat = N_("lowest"),
		        .value = avail, .unit = "MiB");
	/* Whole-recording ranges: widen the window temporarily. */
	diag_ctx whole = *c;
	whole.from = 0;
	whole.to = tl->n;
	diag_ranges_mask(&whole, f, mask);
	diag_advice(c, f, NULL);
	free(mask);
}
