/*
 * rules_proc.c - rules read from who holds the GPUs: not-on-gpu (the first
 * question of the chain: is the process on a GPU at all), all-on-gpu0 (ranks
 * that never select their device) and contention (other processes on the
 * job's GPUs, memory left behind by processes that are gone).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/diag_int.h"

/* One process on one GPU, aggregated over its per-sample records. */
typedef struct {
	unsigned pid;
	int gpu;
	bool in_tree, alive;
	int n, sm_n;
	double mem_max, sm_sum;
	const tl_proc *last; /* for user and command */
} proc_agg;

/* Aggregate GPU process records of samples [from, to) by (pid, gpu); *out malloc'd. */
static int aggregate(const diag_ctx *c, int from, int to, proc_agg **out)
{
	const timeline *tl = c->tl;
	proc_agg *a = calloc(tl->nprocs ? (size_t)tl->nprocs : 1, sizeof *a);
	if (!a)
		abort();
	int n = 0;
	for (int i = 0; i < tl->nprocs; i++) {
		const tl_proc *p = &tl->procs[i];
		if (p->gpu < 0 || p->gpu >= c->ngpu || p->s < from || p->s >= to)
			continue;
		int j = 0;
		while (j < n && !(a[j].pid == p->pid && a[j].gpu == p->gpu))
			j++;
		if (j == n) {
			a[n].pid = p->pid;
			a[n].gpu = p->gpu;
			a[n].alive = true;
			n++;
		}
		proc_agg *x = &a[j];
		x->n++;
		x->in_tree |= p->in_tree;
		x->alive &= p->alive; /* gone once seen gone */
		if (!isnan(p->gpu_mem_mib) && p->gpu_mem_mib > x->mem_max)
			x->mem_max = p->gpu_mem_mib;
		if (!isnan(p->sm_pct)) {
			x->sm_sum += p->sm_pct;
			x->sm_n++;
		}
		x->last = p;
	}
	*out = a;
	return n;
}

/* Distinct PIDs of the watched tree seen at all (with or without a GPU). */
static int tree_pids(const timeline *tl)
{
	unsigned seen[512];
	int n = 0;
	for (int i = 0; i < tl->nprocs && n < 512; i++) {
		const tl_proc *p = &tl->procs[i];
		if (!p->in_tree)
			continue;
		int j = 0;
		while (j < n && seen[j] != p->pid)
			j++;
		if (j == n)
			seen[n++] = p->pid;
	}
	return n;
}

void rule_not_on_gpu(diag_ctx *c)
{
	const timeline *tl = c->tl;
	if (!tl->have_root || c->tree_on_gpu || tl->n == 0)
		return;
	/* A GPU works with no process visible on it: the job may well be that
	 * work, seen from outside its PID namespace; not-checked says so. */
	if (c->hidden)
		return;
	const char *cvd = diag_env(c, "CUDA_VISIBLE_DEVICES");
	int visible = diag_visible_count(cvd);
	double gpu_busy = NAN;
	for (int g = 0; g < c->ngpu; g++) {
		double m = tl_max(c->act[g], 0, tl->n);
		if (!isnan(m) && (isnan(gpu_busy) || m > gpu_busy))
			gpu_busy = m;
	}
	diag_severity sev = DIAG_ERROR;
	double conf = 0.85;
	if (visible == 0)
		conf = 0.95;
	else if (c->unmatched) {
		/* GPU processes exist whose PIDs this host does not know: most
		 * likely the job itself seen from another PID namespace. */
		sev = DIAG_WARN;
		conf = 0.3;
	} else if (!isnan(gpu_busy) && gpu_busy > c->th->idle_util_pct) {
		conf = 0.7; /* something used a GPU, just not the job */
	}
	/* A few samples can miss a short job's context: not enough to call it an error. */
	bool few = tl->n < c->th->min_samples && visible != 0;
	if (few) {
		sev = DIAG_INFO;
		conf = 0.3;
	}
	diag_finding *f = diag_add(c, DIAG_R_NOT_ON_GPU, sev, conf);
	int np = tree_pids(tl);
	double cpu = tl_mean(tl->h[HM_TREE_CPU], 0, tl->n);
	char cpu_s[64] = "";
	if (!isnan(cpu))
		snprintf(cpu_s, sizeof cpu_s, L_(" (its CPU use averaged %.0f %% of a core)"), cpu);
	if (np > 0)
		diag_title(
		    f,
		    "The job never used a GPU: none of its %d process%s held a GPU context in "
		    "%.1f s%s",
		    np, np == 1 ? "" : "es", tl->duration, cpu_s);
	else
		diag_title(f, "The job never used a GPU: it held no GPU context in %.1f s%s",
		           tl->duration, cpu_s);
	DIAG_EV(f, DIAG_JOB, .metric = DIAG_EV_PROC_GPU,
	        .stat = N_("job processes holding a GPU context"), .value = 0,
	        .cmp = ">=", .threshold = 1);
	if (!isnan(cpu))
		DIAG_EV(f, DIAG_JOB, .metric = DIAG_HM(TREE_CPU), .stat = N_("mean"), .value = cpu,
		        .unit = "%");
	DIAG_EV(f, DIAG_JOB, .metric = DIAG_EV_GPUS, .stat = N_("GPUs visible to the recorder"),
	        .value = c->ngpu);
	if (!isnan(gpu_busy))
		DIAG_EV(f, DIAG_JOB, .metric = DIAG_GM(UTIL_GPU), .stat = N_("peak on any GPU"),
		        .value = gpu_busy, .unit = "%");
	if (visible == 0)
		diag_note(f, "CUDA_VISIBLE_DEVICES=\"%s\" hides every GPU from the job.", cvd);
	if (c->ngpu == 0)
		diag_note(f, "No GPU was visible to the recorder either.");
	if (c->unmatched)
		diag_note(f, "Processes on the GPUs could not be matched to this host's PIDs: in a "
		             "container without --pid=host the job may be among them.");
	else if (!isnan(gpu_busy) && gpu_busy > c->th->idle_util_pct)
		diag_note(f, "GPU activity during the run came from other processes.");
	if (few)
		diag_note(f, "Only %d sample%s: a context held between samples would be missed.",
		          tl->n, tl->n == 1 ? "" : "s");
	diag_add_range(f, 0, tl->duration);
	diag_advice(c, f, NULL);
}

void rule_all_on_gpu0(diag_ctx *c)
{
	const timeline *tl = c->tl;
	if (!tl->have_root || !c->tree_on_gpu || c->ngpu < 2)
		return;
	proc_agg *a;
	int n = aggregate(c, 0, tl->n, &a);
	unsigned pids[64];
	int np = 0, gpu = -1;
	bool single = true;
	for (int i = 0; i < n; i++) {
		if (!a[i].in_tree)
			continue;
		if (gpu < 0)
			gpu = a[i].gpu;
		else if (a[i].gpu != gpu)
			single = false;
		int j = 0;
		while (j < np && pids[j] != a[i].pid)
			j++;
		if (j == np && np < 64)
			pids[np++] = a[i].pid;
	}
	free(a);
	if (!single || np < 2 || gpu < 0)
		return;
	int intended = diag_intended_gpus(c);
	int visible = diag_visible_count(diag_env(c, "CUDA_VISIBLE_DEVICES"));
	if (visible == 1 && intended < 2)
		return; /* the job was given one GPU on purpose */
	/* The other GPUs: idle means the job left them unused. */
	uint64_t others = 0;
	double osum = 0;
	int on = 0;
	bool others_idle = true;
	for (int g = 0; g < c->ngpu; g++) {
		if (g == gpu)
			continue;
		others |= 1ULL << g;
		double m = tl_mean(c->act[g], 0, tl->n);
		if (!isnan(m)) {
			osum += m;
			on++;
			if (m > c->th->imbalance_idle_pct)
				others_idle = false;
		}
	}
	if (intended < 2 && !others_idle)
		return;
	diag_finding *f = diag_add(c, DIAG_R_ALL_ON_GPU0, intended >= 2 ? DIAG_ERROR : DIAG_WARN,
	                           intended >= 2 ? 0.9 : 0.65);
	diag_gpu(f, gpu);
	char gl[96];
	diag_gpu_list(c, others, gl, sizeof gl);
	if (on)
		diag_title(
		    f, "All %d processes of the job run on GPU %d while %s %s idle (mean %.0f %%)",
		    np, tl->gpu[gpu].index, gl, on > 1 ? L_("stay") : L_("stays"), osum / on);
	else
		diag_title(f, "All %d processes of the job run on GPU %d; %s unused", np,
		           tl->gpu[gpu].index, gl);
	DIAG_EV(f, gpu, .metric = DIAG_EV_PROC_GPU, .stat = N_("job processes with a GPU context"),
	        .value = np, .cmp = ">=", .threshold = 2);
	DIAG_EV(f, DIAG_JOB, .metric = DIAG_EV_PROC_GPU, .stat = N_("distinct GPUs they use"),
	        .value = 1, .cmp = "<", .threshold = 2);
	if (on)
		DIAG_EV(f, DIAG_JOB, .metric = DIAG_GM(UTIL_GPU),
		        .stat = N_("mean of the other GPUs"), .value = osum / on,
		        .cmp = "<=", .threshold = c->th->imbalance_idle_pct, .unit = "%");
	if (intended >= 2)
		DIAG_EV(f, DIAG_JOB, .metric = DIAG_EV_COMMAND,
		        .stat = N_("GPUs the job asked for"), .value = intended);
	char list[160] = "";
	size_t o = 0;
	for (int i = 0; i < np && i < 12 && o < sizeof list; i++)
		o += (size_t)snprintf(list + o, sizeof list - o, "%s%u", i ? ", " : "", pids[i]);
	diag_note(f, "PIDs: %s.", list);
	const char *cvd = diag_env(c, "CUDA_VISIBLE_DEVICES");
	if (cvd)
		diag_note(f, "CUDA_VISIBLE_DEVICES=\"%s\".", cvd);
	diag_add_range(f, 0, tl->duration);
	diag_advice(c, f, NULL);
}

static int cmp_mem_desc(const void *a, const void *b)
{
	double x = ((const proc_agg *)a)->mem_max, y = ((const proc_agg *)b)->mem_max;
	return (x < y) - (x > y);
}

void rule_contention(diag_ctx *c)
{
	const diag_thresholds *th = c->th;
	const timeline *tl = c->tl;
	proc_agg *a;
	int n = aggregate(c, c->from, c->to, &a);
	qsort(a, (size_t)n, sizeof *a, cmp_mem_desc);
	/* Gone PIDs mean leaked memory only if some GPU PIDs do resolve here;
	 * otherwise they are just another PID namespace. */
	bool any_alive = false;
	for (int i = 0; i < n; i++)
		any_alive |= a[i].alive;
	bool judge_foreign = tl->have_root && c->tree_on_gpu;
	diag_finding *f = NULL;
	int nforeign = 0, ngone = 0;
	double gone_mib = 0;
	bool *mask = diag_mask_new(c);
	for (int i = 0; i < n; i++) {
		const proc_agg *x = &a[i];
		if (x->in_tree || !c->job[x->gpu])
			continue;
		double sm = x->sm_n ? x->sm_sum / x->sm_n : NAN;
		bool foreign =
		    judge_foreign && x->alive &&
		    (x->mem_max >= th->foreign_mem_mib || (!isnan(sm) && sm >= th->foreign_sm_pct));
		bool gone = !x->alive && any_alive && x->mem_max >= th->gone_mem_mib;
		if (!foreign && !gone)
			continue;
		if (!f)
			f = diag_add(c, DIAG_R_CONTENTION, DIAG_WARN, foreign ? 0.8 : 0.6);
		diag_gpu(f, x->gpu);
		const tl_proc *p = x->last;
		char what[96];
		snprintf(what, sizeof what, L_("PID %u%s%s"), x->pid, p->user[0] ? " " : "",
		         p->user);
		if (foreign) {
			nforeign++;
			DIAG_EV(f, x->gpu, .metric = DIAG_EV_PROC_GPU_MEM, .stat = what,
			        .value = x->mem_max, .cmp = ">=", .threshold = th->foreign_mem_mib,
			        .unit = "MiB");
			if (!isnan(sm))
				DIAG_EV(f, x->gpu, .metric = DIAG_EV_PROC_SM, .stat = what,
				        .value = sm, .cmp = ">=", .threshold = th->foreign_sm_pct,
				        .unit = "%");
			char smt[32] = "";
			if (!isnan(sm))
				snprintf(smt, sizeof smt, L_(" and %.0f %% SM"), sm);
			if (nforeign <= 3)
				diag_note(f, "PID %u (%s%s%s) holds %.0f MiB%s on GPU %d.", x->pid,
				          p->cmd[0] ? p->cmd : "?", p->user[0] ? ", " : "", p->user,
				          x->mem_max, smt, tl->gpu[x->gpu].index);
		} else {
			ngone++;
			gone_mib += x->mem_max;
			DIAG_EV(f, x->gpu, .metric = DIAG_EV_PROC_GPU_MEM,
			        .stat = N_("held by a PID that no longer exists"),
			        .value = x->mem_max, .cmp = ">=", .threshold = th->gone_mem_mib,
			        .unit = "MiB");
			if (ngone <= 3)
				diag_note(f,
				          "PID %u holds %.0f MiB on GPU %d but does not exist on "
				          "this host "
				          "(exited, or in another container).",
				          x->pid, x->mem_max, tl->gpu[x->gpu].index);
		}
		for (int k = 0; k < tl->nprocs; k++) {
			const tl_proc *q = &tl->procs[k];
			if (q->pid == x->pid && q->gpu == x->gpu && q->s >= c->from && q->s < c->to)
				mask[q->s] = true;
		}
	}
	if (f) {
		char gl[64];
		diag_gpu_list(c, f->gpus, gl, sizeof gl);
		if (nforeign && ngone)
			diag_title(
			    f,
			    "%d other process%s use %s, and %.0f MiB is held by %d gone process%s",
			    nforeign, nforeign == 1 ? "" : "es", gl, gone_mib, ngone,
			    ngone == 1 ? "" : "es");
		else if (nforeign)
			diag_title(f, "%d other process%s the job's %s", nforeign,
			           nforeign == 1 ? L_(" shares") : L_("es share"), gl);
		else
			diag_title(
			    f, "%.0f MiB on %s is held by %d process%s that no longer exist%s",
			    gone_mib, gl, ngone, ngone == 1 ? "" : "es", ngone == 1 ? "s" : "");
		diag_ranges_mask(c, f, mask);
		diag_advice(c, f, nforeign ? NULL : "gone");
	}
	free(mask);
	free(a);
}

/*
 * not-checked: what the rules that need the job's processes could not
 * check, and why. Without a watched tree the CPU and I/O evidence is the
 * whole host's; with the job's processes out of sight (another PID
 * namespace) nobody can tell its contexts from someone else's.
 */
bool diag_gpu_only(const diag_ctx *c)
{
	const timeline *tl = c->tl;
	if (tl->ncpu > 0 || tl->nprocs > 0 || tl->nsteps > 0 || tl->have_root)
		return false;
	for (int h = 0; h < HM__COUNT; h++)
		if (tl->h[h])
			return false;
	return true;
}

/* A log of GPU counters alone: say which rules had nothing to judge, whatever the GPUs did. */
static void not_checked_gpu_only(diag_ctx *c)
{
	diag_finding *f = diag_add(c, DIAG_R_NOT_CHECKED, DIAG_INFO, 0.3);
	for (int g = 0; g < c->ngpu; g++)
		diag_gpu(f, g);
	diag_title(f, "Only GPU counters were read: the host, the job's processes and its steps "
	              "are not in this input, so the rules that need them were not checked");
	DIAG_EV(f, DIAG_JOB, .metric = DIAG_EV_GPUS, .stat = N_("GPUs diagnosed"),
	        .value = c->ngpu);
	diag_note(f,
	          "Not checked: data-starved, host-contention and host-swap (host CPU, I/O and "
	          "memory), not-on-gpu, all-on-gpu0, imbalance and a stopped job (the job's "
	          "processes), and every step-time rule (step lines). No host value was assumed.");
	diag_range_window(c, f);
	diag_advice(c, f, "gpu-only");
}

#define STAT_NO_REASONS N_("GPUs without clock-event reasons")
#define STAT_AMD N_("AMD GPUs")

static bool stat_is(const char *stat, const char *msgid)
{
	/* English, or translated where the run was localized */
	return !strcmp(stat, msgid) || !strcmp(stat, _(msgid));
}

bool diag_not_checked_gpus(const diag_finding *f)
{
	return f->rule == DIAG_R_NOT_CHECKED && f->nev > 0 &&
	       (stat_is(f->ev[0].stat, STAT_NO_REASONS) || stat_is(f->ev[0].stat, STAT_AMD));
}

/* A not-checked finding on the GPUs of mask m: their count in *n, their list in gl. */
static diag_finding *not_checked_on(diag_ctx *c, uint64_t m, int *n, char *gl, size_t len)
{
	diag_finding *f = diag_add(c, DIAG_R_NOT_CHECKED, DIAG_INFO, 0.3);
	*n = 0;
	for (int g = 0; g < c->ngpu && g < 64; g++)
		if (m >> g & 1) {
			diag_gpu(f, g);
			(*n)++;
		}
	diag_gpu_list(c, m, gl, len);
	return f;
}

/*
 * AMD GPUs whose driver reports their throttle reasons (gpu_metrics'
 * indep_throttle_status): throttled was judged, the rest of NVIDIA's
 * signals were not.
 */
static void not_checked_amd(diag_ctx *c, uint64_t m)
{
	int n;
	char gl[64];
	diag_finding *f = not_checked_on(c, m, &n, gl, sizeof gl);
	diag_title(f,
	           "%s %s AMD (read from the amdgpu driver): the rules that need NVIDIA's signals "
	           "were not checked there",
	           gl, n == 1 ? "is" : "are");
	DIAG_EV(f, DIAG_JOB, .metric = DIAG_EV_GPUS, .stat = STAT_AMD, .value = n);
	diag_note(f,
	          "Not checked there: power-capped (the default power limit), the SM-activity "
	          "evidence of launch-bound and memory-bound (NVIDIA's GPM), and the Xid and "
	          "row-remapping parts of gpu-fault (amdgpu's faults in the kernel log are judged "
	          "instead). Throttling (the driver's throttle reasons), utilization, memory, "
	          "power, temperature, clocks and the PCIe link were judged as on any GPU.");
	diag_range_window(c, f);
	diag_advice(c, f, "amd-signals");
}

/*
 * GPUs whose driver reports no clock-event reasons (AMD GPUs through amdgpu),
 * and AMD GPUs that report them: the rules that need NVIDIA's signals judged
 * nothing there, and say so rather than let silence read as "not throttled".
 */
static void not_checked_signals(diag_ctx *c)
{
	uint64_t m = 0, amd = 0;
	/* a log of GPU counters (a Prometheus window, an nvidia-smi CSV) may simply lack the
	 * field: there only a GPU known to be AMD's says the reasons are not there */
	bool gpu_only = diag_gpu_only(c);
	for (int g = 0; g < c->ngpu && g < 64; g++) {
		if (c->tl->gpu[g].lost_at_end)
			continue;
		bool is_amd = !strcmp(c->tl->gpu[g].vendor, "amd");
		if (!c->tl->gpu[g].m[GM_CLK_REASONS] && (!gpu_only || is_amd))
			m |= 1ULL << g;
		else if (is_amd)
			amd |= 1ULL << g;
	}
	if (amd)
		not_checked_amd(c, amd);
	if (!m)
		return;
	int n;
	char gl[64];
	diag_finding *f = not_checked_on(c, m, &n, gl, sizeof gl);
	diag_title(f,
	           "%s report%s no clock-event reasons (an AMD GPU, read from the amdgpu driver): "
	           "the rules that need them were not checked there",
	           gl, n == 1 ? "s" : "");
	DIAG_EV(f, DIAG_JOB, .metric = DIAG_EV_GPUS, .stat = STAT_NO_REASONS, .value = n);
	diag_note(f, "Not checked there: throttled (the clock-event reasons), power-capped (the "
	             "default power limit), the SM-activity evidence of launch-bound and "
	             "memory-bound (NVIDIA's GPM), and the ECC, Xid and row-remapping parts of "
	             "gpu-fault. Utilization, memory, power, temperature, clocks and the PCIe link "
	             "were judged as on any GPU.");
	diag_range_window(c, f);
	diag_advice(c, f, "signals");
}

void rule_not_checked(diag_ctx *c)
{
	const timeline *tl = c->tl;
	if (tl->n > 0)
		not_checked_signals(c);
	if (tl->n > 0 && diag_gpu_only(c)) {
		not_checked_gpu_only(c);
		return;
	}
	if (tl->n == 0 || c->njob == 0)
		return;
	bool whole = !tl->have_root;
	if (!whole && !c->hidden)
		return;
	diag_finding *f = diag_add(c, DIAG_R_NOT_CHECKED, DIAG_INFO, 0.3);
	uint64_t m = 0;
	int nhidden = 0;
	for (int g = 0; g < c->ngpu; g++)
		if (c->job[g]) {
			diag_gpu(f, g);
			if (c->works[g] && (!c->procs_seen[g] || c->unmatched)) {
				m |= 1ULL << g;
				nhidden++;
			}
		}
	char gl[64];
	diag_gpu_list(c, m, gl, sizeof gl);
	if (whole && !nhidden)
		diag_title(f,
		           "No job followed (recorded without --pid): the CPU and I/O evidence is "
		           "the whole host's; per-job checks were not made");
	else if (whole)
		diag_title(f,
		           "%s show%s work but %s processes are not visible (other PID namespace); "
		           "no job followed: CPU evidence is host-wide",
		           gl, nhidden == 1 ? "s" : "", nhidden == 1 ? L_("its") : L_("their"));
	else
		diag_title(
		    f,
		    "%s show%s work but the job's processes are not visible there (other PID "
		    "namespace)",
		    gl, nhidden == 1 ? "s" : "");
	DIAG_EV(f, DIAG_JOB, .metric = DIAG_EV_GPUS, .stat = N_("GPUs diagnosed"),
	        .value = c->njob);
	DIAG_EV(f, DIAG_JOB, .metric = DIAG_EV_GPUS,
	        .stat = N_("of which working with no visible process"), .value = nhidden);
	if (whole)
		diag_note(f, "Not checked: not-on-gpu, all-on-gpu0 and imbalance need the job's "
		             "processes; contention cannot tell the job from other users; the "
		             "data-starved evidence is host-wide. Record with --pid PID or "
		             "`gpuwhy run -- CMD` to follow the job.");
	else
		diag_note(f, "Not checked: whether the job holds a context (not-on-gpu), how its "
		             "ranks map to GPUs (all-on-gpu0, imbalance) and who else shares them "
		             "(contention). In a container, run with --pid=host to see them.");
	diag_range_window(c, f);
	diag_advice(c, f, NULL);
}

/* ---- a job process stopped or held by a debugger while the GPUs idle ---- */

static bool stopped_state(char st)
{
	return st == 'T' || st == 't';
}

/* A process record of the job: its tree, or (no tree followed) a process on a job GPU. */
static bool job_record(const diag_ctx *c, const tl_proc *p)
{
	return p->in_tree ||
	       (!c->tl->have_root && p->gpu >= 0 && p->gpu < c->ngpu && c->job[p->gpu]);
}

bool *diag_stopped_mask(const diag_ctx *c)
{
	bool *m = diag_mask_new(c);
	for (int i = 0; i < c->tl->nprocs; i++) {
		const tl_proc *p = &c->tl->procs[i];
		if (p->s >= 0 && p->s < c->tl->n && stopped_state(p->state) && job_record(c, p))
			m[p->s] = true;
	}
	return m;
}

/* Share of sample s the job's GPUs idled, 0..1 (their mean), NAN when unknown. */
static double job_idle_at(const diag_ctx *c, int s)
{
	double sum = 0;
	int n = 0;
	for (int g = 0; g < c->ngpu; g++) {
		double i = c->job[g] ? diag_idle_at(c, g, s) : NAN;
		if (!isnan(i)) {
			sum += i / 100;
			n++;
		}
	}
	return n ? sum / n : NAN;
}

/* One job process seen stopped while the GPUs idled (a few are followed). */
#define STOP_PIDS 8
typedef struct {
	unsigned pid;
	bool *seen; /* the samples: a process has a host record and one per GPU at each */
	bool gpu, traced;
	int k;
	const tl_proc *p;
} stop_pid;

bool diag_stopped_job(const diag_ctx *c, diag_stop *out)
{
	const timeline *tl = c->tl;
	memset(out, 0, sizeof *out);
	if (!c->stopped || c->njob == 0)
		return false;
	/* Samples a job process was stopped in while the GPUs idled, and their time. */
	bool *idle = diag_mask_new(c);
	for (int s = c->from; s < c->to; s++) {
		double i = job_idle_at(c, s), dt = tl->t[s] - diag_t0(c, s);
		if (!isnan(i))
			out->idle_s += i * dt;
		idle[s] = c->stopped[s] && !isnan(i) && 100 * i >= c->th->starved_idle_pct;
	}
	/* Per PID: the samples it was seen stopped in, a GPU context, state t seen. */
	stop_pid a[STOP_PIDS] = {{0}};
	int n = 0;
	for (int i = 0; i < tl->nprocs; i++) {
		const tl_proc *p = &tl->procs[i];
		if (p->s < c->from || p->s >= c->to || !idle[p->s] || !stopped_state(p->state) ||
		    !job_record(c, p))
			continue;
		int j = 0;
		while (j < n && a[j].pid != p->pid)
			j++;
		if (j == n) {
			if (n == STOP_PIDS)
				continue;
			a[n].pid = p->pid;
			a[n].seen = diag_mask_new(c);
			a[n].p = p;
			n++;
		}
		a[j].gpu |= p->gpu >= 0;
		a[j].traced |= p->state == 't';
		if (p->cmd[0])
			a[j].p = p;
		if (!a[j].seen[p->s]) {
			a[j].seen[p->s] = true;
			a[j].k++;
		}
	}
	int best = -1;
	for (int j = 0; j < n; j++)
		if (best < 0 || a[j].gpu > a[best].gpu ||
		    (a[j].gpu == a[best].gpu && a[j].k > a[best].k))
			best = j;
	if (best >= 0 && a[best].k >= 2) {
		out->pid = a[best].pid;
		out->traced = a[best].traced;
		out->others = n - 1;
		snprintf(out->cmd, sizeof out->cmd, "%.127s",
		         a[best].p->cmd[0] ? a[best].p->cmd : "?");
		for (int s = c->from; s < c->to; s++)
			if (a[best].seen[s])
				out->seconds += tl->t[s] - diag_t0(c, s);
		out->explains = out->seconds > 0 && out->seconds >= 0.5 * out->idle_s;
	}
	for (int j = 0; j < n; j++)
		free(a[j].seen);
	free(idle);
	return out->pid != 0;
}

void diag_stop_title(diag_finding *f, const diag_stop *st)
{
	char t[96];
	if (st->traced)
		snprintf(t, sizeof t, L_("; a job process held by a debugger for %.0f s"),
		         st->seconds);
	else
		snprintf(t, sizeof t, L_("; a job process stopped for %.0f s"), st->seconds);
	strncat(f->title, t, sizeof f->title - strlen(f->title) - 1);
}

void diag_stop_cite(diag_ctx *c, diag_finding *f, const diag_stop *st, int gpu)
{
	if (st->traced)
		diag_note(
		    f,
		    "PID %u (%s) was held by a debugger (state t, traced) for %.0f s of the "
		    "%.0f s the GPU idled: it keeps its GPU memory and computes nothing until "
		    "it goes on.",
		    st->pid, st->cmd, st->seconds, st->idle_s);
	else
		diag_note(
		    f,
		    "PID %u (%s) was stopped (state T) for %.0f s of the %.0f s the GPU "
		    "idled: it keeps its GPU memory and computes nothing until it is resumed.",
		    st->pid, st->cmd, st->seconds, st->idle_s);
	if (st->others > 0)
		diag_note(f, "Other processes of the job seen stopped meanwhile: %d.", st->others);
	DIAG_EV(f, gpu, .metric = DIAG_EV_PROC_STATE,
	        .stat = st->traced
	                    ? N_("seconds a job process was traced (t) while the GPU idled")
	                    : N_("seconds a job process was stopped (T) while the GPU idled"),
	        .value = st->seconds, .cmp = ">=", .threshold = 0.5 * st->idle_s, .unit = "s");
	if (st->explains)
		diag_advice(c, f, "stopped");
}
