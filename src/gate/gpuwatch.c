/*
 * gpuwatch.c - the project's sampler feeding the gate's view of the GPUs:
 * each tick copies, per GPU, whether it is lost, its free memory, its
 * utilization and clock event reasons, then re-judges every upstream.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/gpuwatch.h"
#include "gate/loop.h"
#include "gate/route.h"
#include "sample/sampler.h"
#include "util/err.h"
#include "util/i18n.h"

struct gate_gpuwatch {
	gpu_ctx *ctx;
	sampler *s;
	gate_srv *g;
};

static double val(const gpu_values *v, gpu_metric_id id)
{
	return v->ok[id] ? v->v[id] : NAN;
}

static void on_tick(const snapshot *s, void *arg)
{
	gate_gpuwatch *w = arg;
	gate_srv *g = w->g;
	pthread_mutex_lock(&g->mu);
	for (int i = 0; i < s->ngpu && i < g->ngpu; i++) {
		const gpu_values *v = &s->gpu[i];
		gate_gpu *x = &g->gpu[i];
		x->valid = true;
		x->lost = v->lost || gpu_is_lost(w->ctx, i);
		x->free_mib = val(v, GM_MEM_FREE);
		x->total_mib = val(v, GM_MEM_TOTAL);
		x->util = val(v, GM_UTIL_GPU);
		x->reasons_ok = v->ok[GM_CLK_REASONS];
		x->reasons = x->reasons_ok ? (uint64_t)v->v[GM_CLK_REASONS] : 0;
	}
	gate_route_refresh(g);
	pthread_mutex_unlock(&g->mu);
	gate_loops_wake(g);
}

/* What a failure to read the GPUs names, and what to do instead. */
static const char gpus_what[] = "--upstream URL@GPU";
static const char gpus_hint[] = N_("drop @GPU to run without GPU awareness");

int gate_gpuwatch_start(gate_srv *g, gate_gpuwatch **out, gw_fail *err)
{
	*out = NULL;
	gw_fail fail = {0};
	gpu_open_opts oo = {.failure = &fail};
	gate_gpuwatch *w = calloc(1, sizeof *w);
	if (!w)
		return gw_fail_set(err, GW_EXIT_ENV, gpus_what, gpus_hint, "out of memory");
	w->g = g;
	if (gpu_open(&oo, &w->ctx) != 0) {
		/* gpu_open's own line, in English as logs take it */
		char line[512];
		free(w);
		return gw_fail_set(err, GW_EXIT_ENV, gpus_what, gpus_hint, "%s",
		                   fail.code ? gw_fail_text(&fail, line, sizeof line) : "no NVML");
	}
	int n = gpu_count(w->ctx);
	pthread_mutex_lock(&g->mu);
	g->ngpu = n < GPU_MAX ? n : GPU_MAX;
	for (int i = 0; i < g->ngpu; i++) {
		g->gpu[i].index = gpu_static_info(w->ctx, i)->index;
		g->gpu[i].free_mib = g->gpu[i].util = NAN;
	}
	g->gpu_aware = true;
	pthread_mutex_unlock(&g->mu);
	sampler_opts so = {.interval_ns = g->cfg.gpu_interval_ms * 1000000LL,
	                   .gpu = w->ctx,
	                   .cb = on_tick,
	                   .arg = w};
	w->s = sampler_new(&so);
	/* One reading before the first request, so admission never starts blind. */
	const snapshot *first = w->s ? sampler_tick(w->s) : NULL;
	if (first)
		on_tick(first, w);
	if (!w->s || sampler_start(w->s) != 0) {
		if (w->s)
			sampler_free(w->s);
		gpu_close(w->ctx);
		free(w);
		pthread_mutex_lock(&g->mu);
		g->gpu_aware = false;
		pthread_mutex_unlock(&g->mu);
		return gw_fail_set(err, GW_EXIT_ENV, gpus_what, gpus_hint,
		                   "cannot start the GPU sampler");
	}
	*out = w;
	return 0;
}

void gate_gpuwatch_stop(gate_gpuwatch *w)
{
	if (!w)
		return;
	sampler_stop(w->s);
	sampler_free(w->s);
	gpu_close(w->ctx);
	free(w);
}
