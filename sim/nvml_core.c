/*
 * nvml_core.c - the simulated driver: initialisation, time, workloads and
 * the model with workloads added; system-level NVML entry points.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <signal.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sim_i18n.h"
#include "sim_lib.h"

sim_global sim_g = {.mu = PTHREAD_MUTEX_INITIALIZER, .dir_fd = -1};

static int64_t mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * Wall clock (microseconds) when nvmlInit last succeeded. While the clock is
 * pinned, the pinned instant is stamped with it, so timestamps are recent and
 * a client asking for samples since "now - 1 s" gets some.
 */
static int64_t pinned_wall_us;

int64_t sim_wall_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

/* ---- time ---- */

static bool parse_seconds(const char *s, double *out)
{
	static locale_t c_loc;
	if (!c_loc)
		c_loc = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
	if (!s || !*s || !c_loc)
		return false;
	char *end;
	errno = 0;
	double v = strtod_l(s, &end, c_loc);
	if (errno || *end || !isfinite(v) || v < 0 || v > 1e9)
		return false;
	*out = v;
	return true;
}

static void time_now(sim_time *now)
{
	now->mono = mono_now();
	double pinned;
	if (parse_seconds(getenv("GPUWHY_SIM_TIME"), &pinned)) {
		now->pinned = true;
		now->t = pinned;
		now->epoch_mono = now->mono - (int64_t)llround(pinned * 1e9);
		now->epoch_wall_us = pinned_wall_us - (int64_t)llround(pinned * 1e6);
		return;
	}
	now->pinned = false;
	now->epoch_mono = sim_g.epoch.mono_ns;
	now->epoch_wall_us = sim_g.epoch.wall_ns / 1000;
	now->t = (double)(now->mono - now->epoch_mono) / 1e9;
}

int64_t sim_mono_of(const sim_time *now, double t)
{
	return now->epoch_mono + (int64_t)llround(t * 1e9);
}

unsigned long long sim_wall_us(const sim_time *now, double t)
{
	double us = (double)now->epoch_wall_us + t * 1e6;
	return us > 0 ? (unsigned long long)llround(us) : 0;
}

double sim_t_of_wall_us(const sim_time *now, unsigned long long us)
{
	return ((double)us - (double)now->epoch_wall_us) / 1e6;
}

/* ---- workloads ---- */

static void wl_drop(int i)
{
	sim_wl_unmap(sim_g.wl[i].f);
	sim_g.wl[i] = sim_g.wl[--sim_g.n_wl];
}

static void wl_scan(void)
{
	for (int i = 0; i < sim_g.n_wl; i++)
		sim_g.wl[i].seen = false;
	DIR *dir = opendir(sim_g.dir);
	if (dir) {
		struct dirent *e;
		while ((e = readdir(dir))) {
			size_t len = strlen(e->d_name);
			if (e->d_name[0] != 'w' || len < 7 || len >= sizeof sim_g.wl[0].name ||
			    strcmp(e->d_name + len - 6, ".state"))
				continue;
			int k;
			/* Same name but another inode: a new process that reused the PID. */
			for (k = 0; k < sim_g.n_wl; k++)
				if (!strcmp(sim_g.wl[k].name, e->d_name) &&
				    sim_g.wl[k].ino == e->d_ino)
					break;
			if (k < sim_g.n_wl) {
				sim_g.wl[k].seen = true;
				continue;
			}
			if (sim_g.n_wl >= SIM_MAX_WL)
				continue;
			char p[PATH_MAX + 80];
			snprintf(p, sizeof p, "%s/%s", sim_g.dir, e->d_name);
			const sim_wl_file *f = sim_wl_map(p);
			if (!f)
				continue;
			sim_wl_ref *r = &sim_g.wl[sim_g.n_wl++];
			memset(r, 0, sizeof *r);
			snprintf(r->name, sizeof r->name, "%s", e->d_name);
			r->ino = e->d_ino;
			r->f = f;
			r->pid = f->pid;
			r->starttime = f->starttime;
			r->gpu = f->gpu;
			r->seen = true;
		}
		closedir(dir);
	}
	for (int i = sim_g.n_wl - 1; i >= 0; i--)
		if (!sim_g.wl[i].seen)
			wl_drop(i);
}

static void reload_epoch(void)
{
	sim_epoch e;
	if (sim_clock_read(sim_g.dir, &e) != 0 ||
	    (e.mono_ns == sim_g.epoch.mono_ns && e.wall_ns == sim_g.epoch.wall_ns))
		return;
	/* Another process restarted the clock (gpuwhy sim reset): follow it. */
	sim_g.epoch = e;
	sim_retired_unmap(sim_g.retired);
	sim_g.retired = sim_retired_map(sim_g.dir);
	for (int i = 0; i < sim_g.scn->n_gpus; i++)
		sim_g.dev[i].inst_valid = false;
}

void sim_wl_refresh(const sim_time *now)
{
	if (now->mono - sim_g.touched_at > 5000000000LL) {
		sim_g.touched_at = now->mono;
		sim_clock_touch(sim_g.dir);
		reload_epoch();
	}
	/* fstat of the open directory is cheap enough for every call, and a
	 * workload's file is seen as soon as it exists (even by itself). */
	struct stat st;
	if (sim_g.dir_fd < 0 || fstat(sim_g.dir_fd, &st) != 0)
		return;
	int64_t m = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
	if (m != sim_g.dir_mtime) {
		sim_g.dir_mtime = m;
		wl_scan();
	}
}

bool sim_wl_ref_alive(sim_wl_ref *r, const sim_time *now)
{
	/* A process that exited leaves the list at once; PID reuse is checked each second. */
	if (r->pid == 0 || r->pid > INT_MAX || (kill((pid_t)r->pid, 0) != 0 && errno != EPERM))
		return r->alive = false;
	if (!r->alive_at || now->mono - r->alive_at > 1000000000LL) {
		r->alive = sim_pid_alive(r->pid, r->starttime);
		r->alive_at = now->mono;
	}
	return r->alive;
}

void sim_wl_gpu_activity(unsigned gpu, int64_t a_ns, int64_t b_ns, double acc[SIM_ACC_N])
{
	/* Dead processes' past intervals are history the driver saw: they count. */
	for (int i = 0; i < sim_g.n_wl; i++)
		if (sim_g.wl[i].gpu == gpu)
			sim_wl_activity(sim_g.wl[i].f, a_ns, b_ns, acc);
}

static uint64_t retired_gen(void)
{
	if (!sim_g.retired)
		return 0;
	uint64_t s;
	for (int spin = 0; spin < 100000; spin++) {
		s = __atomic_load_n(&sim_g.retired->gen, __ATOMIC_ACQUIRE);
		if (!(s & 1))
			return s;
	}
	return s;
}

void sim_wl_gpu_totals(unsigned gpu, int64_t now_ns, double acc[SIM_ACC_N])
{
	if (gpu >= SIM_MAX_GPUS)
		return;
	for (int tries = 0; tries < 20; tries++) {
		uint64_t g1 = retired_gen();
		double part[SIM_ACC_N] = {0};
		if (sim_g.retired)
			memcpy(part, sim_g.retired->acc[gpu], sizeof part);
		for (int i = 0; i < sim_g.n_wl; i++)
			if (sim_g.wl[i].gpu == gpu)
				sim_wl_totals(sim_g.wl[i].f, now_ns, part);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (tries < 19 && retired_gen() != g1) {
			/* A file moved into the retired totals meanwhile: look again. */
			wl_scan();
			continue;
		}
		for (int i = 0; i < SIM_ACC_N; i++)
			acc[i] += part[i];
		return;
	}
}

uint64_t sim_wl_gpu_mem(unsigned gpu, const sim_time *now)
{
	uint64_t sum = 0;
	for (int i = 0; i < sim_g.n_wl; i++) {
		sim_wl_ref *r = &sim_g.wl[i];
		sim_wl_file h;
		if (r->gpu == gpu && sim_wl_ref_alive(r, now) && sim_wl_header(r->f, &h) &&
		    !h.exited_ns)
			sum += h.mem_bytes;
	}
	return sum;
}

/* ---- the model with workloads ---- */

int sim_links_up(const sim_gpu *g)
{
	int n = 0;
	for (int l = 0; l < g->n_links; l++)
		n += g->links[l].up;
	return n;
}

/* Workload accumulators onto profile metrics. */
static void add_workload(const sim_gpu *g, const double acc[SIM_ACC_N], double m[SIM_M_COUNT])
{
	m[SIM_M_UTIL] += acc[SIM_ACC_BUSY];
	m[SIM_M_MEM_UTIL] += acc[SIM_ACC_DRAM];
	m[SIM_M_SM] += acc[SIM_ACC_SM];
	m[SIM_M_OCC] += acc[SIM_ACC_OCC];
	m[SIM_M_TENSOR] += acc[SIM_ACC_TENSOR];
	m[SIM_M_DRAM] += acc[SIM_ACC_DRAM];
	m[SIM_M_FP64] += acc[SIM_ACC_FP64];
	m[SIM_M_FP32] += acc[SIM_ACC_FP32];
	m[SIM_M_FP16] += acc[SIM_ACC_FP16];
	m[SIM_M_INT] += acc[SIM_ACC_INT];
	m[SIM_M_PCIE_RX] += acc[SIM_ACC_H2D];
	/* Collectives send and receive about the same amount, over NVLink when there is one. */
	if (sim_links_up(g)) {
		m[SIM_M_NVL_TX] += acc[SIM_ACC_PEER];
		m[SIM_M_NVL_RX] += acc[SIM_ACC_PEER];
	} else {
		m[SIM_M_PCIE_TX] += acc[SIM_ACC_PEER];
		m[SIM_M_PCIE_RX] += acc[SIM_ACC_PEER];
	}
}

void sim_window(const struct nvmlDevice_st *d, const sim_time *now, double a, double b,
                double m[SIM_M_COUNT])
{
	memset(m, 0, SIM_M_COUNT * sizeof *m);
	if (b <= a)
		return;
	sim_scn_integral(d->g, a, b, m);
	double acc[SIM_ACC_N] = {0};
	sim_wl_gpu_activity((unsigned)d->index, sim_mono_of(now, a), sim_mono_of(now, b), acc);
	add_workload(d->g, acc, m);
	for (int k = 0; k < SIM_M_COUNT; k++) {
		m[k] /= b - a;
		if (k < SIM_M_FRACTIONS && m[k] > 1)
			m[k] = 1;
	}
}

void sim_cumulative(const struct nvmlDevice_st *d, const sim_time *now, double m[SIM_M_COUNT])
{
	memset(m, 0, SIM_M_COUNT * sizeof *m);
	if (now->t > 0)
		sim_scn_integral(d->g, 0, now->t, m);
	double acc[SIM_ACC_N] = {0};
	sim_wl_gpu_totals((unsigned)d->index, now->mono, acc);
	add_workload(d->g, acc, m);
}

double sim_energy_mj(const struct nvmlDevice_st *d, const sim_time *now)
{
	const sim_gpu *g = d->g;
	double t = now->t > 0 ? now->t : 0;
	double m[SIM_M_COUNT];
	sim_cumulative(d, now, m);
	return sim_energy_j(g, t, m) * 1000.0;
}

unsigned long long sim_replay_count(const sim_gpu *g, double t)
{
	double n = (double)g->replay_initial;
	for (int i = 0; i < g->n_episodes; i++)
		if (g->episodes[i].kind == SIM_EP_PCIE_REPLAY)
			n += g->episodes[i].per_s * sim_ep_overlap(g, &g->episodes[i], 0, t);
	return (unsigned long long)floor(n);
}

/*
 * Power with its noise added. While the power cap holds the clocks down the
 * controller keeps the one-second average at or just under the enforced
 * limit, so the noise only ever takes power below it (real boards hover a
 * few watts under the cap, never over it).
 */
static double capped_power(double w, double noise, bool capped, double limit)
{
	if (capped)
		return limit - fabs(noise);
	w += noise;
	return w > limit ? limit : w;
}

static unsigned clamp_mhz(double v)
{
	return v < 1 ? 1 : (unsigned)lround(v);
}

void sim_state_at(const struct nvmlDevice_st *d, const sim_time *now, double t, sim_inst *in)
{
	sim_state_under_load(d, now, t, false, in);
}

void sim_state_under_load(const struct nvmlDevice_st *d, const sim_time *now, double t,
                          bool assume_busy, sim_inst *in)
{
	const sim_gpu *g = d->g;
	double p = g->util_period;
	long long slot = (long long)floor(t / p + 1e-9);
	double m[SIM_M_COUNT], pw[SIM_M_COUNT], tw[SIM_M_COUNT];
	sim_window(d, now, t - p, t, m);
	sim_window(d, now, t - 1.0, t, pw);
	sim_window(d, now, t - SIM_TEMP_WINDOW, t, tw);
	uint64_t seed = sim_g.scn->seed;
	memset(in, 0, sizeof *in);
	in->slot = slot;
	in->util = m[SIM_M_UTIL];
	if (in->util > 0 && g->noise_util > 0) {
		in->util += g->noise_util / 100.0 * sim_noise(seed, d->index, SIM_M_UTIL, slot);
		in->util = in->util < 0 ? 0 : in->util > 1 ? 1 : in->util;
	}
	in->mem_util = m[SIM_M_MEM_UTIL];
	in->enc = m[SIM_M_ENC];
	in->dec = m[SIM_M_DEC];
	in->pcie_tx = m[SIM_M_PCIE_TX];
	in->pcie_rx = m[SIM_M_PCIE_RX];
	bool busy = assume_busy || in->util >= 0.01;
	in->power_w = sim_power_of(g, pw[SIM_M_UTIL], pw[SIM_M_SM]);
	in->power_now_w = sim_power_of(g, m[SIM_M_UTIL], m[SIM_M_SM]);
	double act30 = 0.35 * tw[SIM_M_UTIL] + 0.65 * tw[SIM_M_SM];
	in->temp_c = g->temp_idle + (g->temp_busy - g->temp_idle) * act30;
	in->fan_pct = g->has_fan ? g->fan_idle + (g->fan_busy - g->fan_idle) * act30 : 0;
	double sm = busy ? g->clk_busy_sm : g->clk_idle_sm;
	in->mem_mhz = busy ? g->clk_max_mem : g->clk_idle_mem;
	in->reasons = busy ? 0 : nvmlClocksEventReasonGpuIdle;
	in->pstate = busy ? g->busy_pstate : g->idle_pstate;
	in->pcie_gen = g->pcie_gen;
	in->pcie_width = g->pcie_width;
	for (int i = 0; i < g->n_episodes; i++) {
		const sim_episode *e = &g->episodes[i];
		if (!sim_ep_active(g, e, t))
			continue;
		if (e->kind == SIM_EP_DOWNTRAIN) {
			in->pcie_gen = e->gen;
			in->pcie_width = e->width;
		}
		if (e->kind != SIM_EP_THROTTLE)
			continue;
		in->reasons |= e->reasons;
		if (e->sm_clock_mhz > 0 && e->sm_clock_mhz < sm)
			sm = e->sm_clock_mhz;
		if (e->clock_drop_pct >= 0 && g->clk_busy_sm * (1 - e->clock_drop_pct / 100) < sm)
			sm = g->clk_busy_sm * (1 - e->clock_drop_pct / 100);
		if (!isnan(e->temp_c))
			in->temp_c = e->temp_c;
		if (!isnan(e->power_w))
			in->power_w = in->power_now_w = e->power_w;
		if (!isnan(e->fan_pct))
			in->fan_pct = e->fan_pct;
	}
	/* Over the limit the driver lowers clocks until it fits: P ~ f^3 near the top. */
	if (in->power_w > g->power_limit) {
		sm *= cbrt(g->power_limit / in->power_w);
		in->power_w = g->power_limit;
		in->reasons |= nvmlClocksEventReasonSwPowerCap;
	}
	if (in->power_now_w > g->power_limit)
		in->power_now_w = g->power_limit;
	if (in->temp_c >= g->t_slowdown &&
	    !(in->reasons & nvmlClocksEventReasonSwThermalSlowdown)) {
		sm *= 0.85;
		in->reasons |= nvmlClocksEventReasonSwThermalSlowdown;
	}
	if (g->noise_power > 0) {
		double n1 = g->noise_power * sim_noise(seed, d->index, SIM_M_COUNT + 1, slot);
		double n2 = g->noise_power * sim_noise(seed, d->index, SIM_M_COUNT + 2, slot);
		bool capped = (in->reasons & nvmlClocksEventReasonSwPowerCap) != 0;
		in->power_w = capped_power(in->power_w, n1, capped, g->power_limit);
		in->power_now_w = capped_power(in->power_now_w, n2, capped, g->power_limit);
	}
	if (g->noise_temp > 0)
		in->temp_c += g->noise_temp * sim_noise(seed, d->index, SIM_M_COUNT + 3, slot);
	if (in->power_w < 0)
		in->power_w = 0;
	if (in->power_now_w < 0)
		in->power_now_w = 0;
	in->sm_mhz = clamp_mhz(sm);
	in->video_mhz =
	    g->clk_max_video ? clamp_mhz((double)g->clk_max_video * in->sm_mhz / g->clk_max_sm) : 0;
}

const sim_inst *sim_instant(struct nvmlDevice_st *d, const sim_time *now)
{
	double p = d->g->util_period;
	long long slot = (long long)floor(now->t / p + 1e-9);
	/* While pinned, scenario time stands still but workloads do not. */
	long long mono_slot = now->pinned ? now->mono / (int64_t)(p * 1e9) : 0;
	if (!d->inst_valid || d->inst.slot != slot || d->inst.mono_slot != mono_slot) {
		sim_state_at(d, now, (double)slot * p, &d->inst);
		d->inst.mono_slot = mono_slot;
		d->inst_valid = true;
	}
	return &d->inst;
}

/* ---- entering entry points ---- */

nvmlReturn_t sim_leave(nvmlReturn_t rc)
{
	pthread_mutex_unlock(&sim_g.mu);
	return rc;
}

nvmlReturn_t sim_enter(sim_time *now)
{
	pthread_mutex_lock(&sim_g.mu);
	if (sim_g.refs <= 0)
		return sim_leave(NVML_ERROR_UNINITIALIZED);
	time_now(now);
	sim_wl_refresh(now);
	return NVML_SUCCESS;
}

bool sim_valid_device(nvmlDevice_t device)
{
	if (!device || !sim_g.dev || !sim_g.scn)
		return false;
	uintptr_t p = (uintptr_t)device, lo = (uintptr_t)sim_g.dev;
	uintptr_t hi = (uintptr_t)(sim_g.dev + sim_g.scn->n_nvidia);
	return p >= lo && p < hi && (p - lo) % sizeof *sim_g.dev == 0;
}

bool sim_lost(const struct nvmlDevice_st *d, const sim_time *now)
{
	return now->t >= d->g->lost_after;
}

nvmlReturn_t sim_enter_dev(nvmlDevice_t device, const void *out, struct nvmlDevice_st **d,
                           sim_time *now)
{
	nvmlReturn_t rc = sim_enter(now);
	if (rc != NVML_SUCCESS)
		return rc;
	if (!sim_valid_device(device) || !out)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	*d = device;
	if (sim_lost(*d, now))
		return sim_leave(NVML_ERROR_GPU_IS_LOST);
	return NVML_SUCCESS;
}

nvmlReturn_t sim_copy_str(char *dst, unsigned length, const char *src)
{
	size_t n = strlen(src);
	if (length < n + 1)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	memcpy(dst, src, n + 1);
	return NVML_SUCCESS;
}

/* ---- init and shutdown ---- */

/* Why init failed, in the loading program's language (sim_i18n.h): kept for
 * gpuwhySimLastError and said on stderr unless GPUWHY_SIM_QUIET=1. */
__attribute__((format(printf, 1, 2))) static nvmlReturn_t init_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(sim_g.last_error, sizeof sim_g.last_error, SIM_(fmt), ap);
	va_end(ap);
	const char *quiet = getenv("GPUWHY_SIM_QUIET");
	if (!quiet || strcmp(quiet, "1"))
		fprintf(stderr, "gpuwhy-sim: %s\n", sim_g.last_error);
	return NVML_ERROR_DRIVER_NOT_LOADED;
}

static void release_all(void)
{
	for (int i = sim_g.n_wl - 1; i >= 0; i--)
		wl_drop(i);
	sim_retired_unmap(sim_g.retired);
	sim_g.retired = NULL;
	if (sim_g.dir_fd >= 0)
		close(sim_g.dir_fd);
	sim_g.dir_fd = -1;
	free(sim_g.dev);
	sim_g.dev = NULL;
	sim_scenario_free(sim_g.scn);
	sim_g.scn = NULL;
}

static nvmlReturn_t init_locked(void)
{
	if (sim_g.refs > 0) {
		sim_g.refs++;
		return NVML_SUCCESS;
	}
	sim_g.last_error[0] = '\0';
	const char *path = getenv("GPUWHY_SIM_SCENARIO");
	if (!path || !*path)
		return init_fail("GPUWHY_SIM_SCENARIO is not set: this is the simulated NVML; run "
		                 "through `gpuwhy --sim NAME`, or set it to a scenario .json file");
	const char *pin = getenv("GPUWHY_SIM_TIME");
	double t;
	if (pin && *pin && !parse_seconds(pin, &t))
		return init_fail("GPUWHY_SIM_TIME=%s: expected seconds of scenario time, like 12.5",
		                 pin);
	char err[600];
	sim_scenario *s;
	if (sim_scenario_load(path, &s, err, sizeof err) != 0)
		return init_fail("%s", err);
	if (sim_state_dir(path, sim_g.dir, sizeof sim_g.dir, err, sizeof err) != 0 ||
	    sim_clock_open(sim_g.dir, &sim_g.epoch, err, sizeof err) != 0) {
		sim_scenario_free(s);
		return init_fail("state directory: %s", err);
	}
	sim_g.dev = calloc((size_t)s->n_gpus, sizeof *sim_g.dev);
	if (!sim_g.dev) {
		sim_scenario_free(s);
		return init_fail("out of memory");
	}
	sim_g.scn = s;
	for (int i = 0; i < s->n_gpus; i++) {
		sim_g.dev[i].index = i;
		sim_g.dev[i].g = &s->gpus[i];
	}
	/* Workloads that died without closing their files are retired now. */
	sim_wl_reap(sim_g.dir);
	sim_g.retired = sim_retired_map(sim_g.dir);
	sim_g.n_wl = 0;
	sim_g.dir_mtime = -1;
	sim_g.dir_fd = open(sim_g.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	sim_g.touched_at = mono_now();
	pinned_wall_us = sim_wall_now_us();
	wl_scan();
	sim_g.refs = 1;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlInit_v2(void)
{
	pthread_mutex_lock(&sim_g.mu);
	return sim_leave(init_locked());
}

nvmlReturn_t nvmlInit(void)
{
	return nvmlInit_v2();
}

nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
	/* NO_GPUS 1, NO_ATTACH 2, FORCE_INIT 4: the simulated driver needs none of them. */
	if (flags & ~7u)
		return NVML_ERROR_INVALID_ARGUMENT;
	return nvmlInit_v2();
}

nvmlReturn_t nvmlShutdown(void)
{
	pthread_mutex_lock(&sim_g.mu);
	if (sim_g.refs <= 0)
		return sim_leave(NVML_ERROR_UNINITIALIZED);
	if (--sim_g.refs == 0)
		release_all();
	return sim_leave(NVML_SUCCESS);
}

const char *gpuwhySimLastError(void)
{
	return sim_g.last_error;
}

const char *nvmlErrorString(nvmlReturn_t result)
{
	switch (result) {
	case NVML_SUCCESS:
		return "Success";
	case NVML_ERROR_UNINITIALIZED:
		return "Uninitialized";
	case NVML_ERROR_INVALID_ARGUMENT:
		return "Invalid Argument";
	case NVML_ERROR_NOT_SUPPORTED:
		return "Not Supported";
	case NVML_ERROR_NO_PERMISSION:
		return "Insufficient Permissions";
	case NVML_ERROR_ALREADY_INITIALIZED:
		return "Already Initialized";
	case NVML_ERROR_NOT_FOUND:
		return "Not Found";
	case NVML_ERROR_INSUFFICIENT_SIZE:
		return "Insufficient Size";
	case NVML_ERROR_INSUFFICIENT_POWER:
		return "Insufficient External Power";
	case NVML_ERROR_DRIVER_NOT_LOADED:
		return "Driver Not Loaded";
	case NVML_ERROR_TIMEOUT:
		return "Timeout";
	case NVML_ERROR_IRQ_ISSUE:
		return "Interrupt Request Issue";
	case NVML_ERROR_LIBRARY_NOT_FOUND:
		return "NVML Shared Library Not Found";
	case NVML_ERROR_FUNCTION_NOT_FOUND:
		return "Function Not Found";
	case NVML_ERROR_CORRUPTED_INFOROM:
		return "Corrupted infoROM";
	case NVML_ERROR_GPU_IS_LOST:
		return "GPU is lost";
	case NVML_ERROR_RESET_REQUIRED:
		return "GPU requires restart";
	case NVML_ERROR_OPERATING_SYSTEM:
		return "The operating system has blocked the request.";
	case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
		return "RM has detected an NVML/RM version mismatch.";
	case NVML_ERROR_IN_USE:
		return "In use by another client";
	case NVML_ERROR_MEMORY:
		return "Insufficient Memory";
	case NVML_ERROR_NO_DATA:
		return "No data";
	case NVML_ERROR_VGPU_ECC_NOT_SUPPORTED:
		return "The requested vgpu operation is not available on target device, because "
		       "ECC is enabled";
	case NVML_ERROR_INSUFFICIENT_RESOURCES:
		return "Ran out of critical resources, other than memory";
	case NVML_ERROR_FREQ_NOT_SUPPORTED:
		return "The requested frequency is not supported";
	case NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
		return "The provided version is invalid/unsupported";
	case NVML_ERROR_DEPRECATED:
		return "The requested functionality has been deprecated";
	case NVML_ERROR_NOT_READY:
		return "The system is not ready for the request";
	case NVML_ERROR_GPU_NOT_FOUND:
		return "The GPU was not found";
	case NVML_ERROR_INVALID_STATE:
		return "The resource is in an invalid state";
	case NVML_ERROR_RESET_TYPE_NOT_SUPPORTED:
		return "The requested reset type is not supported";
	default:
		return "Unknown Error";
	}
}

/* ---- system ---- */

static nvmlReturn_t system_str(char *buf, unsigned length, bool driver)
{
	sim_time now;
	nvmlReturn_t rc = sim_enter(&now);
	if (rc != NVML_SUCCESS)
		return rc;
	if (!buf)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	return sim_leave(sim_copy_str(
	    buf, length, driver ? sim_g.scn->driver_version : sim_g.scn->nvml_version));
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
	return system_str(version, length, true);
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length)
{
	return system_str(version, length, false);
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion)
{
	sim_time now;
	nvmlReturn_t rc = sim_enter(&now);
	if (rc != NVML_SUCCESS)
		return rc;
	if (!cudaDriverVersion)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	*cudaDriverVersion = sim_g.scn->cuda_version;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion)
{
	return nvmlSystemGetCudaDriverVersion(cudaDriverVersion);
}

/*
 * The name the driver gives a process: the path it was started as (argv[0]
 * from /proc/PID/cmdline, "/usr/bin/python3"), as nvidia-smi's process list
 * shows it; the executable's path when the command line is empty (a zombie),
 * and the short name only when neither can be read.
 */
static bool process_path(unsigned pid, char *out, size_t cap)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/%u/cmdline", pid);
	FILE *f = fopen(p, "re");
	if (f) {
		size_t n = fread(out, 1, cap - 1, f);
		fclose(f);
		out[n] = '\0';
		if (out[0])
			return true;
	}
	snprintf(p, sizeof p, "/proc/%u/exe", pid);
	ssize_t n = readlink(p, out, cap - 1);
	if (n > 0) {
		out[n] = '\0';
		return true;
	}
	snprintf(p, sizeof p, "/proc/%u/comm", pid);
	f = fopen(p, "re");
	if (!f)
		return false;
	if (!fgets(out, (int)cap, f))
		out[0] = '\0';
	fclose(f);
	out[strcspn(out, "\n")] = '\0';
	return true;
}

nvmlReturn_t nvmlSystemGetProcessName(unsigned int pid, char *name, unsigned int length)
{
	sim_time now;
	nvmlReturn_t rc = sim_enter(&now);
	if (rc != NVML_SUCCESS)
		return rc;
	if (!name || length == 0)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	/* Processes the scenario places on a GPU have the name the scenario gives them. */
	for (int i = 0; i < sim_g.scn->n_procs; i++)
		if (sim_g.scn->procs[i].pid == pid)
			return sim_leave(sim_copy_str(name, length, sim_g.scn->procs[i].name));
	char exe[PATH_MAX];
	if (!process_path(pid, exe, sizeof exe))
		return sim_leave(NVML_ERROR_NOT_FOUND);
	return sim_leave(sim_copy_str(name, length, exe));
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
	sim_time now;
	nvmlReturn_t rc = sim_enter(&now);
	if (rc != NVML_SUCCESS)
		return rc;
	if (!deviceCount)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	*deviceCount = (unsigned)sim_g.scn->n_nvidia; /* AMD GPUs are sysfs's */
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetCount(unsigned int *deviceCount)
{
	return nvmlDeviceGetCount_v2(deviceCount);
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
	sim_time now;
	nvmlReturn_t rc = sim_enter(&now);
	if (rc != NVML_SUCCESS)
		return rc;
	if (!device || index >= (unsigned)sim_g.scn->n_nvidia)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	*device = &sim_g.dev[index];
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device)
{
	return nvmlDeviceGetHandleByIndex_v2(index, device);
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
	sim_time now;
	nvmlReturn_t rc = sim_enter(&now);
	if (rc != NVML_SUCCESS)
		return rc;
	if (!uuid || !device)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	for (int i = 0; i < sim_g.scn->n_nvidia; i++)
		if (!strcmp(sim_g.scn->gpus[i].uuid, uuid)) {
			*device = &sim_g.dev[i];
			return sim_leave(NVML_SUCCESS);
		}
	return sim_leave(NVML_ERROR_NOT_FOUND);
}

/* "0000:1b:00.0" and "00000000:1B:00.0" name the same device. */
static bool same_bus(const char *a, const char *b)
{
	unsigned d1, b1, v1, f1, d2, b2, v2, f2;
	int n1 = 0, n2 = 0;
	if (sscanf(a, "%x:%x:%x.%x%n", &d1, &b1, &v1, &f1, &n1) != 4 || a[n1] ||
	    sscanf(b, "%x:%x:%x.%x%n", &d2, &b2, &v2, &f2, &n2) != 4 || b[n2])
		return false;
	return d1 == d2 && b1 == b2 && v1 == v2 && f1 == f2;
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device)
{
	sim_time now;
	nvmlReturn_t rc = sim_enter(&now);
	if (rc != NVML_SUCCESS)
		return rc;
	if (!pciBusId || !device)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	for (int i = 0; i < sim_g.scn->n_nvidia; i++)
		if (same_bus(sim_g.scn->gpus[i].pci.bus_id, pciBusId)) {
			*device = &sim_g.dev[i];
			return sim_leave(NVML_SUCCESS);
		}
	return sim_leave(NVML_ERROR_NOT_FOUND);
}
