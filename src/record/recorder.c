#include "record/recorder.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sample/sampler.h"
#include "store/store.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/fail.h"
#include "util/timeutil.h"

extern char **environ;

struct recorder {
	recorder_opts o;
	store *st;
	sampler *smp;
	int gpu_index[GPU_MAX];
	pthread_mutex_t mu;
	bool failed; /* the file stopped taking writes (disk full, ...) */
	double start;
};

bool recorder_env_of_interest(const char *n)
{
	static const char *const exact[] = {
	    "CUDA_VISIBLE_DEVICES",
	    "CUDA_DEVICE_ORDER",
	    "NVIDIA_VISIBLE_DEVICES",
	    "OMP_NUM_THREADS",
	    "MKL_NUM_THREADS",
	    "PYTORCH_CUDA_ALLOC_CONF",
	    "CUDA_LAUNCH_BLOCKING",
	    "WORLD_SIZE",
	    "LOCAL_WORLD_SIZE",
	    "RANK",
	    "LOCAL_RANK",
	    "MASTER_ADDR",
	    "SLURM_JOB_ID",
	    "GPUWHY_SIM_SCENARIO",
	    "TF_FORCE_GPU_ALLOW_GROWTH",
	    "XLA_PYTHON_CLIENT_MEM_FRACTION",
	    "CUBLAS_WORKSPACE_CONFIG",
	    "HIP_VISIBLE_DEVICES",
	    "OLLAMA_NUM_GPU",
	    "TOKENIZERS_PARALLELISM",
	};
	for (size_t i = 0; i < sizeof exact / sizeof *exact; i++)
		if (!strcmp(n, exact[i]))
			return true;
	return !strncmp(n, "NCCL_", 5) || !strncmp(n, "TORCH_", 6);
}

static void record_env(store *st)
{
	for (char **e = environ; *e; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq || eq - *e > 200)
			continue;
		char name[256];
		snprintf(name, sizeof name, "%.*s", (int)(eq - *e), *e);
		if (!recorder_env_of_interest(name))
			continue;
		char key[300];
		snprintf(key, sizeof key, "env.%s", name);
		store_set_meta(st, key, eq + 1);
	}
}

static void on_snapshot(const snapshot *s, void *arg)
{
	recorder *r = arg;
	pthread_mutex_lock(&r->mu);
	bool failed = r->failed;
	pthread_mutex_unlock(&r->mu);
	if (!failed && store_write_snapshot(r->st, s, r->gpu_index) != 0) {
		/* Disk full or similar: say it once, keep the watched command running. */
		pthread_mutex_lock(&r->mu);
		r->failed = true;
		pthread_mutex_unlock(&r->mu);
		gw_error(GW_EXIT_ENV, r->o.path,
		         r->o.command ? N_("free some space; the command keeps running")
		                      : N_("free some space, or record to another disk with -o"),
		         "recording stopped: %s", _(store_error(r->st)));
		store_write_event(r->st, s->t_wall, TL_EV_RECORD_ERROR, -1, 0, store_error(r->st));
	}
	if (r->o.on_snapshot)
		r->o.on_snapshot(s, r->o.arg);
}

static void write_static(recorder *r)
{
	char host[256] = "";
	gethostname(host, sizeof host - 1);
	store_set_meta(r->st, "hostname", host);
	char v[64];
	snprintf(v, sizeof v, "%.6f", r->start);
	store_set_meta(r->st, "start", v);
	snprintf(v, sizeof v, "%.6f", (double)r->o.interval_ns / 1e9);
	store_set_meta(r->st, "interval", v);
	if (r->o.interval_ns > RECORDER_FAST_INTERVAL_NS) {
		snprintf(v, sizeof v, "%.6f", (double)RECORDER_FAST_INTERVAL_NS / 1e9);
		store_set_meta(r->st, "interval_fast", v);
		snprintf(v, sizeof v, "%.6f", (double)RECORDER_FAST_FOR_NS / 1e9);
		store_set_meta(r->st, "interval_fast_for", v);
	}
	if (r->o.command)
		store_set_meta(r->st, "command", r->o.command);
	record_env(r->st);
	gpu_ctx *g = r->o.gpu;
	int n = g ? gpu_count(g) : 0;
	snprintf(v, sizeof v, "%d", n);
	store_set_meta(r->st, "gpu_count", v);
	if (!g)
		return;
	store_set_meta(r->st, "driver", gpu_driver_version(g));
	store_set_meta(r->st, "cuda_driver_version", gpu_cuda_driver_version(g));
	store_set_meta(r->st, "nvml_library", gpu_library_path(g));
	for (int i = 0; i < n; i++) {
		const gpu_static *s = gpu_static_info(g, i);
		r->gpu_index[i] = s->index;
		store_add_gpu(r->st, s);
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			if (i != j)
				store_add_link(r->st, r->gpu_index[i], r->gpu_index[j],
				               &(store_link){.nvlinks = gpu_nvlink_count(g, i, j),
				                             .topo = gpu_topology_level(g, i, j),
				                             .xgmi = gpu_xgmi_pair(g, i, j)});
}

/* The writer's notices (lock stalls, a -wal left behind) go to stderr as one line each. */
static void print_notice(void *ctx, const gw_fail *n)
{
	(void)ctx;
	gw_fail_print(n);
}

int recorder_open(const recorder_opts *o, recorder **out)
{
	recorder *r = calloc(1, sizeof *r);
	if (!r)
		return gw_error(GW_EXIT_ENV, "memory", NULL, "out of memory");
	r->o = *o;
	pthread_mutex_init(&r->mu, NULL);
	gw_fail err = {0};
	if (store_create(o->path, &r->st, &err) != 0) {
		pthread_mutex_destroy(&r->mu);
		free(r);
		return gw_fail_print(&err);
	}
	store_set_notice(r->st, print_notice, NULL);
	r->start = gw_wall_s();
	write_static(r);
	/* From here on the file alone is a recording, before any sample. */
	store_flush(r->st);
	store_checkpoint(r->st);
	sampler_opts so = {.interval_ns = o->interval_ns,
	                   .fast_interval_ns = RECORDER_FAST_INTERVAL_NS,
	                   .fast_for_ns = RECORDER_FAST_FOR_NS,
	                   .gpu = o->gpu,
	                   .cb = on_snapshot,
	                   .arg = r,
	                   .host_top = true};
	r->smp = sampler_new(&so);
	if (!r->smp) {
		store_close(r->st);
		pthread_mutex_destroy(&r->mu);
		free(r);
		return gw_error(GW_EXIT_ENV, "sampler", NULL, "cannot start the host sampler");
	}
	*out = r;
	return 0;
}

int recorder_follow(recorder *r, int pid)
{
	char v[32];
	snprintf(v, sizeof v, "%d", pid);
	store_set_meta(r->st, "root_pid", v);
	return sampler_follow(r->smp, &pid, 1);
}

int recorder_start(recorder *r)
{
	if (r->o.gpu)
		gpu_slow_thread_start(r->o.gpu);
	return sampler_start(r->smp);
}

void recorder_step(recorder *r, long step, const char *line)
{
	pthread_mutex_lock(&r->mu);
	bool failed = r->failed;
	pthread_mutex_unlock(&r->mu);
	if (!failed)
		store_write_step(r->st, gw_wall_s(), step, line);
}

void recorder_event(recorder *r, const char *kind, int gpu_pos, long value, const char *text)
{
	pthread_mutex_lock(&r->mu);
	bool failed = r->failed;
	pthread_mutex_unlock(&r->mu);
	int gi = gpu_pos >= 0 && gpu_pos < GPU_MAX ? r->gpu_index[gpu_pos] : -1;
	if (!failed)
		store_write_event(r->st, gw_wall_s(), kind, gi, value, text);
}

long recorder_samples(const recorder *r)
{
	return store_samples(r->st);
}

int recorder_finish(recorder *r, int exit_status)
{
	return recorder_finish_stored(r, exit_status, NULL);
}

int recorder_finish_stored(recorder *r, int exit_status, long *stored)
{
	/* One more sample: the state at the watched job's exit (or the end of recording). */
	sampler_finish(r->smp);
	char v[64];
	snprintf(v, sizeof v, "%.6f", gw_wall_s());
	store_set_meta(r->st, "end", v);
	if (exit_status >= 0) {
		snprintf(v, sizeof v, "%d", exit_status);
		store_set_meta(r->st, "exit_status", v);
	}
	long ticks, late;
	sampler_stats(r->smp, &ticks, &late);
	snprintf(v, sizeof v, "%ld", late);
	store_set_meta(r->st, "late_ticks", v);
	sampler_free(r->smp);
	int rc = store_close_counted(r->st, stored);
	bool failed = r->failed;
	pthread_mutex_destroy(&r->mu);
	free(r);
	return rc || failed ? -1 : 0;
}
