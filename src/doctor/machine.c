/* machine.c - read what the device layer sees into a doctor_machine, once. */
#include <stdbool.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "doctor/doctor_int.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

/* Open quietly: the failure's kind and text become the doctor's own findings. */
static int open_quiet(gpu_ctx **ctx, char *msg, size_t len, gpu_fail_kind *kind)
{
	gw_fail f = {0};
	gpu_open_opts oo = {.gpus = NULL, .failure = &f, .fail_kind = kind};
	int rc = gpu_open(&oo, ctx);
	char line[512]; /* English, as the doctor's data keep it */
	snprintf(msg, len, "%s", rc ? gw_fail_text(&f, line, sizeof line) : "");
	return rc;
}

static doctor_nvml_state classify(gpu_fail_kind kind)
{
	switch (kind) {
	case GPU_FAIL_MISMATCH:
		return DOCTOR_NVML_MISMATCH;
	case GPU_FAIL_NO_PERMISSION:
		return DOCTOR_NVML_NO_PERMISSION;
	case GPU_FAIL_NOT_LOADED:
		return DOCTOR_NVML_NOT_LOADED;
	case GPU_FAIL_NO_LIBRARY:
	case GPU_FAIL_BAD_LIBRARY:
		return DOCTOR_NVML_NO_LIBRARY;
	default:
		return DOCTOR_NVML_OTHER;
	}
}

static int find_nvml_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	char *out = arg;
	if (info->dlpi_name && strstr(info->dlpi_name, "libnvidia-ml")) {
		snprintf(out, 512, "%s", info->dlpi_name);
		return 1;
	}
	return 0;
}

doctor_gpu *doctor_machine_add_gpu(doctor_machine *m)
{
	doctor_gpu *g = gw_xrealloc(m->gpu, (size_t)(m->n + 1) * sizeof *g);
	m->gpu = g;
	g = &m->gpu[m->n];
	memset(g, 0, sizeof *g);
	g->st.index = m->n;
	m->n++;
	return g;
}

bool doctor_gpu_selected(const doctor_machine *m, int i)
{
	return !m->has_selection || (i >= 0 && i < GPU_MAX && m->selected[i]);
}

static int apply_selection(doctor_machine *m, const char *gpus)
{
	if (!gpus || !*gpus || m->n == 0)
		return 0;
	gpu_ident *ids = calloc((size_t)m->n, sizeof *ids);
	int sel[GPU_MAX];
	char err[256];
	for (int i = 0; i < m->n; i++)
		snprintf(ids[i].uuid, sizeof ids[i].uuid, "%s", m->gpu[i].st.uuid);
	int k = gpu_parse_selection(gpus, ids, m->n, sel, GPU_MAX, err, sizeof err);
	free(ids);
	if (k < 0)
		return gw_error(GW_EXIT_USAGE, "--gpus", N_("use indices or (short) UUIDs"), "%s",
		                err);
	m->has_selection = true;
	for (int j = 0; j < k; j++)
		m->selected[sel[j]] = true;
	return 0;
}

int doctor_machine_load(doctor_machine *m, const char *gpus)
{
	memset(m, 0, sizeof *m);
	const char *sim = getenv("GPUWHY_SIM_SCENARIO");
	m->simulated = sim && *sim && getenv("GPUWHY_NVML");
	gpu_ctx *ctx = NULL;
	gpu_fail_kind kind;
	if (open_quiet(&ctx, m->error, sizeof m->error, &kind) != 0) {
		m->nvml = classify(kind);
		return 0;
	}
	m->nvml = DOCTOR_NVML_OK;
	m->error[0] = '\0';
	snprintf(m->driver, sizeof m->driver, "%s", gpu_driver_version(ctx));
	snprintf(m->cuda, sizeof m->cuda, "%s", gpu_cuda_driver_version(ctx));
	snprintf(m->nvml_version, sizeof m->nvml_version, "%s", gpu_nvml_version(ctx));
	char obj[512] = "";
	dl_iterate_phdr(find_nvml_object, obj);
	const char *lib = obj[0] ? obj : gpu_library_path(ctx);
	char *real = realpath(lib, NULL);
	snprintf(m->lib_path, sizeof m->lib_path, "%s", real ? real : lib);
	free(real);
	int n = gpu_count(ctx);
	for (int i = 0; i < n; i++) {
		doctor_gpu *g = doctor_machine_add_gpu(m);
		g->st = *gpu_static_info(ctx, i);
		gpu_sample(ctx, i, &g->v);
		int k = gpu_processes(ctx, i, g->procs, DOCTOR_PROCS_MAX);
		g->procs_ok = k >= 0;
		g->nproc = k > 0 ? k : 0;
		g->lost = g->v.lost || gpu_is_lost(ctx, i);
	}
	gpu_close(ctx);
	return apply_selection(m, gpus);
}

void doctor_machine_free(doctor_machine *m)
{
	free(m->gpu);
	m->gpu = NULL;
	m->n = 0;
}

/* ---- the same, in a child process with a deadline ---- */

static bool write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

/* Read len bytes before deadline; false on EOF, error or timeout. */
static bool read_all(int fd, void *buf, size_t len, int64_t deadline)
{
	char *p = buf;
	while (len) {
		int64_t left = deadline - gw_mono_ns();
		if (left <= 0)
			return false;
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		int ms = (int)(left / 1000000 + 1);
		int r = poll(&pfd, 1, ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		ssize_t n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

int doctor_machine_load_guarded(doctor_machine *m, const char *gpus, int64_t timeout_ns)
{
	int fd[2];
	memset(m, 0, sizeof *m);
	if (pipe2(fd, O_CLOEXEC) != 0)
		return doctor_machine_load(m, gpus);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return doctor_machine_load(m, gpus);
	}
	if (pid == 0) {
		close(fd[0]);
		int rc = doctor_machine_load(m, gpus);
		bool ok = write_all(fd[1], m, sizeof *m) &&
		          (m->n == 0 || write_all(fd[1], m->gpu, (size_t)m->n * sizeof *m->gpu));
		fflush(stderr);
		_exit(ok ? rc : 125);
	}
	close(fd[1]);
	int64_t deadline = gw_mono_ns() + timeout_ns;
	bool ok = read_all(fd[0], m, sizeof *m, deadline);
	m->gpu = NULL;
	if (ok && m->n > 0) {
		if (m->n > GPU_MAX)
			ok = false;
		else {
			m->gpu = calloc((size_t)m->n, sizeof *m->gpu);
			ok = m->gpu &&
			     read_all(fd[0], m->gpu, (size_t)m->n * sizeof *m->gpu, deadline);
		}
	}
	close(fd[0]);
	int st = 0;
	if (!ok) {
		/* Either the child died (NVML crashed it) or it is still stuck inside NVML. */
		bool died = false;
		for (int k = 0; k < 20 && !died; k++) {
			died = waitpid(pid, &st, WNOHANG) == pid;
			if (!died && gw_mono_ns() < deadline)
				gw_sleep_ns(10000000LL); /* EOF comes a moment before the exit */
		}
		if (!died) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
		}
		free(m->gpu);
		memset(m, 0, sizeof *m);
		m->nvml = DOCTOR_NVML_OTHER;
		if (died && WIFSIGNALED(st))
			snprintf(m->error, sizeof m->error,
			         DOCTOR_("NVML crashed the process that loaded it (signal %d)"),
			         WTERMSIG(st));
		else if (died)
			snprintf(m->error, sizeof m->error,
			         DOCTOR_("the process that loaded NVML exited early (status %d)"),
			         WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		else
			snprintf(m->error, sizeof m->error,
			         DOCTOR_("NVML did not answer within %lld s (a hung GPU or driver: "
			                 "look for Xid "
			                 "79 or 119 in the kernel log)"),
			         (long long)(timeout_ns / 1000000000LL));
		return 0;
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(st) && WEXITSTATUS(st) == GW_EXIT_USAGE)
		return GW_EXIT_USAGE;
	return 0;
}
