/* sim_state.c - the simulated driver's shared state (see sim_state.h). */
#include "sim_state.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sim_i18n.h"

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---- directories ---- */

void sim_state_name(const char *scenario_path, char *out, size_t outlen)
{
	const char *b = strrchr(scenario_path, '/');
	b = b ? b + 1 : scenario_path;
	size_t n = strlen(b);
	if (n > 5 && !strcmp(b + n - 5, ".json"))
		n -= 5;
	if (n == 0 || outlen < 2) {
		snprintf(out, outlen, "scenario");
		return;
	}
	size_t k = 0;
	for (size_t i = 0; i < n && k + 1 < outlen; i++) {
		char ch = b[i];
		bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		          (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.';
		out[k++] = ok ? ch : '_';
	}
	out[k] = '\0';
	if (out[0] == '.')
		out[0] = '_';
}

/* mkdir 0700 if missing; refuse a directory that is not ours (shared /tmp). */
static int own_dir(const char *path, char *err, size_t errlen)
{
	if (mkdir(path, 0700) != 0 && errno != EEXIST) {
		snprintf(err, errlen, SIM_("%s: cannot create: %s"), path, strerror(errno));
		return -1;
	}
	struct stat st;
	if (lstat(path, &st) != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, SIM_("%s: not a directory"), path);
		return -1;
	}
	if (st.st_uid != getuid()) {
		snprintf(err, errlen, SIM_("%s: owned by another user (set GPUWHY_SIM_STATE)"),
		         path);
		return -1;
	}
	return 0;
}

int sim_state_dir(const char *scenario_path, char *out, size_t outlen, char *err, size_t errlen)
{
	char base[PATH_MAX];
	const char *env = getenv("GPUWHY_SIM_STATE");
	if (env && *env) {
		snprintf(base, sizeof base, "%s", env);
	} else {
		const char *run = getenv("XDG_RUNTIME_DIR");
		snprintf(base, sizeof base, "%s/gpuwhy-sim-%u", run && *run ? run : "/tmp",
		         (unsigned)getuid());
	}
	if (own_dir(base, err, errlen) != 0)
		return -1;
	char name[128];
	sim_state_name(scenario_path, name, sizeof name);
	if ((size_t)snprintf(out, outlen, "%s/%s", base, name) >= outlen) {
		snprintf(err, errlen, SIM_("%s: path too long"), base);
		return -1;
	}
	return own_dir(out, err, errlen);
}

static int lock_dir(const char *dir)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/lock", dir);
	int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	while (flock(fd, LOCK_EX) != 0)
		if (errno != EINTR) {
			close(fd);
			return -1;
		}
	return fd;
}

static void unlock_dir(int fd)
{
	if (fd >= 0)
		close(fd); /* releases the flock */
}

/* ---- the clock ---- */

int sim_clock_read(const char *dir, sim_epoch *out)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/clock", dir);
	FILE *f = fopen(p, "re");
	if (!f)
		return -1;
	long long m = 0, w = 0;
	int n = fscanf(f, "gpuwhy-sim-clock 1 mono_ns %lld wall_ns %lld", &m, &w);
	fclose(f);
	if (n != 2 || m < 0)
		return -1;
	out->mono_ns = m;
	out->wall_ns = w;
	return 0;
}

/* Write a file atomically: a private temporary name, then rename. */
static int write_atomic(const char *dir, const char *name, const void *data, size_t len)
{
	char tmp[PATH_MAX], dst[PATH_MAX];
	snprintf(tmp, sizeof tmp, "%s/.%s.%d", dir, name, (int)getpid());
	snprintf(dst, sizeof dst, "%s/%s", dir, name);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	const char *p = data;
	size_t left = len;
	while (left) {
		ssize_t n = write(fd, p, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			unlink(tmp);
			return -1;
		}
		p += n;
		left -= (size_t)n;
	}
	if (close(fd) != 0 || rename(tmp, dst) != 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

static int start_clock(const char *dir, sim_epoch *e)
{
	e->mono_ns = mono_ns();
	e->wall_ns = wall_ns();
	char text[128];
	int n = snprintf(text, sizeof text,
	                 "gpuwhy-sim-clock 1 mono_ns %" PRId64 " wall_ns %" PRId64 "\n", e->mono_ns,
	                 e->wall_ns);
	sim_retired_file *r = calloc(1, sizeof *r);
	if (!r)
		return -1;
	r->magic = SIM_RETIRED_MAGIC;
	r->version = SIM_WL_VERSION;
	/* The retired totals belong to one run of the clock: new clock, new file. */
	int rc = write_atomic(dir, "retired", r, sizeof *r);
	free(r);
	if (rc == 0)
		rc = write_atomic(dir, "clock", text, (size_t)n);
	return rc;
}

static long idle_reset_s(void)
{
	const char *s = getenv("GPUWHY_SIM_IDLE_RESET");
	if (!s || !*s)
		return 600;
	char *end;
	long v = strtol(s, &end, 10);
	return (*end || v < 0) ? 600 : v;
}

int sim_clock_open(const char *dir, sim_epoch *out, char *err, size_t errlen)
{
	int lk = lock_dir(dir);
	if (lk < 0) {
		snprintf(err, errlen, "%s/lock: %s", dir, strerror(errno));
		return -1;
	}
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/clock", dir);
	struct stat st, rst;
	char rp[PATH_MAX];
	snprintf(rp, sizeof rp, "%s/retired", dir);
	bool restart = sim_clock_read(dir, out) != 0 || stat(p, &st) != 0 || stat(rp, &rst) != 0 ||
	               rst.st_size != (off_t)sizeof(sim_retired_file);
	long idle = idle_reset_s();
	if (!restart) {
		/* After a reboot CLOCK_MONOTONIC restarts below the stored origin. */
		int64_t unused_ns =
		    wall_ns() - ((int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec);
		restart = out->mono_ns > mono_ns() || (idle > 0 && unused_ns > idle * 1000000000LL);
	}
	int rc = restart ? start_clock(dir, out) : 0;
	if (rc == 0)
		utimensat(AT_FDCWD, p, NULL, 0);
	else
		snprintf(err, errlen, SIM_("%s: cannot write the scenario clock: %s"), dir,
		         strerror(errno));
	unlock_dir(lk);
	return rc;
}

void sim_clock_touch(const char *dir)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/clock", dir);
	utimensat(AT_FDCWD, p, NULL, 0);
}

int sim_clock_reset(const char *dir, char *err, size_t errlen)
{
	int lk = lock_dir(dir);
	if (lk < 0) {
		snprintf(err, errlen, "%s/lock: %s", dir, strerror(errno));
		return -1;
	}
	sim_epoch e;
	int rc = start_clock(dir, &e);
	if (rc != 0)
		snprintf(err, errlen, SIM_("%s: cannot write the scenario clock: %s"), dir,
		         strerror(errno));
	unlock_dir(lk);
	return rc;
}

/* ---- activity model ---- */

void sim_kernel_weights(unsigned kernel_us, int kind, double w[SIM_ACC_N])
{
	memset(w, 0, SIM_ACC_N * sizeof *w);
	if (kind == SIM_WL_COPY) {
		/* A copy engine writing device memory: no kernel runs, so not "busy". */
		w[SIM_ACC_DRAM] = 0.1;
		return;
	}
	w[SIM_ACC_BUSY] = 1.0;
	if (kind == SIM_WL_COMM) {
		/* A collective waiting or moving data: the GPU counts as busy, few SMs work. */
		w[SIM_ACC_SM] = 0.08;
		w[SIM_ACC_OCC] = 0.02;
		w[SIM_ACC_DRAM] = 0.25;
		w[SIM_ACC_INT] = 0.02;
		return;
	}
	/*
	 * Between short kernels the SMs drain and refill (launch latency of a few
	 * microseconds), so SM activity is the kernel's share of kernel + 40 us.
	 */
	double k = kernel_us ? (double)kernel_us : 1.0;
	double sm = 0.95 * k / (k + 40.0);
	w[SIM_ACC_SM] = sm;
	w[SIM_ACC_OCC] = 0.55 * sm;
	w[SIM_ACC_TENSOR] = 0.6 * sm;
	w[SIM_ACC_DRAM] = 0.05 + 0.4 * sm;
	w[SIM_ACC_FP32] = 0.25 * sm;
	w[SIM_ACC_FP16] = 0.1 * sm;
	w[SIM_ACC_INT] = 0.1 * sm;
}

void sim_interval_weights(const sim_wl_interval *e, double w[SIM_ACC_N])
{
	sim_kernel_weights(e->kernel_us, e->kind, w);
	if (e->kind != SIM_WL_COMPUTE || !e->dram_pct)
		return;
	double dram = e->dram_pct > 100 ? 1.0 : e->dram_pct / 100.0;
	double idle = 1.0 - 0.7 * dram; /* pipes waiting on memory */
	w[SIM_ACC_DRAM] = dram;
	w[SIM_ACC_TENSOR] *= idle;
	w[SIM_ACC_FP64] *= idle;
	w[SIM_ACC_FP32] *= idle;
	w[SIM_ACC_FP16] *= idle;
	w[SIM_ACC_INT] *= idle;
}

/* ---- PIDs ---- */

uint64_t sim_pid_starttime(pid_t pid)
{
	char p[64], buf[1024];
	snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* The command name may contain spaces and parentheses: start after the last ')'. */
	char *q = strrchr(buf, ')');
	if (!q)
		return 0;
	q++;
	/* Fields 3.. follow; starttime is field 22, the 20th after the ')'. */
	for (int field = 3; field < 22; field++) {
		q = strchr(q + 1, ' ');
		if (!q)
			return 0;
	}
	return strtoull(q + 1, NULL, 10);
}

bool sim_pid_alive(uint32_t pid, uint64_t starttime)
{
	if (pid == 0 || pid > INT_MAX)
		return false;
	if (kill((pid_t)pid, 0) != 0 && errno != EPERM)
		return false;
	if (starttime == 0)
		return true;
	uint64_t now = sim_pid_starttime((pid_t)pid);
	return now == 0 || now == starttime;
}

/* ---- sequence lock ---- */

static void seq_begin(uint64_t *seq)
{
	__atomic_store_n(seq, *seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static void seq_end(uint64_t *seq)
{
	__atomic_store_n(seq, *seq + 1, __ATOMIC_RELEASE);
}

/* ---- writer ---- */

struct sim_wl {
	sim_wl_file *f;
	unsigned dram_pct; /* of the kernels pushed next */
	char dir[PATH_MAX];
	char path[PATH_MAX];
};

int sim_wl_create(const char *dir, unsigned gpu, sim_wl **out, char *err, size_t errlen)
{
	*out = NULL;
	if (gpu >= SIM_MAX_GPUS) {
		snprintf(err, errlen, SIM_("GPU index %u is out of range"), gpu);
		return -1;
	}
	sim_wl *w = calloc(1, sizeof *w);
	if (!w) {
		snprintf(err, errlen, SIM_("out of memory"));
		return -1;
	}
	int pid = (int)getpid();
	char tmp[PATH_MAX];
	snprintf(w->dir, sizeof w->dir, "%s", dir);
	snprintf(tmp, sizeof tmp, "%s/.w%d-g%u.tmp", dir, pid, gpu);
	snprintf(w->path, sizeof w->path, "%s/w%d-g%u.state", dir, pid, gpu);
	unlink(tmp);
	int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)sizeof(sim_wl_file)) != 0) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		if (fd >= 0)
			close(fd);
		unlink(tmp);
		free(w);
		return -1;
	}
	void *m = mmap(NULL, sizeof(sim_wl_file), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		snprintf(err, errlen, "%s: mmap: %s", tmp, strerror(errno));
		unlink(tmp);
		free(w);
		return -1;
	}
	w->f = m;
	w->f->version = SIM_WL_VERSION;
	w->f->pid = (uint32_t)pid;
	w->f->gpu = gpu;
	w->f->starttime = sim_pid_starttime(pid);
	w->f->ring_cap = SIM_WL_RING;
	w->f->shown_pid = (uint32_t)pid;
	__atomic_store_n(&w->f->magic, SIM_WL_MAGIC, __ATOMIC_RELEASE);
	/* Readers only ever see complete files: they appear by rename. */
	if (rename(tmp, w->path) != 0) {
		snprintf(err, errlen, "%s: %s", w->path, strerror(errno));
		munmap(m, sizeof(sim_wl_file));
		unlink(tmp);
		free(w);
		return -1;
	}
	*out = w;
	return 0;
}

void sim_wl_set_mem(sim_wl *w, uint64_t bytes)
{
	seq_begin(&w->f->seq);
	w->f->mem_bytes = bytes;
	seq_end(&w->f->seq);
}

void sim_wl_set_shown_pid(sim_wl *w, uint32_t pid)
{
	seq_begin(&w->f->seq);
	w->f->shown_pid = pid;
	seq_end(&w->f->seq);
}

bool sim_wl_running(const sim_wl_file *hdr)
{
	return hdr->exited_ns == 0 && sim_pid_alive(hdr->pid, hdr->starttime);
}

void sim_wl_set_dram(sim_wl *w, unsigned pct)
{
	w->dram_pct = pct > 100 ? 100 : pct;
}

static void add_weighted(double acc[SIM_ACC_N], const sim_wl_interval *e, double secs)
{
	double wt[SIM_ACC_N];
	sim_interval_weights(e, wt);
	for (int i = 0; i < SIM_ACC_H2D; i++)
		acc[i] += wt[i] * secs;
}

void sim_wl_push(sim_wl *w, int64_t start_ns, int64_t end_ns, unsigned kernel_us, int kind,
                 uint64_t h2d_bytes, uint64_t peer_bytes)
{
	sim_wl_file *f = w->f;
	seq_begin(&f->seq);
	f->kernel_us = kernel_us;
	sim_wl_interval *last = f->count ? &f->ring[(f->count - 1) % f->ring_cap] : NULL;
	if (last && start_ns < last->end_ns)
		start_ns = last->end_ns;
	if (end_ns > start_ns) {
		sim_wl_interval e = {.start_ns = start_ns,
		                     .end_ns = end_ns,
		                     .kernel_us = kernel_us,
		                     .kind = (uint16_t)kind,
		                     .dram_pct =
		                         (uint16_t)(kind == SIM_WL_COMPUTE ? w->dram_pct : 0),
		                     .h2d_bytes = h2d_bytes,
		                     .peer_bytes = peer_bytes};
		/* Back-to-back phases of the same kind become one interval, so the ring lasts. */
		if (last && last->kind == kind && last->kernel_us == kernel_us &&
		    last->dram_pct == e.dram_pct && start_ns - last->end_ns <= 50000) {
			add_weighted(f->acc, &e, (double)(end_ns - last->end_ns) / 1e9);
			last->end_ns = end_ns;
			last->h2d_bytes += h2d_bytes;
			last->peer_bytes += peer_bytes;
		} else {
			add_weighted(f->acc, &e, (double)(end_ns - start_ns) / 1e9);
			f->ring[f->count % f->ring_cap] = e;
			f->count++;
		}
		f->acc[SIM_ACC_H2D] += (double)h2d_bytes;
		f->acc[SIM_ACC_PEER] += (double)peer_bytes;
	}
	seq_end(&f->seq);
}

void sim_wl_set_end(sim_wl *w, int64_t end_ns)
{
	sim_wl_file *f = w->f;
	if (!f->count)
		return;
	seq_begin(&f->seq);
	sim_wl_interval *last = &f->ring[(f->count - 1) % f->ring_cap];
	if (end_ns < last->start_ns)
		end_ns = last->start_ns;
	add_weighted(f->acc, last, (double)(end_ns - last->end_ns) / 1e9);
	last->end_ns = end_ns;
	seq_end(&f->seq);
}

/* Under the directory lock: move a file's totals into retired, then remove it. */
static void retire_locked(const char *dir, const char *path, const sim_wl_file *f)
{
	char rp[PATH_MAX];
	snprintf(rp, sizeof rp, "%s/retired", dir);
	int fd = open(rp, O_RDWR | O_CLOEXEC);
	sim_retired_file *r = MAP_FAILED;
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size == (off_t)sizeof *r)
		r = mmap(NULL, sizeof *r, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (fd >= 0)
		close(fd);
	if (r == MAP_FAILED || r->magic != SIM_RETIRED_MAGIC || f->gpu >= SIM_MAX_GPUS) {
		if (r != MAP_FAILED)
			munmap(r, sizeof *r);
		unlink(path);
		return;
	}
	/* What has happened so far; a dead process's planned future never comes. */
	double tot[SIM_ACC_N] = {0};
	sim_wl_totals(f, mono_ns(), tot);
	/* Readers retry when gen moves, so they never count a file twice or not at all. */
	seq_begin(&r->gen);
	for (int i = 0; i < SIM_ACC_N; i++)
		r->acc[f->gpu][i] += tot[i];
	unlink(path);
	seq_end(&r->gen);
	munmap(r, sizeof *r);
}

void sim_wl_close(sim_wl *w)
{
	if (!w)
		return;
	/* The GPU saw what the process did until now; the rest of its plan never happens. */
	int64_t now = mono_ns();
	sim_wl_file *f = w->f;
	if (f->count && f->ring[(f->count - 1) % f->ring_cap].end_ns > now)
		sim_wl_set_end(w, now);
	seq_begin(&f->seq);
	f->exited_ns = now;
	f->mem_bytes = 0;
	seq_end(&f->seq);
	munmap(w->f, sizeof(sim_wl_file));
	sim_wl_reap(w->dir);
	free(w);
}

/* When a gone process's file may be retired: keep_ns after its last activity ended. */
static bool expired(const sim_wl_file *f, int64_t now, int64_t keep_ns)
{
	sim_wl_file h;
	if (!sim_wl_header(f, &h))
		return false;
	if (h.exited_ns == 0 && sim_pid_alive(h.pid, h.starttime))
		return false;
	/* Nothing done: nothing to keep. */
	if (!h.count)
		return true;
	return now - f->ring[(h.count - 1) % h.ring_cap].end_ns > keep_ns;
}

int sim_wl_reap(const char *dir)
{
	return sim_wl_reap_after(dir, SIM_WL_KEEP_NS);
}

int sim_wl_reap_after(const char *dir, int64_t keep_ns)
{
	int lk = lock_dir(dir);
	DIR *d = opendir(dir);
	int n = 0;
	int64_t now = mono_ns();
	if (d) {
		struct dirent *e;
		while ((e = readdir(d))) {
			size_t len = strlen(e->d_name);
			if (e->d_name[0] != 'w' || len < 7 || strcmp(e->d_name + len - 6, ".state"))
				continue;
			char p[PATH_MAX];
			snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
			const sim_wl_file *f = sim_wl_map(p);
			if (!f)
				continue;
			if (expired(f, now, keep_ns)) {
				retire_locked(dir, p, f);
				n++;
			}
			sim_wl_unmap(f);
		}
		closedir(d);
	}
	unlock_dir(lk);
	return n;
}

/* ---- reader ---- */

const sim_wl_file *sim_wl_map(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	void *m = MAP_FAILED;
	if (fstat(fd, &st) == 0 && st.st_size == (off_t)sizeof(sim_wl_file))
		m = mmap(NULL, sizeof(sim_wl_file), PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return NULL;
	const sim_wl_file *f = m;
	if (__atomic_load_n(&f->magic, __ATOMIC_ACQUIRE) != SIM_WL_MAGIC ||
	    f->version != SIM_WL_VERSION || f->ring_cap != SIM_WL_RING || f->gpu >= SIM_MAX_GPUS) {
		munmap(m, sizeof(sim_wl_file));
		return NULL;
	}
	return f;
}

void sim_wl_unmap(const sim_wl_file *f)
{
	if (f)
		munmap((void *)f, sizeof *f);
}

const sim_retired_file *sim_retired_map(const char *dir)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/retired", dir);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	void *m = MAP_FAILED;
	if (fstat(fd, &st) == 0 && st.st_size == (off_t)sizeof(sim_retired_file))
		m = mmap(NULL, sizeof(sim_retired_file), PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return NULL;
	if (((const sim_retired_file *)m)->magic != SIM_RETIRED_MAGIC) {
		munmap(m, sizeof(sim_retired_file));
		return NULL;
	}
	return m;
}

void sim_retired_unmap(const sim_retired_file *f)
{
	if (f)
		munmap((void *)f, sizeof *f);
}

static uint64_t seq_read_begin(const uint64_t *seq)
{
	uint64_t s;
	for (int spin = 0; ((s = __atomic_load_n(seq, __ATOMIC_ACQUIRE)) & 1) && spin < 10000;
	     spin++)
		;
	return s;
}

static bool seq_read_retry(const uint64_t *seq, uint64_t s)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(seq, __ATOMIC_RELAXED) != s;
}

bool sim_wl_header(const sim_wl_file *f, sim_wl_file *hdr)
{
	for (int tries = 0; tries < 100; tries++) {
		uint64_t s = seq_read_begin(&f->seq);
		memcpy(hdr, f, offsetof(sim_wl_file, ring));
		if (!seq_read_retry(&f->seq, s))
			return true;
	}
	return false;
}

/* Add the part of e inside [a, b). */
static void add_overlap(double acc[SIM_ACC_N], const sim_wl_interval *e, int64_t a, int64_t b)
{
	int64_t s = e->start_ns > a ? e->start_ns : a;
	int64_t t = e->end_ns < b ? e->end_ns : b;
	if (t <= s || e->end_ns <= e->start_ns)
		return;
	double part = (double)(t - s) / (double)(e->end_ns - e->start_ns);
	add_weighted(acc, e, (double)(t - s) / 1e9);
	acc[SIM_ACC_H2D] += part * (double)e->h2d_bytes;
	acc[SIM_ACC_PEER] += part * (double)e->peer_bytes;
}

void sim_wl_activity(const sim_wl_file *f, int64_t a_ns, int64_t b_ns, double acc[SIM_ACC_N])
{
	if (b_ns <= a_ns)
		return;
	for (int tries = 0; tries < 100; tries++) {
		uint64_t s = seq_read_begin(&f->seq);
		double part[SIM_ACC_N] = {0};
		uint64_t count = f->count, cap = f->ring_cap;
		uint64_t lo = count > cap ? count - cap : 0;
		int64_t oldest = INT64_MIN;
		bool reached = false;
		for (uint64_t k = count; k > lo; k--) {
			sim_wl_interval e = f->ring[(k - 1) % cap];
			if (e.end_ns <= a_ns) {
				reached = true;
				break;
			}
			oldest = e.start_ns;
			add_overlap(part, &e, a_ns, b_ns);
		}
		if (seq_read_retry(&f->seq, s))
			continue;
		/* The ring was overwritten before a_ns: assume the unseen part was like the rest.
		 */
		if (!reached && lo > 0 && oldest > a_ns && oldest < b_ns) {
			double scale = (double)(b_ns - a_ns) / (double)(b_ns - oldest);
			for (int i = 0; i < SIM_ACC_N; i++)
				part[i] *= scale;
		}
		for (int i = 0; i < SIM_ACC_N; i++)
			acc[i] += part[i];
		return;
	}
}

void sim_wl_totals(const sim_wl_file *f, int64_t now_ns, double acc[SIM_ACC_N])
{
	for (int tries = 0; tries < 100; tries++) {
		uint64_t s = seq_read_begin(&f->seq);
		double part[SIM_ACC_N];
		memcpy(part, f->acc, sizeof part);
		if (f->count) {
			sim_wl_interval e = f->ring[(f->count - 1) % f->ring_cap];
			if (e.end_ns > now_ns && e.end_ns > e.start_ns) {
				double fut[SIM_ACC_N] = {0};
				add_overlap(fut, &e, now_ns > e.start_ns ? now_ns : e.start_ns,
				            e.end_ns);
				for (int i = 0; i < SIM_ACC_N; i++)
					part[i] -= fut[i];
			}
		}
		if (seq_read_retry(&f->seq, s))
			continue;
		for (int i = 0; i < SIM_ACC_N; i++)
			acc[i] += part[i] > 0 ? part[i] : 0;
		return;
	}
}
