/*
 * store_lock.c - one writer per recording, and a recording replaced whole.
 *
 * The writer holds flock(LOCK_EX) on the .gpuwhy file for the recording's
 * whole life, through a descriptor of its own. Not a POSIX record lock:
 * SQLite drops every POSIX lock of the process on the file whenever it
 * unlocks, while flock locks are a separate kind it never touches. The
 * descriptors are close-on-exec, so the command `run` starts does not keep
 * the lock after gpuwhy is gone.
 *
 * A new recording is built beside its name (".NAME.PID.N.tmp", locked from
 * its creation) and renamed over it once it holds the schema and the first
 * meta rows, folded into the main file. An earlier recording of that name is
 * locked (read-only: it is never opened for writing) until the rename, so a
 * second writer finds either it or the new file locked; one that locked the
 * old file just before the rename sees that the name no longer leads to it
 * and looks again. Anything at the name that is not a recording (by its
 * application id, or by the tables of a recording older than the id) is
 * refused before anything is created, and nothing beside it is touched.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "store/sql.h"
#include "store/store.h"
#include "store/store_int.h"
#include "util/err.h"
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

/* Whether path still names fd's file. */
static bool same_file(int fd, const char *path)
{
	struct stat a, b;
	return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_ino == b.st_ino &&
	       a.st_dev == b.st_dev;
}

/* A refusal of path: why in English (marked N_() where it is written), why_text in the
 * user's language. -1. */
static int refuse(gw_fail *err, const char *path, const char *why)
{
	gw_fail_set(err, GW_EXIT_ENV, path, NULL, "%s", why);
	if (err)
		snprintf(err->why_text, sizeof err->why_text, "%s", _(why));
	return -1;
}

/* The system's words for e, as they are. -1. */
static int refuse_errno(gw_fail *err, const char *path, int e)
{
	gw_fail_set(err, GW_EXIT_ENV, path, NULL, "%s", strerror(e));
	return -1;
}

/* Take the writer's lock on fd (path's); -2 with the holder in err when another has it. */
static int lock_fd(int fd, const char *path, gw_fail *err)
{
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	int e = errno;
	if (e != EWOULDBLOCK) {
		gw_fail_set(err, GW_EXIT_ENV, path, NULL, "cannot lock: %s", strerror(e));
		return -1;
	}
	long pid = lock_holder(fd);
	if (pid > 0)
		gw_fail_set(err, GW_EXIT_ENV, path, NULL,
		            "another gpuwhy is recording to it (PID %ld)", pid);
	else
		gw_fail_set(err, GW_EXIT_ENV, path, NULL, "another gpuwhy is recording to it");
	return -2;
}

/*
 * Whether the file at path (open as fd) may be replaced: empty, or a gpuwhy
 * recording, by its application id or, without one, by its tables (seen
 * without opening it for writing). 0, or -1 with why in err.
 */
static int check_replaceable(const char *path, int fd, gw_fail *err)
{
	static const char *const not_ours =
	    N_("exists and is not a gpuwhy recording (refusing to overwrite)");
	sql_head h;
	if (sql_read_head(fd, &h) != 0)
		return refuse_errno(err, path, errno);
	if (h.size == 0)
		/* Nothing to lose, unless a -wal beside it holds a database. */
		return sql_sidecars(path) ? refuse(err, path, not_ours) : 0;
	if (!h.sqlite)
		return refuse(err, path, not_ours);
	if (h.app_id == SQL_APP_RECORDING)
		return 0;
	if (h.app_id == SQL_APP_QUEUE)
		return refuse(err, path,
		              N_("is a gpuwhy queue database, not a recording (refusing to "
		                 "overwrite)"));
	sqlite3 *db = NULL;
	bool ours = h.app_id == 0 && sql_open_inspect(path, &db) == SQLITE_OK &&
	            store_schema_kind(db) == STORE_SCHEMA_OURS;
	sqlite3_close(db);
	return ours ? 0 : refuse(err, path, not_ours);
}

/* Open and lock the file at path; 1 when the name moved to another file meanwhile. */
static int lock_existing(store_target *t, gw_fail *err)
{
	int fd = open(t->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT)
			return 1;
		if (errno == ELOOP)
			return refuse(err, t->path, N_("is a symbolic link"));
		return refuse_errno(err, t->path, errno);
	}
	struct stat sb;
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return refuse(err, t->path, N_("exists and is not a regular file"));
	}
	int rc = lock_fd(fd, t->path, err);
	if (rc == 0 && !same_file(fd, t->path))
		rc = 1;
	if (rc == 0)
		rc = check_replaceable(t->path, fd, err);
	/* Looked at through its name: still the file that is locked? */
	if (rc == 0 && !same_file(fd, t->path))
		rc = 1;
	if (rc) {
		close(fd);
		return rc;
	}
	t->old_fd = fd;
	t->mode = sb.st_mode & 07777;
	return 0;
}

/* The new file beside path, locked; its name in t->tmp. */
static int create_tmp(store_target *t, gw_fail *err)
{
	char dir[4096], base[4096];
	snprintf(dir, sizeof dir, "%s", t->path);
	snprintf(base, sizeof base, "%s", t->path);
	const char *d = dirname(dir), *b = basename(base);
	for (int n = 0; n < 100; n++) {
		snprintf(t->tmp, sizeof t->tmp, "%s/.%s.%ld.%d.tmp", d, b, (long)getpid(), n);
		int fd = open(t->tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd < 0 && errno == EEXIST)
			continue;
		if (fd < 0) {
			t->tmp[0] = '\0';
			return refuse_errno(err, t->path, errno);
		}
		t->fd = fd;
		/* The replaced recording's permissions, as replacing it in place kept them. */
		if (t->old_fd >= 0)
			fchmod(fd, t->mode);
		return lock_fd(fd, t->path, err) ? -1 : 0;
	}
	t->tmp[0] = '\0';
	return refuse_errno(err, t->path, EEXIST);
}

int store_target_open(const char *path, store_target *t, gw_fail *err)
{
	*t = (store_target){.old_fd = -1, .fd = -1};
	snprintf(t->path, sizeof t->path, "%s", path);
	/* Another process may replace the name between open and lock: look again. */
	for (int attempt = 0; attempt < 8; attempt++) {
		struct stat sb;
		int rc = 0;
		if (lstat(path, &sb) == 0) {
			if (!S_ISREG(sb.st_mode))
				return refuse(err, path,
				              S_ISLNK(sb.st_mode)
				                  ? N_("is a symbolic link")
				                  : N_("exists and is not a regular file"));
			rc = lock_existing(t, err);
		} else if (errno != ENOENT) {
			return refuse_errno(err, path, errno);
		} else if (sql_sidecars(path)) {
			/* A -wal or -shm without its database: another program's, or left over.
			 * A new recording would take them for its own. */
			return refuse(err, path,
			              N_("a -wal or -shm file of another database is beside it "
			                 "(refusing to overwrite)"));
		}
		if (rc == 1)
			continue;
		if (rc == 0 && (rc = create_tmp(t, err)) != 0)
			store_target_abort(t);
		return rc;
	}
	return refuse(err, path, N_("the file keeps being replaced by another process"));
}

static void unlink_sidecars(const char *path)
{
	char side[4200];
	snprintf(side, sizeof side, "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof side, "%s-shm", path);
	unlink(side);
}

/* rename(2) that fails with EEXIST when to exists. */
static int rename_new(const char *from, const char *to)
{
	if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	/* A file system without it: a hard link fails just the same. */
	if (link(from, to) != 0)
		return -1;
	unlink(from);
	return 0;
}

int store_target_commit(store_target *t, gw_fail *err)
{
	/* The new file's pages are on the disk before its name is. */
	if (fsync(t->fd) != 0)
		return refuse_errno(err, t->path, errno);
	if (t->old_fd >= 0) {
		if (!same_file(t->old_fd, t->path))
			return 1;
		/* The replaced recording's -wal would be replayed into the new file. */
		unlink_sidecars(t->path);
		if (rename(t->tmp, t->path) != 0)
			return refuse_errno(err, t->path, errno);
		close(t->old_fd);
		t->old_fd = -1;
	} else {
		if (sql_sidecars(t->path))
			return 1;
		if (rename_new(t->tmp, t->path) != 0)
			return errno == EEXIST ? 1 : refuse_errno(err, t->path, errno);
	}
	t->tmp[0] = '\0';
	return 0;
}

void store_target_abort(store_target *t)
{
	if (t->tmp[0]) {
		unlink(t->tmp);
		unlink_sidecars(t->tmp);
		t->tmp[0] = '\0';
	}
	if (t->fd >= 0)
		close(t->fd);
	if (t->old_fd >= 0)
		close(t->old_fd);
	t->fd = t->old_fd = -1;
}
