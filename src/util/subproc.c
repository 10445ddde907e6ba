#include "util/subproc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/timeutil.h"

extern char **environ;

typedef struct {
	char *buf;
	size_t len, cap, max;
} sink;

static void sink_add(sink *s, const char *p, size_t n)
{
	if (s->len + n > s->max)
		n = s->max > s->len ? s->max - s->len : 0;
	if (s->len + n + 1 > s->cap) {
		size_t cap = (s->len + n + 1) * 2;
		char *b = realloc(s->buf, cap);
		if (!b)
			abort(); /* out of memory: nothing sane to do */
		s->buf = b;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	s->buf[s->len] = '\0';
}

int gw_subproc_run(char *const argv[], char *const envp[], int64_t timeout_ns, size_t max_out,
                   gw_subproc *r)
{
	memset(r, 0, sizeof *r);
	sink out = {.max = max_out}, err = {.max = max_out};
	sink_add(&out, "", 0);
	sink_add(&err, "", 0);
	int po[2], pe[2];
	if (pipe2(po, O_CLOEXEC) != 0)
		goto fail;
	if (pipe2(pe, O_CLOEXEC) != 0) {
		close(po[0]);
		close(po[1]);
		goto fail;
	}
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	pid_t pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		if (devnull >= 0)
			dup2(devnull, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		close_range(3, ~0U, 0);
		/* Restore what a caller may have ignored: exec keeps SIG_IGN. */
		signal(SIGPIPE, SIG_DFL);
		execvpe(argv[0], argv, envp ? envp : environ);
		_exit(127);
	}
	if (devnull >= 0)
		close(devnull);
	close(po[1]);
	close(pe[1]);
	if (pid < 0) {
		close(po[0]);
		close(pe[0]);
		goto fail;
	}
	setpgid(pid, pid);
	int64_t deadline = timeout_ns > 0 ? gw_mono_ns() + timeout_ns : 0;
	struct pollfd fds[2] = {{.fd = po[0], .events = POLLIN}, {.fd = pe[0], .events = POLLIN}};
	int open_fds = 2;
	while (open_fds > 0) {
		int wait_ms = -1;
		if (deadline) {
			int64_t left = deadline - gw_mono_ns();
			if (left <= 0) {
				r->timed_out = true;
				kill(-pid, SIGKILL);
				break;
			}
			wait_ms = (int)(left / 1000000) + 1;
		}
		int n = poll(fds, 2, wait_ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			char buf[4096];
			ssize_t got = read(fds[i].fd, buf, sizeof buf);
			if (got > 0) {
				sink_add(i == 0 ? &out : &err, buf, (size_t)got);
			} else if (got == 0 || errno != EINTR) {
				close(fds[i].fd);
				fds[i].fd = -1;
				open_fds--;
			}
		}
	}
	for (int i = 0; i < 2; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	r->started = true;
	if (WIFEXITED(status)) {
		r->exited = true;
		r->exit_code = WEXITSTATUS(status);
		/* 127 from our own _exit above means exec failed. */
		if (r->exit_code == 127 && !out.len && !err.len) {
			r->started = false;
			sink_add(&err, "cannot run ", 11);
			sink_add(&err, argv[0], strlen(argv[0]));
		}
	} else if (WIFSIGNALED(status)) {
		r->signal = WTERMSIG(status);
	}
	r->out = out.buf;
	r->out_len = out.len;
	r->err = err.buf;
	r->err_len = err.len;
	return r->started ? 0 : -1;
fail:
	sink_add(&err, strerror(errno), strlen(strerror(errno)));
	r->out = out.buf;
	r->err = err.buf;
	r->err_len = err.len;
	return -1;
}

void gw_subproc_free(gw_subproc *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}
