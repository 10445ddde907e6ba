/*
 * secure.c - who may own a queue directory, and who may be signalled as its worker.
 *
 * The worker runs the commands stored in queue.db as the user who started
 * it, so a directory or database that another user owns or can write is a
 * way to run code as that user (or as root). The queue refuses both, and
 * creates what it needs private (0700 directories, 0600 files).
 *
 * `queue stop` signals the PID that worker.lock names only after checking
 * that it is this queue's worker: the process holds the lock, runs this
 * program, and its arguments are those of `queue worker`.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "queue/db.h"
#include "queue/worker.h"
#include "util/err.h"
#include "util/i18n.h"

static int mkdir_p(const char *path)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof tmp, "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
		return -1;
	return 0;
}

/* Why st is not safe to trust for this user, or NULL when it is. */
static const char *untrusted(const struct stat *st, bool want_dir, char *why, size_t len)
{
	uid_t me = geteuid();
	if (want_dir ? !S_ISDIR(st->st_mode) : !S_ISREG(st->st_mode)) {
		snprintf(why, len, "%s", want_dir ? _("not a directory") : _("not a regular file"));
		return why;
	}
	if (st->st_uid != me && st->st_uid != 0) {
		snprintf(why, len, _("owned by uid %u, not by you (uid %u) or root"),
		         (unsigned)st->st_uid, (unsigned)me);
		return why;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, len,
		         st->st_mode & S_IWOTH ? _("writable by all users (mode %04o)")
		                               : _("writable by its group (mode %04o)"),
		         (unsigned)(st->st_mode & 07777));
		return why;
	}
	return NULL;
}

static int refuse(gw_fail *e, const char *path, const char *why)
{
	return gw_fail_set(
	    e, GW_EXIT_ENV, path,
	    N_("use a queue directory of your own, or chown/chmod go-w it if it is yours"),
	    "refusing an unsafe queue location: %s", why);
}

/*
 * A link is refused rather than followed: whoever can write the folder that
 * holds it could point it elsewhere between the check and the use. It is
 * said as what it is, with the directory it leads to, so the fix is one copy.
 */
static int refuse_link(gw_fail *e, const char *path)
{
	const char *hint = N_("the queue follows no symbolic link: give the directory itself, "
	                      "with --queue or GPUWHY_QUEUE");
	char to[PATH_MAX];
	if (!realpath(path, to)) {
		ssize_t n = readlink(path, to, sizeof to - 1);
		to[n > 0 ? n : 0] = '\0';
	}
	if (!to[0])
		return gw_fail_set(e, GW_EXIT_ENV, path, hint, "is a symbolic link");
	return gw_fail_set(e, GW_EXIT_ENV, path, hint, "is a symbolic link to %s", to);
}

int queue_dir_check(const char *dir, gw_fail *e)
{
	char why[160], path[PATH_MAX + 16];
	struct stat st;
	if (lstat(dir, &st) != 0)
		return gw_fail_set(e, GW_EXIT_ENV, dir, N_("use --queue DIR for a writable place"),
		                   "cannot read the queue directory: %s", strerror(errno));
	if (S_ISLNK(st.st_mode))
		return refuse_link(e, dir);
	if (untrusted(&st, true, why, sizeof why))
		return refuse(e, dir, why);
	/* Inside a directory only we can write, these could still predate it. */
	const char *subs[] = {"logs", "run", "slurm", "queue.db"};
	for (size_t i = 0; i < sizeof subs / sizeof *subs; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, subs[i]);
		if (lstat(path, &st) != 0)
			continue;
		if (S_ISLNK(st.st_mode))
			return refuse_link(e, path);
		if (untrusted(&st, i < 3, why, sizeof why))
			return refuse(e, path, why);
	}
	return 0;
}

int queue_dir_prepare(const char *dir, gw_fail *e)
{
	char path[PATH_MAX + 16];
	struct stat st;
	if (lstat(dir, &st) != 0 && mkdir_p(dir) != 0)
		return gw_fail_set(e, GW_EXIT_ENV, dir, N_("use --queue DIR for a writable place"),
		                   "cannot create the queue directory: %s", strerror(errno));
	int rc = queue_dir_check(dir, e);
	if (rc)
		return rc;
	const char *subs[] = {"logs", "run", "slurm"};
	for (size_t i = 0; i < sizeof subs / sizeof *subs; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, subs[i]);
		if (mkdir(path, 0700) != 0 && errno != EEXIST)
			return gw_fail_set(e, GW_EXIT_ENV, path, NULL, "cannot create: %s",
			                   strerror(errno));
	}
	/* SQLite gives the -wal and -shm files the database's mode: create it 0600. One that
	 * exists is not opened here (it may not be a queue's: queue_db_open looks). */
	snprintf(path, sizeof path, "%s/queue.db", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
		errno = ELOOP;
	else if (fd < 0 && errno == EEXIST)
		return 0;
	if (fd < 0)
		return gw_fail_set(e, GW_EXIT_ENV, path, NULL, "cannot open: %s", strerror(errno));
	close(fd);
	return 0;
}

/* ---- is PID this queue's worker? ---- */

/* /proc/PID/FILE into buf (NUL-terminated); bytes read or -1. */
static ssize_t read_proc(int pid, const char *file, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/%s", pid, file);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

/* Whether /proc/locks shows pid holding an exclusive flock on dev:ino. 1 yes, 0 no,
 * -1 /proc/locks unreadable. */
static int holds_flock(int pid, dev_t dev, ino_t ino)
{
	FILE *f = fopen("/proc/locks", "re");
	if (!f)
		return -1;
	char line[256];
	int found = 0;
	while (!found && fgets(line, sizeof line, f)) {
		char kind[16], adv[16], mode[16];
		int lpid;
		unsigned maj, min;
		unsigned long long lino;
		/* "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF" ("->" for waiters) */
		const char *p = strchr(line, ':');
		if (!p || strstr(line, "->"))
			continue;
		if (sscanf(p + 1, "%15s %15s %15s %d %x:%x:%llu", kind, adv, mode, &lpid, &maj,
		           &min, &lino) != 7)
			continue;
		found = !strcmp(kind, "FLOCK") && !strcmp(mode, "WRITE") && lpid == pid &&
		        makedev(maj, min) == dev && (ino_t)lino == ino;
	}
	fclose(f);
	return found;
}

/* The program file of pid, " (deleted)" dropped (the binary may have been rebuilt). */
static bool exe_of(int pid, char *out, size_t len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/exe", pid);
	ssize_t n = readlink(path, out, len - 1);
	if (n <= 0)
		return false;
	out[n] = '\0';
	size_t l = (size_t)n, dl = strlen(" (deleted)");
	if (l > dl && !strcmp(out + l - dl, " (deleted)"))
		out[l - dl] = '\0';
	return true;
}

/* argv holds "queue" and, after it, "worker" (`gpuwhy [OPTS] queue [--queue DIR] worker`). */
static bool worker_args(int pid)
{
	char buf[8192];
	ssize_t n = read_proc(pid, "cmdline", buf, sizeof buf);
	if (n <= 0)
		return false;
	bool queue = false;
	for (const char *a = buf; a < buf + n; a += strlen(a) + 1) {
		if (!strcmp(a, "queue"))
			queue = true;
		else if (queue && !strcmp(a, "worker"))
			return true;
	}
	return false;
}

int queue_worker_verify(const char *dir, int pid, const char *self_exe, gw_fail *e)
{
	char lockp[PATH_MAX], exe[PATH_MAX];
	queue_path(dir, "worker.lock", lockp, sizeof lockp);
	struct stat lst;
	if (stat(lockp, &lst) != 0) {
		gw_fail_set(e, GW_EXIT_ENV, dir, NULL, "its worker.lock is gone");
		return -1;
	}
	int held = holds_flock(pid, lst.st_dev, lst.st_ino);
	if (held == 0) {
		gw_fail_set(e, GW_EXIT_ENV, dir, NULL, "process %d does not hold worker.lock", pid);
		return -1;
	}
	if (!exe_of(pid, exe, sizeof exe)) {
		gw_fail_set(e, GW_EXIT_ENV, dir, NULL, "process %d is gone or not ours to inspect",
		            pid);
		return -1;
	}
	struct stat a, b;
	bool same_file = self_exe && stat(exe, &a) == 0 && stat(self_exe, &b) == 0 &&
	                 a.st_dev == b.st_dev && a.st_ino == b.st_ino;
	if (!same_file && (!self_exe || strcmp(exe, self_exe) != 0)) {
		gw_fail_set(e, GW_EXIT_ENV, dir, NULL, "process %d runs %s, not this program", pid,
		            exe);
		return -1;
	}
	if (!worker_args(pid)) {
		gw_fail_set(e, GW_EXIT_ENV, dir, NULL, "process %d is not a `gpuwhy queue worker`",
		            pid);
		return -1;
	}
	return 0;
}

int queue_worker_signal(const char *dir, int pid, int sig, const char *self_exe, gw_fail *e)
{
	/* A pidfd taken before the checks names that process even if the PID is reused. */
	int pfd = -1;
#ifdef SYS_pidfd_open
	pfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
	if (queue_worker_verify(dir, pid, self_exe, e) != 0) {
		if (pfd >= 0)
			close(pfd);
		return -1;
	}
	int rc;
#ifdef SYS_pidfd_send_signal
	if (pfd >= 0)
		rc = (int)syscall(SYS_pidfd_send_signal, pfd, sig, NULL, 0);
	else
#endif
		rc = kill(pid, sig);
	if (rc != 0)
		gw_fail_set(e, GW_EXIT_ENV, dir, NULL, "cannot signal process %d: %s", pid,
		            strerror(errno));
	if (pfd >= 0)
		close(pfd);
	return rc;
}
