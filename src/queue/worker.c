/*
 * worker.c - `gpuwhy queue worker`: the scheduler of one queue directory.
 *
 * One worker per directory (an flock on DIR/worker.lock). Its main loop
 * sleeps in poll() on: the wake FIFO (`add`, `cancel`, `config` write a
 * byte), the sampler thread's pipe (a new GPU snapshot), and one socket per
 * running shim (EOF = the attempt ended). It never calls NVML: a sampler
 * thread reads GPU memory and processes on its own cadence and publishes a
 * snapshot. The loop wakes at least once a second.
 *
 * Placement counts memory that placed tasks reserved but have not
 * allocated yet (see place.c), so a burst of starts does not over-admit.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpu/gpu.h"
#include "host/pidbrief.h"
#include "queue/queue.h"
#include "util/err.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

extern char **environ;

#define WK_PROCS 64
#define WK_CANDIDATES 512 /* queued tasks looked at per pass */
#define WK_BATCH 64
#define WK_REASONS 64 /* wait reasons are kept for this many queued tasks */
#define LOG_TAIL_BYTES 65536

/* ---- GPU snapshot (written by the sampler thread) ---- */

typedef struct {
	unsigned pid;
	bool mem_ok;
	int64_t mem_mib;
	int owner; /* run slot, -1 foreign, -2 gone or unknown */
} wk_proc;

typedef struct {
	int index;
	char uuid[96], name[96];
	bool lost, total_ok, free_ok, procs_ok;
	int64_t total_mib, free_mib;
	int nproc;
	wk_proc proc[WK_PROCS];
} wk_gpu;

typedef struct {
	uint64_t seq;
	int64_t t_mono;
	double t_wall;
	bool ok;
	char err[200];
	int n;
	wk_gpu g[GPU_MAX];
} wk_snap;

/* ---- one running attempt ---- */

typedef struct {
	int64_t task_id;
	int n;
	char token[40];
	int shim_pid;
	uint64_t shim_start;
	int sock; /* -1 when adopted from an earlier worker */
	int ngpu;
	int gidx[GPU_MAX]; /* NVML indices */
	int64_t reserved_mib;
	int per_gpu;
	double started;
	int64_t started_mono;
	int64_t usage[GPU_MAX]; /* MiB on each of its GPUs in the last snapshot after its start */
	int64_t peak_gpu, peak_rss;
	bool dirty, cancel_sent;
	int64_t log_offset;
	int task_pgid;    /* the command's PID (= process group), 0 until the shim says */
	bool have_status; /* the shim handed over its final status (no file then) */
	queue_status status;
} wk_run;

typedef struct {
	int64_t id;
	unsigned hash;
} wk_reason;

typedef struct {
	queue_store *st;
	char dir[PATH_MAX];
	const char *self_exe;
	char gpus_opt[256];
	int fifo, lock, devnull;
	int wake_rd, wake_wr; /* sampler -> main */
	wk_run **run;
	int nrun, caprun;
	int *reap; /* shims that reported their end and are still exiting */
	int nreap, capreap;
	char boot_id[48];
	bool pidns_nested;
	/* sampler */
	pthread_t sampler;
	bool sampler_started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop_sampler;
	int64_t sample_ns;
	wk_snap *shared; /* latest, under mu */
	wk_snap *snap;   /* main thread's copy */
	uint64_t seen_seq;
	/* config */
	int per_gpu_default, max_running, cpu_slots;
	bool foreign_allow, visible_index, paused, draining;
	queue_place_mode mode;
	int64_t grace_ns, slurm_poll_ns;
	char order[256], drained[256];
	/* scheduling */
	double next_due;
	wk_reason reasons[WK_REASONS];
	queue_slurm *slurm;
	int64_t last_slurm;
} worker;

#define wlog queue_wlog

static volatile sig_atomic_t wk_stop;

static void on_stop(int sig)
{
	(void)sig;
	wk_stop = 1;
}

void queue_wlog(const char *fmt, ...)
{
	char ts[32];
	time_t t = time(NULL);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(ts, sizeof ts, "%Y-%m-%d %H:%M:%S", &tm);
	fprintf(stderr, "%s ", ts);
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

/* ---- sampler thread ---- */

static void sample_once(gpu_ctx *ctx, wk_snap *s)
{
	s->n = gpu_count(ctx);
	for (int i = 0; i < s->n; i++) {
		wk_gpu *g = &s->g[i];
		const gpu_static *st = gpu_static_info(ctx, i);
		memset(g, 0, sizeof *g);
		g->index = st->index;
		snprintf(g->uuid, sizeof g->uuid, "%s", st->uuid);
		snprintf(g->name, sizeof g->name, "%s", st->name);
		gpu_values v;
		gpu_sample(ctx, i, &v);
		g->lost = v.lost;
		g->total_ok = v.ok[GM_MEM_TOTAL];
		g->total_mib = (int64_t)v.v[GM_MEM_TOTAL];
		g->free_ok = v.ok[GM_MEM_FREE];
		g->free_mib = (int64_t)v.v[GM_MEM_FREE];
		if (g->lost)
			continue;
		gpu_proc procs[WK_PROCS];
		int np = gpu_processes(ctx, i, procs, WK_PROCS);
		g->procs_ok = np >= 0;
		for (int k = 0; k < np && k < WK_PROCS; k++) {
			g->proc[k].pid = procs[k].pid;
			g->proc[k].mem_ok = procs[k].mem_ok;
			g->proc[k].mem_mib = (int64_t)(procs[k].mem_bytes >> 20);
			g->proc[k].owner = -2;
		}
		g->nproc = np > 0 ? (np < WK_PROCS ? np : WK_PROCS) : 0;
	}
}

static void *sampler_main(void *arg)
{
	worker *w = arg;
	gpu_ctx *ctx = NULL;
	int64_t next_open = 0;
	wk_snap *tmp = calloc(1, sizeof *tmp);
	for (;;) {
		int64_t now = gw_mono_ns();
		if (!ctx && now >= next_open) {
			gpu_open_opts o = {.gpus = w->gpus_opt[0] ? w->gpus_opt : NULL};
			if (gpu_open(&o, &ctx) != 0) {
				ctx = NULL;
				next_open = now + 600000000000LL; /* the driver may come back */
			}
		}
		memset(tmp, 0, offsetof(wk_snap, g));
		if (ctx) {
			tmp->ok = true;
			sample_once(ctx, tmp);
		} else {
			snprintf(tmp->err, sizeof tmp->err,
			         "no GPU: NVML not available (see %.100s/worker.log)", w->dir);
		}
		tmp->t_mono = gw_mono_ns();
		tmp->t_wall = gw_wall_s();
		pthread_mutex_lock(&w->mu);
		tmp->seq = w->shared->seq + 1;
		memcpy(w->shared, tmp, offsetof(wk_snap, g) + (size_t)tmp->n * sizeof(wk_gpu));
		int64_t period = w->sample_ns;
		pthread_mutex_unlock(&w->mu);
		char b = 1;
		if (write(w->wake_wr, &b, 1) < 0 && errno != EAGAIN)
			break;
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		int64_t abs_ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec + period;
		ts.tv_sec = abs_ns / 1000000000LL;
		ts.tv_nsec = abs_ns % 1000000000LL;
		pthread_mutex_lock(&w->mu);
		bool stop = w->stop_sampler;
		while (!stop) {
			if (pthread_cond_timedwait(&w->cv, &w->mu, &ts) == ETIMEDOUT)
				break;
			stop = w->stop_sampler;
		}
		stop = w->stop_sampler;
		pthread_mutex_unlock(&w->mu);
		if (stop)
			break;
	}
	free(tmp);
	gpu_close(ctx);
	return NULL;
}

static int sampler_start(worker *w)
{
	/* The sampler takes no signals: they are the main loop's business. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int rc = pthread_create(&w->sampler, NULL, sampler_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	w->sampler_started = rc == 0;
	return rc;
}

static void sampler_stop(worker *w)
{
	if (!w->sampler_started)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop_sampler = true;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->sampler, NULL);
	w->sampler_started = false;
}

/* ---- configuration ---- */

static void load_config(worker *w)
{
	char v[256];
	queue_store *st = w->st;
	w->per_gpu_default = (int)queue_store_config_int(st, "per-gpu");
	if (w->per_gpu_default < 1)
		w->per_gpu_default = 1;
	w->max_running = (int)queue_store_config_int(st, "max-running");
	w->cpu_slots = (int)queue_store_config_int(st, "cpu-slots");
	if (w->cpu_slots <= 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		w->cpu_slots = n > 0 ? (int)n : 1;
	}
	queue_store_config_get(st, "foreign", v, sizeof v);
	w->foreign_allow = !strcmp(v, "allow");
	queue_store_config_get(st, "place", v, sizeof v);
	w->mode = !strcmp(v, "pack") ? QP_PACK : QP_SPREAD;
	queue_store_config_get(st, "visible", v, sizeof v);
	w->visible_index = !strcmp(v, "index");
	w->paused = queue_store_config_int(st, "paused") != 0;
	w->draining = queue_store_config_int(st, "draining") != 0;
	w->grace_ns = queue_store_config_int(st, "kill-grace");
	w->slurm_poll_ns = queue_store_config_int(st, "slurm-poll");
	queue_store_config_get(st, "gpus", w->order, sizeof w->order);
	queue_store_config_get(st, "drained-gpus", w->drained, sizeof w->drained);
	int64_t sample = queue_store_config_int(st, "sample-interval");
	pthread_mutex_lock(&w->mu);
	if (sample > 0 && sample != w->sample_ns) {
		w->sample_ns = sample;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
}

/* Does a list entry ("2", "GPU-8f2a", "8f2a") name GPU g? */
static bool gpu_matches(const wk_gpu *g, const char *tok)
{
	if (!*tok)
		return false;
	bool digits = true;
	for (const char *p = tok; *p; p++)
		digits &= *p >= '0' && *p <= '9';
	if (digits)
		return atoi(tok) == g->index;
	const char *u = g->uuid;
	if (!strncasecmp(u, "GPU-", 4) && strncasecmp(tok, "GPU-", 4))
		u += 4;
	return !strncasecmp(u, tok, strlen(tok));
}

static bool in_list(const wk_gpu *g, const char *list)
{
	char copy[256], *save = NULL;
	snprintf(copy, sizeof copy, "%s", list);
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
		if (gpu_matches(g, t))
			return true;
	return false;
}

/* Snapshot positions in preference order; returns how many are in the subset. */
static int gpu_order(const worker *w, int *pos)
{
	const wk_snap *s = w->snap;
	int n = 0;
	if (!w->order[0]) {
		for (int i = 0; i < s->n; i++)
			pos[n++] = i;
		return n;
	}
	char copy[256], *save = NULL;
	snprintf(copy, sizeof copy, "%s", w->order);
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
		for (int i = 0; i < s->n; i++) {
			bool dup = false;
			for (int k = 0; k < n; k++)
				dup |= pos[k] == i;
			if (!dup && gpu_matches(&s->g[i], t))
				pos[n++] = i;
		}
	return n;
}

/* ---- attribution of GPU processes to tasks ---- */

/*
 * Slurm jobs running on this machine: their processes carry the attempt's
 * token in their environment, so their GPU memory can be recorded too. They
 * stay "foreign" for local placement: they use the GPU and reserved nothing.
 */
static void slurm_peaks(worker *w)
{
	if (!w->slurm || queue_slurm_active(w->slurm) == 0 || w->pidns_nested)
		return;
	queue_attempt *act;
	int n;
	if (queue_store_active(w->st, QB_SLURM, &act, &n) != 0)
		return;
	const wk_snap *s = w->snap;
	for (int a = 0; a < n; a++) {
		int64_t best = -1;
		for (int i = 0; i < s->n; i++) {
			int64_t on_gpu = 0;
			bool seen = false;
			for (int k = 0; k < s->g[i].nproc; k++) {
				const wk_proc *p = &s->g[i].proc[k];
				if (p->owner != -1 || !p->mem_ok ||
				    !queue_proc_has_env((int)p->pid, "GPUWHY_ATTEMPT_TOKEN",
				                        act[a].token))
					continue;
				on_gpu += p->mem_mib;
				seen = true;
			}
			if (seen && on_gpu > best)
				best = on_gpu;
		}
		if (best > act[a].peak_gpu_mib)
			queue_store_peaks(w->st, act[a].task_id, act[a].n, best,
			                  act[a].peak_rss_kib);
	}
	free(act);
}

static void attribute(worker *w)
{
	wk_snap *s = w->snap;
	for (int r = 0; r < w->nrun; r++)
		for (int k = 0; k < w->run[r]->ngpu; k++)
			w->run[r]->usage[k] = 0;
	for (int i = 0; i < s->n; i++) {
		wk_gpu *g = &s->g[i];
		for (int k = 0; k < g->nproc; k++) {
			wk_proc *p = &g->proc[k];
			p->owner = -2;
			queue_proc_stat ps;
			if (w->pidns_nested || !queue_proc_read((int)p->pid, &ps))
				continue;
			p->owner = -1;
			for (int r = 0; r < w->nrun; r++)
				if (ps.session == w->run[r]->shim_pid)
					p->owner = r;
			if (p->owner < 0 || !p->mem_ok)
				continue;
			wk_run *run = w->run[p->owner];
			for (int j = 0; j < run->ngpu; j++)
				if (run->gidx[j] == g->index)
					run->usage[j] += p->mem_mib;
		}
	}
	for (int r = 0; r < w->nrun; r++) {
		wk_run *run = w->run[r];
		for (int j = 0; j < run->ngpu; j++)
			if (run->usage[j] > 0 && run->usage[j] > run->peak_gpu) {
				run->peak_gpu = run->usage[j];
				run->dirty = true;
			}
	}
	slurm_peaks(w);
}

static void sample_rss(worker *w)
{
	if (w->nrun <= 0)
		return;
	size_t n = (size_t)(unsigned)w->nrun;
	int *sids = malloc(n * sizeof *sids);
	int64_t *rss = malloc(n * sizeof *rss);
	for (int r = 0; r < w->nrun; r++)
		sids[r] = w->run[r]->shim_pid;
	queue_sessions_rss_kib(sids, w->nrun, rss);
	for (int r = 0; r < w->nrun; r++)
		if (rss[r] > 0 && rss[r] > w->run[r]->peak_rss) {
			w->run[r]->peak_rss = rss[r];
			w->run[r]->dirty = true;
		}
	free(sids);
	free(rss);
}

static void flush_peaks(worker *w)
{
	for (int r = 0; r < w->nrun; r++) {
		wk_run *run = w->run[r];
		if (!run->dirty)
			continue;
		queue_store_peaks(w->st, run->task_id, run->n, run->peak_gpu, run->peak_rss);
		run->dirty = false;
	}
}

/* ---- the scheduler's view ---- */

/* Fill views (preference order) from the snapshot and the running attempts. */
static int build_views(worker *w, queue_gpu_view *v, int *pos)
{
	const wk_snap *s = w->snap;
	int n = gpu_order(w, pos);
	for (int k = 0; k < n; k++) {
		const wk_gpu *g = &s->g[pos[k]];
		queue_gpu_view *x = &v[k];
		memset(x, 0, sizeof *x);
		x->index = g->index;
		x->usable = !g->lost;
		x->drained = in_list(g, w->drained);
		x->total_ok = g->total_ok;
		x->total_mib = g->total_mib;
		x->free_ok = g->free_ok;
		x->free_mib = g->free_mib;
		for (int p = 0; p < g->nproc; p++)
			if (g->proc[p].owner == -1)
				x->foreign++;
		for (int r = 0; r < w->nrun; r++) {
			const wk_run *run = w->run[r];
			for (int j = 0; j < run->ngpu; j++) {
				if (run->gidx[j] != g->index)
					continue;
				x->ntasks++;
				if (x->cap == 0 || run->per_gpu < x->cap)
					x->cap = run->per_gpu;
				if (run->reserved_mib < 0)
					continue;
				x->reserved_mib += run->reserved_mib;
				/* A task that started after the snapshot has allocated nothing in
				 * it. */
				int64_t used = run->started_mono < s->t_mono ? run->usage[j] : 0;
				if (run->reserved_mib > used)
					x->pending_mib += run->reserved_mib - used;
			}
		}
	}
	return n;
}

static void publish_view(worker *w)
{
	const wk_snap *s = w->snap;
	queue_gpu_view v[GPU_MAX];
	int pos[GPU_MAX];
	int n = s->ok ? build_views(w, v, pos) : 0;
	queue_gpu_row rows[GPU_MAX];
	int nr = 0;
	for (int k = 0; k < n; k++) {
		queue_gpu_row *r = &rows[nr++];
		const wk_gpu *g = &s->g[pos[k]];
		memset(r, 0, sizeof *r);
		r->index = g->index;
		snprintf(r->uuid, sizeof r->uuid, "%s", g->uuid);
		snprintf(r->name, sizeof r->name, "%s", g->name);
		r->total_mib = g->total_ok ? g->total_mib : -1;
		r->free_mib = g->free_ok ? g->free_mib : -1;
		r->pending_mib = v[k].pending_mib;
		int64_t a = queue_gpu_available(&v[k]);
		r->avail_mib = g->free_ok || g->total_ok ? a : INT64_MIN;
		r->ntasks = v[k].ntasks;
		r->cap = v[k].cap;
		r->foreign = v[k].foreign;
		snprintf(r->state, sizeof r->state, "%s",
		         g->lost        ? "lost"
		         : v[k].drained ? "drained"
		                        : "ok");
		size_t used = 0;
		for (int i = 0; i < w->nrun; i++)
			for (int j = 0; j < w->run[i]->ngpu; j++)
				if (w->run[i]->gidx[j] == g->index && used + 24 < sizeof r->tasks)
					used += (size_t)snprintf(
					    r->tasks + used, sizeof r->tasks - used, "%s%lld",
					    used ? "," : "", (long long)w->run[i]->task_id);
	}
	/* GPUs outside the configured subset are listed too, so `queue gpus` explains them. */
	for (int i = 0; i < s->n; i++) {
		bool in = false;
		for (int k = 0; k < n; k++)
			in |= pos[k] == i;
		if (in)
			continue;
		queue_gpu_row *r = &rows[nr++];
		memset(r, 0, sizeof *r);
		r->index = s->g[i].index;
		snprintf(r->uuid, sizeof r->uuid, "%s", s->g[i].uuid);
		snprintf(r->name, sizeof r->name, "%s", s->g[i].name);
		r->total_mib = s->g[i].total_ok ? s->g[i].total_mib : -1;
		r->free_mib = s->g[i].free_ok ? s->g[i].free_mib : -1;
		r->pending_mib = -1;
		r->avail_mib = INT64_MIN;
		snprintf(r->state, sizeof r->state, "excluded");
	}
	queue_store_gpu_view_put(w->st, rows, nr, s->t_wall);
}

static int64_t largest_gpu(const worker *w)
{
	int64_t m = -1;
	for (int i = 0; i < w->snap->n; i++)
		if (w->snap->g[i].total_ok && w->snap->g[i].total_mib > m)
			m = w->snap->g[i].total_mib;
	return m;
}

/* ---- concluding an attempt ---- */

char *queue_read_tail(const char *path, int64_t offset, size_t max, size_t *len)
{
	*len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat stt;
	if (fstat(fd, &stt) != 0) {
		close(fd);
		return NULL;
	}
	int64_t size = stt.st_size;
	int64_t from = offset > 0 ? offset : 0;
	if (size - from > (int64_t)max)
		from = size - (int64_t)max;
	if (from > size)
		from = size;
	size_t want = (size_t)(size - from);
	char *buf = malloc(want + 1);
	size_t got = 0;
	while (got < want) {
		ssize_t n = pread(fd, buf + got, want - got, from + (off_t)got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	*len = got;
	return buf;
}

static void iso_time(double t, char *out, size_t len)
{
	time_t s = (time_t)t;
	struct tm tm;
	gmtime_r(&s, &tm);
	strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void queue_write_record(queue_store *st, int64_t id)
{
	queue_task t;
	if (queue_store_get(st, id, &t) != 0)
		return;
	if (!t.spec.record_file) {
		queue_task_free(&t);
		return;
	}
	json_t *o = json_object();
	json_object_set_new(o, "id", json_integer(t.id));
	json_object_set_new(o, "name", json_string(t.spec.name));
	char *cmd = queue_argv_to_shell(t.spec.argv, t.spec.argc);
	json_object_set_new(o, "command", json_string(cmd));
	free(cmd);
	json_object_set_new(o, "input", t.spec.input ? json_string(t.spec.input) : json_null());
	json_object_set_new(o, "output", t.spec.output ? json_string(t.spec.output) : json_null());
	json_object_set_new(o, "state", json_string(queue_state_name(t.state)));
	json_object_set_new(o, "attempts", json_integer(t.attempts));
	char ts[40];
	iso_time(t.started, ts, sizeof ts);
	json_object_set_new(o, "start", t.started > 0 ? json_string(ts) : json_null());
	iso_time(t.ended, ts, sizeof ts);
	json_object_set_new(o, "end", t.ended > 0 ? json_string(ts) : json_null());
	json_object_set_new(o, "exit_code", t.exit_ok ? json_integer(t.exit_code) : json_null());
	json_object_set_new(o, "signal", t.signal ? json_integer(t.signal) : json_null());
	json_object_set_new(o, "gpus", json_string(t.gpus_used));
	json_object_set_new(o, "peak_gpu_mib",
	                    t.peak_gpu_mib >= 0 ? json_integer(t.peak_gpu_mib) : json_null());
	json_object_set_new(o, "peak_rss_kib",
	                    t.peak_rss_kib >= 0 ? json_integer(t.peak_rss_kib) : json_null());
	json_object_set_new(o, "error", t.error[0] ? json_string(t.error) : json_null());
	char *line = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	/* One write with O_APPEND: lines from concurrent writers do not interleave. */
	int fd = open(t.spec.record_file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		size_t l = strlen(line);
		line[l] = '\n';
		if (write(fd, line, l + 1) < 0)
			wlog("task %lld: cannot write %s: %s", (long long)id, t.spec.record_file,
			     strerror(errno));
		line[l] = '\0';
		close(fd);
	} else {
		wlog("task %lld: cannot open %s: %s", (long long)id, t.spec.record_file,
		     strerror(errno));
	}
	free(line);
	queue_task_free(&t);
}

int queue_attempt_conclude(queue_store *st, queue_attempt *a, int64_t largest_gpu_mib)
{
	queue_task t;
	if (queue_store_get(st, a->task_id, &t) != 0)
		return -1;
	queue_oom_info oom = {.kind = QOOM_NONE, .tried_mib = -1};
	if (a->outcome == QO_FAILED || a->outcome == QO_LOST) {
		char path[PATH_MAX];
		queue_log_path(queue_store_dir(st), a->task_id, path, sizeof path);
		size_t len;
		char *tail = queue_read_tail(path, a->log_offset, LOG_TAIL_BYTES, &len);
		if (tail)
			queue_oom_scan(tail, len, &oom);
		free(tail);
		if (a->oom == QOOM_NONE)
			a->oom = oom.kind;
		if (oom.kind != QOOM_NONE) {
			size_t used = strlen(a->error);
			snprintf(a->error + used, sizeof a->error - used, "%s%s", used ? "; " : "",
			         oom.line);
		}
	}
	queue_retry_in in = {
	    .outcome = a->outcome,
	    .exit_ok = a->exit_ok,
	    .exit_code = a->exit_code,
	    .signal = a->signal,
	    .oom = a->oom,
	    .tried_mib = oom.tried_mib,
	    .attempts_used = t.attempts - t.budget_from,
	    .retries = t.spec.retries,
	    .retry_delay_ms = t.spec.retry_delay_ms,
	    .mem_mib = a->reserved_mib,
	    .peak_gpu_mib = a->peak_gpu_mib,
	    .largest_gpu_mib = largest_gpu_mib,
	    .per_gpu = a->per_gpu > 0 ? a->per_gpu : 1,
	};
	queue_retry_out d;
	queue_retry_decide(&in, &d);
	if (t.cancel_requested && d.next == QS_QUEUED) {
		d.next = QS_CANCELLED;
		snprintf(d.why, sizeof d.why, "cancelled");
	}
	if (a->error[0] && d.next != QS_DONE) {
		/* Keep the attempt's own words (exec error, OOM line) next to the policy's. */
		char why[sizeof d.why];
		snprintf(why, sizeof why, "%s", d.why);
		snprintf(d.why, sizeof d.why, "%.250s (%.250s)", why, a->error);
	}
	int rc = queue_store_finish(st, a, &d, a->peak_gpu_mib, a->peak_rss_kib);
	bool record = queue_state_final(d.next) && t.spec.record_file;
	queue_task_free(&t);
	if (rc)
		return -1;
	if (record)
		queue_write_record(st, a->task_id);
	return (int)d.next;
}

/* ---- running attempts ---- */

static void run_add(worker *w, wk_run *r)
{
	if (w->nrun == w->caprun) {
		w->caprun = w->caprun ? w->caprun * 2 : 16;
		w->run = gw_xrealloc(w->run, (size_t)w->caprun * sizeof *w->run);
	}
	w->run[w->nrun++] = r;
}

static void run_remove(worker *w, int i)
{
	if (w->run[i]->sock >= 0)
		close(w->run[i]->sock);
	free(w->run[i]);
	w->run[i] = w->run[--w->nrun];
}

static void parse_gidx(const char *list, wk_run *r)
{
	r->ngpu = 0;
	char copy[256], *save = NULL;
	snprintf(copy, sizeof copy, "%s", list);
	for (char *t = strtok_r(copy, ",", &save); t && r->ngpu < GPU_MAX;
	     t = strtok_r(NULL, ",", &save))
		r->gidx[r->ngpu++] = atoi(t);
}

/* The process group of the attempt with this token, found by its environment; 0 none. */
static int token_pgid(const char *token)
{
	DIR *d = opendir("/proc");
	if (!d)
		return 0;
	int pg = 0;
	struct dirent *e;
	while (!pg && (e = readdir(d))) {
		int pid = atoi(e->d_name);
		queue_proc_stat ps;
		if (pid > 0 && queue_proc_has_env(pid, "GPUWHY_ATTEMPT_TOKEN", token) &&
		    queue_proc_read(pid, &ps))
			pg = ps.pgrp;
	}
	closedir(d);
	return pg;
}

/* The shim ended: conclude the attempt from the status it handed over (given) or
 * from its status file. Returns 0 once recorded. */
static int finish_local(worker *w, queue_attempt *a, int task_pgid_hint, const queue_status *given)
{
	char path[PATH_MAX];
	queue_status_path(w->dir, a->task_id, a->n, path, sizeof path);
	queue_status s;
	if (given)
		s = *given;
	else
		queue_status_read(path, &s);
	a->ended = s.ended > 0 ? s.ended : gw_wall_s();
	if (s.started > 0)
		a->started = s.started;
	a->task_pgid = s.task_pid ? s.task_pid : task_pgid_hint;
	if (s.not_started) {
		a->outcome = s.cancelled ? QO_CANCELLED : QO_NOT_STARTED;
		if (s.cancelled)
			snprintf(a->error, sizeof a->error, "cancelled before it started");
	} else if (!s.complete) {
		a->outcome = QO_LOST;
		snprintf(a->error, sizeof a->error,
		         "its shim (pid %d) ended without recording how the command ended",
		         a->shim_pid);
		/* A command still running without its shim must not run beside a retry. */
		int pg = a->task_pgid > 0 ? a->task_pgid : token_pgid(a->token);
		if (pg > 0 && kill(-pg, 0) == 0 &&
		    queue_proc_has_env(pg, "GPUWHY_ATTEMPT_TOKEN", a->token)) {
			kill(-pg, SIGKILL);
			size_t l = strlen(a->error);
			snprintf(a->error + l, sizeof a->error - l,
			         "; its orphaned process group %d was killed", pg);
		}
	} else {
		a->exit_ok = s.exit_ok;
		a->exit_code = s.exit_code;
		a->signal = s.signal;
		if (s.timed_out)
			a->outcome = QO_TIMEOUT;
		else if (s.cancelled)
			a->outcome = QO_CANCELLED;
		else if (s.exit_ok && s.exit_code == 0 && !s.signal)
			a->outcome = QO_DONE;
		else
			a->outcome = QO_FAILED;
		if (s.exec_errno)
			snprintf(a->error, sizeof a->error, "cannot run the command: %s",
			         strerror(s.exec_errno));
		if (s.maxrss_kib > a->peak_rss_kib)
			a->peak_rss_kib = s.maxrss_kib;
	}
	int next = queue_attempt_conclude(w->st, a, largest_gpu(w));
	if (next >= 0) {
		char how[64];
		if (a->outcome == QO_DONE || a->outcome == QO_FAILED)
			snprintf(how, sizeof how, a->signal ? "signal %d" : "exit %d",
			         a->signal ? a->signal : a->exit_code);
		else
			snprintf(how, sizeof how, "%s", queue_outcome_name(a->outcome));
		wlog("task %lld attempt %d ended: %s -> %s", (long long)a->task_id, a->n, how,
		     queue_state_name((queue_state)next));
		if (!given)
			unlink(path);
	}
	return next >= 0 ? 0 : -1;
}

/* Conclude an ended attempt that is no longer in w->run; frees r. */
static void finish_run(worker *w, wk_run *r)
{
	if (r->sock >= 0) {
		/* It said it ended: it may still be exiting; reaped later then. */
		int st;
		pid_t got;
		while ((got = waitpid(r->shim_pid, &st, WNOHANG)) < 0 && errno == EINTR)
			;
		if (got == 0) {
			if (w->nreap == w->capreap) {
				w->capreap = w->capreap ? w->capreap * 2 : 8;
				w->reap =
				    gw_xrealloc(w->reap, (size_t)w->capreap * sizeof *w->reap);
			}
			w->reap[w->nreap++] = r->shim_pid;
		}
	}
	/* Everything the record needs is in memory: no read before the write. */
	queue_attempt a;
	memset(&a, 0, sizeof a);
	a.task_id = r->task_id;
	a.n = r->n;
	snprintf(a.token, sizeof a.token, "%s", r->token);
	a.backend = QB_LOCAL;
	a.astate = QA_RUNNING;
	a.shim_pid = r->shim_pid;
	a.shim_start = r->shim_start;
	size_t used = 0;
	for (int k = 0; k < r->ngpu; k++)
		used += (size_t)snprintf(a.gpu_idx + used, sizeof a.gpu_idx - used, "%s%d",
		                         k ? "," : "", r->gidx[k]);
	a.reserved_mib = r->reserved_mib;
	a.per_gpu = r->per_gpu;
	a.started = r->started;
	a.peak_gpu_mib = r->peak_gpu;
	a.peak_rss_kib = r->peak_rss;
	a.log_offset = r->log_offset;
	if (finish_local(w, &a, r->task_pgid, r->have_status ? &r->status : NULL) == 0 &&
	    r->have_status) {
		char k = QUEUE_SHIM_RECORDED;
		if (send(r->sock, &k, 1, MSG_NOSIGNAL) != 1) {
			/* It went meanwhile: its status file, if any, is then left over. */
		}
	}
	if (r->sock >= 0)
		close(r->sock);
	free(r);
}

static bool overridden(char *const *extra, int nextra, const char *kv, size_t klen)
{
	for (int i = 0; i < nextra; i++)
		if (!strncmp(extra[i], kv, klen) && extra[i][klen] == '=')
			return true;
	return false;
}

static char **build_env(const char *env_json, char *const *extra, int nextra)
{
	json_t *obj = env_json ? json_loads(env_json, 0, NULL) : NULL;
	size_t cap = (obj ? json_object_size(obj) : 0) + (size_t)nextra + 1;
	if (!obj)
		for (char **e = environ; *e; e++)
			cap++;
	char **env = calloc(cap, sizeof *env);
	size_t n = 0;
	/* Our variables win over captured ones of the same name. */
#define OVERRIDDEN(kv, klen) overridden(extra, nextra, kv, klen)
	if (obj) {
		const char *k;
		json_t *v;
		json_object_foreach(obj, k, v)
		{
			size_t kl = strlen(k);
			if (!json_is_string(v) || OVERRIDDEN(k, kl))
				continue;
			size_t len = kl + 1 + strlen(json_string_value(v)) + 1;
			env[n] = malloc(len);
			snprintf(env[n++], len, "%s=%s", k, json_string_value(v));
		}
		json_decref(obj);
	} else {
		for (char **e = environ; *e; e++) {
			const char *eq = strchr(*e, '=');
			if (!eq || OVERRIDDEN(*e, (size_t)(eq - *e)))
				continue;
			env[n++] = strdup(*e);
		}
	}
#undef OVERRIDDEN
	for (int i = 0; i < nextra; i++)
		env[n++] = strdup(extra[i]);
	env[n] = NULL;
	return env;
}

static void free_vec(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

/*
 * The shim, in a child of this process. fork without exec: starting the program
 * again (loading its libraries, relocating them) cost more than the rest of a
 * task's start together. Only this thread exists in the child, and it takes no
 * lock another thread of ours could have held (glibc resets malloc and stdio for
 * the child); it keeps exactly stdin from /dev/null, the socket as fd 3 and our
 * stdout/stderr, and nothing of the worker's state but what o names.
 */
static void shim_child(worker *w, int sock, queue_shim_opts *o, char **envp)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGUSR1, SIGCHLD};
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
		sigaction(sigs[i], &dfl, NULL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* Out of the way first, so that no dup2 below overwrites the other. */
	int hs = fcntl(sock, F_DUPFD, 100),
	    hl = o->log_fd >= 0 ? fcntl(o->log_fd, F_DUPFD, 100) : -1;
	if (hs < 0 || dup2(w->devnull, 0) < 0 || dup2(hs, 3) < 0 || (hl >= 0 && dup2(hl, 4) < 0))
		_exit(127);
	close_range(hl >= 0 ? 5 : 4, ~0U, 0);
	o->sock = 3;
	o->log_fd = hl >= 0 ? 4 : -1;
	prctl(PR_SET_NAME, "gpuwhy-shim");
	environ = envp;
	_exit(queue_shim_run(o));
}

/* Start the shim; returns its PID and our end of the socket, or -1 (errno set). */
static int spawn_shim(worker *w, queue_shim_opts *o, char **envp, int *sock_out)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0)
		shim_child(w, sv[1], o, envp);
	int err = errno;
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		errno = err;
		return -1;
	}
	*sock_out = sv[0];
	return pid;
}

static void join_gpus(const worker *w, const int *pick, int n, char *idx, size_t idxlen,
                      char *uuids, size_t uulen, char *visible, size_t vislen)
{
	size_t a = 0, b = 0, c = 0;
	idx[0] = uuids[0] = visible[0] = '\0';
	for (int k = 0; k < n; k++) {
		const wk_gpu *g = &w->snap->g[pick[k]];
		a += (size_t)snprintf(idx + a, a < idxlen ? idxlen - a : 0, "%s%d", k ? "," : "",
		                      g->index);
		b += (size_t)snprintf(uuids + b, b < uulen ? uulen - b : 0, "%s%s", k ? "," : "",
		                      g->uuid);
		if (w->visible_index || !g->uuid[0])
			c += (size_t)snprintf(visible + c, c < vislen ? vislen - c : 0, "%s%d",
			                      k ? "," : "", g->index);
		else
			c += (size_t)snprintf(visible + c, c < vislen ? vislen - c : 0, "%s%s",
			                      k ? "," : "", g->uuid);
	}
}

/* Start an attempt of task c on the snapshot positions pick[0..n). */
static void start_task(worker *w, const queue_candidate *c, int per_gpu, const int *pick, int n)
{
	queue_task t;
	if (queue_store_get(w->st, c->id, &t) != 0)
		return;
	queue_attempt a;
	memset(&a, 0, sizeof a);
	a.task_id = c->id;
	a.backend = QB_LOCAL;
	queue_new_token(a.token, sizeof a.token);
	snprintf(a.boot_id, sizeof a.boot_id, "%s", w->boot_id);
	char visible[GPU_MAX * 100];
	join_gpus(w, pick, n, a.gpu_idx, sizeof a.gpu_idx, a.gpu_uuids, sizeof a.gpu_uuids, visible,
	          sizeof visible);
	a.reserved_mib = c->mem_mib;
	a.per_gpu = per_gpu;
	a.started = gw_wall_s();
	char logp[PATH_MAX], statp[PATH_MAX];
	queue_log_path(w->dir, c->id, logp, sizeof logp);
	int logfd = open(logp, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	struct stat stt;
	a.log_offset = logfd >= 0 && fstat(logfd, &stt) == 0 ? stt.st_size : 0;
	int rc = queue_store_begin_attempt(w->st, &a, QS_RUNNING);
	if (rc != 0) {
		if (logfd >= 0)
			close(logfd);
		queue_task_free(&t);
		return;
	}
	/* Attempt numbers are never reused, so no status file of an earlier run is there. */
	queue_status_path(w->dir, c->id, a.n, statp, sizeof statp);
	if (logfd >= 0) {
		char ts[32], head[1024];
		time_t now = (time_t)a.started;
		struct tm tm;
		localtime_r(&now, &tm);
		strftime(ts, sizeof ts, "%Y-%m-%d %H:%M:%S", &tm);
		int hl =
		    snprintf(head, sizeof head,
		             "=== gpuwhy task %lld attempt %d token %s start %s GPUs %s"
		             " CUDA_VISIBLE_DEVICES=%s ===\n",
		             (long long)c->id, a.n, a.token, ts, n ? a.gpu_idx : "none", visible);
		if (write(logfd, head, (size_t)hl < sizeof head ? (size_t)hl : sizeof head - 1) < 0)
			wlog("task %lld: cannot write its log: %s", (long long)c->id,
			     strerror(errno));
	}

	char e_vis[GPU_MAX * 100 + 32], e_id[64], e_att[64], e_tok[80], e_q[PATH_MAX + 16],
	    e_gpus[300];
	snprintf(e_vis, sizeof e_vis, "CUDA_VISIBLE_DEVICES=%s", visible);
	snprintf(e_id, sizeof e_id, "GPUWHY_TASK_ID=%lld", (long long)c->id);
	snprintf(e_att, sizeof e_att, "GPUWHY_ATTEMPT=%d", a.n);
	snprintf(e_tok, sizeof e_tok, "GPUWHY_ATTEMPT_TOKEN=%s", a.token);
	snprintf(e_q, sizeof e_q, "GPUWHY_QUEUE=%s", w->dir);
	snprintf(e_gpus, sizeof e_gpus, "GPUWHY_TASK_GPUS=%s", a.gpu_idx);
	char *extra[] = {e_vis, "CUDA_DEVICE_ORDER=PCI_BUS_ID", e_id, e_att, e_tok, e_q, e_gpus};
	char **envp = build_env(t.spec.env_json, extra, (int)(sizeof extra / sizeof *extra));

	queue_shim_opts so = {.status = statp,
	                      .log = logp,
	                      .log_fd = logfd,
	                      .cwd = t.spec.cwd ? t.spec.cwd : "/",
	                      .timeout_ns = t.spec.timeout_ms * 1000000,
	                      .grace_ns = w->grace_ns,
	                      .argv = t.spec.argv};
	int sock = -1;
	int pid = spawn_shim(w, &so, envp, &sock);
	if (logfd >= 0)
		close(logfd);
	free_vec(envp);
	queue_task_free(&t);
	if (pid < 0) {
		wlog("task %lld: cannot start its shim: %s", (long long)c->id, strerror(errno));
		a.outcome = QO_FAILED;
		a.ended = gw_wall_s();
		snprintf(a.error, sizeof a.error, "cannot start: %s", strerror(errno));
		a.peak_gpu_mib = a.peak_rss_kib = -1;
		queue_attempt_conclude(w->st, &a, largest_gpu(w));
		return;
	}
	queue_proc_stat ps;
	a.shim_pid = pid;
	a.shim_start = queue_proc_read(pid, &ps) ? ps.starttime : 0;
	bool cancel = false;
	char go = 'g';
	if (queue_store_attempt_running(w->st, &a, &cancel) != 0)
		go = 'n'; /* unrecorded: it must not run (queued again once the shim is gone) */
	else if (cancel)
		go = 'x';
	if (send(sock, &go, 1, MSG_NOSIGNAL) != 1)
		wlog("task %lld: its shim did not take the go-ahead", (long long)c->id);
	wk_run *r = calloc(1, sizeof *r);
	r->task_id = c->id;
	r->n = a.n;
	snprintf(r->token, sizeof r->token, "%s", a.token);
	r->shim_pid = pid;
	r->shim_start = a.shim_start;
	r->sock = sock;
	r->ngpu = n;
	for (int k = 0; k < n; k++)
		r->gidx[k] = w->snap->g[pick[k]].index;
	r->reserved_mib = c->mem_mib;
	r->per_gpu = per_gpu;
	r->started = a.started;
	r->started_mono = gw_mono_ns();
	r->peak_gpu = r->peak_rss = -1;
	r->log_offset = a.log_offset;
	run_add(w, r);
	wlog("task %lld attempt %d started on GPU %s (shim pid %d)", (long long)c->id, a.n,
	     n ? a.gpu_idx : "none", pid);
}

/* ---- scheduling ---- */

static unsigned hash_str(const char *s)
{
	unsigned h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* Store a waiting task's reason, only when it changed (they are shown by `queue ls`). */
static void set_reason(worker *w, int64_t id, const char *reason, int *budget)
{
	unsigned h = hash_str(reason);
	wk_reason *slot = &w->reasons[(uint64_t)id % WK_REASONS];
	if (slot->id == id && slot->hash == h)
		return;
	if (*budget <= 0)
		return;
	(*budget)--;
	slot->id = id;
	slot->hash = h;
	queue_store_wait_reason(w->st, id, reason);
}

static int running_cpu_tasks(const worker *w)
{
	int n = 0;
	for (int r = 0; r < w->nrun; r++)
		n += w->run[r]->ngpu == 0;
	return n;
}

/* Could anything more start at all? (No: stop reading candidates.) */
static bool room(const worker *w, const queue_gpu_view *v, int nv, int cpu_running)
{
	if (w->max_running > 0 && w->nrun >= w->max_running)
		return false;
	if (cpu_running < w->cpu_slots)
		return true;
	for (int k = 0; k < nv; k++)
		if (v[k].usable && !v[k].drained && (v[k].cap == 0 || v[k].ntasks < v[k].cap))
			return true;
	return false;
}

/* One pass over the queued tasks. quick (a pass for new tasks only): nothing at all
 * when no slot is free; the wait reasons of new tasks come with the next full pass. */
static void schedule(worker *w, bool quick)
{
	if (w->paused || w->draining)
		return;
	if (w->max_running > 0 && w->nrun >= w->max_running)
		return;
	queue_gpu_view view[GPU_MAX];
	int pos[GPU_MAX];
	int nv = w->snap->ok ? build_views(w, view, pos) : 0;
	int cpu_running = running_cpu_tasks(w);
	if (quick && !room(w, view, nv, cpu_running))
		return;
	queue_candidate cand[WK_BATCH];
	int64_t last = 0;
	int nc = queue_store_candidates(w->st, QB_LOCAL, last, cand, WK_BATCH);
	if (nc <= 0)
		return;
	double now = gw_wall_s();
	int reason_budget = 32, seen = 0;
	/* Candidates in batches: with a long queue and no room, only the head is read. */
	for (int i = 0;; i++) {
		if (i == nc) {
			if (nc < WK_BATCH || seen >= WK_CANDIDATES ||
			    !room(w, view, nv, cpu_running))
				break;
			last = cand[nc - 1].id;
			nc = queue_store_candidates(w->st, QB_LOCAL, last, cand, WK_BATCH);
			if (nc <= 0)
				break;
			i = 0;
		}
		seen++;
		if (w->max_running > 0 && w->nrun >= w->max_running)
			break;
		const queue_candidate *c = &cand[i];
		char reason[200];
		int gate = queue_candidate_gate(w->st, c, now, reason, sizeof reason, &w->next_due);
		if (gate < 0)
			continue;
		if (gate == 0) {
			set_reason(w, c->id, reason, &reason_budget);
			continue;
		}
		if (c->gpus == 0) {
			if (cpu_running >= w->cpu_slots) {
				snprintf(reason, sizeof reason,
				         "waiting for a CPU slot (%d in use)", cpu_running);
				set_reason(w, c->id, reason, &reason_budget);
				continue;
			}
			start_task(w, c, 0, NULL, 0);
			cpu_running++;
			continue;
		}
		if (!w->snap->ok) {
			set_reason(w, c->id,
			           w->snap->seq ? w->snap->err : "waiting for the first GPU sample",
			           &reason_budget);
			continue;
		}
		int per_gpu = c->per_gpu > 0 ? c->per_gpu : w->per_gpu_default;
		if (c->per_gpu_hint > 0 && c->per_gpu_hint < per_gpu)
			per_gpu = c->per_gpu_hint;
		queue_place_req req = {.gpus = c->gpus,
		                       .mem_mib = c->mem_mib,
		                       .per_gpu = per_gpu,
		                       .allow_foreign = c->allow_foreign || w->foreign_allow,
		                       .mode = w->mode};
		int usable = 0;
		for (int k = 0; k < nv; k++)
			usable += view[k].usable;
		if (usable == 0) {
			/* A subset that matches nothing or GPUs all lost: wait, do not fail work.
			 */
			set_reason(w, c->id,
			           "no usable GPU in the queue's view (see gpuwhy queue gpus)",
			           &reason_budget);
			continue;
		}
		queue_place_result res;
		queue_place(view, nv, &req, &res);
		if (res.verdict == QP_NEVER) {
			queue_store_fail_now(w->st, c->id, res.reason);
			wlog("task %lld failed: %s", (long long)c->id, res.reason);
			queue_write_record(w->st, c->id);
			continue;
		}
		if (res.verdict == QP_WAIT) {
			set_reason(w, c->id, res.reason, &reason_budget);
			continue;
		}
		int pick[GPU_MAX];
		for (int k = 0; k < res.n; k++)
			pick[k] = pos[res.pick[k]];
		int before = w->nrun;
		start_task(w, c, per_gpu, pick, res.n);
		if (w->nrun == before)
			continue;
		/* Count it at once: the next candidate sees this reservation. */
		for (int k = 0; k < res.n; k++) {
			queue_gpu_view *x = &view[res.pick[k]];
			x->ntasks++;
			if (x->cap == 0 || per_gpu < x->cap)
				x->cap = per_gpu;
			if (c->mem_mib >= 0) {
				x->pending_mib += c->mem_mib;
				x->reserved_mib += c->mem_mib;
			}
		}
	}
}

int queue_candidate_gate(queue_store *st, const queue_candidate *c, double now, char *reason,
                         size_t len, double *next_due)
{
	if (c->not_before > now) {
		if (*next_due == 0 || c->not_before < *next_due)
			*next_due = c->not_before;
		time_t nb = (time_t)c->not_before;
		struct tm tm;
		localtime_r(&nb, &tm);
		char ts[16];
		strftime(ts, sizeof ts, "%H:%M:%S", &tm);
		snprintf(reason, len, "retry cooldown until %s", ts);
		return 0;
	}
	if (c->after_id > 0) {
		int ds = queue_store_state_of(st, c->after_id);
		if (ds < 0 || (queue_state_final((queue_state)ds) && ds != QS_DONE)) {
			queue_store_dep_failed(st, c->id, c->after_id, (queue_state)ds);
			wlog("task %lld failed: task %lld, which it waits for, %s%s",
			     (long long)c->id, (long long)c->after_id,
			     ds < 0 ? "does not exist" : "ended ",
			     ds < 0 ? "" : queue_state_name((queue_state)ds));
			queue_write_record(st, c->id);
			return -1;
		}
		if (ds != QS_DONE) {
			snprintf(reason, len, "waiting for task %lld (%s)", (long long)c->after_id,
			         queue_state_name((queue_state)ds));
			return 0;
		}
	}
	return 1;
}

/* ---- cancels, recovery ---- */

static void deliver_cancels(worker *w)
{
	int64_t ids[64];
	int n = queue_store_cancel_list(w->st, ids, 64);
	for (int i = 0; i < n; i++)
		for (int r = 0; r < w->nrun; r++) {
			wk_run *run = w->run[r];
			if (run->task_id != ids[i] || run->cancel_sent)
				continue;
			if (queue_proc_alive(run->shim_pid, run->shim_start))
				kill(run->shim_pid, SIGUSR1);
			run->cancel_sent = true;
			wlog("task %lld: cancel sent to shim %d", (long long)run->task_id,
			     run->shim_pid);
		}
}

/* Status files of attempts no longer running: a shim whose worker died right after
 * recording its end writes one nobody reads. */
static void drop_stale_status(worker *w)
{
	char dir[PATH_MAX + 8], path[2 * PATH_MAX];
	snprintf(dir, sizeof dir, "%s/run", w->dir);
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		long long id;
		int n;
		if (e->d_name[0] == '.' || sscanf(e->d_name, "%lld.%d.", &id, &n) != 2)
			continue;
		bool live = false;
		for (int r = 0; r < w->nrun && !live; r++)
			live = w->run[r]->task_id == id && w->run[r]->n == n;
		if (!live) {
			snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
			unlink(path);
		}
	}
	closedir(d);
}

/* Pick up where an earlier worker left off: adopt live shims, conclude the rest. */
static void recover(worker *w)
{
	queue_attempt *act;
	int n;
	if (queue_store_active(w->st, QB_LOCAL, &act, &n) != 0)
		return;
	for (int i = 0; i < n; i++) {
		queue_attempt *a = &act[i];
		if (a->astate == QA_STARTING) {
			/* The shim never got its go-ahead: the command did not run. */
			a->outcome = QO_NOT_STARTED;
			a->ended = gw_wall_s();
			queue_attempt_conclude(w->st, a, -1);
			wlog("task %lld attempt %d had not started; queued again",
			     (long long)a->task_id, a->n);
			continue;
		}
		bool same_boot = !a->boot_id[0] || !strcmp(a->boot_id, w->boot_id);
		if (same_boot && queue_proc_alive(a->shim_pid, a->shim_start)) {
			wk_run *r = calloc(1, sizeof *r);
			r->task_id = a->task_id;
			r->n = a->n;
			snprintf(r->token, sizeof r->token, "%s", a->token);
			r->shim_pid = a->shim_pid;
			r->shim_start = a->shim_start;
			r->sock = -1;
			parse_gidx(a->gpu_idx, r);
			r->reserved_mib = a->reserved_mib;
			r->per_gpu = a->per_gpu > 0 ? a->per_gpu : 1;
			r->started = a->started;
			r->started_mono =
			    gw_mono_ns() - (int64_t)((gw_wall_s() - a->started) * 1e9);
			r->peak_gpu = a->peak_gpu_mib;
			r->peak_rss = a->peak_rss_kib;
			r->log_offset = a->log_offset;
			run_add(w, r);
			wlog("task %lld attempt %d: re-adopted its running shim (pid %d)",
			     (long long)a->task_id, a->n, a->shim_pid);
			continue;
		}
		finish_local(w, a, 0, NULL);
	}
	free(act);
	drop_stale_status(w);
}

/* ---- lock, FIFO, poke ---- */

int queue_worker_pid(const char *dir)
{
	char path[PATH_MAX];
	queue_path(dir, "worker.lock", path, sizeof path);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	int pid = 0;
	if (flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
		char buf[32];
		ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
		pid = atoi(buf);
		if (pid <= 0)
			pid = -1; /* held, PID not written yet */
	}
	close(fd);
	return pid;
}

void queue_worker_poke(const char *dir)
{
	queue_worker_wake(dir, 1);
}

void queue_worker_wake(const char *dir, char what)
{
	char path[PATH_MAX];
	queue_path(dir, "wake", path, sizeof path);
	int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return; /* ENXIO: nobody listens */
	struct sigaction ign = {.sa_handler = SIG_IGN}, old;
	sigaction(SIGPIPE, &ign, &old);
	if (write(fd, &what, 1) < 0) {
		/* Full pipe (the worker is already awake) or it just went away. */
	}
	sigaction(SIGPIPE, &old, NULL);
	close(fd);
}

int queue_worker_ensure(const char *dir, const char *self_exe)
{
	if (!self_exe)
		return gw_error(GW_EXIT_ENV, "queue worker", "start one with gpuwhy queue worker",
		                "cannot find this program in /proc/self/exe to start a worker");
	if (queue_worker_pid(dir) != 0)
		return 0; /* the common case: one runs (checked again under the lock otherwise) */
	char path[PATH_MAX];
	queue_path(dir, "spawn.lock", path, sizeof path);
	int sl = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (sl < 0)
		return gw_error(GW_EXIT_ENV, path, NULL, "cannot open: %s", strerror(errno));
	/* One spawner at a time, so a burst of `add` calls starts one worker. */
	while (flock(sl, LOCK_EX) != 0 && errno == EINTR)
		;
	int rc = 0;
	if (queue_worker_pid(dir) != 0)
		goto out;
	int ready[2];
	if (pipe2(ready, O_CLOEXEC) != 0) {
		rc = gw_error(GW_EXIT_ENV, "pipe", NULL, "%s", strerror(errno));
		goto out;
	}
	pid_t pid = fork();
	if (pid == 0) {
		setsid();
		if (fork() != 0)
			_exit(0);
		char logp[PATH_MAX], fdbuf[16];
		queue_path(dir, "worker.log", logp, sizeof logp);
		int lf = open(logp, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
		int dn = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (dn >= 0)
			dup2(dn, 0);
		if (lf >= 0) {
			dup2(lf, 1);
			dup2(lf, 2);
		}
		/* The daemon keeps 0-2 and the ready pipe as fd 3, nothing its starter had open. */
		if (ready[1] == 3)
			fcntl(3, F_SETFD, 0);
		else
			dup2(ready[1], 3);
		close_range(4, ~0U, 0);
		snprintf(fdbuf, sizeof fdbuf, "3");
		char *argv[] = {(char *)self_exe, "queue", "--queue",     (char *)dir, "worker",
		                "--ready-fd",     fdbuf,   "--idle-exit", "10m",       NULL};
		execv(self_exe, argv);
		_exit(127);
	}
	close(ready[1]);
	if (pid > 0)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	struct pollfd pf = {.fd = ready[0], .events = POLLIN};
	char b;
	if (pid < 0 || poll(&pf, 1, 10000) <= 0 || read(ready[0], &b, 1) != 1) {
		if (queue_worker_pid(dir) == 0)
			rc = gw_error(GW_EXIT_ENV, "queue worker",
			              "see worker.log in the queue directory", "did not start");
	}
	close(ready[0]);
out:
	flock(sl, LOCK_UN);
	close(sl);
	return rc;
}

static int take_lock(worker *w)
{
	char path[PATH_MAX];
	queue_path(w->dir, "worker.lock", path, sizeof path);
	w->lock = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (w->lock < 0)
		return gw_error(GW_EXIT_ENV, path, NULL, "cannot open: %s", strerror(errno));
	if (flock(w->lock, LOCK_EX | LOCK_NB) != 0) {
		int pid = queue_worker_pid(w->dir);
		return gw_error(GW_EXIT_ENV, "queue worker", "gpuwhy queue stop ends it",
		                "one already runs for %s (pid %d)", w->dir, pid);
	}
	char buf[32];
	int n = snprintf(buf, sizeof buf, "%d\n", (int)getpid());
	if (ftruncate(w->lock, 0) != 0 || pwrite(w->lock, buf, (size_t)n, 0) != n)
		return gw_error(GW_EXIT_ENV, path, NULL, "cannot write: %s", strerror(errno));
	return 0;
}

static int open_fifo(worker *w)
{
	char path[PATH_MAX];
	queue_path(w->dir, "wake", path, sizeof path);
	if (mkfifo(path, 0600) != 0 && errno != EEXIST)
		return gw_error(GW_EXIT_ENV, path, NULL, "cannot create: %s", strerror(errno));
	/* O_RDWR: the FIFO never reports EOF when the last writer closes. */
	w->fifo = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (w->fifo < 0)
		return gw_error(GW_EXIT_ENV, path, NULL, "cannot open: %s", strerror(errno));
	return 0;
}

/* Read all that is there; true when a byte other than QUEUE_POKE_ADD came. */
static bool drain_fd(int fd)
{
	char buf[256];
	bool other = false;
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		for (ssize_t i = 0; i < n; i++)
			other |= buf[i] != QUEUE_POKE_ADD;
	return other;
}

/* ---- main loop ---- */

/* Read what a shim sent; true when its attempt ended (its status handed over, or the
 * socket closed: the shim is gone and its status, if any, is in the file). */
static bool shim_message(wk_run *r)
{
	char msg[1200];
	for (;;) {
		ssize_t got = recv(r->sock, msg, sizeof msg - 1, MSG_DONTWAIT);
		if (got < 0)
			return errno != EAGAIN && errno != EINTR;
		if (got == 0)
			return true;
		msg[got] = '\0';
		if (msg[0] == QUEUE_SHIM_PID) {
			r->task_pgid = atoi(msg + 1);
		} else if (msg[0] == QUEUE_SHIM_ENDED) {
			queue_status_parse(msg + 1, &r->status);
			r->have_status = true;
			return true;
		}
	}
}

static bool idle(worker *w)
{
	if (w->nrun > 0 || (w->slurm && queue_slurm_active(w->slurm) > 0))
		return false;
	return queue_store_count_state(w->st, QS_QUEUED) == 0 &&
	       queue_store_count_state(w->st, QS_SUBMITTED) == 0 &&
	       queue_store_count_state(w->st, QS_RUNNING) == 0;
}

static void loop(worker *w, int64_t idle_exit_ns)
{
	struct pollfd *fds = NULL;
	int capfds = 0, capended = 0;
	wk_run **endedv = NULL;
	int64_t last_cfg = 0, idle_since = 0, last_full = 0;
	bool poked = true, added = false;
	while (!wk_stop) {
		int64_t now = gw_mono_ns();
		for (int i = w->nreap - 1; i >= 0; i--)
			if (waitpid(w->reap[i], NULL, WNOHANG) != 0)
				w->reap[i] = w->reap[--w->nreap];
		if (poked || now - last_cfg >= 1000000000LL) {
			load_config(w);
			deliver_cancels(w);
			last_cfg = now;
		}
		/* A new snapshot: who uses which GPU, peaks, the view for `queue gpus`. */
		pthread_mutex_lock(&w->mu);
		bool fresh = w->shared->seq != w->seen_seq;
		if (fresh) {
			memcpy(w->snap, w->shared,
			       offsetof(wk_snap, g) + (size_t)w->shared->n * sizeof(wk_gpu));
			w->seen_seq = w->shared->seq;
		}
		pthread_mutex_unlock(&w->mu);
		if (fresh) {
			attribute(w);
			sample_rss(w);
			flush_peaks(w);
			publish_view(w);
		}
		bool quick = added && !poked && !fresh && now - last_full < 1000000000LL;
		if (!quick) {
			last_full = now;
			w->next_due = 0; /* recomputed by the full pass */
		}
		schedule(w, quick);
		if (w->slurm && (poked || added || now - w->last_slurm >= w->slurm_poll_ns)) {
			queue_slurm_tick(w->slurm, !w->paused && !w->draining);
			w->last_slurm = gw_mono_ns();
		}
		poked = added = false;
		if (w->draining && w->nrun == 0 &&
		    (!w->slurm || queue_slurm_active(w->slurm) == 0)) {
			wlog("drained: nothing runs; the worker stops (gpuwhy queue resume to go "
			     "on)");
			break;
		}
		if (idle_exit_ns > 0) {
			if (!idle(w))
				idle_since = 0;
			else if (!idle_since)
				idle_since = now;
			else if (now - idle_since >= idle_exit_ns) {
				wlog("idle; the worker stops");
				break;
			}
		}

		int need = 2 + w->nrun;
		if (need > capfds) {
			capfds = need * 2;
			fds = gw_xrealloc(fds, (size_t)capfds * sizeof *fds);
		}
		int nf = 0;
		fds[nf++] = (struct pollfd){.fd = w->fifo, .events = POLLIN};
		fds[nf++] = (struct pollfd){.fd = w->wake_rd, .events = POLLIN};
		for (int r = 0; r < w->nrun; r++)
			fds[nf++] = (struct pollfd){.fd = w->run[r]->sock, .events = POLLIN};
		int timeout = 1000;
		if (w->next_due > 0) {
			double left = (w->next_due - gw_wall_s()) * 1000.0 + 1;
			if (left < timeout)
				timeout = left < 0 ? 0 : (int)left;
		}
		if (w->slurm && queue_slurm_active(w->slurm) > 0) {
			int64_t left = (w->last_slurm + w->slurm_poll_ns - gw_mono_ns()) / 1000000;
			if (left < timeout)
				timeout = left < 0 ? 0 : (int)left;
		}
		int rc = poll(fds, (nfds_t)nf, timeout);
		if (rc < 0 && errno != EINTR)
			break;
		if (rc > 0 && (fds[0].revents & POLLIN)) {
			/* New tasks only need a pass; anything else may have changed settings or
			 * asked for a cancel. */
			poked = drain_fd(w->fifo);
			added = true;
		}
		if (rc > 0 && (fds[1].revents & POLLIN))
			drain_fd(w->wake_rd);
		/* Ended attempts: EOF on a shim's socket, or an adopted shim gone. Their
		 * slots are free at once: the next tasks start before the ended ones are
		 * recorded (a shim keeps its status until then, or writes it to its file
		 * should this worker die meanwhile). */
		int nended = 0;
		for (int r = w->nrun - 1; r >= 0; r--) {
			wk_run *run = w->run[r];
			bool ended = false;
			if (run->sock >= 0) {
				int k = 2;
				while (k < nf && fds[k].fd != run->sock)
					k++;
				if (k < nf && (fds[k].revents & (POLLIN | POLLHUP | POLLERR)))
					ended = shim_message(run);
			} else {
				ended = !queue_proc_alive(run->shim_pid, run->shim_start);
			}
			if (ended) {
				if (nended == capended) {
					capended = capended ? capended * 2 : 8;
					endedv =
					    gw_xrealloc(endedv, (size_t)capended * sizeof *endedv);
				}
				endedv[nended++] = run;
				w->run[r] = w->run[--w->nrun];
			}
		}
		if (nended > 0 && !wk_stop) {
			w->next_due = 0;
			schedule(w, false);
		}
		for (int e = 0; e < nended; e++)
			finish_run(w, endedv[e]);
	}
	free(endedv);
	free(fds);
}

static void worker_free(worker *w)
{
	sampler_stop(w);
	while (w->nrun > 0)
		run_remove(w, w->nrun - 1);
	free(w->run);
	free(w->reap);
	queue_slurm_free(w->slurm);
	free(w->shared);
	free(w->snap);
	if (w->fifo >= 0)
		close(w->fifo);
	if (w->wake_rd >= 0)
		close(w->wake_rd);
	if (w->wake_wr >= 0)
		close(w->wake_wr);
	if (w->devnull >= 0)
		close(w->devnull);
	if (w->lock >= 0)
		close(w->lock);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	queue_store_close(w->st);
}

int queue_worker_run(const queue_worker_opts *o)
{
	worker w;
	memset(&w, 0, sizeof w);
	w.fifo = w.lock = w.devnull = w.wake_rd = w.wake_wr = -1;
	snprintf(w.dir, sizeof w.dir, "%s", o->dir);
	w.self_exe = o->self_exe;
	snprintf(w.gpus_opt, sizeof w.gpus_opt, "%s", o->gpus ? o->gpus : "");
	pthread_mutex_init(&w.mu, NULL);
	pthread_cond_init(&w.cv, NULL);
	w.shared = calloc(1, sizeof *w.shared);
	w.snap = calloc(1, sizeof *w.snap);
	w.sample_ns = 1000000000LL;
	int rc = queue_store_open(o->dir, &w.st);
	if (rc) {
		worker_free(&w);
		return rc;
	}
	if ((rc = take_lock(&w)) || (rc = open_fifo(&w))) {
		worker_free(&w);
		return rc;
	}
	int wp[2];
	if (pipe2(wp, O_CLOEXEC | O_NONBLOCK) != 0) {
		worker_free(&w);
		return gw_error(GW_EXIT_ENV, "pipe", NULL, "%s", strerror(errno));
	}
	w.wake_rd = wp[0];
	w.wake_wr = wp[1];
	w.devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	queue_boot_id(w.boot_id, sizeof w.boot_id);
	w.pidns_nested = host_pidns_nested("/proc");
	struct sigaction sa = {.sa_handler = on_stop};
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	load_config(&w);
	wlog("worker %d started for %s", (int)getpid(), w.dir);
	if (w.pidns_nested)
		wlog("this process runs in a nested PID namespace: GPU processes cannot be matched "
		     "to tasks, so per-task GPU memory is not recorded");
	recover(&w);
	w.slurm = queue_slurm_new(w.st, w.dir);
	if (o->ready_fd >= 0) {
		char b = 1;
		if (write(o->ready_fd, &b, 1) < 0) {
			/* The starter gave up waiting; carry on anyway. */
		}
		close(o->ready_fd);
	}
	if (sampler_start(&w) != 0) {
		worker_free(&w);
		return gw_error(GW_EXIT_ENV, "queue worker", NULL,
		                "cannot start the sampler thread");
	}
	loop(&w, o->idle_exit_ns);
	flush_peaks(&w);
	wlog("worker %d stops (%d attempt%s left running under their shims)", (int)getpid(), w.nrun,
	     w.nrun == 1 ? "" : "s");
	worker_free(&w);
	return GW_EXIT_OK;
}
