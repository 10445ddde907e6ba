/*
 * gpu_sample.c - one reading of a GPU: the FAST readers run now, STATIC and
 * SLOW metrics come from a cache that open and the slow refresh (inline or
 * on its own thread) fill.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "gpu/gpu_int.h"
#include "util/timeutil.h"

void gpu_cache_store(gpu_dev *d, gpu_reader_kind kind, const gpu_values *o)
{
	pthread_mutex_lock(&d->mu);
	for (int i = 0; i < GM__COUNT; i++) {
		if (gpu_reader_kind_of(gpu_metrics[i].reader) != kind)
			continue;
		d->cache_v[i] = o->v[i];
		d->cache_ok[i] = o->ok[i];
		d->cache_why[i] = o->why[i];
	}
	pthread_mutex_unlock(&d->mu);
}

static void refresh_slow(gpu_ctx *c, gpu_dev *d)
{
	gpu_values tmp;
	memset(&tmp, 0, sizeof tmp);
	pthread_mutex_lock(&d->slow_mu);
	gpu_run_readers(c, d, RK_SLOW, &tmp);
	pthread_mutex_unlock(&d->slow_mu);
	gpu_cache_store(d, RK_SLOW, &tmp);
	pthread_mutex_lock(&d->mu);
	d->slow_t = gw_mono_ns();
	pthread_mutex_unlock(&d->mu);
}

void gpu_wait_rate_window(gpu_ctx *c)
{
	int64_t until = c->opened_ns + GPU_RATE_WINDOW_NS;
	gw_sleep_ns(until - gw_mono_ns());
	c->rate_waited = true;
}

/* Fell off the bus: identity stays, every measurement is absent. */
static void sample_lost(gpu_ctx *c, int i, gpu_values *o)
{
	gpu_dev *d = &c->dev[i];
	memset(o->ok, 0, sizeof o->ok);
	o->lost = true;
	gpu_set(o, GM_INDEX, d->st.index);
	/* The Xid that came with the loss (79: fallen off the bus) is still news. */
	gpu_read_xid(c, d, o);
	for (int k = 0; k < GM__COUNT; k++)
		if (gpu_metrics[k].fmt == GMF_STR && gpu_metric_text(c, i, (gpu_metric_id)k))
			o->ok[k] = 1;
}

int gpu_sample(gpu_ctx *c, int i, gpu_values *o)
{
	gpu_dev *d = &c->dev[i];
	memset(o, 0, sizeof *o);
	o->t_mono_ns = gw_mono_ns();
	o->t_wall = gw_wall_s();
	if (gpu_is_amd(d)) {
		/* sysfs is read whole each time: no NVML reader, cache or slow field */
		gpu_amd_sample(c, d, o);
		for (int k = 0; k < GM__COUNT; k++)
			if (gpu_metrics[k].fmt == GMF_STR)
				o->ok[k] = gpu_metric_text(c, i, (gpu_metric_id)k) != NULL;
		return 0;
	}
	if (!gpu_lost(d)) {
		gpu_run_readers(c, d, RK_FAST, o);
		bool stale;
		pthread_mutex_lock(&d->mu);
		stale = !c->slow_running &&
		        (d->slow_t == 0 || o->t_mono_ns - d->slow_t >= c->slow_period_ns);
		pthread_mutex_unlock(&d->mu);
		if (stale && !gpu_lost(d))
			refresh_slow(c, d);
	}
	if (gpu_lost(d)) {
		sample_lost(c, i, o);
		return 0;
	}
	pthread_mutex_lock(&d->mu);
	for (int k = 0; k < GM__COUNT; k++) {
		if (gpu_reader_kind_of(gpu_metrics[k].reader) == RK_FAST)
			continue;
		o->v[k] = d->cache_v[k];
		o->ok[k] = d->cache_ok[k];
		o->why[k] = d->cache_why[k];
	}
	pthread_mutex_unlock(&d->mu);
	for (int k = 0; k < GM__COUNT; k++)
		if (gpu_metrics[k].fmt == GMF_STR)
			o->ok[k] = gpu_metric_text(c, i, (gpu_metric_id)k) != NULL;
	return 0;
}

/* The start filled the cache: each round waits a period, then refreshes. */
static void *slow_main(void *arg)
{
	gpu_ctx *c = arg;
	for (;;) {
		int64_t until = gw_mono_ns() + c->slow_period_ns;
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		int64_t abs_ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec + c->slow_period_ns;
		ts.tv_sec = abs_ns / 1000000000LL;
		ts.tv_nsec = abs_ns % 1000000000LL;
		pthread_mutex_lock(&c->stop_mu);
		while (!c->stopping && gw_mono_ns() < until)
			if (pthread_cond_timedwait(&c->stop_cv, &c->stop_mu, &ts) == ETIMEDOUT)
				break;
		bool stop = c->stopping;
		pthread_mutex_unlock(&c->stop_mu);
		if (stop)
			return NULL;
		for (int k = 0; k < c->n; k++)
			if (!gpu_lost(&c->dev[k]) && !gpu_is_amd(&c->dev[k]))
				refresh_slow(c, &c->dev[k]);
	}
}

int gpu_slow_thread_start(gpu_ctx *c)
{
	if (c->slow_running)
		return 0;
	/*
	 * From now on a PCIe rate is served for a whole period, so it must span
	 * about one. The fill below gives one only to a caller that waited the
	 * rate window (a one-shot face, as nvidia-smi's first line has one);
	 * microseconds after open it gives none, and the first rate is the first
	 * periodic refresh's: absent until then, never a 0 of no interval.
	 */
	int64_t min = c->slow_period_ns / 2;
	c->pcie_min_ns = c->rate_waited ? GPU_RATE_WINDOW_NS : min;
	/* Fill the cache once first so the first fast sample has slow fields. */
	for (int k = 0; k < c->n; k++)
		if (!gpu_lost(&c->dev[k]) && !gpu_is_amd(&c->dev[k]))
			refresh_slow(c, &c->dev[k]);
	c->pcie_min_ns = min;
	if (pthread_create(&c->slow_thread, NULL, slow_main, c) != 0)
		return -1;
	c->slow_running = true;
	return 0;
}

void gpu_slow_thread_stop(gpu_ctx *c)
{
	if (!c->slow_running)
		return;
	pthread_mutex_lock(&c->stop_mu);
	c->stopping = true;
	pthread_cond_broadcast(&c->stop_cv);
	pthread_mutex_unlock(&c->stop_mu);
	pthread_join(c->slow_thread, NULL);
	c->slow_running = false;
}

int gpu_xid_take(gpu_ctx *c, int i, unsigned long long *out, int max)
{
	if (i < 0 || i >= c->n)
		return 0;
	gpu_dev *d = &c->dev[i];
	pthread_mutex_lock(&c->xid_mu);
	int n = d->nxid_new < max ? d->nxid_new : max;
	for (int k = 0; k < n; k++)
		out[k] = d->xid_new[k];
	d->nxid_new = 0;
	pthread_mutex_unlock(&c->xid_mu);
	return n;
}
