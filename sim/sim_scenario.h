/*
 * sim_scenario.h - the simulated machine: what a scenario file describes.
 *
 * A scenario is a JSON file (schema in docs/scenarios.md). The parser is
 * strict: duplicate keys, unknown keys, wrong types, missing required keys
 * and out-of-range values are errors reported as "<file>:<line>:<column>:
 * <path>: <what>", and nothing partial is ever returned.
 *
 * This module is pure (no NVML, no clocks): it is compiled into the
 * simulated libnvidia-ml.so.1, into gpuwhy itself (`gpuwhy sim check`) and
 * into the scenario fuzzer.
 */
#ifndef GPUWHY_SIM_SCENARIO_H
#define GPUWHY_SIM_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SIM_MAX_GPUS 64
#define SIM_MAX_LINKS 36
#define SIM_MAX_SWITCHES 4
#define SIM_MAX_PAGES 64
#define SIM_MAX_MIG 7 /* MIG devices per GPU (an H100 has seven slices) */
#define SIM_MAX_SEGMENTS 256
#define SIM_MAX_EPISODES 256
#define SIM_MAX_PROCS 1024
#define SIM_AFFINITY_WORDS 16 /* 1024 CPUs */
#define SIM_MAX_FILE_BYTES (4u << 20)

/*
 * Activity metrics a behaviour profile sets. Fractions 0..1 for the first
 * twelve (the JSON gives util, mem_util, enc_util, dec_util in percent),
 * bytes per second for the last four (the JSON gives MiB/s).
 */
typedef enum {
	SIM_M_UTIL,     /* a kernel was running (nvmlDeviceGetUtilizationRates.gpu) */
	SIM_M_MEM_UTIL, /* the memory interface was busy (.memory) */
	SIM_M_ENC,
	SIM_M_DEC,
	SIM_M_SM,     /* SM active (GPM SM_UTIL, DCGM PROF_SM_ACTIVE) */
	SIM_M_OCC,    /* SM occupancy */
	SIM_M_TENSOR, /* any tensor pipe */
	SIM_M_DRAM,   /* DRAM bandwidth */
	SIM_M_FP64,
	SIM_M_FP32,
	SIM_M_FP16,
	SIM_M_INT,
	SIM_M_PCIE_TX, /* GPU to host */
	SIM_M_PCIE_RX, /* host to GPU */
	SIM_M_NVL_TX,
	SIM_M_NVL_RX,
	SIM_M_COUNT
} sim_metric;

#define SIM_M_FRACTIONS SIM_M_PCIE_TX /* metrics below this index are 0..1 */

typedef struct {
	double v[SIM_M_COUNT];
} sim_profile;

typedef enum { SIM_SHAPE_STEADY, SIM_SHAPE_SQUARE, SIM_SHAPE_RAMP, SIM_SHAPE_SINE } sim_shape;

/* One stretch of scenario-driven load: the profile moves between base and level. */
typedef struct {
	double start, end; /* seconds of scenario time; end is INFINITY when open */
	sim_shape shape;
	double period; /* square, sine */
	double duty;   /* square: share of each period at level */
	double ramp;   /* ramp: seconds from base to level */
	sim_profile base, level;
} sim_segment;

typedef enum {
	SIM_EP_THROTTLE,
	SIM_EP_PCIE_REPLAY,
	SIM_EP_DOWNTRAIN,
	SIM_EP_XID,
	SIM_EP_ECC,
} sim_episode_kind;

typedef struct {
	sim_episode_kind kind;
	double start, end; /* instants (xid, ecc) have end == start */
	/* throttle */
	unsigned long long reasons;
	double sm_clock_mhz;             /* 0 when not given */
	double clock_drop_pct;           /* <0 when not given */
	double temp_c, power_w, fan_pct; /* NAN when not given */
	/* pcie_replay */
	double per_s;
	/* link_downtrain */
	unsigned gen, width;
	/* xid */
	unsigned xid;
	/* ecc */
	unsigned sbe, dbe;
} sim_episode;

typedef struct {
	char bus_id[32];        /* normalised: "00000000:1B:00.0" */
	char bus_id_legacy[16]; /* "0000:1B:00.0" */
	unsigned domain, bus, device, function;
	unsigned device_id; /* (device << 16) | vendor, e.g. 0x233010DE */
	unsigned subsystem_id;
} sim_pci;

enum { SIM_LINK_REMOTE_GPU = 0, SIM_LINK_REMOTE_SWITCH = 2 };

typedef struct {
	int remote_gpu; /* index, or -1 when the remote is a switch */
	int remote_type;
	sim_pci remote; /* filled for switches at parse time, for GPUs from that GPU */
	bool up;
} sim_link;

/* One MIG device: a GPU instance with one compute instance. */
typedef struct {
	char profile[16]; /* "3g.40gb" */
	char uuid[96];    /* "MIG-..." */
	unsigned gi, ci;  /* GPU and compute instance ids */
	unsigned sm_count, ce_count, dec_count, jpg_count, ofa_count;
	unsigned long long mem_total, mem_used, bar1_total; /* MiB (used rounded up) */
	unsigned long long mem_used_b;                      /* bytes */
} sim_mig;

typedef struct {
	int index;
	bool amd; /* "vendor": "amd": served as an amdgpu sysfs tree (sim_amdfs.h), not by NVML */
	int amd_family; /* SIM_AMD_*: 0 for NVIDIA */
	char name[96], uuid[96], serial[32], vbios[32];
	bool has_serial; /* consumer boards report no serial: "serial": "" */
	unsigned arch;   /* nvmlDeviceArchitecture_t */
	sim_pci pci;
	unsigned pcie_gen, pcie_width, pcie_max_gen, pcie_max_width, pcie_gpu_max_gen;
	unsigned long long replay_initial;
	char switches[SIM_MAX_SWITCHES][32];
	int n_switches;
	int host_bridge;
	unsigned minor;
	/* memory, MiB */
	unsigned long long mem_total, mem_reserved, mem_used, bar1_total, bar1_used;
	unsigned long long mem_reserved_b, mem_used_b; /* bytes: reserved_mib, used_mib exactly */
	unsigned mem_bus_width;                        /* bits; 0 when not given */
	/* power, W */
	double power_limit, power_default, power_min, power_max, power_idle, power_busy;
	/* clocks, MHz */
	unsigned clk_max_sm, clk_max_mem, clk_max_gr, clk_max_video;
	unsigned clk_idle_sm, clk_idle_mem, clk_busy_sm;
	bool has_app_clocks;
	unsigned app_gr, app_mem;
	/* thermal, C */
	double temp_idle, temp_busy;
	unsigned t_slowdown, t_shutdown;
	int t_gpu_max, t_mem_max; /* -1 when not modelled */
	bool has_mem_temp;
	double mem_temp_delta;
	bool has_fan;
	double fan_idle, fan_busy;
	/* reliability */
	bool has_ecc, ecc_enabled;
	unsigned long long ecc_sbe_vol, ecc_dbe_vol, ecc_sbe_agg, ecc_dbe_agg;
	bool has_retired, retired_pending;
	unsigned long long retired_sbe[SIM_MAX_PAGES], retired_dbe[SIM_MAX_PAGES];
	int n_retired_sbe, n_retired_dbe;
	bool has_remap, remap_pending, remap_failure;
	unsigned remap_corr, remap_unc;
	/* identity and modes */
	int cc_major, cc_minor;
	bool persistence;
	int compute_mode; /* nvmlComputeMode_t */
	bool has_mig, mig_current, mig_pending;
	sim_mig mig[SIM_MAX_MIG];
	int n_mig;
	int numa_node; /* -1 when not reported */
	bool has_affinity;
	unsigned long affinity[SIM_AFFINITY_WORDS];
	bool has_nvlink;
	int n_links;
	sim_link links[SIM_MAX_LINKS];
	bool nvenc, nvdec, gpm;
	int idle_pstate, busy_pstate;
	double util_period;                         /* seconds */
	double noise_util, noise_power, noise_temp; /* amplitudes: percent points, W, C */
	/* behaviour over time */
	sim_profile idle;
	int n_segments;
	sim_segment *segments;
	int n_episodes;
	sim_episode *episodes;
	double repeat;     /* seconds, 0 when the behaviour does not repeat */
	double lost_after; /* seconds, INFINITY when the GPU never falls off the bus */
	/* AMD: a GPU reset at reset_at (INFINITY: none) that succeeds back_after seconds later */
	double reset_at, back_after;
	/* AMD only ("amdgpu": {...}) */
	bool apu;                                   /* an integrated GPU: the tree an APU has */
	int gpu_metrics;                            /* SIM_AMDM_*: the table the tree holds */
	unsigned long long gtt_total_b, gtt_used_b; /* mem_info_gtt_*: system memory it maps */
	unsigned gfx_target_version;                /* the KFD's, e.g. 90402 for gfx942 */
	unsigned long long xgmi_hive;               /* xgmi_hive_id; 0: in no XGMI hive */
} sim_gpu;

/* AMD GPU families (architecture cdna2 ...): accelerators (CDNA) have no edge sensor. */
enum { SIM_AMD_CDNA2 = 1, SIM_AMD_CDNA3, SIM_AMD_RDNA2, SIM_AMD_RDNA3 };

/* The gpu_metrics table an AMD GPU's tree holds (sim_amdmetrics.h writes it). */
enum { SIM_AMDM_NONE, SIM_AMDM_V1_3, SIM_AMDM_V2_1, SIM_AMDM_V2_2 };

enum { SIM_PROC_COMPUTE = 1, SIM_PROC_GRAPHICS = 2 };

/* A process the scenario places on a GPU (not a workload of this host). */
typedef struct {
	int gpu;
	unsigned pid;
	char name[64];
	char user[32];
	unsigned long long used_mib;
	double sm_util; /* percent, reported per process only */
	int type;       /* SIM_PROC_* bits */
	int mig;        /* slot of its MIG device on the GPU, -1 for the whole GPU */
	double start, end;
} sim_fproc;

typedef struct {
	char name[64];
	char description[256];
	uint64_t seed;
	char driver_version[80];
	char nvml_version[80];
	int cuda_version;     /* 12040 for 12.4 */
	double pcie_delay_ms; /* how long nvmlDeviceGetPcieThroughput blocks */
	int n_gpus;
	int n_nvidia; /* the NVIDIA GPUs, which come first: NVML sees only these */
	sim_gpu *gpus;
	int n_procs;
	sim_fproc *procs;
} sim_scenario;

/*
 * Parse a scenario from memory. filename is used in messages only. On
 * success returns 0 and *out (free with sim_scenario_free); on error
 * returns -1 and writes "<file>:<line>:<column>: <path>: <what>" to err.
 */
int sim_scenario_parse(const char *buf, size_t len, const char *filename, sim_scenario **out,
                       char *err, size_t errlen);

/* Read and parse a file; I/O errors are reported as "<file>: <why>". */
int sim_scenario_load(const char *path, sim_scenario **out, char *err, size_t errlen);

void sim_scenario_free(sim_scenario *s);

/* Deterministic hash of (seed, a, b, c) for derived identities and noise. */
uint64_t sim_hash(uint64_t seed, uint64_t a, uint64_t b, uint64_t c);

/* Name of an architecture ("hopper"), or "unknown". */
const char *sim_arch_name(unsigned arch);

#endif
