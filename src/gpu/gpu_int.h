/*
 * gpu_int.h - what the files of the device layer share and nobody else sees:
 * the loaded NVML entry points, one selected GPU (gpu_dev), the context,
 * and the small helpers every reader uses.
 *
 * Files: gpu.c (open, close, the device table), gpu_read.c (one reader per
 * NVML call group, the READER column of metrics.def), gpu_sample.c (fast
 * reads, the STATIC/SLOW cache and its thread), gpu_procs.c (processes,
 * retired pages), gpu_topo.c (topology, NVLink), gpu_select.c (--gpus),
 * gpu_mig.c (MIG devices), gpu_amd.c (AMD GPUs through the amdgpu driver).
 */
#ifndef GPUWHY_GPU_GPU_INT_H
#define GPUWHY_GPU_GPU_INT_H

#include <pthread.h>
#include <stddef.h>

#include "gpu/amdgpu.h"
#include "gpu/gpu.h"
#include "nvml_abi.h"

#define GPU_GPM_METRICS 7

typedef struct {
#define X(ret, name, args) ret(*name) args;
	NVML_ENTRY_POINTS(X)
#undef X
} nvml_api;

/*
 * NVML's own rate window: nvmlDeviceGetPcieThroughput samples the link for
 * 20 ms, so no counter rate over a shorter interval is a reading.
 */
#define GPU_NVML_RATE_NS 20000000LL
/* One-shot readers wait this long after open before their first sample. */
#define GPU_RATE_WINDOW_NS 100000000LL

/* The previous reading of two cumulative byte counters, for their rates. */
typedef struct {
	bool ok;
	int64_t t;
	unsigned long long tx, rx;
} gpu_pair_rate;

/* An AMD GPU's per-process engine time at the last gpu_processes() call. */
#define GPU_AMD_PROC_PREV 64
typedef struct {
	unsigned pid;
	uint64_t busy_ns; /* drm-engine-gfx + drm-engine-compute */
} gpu_amd_prev;

/*
 * One selected GPU. It holds two mutexes, so it is built in place in
 * gpu_ctx.dev and never copied once they are initialised. Its rate state
 * belongs to the one thread that samples it; different GPUs may be sampled
 * from different threads.
 */
typedef struct {
	nvmlDevice_t h; /* NULL for an AMD GPU: no NVML call is ever made for one */
	gpu_static st;
	bool lost;
	const amdgpu_card *amd; /* an AMD GPU (read from sysfs), NULL for NVIDIA's */
	/* AMD process engine time, touched only by the thread calling gpu_processes */
	gpu_amd_prev amd_prev[GPU_AMD_PROC_PREV];
	int amd_nprev;
	int64_t amd_prev_t;
	/* gpu_metrics v1.6's residency counters at the previous sample (sampling thread only) */
	amdgpu_residency amd_resid;
	int proc_layout; /* 0 unknown, 24 or 32: bytes per nvmlProcessInfo from _v3 */
	/* rate state, touched only by the sampling thread */
	unsigned long long util_last_ts, proc_last_ts;
	gpu_pair_rate nvl; /* NVLink data counters */
	nvmlGpmSample_t gpm_prev, gpm_cur;
	nvmlGpmMetricsGet_t *gpm_req; /* this GPU's own request buffer, NULL without GPM */
	int64_t gpm_prev_t;
	bool gpm_have_vals;
	double gpm_v[GPU_GPM_METRICS];
	uint8_t gpm_ok[GPU_GPM_METRICS];
	/* rate state of the slow readers, touched only under slow_mu */
	gpu_pair_rate pcie; /* PCIe byte counters */
	/* STATIC and SLOW values, shared with the slow thread */
	pthread_mutex_t mu;
	double cache_v[GM__COUNT];
	uint8_t cache_ok[GM__COUNT];
	uint8_t cache_why[GM__COUNT];
	int64_t slow_t;
	pthread_mutex_t slow_mu; /* one slow refresh at a time */
	bool xid_ok;             /* registered for Xid events */
	/* under gpu_ctx.xid_mu: the event set is drained by whichever GPU samples first */
	unsigned long long xid_last;    /* 0 until an Xid is seen */
	unsigned long long xid_new[16]; /* Xids seen since the last gpu_xid_take() */
	int nxid_new;
} gpu_dev;

/* Where AMD GPUs are read: sysfs and /proc roots, and the simulated tree. */
typedef struct {
	char sys_root[512];  /* "" for /, else GPUWHY_SYSFS_ROOT */
	char proc_root[512]; /* "/proc", or the root's proc/ */
	amdgpu_card *cards;  /* every AMD GPU found, in PCI order */
	int n;
	amdgpu_kfd_node kfd[AMDGPU_KFD_MAX_NODES]; /* the KFD's GPU nodes, read at discovery */
	int nkfd;
	void *sim;              /* the simulated tree (gpu_amd.c), NULL on real sysfs */
	bool simulated;         /* under --sim, with or without a simulated tree */
	char driver[64];        /* the amdgpu driver's version, "" when unknown */
	struct amdsmi_lib *smi; /* AMD's SMI library (amdsmi.h), NULL when not used */
	gw_fail smi_fail;       /* why it is not used; code 0 when none was to be loaded */
} gpu_amd_src;

struct gpu_ctx {
	void *lib;
	bool nvml_up; /* nvmlInit succeeded: NVML must be shut down at close */
	gpu_amd_src amd;
	char lib_path[512];
	nvml_api api;
	char driver[96];
	char cuda[16];
	char nvml_version[96];
	int n_all;
	int n;
	gpu_dev *dev; /* selected devices, n entries, mutexes initialised */
	int64_t opened_ns;
	int64_t slow_period_ns;
	/*
	 * The shortest interval a PCIe rate from the byte counters may span: a
	 * delta over microseconds (two refreshes back to back at start) is no
	 * reading, yet it would be served until the next slow refresh.
	 */
	int64_t pcie_min_ns;
	bool rate_waited;       /* gpu_wait_rate_window() was called */
	nvmlEventSet_t xid_set; /* Xid events of every selected GPU, NULL when unsupported */
	pthread_mutex_t xid_mu; /* the event set and every GPU's Xid fields */
	pthread_t slow_thread;
	bool slow_running;
	pthread_mutex_t stop_mu;
	pthread_cond_t stop_cv;
	bool stopping;
	/* the simulated GPU's own entry point, NULL on a real driver */
	nvmlReturn_t (*sim_work_rate)(nvmlDevice_t, unsigned, double *, double *, double *);
	nvmlReturn_t (*sim_proc_info)(unsigned, char *, unsigned, char *, unsigned);
};

/* Which cadence a reader runs on: the fastest of the metrics it fills. */
typedef enum { RK_STATIC, RK_SLOW, RK_FAST } gpu_reader_kind;

static inline void gpu_set(gpu_values *o, gpu_metric_id id, double v)
{
	o->v[id] = v;
	o->ok[id] = 1;
}

/*
 * True on success. Remembers a lost GPU in *lost so later reads stop early.
 * The sampling and the slow thread both may see the loss: the flag is atomic.
 */
static inline bool gpu_rc_ok(bool *lost, nvmlReturn_t rc)
{
	if (rc == NVML_ERROR_GPU_IS_LOST)
		__atomic_store_n(lost, true, __ATOMIC_RELAXED);
	return rc == NVML_SUCCESS;
}

static inline bool gpu_lost(const gpu_dev *d)
{
	return __atomic_load_n(&d->lost, __ATOMIC_RELAXED);
}

static inline bool gpu_ok(gpu_dev *d, nvmlReturn_t rc)
{
	return gpu_rc_ok(&d->lost, rc);
}

/* A typed NVML value (samples, field values) as a double. */
double gpu_nvml_value(nvmlValueType_t t, nvmlValue_t v);

/* NVML's text for rc, or "NVML error <rc>" written into buf; safe from any thread. */
const char *gpu_err_text(const char *(*error_string)(nvmlReturn_t), int rc, char *buf, size_t len);

/* gpu_read.c */
gpu_reader_kind gpu_reader_kind_of(gpu_reader id);
/* Run every reader of one kind into o, stopping once the GPU is lost. */
void gpu_run_readers(gpu_ctx *c, gpu_dev *d, gpu_reader_kind kind, gpu_values *o);
/* Take a first reading of every rate so the next sample has an interval. */
void gpu_prime_rates(gpu_ctx *c, gpu_dev *d);
/* Drain the Xid events and publish GPU d's last one (also for a lost GPU). */
void gpu_read_xid(gpu_ctx *c, gpu_dev *d, gpu_values *o);
/*
 * One of NVML's string getters (name, UUID, serial, VBIOS) of a GPU or MIG
 * device into buf; "" when the entry point is missing or the driver says no.
 */
typedef nvmlReturn_t (*gpu_text_getter)(nvmlDevice_t, char *, unsigned);
bool gpu_read_text(gpu_text_getter fn, nvmlDevice_t h, bool *lost, char *buf, size_t len);
/*
 * Memory in bytes, _v2 first (reserved known) then v1 (used includes
 * reserved, reserved unknown). Returns the NVML result of the last call.
 */
nvmlReturn_t gpu_read_mem(gpu_ctx *c, nvmlDevice_t h, bool *lost, gpu_memory *m);
/*
 * Bytes as nvidia-smi's MiB: rounded up. The driver's reserved and used
 * memory are not whole MiB, and nvidia-smi 590 shows free as one more than
 * total - reserved - used (two more on some boards): rounding down or to the
 * nearest MiB cannot give that, rounding each up does.
 */
static inline double gpu_mib_up(uint64_t bytes)
{
	return (double)((bytes + 1048575ULL) / 1048576ULL);
}

/* MIG mode, current and pending (NVML_DEVICE_MIG_ENABLE/DISABLE). */
nvmlReturn_t gpu_read_mig_mode(gpu_ctx *c, nvmlDevice_t h, unsigned *cur, unsigned *pend);

/* gpu_amd.c */
static inline bool gpu_is_amd(const gpu_dev *d)
{
	return d->amd != NULL;
}
/* Find AMD GPUs (GPUWHY_SYSFS_ROOT or the simulated scenario's tree). Returns the count. */
int gpu_amd_discover(gpu_ctx *c);
/* The AMD cards' static facts as GPU index base + k. */
void gpu_amd_static(const gpu_ctx *c, int k, int index, gpu_static *st);
/* One reading of an AMD GPU (the simulated tree refreshed first). */
void gpu_amd_sample(gpu_ctx *c, gpu_dev *d, gpu_values *o);
int gpu_amd_processes(gpu_ctx *c, gpu_dev *d, gpu_proc *out, int max);
int gpu_amd_read_memory(gpu_ctx *c, gpu_dev *d, gpu_memory *out);
/* The amdgpu module's version (else the kernel release) into buf; "" when unknown. */
void gpu_amd_driver_version(const gpu_ctx *c, char *buf, size_t len);
void gpu_amd_close(gpu_ctx *c);

/* gpu_sample.c */
/* Copy the STATIC/SLOW metrics filled by readers of `kind` into d's cache. */
void gpu_cache_store(gpu_dev *d, gpu_reader_kind kind, const gpu_values *o);
/* Stop and join the slow thread when it runs. */
void gpu_slow_thread_stop(gpu_ctx *c);

#endif
