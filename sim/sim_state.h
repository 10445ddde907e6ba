/*
 * sim_state.h - what the simulated driver shares between processes on a host.
 *
 * State directory: $GPUWHY_SIM_STATE, else ${XDG_RUNTIME_DIR:-/tmp}/gpuwhy-sim-$UID,
 * with one subdirectory per scenario (the scenario file's base name):
 *
 *   clock          the scenario's time origin (CLOCK_MONOTONIC and wall ns);
 *                  its mtime is "last used". Restarted when unused for
 *                  GPUWHY_SIM_IDLE_RESET seconds (default 600, 0 = never).
 *   retired        activity totals of workloads that have exited, so that
 *                  cumulative counters (energy, PCIe bytes, GPM) never go back.
 *   lock           flock()ed while the clock or retired totals change.
 *   w<pid>-g<gpu>.state
 *                  one per workload process and GPU (gpuwhy sim train): its
 *                  memory, kernel size and a ring of recent busy intervals.
 *                  It stays SIM_WL_KEEP_NS after the process has gone (its
 *                  past still counts, it is no longer listed), then its
 *                  totals move into `retired`.
 *
 * The simulated NVML reads these on each query; `gpuwhy sim train` writes
 * them. Shared memory is read under a sequence lock, never blocked on.
 */
#ifndef GPUWHY_SIM_STATE_H
#define GPUWHY_SIM_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sim_scenario.h"

#define SIM_WL_MAGIC 0x4C575047u /* "GPWL" */
#define SIM_WL_VERSION 2u
#define SIM_WL_RING 2048
#define SIM_RETIRED_MAGIC 0x54525047u /* "GPRT" */

/* Kinds of interval: kernels, a collective, a host-to-device copy (no kernel runs). */
enum { SIM_WL_COMPUTE = 0, SIM_WL_COMM = 1, SIM_WL_COPY = 2 };

/*
 * How long a workload's file outlives its process: longer than any window
 * the driver reports over (20 s of samples, 30 s of temperature), so what
 * a short job did stays in utilization as long as it stays in GPM.
 */
#define SIM_WL_KEEP_NS 60000000000LL

/*
 * Activity accumulators: BUSY..INT are seconds of weighted activity (busy
 * seconds times the share of SMs / pipes active), H2D and PEER are bytes.
 */
enum {
	SIM_ACC_BUSY,
	SIM_ACC_SM,
	SIM_ACC_OCC,
	SIM_ACC_TENSOR,
	SIM_ACC_DRAM,
	SIM_ACC_FP64,
	SIM_ACC_FP32,
	SIM_ACC_FP16,
	SIM_ACC_INT,
	SIM_ACC_H2D,
	SIM_ACC_PEER,
	SIM_ACC_N
};

/* One stretch of GPU activity, in CLOCK_MONOTONIC ns. */
typedef struct {
	int64_t start_ns, end_ns;
	uint32_t kernel_us; /* typical kernel length */
	uint16_t kind;      /* SIM_WL_* */
	uint16_t reserved;
	uint64_t h2d_bytes;  /* host-to-device copies during the interval (PCIe RX) */
	uint64_t peer_bytes; /* bytes exchanged with peers (all-reduce) */
} sim_wl_interval;
_Static_assert(sizeof(sim_wl_interval) == 40, "sim_wl_interval size");

/*
 * A workload file. Intervals are published when they start, with their
 * planned end (the writer knows how long its GPU phase is); only the newest
 * may lie partly in the future, and only it may be shortened or extended.
 * acc counts every pushed interval in full; readers subtract the future.
 */
typedef struct {
	uint32_t magic, version;
	uint32_t pid, gpu;
	uint64_t starttime; /* /proc/<pid>/stat field 22, so a reused PID is not believed */
	uint64_t seq;       /* sequence lock: odd while the writer updates */
	uint64_t mem_bytes;
	uint32_t ring_cap, kernel_us;
	uint64_t count;     /* intervals ever pushed; the newest is ring[(count - 1) % ring_cap] */
	uint32_t shown_pid; /* the PID the driver reports (another PID namespace); 0: not listed */
	uint32_t reserved;
	int64_t exited_ns; /* CLOCK_MONOTONIC when the process closed its file; 0 while it runs */
	double acc[SIM_ACC_N];
	sim_wl_interval ring[SIM_WL_RING];
} sim_wl_file;

typedef struct {
	uint32_t magic, version;
	uint64_t gen; /* sequence lock over acc and the set of workload files */
	double acc[SIM_MAX_GPUS][SIM_ACC_N];
} sim_retired_file;

typedef struct {
	int64_t mono_ns; /* CLOCK_MONOTONIC at scenario time 0 */
	int64_t wall_ns; /* CLOCK_REALTIME at scenario time 0 */
} sim_epoch;

/* ---- directories and the clock ---- */

/* Base name of a scenario file without .json, made safe for a directory name. */
void sim_state_name(const char *scenario_path, char *out, size_t outlen);

/* Create (0700) and return the scenario's state directory. */
int sim_state_dir(const char *scenario_path, char *out, size_t outlen, char *err, size_t errlen);

/* Read the clock, starting or restarting it (see above) under the lock. */
int sim_clock_open(const char *dir, sim_epoch *out, char *err, size_t errlen);
/* Read the clock as it is; -1 when there is none. */
int sim_clock_read(const char *dir, sim_epoch *out);
/* Mark the scenario as used now. */
void sim_clock_touch(const char *dir);
/* Restart the scenario clock and its retired totals (gpuwhy sim reset). */
int sim_clock_reset(const char *dir, char *err, size_t errlen);

/* ---- activity model shared by writer and reader ---- */

/*
 * Weights of one busy second with kernels of kernel_us: SIM_ACC_BUSY is 1,
 * SM active grows with the kernel length (short kernels leave SMs idle
 * between launches: busy but launch-bound), pipes are shares of it.
 * H2D and PEER weights are 0 (bytes are carried by the interval).
 */
void sim_kernel_weights(unsigned kernel_us, int kind, double w[SIM_ACC_N]);

/* ---- writer: one workload process ---- */

typedef struct sim_wl sim_wl;

int sim_wl_create(const char *dir, unsigned gpu, sim_wl **out, char *err, size_t errlen);
void sim_wl_set_mem(sim_wl *w, uint64_t bytes);
/* The PID the driver lists the process under: another namespace's PID, or 0 for none. */
void sim_wl_set_shown_pid(sim_wl *w, uint32_t pid);
/* Publish [start, end) (start is moved past the previous interval if needed). */
void sim_wl_push(sim_wl *w, int64_t start_ns, int64_t end_ns, unsigned kernel_us, int kind,
                 uint64_t h2d_bytes, uint64_t peer_bytes);
/* Move the end of the newest interval (never before its start). */
void sim_wl_set_end(sim_wl *w, int64_t end_ns);
/* Mark the process as exited (its planned future is cut off), unmap, free w. */
void sim_wl_close(sim_wl *w);
/*
 * Retire (totals into `retired`, file removed) the files of processes that
 * are gone and whose last activity ended more than SIM_WL_KEEP_NS ago.
 * Returns how many.
 */
int sim_wl_reap(const char *dir);
/* The same with another delay (0: every gone process's file). */
int sim_wl_reap_after(const char *dir, int64_t keep_ns);
/* Whether a workload's process is listed by the driver: running and not exited. */
bool sim_wl_running(const sim_wl_file *hdr);

/* ---- reader ---- */

/* Whether pid is alive and, when starttime is not 0, is the same process. */
bool sim_pid_alive(uint32_t pid, uint64_t starttime);
/* Field 22 of /proc/<pid>/stat, 0 when unknown. */
uint64_t sim_pid_starttime(pid_t pid);

/* A consistent copy of a workload file's header (ring not copied). */
bool sim_wl_header(const sim_wl_file *f, sim_wl_file *hdr);
/*
 * Add the activity in [a_ns, b_ns) to acc (weighted seconds and bytes).
 * When the ring no longer reaches back to a_ns, the covered part is scaled.
 */
void sim_wl_activity(const sim_wl_file *f, int64_t a_ns, int64_t b_ns, double acc[SIM_ACC_N]);
/* Add everything up to now_ns (not the planned future) to acc. */
void sim_wl_totals(const sim_wl_file *f, int64_t now_ns, double acc[SIM_ACC_N]);

/* Map a file read-only after checking it is a workload file; NULL when not. */
const sim_wl_file *sim_wl_map(const char *path);
void sim_wl_unmap(const sim_wl_file *f);
const sim_retired_file *sim_retired_map(const char *dir);
void sim_retired_unmap(const sim_retired_file *f);

#endif
