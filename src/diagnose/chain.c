/*
 * chain.c - the seven-step troubleshooting chain, each step answered from
 * the recording: 1 is the process on the GPU, 2 the utilization
 * curve over at least 60 s, 3 CPU cores, 4 disk and network I/O, 5 power and
 * temperature, 6 the multi-GPU topology, 7 the code level (a kernel trace).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "diagnose/diag_int.h"

#define MIB (1024.0 * 1024.0)
/* Step 2: a single sample proves nothing; watch at least 60 s. */
#define CHAIN_MIN_OBSERVE_S 60.0

static const char *const questions[DIAG_CHAIN_STEPS] = {
    N_("Is the process really using the GPU?"),
    N_("What does utilization do over time (60 s or more)?"),
    N_("Are CPU cores saturated while the GPU waits?"),
    N_("Do disk or network I/O hold the data back?"),
    N_("Power and temperature: far under the limit, or throttled?"),
    N_("Multi-GPU: how are the GPUs linked, and do they wait on each other?"),
    N_("Code level: what does a kernel timeline show?"),
};

static void chain_say(diag_chain_step *st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void chain_say(diag_chain_step *st, const char *fmt, ...)
{
	size_t o = strlen(st->answer);
	if (o + 2 >= sizeof st->answer)
		return;
	/* Sentences are set apart by a space, except after a CJK character
	 * (fullwidth punctuation carries its own space). */
	if (o && !(o >= 3 && (unsigned char)st->answer[o - 3] >= 0xE0))
		st->answer[o++] = ' ';
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(st->answer + o, sizeof st->answer - o, diag_tr(fmt), ap);
	va_end(ap);
}

/* Link findings of these rules to the step; any warn/error among them makes it a problem. */
static void link_ids(const diag_ctx *c, diag_chain_step *st, const diag_rule *ids, int n)
{
	for (int i = 0; i < n; i++) {
		const diag_finding *f = diag_ctx_find(c, ids[i]);
		if (!f || st->nfindings >= 6)
			continue;
		st->findings[st->nfindings++] = f->id;
		if (f->severity >= DIAG_WARN)
			st->status = DIAG_STEP_PROBLEM;
	}
}
#define LINK(c, st, ...)                                                                           \
	do {                                                                                       \
		static const diag_rule ids_[] = {__VA_ARGS__};                                     \
		link_ids(c, st, ids_, (int)(sizeof ids_ / sizeof *ids_));                          \
	} while (0)

static void step1(const diag_ctx *c, diag_chain_step *st)
{
	const timeline *tl = c->tl;
	if (!tl->have_root) {
		st->status = DIAG_STEP_NA;
		chain_say(st, "No process tree was watched (the whole machine was recorded).");
	} else if (!c->tree_on_gpu) {
		st->status = DIAG_STEP_PROBLEM;
		chain_say(st, "No: no process of the job held a GPU context.");
	} else {
		unsigned pids[8];
		int np = 0;
		for (int i = 0; i < tl->nprocs && np < 8; i++) {
			const tl_proc *p = &tl->procs[i];
			if (!p->in_tree || p->gpu < 0)
				continue;
			int j = 0;
			while (j < np && pids[j] != p->pid)
				j++;
			if (j == np)
				pids[np++] = p->pid;
		}
		char pl[96] = "", gl[64];
		size_t o = 0;
		for (int i = 0; i < np && o < sizeof pl; i++)
			o +=
			    (size_t)snprintf(pl + o, sizeof pl - o, "%s%u", i ? ", " : "", pids[i]);
		uint64_t m = 0;
		for (int g = 0; g < c->ngpu; g++)
			if (c->job[g])
				m |= 1ULL << g;
		diag_gpu_list(c, m, gl, sizeof gl);
		chain_say(st, "Yes: PID%s %s held a context on %s.", np == 1 ? "" : "s", pl, gl);
	}
	LINK(c, st, DIAG_R_NOT_ON_GPU, DIAG_R_ALL_ON_GPU0, DIAG_R_CONTENTION);
}

static void step2(const diag_ctx *c, diag_chain_step *st)
{
	const diag_result *r = c->res;
	int shown = 0;
	for (int g = 0; g < c->ngpu && shown < 8; g++) {
		const diag_gpu_summary *s = &r->gpu[g];
		if (!c->job[g] || isnan(s->util_mean))
			continue;
		chain_say(
		    st, "GPU %d: mean %.0f %%, p10 %.0f %%, p90 %.0f %%, idle %.0f %% of the time.",
		    s->index, s->util_mean, s->util_p10, s->util_p90, s->idle_pct);
		shown++;
		bool low =
		    s->util_mean < (c->o->goal == DIAG_GOAL_LATENCY ? c->th->latency_ok_util_pct
		                                                    : c->th->lowutil_pct);
		if (low)
			st->status = DIAG_STEP_PROBLEM;
	}
	if (!shown) {
		st->status = DIAG_STEP_NA;
		chain_say(st, "No utilization was recorded for the job's GPUs.");
		return;
	}
	chain_say(st, "Window analysed: %.1f-%.1f s (%.0f s).", r->t_from, r->t_to, c->window_s);
	if (c->window_s < CHAIN_MIN_OBSERVE_S)
		chain_say(st, "That is under the 60 s to watch before judging: record longer.");
	LINK(c, st, DIAG_R_DATA_STARVED, DIAG_R_LOW_UTILIZATION, DIAG_R_IMBALANCE,
	     DIAG_R_LAUNCH_BOUND);
}

static void step3(const diag_ctx *c, diag_chain_step *st)
{
	const timeline *tl = c->tl;
	double m = tl_mean(tl->h[HM_CPU_BUSY_MAX], c->from, c->to);
	double share =
	    tl_share(tl->h[HM_CPU_BUSY_MAX], c->from, c->to, tl_pred_ge, c->th->core_saturated_pct);
	double avg = tl_mean(tl->h[HM_CPU_BUSY_AVG], c->from, c->to);
	double tree = tl_mean(tl->h[HM_TREE_CPU], c->from, c->to);
	if (isnan(m) && isnan(tree)) {
		st->status = DIAG_STEP_NA;
		chain_say(st, "No host CPU data was recorded.");
		return;
	}
	if (!isnan(m))
		chain_say(
		    st,
		    "Busiest core averaged %.0f %%, at or above %.0f %% for %.0f %% of the window.",
		    m, c->th->core_saturated_pct, 100 * share);
	if (!isnan(avg))
		chain_say(st, "All cores averaged %.0f %% (%d cores).", avg, tl->ncpu);
	if (!isnan(tree))
		chain_say(st, "The job's processes used %.0f %% of one core.", tree);
	bool sat = !isnan(share) && share >= c->th->saturated_share;
	const diag_finding *ds = diag_ctx_find(c, DIAG_R_DATA_STARVED);
	const diag_finding *hc = diag_ctx_find(c, DIAG_R_HOST_CONTENTION);
	if (!c->tl->have_root && !isnan(m))
		chain_say(st, "No job followed: these are the whole host's numbers.");
	if (sat && ds) {
		st->status = DIAG_STEP_PROBLEM;
		st->findings[st->nfindings++] = ds->id;
	} else if (hc) {
		st->status = DIAG_STEP_PROBLEM;
		chain_say(st, "The cores are saturated by other processes, not by the job.");
		st->findings[st->nfindings++] = hc->id;
	} else if (sat && c->njob == 0) {
		chain_say(st, "The CPU did the work: the job did not use a GPU.");
	} else if (sat) {
		chain_say(st,
		          "The GPU did not wait on it: the CPU is busy but not the bottleneck.");
	}
}

static void step4(const diag_ctx *c, diag_chain_step *st)
{
	const timeline *tl = c->tl;
	double io = tl_mean(tl->h[HM_CPU_IOWAIT], c->from, c->to);
	double rd = tl_mean(tl->h[HM_DISK_READ], c->from, c->to);
	double busy = tl_mean(tl->h[HM_DISK_BUSY_MAX], c->from, c->to);
	double net = tl_mean(tl->h[HM_NET_RX], c->from, c->to);
	double tr = tl_mean(tl->h[HM_TREE_READ], c->from, c->to);
	if (isnan(io) && isnan(rd) && isnan(busy) && isnan(net)) {
		st->status = DIAG_STEP_NA;
		chain_say(st, "No host I/O data was recorded.");
		return;
	}
	if (!isnan(io))
		chain_say(st, "iowait averaged %.1f %%.", io);
	if (!isnan(rd))
		/* TRANSLATORS: the sentence goes on after "," and ";" and ends with ".". */
		chain_say(st, "Disks read %.1f MiB/s%s", rd / MIB, isnan(busy) ? L_(".") : L_(","));
	if (!isnan(busy))
		chain_say(st, "the busiest disk was %.0f %% busy.", busy);
	if (!isnan(tr))
		chain_say(st, "The job read %.1f MiB/s itself.", tr / MIB);
	if (!isnan(net))
		chain_say(st, "Network received %.1f MiB/s.", net / MIB);
	bool slow_io = (!isnan(io) && io >= c->th->iowait_pct) ||
	               (!isnan(busy) && busy >= c->th->disk_busy_pct);
	const diag_finding *ds = diag_ctx_find(c, DIAG_R_DATA_STARVED);
	if (slow_io) {
		st->status = DIAG_STEP_PROBLEM;
		if (ds)
			st->findings[st->nfindings++] = ds->id;
	}
	LINK(c, st, DIAG_R_HOST_SWAP);
}

static void step5(const diag_ctx *c, diag_chain_step *st)
{
	int shown = 0;
	for (int g = 0; g < c->ngpu && shown < 8; g++) {
		const diag_gpu_summary *s = &c->res->gpu[g];
		if (!c->job[g])
			continue;
		if (!isnan(s->power_mean) && s->power_limit > 0) {
			chain_say(st,
			          "GPU %d drew %.0f W on average, %.0f %% of its %.0f W limit%s",
			          s->index, s->power_mean, 100 * s->power_mean / s->power_limit,
			          s->power_limit, isnan(s->temp_max) ? L_(".") : L_(";"));
			shown++;
		} else if (!isnan(s->power_mean)) {
			chain_say(st, "GPU %d drew %.0f W on average%s", s->index, s->power_mean,
			          isnan(s->temp_max) ? L_(".") : L_(";"));
			shown++;
		}
		if (!isnan(s->temp_max)) {
			double slow = tl_max(c->tl->gpu[g].m[GM_TEMP_SLOWDOWN], 0, c->tl->n);
			if (!isnan(slow))
				chain_say(st, "up to %.0f C (slowdown at %.0f C).", s->temp_max,
				          slow);
			else
				chain_say(st, "up to %.0f C.", s->temp_max);
			shown += isnan(s->power_mean);
		}
	}
	if (!shown) {
		st->status = DIAG_STEP_NA;
		chain_say(st, "No power or temperature was recorded.");
		return;
	}
	LINK(c, st, DIAG_R_THROTTLED, DIAG_R_LAUNCH_BOUND);
}

static void step6(const diag_ctx *c, diag_chain_step *st)
{
	if (c->njob < 2) {
		st->status = DIAG_STEP_NA;
		if (c->njob == 1)
			chain_say(st,
			          "The job used one GPU: no inter-GPU communication to wait on.");
		else
			chain_say(st,
			          "The job used no GPU: no inter-GPU communication to wait on.");
		LINK(c, st, DIAG_R_IMBALANCE);
		return;
	}
	int level, links;
	bool amd;
	link_kind k = diag_job_links(c, &level, &links, &amd);
	if (k == LINK_NVLINK)
		chain_say(
		    st, "The job's %d GPUs are joined by NVLink (at least NV%d between each pair).",
		    c->njob, links);
	else if (k == LINK_XGMI)
		chain_say(st, "The job's %d GPUs are joined by XGMI (one hive).", c->njob);
	else if (k == LINK_PCIE)
		chain_say(
		    st,
		    "Some of the job's %d GPUs talk over PCIe only (worst path %s): all-reduce "
		    "waits "
		    "on the bus.",
		    c->njob, diag_level_name(level));
	else
		chain_say(st, "The links between the job's %d GPUs are unknown.", c->njob);
	LINK(c, st, DIAG_R_SYNC_WAIT, DIAG_R_IMBALANCE, DIAG_R_ALL_ON_GPU0);
	if (st->status != DIAG_STEP_PROBLEM)
		chain_say(st, "No periodic waiting between the GPUs was seen.");
}

static void step7(const diag_ctx *c, diag_chain_step *st)
{
	const tl_trace_summary *tr = &c->tl->trace;
	if (tr->kernels <= 0) {
		st->status = DIAG_STEP_NA;
		chain_say(st,
		          "No kernel trace was recorded. To see where the GPU idles, profile once: "
		          "nsys profile --trace=cuda,nvtx -o trace python train.py (or the PyTorch "
		          "profiler), then read it with gpuwhy trace.");
		return;
	}
	chain_say(st, "The trace has %ld kernels, %.0f %% shorter than 10 us, %.1f us on average.",
	          tr->kernels, 100.0 * tr->short_kernels / tr->kernels,
	          tr->kernel_s > 0 ? 1e6 * tr->kernel_s / tr->kernels : 0.0);
	if (tr->span_s > 0)
		chain_say(st, "Kernels ran %.0f %% of the traced span (the rest is GPU idle).",
		          100 * tr->kernel_s / tr->span_s);
	LINK(c, st, DIAG_R_LAUNCH_BOUND);
}

void diag_chain(diag_ctx *c)
{
	void (*const steps[DIAG_CHAIN_STEPS])(const diag_ctx *, diag_chain_step *) = {
	    step1, step2, step3, step4, step5, step6, step7};
	for (int i = 0; i < DIAG_CHAIN_STEPS; i++) {
		diag_chain_step *st = &c->res->chain[i];
		memset(st, 0, sizeof *st);
		st->no = i + 1;
		st->question = L_(questions[i]);
		st->status = DIAG_STEP_OK;
		steps[i](c, st);
	}
}
