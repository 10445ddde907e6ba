/*
 * nvml_extra.c - NVML entry points that return lists and histories:
 * processes, per-process utilization, driver samples, field values,
 * events and GPM.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim_lib.h"

#define MIB 1048576.0

/* ---- processes ---- */

typedef struct {
	unsigned pid;
	unsigned long long mem;
	sim_wl_ref *wl;      /* a workload of this host */
	const sim_fproc *fp; /* a process the scenario places */
} proc_ent;

/*
 * Processes on a GPU of the given type: the scenario's first, then live
 * workloads. slot >= 0 asks for one MIG device's: the scenario's processes
 * placed on it (workloads of this host know no MIG devices).
 */
static int list_procs(struct nvmlDevice_st *d, const sim_time *now, int type, int slot,
                      proc_ent *out, int max)
{
	int n = 0;
	for (int i = 0; i < sim_g.scn->n_procs && n < max; i++) {
		const sim_fproc *p = &sim_g.scn->procs[i];
		if (p->gpu == d->index && (slot < 0 || p->mig == slot) && (p->type & type) &&
		    now->t >= p->start && now->t < p->end)
			out[n++] =
			    (proc_ent){.pid = p->pid, .mem = p->used_mib * 1048576ULL, .fp = p};
	}
	if (!(type & SIM_PROC_COMPUTE) || slot >= 0)
		return n;
	for (int i = 0; i < sim_g.n_wl && n < max; i++) {
		sim_wl_ref *r = &sim_g.wl[i];
		sim_wl_file h;
		/* Exited processes' history still counts, but they are no longer listed;
		 * one in another PID namespace is listed under that namespace's PID, or not. */
		if (r->gpu != (unsigned)d->index || !sim_wl_ref_alive(r, now) ||
		    !sim_wl_header(r->f, &h) || h.exited_ns || !h.shown_pid)
			continue;
		out[n++] = (proc_ent){.pid = h.shown_pid, .mem = h.mem_bytes, .wl = r};
	}
	return n;
}

#define MAX_PROCS (SIM_MAX_PROCS + SIM_MAX_WL)

/* Lock and check a whole-GPU handle (*slot = -1) or a MIG device's (its slot). */
static nvmlReturn_t enter_gpu_or_mig(nvmlDevice_t device, const void *out, struct nvmlDevice_st **d,
                                     sim_time *now, int *slot)
{
	*slot = -1;
	if (!sim_is_mig_handle(device))
		return sim_enter_dev(device, out, d, now);
	nvmlReturn_t rc;
	return sim_enter_mig(device, out, &rc, d, slot, now) ? NVML_SUCCESS : rc;
}

/* The GPU and compute instance ids a process shows: those of its MIG device, or none. */
static void instance_ids(const proc_ent *e, const struct nvmlDevice_st *d, nvmlProcessInfo_t *p)
{
	p->gpuInstanceId = 0xFFFFFFFFu; /* MIG off */
	p->computeInstanceId = 0xFFFFFFFFu;
	if (e->fp && e->fp->mig >= 0 && e->fp->mig < d->g->n_mig) {
		p->gpuInstanceId = d->g->mig[e->fp->mig].gi;
		p->computeInstanceId = d->g->mig[e->fp->mig].ci;
	}
}

static nvmlReturn_t processes(nvmlDevice_t device, unsigned *count, void *infos, int type, bool v1)
{
	struct nvmlDevice_st *d;
	sim_time now;
	int slot;
	nvmlReturn_t rc0 = enter_gpu_or_mig(device, count, &d, &now, &slot);
	if (rc0 != NVML_SUCCESS)
		return rc0;
	proc_ent *e = malloc(MAX_PROCS * sizeof *e);
	if (!e)
		return sim_leave(NVML_ERROR_MEMORY);
	unsigned n = (unsigned)list_procs(d, &now, type, slot, e, MAX_PROCS);
	nvmlReturn_t rc = NVML_SUCCESS;
	if (*count < n)
		rc = NVML_ERROR_INSUFFICIENT_SIZE;
	else if (n > 0 && !infos)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	for (unsigned i = 0; rc == NVML_SUCCESS && i < n; i++) {
		if (v1) {
			nvmlProcessInfo_v1_t *p = (nvmlProcessInfo_v1_t *)infos + i;
			p->pid = e[i].pid;
			p->usedGpuMemory = e[i].mem;
		} else {
			nvmlProcessInfo_t *p = (nvmlProcessInfo_t *)infos + i;
			p->pid = e[i].pid;
			p->usedGpuMemory = e[i].mem;
			instance_ids(&e[i], d, p);
		}
	}
	*count = n;
	free(e);
	return sim_leave(rc);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_t *infos)
{
	return processes(device, infoCount, infos, SIM_PROC_COMPUTE, false);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_t *infos)
{
	return processes(device, infoCount, infos, SIM_PROC_COMPUTE, false);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
                                                  nvmlProcessInfo_v1_t *infos)
{
	return processes(device, infoCount, infos, SIM_PROC_COMPUTE, true);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                      nvmlProcessInfo_t *infos)
{
	return processes(device, infoCount, infos, SIM_PROC_GRAPHICS, false);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount,
                                                      nvmlProcessInfo_t *infos)
{
	return processes(device, infoCount, infos, SIM_PROC_GRAPHICS, false);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
                                                   nvmlProcessInfo_v1_t *infos)
{
	return processes(device, infoCount, infos, SIM_PROC_GRAPHICS, true);
}

/*
 * Processes that reach the GPU through an MPS server: Volta and newer. The
 * simulated host runs no MPS control daemon, so every process has a context
 * of its own and this list is empty, as on a real host without MPS.
 */
static nvmlReturn_t mps_processes(nvmlDevice_t device, unsigned *count)
{
	DEV_BEGIN(device, count);
	if (g->arch < NVML_DEVICE_ARCH_VOLTA)
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	*count = 0;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses_v3(nvmlDevice_t device,
                                                        unsigned int *infoCount,
                                                        nvmlProcessInfo_t *infos)
{
	(void)infos;
	return mps_processes(device, infoCount);
}

nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses_v2(nvmlDevice_t device,
                                                        unsigned int *infoCount,
                                                        nvmlProcessInfo_t *infos)
{
	(void)infos;
	return mps_processes(device, infoCount);
}

nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_v1_t *infos)
{
	(void)infos;
	return mps_processes(device, infoCount);
}

/*
 * Per-process SM and memory shares over [a, b] of scenario time. Workloads
 * whose kernels overlapped were time-sliced: their shares are scaled so that
 * together they never exceed what the GPU was busy with.
 */
static void process_shares(const struct nvmlDevice_st *d, const sim_time *now, double a, double b,
                           const proc_ent *e, int np, double *sm, double *mem)
{
	double fixed = 0, wl = 0;
	for (int i = 0; i < np; i++) {
		if (e[i].fp) {
			sm[i] = e[i].fp->sm_util / 100.0;
			mem[i] = 0.4 * sm[i];
			fixed += sm[i];
			continue;
		}
		double acc[SIM_ACC_N] = {0};
		sim_wl_activity(e[i].wl->f, sim_mono_of(now, a), sim_mono_of(now, b), acc);
		sm[i] = acc[SIM_ACC_BUSY] / (b - a);
		mem[i] = acc[SIM_ACC_DRAM] / (b - a);
		wl += sm[i];
	}
	double m[SIM_M_COUNT];
	sim_window(d, now, a, b, m);
	double room = m[SIM_M_UTIL] - fixed;
	if (wl <= 0 || wl <= room)
		return;
	double k = room > 0 ? room / wl : 0;
	for (int i = 0; i < np; i++)
		if (!e[i].fp) {
			sm[i] *= k;
			mem[i] *= k;
		}
}

/*
 * One sample per process that ran since lastSeenTimeStamp (at most the last
 * second): SM % is the share of that time its kernels were running.
 */
nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device,
                                             nvmlProcessUtilizationSample_t *utilization,
                                             unsigned int *processSamplesCount,
                                             unsigned long long lastSeenTimeStamp)
{
	DEV_BEGIN(device, processSamplesCount);
	if (g->has_mig && g->mig_current)
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	double p = g->util_period;
	double te = floor(now.t / p + 1e-9) * p;
	/*
	 * Pinned, the scenario stands still in its last second before the pinned
	 * instant while the wall clock runs: every call is a new sample, stamped
	 * now, of that steady second (so a client polling since its last sample,
	 * as nvtop does, always gets one). Stamps handed out never repeat, even
	 * for two calls within one microsecond.
	 */
	static unsigned long long pinned_stamp;
	unsigned long long ts = sim_wall_us(&now, te);
	if (now.pinned) {
		ts = (unsigned long long)sim_wall_now_us();
		ts = pinned_stamp = ts > pinned_stamp ? ts : pinned_stamp + 1;
	}
	if (te <= 0 || ts <= lastSeenTimeStamp)
		return sim_leave(NVML_ERROR_NOT_FOUND);
	double a = te - 1.0, seen = sim_t_of_wall_us(&now, lastSeenTimeStamp);
	if (seen > a && !now.pinned)
		a = seen;
	proc_ent *e = malloc(MAX_PROCS * sizeof *e);
	nvmlProcessUtilizationSample_t *s = malloc(MAX_PROCS * sizeof *s);
	if (!e || !s) {
		free(e);
		free(s);
		return sim_leave(NVML_ERROR_MEMORY);
	}
	int np = list_procs(d, &now, SIM_PROC_COMPUTE | SIM_PROC_GRAPHICS, -1, e, MAX_PROCS);
	size_t cap = np > 0 ? (size_t)np : 1;
	double *sm = malloc(2 * cap * sizeof *sm);
	if (!sm) {
		free(e);
		free(s);
		return sim_leave(NVML_ERROR_MEMORY);
	}
	double *mem = sm + cap;
	process_shares(d, &now, a, te, e, np, sm, mem);
	unsigned n = 0;
	for (int i = 0; i < np; i++) {
		if (e[i].fp && e[i].fp->sm_util <= 0)
			continue; /* holds memory, runs nothing: no samples */
		s[n++] = (nvmlProcessUtilizationSample_t){
		    .pid = e[i].pid,
		    .timeStamp = ts,
		    .smUtil = (unsigned)lround(fmin(sm[i], 1.0) * 100),
		    .memUtil = (unsigned)lround(fmin(mem[i], 1.0) * 100),
		};
	}
	free(sm);
	nvmlReturn_t rc = NVML_SUCCESS;
	if (n == 0)
		rc = NVML_ERROR_NOT_FOUND;
	else if (!utilization || *processSamplesCount < n)
		rc = NVML_ERROR_INSUFFICIENT_SIZE;
	else
		memcpy(utilization, s, n * sizeof *s);
	*processSamplesCount = n;
	free(e);
	free(s);
	return sim_leave(rc);
}

/* ---- driver samples ---- */

static double sample_value(const struct nvmlDevice_st *d, const sim_time *now,
                           nvmlSamplingType_t type, double a, double b)
{
	double m[SIM_M_COUNT];
	sim_inst in;
	switch (type) {
	case NVML_GPU_UTILIZATION_SAMPLES:
		sim_window(d, now, a, b, m);
		return m[SIM_M_UTIL] * 100;
	case NVML_MEMORY_UTILIZATION_SAMPLES:
		sim_window(d, now, a, b, m);
		return m[SIM_M_MEM_UTIL] * 100;
	case NVML_ENC_UTILIZATION_SAMPLES:
		sim_window(d, now, a, b, m);
		return m[SIM_M_ENC] * 100;
	case NVML_DEC_UTILIZATION_SAMPLES:
		sim_window(d, now, a, b, m);
		return m[SIM_M_DEC] * 100;
	case NVML_TOTAL_POWER_SAMPLES:
		sim_state_at(d, now, b, &in);
		return in.power_now_w * 1000;
	case NVML_PROCESSOR_CLK_SAMPLES:
		sim_state_at(d, now, b, &in);
		return in.sm_mhz;
	case NVML_MEMORY_CLK_SAMPLES:
		sim_state_at(d, now, b, &in);
		return in.mem_mhz;
	default:
		return 0;
	}
}

nvmlReturn_t nvmlDeviceGetSamples(nvmlDevice_t device, nvmlSamplingType_t type,
                                  unsigned long long lastSeenTimeStamp,
                                  nvmlValueType_t *sampleValType, unsigned int *sampleCount,
                                  nvmlSample_t *samples)
{
	DEV_BEGIN(device, sampleCount);
	if (!sampleValType || type < NVML_TOTAL_POWER_SAMPLES || type > NVML_MODULE_POWER_SAMPLES)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	bool util_type =
	    type >= NVML_GPU_UTILIZATION_SAMPLES && type <= NVML_DEC_UTILIZATION_SAMPLES;
	if (type == NVML_MODULE_POWER_SAMPLES ||
	    (type == NVML_ENC_UTILIZATION_SAMPLES && !g->nvenc) ||
	    (type == NVML_DEC_UTILIZATION_SAMPLES && !g->nvdec) ||
	    (util_type && g->has_mig && g->mig_current))
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	*sampleValType = NVML_VALUE_TYPE_UNSIGNED_INT;
	/* The driver keeps the last SIM_HISTORY periods; slot k covers [k p, (k + 1) p). */
	double p = g->util_period;
	long long done = (long long)floor(now.t / p + 1e-9);
	long long first = done - SIM_HISTORY > 0 ? done - SIM_HISTORY : 0;
	while (first < done && sim_wall_us(&now, (double)(first + 1) * p) <= lastSeenTimeStamp)
		first++;
	unsigned n = done > first ? (unsigned)(done - first) : 0;
	if (n == 0)
		return sim_leave(NVML_ERROR_NOT_FOUND);
	if (!samples) {
		*sampleCount = n;
		return sim_leave(NVML_SUCCESS);
	}
	if (*sampleCount < n) {
		*sampleCount = n;
		return sim_leave(NVML_ERROR_INSUFFICIENT_SIZE);
	}
	for (unsigned i = 0; i < n; i++) {
		double a = (double)(first + (long long)i) * p, b = a + p;
		double v = sample_value(d, &now, type, a, b);
		samples[i].timeStamp = sim_wall_us(&now, b);
		samples[i].sampleValue.uiVal = v <= 0 ? 0 : (unsigned)lround(v);
	}
	*sampleCount = n;
	return sim_leave(NVML_SUCCESS);
}

/* ---- field values ---- */

static void set_ull(nvmlFieldValue_t *f, unsigned long long v)
{
	f->valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
	f->value.ullVal = v;
	f->nvmlReturn = NVML_SUCCESS;
}

static void set_uint(nvmlFieldValue_t *f, unsigned v)
{
	f->valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
	f->value.uiVal = v;
	f->nvmlReturn = NVML_SUCCESS;
}

static void field_value(struct nvmlDevice_st *d, const sim_time *now, const double cum[],
                        nvmlFieldValue_t *f)
{
	const sim_gpu *g = d->g;
	unsigned long long sv, dv, sa, da;
	f->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
	switch (f->fieldId) {
	case NVML_FI_DEV_ECC_SBE_VOL_TOTAL:
	case NVML_FI_DEV_ECC_DBE_VOL_TOTAL:
	case NVML_FI_DEV_ECC_SBE_AGG_TOTAL:
	case NVML_FI_DEV_ECC_DBE_AGG_TOTAL:
		if (!g->has_ecc || !g->ecc_enabled)
			return;
		sim_ecc_counts(g, now->t, &sv, &dv, &sa, &da);
		set_ull(f, f->fieldId == NVML_FI_DEV_ECC_SBE_VOL_TOTAL   ? sv
		           : f->fieldId == NVML_FI_DEV_ECC_DBE_VOL_TOTAL ? dv
		           : f->fieldId == NVML_FI_DEV_ECC_SBE_AGG_TOTAL ? sa
		                                                         : da);
		return;
	case NVML_FI_DEV_MEMORY_TEMP:
		if (g->has_mem_temp)
			set_uint(f, (unsigned)lround(
			                fmax(0, sim_instant(d, now)->temp_c + g->mem_temp_delta)));
		return;
	case NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION:
		if (g->arch >= NVML_DEVICE_ARCH_VOLTA)
			set_ull(f, (unsigned long long)llround(sim_energy_mj(d, now)));
		return;
	case NVML_FI_DEV_NVLINK_LINK_COUNT:
		if (g->has_nvlink)
			set_uint(f, (unsigned)g->n_links);
		return;
	case NVML_FI_DEV_PCIE_REPLAY_COUNTER:
		set_ull(f, sim_replay_count(g, now->t));
		return;
	case NVML_FI_DEV_PCIE_REPLAY_ROLLOVER_COUNTER:
		set_ull(f, sim_replay_count(g, now->t) >> 32);
		return;
	case NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX:
	case NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX: {
		if (!g->has_nvlink)
			return;
		int up = sim_links_up(g);
		double bytes =
		    cum[f->fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX ? SIM_M_NVL_TX
		                                                            : SIM_M_NVL_RX];
		if (f->scopeId != 0xFFFFFFFFu) {
			if (f->scopeId >= (unsigned)g->n_links) {
				f->nvmlReturn = NVML_ERROR_INVALID_ARGUMENT;
				return;
			}
			bytes = g->links[f->scopeId].up && up ? bytes / up : 0;
		}
		set_ull(f, (unsigned long long)(bytes / 1024.0)); /* KiB */
		return;
	}
	case NVML_FI_DEV_REMAPPED_COR:
	case NVML_FI_DEV_REMAPPED_UNC:
	case NVML_FI_DEV_REMAPPED_PENDING:
	case NVML_FI_DEV_REMAPPED_FAILURE:
		if (!g->has_remap)
			return;
		set_uint(f, f->fieldId == NVML_FI_DEV_REMAPPED_COR       ? g->remap_corr
		            : f->fieldId == NVML_FI_DEV_REMAPPED_UNC     ? g->remap_unc
		            : f->fieldId == NVML_FI_DEV_REMAPPED_PENDING ? g->remap_pending
		                                                         : g->remap_failure);
		return;
	case NVML_FI_DEV_POWER_AVERAGE:
		set_uint(f, (unsigned)lround(sim_instant(d, now)->power_w * 1000));
		return;
	case NVML_FI_DEV_POWER_INSTANT:
		set_uint(f, (unsigned)lround(sim_instant(d, now)->power_now_w * 1000));
		return;
	case NVML_FI_DEV_PCIE_COUNT_TX_BYTES:
		set_ull(f, (unsigned long long)cum[SIM_M_PCIE_TX]);
		return;
	case NVML_FI_DEV_PCIE_COUNT_RX_BYTES:
		set_ull(f, (unsigned long long)cum[SIM_M_PCIE_RX]);
		return;
	default:
		return;
	}
}

nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount,
                                      nvmlFieldValue_t *values)
{
	DEV_BEGIN(device, values);
	if (valuesCount <= 0)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	double cum[SIM_M_COUNT];
	sim_cumulative(d, &now, cum);
	long long ts = (long long)sim_wall_us(&now, now.t);
	for (int i = 0; i < valuesCount; i++) {
		nvmlFieldValue_t *f = &values[i];
		memset(&f->value, 0, sizeof f->value);
		f->timestamp = ts;
		f->latencyUsec = 0;
		field_value(d, &now, cum, f);
	}
	return sim_leave(NVML_SUCCESS);
}

/* ---- events ---- */

#define SIM_EVENT_MAGIC 0x45565453u

struct nvmlEventSet_st {
	unsigned magic;
	struct {
		bool on;
		unsigned long long mask;
		double t;  /* events up to this time have been delivered... */
		int order; /* ...and those at exactly t up to this source */
	} reg[SIM_MAX_GPUS];
};

#define EV_XID nvmlEventTypeXidCriticalError
#define EV_SBE 0x1ULL
#define EV_DBE 0x2ULL

nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set)
{
	sim_time now;
	nvmlReturn_t rc = sim_enter(&now);
	if (rc != NVML_SUCCESS)
		return rc;
	if (!set)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	struct nvmlEventSet_st *s = calloc(1, sizeof *s);
	if (!s)
		return sim_leave(NVML_ERROR_MEMORY);
	s->magic = SIM_EVENT_MAGIC;
	*set = s;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long eventTypes,
                                      nvmlEventSet_t set)
{
	DEV_BEGIN(device, set);
	if (set->magic != SIM_EVENT_MAGIC || eventTypes == 0)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	unsigned long long supported =
	    EV_XID | (g->has_ecc && g->ecc_enabled ? EV_SBE | EV_DBE : 0);
	if (eventTypes & ~supported)
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	/* Only what happens after registration is delivered. */
	if (!set->reg[d->index].on) {
		set->reg[d->index].t = now.t;
		set->reg[d->index].order = INT32_MAX;
	}
	set->reg[d->index].on = true;
	set->reg[d->index].mask |= eventTypes;
	return sim_leave(NVML_SUCCESS);
}

/* Sources of events on a GPU: its episodes (by index), then falling off the bus. */
typedef struct {
	double t;
	int order;
	unsigned long long type, data;
} ev_next;

static bool after(double t, int order, double t0, int order0)
{
	return t > t0 || (t == t0 && order > order0);
}

static bool next_event(const sim_gpu *g, unsigned long long mask, double t0, int order0,
                       ev_next *out)
{
	bool found = false;
	for (int i = 0; i <= g->n_episodes; i++) {
		ev_next c = {.order = i};
		if (i == g->n_episodes) {
			if (!(mask & EV_XID) || isinf(g->lost_after))
				continue;
			c.t = g->lost_after;
			c.type = EV_XID;
			c.data = 79; /* GPU has fallen off the bus */
		} else {
			const sim_episode *e = &g->episodes[i];
			unsigned long long type = e->kind == SIM_EP_XID ? EV_XID
			                          : e->kind == SIM_EP_ECC
			                              ? (e->dbe ? EV_DBE : EV_SBE)
			                              : 0;
			if (!(type & mask))
				continue;
			c.type = type;
			c.data = e->kind == SIM_EP_XID ? e->xid : 0;
			/* Occurrences at t0 itself with a higher order are still due. */
			c.t = i > order0 && sim_ep_count(g, e, t0) > sim_ep_count(g, e, t0 - 1e-9)
			          ? t0
			          : sim_ep_next(g, e, t0);
			if (isinf(c.t))
				continue;
		}
		if (!after(c.t, c.order, t0, order0))
			continue;
		if (!found || c.t < out->t || (c.t == out->t && c.order < out->order)) {
			*out = c;
			found = true;
		}
	}
	return found;
}

nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms)
{
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		sim_time now;
		nvmlReturn_t rc = sim_enter(&now);
		if (rc != NVML_SUCCESS)
			return rc;
		if (!set || !data || set->magic != SIM_EVENT_MAGIC)
			return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
		int best = -1;
		ev_next be = {0};
		for (int i = 0; i < sim_g.scn->n_gpus && i < SIM_MAX_GPUS; i++) {
			ev_next e = {0};
			if (!set->reg[i].on || !next_event(&sim_g.scn->gpus[i], set->reg[i].mask,
			                                   set->reg[i].t, set->reg[i].order, &e))
				continue;
			if (e.t <= now.t && (best < 0 || e.t < be.t)) {
				best = i;
				be = e;
			}
		}
		if (best >= 0) {
			set->reg[best].t = be.t;
			set->reg[best].order = be.order;
			memset(data, 0, sizeof *data);
			data->device = &sim_g.dev[best];
			data->eventType = be.type;
			data->eventData = be.data;
			data->gpuInstanceId = data->computeInstanceId = 0xFFFFFFFFu;
			return sim_leave(NVML_SUCCESS);
		}
		sim_leave(NVML_SUCCESS);
		struct timespec cur;
		clock_gettime(CLOCK_MONOTONIC, &cur);
		double waited_ms = (double)(cur.tv_sec - start.tv_sec) * 1e3 +
		                   (double)(cur.tv_nsec - start.tv_nsec) / 1e6;
		if (waited_ms >= timeoutms)
			return NVML_ERROR_TIMEOUT;
		double left = timeoutms - waited_ms;
		double step = left < 10 ? left : 10;
		struct timespec ts = {0, (long)(step * 1e6)};
		nanosleep(&ts, NULL);
	}
}

nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set)
{
	sim_time now;
	nvmlReturn_t rc = sim_enter(&now);
	if (rc != NVML_SUCCESS)
		return rc;
	if (!set || set->magic != SIM_EVENT_MAGIC)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	set->magic = 0;
	free(set);
	return sim_leave(NVML_SUCCESS);
}

/* ---- GPM ---- */

#define SIM_GPM_MAGIC 0x4D504753u

struct nvmlGpmSample_st {
	unsigned magic;
	int dev; /* -1 until filled */
	double t;
	bool pinned;  /* taken with GPUWHY_SIM_TIME set */
	int64_t mono; /* when it was taken, CLOCK_MONOTONIC ns */
	double cum[SIM_M_COUNT];
	double steady[SIM_M_COUNT]; /* pinned: the scenario's rates at t, per second */
};

nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t device, nvmlGpmSupport_t *gpmSupport)
{
	DEV_BEGIN(device, gpmSupport);
	if (gpmSupport->version != NVML_GPM_SUPPORT_VERSION)
		return sim_leave(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
	gpmSupport->isSupportedDevice = g->gpm;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t *gpmSample)
{
	sim_time now;
	nvmlReturn_t rc = sim_enter(&now);
	if (rc != NVML_SUCCESS)
		return rc;
	if (!gpmSample)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	struct nvmlGpmSample_st *s = calloc(1, sizeof *s);
	if (!s)
		return sim_leave(NVML_ERROR_MEMORY);
	s->magic = SIM_GPM_MAGIC;
	s->dev = -1;
	*gpmSample = s;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t gpmSample)
{
	sim_time now;
	nvmlReturn_t rc = sim_enter(&now);
	if (rc != NVML_SUCCESS)
		return rc;
	if (!gpmSample || gpmSample->magic != SIM_GPM_MAGIC)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	gpmSample->magic = 0;
	free(gpmSample);
	return sim_leave(NVML_SUCCESS);
}

/*
 * Pinned, the scenario stands still at the pinned instant, busy as it was in
 * its last completed utilization period, while the wall clock (and this
 * host's workloads) run on: between two samples of the same pinned instant
 * its counters rise at that period's rates for the real time between them,
 * so they give the scenario's steady rates at that instant, as two samples
 * of a GPU in a steady state do.
 */
static void gpm_steady_rates(const struct nvmlDevice_st *d, const sim_time *now,
                             double steady[SIM_M_COUNT])
{
	memset(steady, 0, SIM_M_COUNT * sizeof *steady);
	double p = d->g->util_period, te = floor(now->t / p + 1e-9) * p;
	if (te <= 0)
		return; /* nothing has run yet */
	sim_scn_integral(d->g, te - p, te, steady);
	for (int k = 0; k < SIM_M_COUNT; k++)
		steady[k] /= p;
}

nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t device, nvmlGpmSample_t gpmSample)
{
	DEV_BEGIN(device, gpmSample);
	if (gpmSample->magic != SIM_GPM_MAGIC)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	if (!g->gpm)
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	/* A sample is the device's cumulative activity counters at this instant. */
	gpmSample->dev = d->index;
	gpmSample->t = now.t;
	gpmSample->pinned = now.pinned;
	gpmSample->mono = now.mono;
	sim_cumulative(d, &now, gpmSample->cum);
	gpm_steady_rates(d, &now, gpmSample->steady);
	return sim_leave(NVML_SUCCESS);
}

typedef struct {
	unsigned id;
	int metric; /* sim_metric, or -1 */
	bool rate;  /* MiB/s rather than percent */
	const char *short_name, *long_name, *unit;
} gpm_def;

static const gpm_def gpm_defs[] = {
    {NVML_GPM_METRIC_GRAPHICS_UTIL, SIM_M_UTIL, false, "gr_util", "graphics engine utilization",
     "%"},
    {NVML_GPM_METRIC_SM_UTIL, SIM_M_SM, false, "sm_util", "SM utilization", "%"},
    {NVML_GPM_METRIC_SM_OCCUPANCY, SIM_M_OCC, false, "sm_occupancy", "SM occupancy", "%"},
    {NVML_GPM_METRIC_INTEGER_UTIL, SIM_M_INT, false, "integer_util", "integer pipe utilization",
     "%"},
    {NVML_GPM_METRIC_ANY_TENSOR_UTIL, SIM_M_TENSOR, false, "any_tensor_util",
     "tensor pipe utilization", "%"},
    {7 /* HMMA_TENSOR_UTIL */, SIM_M_TENSOR, false, "hmma_tensor_util",
     "HMMA tensor pipe utilization", "%"},
    {NVML_GPM_METRIC_DRAM_BW_UTIL, SIM_M_DRAM, false, "dram_bw_util", "DRAM bandwidth utilization",
     "%"},
    {NVML_GPM_METRIC_FP64_UTIL, SIM_M_FP64, false, "fp64_util", "FP64 pipe utilization", "%"},
    {NVML_GPM_METRIC_FP32_UTIL, SIM_M_FP32, false, "fp32_util", "FP32 pipe utilization", "%"},
    {NVML_GPM_METRIC_FP16_UTIL, SIM_M_FP16, false, "fp16_util", "FP16 pipe utilization", "%"},
    {NVML_GPM_METRIC_PCIE_TX_PER_SEC, SIM_M_PCIE_TX, true, "pcie_tx", "PCIe transmit", "MiB/sec"},
    {NVML_GPM_METRIC_PCIE_RX_PER_SEC, SIM_M_PCIE_RX, true, "pcie_rx", "PCIe receive", "MiB/sec"},
    {NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC, SIM_M_NVL_RX, true, "nvlink_total_rx",
     "NVLink receive, all links", "MiB/sec"},
    {NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC, SIM_M_NVL_TX, true, "nvlink_total_tx",
     "NVLink transmit, all links", "MiB/sec"},
};

static void gpm_metric(const sim_gpu *g, const double delta[SIM_M_COUNT], double dt,
                       nvmlGpmMetric_t *m)
{
	m->value = 0;
	m->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
	memset(&m->metricInfo, 0, sizeof m->metricInfo);
	/* Per-link NVLink rates: RX 62 + 2n, TX 63 + 2n for links 0..17. */
	if (m->metricId >= 62 && m->metricId <= 97) {
		unsigned link = (m->metricId - 62) / 2;
		bool tx = (m->metricId - 62) % 2;
		if (!g->has_nvlink || link >= (unsigned)g->n_links)
			return;
		int up = sim_links_up(g);
		int k = tx ? SIM_M_NVL_TX : SIM_M_NVL_RX;
		double bytes = delta[k];
		m->value = g->links[link].up && up ? bytes / up / dt / MIB : 0;
		m->nvmlReturn = NVML_SUCCESS;
		m->metricInfo.shortName = tx ? "nvlink_tx" : "nvlink_rx";
		m->metricInfo.longName =
		    tx ? "NVLink transmit, one link" : "NVLink receive, one link";
		m->metricInfo.unit = "MiB/sec";
		return;
	}
	for (size_t i = 0; i < sizeof gpm_defs / sizeof *gpm_defs; i++) {
		const gpm_def *def = &gpm_defs[i];
		if (def->id != m->metricId)
			continue;
		bool nvl = def->metric == SIM_M_NVL_RX || def->metric == SIM_M_NVL_TX;
		if (nvl && !g->has_nvlink)
			return;
		double v =
		    def->rate ? delta[def->metric] / dt / MIB : delta[def->metric] / dt * 100.0;
		if (!def->rate)
			v = v < 0 ? 0 : v > 100 ? 100 : v;
		m->value = v < 0 ? 0 : v;
		m->nvmlReturn = NVML_SUCCESS;
		m->metricInfo.shortName = (char *)def->short_name;
		m->metricInfo.longName = (char *)def->long_name;
		m->metricInfo.unit = (char *)def->unit;
		return;
	}
}

nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t *metricsGet)
{
	sim_time now;
	nvmlReturn_t rc = sim_enter(&now);
	if (rc != NVML_SUCCESS)
		return rc;
	if (!metricsGet)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	if (metricsGet->version != NVML_GPM_METRICS_GET_VERSION)
		return sim_leave(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
	const struct nvmlGpmSample_st *s1 = metricsGet->sample1, *s2 = metricsGet->sample2;
	if (metricsGet->numMetrics > NVML_GPM_METRIC_MAX || !s1 || !s2 ||
	    s1->magic != SIM_GPM_MAGIC || s2->magic != SIM_GPM_MAGIC || s1->dev < 0 ||
	    s1->dev != s2->dev || s1->dev >= sim_g.scn->n_gpus)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	/* Two samples of one pinned instant are apart by the real time between them. */
	bool same_instant = s1->pinned && s2->t == s1->t;
	double dt = same_instant ? (double)(s2->mono - s1->mono) / 1e9 : s2->t - s1->t;
	if (!(dt > 0))
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	double delta[SIM_M_COUNT];
	for (int k = 0; k < SIM_M_COUNT; k++)
		delta[k] = s2->cum[k] - s1->cum[k] + (same_instant ? s1->steady[k] * dt : 0);
	const struct nvmlDevice_st *d = &sim_g.dev[s1->dev];
	if (sim_lost(d, &now))
		return sim_leave(NVML_ERROR_GPU_IS_LOST);
	for (unsigned i = 0; i < metricsGet->numMetrics; i++)
		gpm_metric(d->g, delta, dt, &metricsGet->metrics[i]);
	return sim_leave(NVML_SUCCESS);
}
