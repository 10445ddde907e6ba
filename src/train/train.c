/*
 * train.c - the training loop of `gpuwhy sim train`: ranks (one process
 * each, rank r on visible GPU --gpu + r) run steps of data, GPU phase and
 * all-reduce; the first rank to fail decides the exit code.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "train/simgpu.h"
#include "train/train_int.h"
#include "util/err.h"
#include "util/fail.h"
#include "util/i18n.h"
#include "util/parse.h"
#include "util/timeutil.h"

volatile sig_atomic_t train_stop;

static void on_stop(int sig)
{
	train_stop = sig;
}

static double train_loss(const train_opts *o, long long step)
{
	double noise =
	    (double)(sim_hash((uint64_t)o->seed, 7, (uint64_t)step, 0) >> 11) / 9007199254740992.0 -
	    0.5;
	return 0.35 + 2.2 * exp(-3.0 * (double)step / (double)o->steps) + 0.04 * noise;
}

static int run_steps(train_rank *r, train_worker *w)
{
	const train_opts *o = r->o;
	const double mib = 1048576.0;
	int64_t prev = gw_mono_ns(), t_start = prev;
	for (long long step = 1; step <= o->steps; step++) {
		if (train_stop || __atomic_load_n(&r->sh->abort, __ATOMIC_ACQUIRE))
			return -1;
		if (train_next_batch(o, w, step - 1) != 0)
			return -1;
		if (step == o->oom_at || o->growth_mib > 0) {
			double want = o->growth_mib > 0 ? o->growth_mib * mib : 20 * mib;
			int rc = train_try_alloc(r, want, step == o->oom_at);
			if (rc != 0)
				return 1;
		}
		if (step == o->fail_at) {
			fprintf(stderr,
			        "RuntimeError: synthetic failure at step %lld (--fail-exit %lld)\n",
			        step, o->fail_exit);
			return (int)o->fail_exit;
		}
		double gpu_ms = o->gpu_ms + (r->rank == o->straggler ? o->straggler_ms : 0);
		int g = train_gpu_step(r, o->h2d_mib * mib, gpu_ms, (unsigned)o->kernel_us);
		if (g != 0)
			return g < 0 ? -1 : 1;
		if (o->ranks > 1) {
			train_publish_link(r);
			int64_t a0 = gw_mono_ns(), lease = a0 + 1000000000LL;
			sim_wl_push(r->wl, a0, lease, 0, SIM_WL_COMM, 0,
			            (uint64_t)(o->allreduce_mib * mib));
			if (train_barrier(r->sh, o->ranks, r->wl, &lease) != 0) {
				sim_wl_set_end(r->wl, gw_mono_ns());
				return -1;
			}
			int64_t a1 = gw_mono_ns() + train_allreduce_ns(r, o->allreduce_mib * mib);
			sim_wl_set_end(r->wl, a1);
			if (train_sleep_until(a1) != 0)
				return -1;
		}
		int64_t now = gw_mono_ns();
		if (r->rank == 0) {
			printf("step %lld/%lld loss %.4f time %.3fs\n", step, o->steps,
			       train_loss(o, step), (double)(now - prev) / 1e9);
			if (!o->buffered)
				fflush(stdout);
		}
		prev = now;
	}
	if (r->rank == 0) {
		printf("training finished: %lld steps in %.3fs\n", o->steps,
		       (double)(gw_mono_ns() - t_start) / 1e9);
		fflush(stdout);
	}
	return 0;
}

/*
 * The GPUs a CUDA program would see, as NVML indices in CUDA's order:
 * CUDA_VISIBLE_DEVICES (indices or UUID prefixes, up to the first entry
 * that names no GPU, as CUDA reads it; "" hides them all), else all GPUs.
 */
static unsigned visible_gpus(gpu_ctx *ctx, unsigned count, unsigned *vis)
{
	const char *env = getenv("CUDA_VISIBLE_DEVICES");
	unsigned n = 0;
	if (!env) {
		for (unsigned i = 0; i < count && i < SIM_MAX_GPUS; i++)
			vis[n++] = i;
		return n;
	}
	char list[1024], *save = NULL;
	snprintf(list, sizeof list, "%s", env);
	for (char *t = strtok_r(list, ",", &save); t && n < SIM_MAX_GPUS;
	     t = strtok_r(NULL, ",", &save)) {
		while (*t == ' ')
			t++;
		long long idx;
		int found = -1;
		if (gw_parse_int(t, 0, (long long)count - 1, &idx)) {
			found = (int)idx;
		} else {
			for (unsigned i = 0; i < count && found < 0; i++) {
				const gpu_static *st = gpu_static_info(ctx, (int)i);
				if (st && st->uuid[0] && *t && !strncmp(st->uuid, t, strlen(t)))
					found = (int)i;
			}
		}
		if (found < 0)
			break;
		vis[n++] = (unsigned)found;
	}
	return n;
}

/*
 * A PID that no process of this host has, as the driver reports a job in
 * another PID namespace (NVML knows only the host's PIDs): near the top of
 * pid_max, different per rank, probed until free.
 */
static uint32_t foreign_pid(void)
{
	long max = 4194304;
	FILE *f = fopen("/proc/sys/kernel/pid_max", "re");
	if (f) {
		if (fscanf(f, "%ld", &max) != 1 || max < 1024)
			max = 32768;
		fclose(f);
	}
	uint64_t h = sim_hash(0x6e73, (uint64_t)getpid(), 0, 0);
	long span = max / 4;
	for (long k = 0; k < 4096; k++) {
		long pid = max - 1 - (long)((h + (uint64_t)k) % (uint64_t)span);
		if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
			return (uint32_t)pid;
	}
	return (uint32_t)(max - 1);
}

/* How the simulated driver lists this rank (--hidden). */
static void apply_hidden(const train_opts *o, sim_wl *wl)
{
	if (o->hidden == TRAIN_HIDDEN_NONE)
		sim_wl_set_shown_pid(wl, 0);
	else if (o->hidden == TRAIN_HIDDEN_PID)
		sim_wl_set_shown_pid(wl, foreign_pid());
}

static int run_rank(const train_opts *o, gpu_ctx *ctx, train_shared *sh, long long rank,
                    unsigned gpu)
{
	train_rank r = {.o = o, .gpu_ctx = ctx, .sh = sh, .rank = rank, .gpu = gpu};
	char dir[PATH_MAX], err[600];
	if (sim_state_dir(train_sim_scenario(), dir, sizeof dir, err, sizeof err) != 0 ||
	    sim_wl_create(dir, r.gpu, &r.wl, err, sizeof err) != 0) {
		gw_error(GW_EXIT_ENV, "sim train", NULL, "rank %lld: %s", rank, err);
		return GW_EXIT_ENV;
	}
	apply_hidden(o, r.wl);
	sim_wl_set_dram(r.wl, (unsigned)llround(o->dram_pct));
	r.nvlink = train_has_nvlink(&r);
	r.speed = 1;
	r.h2d_bps = 25e9;
	train_worker *w = calloc((size_t)(o->workers ? o->workers : 1), sizeof *w);
	int rc;
	if (!w || train_spawn_workers(o, w) != 0) {
		gw_error(GW_EXIT_ENV, "sim train", NULL, "cannot start workers: %s",
		         strerror(errno));
		rc = GW_EXIT_ENV;
	} else {
		int a = train_try_alloc(&r, o->mem_mib * 1048576.0, false);
		rc = a != 0 ? 1 : run_steps(&r, w);
		if (rc < 0)
			rc = train_stop ? 128 + train_stop : 1;
		train_stop_workers(o, w);
	}
	if (rc != 0)
		__atomic_store_n(&sh->abort, 1, __ATOMIC_RELEASE);
	train_futex_wake(&sh->generation);
	free(w);
	sim_wl_close(r.wl);
	return rc;
}

/*
 * --buffered: what Python does with print() into a pipe: an 8 KiB block
 * buffer, flushed when full or at exit, unless PYTHONUNBUFFERED is set to
 * something (a terminal is line-buffered either way).
 */
static void apply_buffering(train_opts *o)
{
	const char *unbuf = getenv("PYTHONUNBUFFERED");
	if (o->buffered && ((unbuf && *unbuf) || isatty(STDOUT_FILENO)))
		o->buffered = false;
	if (o->buffered)
		setvbuf(stdout, NULL, _IOFBF, 8192);
}

int train_run(train_opts *o)
{
	apply_buffering(o);
	gpu_ctx *ctx;
	int rc = train_sim_open(&ctx, "sim train");
	if (rc)
		return rc;
	unsigned count = (unsigned)gpu_count(ctx), vis[SIM_MAX_GPUS];
	/* --gpu and ranks count in the GPUs CUDA_VISIBLE_DEVICES shows, like a CUDA program. */
	unsigned nvis = visible_gpus(ctx, count, vis);
	if (o->gpu + o->ranks > (long long)nvis) {
		gpu_close(ctx);
		return gw_error(
		    GW_EXIT_USAGE, o->ranks > 1 ? "--ranks" : "--gpu",
		    N_("rank r runs on GPU --gpu + r"),
		    getenv("CUDA_VISIBLE_DEVICES")
		        ? N_("needs GPUs %lld to %lld, %u CUDA_VISIBLE_DEVICES makes visible")
		        : N_("needs GPUs %lld to %lld, %u are visible"),
		    o->gpu, o->gpu + o->ranks - 1, nvis);
	}
	train_shared *sh =
	    mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		gpu_close(ctx);
		return gw_error(GW_EXIT_ENV, "sim train", NULL, "mmap: %s", strerror(errno));
	}
	struct sigaction sa = {.sa_handler = on_stop};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	fflush(stdout);
	pid_t kids[SIM_MAX_GPUS] = {0};
	for (long long r = 1; r < o->ranks; r++) {
		pid_t pid = fork();
		if (pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGTERM);
			int code = run_rank(o, ctx, sh, r, vis[o->gpu + r]);
			fflush(stdout);
			_exit(code);
		}
		if (pid < 0) {
			__atomic_store_n(&sh->abort, 1, __ATOMIC_RELEASE);
			gw_error(GW_EXIT_ENV, "sim train", NULL, "fork: %s", strerror(errno));
			break;
		}
		kids[r] = pid;
	}
	rc = run_rank(o, ctx, sh, 0, vis[o->gpu]);
	/* The first rank to fail decides the exit code; the others were only stopped. */
	for (long long r = 1; r < o->ranks; r++) {
		if (!kids[r])
			continue;
		if (train_stop)
			kill(kids[r], SIGTERM);
		int st;
		while (waitpid(kids[r], &st, 0) < 0 && errno == EINTR)
			kill(kids[r], SIGTERM);
		int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		if (rc == 0 || (rc == 1 && code != 1 && code != 0))
			rc = code;
	}
	munmap(sh, sizeof *sh);
	gpu_close(ctx);
	return rc;
}
