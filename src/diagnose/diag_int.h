/*
 * diag_int.h - what the rule files share inside src/diagnose/: the context of
 * one diagnosis run and small helpers to build findings. Not for other modules.
 */
#ifndef GPUWHY_DIAGNOSE_DIAG_INT_H
#define GPUWHY_DIAGNOSE_DIAG_INT_H

#include <stdarg.h>

#include "diagnose/diag.h"
#include "util/i18n.h"

/*
 * L_("text"): a message of the diagnosis, in the language in force while
 * diag_run's options ask for it (diag_opts.localize), else the English
 * msgid. diag_title and diag_note translate their format the same way; the
 * build tells xgettext about all three (CMakeLists.txt).
 */
const char *diag_tr(const char *msgid) __attribute__((format_arg(1)));
#define L_(s) diag_tr(s)
/* Set by diag_run and diag_compare from their options. */
void diag_set_localize(bool on);

typedef struct {
	const timeline *tl;
	const diag_opts *o;
	const diag_thresholds *th;
	diag_result *res;
	int ngpu;          /* GPUs considered (tl->ngpu capped at GPU_MAX) */
	int from, to;      /* analysed window [from, to) */
	double window_s;   /* its length in seconds */
	bool job[GPU_MAX]; /* GPUs of the job */
	int njob;
	bool tree_on_gpu;         /* the watched tree held a context on some GPU */
	bool unmatched;           /* GPU processes whose PIDs do not exist here (PID namespace?) */
	bool procs_seen[GPU_MAX]; /* some process record names this GPU */
	bool works[GPU_MAX];      /* the GPU shows work (utilization, SM or memory above idle) */
	bool hidden;              /* a GPU of the job works but its processes are not visible */
	char span[48];            /* "the run" or "the last 30 s", for titles */
	const double *act[GPU_MAX]; /* activity series per GPU: util.gpu, else GPM activity */
	bool *stopped;              /* per sample: a job process stopped (state T) or traced (t) */
	uint64_t loader_bound;      /* GPUs data-starved names for a saturated loader of the job */
} diag_ctx;

/* Rules (rules.def): each adds zero or more findings to c->res. */
#define RULE(sym, id, fn, summary) void fn(diag_ctx *c);
#define RULE_ID(sym, id, summary)
#include "diagnose/rules.def"
#undef RULE
#undef RULE_ID

/*
 * A job process seen stopped (state T: SIGSTOP, Ctrl-Z) or traced (state t: a
 * debugger at a breakpoint) while the job's GPUs idled (rules_proc.c). The
 * one named is the longest stopped, one holding a GPU context first.
 */
typedef struct {
	unsigned pid;
	bool traced;    /* seen in state t */
	double seconds; /* how long it was seen stopped while the GPUs idled */
	double idle_s;  /* the job's GPUs' idle time over the window */
	bool explains;  /* the stop covers at least half of that idle time */
	int others;     /* other job processes seen stopped meanwhile */
	char cmd[128];
} diag_stop;
/* True when a job process was seen stopped in at least two idle samples of the window. */
bool diag_stopped_job(const diag_ctx *c, diag_stop *out);
/* Per-sample mask of job processes stopped or traced (diag_run sets c->stopped from it). */
bool *diag_stopped_mask(const diag_ctx *c);
/* Append to f's title how long the job was stopped (or held by a debugger). */
void diag_stop_title(diag_finding *f, const diag_stop *st);
/* Name the stopped process in f: a note, the evidence, and the advice "stopped" when it explains.
 */
void diag_stop_cite(diag_ctx *c, diag_finding *f, const diag_stop *st, int gpu);

/* quadrant.c, chain.c */
void diag_gpu_summaries(diag_ctx *c);
void diag_chain(diag_ctx *c);

/* advice.c: the texts for a rule, its case (NULL, or "pcie" for sync-wait over PCIe, ...),
 * the vendor of the GPUs concerned ("nvidia", "amd"; "" or NULL unknown or mixed: texts
 * that name neither vendor's tools) and goal. */
void diag_advice_lookup(diag_rule rule, const char *variant, const char *vendor, diag_goal goal,
                        const char **change, const char **verify);

/* ---- building findings ---- */
diag_finding *diag_add(diag_ctx *c, diag_rule rule, diag_severity sev, double confidence);
void diag_title(diag_finding *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void diag_note(diag_finding *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * One evidence line, by named fields:
 *   DIAG_EV(f, g, .metric = DIAG_GM(UTIL_GPU), .stat = N_("mean"), .value = u,
 *         .cmp = ">=", .threshold = th->launch_util_pct, .unit = "%");
 * g is the GPU's position in tl->gpu, DIAG_JOB for the host or the job as a whole.
 */
typedef struct {
	const char
	    *metric;     /* a metric table key (DIAG_GM, DIAG_HM) or an evidence name (DIAG_EV_*) */
	const char *per; /* printed "metric/per": a ratio of two metrics */
	const char *plus; /* printed "metric+plus": a sum of two */
	const char *stat; /* N_("mean"), N_("peak"), ...: translated under localize */
	double value;
	const char *cmp;  /* ">=", "<=", ">", "<", "="; NULL: context, no threshold */
	double threshold; /* read only with cmp */
	const char *unit; /* NULL: none */
} diag_ev_spec;
#define DIAG_JOB (-1)
void diag_ev_add(diag_finding *f, int gpu, const diag_ev_spec *e);
#define DIAG_EV(f, gpu, ...) diag_ev_add((f), (gpu), &(const diag_ev_spec){__VA_ARGS__})

/*
 * Evidence names. Metrics are named by their table's key; the host table is
 * reached through DIAG_HM alone, so it can move without touching a rule.
 */
#define DIAG_GM(sym) (gpu_metrics[GM_##sym].key)
#define DIAG_HM(sym) (host_metrics[HM_##sym].key)
/* Families of metric keys, cited as one. */
#define DIAG_EV_REASONS "clocks_event_reasons"         /* the clock event reason bits */
#define DIAG_EV_UTIL_SAMPLES "utilization.gpu.samples" /* the driver's sub-sample min/max */
#define DIAG_EV_PCIE_LINK "pcie.link"                  /* generation and width together */
/* Facts that are no metric: processes, steps, the trace, the recording, the topology. */
#define DIAG_EV_PROC_GPU "process.gpu"
#define DIAG_EV_PROC_GPU_MEM "process.gpu_memory"
#define DIAG_EV_PROC_CPU "process.cpu"
#define DIAG_EV_PROC_STATE "process.state"
#define DIAG_EV_PROC_SM "process.sm"
#define DIAG_EV_STEPS "steps"
#define DIAG_EV_TRACE_KERNELS "trace.kernels"
#define DIAG_EV_GPUS "gpus"
#define DIAG_EV_SAMPLES "samples"
#define DIAG_EV_DURATION "duration"
#define DIAG_EV_COMMAND "command"
#define DIAG_EV_TOPOLOGY "topology"
#define DIAG_EV_NVLINK "nvlink"
#define DIAG_EV_XGMI "xgmi"
/* (events are cited by their kind: TL_EV_XID, TL_EV_GPU_LOST, TL_EV_OOM, TL_EV_AER) */

void diag_gpu(diag_finding *f, int g);
/* The advice of f's rule for the case variant (NULL: the rule's own; see advice.c). */
void diag_advice(diag_ctx *c, diag_finding *f, const char *variant);
/* Add [t0, t1]; overlapping or touching ranges merge; past the limit the closest merge. */
void diag_add_range(diag_finding *f, double t0, double t1);
/* Add one range per run of samples in the window where mask[s] is true. */
void diag_ranges_mask(const diag_ctx *c, diag_finding *f, const bool *mask);
/* The whole analysed window as a range. */
void diag_range_window(const diag_ctx *c, diag_finding *f);
bool diag_has(const diag_ctx *c, diag_rule rule); /* a finding of this rule exists already */
/* GPU counters only (a log of nvidia-smi read back): no host series, processes or steps. */
bool diag_gpu_only(const diag_ctx *c);
const diag_finding *diag_ctx_find(const diag_ctx *c, diag_rule rule); /* the first one, or NULL */

/* ---- series over the window ---- */
const double *diag_series(const diag_ctx *c, int g, gpu_metric_id id);
double diag_mean(const diag_ctx *c, const double *x);
double diag_max(const diag_ctx *c, const double *x);
double diag_min(const diag_ctx *c, const double *x);
int diag_present(const diag_ctx *c, const double *x); /* non-NAN samples in the window */
/* Share of the window GPU g idled, 0..100: 100 - utilization (driver sub-samples if absent). */
double diag_idle_pct(const diag_ctx *c, int g);
/* The same for one sample. */
double diag_idle_at(const diag_ctx *c, int g, int s);
/* Metric key of GPU g's activity series ("utilization.gpu", or the GPM one standing in). */
const char *diag_act_key(const diag_ctx *c, int g);
/* Memory capacity of GPU g in MiB (memory.total, else used+free), NAN when unknown. */
double diag_mem_total(const diag_ctx *c, int g);
/* Number of runs of true in mask[from, to). */
int diag_runs(const diag_ctx *c, const bool *mask);
/* Start of sample s's interval (the previous sample's time; its own time for the first). */
double diag_t0(const diag_ctx *c, int s);
/* "GPU 3" / "GPUs 0, 1 and 2" for the GPUs of mask (NVML indices). */
void diag_gpu_list(const diag_ctx *c, uint64_t mask, char *out, size_t len);
bool *diag_mask_new(const diag_ctx *c); /* all false, length tl->n; free() it */

/*
 * How the job's GPUs talk: NVLink (min_links: the fewest between a pair) or
 * XGMI (min_links: the pairs in one hive) between every pair, or PCIe
 * somewhere (worst NVML level; *amd when that pair is two AMD GPUs outside
 * one XGMI hive, so "no XGMI" rather than "no NVLink").
 */
typedef enum { LINK_UNKNOWN, LINK_NVLINK, LINK_PCIE, LINK_XGMI } link_kind;
link_kind diag_job_links(const diag_ctx *c, int *worst_level, int *min_links, bool *amd);
/* A topology level for a title: PIX .. SYS, "the same board", or "PCIe" when unknown. */
const char *diag_level_name(int level);

/* An environment variable of the job (meta key env.NAME), NULL when not recorded. */
const char *diag_env(const diag_ctx *c, const char *name);
/* Devices listed in CUDA_VISIBLE_DEVICES: -1 unset, 0 when empty or "-1" (every GPU hidden). */
int diag_visible_count(const char *cvd);
/*
 * How many GPUs the job meant to use: an explicit count on its command line
 * (--nproc_per_node=4, --num_gpus 2, ...), else the devices in
 * CUDA_VISIBLE_DEVICES (or every GPU) when a multi-GPU launcher (torchrun,
 * deepspeed, accelerate, mpirun) runs it; -1 when unknown.
 */
int diag_intended_gpus(const diag_ctx *c);

#endif
