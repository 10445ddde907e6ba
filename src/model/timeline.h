/*
 * timeline.h - a window of snapshots in columnar form: what diagnosis,
 * reports, the live view and the exporter all consume.
 *
 * Every series has one value per sample; NAN means absent (the metric was
 * unsupported or failed at that instant), never 0. A series that was never
 * present is NULL. Built by the recorder's reader (store/) or from the live
 * sampler's ring; rules never do I/O.
 */
#ifndef GPUWHY_MODEL_TIMELINE_H
#define GPUWHY_MODEL_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>

#include "gpu/gpu.h"

/* The host summary: the HOST_SUM_METRIC table of host/host_metrics.def. */
typedef enum {
#define HOST_SUM_METRIC(id, key, unit, agg, table, src, family, label, help) HM_##id,
#include "host/host_metrics.def"
#undef HOST_SUM_METRIC
	HM__COUNT
} host_metric_id;

typedef struct {
	const char *key, *unit, *help;
	const char *family; /* the exporter's Prometheus gauge, "" for none */
	const char *label;  /* on `top`'s host line, "" for none */
} host_metric_desc;
extern const host_metric_desc host_metrics[HM__COUNT];
/* Factor from the summary's unit to the family's base unit (percent -> ratio, MiB -> bytes). */
double host_metric_base_scale(host_metric_id id);

typedef struct {
	int index; /* NVML index */
	char uuid[96];
	char name[96];
	/* "nvidia", "amd"; "" when unknown (a recording older than the column,
	 * a mixed source): advice then names neither vendor's tools */
	char vendor[8];
	bool lost_at_end;
	double *m[GM__COUNT]; /* series; NULL when never present */
} tl_gpu;

typedef struct {
	int s; /* sample index */
	unsigned pid;
	unsigned ppid;
	int gpu;            /* position in tl->gpu, -1 for a host-only record */
	bool in_tree;       /* part of the watched process tree */
	bool alive;         /* exists on this host (false: memory held by a gone process) */
	double gpu_mem_mib; /* NAN when unknown */
	double sm_pct;      /* NAN when unknown */
	double cpu_pct;     /* of one core, NAN when unknown */
	double rss_mib;     /* NAN when unknown */
	char state; /* /proc state at the sample: 'R' running or runnable, 'S', 'D', ...; 0 unknown
	             */
	char user[32];
	char cmd[128];
} tl_proc;

typedef struct {
	double t;  /* seconds since the start of the timeline */
	long step; /* step number as printed, or a running count */
} tl_step;

/* Event kinds recorded beside the samples. */
#define TL_EV_PROC_START "proc_start"
#define TL_EV_PROC_EXIT "proc_exit"
#define TL_EV_OOM "oom"
#define TL_EV_XID "xid"
#define TL_EV_GPU_LOST "gpu_lost"
#define TL_EV_NVML_ERROR "nvml_error"
#define TL_EV_ANNOTATION "annotation"
#define TL_EV_AER "pcie_aer"
/* An amdgpu fault in the kernel log; its value says which (the AMD counterpart of an Xid). */
#define TL_EV_AMDGPU "amdgpu_fault"
#define TL_AMDGPU_RING_TIMEOUT 1 /* a command ring stopped progressing */
#define TL_AMDGPU_RESET 2        /* the driver began resetting the GPU */
#define TL_AMDGPU_RESET_OK 3     /* the reset succeeded (the job's work on the GPU is lost) */
#define TL_AMDGPU_RESET_FAILED 4 /* the reset failed: the GPU is unusable until a reboot */
#define TL_EV_RECORD_ERROR "record_error"

typedef struct {
	double t;
	char kind[24];
	int gpu;    /* position in tl->gpu or -1 */
	long value; /* exit status, xid number, ... */
	char text[256];
} tl_event;

/* One key/value pair of the recording's meta table (command, env.NAME, driver, ...). */
typedef struct {
	char *key, *value;
} tl_kv;

/*
 * Summary of a kernel trace (Kineto / nsys) over the same run, when one was
 * read; kernels == 0 means no trace. Kernels shorter than TL_KERNEL_SHORT_US
 * cost about as much to launch as to run.
 */
#define TL_KERNEL_SHORT_US 10.0
typedef struct {
	long kernels;       /* kernels in the trace */
	long short_kernels; /* of which shorter than TL_KERNEL_SHORT_US */
	double kernel_s;    /* summed kernel time */
	double span_s;      /* first kernel start to last kernel end */
} tl_trace_summary;

typedef struct {
	/* samples */
	int n, cap;
	double *t;        /* seconds since start (wall clock difference) */
	double t0_wall;   /* wall clock of t = 0 */
	double *interval; /* achieved sampling interval in seconds (jitter), NAN for the first */
	/* GPUs */
	int ngpu;
	tl_gpu *gpu;
	int nvlinks[GPU_MAX][GPU_MAX]; /* active NVLinks between positions, -1 unknown */
	int topo[GPU_MAX][GPU_MAX];    /* nvmlGpuTopologyLevel_t or -1 */
	int xgmi[GPU_MAX][GPU_MAX];    /* AMD pairs: 1 in one XGMI hive, 0 not; -1 unknown */
	/* host */
	int ncpu;
	double **cpu_busy;   /* [ncpu][n] busy % per core, NAN when offline/unknown */
	double **cpu_iowait; /* [ncpu][n] */
	double *h[HM__COUNT];
	/* processes, steps, events */
	tl_proc *procs;
	int nprocs, procs_cap;
	tl_step *steps;
	int nsteps, steps_cap;
	tl_event *events;
	int nevents, events_cap;
	/* facts */
	char command[1024]; /* the watched command line, "" if none */
	char driver[96];
	char cuda[16];
	char hostname[256];
	int exit_status; /* -1 unknown; 0..255 exit code; 128+N killed by signal N */
	bool have_root;  /* a process tree was watched */
	double duration; /* seconds */
	/* the recording's meta table, verbatim (readers fill it with tl_meta_set) */
	tl_kv *meta;
	int nmeta, meta_cap;
	tl_trace_summary trace;
} timeline;

timeline *tl_new(int ngpu, int ncpu);
void tl_free(timeline *tl);

/* Room for cap samples in every series, the ones allocated later too: a timeline of known
 * length (a Prometheus range) holds that many, not the next power of two. */
void tl_reserve(timeline *tl, int cap);
/* Append one sample at time t (seconds since start); every series gets NAN. Returns its index. */
int tl_add_sample(timeline *tl, double t);
/* Set a value of the last-added (or any) sample; allocates the series on first use. */
void tl_set_gpu(timeline *tl, int g, gpu_metric_id id, int s, double v);
void tl_set_host(timeline *tl, host_metric_id id, int s, double v);
void tl_set_cpu(timeline *tl, int core, int s, double busy, double iowait);
tl_proc *tl_add_proc(timeline *tl);
/* p as a new record, of a timeline or a snapshot: no GPU, every value unknown (NAN). */
void tl_proc_init(tl_proc *p);
/* e as a new event: kind, text (NULL: none) cut to their fields. */
void tl_event_init(tl_event *e, double t, const char *kind, int gpu, long value, const char *text);
void tl_add_step(timeline *tl, double t, long step);
tl_event *tl_add_event(timeline *tl, double t, const char *kind, int gpu, long value,
                       const char *text);

/* Set (or replace) a meta key; get returns NULL when absent. */
void tl_meta_set(timeline *tl, const char *key, const char *value);
const char *tl_meta_get(const timeline *tl, const char *key);

/* Series access: value or NAN. */
double tl_gpu_at(const timeline *tl, int g, gpu_metric_id id, int s);
double tl_host_at(const timeline *tl, host_metric_id id, int s);

/* Statistics over samples [from, to) ignoring NAN; NAN when none present. */
double tl_mean(const double *series, int from, int to);
double tl_max(const double *series, int from, int to);
double tl_min(const double *series, int from, int to);
/* Share (0..1) of present samples for which pred(v) holds; NAN when none present. */
double tl_share(const double *series, int from, int to, bool (*pred)(double v, double arg),
                double arg);
bool tl_pred_le(double v, double arg);
bool tl_pred_ge(double v, double arg);
/*
 * The same weighted by the time each sample covers (the interval before it;
 * the first covers as long as the second), for recordings whose samples are
 * not evenly spaced: the recorder samples fast during the first second.
 */
double tl_weight(const timeline *tl, int s);
double tl_wmean(const timeline *tl, const double *series, int from, int to);
double tl_wshare(const timeline *tl, const double *series, int from, int to,
                 bool (*pred)(double v, double arg), double arg);

/* Step durations (seconds between consecutive steps); returns count, *out malloc'd. */
int tl_step_durations(const timeline *tl, double **out);
/* Percentile p (0..100) of a copy of xs (linear interpolation); NAN when n == 0. */
double tl_percentile(const double *xs, int n, double p);
/* The k percentiles ps[] of xs into out[], from one sorted copy: each equal to tl_percentile's. */
void tl_percentiles(const double *xs, int n, const double *ps, int k, double *out);

#endif
