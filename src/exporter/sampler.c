/*
 * sampler.c - the exporter's sampling thread: every interval it reads every
 * GPU (and the host), keeps a short window of snapshots for the findings
 * hook, renders the exposition once and publishes it on the board. Scrapes
 * only ever serve what was published here.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exporter/exporter.h"
#include "host/host.h"
#include "host/k8s.h"
#include "host/pidbrief.h"
#include "util/err.h"
#include "util/timeutil.h"

#define WINDOW_MAX 32                   /* snapshots kept for the findings hook */
#define WINDOW_NS (30LL * 1000000000LL) /* ... covering about this long */
#define PROC_BUF 1024                   /* processes read per GPU before picking the top ones */

struct exp_sampler {
	gpu_ctx *gpu;
	exp_board *board;
	exp_sampler_opts o;
	int ngpus;
	exp_snapshot *ring[WINDOW_MAX];
	int ring_cap, ring_len, ring_next;
	uint64_t samples;
	gpu_proc *procs;
	bool pidns_nested;
	host_sampler *host; /* NULL: no host series */
	host_sample hsample;
	exp_finding found[EXP_FINDINGS_MAX];
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stopping, running;
};

/* Most GPU memory first, then most SM, then the lower PID: stable top N. */
static int proc_cmp(const void *a, const void *b)
{
	const gpu_proc *x = a, *y = b;
	uint64_t mx = x->mem_ok ? x->mem_bytes : 0, my = y->mem_ok ? y->mem_bytes : 0;
	if (mx != my)
		return mx > my ? -1 : 1;
	unsigned sx = x->util_ok ? x->sm_pct : 0, sy = y->util_ok ? y->sm_pct : 0;
	if (sx != sy)
		return sx > sy ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Basename of the first word of a command line. */
static void short_command(const char *cmd, char *out, size_t outlen)
{
	size_t n = strcspn(cmd, " ");
	const char *start = cmd;
	for (size_t k = 0; k < n; k++)
		if (cmd[k] == '/')
			start = cmd + k + 1;
	size_t len = (size_t)(cmd + n - start);
	if (len >= outlen)
		len = outlen - 1;
	memcpy(out, start, len);
	out[len] = '\0';
}

/* The pod of every process on the GPU; the GPU gets the labels only when one container has it. */
static bool pod_of(const exp_sampler *s, unsigned pid, host_k8s *k)
{
	char proc[512], logs[512];
	snprintf(proc, sizeof proc, "%s/proc", s->o.kubernetes_root);
	snprintf(logs, sizeof logs, "%s/var/log", s->o.kubernetes_root);
	return host_k8s_lookup(proc, logs, pid, k);
}

/* The GPU gets pod labels only when the processes on it are all in one container. */
static void sample_pods(const exp_sampler *s, exp_gpu *g, int n)
{
	int owners = 0;
	for (int k = 0; k < n; k++) {
		host_k8s p;
		if (!pod_of(s, s->procs[k].pid, &p))
			continue;
		bool same = !strcmp(p.pod, g->pod) && !strcmp(p.namespace_, g->namespace_) &&
		            !strcmp(p.container, g->container);
		if (owners == 0 || !same)
			owners++;
		snprintf(g->pod, sizeof g->pod, "%s", p.pod);
		snprintf(g->namespace_, sizeof g->namespace_, "%s", p.namespace_);
		snprintf(g->container, sizeof g->container, "%s", p.container);
	}
	if (owners != 1)
		g->pod[0] = g->namespace_[0] = g->container[0] = '\0';
}

static void sample_processes(exp_sampler *s, int i, exp_gpu *g)
{
	g->nprocs = 0;
	g->nprocs_total = -1;
	g->pod[0] = g->namespace_[0] = g->container[0] = '\0';
	int n = gpu_processes(s->gpu, i, s->procs, PROC_BUF);
	if (n < 0)
		return;
	g->nprocs_total = n;
	if (s->o.kubernetes_root)
		sample_pods(s, g, n);
	if (s->o.processes <= 0 || n == 0)
		return;
	qsort(s->procs, (size_t)n, sizeof *s->procs, proc_cmp);
	int keep = n < s->o.processes ? n : s->o.processes;
	for (int k = 0; k < keep; k++) {
		const gpu_proc *p = &s->procs[k];
		exp_proc *e = &g->procs[k];
		memset(e, 0, sizeof *e);
		e->pid = p->pid;
		e->mem_ok = p->mem_ok;
		e->mem_bytes = p->mem_bytes;
		e->sm_ok = p->util_ok;
		e->sm_ratio = p->util_ok ? p->sm_pct / 100.0 : 0;
		/* NVML's PIDs are the host's: inside a nested PID namespace the
		 * same number is another process, so no name rather than a wrong one. */
		if (!s->pidns_nested) {
			host_pid_brief b;
			host_pid_brief_read(s->o.proc_root, p->pid, &b);
			short_command(b.cmd, e->command, sizeof e->command);
		}
		host_k8s pod;
		if (s->o.kubernetes_root && pod_of(s, p->pid, &pod)) {
			snprintf(e->pod, sizeof e->pod, "%s", pod.pod);
			snprintf(e->namespace_, sizeof e->namespace_, "%s", pod.namespace_);
			snprintf(e->container, sizeof e->container, "%s", pod.container);
		}
	}
	g->nprocs = keep;
}

static void sample_gpus(exp_sampler *s, exp_snapshot *snap)
{
	snprintf(snap->driver, sizeof snap->driver, "%s", gpu_driver_version(s->gpu));
	snprintf(snap->nvml, sizeof snap->nvml, "%s", gpu_nvml_version(s->gpu));
	for (int i = 0; i < s->ngpus; i++) {
		exp_gpu *g = &snap->gpus[i];
		const gpu_static *st = gpu_static_info(s->gpu, i);
		g->index = st->index;
		snprintf(g->uuid, sizeof g->uuid, "%s", st->uuid);
		snprintf(g->pci_bus_id, sizeof g->pci_bus_id, "%s", st->pci_bus_id);
		snprintf(g->name, sizeof g->name, "%s", st->name);
		snprintf(g->serial, sizeof g->serial, "%s", st->serial);
		snprintf(g->vbios, sizeof g->vbios, "%s", st->vbios);
		gpu_sample(s->gpu, i, &g->vals);
		g->nmig = gpu_mig_devices(s->gpu, i, g->mig, GPU_MIG_MAX);
		sample_processes(s, i, g);
	}
}

static exp_val pct_ratio(host_val v)
{
	return (exp_val){v.ok, v.ok ? v.v / 100.0 : 0};
}

static exp_val plain(host_val v)
{
	return (exp_val){v.ok, v.ok ? v.v : 0};
}

/* The host series: CPU busy/iowait overall and per CPU, memory, swap. */
static void sample_host(exp_sampler *s, exp_host *h, int64_t mono, double wall)
{
	h->present = false;
	h->ncpus = 0;
	if (!s->host || host_sampler_sample_at(s->host, mono, wall, &s->hsample) != 0)
		return;
	const host_sample *x = &s->hsample;
	h->present = true;
	h->cpu_busy = pct_ratio(x->sys[HOST_SYS_CPU_BUSY]);
	h->cpu_iowait = pct_ratio(x->sys[HOST_SYS_CPU_IOWAIT]);
	h->mem_total = plain(x->sys[HOST_SYS_MEM_TOTAL]);
	h->mem_used = plain(x->sys[HOST_SYS_MEM_USED]);
	h->mem_available = plain(x->sys[HOST_SYS_MEM_AVAILABLE]);
	h->swap_total = plain(x->sys[HOST_SYS_SWAP_TOTAL]);
	h->swap_used = plain(x->sys[HOST_SYS_SWAP_USED]);
	if (x->ncpus > 100000 || exp_host_reserve(h, (int)x->ncpus) != 0)
		return;
	for (size_t k = 0; k < x->ncpus; k++) {
		exp_cpu *c = &h->cpus[k];
		c->id = x->cpus[k].id;
		c->busy = pct_ratio(x->cpus[k].v[HOST_CPU_BUSY]);
		c->iowait = pct_ratio(x->cpus[k].v[HOST_CPU_IOWAIT]);
	}
	h->ncpus = (int)x->ncpus;
}

static int finding_cmp(const void *a, const void *b)
{
	const exp_finding *x = a, *y = b;
	if (x->gpu != y->gpu)
		return x->gpu < y->gpu ? -1 : 1;
	int c = strcmp(x->rule, y->rule);
	if (c)
		return c;
	return (int)y->severity - (int)x->severity; /* worst first */
}

/* Run the findings hook on the window; one series per (gpu, rule), worst severity. */
static void run_findings(exp_sampler *s, exp_snapshot *snap)
{
	snap->nfindings = 0;
	if (!s->o.findings)
		return;
	const exp_snapshot *view[WINDOW_MAX];
	for (int k = 0; k < s->ring_len; k++)
		view[k] = s->ring[(s->ring_next - s->ring_len + k + s->ring_cap) % s->ring_cap];
	timeline *tl = NULL;
	exp_window w = {view, s->ring_len, &tl};
	int n = s->o.findings(s->o.findings_user, &w, s->found, EXP_FINDINGS_MAX);
	tl_free(tl);
	if (n <= 0)
		return;
	if (n > EXP_FINDINGS_MAX)
		n = EXP_FINDINGS_MAX;
	qsort(s->found, (size_t)n, sizeof *s->found, finding_cmp);
	for (int k = 0; k < n; k++) {
		const exp_finding *f = &s->found[k];
		if (!f->rule[0] || memchr(f->rule, '\0', sizeof f->rule) == NULL)
			continue;
		if (snap->nfindings > 0) {
			const exp_finding *last = &snap->findings[snap->nfindings - 1];
			if (last->gpu == f->gpu && !strcmp(last->rule, f->rule))
				continue;
		}
		snap->findings[snap->nfindings++] = *f;
	}
}

static void publish(exp_sampler *s, const exp_snapshot *snap, int64_t t_mono)
{
	exp_buf b = {0};
	exp_render(snap, &s->o.render, &b);
	if (!b.p) {
		gw_debug("exporter: nothing rendered; keeping the previous page");
		return;
	}
	exp_page *p = exp_page_new(b.p, b.len, snap->t_wall, t_mono);
	if (p)
		exp_board_publish(s->board, p);
}

static void take_sample(exp_sampler *s)
{
	exp_snapshot *snap = s->ring[s->ring_next];
	s->ring_next = (s->ring_next + 1) % s->ring_cap;
	if (s->ring_len < s->ring_cap)
		s->ring_len++;
	int64_t t0 = gw_mono_ns();
	snap->t_wall = gw_wall_s();
	sample_gpus(s, snap);
	sample_host(s, &snap->host, t0, snap->t_wall);
	int64_t t1 = gw_mono_ns();
	snap->sample_seconds = (double)(t1 - t0) / 1e9;
	snap->samples_total = ++s->samples;
	run_findings(s, snap);
	publish(s, snap, t0);
}

static void *sampler_main(void *arg)
{
	exp_sampler *s = arg;
	int64_t next = gw_mono_ns() + s->o.interval_ns;
	pthread_mutex_lock(&s->mu);
	while (!s->stopping) {
		int64_t now = gw_mono_ns();
		if (now < next) {
			struct timespec ts = {(time_t)(next / 1000000000LL),
			                      (long)(next % 1000000000LL)};
			pthread_cond_timedwait(&s->cv, &s->mu, &ts);
			continue;
		}
		pthread_mutex_unlock(&s->mu);
		take_sample(s);
		/* Fixed cadence: the schedule, not the last wake-up, sets the next tick;
		 * after a stall it resumes from now instead of catching up in a burst. */
		next += s->o.interval_ns;
		now = gw_mono_ns();
		if (next <= now)
			next = now + s->o.interval_ns;
		pthread_mutex_lock(&s->mu);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

static void sampler_free(exp_sampler *s)
{
	for (int k = 0; k < WINDOW_MAX; k++)
		exp_snapshot_free(s->ring[k]);
	free(s->procs);
	host_sample_free(&s->hsample);
	host_sampler_free(s->host);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

int exp_sampler_start(gpu_ctx *gpu, exp_board *board, const exp_sampler_opts *o, exp_sampler **out)
{
	exp_sampler *s = calloc(1, sizeof *s);
	if (!s)
		return gw_error(GW_EXIT_ENV, "exporter", NULL, "out of memory");
	s->gpu = gpu;
	s->board = board;
	s->o = *o;
	if (!s->o.proc_root)
		s->o.proc_root = "/proc";
	if (s->o.processes > EXP_PROC_MAX)
		s->o.processes = EXP_PROC_MAX;
	s->o.render.processes = s->o.processes;
	s->ngpus = gpu_count(gpu);
	pthread_mutex_init(&s->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	int64_t per = s->o.interval_ns > 0 ? s->o.interval_ns : 1000000000LL;
	s->ring_cap = (int)(WINDOW_NS / per);
	s->ring_cap = s->ring_cap < 1 ? 1 : s->ring_cap > WINDOW_MAX ? WINDOW_MAX : s->ring_cap;
	s->procs = calloc(PROC_BUF, sizeof *s->procs);
	bool ok = s->procs != NULL;
	for (int k = 0; k < s->ring_cap && ok; k++)
		ok = (s->ring[k] = exp_snapshot_new(s->ngpus)) != NULL;
	if (!ok) {
		sampler_free(s);
		return gw_error(GW_EXIT_ENV, "exporter", NULL, "out of memory");
	}
	s->pidns_nested = host_pidns_nested(s->o.proc_root);
	if (s->o.host) {
		host_config hc;
		host_config_default(&hc);
		hc.proc_root = s->o.proc_root;
		/* Without a followed process the host sampler reads system-wide files only. */
		s->host = host_sampler_new(&hc);
		if (!s->host)
			gw_debug("exporter: no host sampler (out of memory); host series left out");
	}
	/* Rates (GPM, PCIe, NVLink) need an interval: the first page has them. */
	gpu_wait_rate_window(gpu);
	take_sample(s);
	if (pthread_create(&s->thread, NULL, sampler_main, s) != 0) {
		sampler_free(s);
		return gw_error(GW_EXIT_ENV, "exporter", NULL, "cannot start the sampling thread");
	}
	s->running = true;
	*out = s;
	return 0;
}

void exp_sampler_stop(exp_sampler *s)
{
	if (!s)
		return;
	if (s->running) {
		pthread_mutex_lock(&s->mu);
		s->stopping = true;
		pthread_cond_signal(&s->cv);
		pthread_mutex_unlock(&s->mu);
		pthread_join(s->thread, NULL);
	}
	sampler_free(s);
}
