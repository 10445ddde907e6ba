/* trace_analyze.h - HTA's analyses on one prepared rank: temporal breakdown, idle time per
 * stream, kernel types and their overlaps, the top kernels, communication/computation overlap,
 * launch statistics, queue length, memory bandwidth; and a verdict. All times are ns. */
#ifndef GPUWHY_TRACE_ANALYZE_H
#define GPUWHY_TRACE_ANALYZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/trace_model.h"
#include "trace/trace_prep.h"
#include "traceview/trace_stats.h"

/* HTA's defaults. */
#define TRACE_KERNEL_DELAY_NS 30000   /* consecutive_kernel_delay: 30 (us) */
#define TRACE_RUNTIME_CUTOFF_NS 50000 /* runtime_cutoff: 50 us */
#define TRACE_LAUNCH_DELAY_NS 100000  /* launch_delay_cutoff: 100 us */
#define TRACE_QUEUE_MAX 1024          /* CUDA_MAX_LAUNCH_QUEUE_PER_STREAM */
#define TRACE_TOP_KERNELS 10          /* num_kernels */
#define TRACE_TOP_RATIO 0.8           /* duration_ratio */

/* Verdict thresholds (shares of the GPU span or of the idle time). */
#define TRACE_VERDICT_IDLE 0.20         /* idle below this: healthy */
#define TRACE_VERDICT_EXPOSED_COMM 0.25 /* communication not hidden by compute */
#define TRACE_VERDICT_LAUNCH_GAPS 0.50  /* idle made of gaps under 100 us between kernels */

typedef enum {
	TRACE_IDLE_HOST = 0,
	TRACE_IDLE_KERNEL,
	TRACE_IDLE_OTHER,
	TRACE_IDLE_N
} trace_idle_cat;
const char *trace_idle_cat_name(trace_idle_cat c); /* host_wait, kernel_wait, other */

typedef struct {
	bool valid; /* there are GPU events */
	int64_t span, idle, compute, non_compute;
	double idle_pct, compute_pct, non_compute_pct; /* HTA's round(100 * x / span, 2) */
} trace_temporal;

typedef struct {
	int64_t stream;
	bool present[TRACE_IDLE_N];        /* HTA prints a row for the category */
	int64_t time[TRACE_IDLE_N];        /* sum of the gaps */
	double ratio[TRACE_IDLE_N];        /* time / stream total; NaN for 0/0 */
	trace_describe gaps[TRACE_IDLE_N]; /* gap statistics, us */
} trace_idle_stream;

/* Kernel type combinations: bit 1 COMPUTATION, 2 COMMUNICATION, 4 MEMORY (HTA's order). */
#define TRACE_KMASK_N 8
void trace_kmask_label(int mask, char *out, size_t outsz);

typedef struct {
	uint32_t name; /* id in the rank's names, or TRACE_NONE for "others" */
	trace_ktype type;
	size_t count; /* events (for others: names folded in) */
	int64_t sum, min, max;
	double mean, std; /* us */
	/* HTA's kernel_breakdown row: for kept names max = min = mean = sum and std 0; for
	 * "others" the statistics over the folded names' sums. */
	double hta_max, hta_min, hta_mean, hta_std; /* us */
} trace_kernel_row;

typedef struct {
	int64_t corr, cpu_dur, gpu_dur, delay; /* delay = max(0, gpu.ts - cpu.ts - cpu.dur) */
} trace_launch_row;

typedef struct {
	trace_launch_row *rows;
	size_t n;
	size_t n_short, n_runtime_outliers, n_delay_outliers;
	double median_cpu_us, median_gpu_us, median_delay_us; /* NaN without launches */
} trace_launch;

typedef struct {
	int64_t stream;
	trace_describe len;
	int64_t blocked; /* time with a queue of TRACE_QUEUE_MAX or more */
} trace_queue_stream;

typedef struct {
	char group[16];    /* Memcpy DtoH, Memcpy HtoD, Memcpy DtoD, Memset, ... */
	trace_describe bw; /* GB/s over the points of the running sum above 0 */
} trace_membw;

typedef enum {
	TRACE_VERDICT_NONE = 0, /* no GPU activity */
	TRACE_VERDICT_HEALTHY,
	TRACE_VERDICT_HOST_BOUND,
	TRACE_VERDICT_LAUNCH_BOUND,
	TRACE_VERDICT_COMM_BOUND,
} trace_verdict_id;
const char *trace_verdict_word(trace_verdict_id v);   /* "host-bound", ... */
const char *trace_verdict_id_str(trace_verdict_id v); /* "host_bound", ... (JSON ids) */

#define TRACE_MAX_EVIDENCE 6
typedef struct {
	trace_verdict_id id;
	char why[256]; /* English, as JSON and CSV give it */
	char evidence[TRACE_MAX_EVIDENCE][160];
	int n_evidence;
	/* The same sentences in the user's language (util/i18n.h), for the text report. */
	char why_text[512];
	char evidence_text[TRACE_MAX_EVIDENCE][384];
} trace_verdict;

typedef struct {
	const trace_rank *r;
	trace_frame frame;
	size_t n_gpu_events; /* frame rows with a stream */
	trace_temporal temporal;
	trace_idle_stream *idle; /* streams in HTA's order (first appearance) */
	size_t n_idle;
	int64_t launch_scale_idle;    /* idle in host/kernel-wait gaps under 100 us, all streams */
	int64_t ktime[TRACE_KMASK_N]; /* kernel type combination times */
	bool kpresent[TRACE_KMASK_N]; /* the combination occurs */
	int64_t kunion[3];            /* union per type: COMPUTATION, COMMUNICATION, MEMORY */
	trace_kernel_row *kernels;    /* per type, HTA's row order (type, then name) */
	size_t n_kernels;
	double overlap_pct;   /* comp_comm_overlap_pctg; NaN without communication */
	int64_t comm_exposed; /* communication time not overlapped by computation */
	trace_launch launch;
	trace_queue_stream *queue;
	size_t n_queue;
	trace_membw *membw;
	size_t n_membw;
	trace_verdict verdict;
	bool hta_would_fail; /* negative non-compute time: HTA's assertion */
} trace_result;

/* Runs every analysis on r (already prepared into f, which the result takes over), on two
 * threads when threads > 1.
 * Returns 0, or -1 when memory runs out (res is then freed). */
int trace_analyze(const trace_rank *r, trace_frame *f, trace_result *out, int threads);
void trace_result_free(trace_result *res);

/* Name of a kernel row ("others" for the folded row). */
const char *trace_kernel_row_name(const trace_result *res, const trace_kernel_row *k);

#endif
