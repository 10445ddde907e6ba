#include "util/child.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/strbuf.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

extern char **environ;

typedef struct {
	pid_t pid;
	int fd[2]; /* stdout, stderr read ends; -1 once closed */
	bool reaped;
} child_run;

typedef struct {
	gw_strbuf b;
	bool *trunc;
} sink;

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* In the child after fork: only async-signal-safe calls until exec. */
static void child_exec(const gw_child_spec *s, int out_w, int err_w, int status_w)
{
	setpgid(0, 0);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	int devnull = open("/dev/null", O_RDONLY);
	if (devnull >= 0) {
		dup2(devnull, 0);
		if (devnull != 0)
			close(devnull);
	}
	dup2(out_w, 1);
	dup2(err_w, 2);
	/* No descriptor of the parent's leaks into the program (status_w closes at exec). */
	if (status_w > 3)
		close_range(3, (unsigned)status_w - 1, 0);
	close_range((unsigned)status_w + 1, ~0U, 0);
	execve(s->path, s->argv, s->envp ? s->envp : environ);
	int e = errno;
	ssize_t w = write(status_w, &e, sizeof e);
	(void)w;
	_exit(127);
}

/* Start one child. Fills res->started / start_errno; returns the run state. */
static child_run start_one(const gw_child_spec *s, gw_child_result *res)
{
	child_run r = {.pid = -1, .fd = {-1, -1}, .reaped = true};
	int out[2], err[2], st[2];
	if (pipe2(out, O_CLOEXEC) != 0) {
		res->start_errno = errno;
		return r;
	}
	if (pipe2(err, O_CLOEXEC) != 0) {
		res->start_errno = errno;
		close(out[0]);
		close(out[1]);
		return r;
	}
	if (pipe2(st, O_CLOEXEC) != 0) {
		res->start_errno = errno;
		close(out[0]);
		close(out[1]);
		close(err[0]);
		close(err[1]);
		return r;
	}
	pid_t pid = fork();
	if (pid == 0)
		child_exec(s, out[1], err[1], st[1]);
	close(out[1]);
	close(err[1]);
	close(st[1]);
	if (pid < 0) {
		res->start_errno = errno;
		close(out[0]);
		close(err[0]);
		close(st[0]);
		return r;
	}
	setpgid(pid, pid); /* also here: whichever runs first wins the race */
	int e = 0;
	ssize_t n;
	do
		n = read(st[0], &e, sizeof e);
	while (n < 0 && errno == EINTR);
	close(st[0]);
	r.pid = pid;
	r.reaped = false;
	if (n == (ssize_t)sizeof e) {
		/* exec failed: the child has already exited with 127 */
		res->start_errno = e;
		close(out[0]);
		close(err[0]);
		waitpid(pid, NULL, 0);
		r.reaped = true;
		return r;
	}
	res->started = true;
	r.fd[0] = out[0];
	r.fd[1] = err[0];
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	fcntl(err[0], F_SETFL, O_NONBLOCK);
	return r;
}

static void drain(int *fd, sink *k, size_t cap)
{
	char chunk[65536];
	for (;;) {
		ssize_t n = read(*fd, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			close_fd(fd);
			return;
		}
		size_t room = cap > k->b.len ? cap - k->b.len : 0;
		size_t take = (size_t)n < room ? (size_t)n : room;
		if (take < (size_t)n)
			*k->trunc = true;
		gw_sb_put(&k->b, chunk, take);
	}
}

static void reap(child_run *r, gw_child_result *res, int flags)
{
	if (r->reaped)
		return;
	int st;
	pid_t p;
	do
		p = waitpid(r->pid, &st, flags);
	while (p < 0 && errno == EINTR);
	if (p != r->pid)
		return;
	r->reaped = true;
	if (WIFEXITED(st)) {
		res->exited = true;
		res->status = WEXITSTATUS(st);
	} else if (WIFSIGNALED(st)) {
		res->signal = WTERMSIG(st);
	}
}

static bool busy(const child_run *r)
{
	return r->fd[0] >= 0 || r->fd[1] >= 0 || !r->reaped;
}

/* Everything gw_child_run_many tracks for its n children. */
typedef struct {
	size_t n;
	child_run *runs;
	sink *out, *err;
	struct pollfd *pfd;
	char **paths; /* argv[0] found in PATH when a spec has no path */
} batch;

static void batch_start(batch *b, const gw_child_spec *specs, gw_child_result *results)
{
	for (size_t i = 0; i < b->n; i++) {
		gw_child_spec s = specs[i];
		memset(&results[i], 0, sizeof results[i]);
		results[i].status = -1;
		b->out[i].trunc = &results[i].out_truncated;
		b->err[i].trunc = &results[i].err_truncated;
		if (!s.path) {
			/* Searched here, not after fork: the child may only call async-signal-safe
			 * functions. */
			const char *path = getenv("PATH");
			b->paths[i] = gw_which(s.argv[0], path ? path : "/bin:/usr/bin");
			s.path = b->paths[i];
		}
		if (!s.path) {
			b->runs[i] = (child_run){.pid = -1, .fd = {-1, -1}, .reaped = true};
			results[i].start_errno = ENOENT;
			continue;
		}
		b->runs[i] = start_one(&s, &results[i]);
	}
}

/* One round: reap, poll every open pipe, drain. False when nothing is left to wait for. */
static bool batch_round(batch *b, int64_t deadline, size_t cap, gw_child_result *results)
{
	bool any = false, any_fd = false;
	size_t np = 0;
	for (size_t i = 0; i < b->n; i++) {
		reap(&b->runs[i], &results[i], WNOHANG);
		any |= busy(&b->runs[i]);
		for (int k = 0; k < 2; k++) {
			if (b->runs[i].fd[k] < 0)
				continue;
			b->pfd[np++] = (struct pollfd){.fd = b->runs[i].fd[k], .events = POLLIN};
			any_fd = true;
		}
	}
	int64_t left = deadline ? deadline - gw_mono_ns() : INT64_MAX;
	if (!any || left <= 0)
		return false;
	/* With every pipe closed only an exit is awaited: poll it every 10 ms. */
	int64_t cap_ms = any_fd ? 1000 : 10;
	int64_t ms = left / 1000000 >= cap_ms ? cap_ms : (left + 999999) / 1000000;
	if (poll(np ? b->pfd : NULL, np, (int)ms) < 0 && errno != EINTR)
		return false;
	for (size_t i = 0; i < b->n; i++) {
		if (b->runs[i].fd[0] >= 0)
			drain(&b->runs[i].fd[0], &b->out[i], cap);
		if (b->runs[i].fd[1] >= 0)
			drain(&b->runs[i].fd[1], &b->err[i], cap);
	}
	return true;
}

/* Kill what is still running, reap everything, hand the output over. */
static void batch_finish(batch *b, gw_child_result *results)
{
	for (size_t i = 0; i < b->n; i++) {
		child_run *r = &b->runs[i];
		if (busy(r) && r->pid > 0) {
			results[i].timed_out = true;
			kill(-r->pid, SIGKILL);
			kill(r->pid, SIGKILL);
		}
		close_fd(&r->fd[0]);
		close_fd(&r->fd[1]);
		reap(r, &results[i], 0);
		results[i].out_len = b->out[i].b.len;
		results[i].out = gw_sb_take(&b->out[i].b);
		results[i].err_len = b->err[i].b.len;
		results[i].err = gw_sb_take(&b->err[i].b);
		free(b->paths[i]);
	}
}

int gw_child_run_many(const gw_child_spec *specs, size_t n, int64_t timeout_ns, size_t cap,
                      gw_child_result *results)
{
	size_t m = n ? n : 1;
	batch b = {.n = n,
	           .runs = gw_xcalloc(m, sizeof *b.runs),
	           .out = gw_xcalloc(m, sizeof *b.out),
	           .err = gw_xcalloc(m, sizeof *b.err),
	           .pfd = gw_xcalloc(2 * m, sizeof *b.pfd),
	           .paths = gw_xcalloc(m, sizeof *b.paths)};
	int64_t deadline = timeout_ns > 0 ? gw_mono_ns() + timeout_ns : 0;
	batch_start(&b, specs, results);
	while (batch_round(&b, deadline, cap, results))
		;
	batch_finish(&b, results);
	free(b.runs);
	free(b.out);
	free(b.err);
	free(b.pfd);
	free(b.paths);
	return 0;
}

int gw_child_run(const gw_child_spec *spec, int64_t timeout_ns, size_t cap, gw_child_result *res)
{
	return gw_child_run_many(spec, 1, timeout_ns, cap, res);
}

void gw_child_free(gw_child_result *res)
{
	free(res->out);
	free(res->err);
	res->out = res->err = NULL;
}

bool gw_child_ok(const gw_child_result *res)
{
	return res->started && !res->timed_out && res->exited && res->status == 0;
}

static bool executable(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

char *gw_which(const char *name, const char *path_list)
{
	if (!name || !*name)
		return NULL;
	if (strchr(name, '/'))
		return executable(name) ? strdup(name) : NULL;
	if (!path_list)
		return NULL;
	const char *p = path_list;
	while (*p) {
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);
		if (len > 0) {
			char *full = NULL;
			if (asprintf(&full, "%.*s/%s", (int)len, p, name) < 0)
				return NULL;
			if (executable(full))
				return full;
			free(full);
		}
		if (!colon)
			break;
		p = colon + 1;
	}
	return NULL;
}
