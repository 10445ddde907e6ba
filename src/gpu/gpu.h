/*
 * gpu.h - the device layer: every NVML call gpuwhy makes goes through here.
 *
 * NVML is loaded with dlopen (see loader.h for which library). Every symbol
 * is optional except init, count, handle and error string; versioned entry
 * points are tried newest first. A failed or unsupported read leaves the
 * metric absent (ok[id] == 0), never 0. A GPU that falls off the bus is
 * marked lost and the others keep being sampled.
 *
 * Thread use: gpu_sample(), gpu_processes() and gpu_xid_take() of one GPU
 * are called from one thread at a time (its rate state is that thread's);
 * different GPUs may be sampled from different threads. Meanwhile
 * gpu_slow_thread_start() refreshes the slow fields (ECC, thresholds, the
 * 20 ms PCIe throughput call) on a thread of its own, so a fast sample never
 * waits for them. The static facts and gpu_nvml_error() serve any thread.
 */
#ifndef GPUWHY_GPU_GPU_H
#define GPUWHY_GPU_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu/metrics.h"
#include "util/fail.h"

#define GPU_MAX 64
#define GPU_NVLINK_MAX 36

typedef struct gpu_ctx gpu_ctx;

/* Static facts about one GPU, read once at open. Strings are "" when unknown. */
typedef struct {
	int index;      /* gpuwhy's index: NVML's for NVIDIA GPUs, then AMD GPUs in PCI order */
	char vendor[8]; /* "nvidia" or "amd" */
	/* the vendor's own numbering, counting only its GPUs from 0: CUDA's (NVML's
	 * index) for NVIDIA, HIP's and ROCr's (PCI order) for AMD */
	int vendor_index;
	char name[96];
	char uuid[96];
	char serial[32];
	char pci_bus_id[32]; /* "00000000:3B:00.0" */
	char vbios[32];
	unsigned arch; /* nvmlDeviceArchitecture_t, 0 when unknown */
	bool gpm_supported;
	bool numa_ok;
	int numa_node;
	char cpu_affinity[256]; /* "0-31,64-95", "" when unknown */
	bool pci_ok;
	unsigned pci_domain, pci_bus, pci_device, pci_device_id, pci_subsystem_id;
} gpu_static;

/* One instant of one GPU. */
typedef struct {
	int64_t t_mono_ns;
	double t_wall;
	bool lost; /* fell off the bus: every metric absent */
	double v[GM__COUNT];
	uint8_t ok[GM__COUNT];
	uint8_t why[GM__COUNT]; /* GPU_WHY_*: why an absent value is absent (0: unknown) */
	/*
	 * Memory in bytes as read, where ok[GM_MEM_*] says: the MiB in v[] are
	 * rounded up as nvidia-smi shows them; dcgm-exporter's series floor these.
	 */
	unsigned long long mem_total_b, mem_used_b, mem_free_b;
} gpu_values;

enum { GPU_WHY_NONE = 0, GPU_WHY_DEPRECATED = 1 };

typedef enum { GPU_PROC_COMPUTE = 1, GPU_PROC_GRAPHICS = 2 } gpu_proc_type;

typedef struct {
	unsigned pid;
	unsigned type; /* gpu_proc_type bits */
	bool mem_ok;
	uint64_t mem_bytes;
	bool util_ok;      /* from nvmlDeviceGetProcessUtilization */
	bool util_sampled; /* the driver had samples of this PID in the window (else 0 %) */
	unsigned sm_pct, mem_pct, enc_pct, dec_pct;
	/* A process the simulated GPU's scenario places: its name and user come from
	 * the scenario, never from this host's /proc (the same PID here is another
	 * process). "" user when the scenario names none. */
	bool sim;
	char sim_name[64], sim_user[32];
} gpu_proc;

/* Which failure gpu_open met (its gw_fail says it): the doctor words its own findings. */
typedef enum {
	GPU_FAIL_NONE,
	GPU_FAIL_NO_LIBRARY,    /* libnvidia-ml.so.1 not found / not loadable */
	GPU_FAIL_BAD_LIBRARY,   /* loaded, but lacks the entry points */
	GPU_FAIL_NOT_LOADED,    /* NVML_ERROR_DRIVER_NOT_LOADED */
	GPU_FAIL_MISMATCH,      /* NVML_ERROR_LIB_RM_VERSION_MISMATCH */
	GPU_FAIL_NO_PERMISSION, /* NVML_ERROR_NO_PERMISSION */
	GPU_FAIL_SIMULATOR,     /* the simulated GPU's scenario did not load */
	GPU_FAIL_SELECTION,     /* --gpus names no GPU */
	GPU_FAIL_OTHER,
} gpu_fail_kind;

typedef struct {
	const char *gpus;         /* --gpus LIST or NULL for all */
	int64_t slow_period_ns;   /* refresh period of SLOW fields; 0 = default 5 s */
	gw_fail *failure;         /* optional: filled when gpu_open fails */
	gpu_fail_kind *fail_kind; /* optional: which failure it was (the doctor's findings) */
} gpu_open_opts;

/*
 * Load NVML and initialise it. On failure fills opts->failure and
 * opts->fail_kind (when given) and returns a GW_EXIT_* code, printing
 * nothing: the caller prints opts->failure (gw_fail_print) or logs its
 * English line (gw_fail_text). On success returns 0 and *out. Safe to call
 * again after gpu_close().
 */
int gpu_open(const gpu_open_opts *opts, gpu_ctx **out);
/*
 * Stop the slow thread, shut NVML down, write the call census (calls.h).
 * A census that cannot be written is kept for gpu_close_failure().
 */
void gpu_close(gpu_ctx *ctx);

/* Take the last census write failure of gpu_close (true and *out), once. */
bool gpu_close_failure(gw_fail *out);

/*
 * NVML's text for a return code (nvmlErrorString), or "NVML error <n>"
 * written into buf when NVML has none. Never a shared buffer: any thread.
 */
const char *gpu_nvml_error(const gpu_ctx *ctx, int nvml_return, char *buf, size_t len);

/* Number of selected GPUs (after --gpus); i below is 0..count-1 in that list. */
int gpu_count(const gpu_ctx *ctx);
/* Number of GPUs NVML sees, selected or not. */
int gpu_count_all(const gpu_ctx *ctx);
const gpu_static *gpu_static_info(const gpu_ctx *ctx, int i);
const char *gpu_driver_version(const gpu_ctx *ctx);      /* "" when unknown */
const char *gpu_cuda_driver_version(const gpu_ctx *ctx); /* "12.4", "" when unknown */
const char *gpu_nvml_version(const gpu_ctx *ctx);
const char *gpu_library_path(const gpu_ctx *ctx);
/*
 * AMD's SMI library (docs/amd.md, "amd-smi") in one line: "" when none was
 * to be loaded, else which library and version with its GPUs, or why it is
 * not used. Written into buf.
 */
const char *gpu_amdsmi_note(const gpu_ctx *ctx, char *buf, size_t len);

/* Text of a STR-formatted metric (name, uuid, ...) for GPU i; NULL when absent. */
const char *gpu_metric_text(const gpu_ctx *ctx, int i, gpu_metric_id id);

/*
 * Read every metric of GPU i. Rates (GPM, PCIe, NVLink, driver samples)
 * need an earlier reading: the first call after open has them absent unless
 * gpu_wait_rate_window() was called.
 */
int gpu_sample(gpu_ctx *ctx, int i, gpu_values *out);

/* Sleep until rate metrics are defined (100 ms after open), for one-shot reads. */
void gpu_wait_rate_window(gpu_ctx *ctx);

/* Refresh SLOW fields on a background thread every slow_period_ns. */
int gpu_slow_thread_start(gpu_ctx *ctx);

/*
 * Xid numbers GPU i reported (NVML Xid events) since the last call, at most
 * max, oldest first; the events arrive while gpu_sample() reads. Call from
 * the sampling thread. Returns the count.
 */
int gpu_xid_take(gpu_ctx *ctx, int i, unsigned long long *out, int max);

/* Memory of GPU i in bytes, read now (not the sampled MiB). */
typedef struct {
	unsigned long long total, reserved, used, free;
	bool reserved_ok; /* the driver has _v2: used excludes reserved */
} gpu_memory;
/* 0, or the NVML return code (GPU_IS_LOST marks the GPU lost); *out is zero on failure. */
int gpu_read_memory(gpu_ctx *ctx, int i, gpu_memory *out);

/*
 * The simulated GPU's speed for process pid on GPU i (gpuwhySimWorkRate,
 * see sim/sim_lib.h): -1 when the library is a real driver without it,
 * else the NVML return code (GPU_IS_LOST once it is off the bus).
 */
int gpu_sim_work_rate(gpu_ctx *ctx, int i, unsigned pid, double *clock_share, double *sm_share,
                      double *h2d_bytes_per_s);

/*
 * The kernel log the GPUs' faults are read from. false: the host's (a real
 * machine). true under --sim: the simulated machine's, path the file its AMD
 * GPUs' amdgpu lines are written to as the scenario clock passes their times
 * (sim/sim_amdkmsg.h), or "" when the scenario has no AMD GPU: no log at all,
 * never the host's, whose lines are no simulated GPU's.
 */
bool gpu_sim_kernel_log(const gpu_ctx *ctx, char *path, size_t len);
/*
 * Under --sim, the simulated machine's kernel log up to the scenario time now
 * (GPUWHY_SIM_TIME pins it) as text, malloc'd ("" when it has no line); NULL
 * when gpuwhy is not simulating or the scenario cannot be read.
 */
char *gpu_sim_kernel_log_text(void);
/*
 * Under --sim with AMD GPUs: their files (sysfs, the KFD topology, /dev/kfd
 * and the render nodes) at the scenario time now, written into a tree of
 * this process's own, for readers that take a root (doctor's ROCm checks).
 * root gets its path; false (root "") when not simulating AMD GPUs or the
 * tree cannot be written. gpu_sim_amd_tree_remove deletes it.
 */
bool gpu_sim_amd_tree(char *root, size_t len);
void gpu_sim_amd_tree_remove(const char *root);

/* Processes on GPU i (compute and graphics, merged by PID). Returns count, -1 on error. */
int gpu_processes(gpu_ctx *ctx, int i, gpu_proc *out, int max);

/*
 * What a process list shows of a GPU process: host_pid_brief_read's answer,
 * except that a simulated scenario's process keeps the scenario's command
 * and user once its PID exists here (one that does not is a process gone
 * or in another container, as on a real host).
 */
struct host_pid_brief_s;
void gpu_proc_brief(const gpu_proc *p, const char *proc_root, struct host_pid_brief_s *out);

#define GPU_MIG_MAX 8

/* One MIG device (a GPU instance and its compute instance), read when asked. */
typedef struct {
	int index; /* MIG device index on its GPU: nvidia-smi's "MIG Dev" */
	bool ids_ok;
	unsigned gi, ci;  /* GPU instance and compute instance ids */
	char uuid[96];    /* "MIG-..." */
	char name[96];    /* "NVIDIA H100 80GB HBM3 MIG 3g.40gb" */
	char profile[32]; /* "3g.40gb", from the name; "" when unknown */
	bool mem_ok;
	double mem_total_mib, mem_used_mib, mem_free_mib, mem_reserved_mib; /* rounded up */
	unsigned long long mem_used_b, mem_free_b; /* as read, for DCGM's floor */
	bool bar1_ok;                              /* the instance's share of BAR1 */
	double bar1_total_mib, bar1_used_mib, bar1_free_mib;
	bool attr_ok;
	unsigned sm_count, ce_count, dec_count, enc_count, jpg_count, ofa_count;
} gpu_mig;

/* MIG devices of GPU i (0 when MIG is off or not supported); up to max are filled. */
int gpu_mig_devices(gpu_ctx *ctx, int i, gpu_mig *out, int max);

/* NVML's name for a process (the path it was started as); false when unknown. */
bool gpu_process_name(gpu_ctx *ctx, unsigned pid, char *out, int len);

/*
 * Retired pages of GPU i for one cause (0: multiple single-bit, 1: double-bit):
 * fills up to max addresses and returns how many the driver has, -1 when the
 * GPU does not retire pages (row remapping replaced it on Ampere and newer).
 */
int gpu_retired_pages(gpu_ctx *ctx, int i, int cause, unsigned long long *addrs, int max);

/*
 * Topology between selected GPUs i and j: nvmlGpuTopologyLevel_t, or -1 when
 * unknown. NVIDIA pairs: NVML's common ancestor; AMD pairs: the same levels
 * from their sysfs paths (amdgpu_topo_level); mixed pairs: unknown.
 */
int gpu_topology_level(gpu_ctx *ctx, int i, int j);
/* Number of active NVLinks from i to j (0 when none, -1 when unknown). */
int gpu_nvlink_count(gpu_ctx *ctx, int i, int j);
/*
 * Whether i and j are AMD GPUs of one XGMI hive: 1 yes, 0 no (or not both
 * AMD's), -1 unknown (a GPU lost). The hive's links, like NVLink, are no
 * PCIe level: gpu_topology_level still says how the two meet on PCIe.
 */
int gpu_xgmi_linked(gpu_ctx *ctx, int i, int j);
/* The same for a pair that is not two AMD GPUs: -1 (XGMI says nothing of it). */
int gpu_xgmi_pair(gpu_ctx *ctx, int i, int j);
/*
 * NVLink states of GPU i: fills up to max entries with 1 (active) / 0
 * (inactive); returns the number of links, 0 when NVLink is not supported.
 */
int gpu_nvlink_states(gpu_ctx *ctx, int i, int *states, int max);

/* Whether the device is lost (sticky once seen). */
bool gpu_is_lost(const gpu_ctx *ctx, int i);

/* Parse a --gpus list against the GPUs present. Exposed for tests. */
typedef struct {
	char uuid[96];
} gpu_ident;
/*
 * list: "0,2", "GPU-8f2a...", short UUID prefixes ("8f2a" or "GPU-8f2a"),
 * mixed. Fills sel[] with indices into ids, returns the count, or -1 with
 * a message in err when an entry matches no GPU or is ambiguous.
 */
int gpu_parse_selection(const char *list, const gpu_ident *ids, int n, int *sel, int max_sel,
                        char *err, int errlen);
/*
 * Whether a --gpus list names no GPU at all ("", " ", ","): checked where the
 * option is read, before any GPU is opened, because an empty list must not
 * read as "no selection" (a script's empty variable would select every GPU).
 */
bool gpu_selection_is_empty(const char *list);

#endif
