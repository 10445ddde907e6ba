#include "sample/sampler.h"

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/host.h"
#include "host/host_kmsg.h"
#include "host/host_pidbrief.h"
#include "gpu/xid.h"
#include "host/host_top.h"
#include "model/hostsum.h"
#include "util/timeutil.h"

#define SAMPLER_MAX_GPU_PROCS 512

struct sampler {
	sampler_opts o;
	host_sampler *hs;
	host_sample hsamp;
	snapshot snap;
	bool *was_lost;
	gpu_proc *gp;
	pthread_t thread;
	bool running;
	pthread_mutex_t mu; /* guards hs follow list changes and stop */
	pthread_cond_t cv;
	bool stopping;
	int64_t last_mono, start_mono;
	long ticks, late;
	const char *proc_root;
	host_kmsg *kmsg; /* NULL when the kernel log is not readable */
	/* The last Xid NVML reported per GPU and when: the kernel log line of the
	 * same error is not recorded twice. */
	long xid_v[GPU_MAX];
	double xid_t[GPU_MAX];
	host_top *top; /* NULL unless o.host_top */
	int64_t top_ns;
};

/* An Xid the kernel log and NVML both report arrives within this many seconds. */
#define XID_SAME_S 10.0

/*
 * Xid, AER and amdgpu lines from now on; GPUWHY_KMSG names a log file instead
 * (tests). Under --sim, the simulated machine's log from its boot (scenario
 * time 0), so a recording at a pinned time has the faults before it; never the
 * host's, whose lines are no simulated GPU's.
 */
static host_kmsg *open_kmsg(gpu_ctx *g)
{
	const char *env = getenv("GPUWHY_KMSG");
	char sim[PATH_MAX];
	if (env)
		return host_kmsg_open(env, HOST_KMSG_END); /* "": none */
	if (g && gpu_sim_kernel_log(g, sim, sizeof sim))
		return sim[0] ? host_kmsg_open(sim, 0) : NULL;
	return host_kmsg_open(NULL, HOST_KMSG_END);
}

sampler *sampler_new(const sampler_opts *o)
{
	sampler *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->o = *o;
	if (s->o.interval_ns <= 0)
		s->o.interval_ns = 1000000000LL;
	host_config cfg;
	host_config_default(&cfg);
	if (o->proc_root)
		cfg.proc_root = o->proc_root;
	if (o->sys_root)
		cfg.sys_root = o->sys_root;
	s->proc_root = cfg.proc_root;
	s->hs = host_sampler_new(&cfg);
	int ngpu = o->gpu ? gpu_count(o->gpu) : 0;
	snapshot_init(&s->snap, ngpu);
	s->was_lost = calloc(ngpu ? (size_t)ngpu : 1, sizeof *s->was_lost);
	s->gp = calloc(SAMPLER_MAX_GPU_PROCS, sizeof *s->gp);
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	s->kmsg = open_kmsg(o->gpu);
	if (o->host_top && !o->gpu_only)
		s->top = host_top_new(s->proc_root);
	if (!s->hs || !s->was_lost || !s->gp) {
		sampler_free(s);
		return NULL;
	}
	return s;
}

int sampler_follow(sampler *s, const int *pids, int n)
{
	pthread_mutex_lock(&s->mu);
	int rc = host_sampler_follow(s->hs, pids, (size_t)n);
	pthread_mutex_unlock(&s->mu);
	return rc;
}

static double val(const host_val *v)
{
	return v->ok ? v->v : NAN;
}

static double mib(const host_val *v)
{
	return v->ok ? v->v / (1024.0 * 1024.0) : NAN;
}

static void host_summary(sampler *s)
{
	snapshot *sn = &s->snap;
	const host_sample *h = &s->hsamp;
	host_summary_fill(h, sn->h);
	/* Per core, indexed by cpu id so an offline core leaves a hole, not a shift. */
	int ncpu = 0;
	for (size_t i = 0; i < h->ncpus; i++)
		if (h->cpus[i].id + 1 > ncpu)
			ncpu = h->cpus[i].id + 1;
	snapshot_set_ncpu(sn, ncpu);
	for (size_t i = 0; i < h->ncpus; i++) {
		int id = h->cpus[i].id;
		if (id < 0)
			continue;
		sn->cpu_busy[id] = val(&h->cpus[i].v[HOST_CPU_BUSY]);
		sn->cpu_iowait[id] = val(&h->cpus[i].v[HOST_CPU_IOWAIT]);
	}
}

static void fill_from_host(tl_proc *p, const host_proc *hp)
{
	p->ppid = (unsigned)hp->ppid;
	p->in_tree = true;
	p->alive = true;
	p->cpu_pct = val(&hp->v[HOST_PROC_CPU]);
	p->rss_mib = mib(&hp->v[HOST_PROC_RSS]);
	p->state = hp->state;
	snprintf(p->user, sizeof p->user, "%.31s", hp->user);
	snprintf(p->cmd, sizeof p->cmd, "%.127s",
	         hp->cmdline && hp->cmdline[0] ? hp->cmdline : hp->comm);
}

/* Xid events NVML delivered for GPU i during its sample: one event each, with its meaning. */
static void xid_events(sampler *s, int i)
{
	unsigned long long x[16];
	int n = gpu_xid_take(s->o.gpu, i, x, 16);
	for (int k = 0; k < n; k++) {
		char text[256];
		snprintf(text, sizeof text, "Xid %llu: %s", x[k], gpu_xid_meaning((long)x[k]));
		snapshot_add_event(&s->snap, TL_EV_XID, i, (long)x[k], text);
		if (i < GPU_MAX) {
			s->xid_v[i] = (long)x[k];
			s->xid_t[i] = s->snap.t_wall;
		}
	}
}

static void gpu_part(sampler *s)
{
	snapshot *sn = &s->snap;
	gpu_ctx *g = s->o.gpu;
	for (int i = 0; g && i < sn->ngpu; i++) {
		gpu_sample(g, i, &sn->gpu[i]);
		xid_events(s, i);
		if (!sn->gpu[i].lost)
			s->was_lost[i] = false; /* back (an AMD card after its reset) */
		if (sn->gpu[i].lost && !s->was_lost[i]) {
			s->was_lost[i] = true;
			snapshot_add_event(sn, TL_EV_GPU_LOST, i, 0,
			                   "GPU fell off the bus (NVML: GPU is lost)");
		}
		if (sn->gpu[i].lost)
			continue;
		int np = gpu_processes(g, i, s->gp, SAMPLER_MAX_GPU_PROCS);
		if (np >= 0 && i < 64)
			sn->gpu_procs_known |= 1ULL << i;
		for (int k = 0; k < np; k++) {
			tl_proc *p = snapshot_add_proc(sn);
			p->pid = s->gp[k].pid;
			p->gpu = i;
			if (s->gp[k].mem_ok)
				p->gpu_mem_mib = (double)s->gp[k].mem_bytes / (1024.0 * 1024.0);
			if (s->gp[k].util_ok)
				p->sm_pct = s->gp[k].sm_pct;
			/* A simulated scenario's process is not the host's process of that PID. */
			int hi = s->gp[k].sim ? -1 : host_sample_find_proc(&s->hsamp, (int)p->pid);
			if (hi >= 0) {
				fill_from_host(p, &s->hsamp.procs[hi]);
			} else {
				host_pid_brief b;
				gpu_proc_brief(&s->gp[k], s->proc_root, &b);
				p->alive = b.exists;
				snprintf(p->user, sizeof p->user, "%.31s", b.user);
				snprintf(p->cmd, sizeof p->cmd, "%.127s", b.cmd);
			}
		}
	}
}

/* "0000:3b:00" (Xid) or "0000:3b:00.0" (AER) against NVML's "00000000:3B:00.0". */
static bool same_pci(const char *a, const char *b)
{
	unsigned da, ba, va, db, bb, vb;
	if (sscanf(a, "%x:%x:%x", &da, &ba, &va) != 3 || sscanf(b, "%x:%x:%x", &db, &bb, &vb) != 3)
		return false;
	return da == db && ba == bb && va == vb;
}

/* The recorded value of an amdgpu fault (timeline.h), not the host layer's enum. */
static long amdgpu_fault_code(enum host_kmsg_kind k)
{
	switch (k) {
	case HOST_KMSG_AMDGPU_RING_TIMEOUT:
		return TL_AMDGPU_RING_TIMEOUT;
	case HOST_KMSG_AMDGPU_RESET:
		return TL_AMDGPU_RESET;
	case HOST_KMSG_AMDGPU_RESET_OK:
		return TL_AMDGPU_RESET_OK;
	default:
		return TL_AMDGPU_RESET_FAILED;
	}
}

static void kmsg_part(sampler *s)
{
	if (!s->kmsg)
		return;
	host_kmsg_event ev[16];
	int n = host_kmsg_read(s->kmsg, ev, 16);
	for (int i = 0; i < n; i++) {
		if (ev[i].detail)
			continue; /* the summary line of the same AER error is counted */
		int gpu = -1;
		for (int g = 0; s->o.gpu && g < s->snap.ngpu; g++)
			if (ev[i].pci[0] &&
			    same_pci(ev[i].pci, gpu_static_info(s->o.gpu, g)->pci_bus_id))
				gpu = g;
		char text[256];
		if (ev[i].kind == HOST_KMSG_XID) {
			if (gpu >= 0 && gpu < GPU_MAX && ev[i].xid_ok &&
			    s->xid_v[gpu] == ev[i].xid &&
			    fabs(s->snap.t_wall - s->xid_t[gpu]) <= XID_SAME_S)
				continue; /* NVML reported it already */
			snprintf(text, sizeof text, "Xid %d on %s (%s): %.150s", ev[i].xid,
			         ev[i].pci,
			         ev[i].xid_ok ? gpu_xid_meaning(ev[i].xid) : "unreadable number",
			         ev[i].msg);
			snapshot_add_event(&s->snap, TL_EV_XID, gpu, ev[i].xid_ok ? ev[i].xid : -1,
			                   text);
		} else if (ev[i].kind >= HOST_KMSG_AMDGPU_RING_TIMEOUT) {
			snprintf(text, sizeof text, "amdgpu %s: %.200s",
			         ev[i].pci[0] ? ev[i].pci : "?", ev[i].msg);
			snapshot_add_event(&s->snap, TL_EV_AMDGPU, gpu,
			                   amdgpu_fault_code(ev[i].kind), text);
		} else {
			snprintf(text, sizeof text, "%.250s", ev[i].msg);
			snapshot_add_event(&s->snap, TL_EV_AER, gpu, ev[i].kind, text);
		}
	}
}

/*
 * The busiest host processes outside the followed tree, as host-only
 * process records (gpu -1, not in the tree): the foreign load a data loader
 * competes with. Once a second at most: a scan reads every /proc/PID/stat.
 */
static void top_part(sampler *s)
{
	if (!s->top)
		return;
	snapshot *sn = &s->snap;
	if (s->top_ns && sn->t_mono_ns - s->top_ns < SAMPLER_HOST_TOP_PERIOD_NS * 9 / 10)
		return;
	s->top_ns = sn->t_mono_ns;
	host_top_entry e[SAMPLER_HOST_TOP + 16];
	int n = host_top_scan(s->top, sn->t_mono_ns, e, SAMPLER_HOST_TOP + 16,
	                      SAMPLER_HOST_TOP_MIN_PCT);
	int kept = 0;
	for (int i = 0; i < n && kept < SAMPLER_HOST_TOP; i++) {
		if (host_sample_find_proc(&s->hsamp, (int)e[i].pid) >= 0)
			continue; /* the job's own: recorded as a tree process */
		tl_proc *p = snapshot_add_proc(sn);
		p->pid = e[i].pid;
		p->ppid = e[i].ppid;
		p->gpu = -1;
		p->in_tree = false;
		p->alive = true;
		p->cpu_pct = e[i].cpu_pct;
		host_pid_brief b;
		host_pid_brief_read(s->proc_root, p->pid, &b);
		snprintf(p->user, sizeof p->user, "%.31s", b.user);
		snprintf(p->cmd, sizeof p->cmd, "%.127s", b.cmd[0] ? b.cmd : e[i].comm);
		kept++;
	}
}

static void tree_part(sampler *s)
{
	snapshot *sn = &s->snap;
	const host_sample *h = &s->hsamp;
	for (size_t i = 0; i < h->nprocs; i++) {
		tl_proc *p = snapshot_add_proc(sn);
		p->pid = (unsigned)h->procs[i].pid;
		fill_from_host(p, &h->procs[i]);
	}
	for (size_t i = 0; i < h->nevents; i++) {
		const host_proc_event *e = &h->events[i];
		char text[256];
		snprintf(text, sizeof text, "%.255s",
		         e->cmdline && e->cmdline[0] ? e->cmdline : e->comm);
		snapshot_add_event(sn,
		                   e->kind == HOST_PROC_START ? TL_EV_PROC_START : TL_EV_PROC_EXIT,
		                   -1, e->pid, text);
	}
}

const snapshot *sampler_tick(sampler *s)
{
	snapshot *sn = &s->snap;
	snapshot_clear(sn);
	int64_t mono = gw_mono_ns();
	double wall = gw_wall_s();
	sn->t_mono_ns = mono;
	sn->t_wall = wall;
	sn->interval_s = s->last_mono ? (double)(mono - s->last_mono) / 1e9 : NAN;
	s->last_mono = mono;
	/* Host first, then GPU: the GPU part looks processes up in the host sample. */
	if (!s->o.gpu_only) {
		pthread_mutex_lock(&s->mu);
		host_sampler_sample_at(s->hs, mono, wall, &s->hsamp);
		pthread_mutex_unlock(&s->mu);
		host_summary(s);
	}
	gpu_part(s);
	tree_part(s);
	top_part(s);
	kmsg_part(s);
	s->ticks++;
	return sn;
}

/*
 * The interval after a tick at `at`: the fast one while the run is young,
 * then doubling at each tick up to the configured one, so a short job has
 * several samples and a long one is not dominated by its first seconds.
 */
static int64_t current_interval(sampler *s, int64_t at, int64_t prev)
{
	pthread_mutex_lock(&s->mu);
	int64_t interval = s->o.interval_ns;
	pthread_mutex_unlock(&s->mu);
	int64_t fast = s->o.fast_interval_ns;
	if (fast <= 0 || fast >= interval)
		return interval;
	if (at + fast - s->start_mono <= s->o.fast_for_ns)
		return fast;
	int64_t next = prev > 0 ? 2 * prev : 2 * fast;
	return next < interval ? next : interval;
}

static void *sampler_main(void *arg)
{
	sampler *s = arg;
	int64_t next = gw_mono_ns(), interval = 0;
	/* A tick taken before the start is the first one of the schedule. */
	bool ticked = s->ticks > 0;
	if (ticked)
		next = s->last_mono;
	s->start_mono = next;
	for (;;) {
		if (!ticked) {
			const snapshot *sn = sampler_tick(s);
			if (s->o.cb)
				s->o.cb(sn, s->o.arg);
		}
		ticked = false;
		interval = current_interval(s, next, interval);
		/* Drift correction: deadlines follow the schedule; a late tick skips ahead. */
		next += interval;
		int64_t now = gw_mono_ns();
		if (now - next > interval / 2) {
			s->late++;
			next = now;
		}
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		int64_t wait = next - now;
		int64_t abs_ns =
		    (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec + (wait > 0 ? wait : 0);
		ts.tv_sec = abs_ns / 1000000000LL;
		ts.tv_nsec = abs_ns % 1000000000LL;
		pthread_mutex_lock(&s->mu);
		while (!s->stopping && gw_mono_ns() < next)
			if (pthread_cond_timedwait(&s->cv, &s->mu, &ts) != 0)
				break;
		bool stop = s->stopping;
		pthread_mutex_unlock(&s->mu);
		if (stop)
			return NULL;
	}
}

int sampler_start(sampler *s)
{
	if (s->running)
		return 0;
	if (pthread_create(&s->thread, NULL, sampler_main, s) != 0)
		return -1;
	s->running = true;
	return 0;
}

void sampler_stop(sampler *s)
{
	if (!s->running)
		return;
	pthread_mutex_lock(&s->mu);
	s->stopping = true;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	pthread_join(s->thread, NULL);
	s->running = false;
	s->stopping = false;
}

void sampler_finish(sampler *s)
{
	sampler_stop(s);
	/* Never started (nothing to close), or the last tick is this very moment
	 * (within 1 ms). A tick a few ms old still comes before the job's exit,
	 * which the closing sample must follow. */
	if (!s->ticks || gw_mono_ns() - s->last_mono < 1000000LL)
		return;
	const snapshot *sn = sampler_tick(s);
	if (s->o.cb)
		s->o.cb(sn, s->o.arg);
}

void sampler_free(sampler *s)
{
	if (!s)
		return;
	sampler_stop(s);
	host_sample_free(&s->hsamp);
	if (s->kmsg)
		host_kmsg_close(s->kmsg);
	if (s->hs)
		host_sampler_free(s->hs);
	snapshot_free(&s->snap);
	host_top_free(s->top);
	free(s->was_lost);
	free(s->gp);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s);
}

void sampler_stats(const sampler *s, long *ticks, long *late)
{
	*ticks = s->ticks;
	*late = s->late;
}

void sampler_set_interval(sampler *s, int64_t interval_ns)
{
	pthread_mutex_lock(&s->mu);
	if (interval_ns > 0)
		s->o.interval_ns = interval_ns;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}
