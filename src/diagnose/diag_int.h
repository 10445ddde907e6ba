/*
 * diag_int.h - what the rule files share inside src/diagnose/: the context of
 * one diagnosis run and small helpers to build findings. Not for other modules.
 */
#ifndef GPUWHY_DIAGNOSE_DIAG_INT_H
#define GPUWHY_DIAGNOSE_DIAG_INT_H

#include <stdarg.h>

#include "diagnose/diag.h"

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
	bool tree_on_gpu; /* the watched tree held a context on some GPU */
	bool unmatched;   /* GPU processes whose PIDs do not exist here (PID namespace?) */
	bool procs_seen[GPU_MAX]; /* some process record names this GPU */
	bool works[GPU_MAX];      /* the GPU shows work (utilization, SM or memory above idle) */
	bool hidden;              /* a GPU of the job works but its processes are not visible */
	char span[48];    /* "the run" or "the last 30 s", for titles */
	const double *act[GPU_MAX]; /* activity series per GPU: util.gpu, else GPM activity */
} diag_ctx;

/* Rules: each adds zero or more findings to c->res. */
void rule_gpu_fault(diag_ctx *c);
void rule_oom(diag_ctx *c);
void rule_not_on_gpu(diag_ctx *c);
void rule_all_on_gpu0(diag_ctx *c);
void rule_imbalance(diag_ctx *c);
void rule_data_starved(diag_ctx *c);
void rule_sync_wait(diag_ctx *c);
void rule_launch_bound(diag_ctx *c);
void rule_memory_bound(diag_ctx *c);
void rule_memory_full_idle(diag_ctx *c);
void rule_oom_risk(diag_ctx *c);
void rule_power_capped(diag_ctx *c);
void rule_throttled(diag_ctx *c);
void rule_pcie_degraded(diag_ctx *c);
void rule_contention(diag_ctx *c);
void rule_host_swap(diag_ctx *c);
void rule_low_utilization(diag_ctx *c);
void rule_mig_no_utilization(diag_ctx *c);
void rule_healthy(diag_ctx *c);
void rule_step_bursts(diag_ctx *c);
void rule_too_little_data(diag_ctx *c);
void rule_gpu_idle(diag_ctx *c);
void rule_not_checked(diag_ctx *c);

/* quadrant.c, chain.c */
void diag_gpu_summaries(diag_ctx *c);
void diag_chain(diag_ctx *c);

/* advice.c: the texts for a key ("data-starved", "sync-wait/pcie", ...) and goal. */
void diag_advice_lookup(const char *key, diag_goal goal, const char **change, const char **verify);

/* ---- building findings ---- */
diag_finding *dx_add(diag_ctx *c, const char *id, diag_severity sev, double confidence);
void dx_title(diag_finding *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dx_note(diag_finding *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dx_ev(diag_finding *f, const char *metric, const char *stat, double value, const char *cmp,
           double threshold, const char *unit, int gpu);
void dx_gpu(diag_finding *f, int g);
void dx_advice(diag_ctx *c, diag_finding *f, const char *key);
/* Add [t0, t1]; overlapping or touching ranges merge; past the limit the closest merge. */
void dx_range(diag_finding *f, double t0, double t1);
/* Add one range per run of samples in the window where mask[s] is true. */
void dx_ranges_mask(const diag_ctx *c, diag_finding *f, const bool *mask);
/* The whole analysed window as a range. */
void dx_range_window(const diag_ctx *c, diag_finding *f);
bool dx_has(const diag_ctx *c, const char *id); /* a finding with this id exists already */

/* ---- series over the window ---- */
const double *dx_series(const diag_ctx *c, int g, gpu_metric_id id);
double dx_mean(const diag_ctx *c, const double *x);
double dx_max(const diag_ctx *c, const double *x);
double dx_min(const diag_ctx *c, const double *x);
int dx_present(const diag_ctx *c, const double *x); /* non-NAN samples in the window */
/* Share of the window GPU g idled, 0..100: 100 - utilization (driver sub-samples if absent). */
double dx_idle_pct(const diag_ctx *c, int g);
/* The same for one sample. */
double dx_idle_at(const diag_ctx *c, int g, int s);
/* Metric key of GPU g's activity series ("utilization.gpu", or the GPM one standing in). */
const char *dx_act_key(const diag_ctx *c, int g);
/* Memory capacity of GPU g in MiB (memory.total, else used+free), NAN when unknown. */
double dx_mem_total(const diag_ctx *c, int g);
/* Number of runs of true in mask[from, to). */
int dx_runs(const diag_ctx *c, const bool *mask);
/* Start of sample s's interval (the previous sample's time; its own time for the first). */
double dx_t0(const diag_ctx *c, int s);
/* "GPU 3" / "GPUs 0, 1 and 2" for the GPUs of mask (NVML indices). */
void dx_gpu_list(const diag_ctx *c, uint64_t mask, char *out, size_t len);
bool *dx_mask_new(const diag_ctx *c); /* all false, length tl->n; free() it */

/* How the job's GPUs talk: NVLink between every pair, or PCIe somewhere (worst NVML level). */
typedef enum { LINK_UNKNOWN, LINK_NVLINK, LINK_PCIE } link_kind;
link_kind dx_job_links(const diag_ctx *c, int *worst_level, int *min_links);
/* nvmlGpuTopologyLevel_t as nvidia-smi topo -m writes it: PIX, PXB, PHB, NODE, SYS. */
const char *dx_level_name(int level);

/* An environment variable of the job (meta key env.NAME), NULL when not recorded. */
const char *dx_env(const diag_ctx *c, const char *name);
/* Devices listed in CUDA_VISIBLE_DEVICES: -1 unset, 0 when empty or "-1" (every GPU hidden). */
int dx_visible_count(const char *cvd);
/*
 * How many GPUs the job meant to use: an explicit count on its command line
 * (--nproc_per_node=4, --num_gpus 2, ...), else the devices in
 * CUDA_VISIBLE_DEVICES (or every GPU) when a multi-GPU launcher (torchrun,
 * deepspeed, accelerate, mpirun) runs it; -1 when unknown.
 */
int dx_intended_gpus(const diag_ctx *c);

#endif
