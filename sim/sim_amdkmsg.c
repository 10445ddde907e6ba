/* sim_amdkmsg.c - a scenario's amdgpu resets and their kernel log lines (sim_amdkmsg.h). */
#include "sim_amdkmsg.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool sim_amd_resetting(const sim_gpu *g, double t)
{
	return g->amd && !isinf(g->reset_at) && t >= g->reset_at && t < g->reset_at + g->back_after;
}

bool sim_amd_proc_on(const sim_gpu *g, const sim_fproc *p, double t)
{
	if (!(t >= p->start && t < p->end))
		return false;
	/* a reset ends every context on the GPU: what ran before it is gone after */
	return !(g->amd && !isinf(g->reset_at) && t >= g->reset_at && p->start <= g->reset_at);
}

/* One line: its time, then its order among lines of the same time. */
typedef struct {
	double t;
	int order;
	char text[240];
} kline;

typedef struct {
	kline *v;
	int n, cap;
} klines;

static bool add(klines *k, double t, int order, const char *bdf, const char *msg)
{
	if (k->n == k->cap) {
		int cap = k->cap ? 2 * k->cap : 16;
		kline *v = realloc(k->v, (size_t)cap * sizeof *v);
		if (!v)
			return false;
		k->v = v;
		k->cap = cap;
	}
	kline *l = &k->v[k->n++];
	l->t = t;
	l->order = order;
	snprintf(l->text, sizeof l->text, "amdgpu %s: amdgpu: %s", bdf, msg);
	return true;
}

/* The first scenario process on GPU g at t, as the driver names the guilty one; NULL: none. */
static const sim_fproc *proc_at(const sim_scenario *s, int g, double t)
{
	for (int i = 0; i < s->n_procs; i++)
		if (s->procs[i].gpu == g && t >= s->procs[i].start && t < s->procs[i].end)
			return &s->procs[i];
	return NULL;
}

/* A ring that timed out at t and the reset the driver starts for it. */
static bool timeout_at(klines *k, const sim_scenario *s, int g, double t, int *order,
                       const char *bdf)
{
	char msg[160];
	unsigned seq = 1000u + 37u * (unsigned)g;
	snprintf(msg, sizeof msg, "ring gfx_0.0.0 timeout, signaled seq=%u, emitted seq=%u", seq,
	         seq + 2);
	bool ok = add(k, t, (*order)++, bdf, msg);
	const sim_fproc *p = proc_at(s, g, t);
	if (p) {
		snprintf(msg, sizeof msg,
		         " Process information: process %.40s pid %u thread %.40s pid %u", p->name,
		         p->pid, p->name, p->pid);
		ok &= add(k, t, (*order)++, bdf, msg);
	}
	return ok && add(k, t + 0.0001, (*order)++, bdf, "GPU reset begin!");
}

static bool gpu_lines(klines *k, const sim_scenario *s, int g)
{
	const sim_gpu *gp = &s->gpus[g];
	char bdf[16];
	snprintf(bdf, sizeof bdf, "%04x:%02x:%02x.%x", gp->pci.domain, gp->pci.bus, gp->pci.device,
	         gp->pci.function);
	int order = 0, resets = 0;
	bool ok = true;
	if (!isinf(gp->reset_at)) {
		double back = gp->reset_at + gp->back_after;
		char msg[64];
		snprintf(msg, sizeof msg, "GPU reset(%d) succeeded!", ++resets);
		ok &= timeout_at(k, s, g, gp->reset_at, &order, bdf) &&
		      add(k, back, order++, bdf, "GPU reset succeeded, trying to resume") &&
		      add(k, back, order++, bdf, "VRAM is lost due to GPU reset!") &&
		      add(k, back, order++, bdf, msg);
	}
	if (!isinf(gp->lost_after)) {
		char msg[64];
		snprintf(msg, sizeof msg, "GPU reset(%d) failed", ++resets);
		ok &= timeout_at(k, s, g, gp->lost_after, &order, bdf) &&
		      add(k, gp->lost_after + 0.0002, order++, bdf, msg);
	}
	return ok;
}

static int by_time(const void *a, const void *b)
{
	const kline *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return (x->order > y->order) - (x->order < y->order);
}

char *sim_amdkmsg_text(const sim_scenario *s, double after, double upto)
{
	klines k = {0};
	bool ok = true;
	for (int g = 0; g < s->n_gpus && ok; g++)
		if (s->gpus[g].amd)
			ok = gpu_lines(&k, s, g);
	if (!ok) {
		free(k.v);
		return NULL;
	}
	if (k.n > 1)
		qsort(k.v, (size_t)k.n, sizeof *k.v, by_time);
	size_t cap = 1 + (size_t)k.n * 270, len = 0;
	char *out = malloc(cap);
	for (int i = 0; out && i < k.n; i++) {
		const kline *l = &k.v[i];
		if (l->t > upto || (after >= 0 && l->t <= after))
			continue;
		long long us = llround(l->t * 1e6);
		len += (size_t)snprintf(out + len, cap - len, "[%5lld.%06lld] %s\n", us / 1000000,
		                        us % 1000000, l->text);
	}
	if (out)
		out[len] = '\0';
	free(k.v);
	return out;
}

int sim_amdkmsg_append(const sim_scenario *s, const char *path, double after, double upto)
{
	char *text = sim_amdkmsg_text(s, after, upto);
	if (!text) {
		errno = ENOMEM;
		return -1;
	}
	int rc = 0;
	size_t len = strlen(text);
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = -1;
	} else {
		if (len && write(fd, text, len) != (ssize_t)len)
			rc = -1;
		if (close(fd) != 0)
			rc = -1;
	}
	int e = errno;
	free(text);
	errno = e;
	return rc;
}
