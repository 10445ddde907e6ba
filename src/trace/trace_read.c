/* trace_read.c - one input file of either kind read into a trace_rank: a Kineto JSON(.gz)
 * trace or an nsys SQLite export, from a file or from a stream (spooled to a temporary file
 * first, since the readers look at the start before they read). Prints nothing: a failure is
 * the reason, in English, in a gw_fail. */
#include "trace/trace_read.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/trace_kineto.h"
#include "trace/trace_nsys.h"
#include "util/err.h"

/* A reason about path into err: English, formatted here and passed as data ("%s"), never
 * looked up in the catalogue (the faces word it). -1. */
__attribute__((format(printf, 3, 4))) static int reason(gw_fail *err, const char *path,
                                                        const char *fmt, ...)
{
	if (!err) /* the caller wants the code alone */
		return -1;
	char why[sizeof err->why];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	gw_fail_set(err, GW_EXIT_ENV, path, NULL, "%s", why);
	return -1;
}

/*
 * A pipe, FIFO or terminal can be read once, and the readers look at the start
 * before they read (the format, gzip's magic), map plain files and give an
 * nsys export to SQLite: such an input is first copied into an unnamed
 * temporary file (O_TMPFILE, gone when closed, even after a crash), which the
 * readers then open as /proc/self/fd/N. Returns that descriptor, or -1 with err.
 */
static int spool_stream(const char *path, gw_fail *err)
{
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	int out = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (out < 0)
		return reason(err, path,
		              "cannot make a temporary file in %s to read the stream: %s", dir,
		              strerror(errno));
	int in = open(path, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		reason(err, path, "cannot open: %s", strerror(errno));
		close(out);
		return -1;
	}
	enum { BUFSZ = 1 << 20 };
	char *buf = malloc(BUFSZ);
	if (!buf) {
		reason(err, path, "out of memory");
		close(in);
		close(out);
		return -1;
	}
	for (;;) {
		ssize_t n = read(in, buf, BUFSZ);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			reason(err, path, "read error: %s", strerror(errno));
			break;
		}
		if (n == 0) {
			free(buf);
			close(in);
			return out;
		}
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				reason(err, path,
				       "cannot write the stream to a temporary file in %s: %s", dir,
				       strerror(errno));
				free(buf);
				close(in);
				close(out);
				return -1;
			}
			off += w;
		}
	}
	free(buf);
	close(in);
	close(out);
	return -1;
}

/* A name in the temporary directory for the unnamed file behind fdpath (path's stream). */
static int link_named(const char *path, const char *fdpath, char *named, size_t len, gw_fail *err)
{
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	for (unsigned i = 0; i < 100; i++) {
		snprintf(named, len, "%s/gpuwhy-stdin-%ld-%u.sqlite", dir, (long)getpid(), i);
		if (linkat(AT_FDCWD, fdpath, AT_FDCWD, named, AT_SYMLINK_FOLLOW) == 0)
			return 0;
		if (errno != EEXIST)
			break;
	}
	return reason(err, path, "cannot make a temporary file in %s to read the stream: %s", dir,
	              strerror(errno));
}

static int read_regular(const char *path, trace_rank *r, _Atomic uint64_t *progress, int threads,
                        gw_fail *err)
{
	unsigned char magic[16] = {0};
	FILE *f = fopen(path, "rb");
	if (!f)
		return reason(err, path, "cannot open: %s", strerror(errno));
	size_t got = fread(magic, 1, sizeof magic, f);
	fclose(f);
	if (got == sizeof magic && !memcmp(magic, "SQLite format 3", 16)) {
		int rc = trace_nsys_read(path, r, err);
		struct stat st;
		if (progress && stat(path, &st) == 0)
			atomic_fetch_add(progress, (uint64_t)st.st_size);
		return rc;
	}
	return trace_kineto_read(path, r, progress, threads, err);
}

/* A reader that starts again names the rank by the path it read: the
 * stream's own name is put back. */
static int named_back(trace_rank *r, const char *path, int rc)
{
	if (r->path && strcmp(r->path, path)) {
		char *p = strdup(path);
		if (p) {
			free(r->path);
			r->path = p;
		}
	}
	return rc;
}

static int read_stream(const char *path, trace_rank *r, _Atomic uint64_t *progress, int threads,
                       gw_fail *err);

static int read_any(const char *path, trace_rank *r, _Atomic uint64_t *progress, int threads,
                    gw_fail *err)
{
	struct stat st;
	if (stat(path, &st) != 0 || S_ISREG(st.st_mode))
		return read_regular(path, r, progress, threads, err);
	/* path may be r->path itself, which a reader that starts again replaces. */
	char *own = strdup(path);
	if (!own)
		return reason(err, path, "out of memory");
	int rc = named_back(r, own, read_stream(own, r, progress, threads, err));
	free(own);
	return rc;
}

int trace_read_file(const char *path, trace_rank *r, _Atomic uint64_t *progress, int threads,
                    gw_fail *err)
{
	/* The file is named by a copy: path may be r->path, which a reader that starts again
	 * replaces. */
	char *own = strdup(path);
	if (!own)
		return gw_fail_set(err, GW_EXIT_ENV, path, NULL, "out of memory");
	gw_fail why = {0};
	int rc = read_any(own, r, progress, threads, &why);
	if (rc != 0) {
		/* The reason as the commands have always cut it; the file as it was named. */
		why.why[255] = '\0';
		rc = gw_fail_set(err, GW_EXIT_ENV, own, NULL, "%s", why.why);
	}
	free(own);
	return rc;
}

static int read_stream(const char *path, trace_rank *r, _Atomic uint64_t *progress, int threads,
                       gw_fail *err)
{
	int fd = spool_stream(path, err);
	if (fd < 0)
		return -1;
	char fdpath[40];
	snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", fd);
	unsigned char magic[16] = {0};
	if (pread(fd, magic, sizeof magic, 0) != (ssize_t)sizeof magic ||
	    memcmp(magic, "SQLite format 3", 16)) {
		int rc = read_regular(fdpath, r, progress, threads, err);
		close(fd);
		return rc;
	}
	/* SQLite opens the file a link points at, which an unnamed file does not
	 * have: it gets a name for as long as it is read. */
	char named[PATH_MAX];
	int rc = link_named(path, fdpath, named, sizeof named, err);
	close(fd);
	if (rc != 0)
		return -1;
	rc = read_regular(named, r, progress, threads, err);
	unlink(named);
	return rc;
}
