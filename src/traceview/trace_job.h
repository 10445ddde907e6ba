/* trace_job.h - one `gpuwhy trace` run: the input files (one rank each), read and analysed in
 * parallel threads, telling where reading stands through a callback. */
#ifndef GPUWHY_TRACE_JOB_H
#define GPUWHY_TRACE_JOB_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "traceview/trace_analyze.h"
#include "trace/trace_model.h"
#include "trace/trace_prep.h"

/* Where reading stands, for a progress line: bytes of total read from files input files;
 * done once, after the last call with done false. */
typedef struct {
	size_t files;
	uint64_t bytes, total;
	bool done;
} trace_progress;

typedef struct {
	trace_prep_opts prep;
	int threads; /* worker threads; 0: one per CPU */
	/* Called from the job's calling thread about five times a second while reading takes more
	 * than half a second, then once with done (only if it was called); NULL: never. */
	void (*progress)(const trace_progress *p, void *arg);
	void *progress_arg;
	const int *ranks; /* analyse only these ranks; NULL: all */
	size_t n_ranks;
} trace_job_opts;

typedef struct {
	trace_rank rank;
	trace_result res;
	bool analyzed; /* res is filled */
	bool selected; /* in --ranks (or no filter) */
	int failed;    /* 0, or a GW_EXIT_* code with the reason in err */
	char err[256];
} trace_job_item;

typedef struct {
	trace_job_item *items; /* sorted by rank, then path, once run */
	size_t n;
	bool filter;            /* HTA's ProfilerStep filter applied */
	char *warnings[8];      /* about the job as a whole (duplicate ranks...), English */
	char *warnings_text[8]; /* the same in the user's language, for text */
	int n_warnings;
} trace_job;

/*
 * Expands the PATH arguments: a file is one rank; a directory contributes every .json, .json.gz,
 * .gz and .sqlite file in it (sorted by name). Returns 0, or GW_EXIT_ENV / GW_EXIT_USAGE with
 * the reason printed.
 */
int trace_job_collect(char *const *args, size_t nargs, char ***paths, size_t *npaths);
void trace_job_free_paths(char **paths, size_t n);

/* Reads and analyses every file. Returns 0 (items may have failed individually) or -1 when
 * threads or memory are missing. */
int trace_job_run(trace_job *job, char *const *paths, size_t n, const trace_job_opts *o);
void trace_job_free(trace_job *job);

#endif
