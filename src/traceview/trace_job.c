/* trace_job.c - input discovery, parallel reading and analysis, progress through the caller's
 * callback. */
#include "traceview/trace_job.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "trace/trace_read.h"
#include "util/err.h"
#include "util/parse.h"
#include "util/termsafe.h"
#include "util/timeutil.h"
#include "util/i18n.h"

static bool ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

static bool trace_file_name(const char *name)
{
	return ends_with(name, ".json") || ends_with(name, ".gz") || ends_with(name, ".sqlite");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool add_path(char ***paths, size_t *n, size_t *cap, const char *p)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		char **np = realloc(*paths, c * sizeof *np);
		if (!np)
			return false;
		*paths = np;
		*cap = c;
	}
	char *s = strdup(p);
	if (!s)
		return false;
	(*paths)[(*n)++] = s;
	return true;
}

/* A path as an error line shows it: control characters escaped, so the line stays one. */
static const char *safe_path(const char *p, char *buf, size_t len)
{
	return gw_term_safe(p, buf, len);
}

int trace_job_collect(char *const *args, size_t nargs, char ***paths, size_t *npaths)
{
	char safe[GW_TERM_SAFE_LEN(512)];
	char **out = NULL;
	size_t n = 0, cap = 0;
	for (size_t i = 0; i < nargs; i++) {
		struct stat st;
		if (!strcmp(args[i], "-")) { /* the standard input, read like a pipe */
			if (!add_path(&out, &n, &cap, "/dev/stdin"))
				goto oom;
			continue;
		}
		if (stat(args[i], &st) < 0) {
			trace_job_free_paths(out, n);
			return gw_error(GW_EXIT_ENV, safe_path(args[i], safe, sizeof safe),
			                N_("give a trace file or a directory of them"), "%s",
			                strerror(errno));
		}
		if (!S_ISDIR(st.st_mode)) {
			if (!add_path(&out, &n, &cap, args[i]))
				goto oom;
			continue;
		}
		DIR *d = opendir(args[i]);
		if (!d) {
			trace_job_free_paths(out, n);
			return gw_error(GW_EXIT_ENV, safe_path(args[i], safe, sizeof safe), NULL,
			                "cannot open directory: %s", strerror(errno));
		}
		size_t first = n;
		struct dirent *e;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.' || !trace_file_name(e->d_name))
				continue;
			char *p = NULL;
			if (asprintf(&p, "%s/%s", args[i], e->d_name) < 0)
				goto oom_dir;
			struct stat fst;
			bool file = stat(p, &fst) == 0 && S_ISREG(fst.st_mode);
			bool ok = !file || add_path(&out, &n, &cap, p);
			free(p);
			if (!ok)
				goto oom_dir;
		}
		closedir(d);
		if (n == first) {
			trace_job_free_paths(out, n);
			return gw_error(
			    GW_EXIT_ENV, safe_path(args[i], safe, sizeof safe),
			    N_("a directory should hold .json, .json.gz or .sqlite traces"),
			    "no trace files in the directory");
		}
		qsort(out + first, n - first, sizeof *out, cmp_str);
		continue;
	oom_dir:
		closedir(d);
		goto oom;
	}
	*paths = out;
	*npaths = n;
	return 0;
oom:
	trace_job_free_paths(out, n);
	return gw_error(GW_EXIT_ENV, "trace", NULL, "out of memory");
}

void trace_job_free_paths(char **paths, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

typedef struct {
	trace_job *job;
	const trace_job_opts *o;
	int phase; /* 0: read (and analyse when the filter is certain); 1: rest */
	atomic_size_t next;
	size_t done; /* items finished, under lock */
	pthread_mutex_t lock;
	pthread_cond_t cond; /* signalled when an item finishes */
	int per_file;        /* threads for one file's parse */
	_Atomic uint64_t bytes;
} work_t;

static bool rank_selected(const trace_job_opts *o, int rank)
{
	if (!o->ranks)
		return true;
	for (size_t i = 0; i < o->n_ranks; i++)
		if (o->ranks[i] == rank)
			return true;
	return false;
}

/* Nanoseconds on a clock: the calling thread's CPU time (wall time says little on a busy
 * machine) or CLOCK_MONOTONIC for the -v messages' wall time. */
static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void analyse_item(trace_job_item *it, const trace_job_opts *o, bool filter, int threads)
{
	int64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), w0 = clock_ns(CLOCK_MONOTONIC);
	trace_frame f;
	if (trace_prep(&it->rank, &o->prep, filter, &f) < 0 ||
	    trace_analyze(&it->rank, &f, &it->res, threads) < 0) {
		trace_frame_free(&f);
		it->failed = GW_EXIT_ENV;
		snprintf(it->err, sizeof it->err, "out of memory while analysing");
		return;
	}
	it->analyzed = true;
	gw_debug("%s: analysed %zu events, %.3f s CPU on this thread, %.3f s wall", it->rank.path,
	         it->rank.n, (double)(clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0) / 1e9,
	         (double)(clock_ns(CLOCK_MONOTONIC) - w0) / 1e9);
	/* The results keep names and copies; the event records can go now (the frame's
	 * counters stay for the report). */
	trace_frame *fr = &it->res.frame;
	free(fr->rows);
	free(fr->partner);
	free(fr->kept);
	free(fr->cidx);
	fr->rows = fr->partner = fr->cidx = NULL;
	fr->kept = NULL;
	trace_rank_drop_events(&it->rank);
}

static void *worker(void *arg)
{
	work_t *w = arg;
	trace_job *job = w->job;
	for (;;) {
		size_t i = atomic_fetch_add(&w->next, 1);
		if (i >= job->n)
			break;
		trace_job_item *it = &job->items[i];
		if (w->phase == 0) {
			int64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID),
			        w0 = clock_ns(CLOCK_MONOTONIC);
			gw_fail fail = {0};
			if (trace_read_file(it->rank.path, &it->rank, &w->bytes, w->per_file,
			                    &fail) != 0) {
				it->failed = fail.code;
				snprintf(it->err, sizeof it->err, "%.*s", (int)sizeof it->err - 1,
				         fail.why);
			} else {
				gw_debug("%s: read %llu bytes, kept %zu of %llu events, %.3f s CPU "
				         "on this thread, %.3f s wall",
				         it->rank.path, (unsigned long long)it->rank.bytes,
				         it->rank.n, (unsigned long long)it->rank.n_events,
				         (double)(clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0) / 1e9,
				         (double)(clock_ns(CLOCK_MONOTONIC) - w0) / 1e9);
				it->selected = rank_selected(w->o, it->rank.rank);
				/* Two ProfilerStep names here settle the filter for every rank.
				 * Without rounding HTA's float arithmetic needs the origin of all
				 * ranks first. */
				if (it->selected && it->rank.n_profstep_syms >= 2 &&
				    w->o->prep.ns_rounding)
					analyse_item(it, w->o, true, w->per_file);
			}
		} else if (!it->failed && it->selected && !it->analyzed) {
			analyse_item(it, w->o, job->filter, w->per_file);
		}
		pthread_mutex_lock(&w->lock);
		w->done++;
		pthread_cond_signal(&w->cond);
		pthread_mutex_unlock(&w->lock);
	}
	return NULL;
}

static void tell_progress(work_t *w, uint64_t total, bool done)
{
	trace_progress p = {
	    .files = w->job->n, .bytes = atomic_load(&w->bytes), .total = total, .done = done};
	w->o->progress(&p, w->o->progress_arg);
}

static int run_phase(trace_job *job, const trace_job_opts *o, int phase, uint64_t total)
{
	work_t w = {.job = job, .o = o, .phase = phase};
	atomic_init(&w.next, 0);
	atomic_init(&w.bytes, 0);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_mutex_init(&w.lock, NULL);
	pthread_cond_init(&w.cond, &ca);
	pthread_condattr_destroy(&ca);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	size_t nt = o->threads > 0 ? (size_t)o->threads : (size_t)(ncpu > 0 ? ncpu : 1);
	/* Threads the files leave idle help parse the large ones. */
	w.per_file = (int)(nt / (job->n ? job->n : 1));
	if (w.per_file < 1)
		w.per_file = 1;
	if (nt > job->n)
		nt = job->n;
	if (nt < 1)
		nt = 1;
	pthread_t *th = calloc(nt, sizeof *th);
	if (!th)
		return -1;
	size_t started = 0;
	for (; started < nt; started++)
		if (pthread_create(&th[started], NULL, worker, &w))
			break;
	if (started == 0) {
		pthread_cond_destroy(&w.cond);
		pthread_mutex_destroy(&w.lock);
		free(th);
		return -1;
	}
	int64_t t0 = gw_mono_ns();
	bool shown = false;
	pthread_mutex_lock(&w.lock);
	while (w.done < job->n) {
		int64_t wake = gw_mono_ns() + 200000000;
		struct timespec ts = {wake / 1000000000, wake % 1000000000};
		pthread_cond_timedwait(&w.cond, &w.lock, &ts);
		/* Only for inputs that take a while: half a second in and still going. */
		if (o->progress && phase == 0 && w.done < job->n && gw_mono_ns() - t0 > 500000000) {
			tell_progress(&w, total, false);
			shown = true;
		}
	}
	pthread_mutex_unlock(&w.lock);
	for (size_t i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	if (shown)
		tell_progress(&w, total, true);
	pthread_cond_destroy(&w.cond);
	pthread_mutex_destroy(&w.lock);
	free(th);
	return 0;
}

static int cmp_item(const void *a, const void *b)
{
	const trace_job_item *x = a, *y = b;
	if (x->rank.rank != y->rank.rank)
		return x->rank.rank < y->rank.rank ? -1 : 1;
	return strcmp(x->rank.path, y->rank.path);
}

static void job_warn(trace_job *job, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void job_warn(trace_job *job, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	trace_warn_add(job->warnings, job->warnings_text, &job->n_warnings,
	               (int)(sizeof job->warnings / sizeof *job->warnings), fmt, ap);
	va_end(ap);
}

/* HTA's alignment origin: the earliest ts of every rank read. */
static int64_t job_origin(trace_rank *const *ranks, size_t n)
{
	int64_t o = 0;
	bool any = false;
	for (size_t i = 0; i < n; i++) {
		if (ranks[i]->have_span && (!any || ranks[i]->first_ts < o))
			o = ranks[i]->first_ts;
		any |= ranks[i]->have_span;
	}
	return o;
}

int trace_job_run(trace_job *job, char *const *paths, size_t n, const trace_job_opts *o)
{
	memset(job, 0, sizeof *job);
	/* Initialise the C locale for number parsing before threads share it. */
	gw_strtod_c("0", NULL);
	job->items = calloc(n + 1, sizeof *job->items);
	if (!job->items)
		return -1;
	job->n = n;
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++) {
		trace_rank_init(&job->items[i].rank, paths[i]);
		struct stat st;
		if (stat(paths[i], &st) == 0)
			total += (uint64_t)st.st_size;
	}
	if (run_phase(job, o, 0, total) < 0)
		return -1;
	trace_rank **ranks = calloc(n + 1, sizeof *ranks);
	if (!ranks)
		return -1;
	size_t nr = 0;
	for (size_t i = 0; i < n; i++)
		if (!job->items[i].failed)
			ranks[nr++] = &job->items[i].rank;
	job->filter = trace_prep_filter_applies(ranks, nr);
	trace_job_opts o1 = *o;
	o1.prep.origin = job_origin(ranks, nr);
	free(ranks);
	if (run_phase(job, &o1, 1, total) < 0)
		return -1;
	qsort(job->items, n, sizeof *job->items, cmp_item);
	for (size_t i = 0; i < n; i++) {
		trace_job_item *it = &job->items[i];
		it->res.r = &it->rank; /* the items moved */
		if (n > 1 && !it->failed && !it->rank.rank_found &&
		    it->rank.source == TRACE_SRC_KINETO)
			trace_rank_warn(&it->rank, "no \"rank\" in the trace: taken as rank 0");
	}
	for (size_t i = 1; i < n; i++) {
		const trace_job_item *a = &job->items[i - 1], *b = &job->items[i];
		if (!a->failed && !b->failed && a->rank.rank == b->rank.rank)
			job_warn(job,
			         "%s and %s both hold rank %d: both are analysed (HTA keeps "
			         "only the later file)",
			         a->rank.path, b->rank.path, a->rank.rank);
	}
	return 0;
}

void trace_job_free(trace_job *job)
{
	for (size_t i = 0; i < job->n; i++) {
		trace_result_free(&job->items[i].res);
		trace_rank_free(&job->items[i].rank);
	}
	free(job->items);
	for (int i = 0; i < job->n_warnings; i++) {
		free(job->warnings[i]);
		free(job->warnings_text[i]);
	}
	memset(job, 0, sizeof *job);
}
