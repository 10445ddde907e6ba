/*
 * sim_lib.h - internals of the simulated libnvidia-ml.so.1.
 *
 * Every exported NVML entry point is declared here from the X-macro in
 * include/nvml_abi.h, so a definition whose signature drifts from the ABI
 * header does not compile. All entry points serialise on one mutex (NVML
 * is thread-safe); the only call that blocks (PCIe throughput, event wait)
 * sleeps with the mutex released.
 */
#ifndef GPUWHY_SIM_LIB_H
#define GPUWHY_SIM_LIB_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "nvml_abi.h"
#include "sim_model.h"
#include "sim_scenario.h"
#include "sim_state.h"

#define SIM_EXPORT __attribute__((visibility("default")))
#define SIM_PROTO(ret, name, params) SIM_EXPORT ret name params;
NVML_ENTRY_POINTS(SIM_PROTO)
NVML_PEER_ENTRY_POINTS(SIM_PROTO)
NVML_CLIENT_ENTRY_POINTS(SIM_PROTO)
NVML_UNANSWERED_DEVICE_ENTRY_POINTS(SIM_PROTO)
NVML_UNANSWERED_ENTRY_POINTS(SIM_PROTO)
#undef SIM_PROTO

/* Not NVML: why the last nvmlInit failed ("" when it did not). For gpuwhy's messages. */
SIM_EXPORT const char *gpuwhySimLastError(void);
/*
 * Not NVML: how fast work of process pid runs on a GPU now (gpuwhy sim train
 * asks before and during each phase). *clock_share: the SM clock a kernel gets
 * now (throttling, power cap, thermal slowdown) over the GPU's unthrottled busy
 * clock; *sm_share: the part of the GPU left to pid by other work on it (the
 * scenario's own load and other workloads, time-sliced: 1 / (1 + what they
 * want)); *h2d_bytes_per_s: what
 * the current PCIe link carries host to device. GPU_IS_LOST once it is off the bus.
 */
SIM_EXPORT nvmlReturn_t gpuwhySimWorkRate(nvmlDevice_t device, unsigned int pid,
                                          double *clock_share, double *sm_share,
                                          double *h2d_bytes_per_s);
/*
 * Not NVML: the name and user of a process the scenario places (PID pid);
 * NOT_FOUND for any other PID. gpuwhy shows these instead of what this host
 * runs under the same PID.
 */
SIM_EXPORT nvmlReturn_t gpuwhySimProcessInfo(unsigned int pid, char *name, unsigned int nameLen,
                                             char *user, unsigned int userLen);

#define SIM_HISTORY 120      /* driver samples kept per GPU (20 s at 1/6 s) */
#define SIM_MAX_WL 1024      /* workload files followed at once (exited ones stay 60 s) */
#define SIM_TEMP_WINDOW 30.0 /* seconds of activity the temperature follows */

/* "Now": scenario seconds and the matching CLOCK_MONOTONIC instant. */
typedef struct {
	double t;
	int64_t mono;
	int64_t epoch_mono;    /* mono at t = 0 */
	int64_t epoch_wall_us; /* wall clock at t = 0, for NVML timestamps */
	bool pinned;           /* GPUWHY_SIM_TIME is set */
} sim_time;

/* What the driver reports "now" for one GPU, computed once per utilization period. */
typedef struct {
	long long slot, mono_slot;
	double util, mem_util, enc, dec; /* fractions over the last completed period */
	double pcie_tx, pcie_rx;         /* bytes/s over the last period */
	double power_w;                  /* one-second average, as Ampere and newer report */
	double power_now_w;              /* over the last period (NVML_FI_DEV_POWER_INSTANT) */
	double temp_c, fan_pct;
	unsigned sm_mhz, mem_mhz, video_mhz;
	unsigned long long reasons;
	int pstate;
	unsigned pcie_gen, pcie_width;
} sim_inst;

struct nvmlDevice_st {
	int index;
	const sim_gpu *g;
	bool inst_valid;
	sim_inst inst;
};

typedef struct {
	char name[80];
	ino_t ino;
	const sim_wl_file *f;
	uint32_t pid;
	uint64_t starttime;
	unsigned gpu;
	bool alive;
	int64_t alive_at; /* mono ns of the last liveness check */
	bool seen;        /* scan bookkeeping */
} sim_wl_ref;

typedef struct {
	pthread_mutex_t mu;
	int refs;
	sim_scenario *scn;
	struct nvmlDevice_st *dev;
	char dir[PATH_MAX];
	sim_epoch epoch;
	int64_t touched_at;
	sim_wl_ref wl[SIM_MAX_WL];
	int n_wl;
	int dir_fd; /* the state directory, watched by its mtime */
	int64_t dir_mtime;
	const sim_retired_file *retired;
	char last_error[700];
} sim_global;

extern sim_global sim_g;

/* ---- entering and leaving an entry point ---- */

/* Lock; UNINITIALIZED when not initialised (then unlocked). */
nvmlReturn_t sim_enter(sim_time *now);
/*
 * Lock and check: initialised, a valid handle, out != NULL, GPU not lost.
 * On success *d and *now are set and the lock is held; otherwise unlocked.
 */
nvmlReturn_t sim_enter_dev(nvmlDevice_t device, const void *out, struct nvmlDevice_st **d,
                           sim_time *now);
/*
 * The opening of a device entry point: lock and check through sim_enter_dev,
 * return its error, else declare d, now and the GPU's scenario g.
 */
#define DEV_BEGIN(device, out)                                                                     \
	struct nvmlDevice_st *d;                                                                   \
	sim_time now;                                                                              \
	nvmlReturn_t rc_ = sim_enter_dev((device), (out), &d, &now);                               \
	if (rc_ != NVML_SUCCESS)                                                                   \
		return rc_;                                                                        \
	const sim_gpu *g = d->g;                                                                   \
	(void)g

/* MIG device handles (nvml_mig.c): name, UUID and memory of the instance. */
bool sim_is_mig_handle(nvmlDevice_t device);
nvmlReturn_t sim_mig_name(nvmlDevice_t device, char *name, unsigned length);
nvmlReturn_t sim_mig_uuid(nvmlDevice_t device, char *uuid, unsigned length);
nvmlReturn_t sim_mig_memory(nvmlDevice_t device, unsigned long long *total,
                            unsigned long long *used);
nvmlReturn_t sim_mig_bar1(nvmlDevice_t device, nvmlBAR1Memory_t *bar1);
/*
 * Lock and check a MIG handle as sim_enter_dev checks a GPU's: on success
 * the instance, its GPU in *parent, the time in *now and its slot (index in the GPU's MIG
 * devices) with the lock held; NULL with *rc and the lock released otherwise.
 */
const sim_mig *sim_enter_mig(nvmlDevice_t device, const void *out, nvmlReturn_t *rc,
                             struct nvmlDevice_st **parent, int *slot, sim_time *now);
/* Unlock and return rc. */
nvmlReturn_t sim_leave(nvmlReturn_t rc);

bool sim_valid_device(nvmlDevice_t device);
/* Application clocks are deprecated by the scenario's driver (580 and newer). */
bool sim_app_clocks_deprecated(void);
bool sim_lost(const struct nvmlDevice_st *d, const sim_time *now);
/* Copy a string into an NVML buffer: INSUFFICIENT_SIZE when it does not fit. */
nvmlReturn_t sim_copy_str(char *dst, unsigned length, const char *src);

/* ---- time ---- */

int64_t sim_mono_of(const sim_time *now, double t);
/* The wall clock now, microseconds (NVML's timestamps). */
int64_t sim_wall_now_us(void);
unsigned long long sim_wall_us(const sim_time *now, double t);
double sim_t_of_wall_us(const sim_time *now, unsigned long long us);

/* ---- workloads (gpuwhy sim train) ---- */

/* Rescan the state directory when it changed; keep the clock marked as used. */
void sim_wl_refresh(const sim_time *now);
/* Activity of every workload on a GPU in [a, b) mono ns (weighted seconds, bytes). */
void sim_wl_gpu_activity(unsigned gpu, int64_t a_ns, int64_t b_ns, double acc[SIM_ACC_N]);
/* Everything the GPU's workloads have done up to now, including exited ones. */
void sim_wl_gpu_totals(unsigned gpu, int64_t now_ns, double acc[SIM_ACC_N]);
/* Bytes held by live workloads on a GPU. */
uint64_t sim_wl_gpu_mem(unsigned gpu, const sim_time *now);
bool sim_wl_ref_alive(sim_wl_ref *r, const sim_time *now);

/* ---- the model with workloads added ---- */

/* Averages over [a, b) of scenario seconds: fractions clamped to 0..1, bytes/s. */
void sim_window(const struct nvmlDevice_st *d, const sim_time *now, double a, double b,
                double m[SIM_M_COUNT]);
/* Integrals from scenario time 0 to now (fraction-seconds, bytes). */
void sim_cumulative(const struct nvmlDevice_st *d, const sim_time *now, double m[SIM_M_COUNT]);
/* The GPU's reported state now (cached per utilization period). */
const sim_inst *sim_instant(struct nvmlDevice_st *d, const sim_time *now);
/* Derive the clocks, reasons, power, temperature of a window ending at t. */
void sim_state_at(const struct nvmlDevice_st *d, const sim_time *now, double t, sim_inst *in);
/* The same with the GPU taken as busy (the clocks a kernel launched at t would get). */
void sim_state_under_load(const struct nvmlDevice_st *d, const sim_time *now, double t,
                          bool assume_busy, sim_inst *in);
/* Energy since the driver loaded, mJ. */
double sim_energy_mj(const struct nvmlDevice_st *d, const sim_time *now);
unsigned long long sim_replay_count(const sim_gpu *g, double t);
/* Active NVLinks of a GPU (workload peer traffic goes over NVLink when there are any). */
int sim_links_up(const sim_gpu *g);

#endif
