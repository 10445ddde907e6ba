/*
 * worker_ctl.c - the clients' side of the worker: which process holds a queue's
 * lock, starting a detached worker when none runs, and waking it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "queue/worker.h"
#include "util/err.h"
#include "util/i18n.h"

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

enum { QUEUE_SPAWN_DIED = -2 };
static int spawn_once(const char *dir, const char *self_exe);

int queue_worker_ensure(const char *dir, const char *self_exe)
{
	if (!self_exe)
		return gw_error(GW_EXIT_ENV, "queue worker",
		                _("start one with gpuwhy queue worker"),
		                _("cannot find this program in /proc/self/exe to start a worker"));
	if (queue_worker_pid(dir) != 0)
		return 0; /* the common case: one runs (checked again under the lock otherwise) */
	char path[PATH_MAX];
	queue_path(dir, "spawn.lock", path, sizeof path);
	int sl = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (sl < 0)
		return gw_error(GW_EXIT_ENV, path, NULL, _("cannot open: %s"), strerror(errno));
	/* One spawner at a time, so a burst of `add` calls starts one worker. */
	while (flock(sl, LOCK_EX) != 0 && errno == EINTR)
		;
	int rc = 0;
	/* A worker that died before it was ready (killed as it started) is started again: the
	 * caller's tasks are stored and need one. A hung start is not retried. */
	for (int tries = 0; tries < 3 && queue_worker_pid(dir) == 0; tries++)
		if ((rc = spawn_once(dir, self_exe)) != QUEUE_SPAWN_DIED)
			break;
	if (rc == QUEUE_SPAWN_DIED)
		rc = gw_error(GW_EXIT_ENV, "queue worker",
		              _("see worker.log in the queue directory"), _("did not start"));
	flock(sl, LOCK_UN);
	close(sl);
	return rc;
}

/* Start one detached worker and wait until it says it is ready: 0, QUEUE_SPAWN_DIED (it
 * ended before that) or an exit code (printed). */
static int spawn_once(const char *dir, const char *self_exe)
{
	int rc = 0;
	int ready[2];
	if (pipe2(ready, O_CLOEXEC) != 0)
		return gw_error(GW_EXIT_ENV, "pipe", NULL, "%s", strerror(errno));
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
	int pr = pid < 0 ? -1 : poll(&pf, 1, 10000);
	if (pr <= 0 || read(ready[0], &b, 1) != 1) {
		if (queue_worker_pid(dir) == 0)
			rc = pr > 0 ? QUEUE_SPAWN_DIED
			            : gw_error(GW_EXIT_ENV, "queue worker",
			                       _("see worker.log in the queue directory"),
			                       _("did not start"));
	}
	close(ready[0]);
	return rc;
}
