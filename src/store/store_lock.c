/*
 * store_lock.c - one writer per recording.
 *
 * The writer holds flock(LOCK_EX) on the .gpuwhy file for the recording's
 * whole life, through a descriptor of its own. Not a POSIX record lock:
 * SQLite drops every POSIX lock of the process on the file whenever it
 * unlocks, while flock locks are a separate kind it never touches. The
 * descriptor is close-on-exec, so the command `run` starts does not keep the
 * lock after gpuwhy is gone. The file is truncated in place, never unlinked,
 * so a second writer always finds the locked inode.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "store/store.h"
#include "util/i18n.h"

/* The PID holding a flock on fd's file, from /proc/locks; 0 when not found. */
static long lock_holder(int fd)
{
	struct stat sb;
	FILE *f = fstat(fd, &sb) == 0 ? fopen("/proc/locks", "r") : NULL;
	if (!f)
		return 0;
	char line[256];
	long pid = 0;
	while (!pid && fgets(line, sizeof line, f)) {
		/* "1: FLOCK  ADVISORY  WRITE 1234 08:02:131090 0 EOF" */
		char kind[16], access[16];
		long p;
		unsigned maj, min;
		unsigned long long ino;
		if (sscanf(line, "%*[^:]: %15s %*s %15s %ld %x:%x:%llu", kind, access, &p, &maj,
		           &min, &ino) == 6 &&
		    !strcmp(kind, "FLOCK") && !strcmp(access, "WRITE") && p > 0 &&
		    ino == (unsigned long long)sb.st_ino && maj == major(sb.st_dev) &&
		    min == minor(sb.st_dev))
			pid = p;
	}
	fclose(f);
	return pid;
}

/* Refuse a file that is neither empty nor a SQLite database (an earlier recording). */
static int check_replaceable(int fd, const struct stat *sb, char *err, size_t errlen)
{
	if (sb->st_size == 0)
		return 0;
	char head[16] = {0};
	if (pread(fd, head, sizeof head, 0) != (ssize_t)sizeof head ||
	    memcmp(head, "SQLite format 3", 15) != 0) {
		snprintf(err, errlen,
		         _("exists and is not a gpuwhy recording (refusing to overwrite)"));
		return -1;
	}
	return 0;
}

static void unlink_sidecars(const char *path)
{
	char side[4096];
	snprintf(side, sizeof side, "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof side, "%s-shm", path);
	unlink(side);
}

/* Open (creating if need be) and lock path; -2 with the holder in err when another has it. */
static int open_locked(const char *path, int *fd_out, bool *created, char *err, size_t errlen)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	*created = fd >= 0;
	if (fd < 0 && errno == EEXIST)
		fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		snprintf(err, errlen, "%s",
		         errno == ELOOP ? _("is a symbolic link") : strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		int e = errno;
		long pid = e == EWOULDBLOCK ? lock_holder(fd) : 0;
		close(fd);
		if (e != EWOULDBLOCK) {
			snprintf(err, errlen, _("cannot lock: %s"), strerror(e));
			return -1;
		}
		if (pid > 0)
			snprintf(err, errlen, _("another gpuwhy is recording to it (PID %ld)"),
			         pid);
		else
			snprintf(err, errlen, _("another gpuwhy is recording to it"));
		return -2;
	}
	*fd_out = fd;
	return 0;
}

int store_lock_path(const char *path, int *fd_out, char *err, size_t errlen)
{
	struct stat sb;
	if (lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
		snprintf(err, errlen, _("exists and is not a regular file"));
		return -1;
	}
	/* Another process may replace the name between open and lock: retry on the new file. */
	for (int attempt = 0; attempt < 8; attempt++) {
		int fd;
		bool created;
		int rc = open_locked(path, &fd, &created, err, errlen);
		if (rc)
			return rc;
		struct stat fsb, psb;
		if (fstat(fd, &fsb) != 0 || stat(path, &psb) != 0 || fsb.st_ino != psb.st_ino ||
		    fsb.st_dev != psb.st_dev) {
			close(fd);
			continue;
		}
		if (!S_ISREG(fsb.st_mode) || check_replaceable(fd, &fsb, err, errlen)) {
			if (!S_ISREG(fsb.st_mode))
				snprintf(err, errlen, _("exists and is not a regular file"));
			close(fd);
			return -1;
		}
		/* A stale -wal would be replayed into the fresh file: remove both sidecars. */
		unlink_sidecars(path);
		if (!created && ftruncate(fd, 0) != 0) {
			snprintf(err, errlen, _("cannot replace the existing file: %s"),
			         strerror(errno));
			close(fd);
			return -1;
		}
		*fd_out = fd;
		return 0;
	}
	snprintf(err, errlen, _("the file keeps being replaced by another process"));
	return -1;
}
