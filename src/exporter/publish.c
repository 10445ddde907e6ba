/*
 * publish.c - the exporter on the one sampler (sample/sampler.h): every
 * snapshot joins a short window for the findings hook, gets the labels only
 * the exporter shows (static GPU facts, the top processes and their pods,
 * MIG devices), is rendered once and published on the board. Scrapes only
 * ever serve what was published here.
 */
#include <stdbool.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exporter/buf.h"
#include "exporter/exposition.h"
#include "exporter/findings.h"
#include "exporter/frame.h"
#include "exporter/page.h"
#include "exporter/publish.h"
#include "host/host.h"
#include "host/host_k8s.h"
#include "host/host_pidbrief.h"
#include "sample/sampler.h"
#include "util/err.h"
#include "util/timeutil.h"
#include "util/strbuf.h"

#define WINDOW_MAX 32                   /* snapshots kept for the findings hook */
#define WINDOW_NS (30LL * 1000000000LL) /* ... covering about this long */
#define MIB 1048576.0

struct exporter_publisher {
	gpu_ctx *gpu;
	exporter_board *board;
	exporter_publisher_opts o;
	sampler *smp;
	int ngpus;
	snapshot ring[WINDOW_MAX];
	int ring_cap, ring_len, ring_next;
	exporter_frame *frame;
	uint64_t samples;
	bool pidns_nested;
	const tl_proc **order; /* scratch: one GPU's processes, sorted */
	int order_cap;
	exporter_finding found[EXPORTER_FINDINGS_MAX];
};

/* Most GPU memory first, then most SM, then the lower PID: stable top N. */
static int proc_cmp(const void *a, const void *b)
{
	const tl_proc *x = *(const tl_proc *const *)a, *y = *(const tl_proc *const *)b;
	double mx = isnan(x->gpu_mem_mib) ? 0 : x->gpu_mem_mib;
	double my = isnan(y->gpu_mem_mib) ? 0 : y->gpu_mem_mib;
	if (mx != my)
		return mx > my ? -1 : 1;
	double sx = isnan(x->sm_pct) ? 0 : x->sm_pct, sy = isnan(y->sm_pct) ? 0 : y->sm_pct;
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

static bool pod_of(const exporter_publisher *s, unsigned pid, host_k8s *k)
{
	char proc[512], logs[512];
	snprintf(proc, sizeof proc, "%s/proc", s->o.kubernetes_root);
	snprintf(logs, sizeof logs, "%s/var/log", s->o.kubernetes_root);
	return host_k8s_lookup(proc, logs, pid, k);
}

/* The GPU gets pod labels only when the processes on it are all in one container. */
static void gpu_pods(const exporter_publisher *s, exporter_gpu *g, const tl_proc *const *procs,
                     int n)
{
	int owners = 0;
	for (int k = 0; k < n; k++) {
		host_k8s p;
		if (!pod_of(s, procs[k]->pid, &p))
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

static void export_proc(const exporter_publisher *s, const tl_proc *p, exporter_proc *e)
{
	memset(e, 0, sizeof *e);
	e->pid = p->pid;
	e->mem_ok = !isnan(p->gpu_mem_mib);
	e->mem_bytes = e->mem_ok ? (uint64_t)(p->gpu_mem_mib * MIB) : 0;
	e->sm_ok = !isnan(p->sm_pct);
	e->sm_ratio = e->sm_ok ? p->sm_pct / 100.0 : 0;
	/* NVML's PIDs are the host's: inside a nested PID namespace the
	 * same number is another process, so no name rather than a wrong one. */
	if (!s->pidns_nested)
		short_command(p->cmd, e->command, sizeof e->command);
	host_k8s pod;
	if (s->o.kubernetes_root && pod_of(s, p->pid, &pod)) {
		snprintf(e->pod, sizeof e->pod, "%s", pod.pod);
		snprintf(e->namespace_, sizeof e->namespace_, "%s", pod.namespace_);
		snprintf(e->container, sizeof e->container, "%s", pod.container);
	}
}

/* GPU i's processes of the snapshot: the count, the pod owning the GPU, the top N. */
static void gpu_processes_of(exporter_publisher *s, const snapshot *sn, int i, exporter_gpu *g)
{
	g->nprocs = 0;
	g->nprocs_total = -1;
	g->pod[0] = g->namespace_[0] = g->container[0] = '\0';
	if (i >= 64 || !(sn->gpu_procs_known & (1ULL << i)))
		return;
	int n = 0;
	for (int k = 0; k < sn->nproc; k++) {
		if (sn->procs[k].gpu != i)
			continue;
		if (n == s->order_cap) {
			int cap = s->order_cap ? 2 * s->order_cap : 64;
			const tl_proc **p = realloc(s->order, (size_t)cap * sizeof *p);
			if (!p)
				break;
			s->order = p;
			s->order_cap = cap;
		}
		s->order[n++] = &sn->procs[k];
	}
	g->nprocs_total = n;
	if (s->o.kubernetes_root)
		gpu_pods(s, g, s->order, n);
	if (s->o.processes <= 0 || n == 0)
		return;
	qsort(s->order, (size_t)n, sizeof *s->order, proc_cmp);
	int keep = n < s->o.processes ? n : s->o.processes;
	for (int k = 0; k < keep; k++)
		export_proc(s, s->order[k], &g->procs[k]);
	g->nprocs = keep;
}

static void frame_gpus(exporter_publisher *s, const snapshot *sn)
{
	exporter_frame *f = s->frame;
	snprintf(f->driver, sizeof f->driver, "%s", gpu_driver_version(s->gpu));
	snprintf(f->nvml, sizeof f->nvml, "%s", gpu_nvml_version(s->gpu));
	for (int i = 0; i < f->ngpus; i++) {
		exporter_gpu *g = &f->gpus[i];
		const gpu_static *st = gpu_static_info(s->gpu, i);
		g->index = st->index;
		snprintf(g->uuid, sizeof g->uuid, "%s", st->uuid);
		snprintf(g->pci_bus_id, sizeof g->pci_bus_id, "%s", st->pci_bus_id);
		snprintf(g->name, sizeof g->name, "%s", st->name);
		snprintf(g->serial, sizeof g->serial, "%s", st->serial);
		snprintf(g->vbios, sizeof g->vbios, "%s", st->vbios);
		snprintf(g->vendor, sizeof g->vendor, "%s", st->vendor);
		g->vals = &sn->gpu[i];
		g->nmig = gpu_mig_devices(s->gpu, i, g->mig, GPU_MIG_MAX);
		gpu_processes_of(s, sn, i, g);
	}
}

static int finding_cmp(const void *a, const void *b)
{
	const exporter_finding *x = a, *y = b;
	if (x->gpu != y->gpu)
		return x->gpu < y->gpu ? -1 : 1;
	int c = strcmp(x->rule, y->rule);
	if (c)
		return c;
	return (int)y->severity - (int)x->severity; /* worst first */
}

/* Run the findings hook on the window; one series per (gpu, rule), worst severity. */
static void run_findings(exporter_publisher *s)
{
	exporter_frame *f = s->frame;
	f->nfindings = 0;
	if (!s->o.findings)
		return;
	const snapshot *view[WINDOW_MAX];
	for (int k = 0; k < s->ring_len; k++)
		view[k] = &s->ring[(s->ring_next - s->ring_len + k + s->ring_cap) % s->ring_cap];
	timeline *tl = NULL;
	exporter_window w = {view, s->ring_len, f->gpus, f->ngpus, f->driver, &tl};
	int n = s->o.findings(s->o.findings_user, &w, s->found, EXPORTER_FINDINGS_MAX);
	tl_free(tl);
	if (n <= 0)
		return;
	if (n > EXPORTER_FINDINGS_MAX)
		n = EXPORTER_FINDINGS_MAX;
	qsort(s->found, (size_t)n, sizeof *s->found, finding_cmp);
	for (int k = 0; k < n; k++) {
		const exporter_finding *x = &s->found[k];
		if (!x->rule[0] || memchr(x->rule, '\0', sizeof x->rule) == NULL)
			continue;
		if (f->nfindings > 0) {
			const exporter_finding *last = &f->findings[f->nfindings - 1];
			if (last->gpu == x->gpu && !strcmp(last->rule, x->rule))
				continue;
		}
		f->findings[f->nfindings++] = *x;
	}
}

static void publish(exporter_publisher *s, int64_t t_mono)
{
	exporter_buf b = {0};
	exporter_render(s->frame, &s->o.render, &b);
	if (!b.p) {
		gw_debug("exporter: nothing rendered; keeping the previous page");
		gw_sb_free(&b);
		return;
	}
	exporter_page *p = exporter_page_new(b.p, b.len, s->frame->snap->t_wall, t_mono);
	if (p)
		exporter_board_publish(s->board, p);
}

/* The sampler's callback, on its thread: the only one touching s after the start. */
static void on_snapshot(const snapshot *sn, void *arg)
{
	exporter_publisher *s = arg;
	snapshot *mine = &s->ring[s->ring_next];
	s->ring_next = (s->ring_next + 1) % s->ring_cap;
	if (s->ring_len < s->ring_cap)
		s->ring_len++;
	snapshot_copy(mine, sn);
	exporter_frame *f = s->frame;
	f->snap = mine;
	f->host = s->o.host;
	frame_gpus(s, mine);
	f->sample_seconds = (double)(gw_mono_ns() - sn->t_mono_ns) / 1e9;
	f->samples_total = ++s->samples;
	run_findings(s);
	publish(s, sn->t_mono_ns);
}

static void free_all(exporter_publisher *s)
{
	sampler_free(s->smp);
	for (int k = 0; k < WINDOW_MAX; k++)
		snapshot_free(&s->ring[k]);
	exporter_frame_free(s->frame);
	free(s->order);
	free(s);
}

int exporter_publisher_start(gpu_ctx *gpu, exporter_board *board, const exporter_publisher_opts *o,
                             exporter_publisher **out)
{
	exporter_publisher *s = calloc(1, sizeof *s);
	if (!s)
		return gw_error(GW_EXIT_ENV, "exporter", NULL, "out of memory");
	s->gpu = gpu;
	s->board = board;
	s->o = *o;
	if (!s->o.proc_root)
		s->o.proc_root = "/proc";
	if (s->o.processes > EXPORTER_PROC_MAX)
		s->o.processes = EXPORTER_PROC_MAX;
	s->o.render.processes = s->o.processes;
	s->ngpus = gpu_count(gpu);
	int64_t per = s->o.interval_ns > 0 ? s->o.interval_ns : 1000000000LL;
	s->ring_cap = (int)(WINDOW_NS / per);
	s->ring_cap = s->ring_cap < 1 ? 1 : s->ring_cap > WINDOW_MAX ? WINDOW_MAX : s->ring_cap;
	for (int k = 0; k < WINDOW_MAX; k++)
		snapshot_init(&s->ring[k], s->ngpus);
	s->frame = exporter_frame_new(s->ngpus);
	s->pidns_nested = host_pidns_nested(s->o.proc_root);
	/* What a machine-wide recording samples, so /metrics finds what a report would. */
	sampler_opts so = {.interval_ns = per,
	                   .gpu = gpu,
	                   .proc_root = s->o.proc_root,
	                   .host_top = s->o.host,
	                   .gpu_only = !s->o.host,
	                   .cb = on_snapshot,
	                   .arg = s};
	s->smp = s->frame ? sampler_new(&so) : NULL;
	if (!s->smp) {
		free_all(s);
		return gw_error(GW_EXIT_ENV, "exporter", NULL, "out of memory");
	}
	/* Rates (GPM, PCIe, NVLink) need an interval: the first page has them. */
	gpu_wait_rate_window(gpu);
	on_snapshot(sampler_tick(s->smp), s);
	if (sampler_start(s->smp) != 0) {
		free_all(s);
		return gw_error(GW_EXIT_ENV, "exporter", NULL, "cannot start the sampling thread");
	}
	*out = s;
	return 0;
}

void exporter_publisher_stop(exporter_publisher *s)
{
	if (!s)
		return;
	sampler_stop(s->smp);
	free_all(s);
}
