/*
 * gpuwatch.c - the worker's view of the GPUs, through the project's sampler.
 *
 * NVML is opened on a thread of our own, never on the worker's loop: a
 * driver can take seconds to answer, and the loop must keep starting CPU
 * tasks and noticing ended ones meanwhile. Once it is open the sampler's
 * thread does the rest; each snapshot's memory and processes are copied
 * (under the lock, so the loop never sees half of one) and a byte on the
 * wake pipe tells the loop.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpu/gpu.h"
#include "queue/backend.h"
#include "queue/worker.h"
#include "sample/sampler.h"
#include "util/timeutil.h"

#define REOPEN_NS 600000000000LL /* the driver may come back */

struct queue_gpuwatch {
	char gpus_opt[256], dir[PATH_MAX];
	int wake_fd;
	pthread_t opener;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop;
	int64_t interval_ns;
	gpu_ctx *ctx;
	sampler *s;      /* under mu once the opener made it */
	queue_gpus *pub; /* the latest, under mu */
	queue_gpus *tmp; /* the sampler thread's scratch */
};

size_t queue_gpus_size(const queue_gpus *s)
{
	return offsetof(queue_gpus, g) + (size_t)s->n * sizeof(queue_gpu_seen);
}

int64_t queue_gpus_largest(const queue_gpus *s)
{
	int64_t m = -1;
	for (int i = 0; i < s->n; i++)
		if (s->g[i].total_ok && s->g[i].total_mib > m)
			m = s->g[i].total_mib;
	return m;
}

static void publish(queue_gpuwatch *w, queue_gpus *t)
{
	pthread_mutex_lock(&w->mu);
	t->seq = w->pub->seq + 1;
	memcpy(w->pub, t, queue_gpus_size(t));
	pthread_mutex_unlock(&w->mu);
	char b = 1;
	if (write(w->wake_fd, &b, 1) < 0 && errno != EAGAIN) {
		/* The loop is gone or its pipe is full: it reads the latest anyway. */
	}
}

static void copy_gpu(queue_gpuwatch *w, const snapshot *sn, int i, queue_gpu_seen *g)
{
	const gpu_static *st = gpu_static_info(w->ctx, i);
	const gpu_values *v = &sn->gpu[i];
	memset(g, 0, offsetof(queue_gpu_seen, proc));
	g->index = st->index;
	g->amd = !strcmp(st->vendor, "amd");
	g->vendor_index = st->vendor_index;
	snprintf(g->uuid, sizeof g->uuid, "%s", st->uuid);
	snprintf(g->name, sizeof g->name, "%s", st->name);
	g->lost = v->lost;
	g->total_ok = v->ok[GM_MEM_TOTAL];
	g->total_mib = (int64_t)v->v[GM_MEM_TOTAL];
	g->free_ok = v->ok[GM_MEM_FREE];
	g->free_mib = (int64_t)v->v[GM_MEM_FREE];
}

/* The sampler's callback, on its thread. */
static void on_snapshot(const snapshot *sn, void *arg)
{
	queue_gpuwatch *w = arg;
	queue_gpus *t = w->tmp;
	memset(t, 0, offsetof(queue_gpus, g));
	t->ok = true;
	t->n = sn->ngpu < GPU_MAX ? sn->ngpu : GPU_MAX;
	for (int i = 0; i < t->n; i++)
		copy_gpu(w, sn, i, &t->g[i]);
	for (int k = 0; k < sn->nproc; k++) {
		const tl_proc *p = &sn->procs[k];
		if (p->gpu < 0 || p->gpu >= t->n || t->g[p->gpu].nproc >= QUEUE_GPU_PROCS)
			continue;
		queue_gpu_proc *q = &t->g[p->gpu].proc[t->g[p->gpu].nproc++];
		q->pid = p->pid;
		q->mem_ok = !isnan(p->gpu_mem_mib);
		q->mem_mib = q->mem_ok ? (int64_t)p->gpu_mem_mib : 0;
	}
	t->t_mono = sn->t_mono_ns;
	t->t_wall = sn->t_wall;
	publish(w, t);
}

/* Wait until deadline (monotonic ns) or a stop; true when stopped. */
static bool wait_stop(queue_gpuwatch *w, int64_t deadline)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	int64_t left = deadline - gw_mono_ns();
	int64_t abs_ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec + (left > 0 ? left : 0);
	ts.tv_sec = abs_ns / 1000000000LL;
	ts.tv_nsec = abs_ns % 1000000000LL;
	pthread_mutex_lock(&w->mu);
	while (!w->stop && gw_mono_ns() < deadline)
		if (pthread_cond_timedwait(&w->cv, &w->mu, &ts) == ETIMEDOUT)
			break;
	bool stop = w->stop;
	pthread_mutex_unlock(&w->mu);
	return stop;
}

/* Open NVML and hand over to the sampler; without a driver, say why and try later. */
static void *opener_main(void *arg)
{
	queue_gpuwatch *w = arg;
	for (;;) {
		gw_fail fail = {0};
		gpu_open_opts o = {.gpus = w->gpus_opt[0] ? w->gpus_opt : NULL, .failure = &fail};
		if (gpu_open(&o, &w->ctx) == 0)
			break;
		w->ctx = NULL;
		char line[512];
		queue_worker_log("no GPU: %s", fail.code ? gw_fail_text(&fail, line, sizeof line)
		                                         : "NVML not available");
		queue_gpus *t = w->tmp;
		memset(t, 0, offsetof(queue_gpus, g));
		snprintf(t->err, sizeof t->err,
		         "no GPU: NVML not available (see %.100s/worker.log)", w->dir);
		t->t_mono = gw_mono_ns();
		t->t_wall = gw_wall_s();
		publish(w, t);
		if (wait_stop(w, gw_mono_ns() + REOPEN_NS))
			return NULL;
	}
	pthread_mutex_lock(&w->mu);
	sampler_opts so = {
	    .interval_ns = w->interval_ns, .gpu = w->ctx, .cb = on_snapshot, .arg = w};
	bool stop = w->stop;
	w->s = stop ? NULL : sampler_new(&so);
	/* Started under the lock: a stop waits for it and then stops it. */
	if (w->s && sampler_start(w->s) != 0)
		queue_worker_log("cannot start the GPU sampler thread");
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

queue_gpuwatch *queue_gpuwatch_start(const char *gpus_opt, const char *dir, int wake_fd,
                                     int64_t interval_ns)
{
	queue_gpuwatch *w = calloc(1, sizeof *w);
	if (!w)
		return NULL;
	snprintf(w->gpus_opt, sizeof w->gpus_opt, "%s", gpus_opt ? gpus_opt : "");
	snprintf(w->dir, sizeof w->dir, "%s", dir);
	w->wake_fd = wake_fd;
	w->interval_ns = interval_ns > 0 ? interval_ns : 1000000000LL;
	w->pub = calloc(1, sizeof *w->pub);
	w->tmp = calloc(1, sizeof *w->tmp);
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	/* These threads take no signals: they are the loop's business. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int rc = w->pub && w->tmp ? pthread_create(&w->opener, NULL, opener_main, w) : -1;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->cv);
		free(w->pub);
		free(w->tmp);
		free(w);
		return NULL;
	}
	return w;
}

bool queue_gpuwatch_take(queue_gpuwatch *w, queue_gpus *out)
{
	pthread_mutex_lock(&w->mu);
	bool fresh = w->pub->seq != out->seq;
	if (fresh)
		memcpy(out, w->pub, queue_gpus_size(w->pub));
	pthread_mutex_unlock(&w->mu);
	return fresh;
}

void queue_gpuwatch_set_interval(queue_gpuwatch *w, int64_t interval_ns)
{
	pthread_mutex_lock(&w->mu);
	if (interval_ns > 0 && interval_ns != w->interval_ns) {
		w->interval_ns = interval_ns;
		if (w->s)
			sampler_set_interval(w->s, interval_ns);
	}
	pthread_mutex_unlock(&w->mu);
}

void queue_gpuwatch_stop(queue_gpuwatch *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = true;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->opener, NULL);
	/* The opener is gone: nobody else touches w->s now. */
	sampler_free(w->s);
	gpu_close(w->ctx);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	free(w->pub);
	free(w->tmp);
	free(w);
}
