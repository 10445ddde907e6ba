/* trace_kineto_read.c - a Kineto trace file read: gzip or plain text in chunks, inflated ahead
 * on a second thread where one is allowed, and the choice between one piece and the parallel
 * splitter (trace_kineto_split.c). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace_kineto.h"
#include "trace/trace_kineto_int.h"
#include "util/err.h"

int trace_kineto_read_status(const trace_gzin *g, int n, const char *path, gw_fail *err)
{
	gw_fail f = {0};
	int rc = trace_gzin_status(g, n, &f);
	if (rc < 0)
		trace_kineto_fail(err, path, "%s", f.why);
	return rc;
}

void trace_kineto_add_progress(const trace_gzin *g, _Atomic uint64_t *progress, uint64_t *reported)
{
	if (!progress)
		return;
	uint64_t off = trace_gzin_offset(g);
	if (off > *reported) {
		atomic_fetch_add(progress, off - *reported);
		*reported = off;
	}
}

static int truncated(kstate *k, yajl_handle h, uint64_t total, gw_fail *err)
{
	trace_kineto_reason(k, h, NULL, 0, total, err);
	if (!k->err[0])
		trace_kineto_fail(
		    err, k->r->path,
		    "truncated JSON: the document ends after %llu bytes before it is complete",
		    (unsigned long long)total);
	return -1;
}

/* The decompressed text in chunks; with a second thread allowed, a reader inflates ahead
 * while the parser works (gzip costs about as much as parsing). */
enum { CHUNK = 256 * 1024, NSLOT = 4 };

typedef struct {
	trace_gzin *g;
	const char *path;
	_Atomic uint64_t *progress;
	uint64_t reported;
	bool ahead;
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned char *slot[NSLOT];
	int len[NSLOT]; /* bytes; 0 at the end, -1 on an error */
	bool full[NSLOT];
	bool stop;
	int status;  /* trace_kineto_read_status() at the end */
	gw_fail err; /* its failure */
	size_t next; /* the slot the parser takes next */
} source;

/* One chunk into slot s; the end or an error is recorded. */
static int source_fill(source *src, int s)
{
	int n = trace_gzin_read(src->g, src->slot[s], CHUNK);
	trace_kineto_add_progress(src->g, src->progress, &src->reported);
	if (n <= 0)
		src->status = trace_kineto_read_status(src->g, n, src->path, &src->err);
	return n;
}

static void *source_reader(void *arg)
{
	source *src = arg;
	for (size_t i = 0;; i++) {
		int s = (int)(i % NSLOT);
		pthread_mutex_lock(&src->lock);
		while (src->full[s] && !src->stop)
			pthread_cond_wait(&src->cond, &src->lock);
		bool stop = src->stop;
		pthread_mutex_unlock(&src->lock);
		if (stop)
			break;
		int n = source_fill(src, s);
		pthread_mutex_lock(&src->lock);
		src->len[s] = n;
		src->full[s] = true;
		pthread_cond_broadcast(&src->cond);
		pthread_mutex_unlock(&src->lock);
		if (n <= 0)
			break;
	}
	return NULL;
}

/* The next chunk: its bytes in *buf, the count returned (0 at the end, -1 on an error). */
static int source_next(source *src, unsigned char **buf)
{
	if (!src->ahead) {
		*buf = src->slot[0];
		return source_fill(src, 0);
	}
	int s = (int)(src->next++ % NSLOT);
	pthread_mutex_lock(&src->lock);
	if (src->next > 1) { /* the slot before this one is parsed: hand it back */
		int prev = (s + NSLOT - 1) % NSLOT;
		src->full[prev] = false;
		pthread_cond_broadcast(&src->cond);
	}
	while (!src->full[s])
		pthread_cond_wait(&src->cond, &src->lock);
	int n = src->len[s];
	pthread_mutex_unlock(&src->lock);
	*buf = src->slot[s];
	return n;
}

static int source_open(source *src, const char *path, _Atomic uint64_t *progress, bool ahead,
                       gw_fail *err)
{
	memset(src, 0, sizeof *src);
	src->path = path;
	src->g = trace_gzin_open(path, CHUNK);
	if (!src->g)
		return trace_kineto_fail(err, path, "cannot open: %s",
		                         strerror(errno ? errno : ENOMEM));
	src->progress = progress;
	/* Reading ahead pays for compressed input only. */
	ahead = ahead && !trace_gzin_direct(src->g);
	for (int s = 0; s < (ahead ? NSLOT : 1); s++)
		if (!(src->slot[s] = malloc(CHUNK)))
			return trace_kineto_fail(err, path, "out of memory");
	if (ahead) {
		pthread_mutex_init(&src->lock, NULL);
		pthread_cond_init(&src->cond, NULL);
		src->ahead = pthread_create(&src->th, NULL, source_reader, src) == 0;
		if (!src->ahead) {
			pthread_cond_destroy(&src->cond);
			pthread_mutex_destroy(&src->lock);
		}
	}
	return 0;
}

static void source_close(source *src)
{
	if (src->ahead) {
		pthread_mutex_lock(&src->lock);
		src->stop = true;
		pthread_cond_broadcast(&src->cond);
		pthread_mutex_unlock(&src->lock);
		pthread_join(src->th, NULL);
		pthread_cond_destroy(&src->cond);
		pthread_mutex_destroy(&src->lock);
	}
	for (int s = 0; s < NSLOT; s++)
		free(src->slot[s]);
	trace_gzin_close(src->g);
}

static int read_sequential(const char *path, trace_rank *r, _Atomic uint64_t *progress, bool ahead,
                           gw_fail *err)
{
	source src;
	if (source_open(&src, path, progress, ahead, err) < 0) {
		source_close(&src);
		return -1;
	}
	kstate k;
	trace_kstate_init(&k, r);
	yajl_handle h = trace_kineto_parser(&k);
	if (!h) {
		source_close(&src);
		return trace_kineto_fail(err, path, "out of memory");
	}
	int rc = 0;
	uint64_t total = 0;
	for (;;) {
		unsigned char *buf;
		int n = source_next(&src, &buf);
		if (n <= 0) {
			rc = src.status;
			if (rc < 0) {
				if (err)
					*err = src.err;
			} else {
				rc = yajl_complete_parse(h) == yajl_status_ok
				         ? 0
				         : truncated(&k, h, total, err);
			}
			break;
		}
		if (yajl_parse(h, buf, (size_t)n) != yajl_status_ok) {
			trace_kineto_reason(&k, h, buf, (size_t)n, total, err);
			rc = -1;
			break;
		}
		total += (uint64_t)n;
	}
	r->bytes = total;
	if (!rc)
		rc = trace_kineto_finish(&k, err);
	yajl_free(h);
	trace_kstate_free(&k);
	source_close(&src);
	return rc;
}

/* Documents from this size on are parsed in pieces (tests lower it). */
static _Atomic uint64_t parallel_min = (uint64_t)64 << 20;

void trace_kineto_set_parallel_min(uint64_t bytes)
{
	atomic_store(&parallel_min, bytes);
}

static atomic_ulong restarts;

unsigned long trace_kineto_restarts(void)
{
	return atomic_load(&restarts);
}

/* The uncompressed size, near enough to choose how to read: the file size, or for gzip the
 * size its trailer records (modulo 4 GiB, so never less than the compressed size). */
static uint64_t text_size(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	unsigned char head[2] = {0}, tail[4] = {0};
	uint64_t size = 0;
	if (fread(head, 1, 2, f) == 2 && fseek(f, 0, SEEK_END) == 0) {
		long end = ftell(f);
		size = end > 0 ? (uint64_t)end : 0;
		if (head[0] == 0x1f && head[1] == 0x8b && end >= 4 && fseek(f, -4, SEEK_END) == 0 &&
		    fread(tail, 1, 4, f) == 4) {
			uint64_t isize = (uint64_t)tail[0] | (uint64_t)tail[1] << 8 |
			                 (uint64_t)tail[2] << 16 | (uint64_t)tail[3] << 24;
			size = isize > size ? isize : size;
		}
	}
	fclose(f);
	return size;
}

int trace_kineto_read(const char *path, trace_rank *r, _Atomic uint64_t *progress, int threads,
                      gw_fail *err)
{
	/* Pieces go to other threads for large documents only (each thread holds one); smaller
	 * ones, or all with one thread, are read piece by piece by this thread. */
	bool spread = threads > 1 && text_size(path) >= atomic_load(&parallel_min);
	int rc = trace_kineto_read_parallel(path, r, progress, spread ? threads : 1, err);
	/* Spread over threads, a failure is the file's own; read by this thread alone, any
	 * failure is reported as the one-piece reader (yajl) words it. */
	if (rc == 0 || (spread && rc != TRACE_KINETO_RETRY))
		return rc;
	/* A guessed cut fell inside a string or a nested object, the fast scanner gave up, or
	 * the file is broken: read it again in one piece. */
	atomic_fetch_add(&restarts, 1);
	gw_debug("%s: reading again in one piece", path);
	/* path may be r->path itself: it is copied before the rank is emptied. */
	char *p = strdup(path);
	if (!p)
		return trace_kineto_fail(err, path, "out of memory");
	trace_rank_free(r);
	trace_rank_init(r, p);
	if (err)
		*err = (gw_fail){0};
	rc = read_sequential(p, r, progress, threads > 1, err);
	free(p);
	return rc;
}
