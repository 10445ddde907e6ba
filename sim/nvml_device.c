/* nvml_device.c - per-device NVML entry points: identity, modes, utilization, memory, power,
 * clocks, PCIe, reliability. */
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "sim_lib.h"

static unsigned pct(double frac)
{
	double v = frac * 100.0;
	return v <= 0 ? 0 : v >= 100 ? 100 : (unsigned)lround(v);
}

/* ---- identity ---- */

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
	if (sim_is_mig_handle(device))
		return sim_mig_name(device, name, length);
	DEV_BEGIN(device, name);
	return sim_leave(sim_copy_str(name, length, g->name));
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
	if (sim_is_mig_handle(device))
		return sim_mig_uuid(device, uuid, length);
	DEV_BEGIN(device, uuid);
	return sim_leave(sim_copy_str(uuid, length, g->uuid));
}

nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t device, char *serial, unsigned int length)
{
	DEV_BEGIN(device, serial);
	if (!g->has_serial)
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	return sim_leave(sim_copy_str(serial, length, g->serial));
}

nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t device, char *version, unsigned int length)
{
	DEV_BEGIN(device, version);
	return sim_leave(sim_copy_str(version, length, g->vbios));
}

static void fill_pci(const sim_pci *p, nvmlPciInfo_t *pci)
{
	memset(pci, 0, sizeof *pci);
	snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%s", p->bus_id_legacy);
	snprintf(pci->busId, sizeof pci->busId, "%s", p->bus_id);
	pci->domain = p->domain;
	pci->bus = p->bus;
	pci->device = p->device;
	pci->pciDeviceId = p->device_id;
	pci->pciSubSystemId = p->subsystem_id;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
	DEV_BEGIN(device, pci);
	fill_pci(&g->pci, pci);
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
	return nvmlDeviceGetPciInfo_v3(device, pci);
}

nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int *minor)
{
	DEV_BEGIN(device, minor);
	*minor = g->minor;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index)
{
	DEV_BEGIN(device, index);
	*index = (unsigned)d->index;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t device, nvmlDeviceArchitecture_t *arch)
{
	DEV_BEGIN(device, arch);
	*arch = g->arch;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor)
{
	DEV_BEGIN(device, major);
	if (!minor)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	*major = g->cc_major;
	*minor = g->cc_minor;
	return sim_leave(NVML_SUCCESS);
}

/* ---- modes ---- */

nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t device, nvmlEnableState_t *mode)
{
	DEV_BEGIN(device, mode);
	*mode = g->persistence ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t device, nvmlComputeMode_t *mode)
{
	DEV_BEGIN(device, mode);
	*mode = g->compute_mode;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode,
                                  unsigned int *pendingMode)
{
	DEV_BEGIN(device, currentMode);
	if (!pendingMode)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	if (!g->has_mig)
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	*currentMode = g->mig_current;
	*pendingMode = g->mig_pending;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device, nvmlEnableState_t *current,
                                  nvmlEnableState_t *pending)
{
	DEV_BEGIN(device, current);
	if (!pending)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	if (!g->has_ecc)
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	*current = *pending = g->ecc_enabled ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
	return sim_leave(NVML_SUCCESS);
}

/* ---- utilization ---- */

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization)
{
	DEV_BEGIN(device, utilization);
	/* The driver has no whole-GPU utilization while it is partitioned. */
	if (g->has_mig && g->mig_current)
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	const sim_inst *in = sim_instant(d, &now);
	utilization->gpu = pct(in->util);
	utilization->memory = pct(in->mem_util);
	return sim_leave(NVML_SUCCESS);
}

static nvmlReturn_t codec_util(nvmlDevice_t device, unsigned *utilization, unsigned *period,
                               bool enc)
{
	DEV_BEGIN(device, utilization);
	if (!period)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	/* Like whole-GPU utilization, codec utilization is not reported while partitioned. */
	if (g->has_mig && g->mig_current)
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	const sim_inst *in = sim_instant(d, &now);
	/* A GPU without the engine (an H100 has no NVENC) reports 0 %, as the real driver does. */
	*utilization = (enc ? g->nvenc : g->nvdec) ? pct(enc ? in->enc : in->dec) : 0;
	*period = (unsigned)lround(g->util_period * 1e6);
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t device, unsigned int *utilization,
                                             unsigned int *samplingPeriodUs)
{
	return codec_util(device, utilization, samplingPeriodUs, true);
}

nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t device, unsigned int *utilization,
                                             unsigned int *samplingPeriodUs)
{
	return codec_util(device, utilization, samplingPeriodUs, false);
}

/* ---- memory ---- */

/* Bytes: reserved, and used (allocated: scenario baseline, its processes, live workloads). */
static void memory_now(struct nvmlDevice_st *d, const sim_time *now, unsigned long long *reserved,
                       unsigned long long *used)
{
	const sim_gpu *g = d->g;
	const unsigned long long mib = 1048576ULL;
	unsigned long long u = g->mem_used_b;
	for (int i = 0; i < sim_g.scn->n_procs; i++) {
		const sim_fproc *p = &sim_g.scn->procs[i];
		if (p->gpu == d->index && now->t >= p->start && now->t < p->end)
			u += p->used_mib * mib;
	}
	u += sim_wl_gpu_mem((unsigned)d->index, now);
	unsigned long long avail = g->mem_total * mib - g->mem_reserved_b;
	*reserved = g->mem_reserved_b;
	*used = u < avail ? u : avail;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)
{
	if (sim_is_mig_handle(device) && memory) {
		if (memory->version != nvmlMemory_v2)
			return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
		unsigned long long total, used;
		nvmlReturn_t rc = sim_mig_memory(device, &total, &used);
		if (rc == NVML_SUCCESS) {
			memory->total = total;
			memory->reserved = 0;
			memory->used = used;
			memory->free = total - used;
		}
		return rc;
	}
	DEV_BEGIN(device, memory);
	if (memory->version != nvmlMemory_v2)
		return sim_leave(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
	unsigned long long reserved, used;
	memory_now(d, &now, &reserved, &used);
	memory->total = g->mem_total * 1048576ULL;
	memory->reserved = reserved;
	memory->used = used;
	memory->free = memory->total - reserved - used;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
	if (sim_is_mig_handle(device) && memory) {
		unsigned long long total, used;
		nvmlReturn_t rc = sim_mig_memory(device, &total, &used);
		if (rc == NVML_SUCCESS) {
			memory->total = total;
			memory->used = used;
			memory->free = total - used;
		}
		return rc;
	}
	DEV_BEGIN(device, memory);
	unsigned long long reserved, used;
	memory_now(d, &now, &reserved, &used);
	memory->total = g->mem_total * 1048576ULL;
	memory->used = used + reserved; /* v1 counts the reserved memory as used */
	memory->free = memory->total - memory->used;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t device, nvmlBAR1Memory_t *bar1Memory)
{
	if (sim_is_mig_handle(device))
		return sim_mig_bar1(device, bar1Memory);
	DEV_BEGIN(device, bar1Memory);
	bar1Memory->bar1Total = g->bar1_total * 1048576ULL;
	bar1Memory->bar1Used = g->bar1_used * 1048576ULL;
	bar1Memory->bar1Free = bar1Memory->bar1Total - bar1Memory->bar1Used;
	return sim_leave(NVML_SUCCESS);
}

/* ---- power ---- */

static unsigned mw(double w)
{
	return w <= 0 ? 0 : (unsigned)lround(w * 1000.0);
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power)
{
	DEV_BEGIN(device, power);
	*power = mw(sim_instant(d, &now)->power_w);
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int *limit)
{
	DEV_BEGIN(device, limit);
	*limit = mw(g->power_limit);
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device,
                                                      unsigned int *defaultLimit)
{
	DEV_BEGIN(device, defaultLimit);
	*defaultLimit = mw(g->power_default);
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int *limit)
{
	DEV_BEGIN(device, limit);
	*limit = mw(g->power_limit);
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t device,
                                                          unsigned int *minLimit,
                                                          unsigned int *maxLimit)
{
	DEV_BEGIN(device, minLimit);
	if (!maxLimit)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	*minLimit = mw(g->power_min);
	*maxLimit = mw(g->power_max);
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long *energy)
{
	DEV_BEGIN(device, energy);
	if (g->arch < NVML_DEVICE_ARCH_VOLTA)
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	*energy = (unsigned long long)llround(sim_energy_mj(d, &now));
	return sim_leave(NVML_SUCCESS);
}

/* ---- thermal ---- */

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensorType,
                                      unsigned int *temp)
{
	DEV_BEGIN(device, temp);
	if (sensorType != NVML_TEMPERATURE_GPU)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	double c = sim_instant(d, &now)->temp_c;
	*temp = c <= 0 ? 0 : (unsigned)lround(c);
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t device,
                                               nvmlTemperatureThresholds_t thresholdType,
                                               unsigned int *temp)
{
	DEV_BEGIN(device, temp);
	int v;
	switch (thresholdType) {
	case NVML_TEMPERATURE_THRESHOLD_SHUTDOWN:
		v = (int)g->t_shutdown;
		break;
	case NVML_TEMPERATURE_THRESHOLD_SLOWDOWN:
		v = (int)g->t_slowdown;
		break;
	case NVML_TEMPERATURE_THRESHOLD_MEM_MAX:
		v = g->t_mem_max;
		break;
	case NVML_TEMPERATURE_THRESHOLD_GPU_MAX:
		v = g->t_gpu_max;
		break;
	case 4: /* acoustic min/current/max, GPS current: not modelled */
	case 5:
	case 6:
	case 7:
		v = -1;
		break;
	default:
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	}
	if (v < 0)
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	*temp = (unsigned)v;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t device, unsigned int *speed)
{
	DEV_BEGIN(device, speed);
	if (!g->has_fan)
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	double f = sim_instant(d, &now)->fan_pct;
	*speed = f <= 0 ? 0 : f >= 100 ? 100 : (unsigned)lround(f);
	return sim_leave(NVML_SUCCESS);
}

/* ---- clocks ---- */

static nvmlReturn_t clock_of(const sim_gpu *g, const sim_inst *in, nvmlClockType_t type,
                             unsigned *out)
{
	switch (type) {
	case NVML_CLOCK_GRAPHICS:
	case NVML_CLOCK_SM:
		*out = in->sm_mhz;
		return NVML_SUCCESS;
	case NVML_CLOCK_MEM:
		*out = in->mem_mhz;
		return NVML_SUCCESS;
	case NVML_CLOCK_VIDEO:
		if (!g->clk_max_video)
			return NVML_ERROR_NOT_SUPPORTED;
		*out = in->video_mhz;
		return NVML_SUCCESS;
	default:
		return NVML_ERROR_INVALID_ARGUMENT;
	}
}

static nvmlReturn_t max_clock_of(const sim_gpu *g, nvmlClockType_t type, unsigned *out)
{
	switch (type) {
	case NVML_CLOCK_GRAPHICS:
		*out = g->clk_max_gr;
		return NVML_SUCCESS;
	case NVML_CLOCK_SM:
		*out = g->clk_max_sm;
		return NVML_SUCCESS;
	case NVML_CLOCK_MEM:
		*out = g->clk_max_mem;
		return NVML_SUCCESS;
	case NVML_CLOCK_VIDEO:
		if (!g->clk_max_video)
			return NVML_ERROR_NOT_SUPPORTED;
		*out = g->clk_max_video;
		return NVML_SUCCESS;
	default:
		return NVML_ERROR_INVALID_ARGUMENT;
	}
}

/* Application clocks are deprecated from NVML 13 (driver 580): the driver says so. */
bool sim_app_clocks_deprecated(void)
{
	return atoi(sim_g.scn->driver_version) >= 580;
}

static nvmlReturn_t app_clock_of(const sim_gpu *g, nvmlClockType_t type, unsigned *out)
{
	if (type < NVML_CLOCK_GRAPHICS || type > NVML_CLOCK_VIDEO)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (sim_app_clocks_deprecated())
		return NVML_ERROR_DEPRECATED;
	if (!g->has_app_clocks || type == NVML_CLOCK_VIDEO)
		return NVML_ERROR_NOT_SUPPORTED;
	*out = type == NVML_CLOCK_MEM ? g->app_mem : g->app_gr;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock)
{
	DEV_BEGIN(device, clock);
	return sim_leave(clock_of(g, sim_instant(d, &now), type, clock));
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                       unsigned int *clock)
{
	DEV_BEGIN(device, clock);
	return sim_leave(max_clock_of(g, type, clock));
}

nvmlReturn_t nvmlDeviceGetApplicationsClock(nvmlDevice_t device, nvmlClockType_t clockType,
                                            unsigned int *clockMHz)
{
	DEV_BEGIN(device, clockMHz);
	return sim_leave(app_clock_of(g, clockType, clockMHz));
}

nvmlReturn_t nvmlDeviceGetClock(nvmlDevice_t device, nvmlClockType_t clockType,
                                nvmlClockId_t clockId, unsigned int *clockMHz)
{
	DEV_BEGIN(device, clockMHz);
	switch (clockId) {
	case NVML_CLOCK_ID_CURRENT:
		return sim_leave(clock_of(g, sim_instant(d, &now), clockType, clockMHz));
	case NVML_CLOCK_ID_APP_CLOCK_TARGET:
	case NVML_CLOCK_ID_APP_CLOCK_DEFAULT:
		return sim_leave(app_clock_of(g, clockType, clockMHz));
	case NVML_CLOCK_ID_CUSTOMER_BOOST_MAX:
		return sim_leave(max_clock_of(g, clockType, clockMHz));
	default:
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	}
}

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                    unsigned long long *clocksEventReasons)
{
	DEV_BEGIN(device, clocksEventReasons);
	*clocksEventReasons = sim_instant(d, &now)->reasons;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                       unsigned long long *clocksThrottleReasons)
{
	return nvmlDeviceGetCurrentClocksEventReasons(device, clocksThrottleReasons);
}

nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t device, nvmlPstates_t *pState)
{
	DEV_BEGIN(device, pState);
	*pState = sim_instant(d, &now)->pstate;
	return sim_leave(NVML_SUCCESS);
}

/* ---- PCIe ---- */

nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned int *currLinkGen)
{
	DEV_BEGIN(device, currLinkGen);
	*currLinkGen = sim_instant(d, &now)->pcie_gen;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device, unsigned int *currLinkWidth)
{
	DEV_BEGIN(device, currLinkWidth);
	*currLinkWidth = sim_instant(d, &now)->pcie_width;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int *maxLinkGen)
{
	DEV_BEGIN(device, maxLinkGen);
	*maxLinkGen = g->pcie_max_gen;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetGpuMaxPcieLinkGeneration(nvmlDevice_t device,
                                                   unsigned int *maxLinkGenDevice)
{
	DEV_BEGIN(device, maxLinkGenDevice);
	*maxLinkGenDevice = g->pcie_gpu_max_gen;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device, unsigned int *maxLinkWidth)
{
	DEV_BEGIN(device, maxLinkWidth);
	*maxLinkWidth = g->pcie_max_width;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device, nvmlPcieUtilCounter_t counter,
                                         unsigned int *value)
{
	double delay_ms;
	{
		DEV_BEGIN(device, value);
		if (counter != NVML_PCIE_UTIL_TX_BYTES && counter != NVML_PCIE_UTIL_RX_BYTES)
			return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
		delay_ms = sim_g.scn->pcie_delay_ms;
		sim_leave(NVML_SUCCESS);
	}
	/* The real call samples the link for about 20 ms; so does this one, unlocked. */
	if (delay_ms > 0) {
		struct timespec ts = {.tv_sec = (time_t)(delay_ms / 1000),
		                      .tv_nsec = (long)(fmod(delay_ms, 1000.0) * 1e6)};
		while (nanosleep(&ts, &ts) != 0)
			;
	}
	DEV_BEGIN(device, value);
	const sim_inst *in = sim_instant(d, &now);
	double bps = counter == NVML_PCIE_UTIL_TX_BYTES ? in->pcie_tx : in->pcie_rx;
	*value = (unsigned)llround(bps / 1024.0); /* KB/s */
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t device, unsigned int *value)
{
	DEV_BEGIN(device, value);
	*value = (unsigned)sim_replay_count(g, now.t);
	return sim_leave(NVML_SUCCESS);
}

/* ---- reliability ---- */

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
                                         nvmlEccCounterType_t counterType,
                                         unsigned long long *eccCounts)
{
	DEV_BEGIN(device, eccCounts);
	if ((errorType != NVML_MEMORY_ERROR_TYPE_CORRECTED &&
	     errorType != NVML_MEMORY_ERROR_TYPE_UNCORRECTED) ||
	    (counterType != NVML_VOLATILE_ECC && counterType != NVML_AGGREGATE_ECC))
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	if (!g->has_ecc || !g->ecc_enabled)
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	unsigned long long sv, dv, sa, da;
	sim_ecc_counts(g, now.t, &sv, &dv, &sa, &da);
	bool corr = errorType == NVML_MEMORY_ERROR_TYPE_CORRECTED;
	*eccCounts = counterType == NVML_VOLATILE_ECC ? (corr ? sv : dv) : (corr ? sa : da);
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t device, nvmlPageRetirementCause_t cause,
                                       unsigned int *pageCount, unsigned long long *addresses)
{
	DEV_BEGIN(device, pageCount);
	if (cause != NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS &&
	    cause != NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	if (!g->has_retired)
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	bool sbe = cause == NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS;
	unsigned n = (unsigned)(sbe ? g->n_retired_sbe : g->n_retired_dbe);
	const unsigned long long *pages = sbe ? g->retired_sbe : g->retired_dbe;
	if (*pageCount < n) {
		*pageCount = n;
		return sim_leave(NVML_ERROR_INSUFFICIENT_SIZE);
	}
	if (n > 0 && !addresses)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	for (unsigned i = 0; i < n; i++)
		addresses[i] = pages[i];
	*pageCount = n;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t device,
                                                    nvmlEnableState_t *isPending)
{
	DEV_BEGIN(device, isPending);
	if (!g->has_retired)
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	*isPending = g->retired_pending ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned int *corrRows,
                                       unsigned int *uncRows, unsigned int *isPending,
                                       unsigned int *failureOccurred)
{
	DEV_BEGIN(device, corrRows);
	if (!uncRows || !isPending || !failureOccurred)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	if (!g->has_remap)
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	*corrRows = g->remap_corr;
	*uncRows = g->remap_unc;
	*isPending = g->remap_pending;
	*failureOccurred = g->remap_failure;
	return sim_leave(NVML_SUCCESS);
}

/* ---- topology and affinity ---- */

nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t device, unsigned int cpuSetSize,
                                      unsigned long *cpuSet)
{
	DEV_BEGIN(device, cpuSet);
	if (cpuSetSize == 0)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	if (!g->has_affinity)
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	for (unsigned i = 0; i < cpuSetSize; i++)
		cpuSet[i] = i < SIM_AFFINITY_WORDS ? g->affinity[i] : 0;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetNumaNodeId(nvmlDevice_t device, unsigned int *node)
{
	DEV_BEGIN(device, node);
	if (g->numa_node < 0)
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	*node = (unsigned)g->numa_node;
	return sim_leave(NVML_SUCCESS);
}

/*
 * PCIe levels follow from where the GPUs sit: the same nearest switch is
 * SINGLE (PIX), any shared switch MULTIPLE (PXB), the same host bridge
 * HOSTBRIDGE (PHB), the same NUMA node NODE, otherwise SYSTEM.
 */
nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t device1, nvmlDevice_t device2,
                                                 nvmlGpuTopologyLevel_t *pathInfo)
{
	DEV_BEGIN(device1, pathInfo);
	if (!sim_valid_device(device2))
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	const struct nvmlDevice_st *d2 = device2;
	if (sim_lost(d2, &now))
		return sim_leave(NVML_ERROR_GPU_IS_LOST);
	const sim_gpu *h = d2->g;
	nvmlGpuTopologyLevel_t lvl;
	if (g == h) {
		lvl = NVML_TOPOLOGY_INTERNAL;
	} else if (g->n_switches && h->n_switches &&
	           !strcmp(g->switches[g->n_switches - 1], h->switches[h->n_switches - 1])) {
		lvl = NVML_TOPOLOGY_SINGLE;
	} else {
		bool shared = false;
		for (int a = 0; a < g->n_switches; a++)
			for (int b = 0; b < h->n_switches; b++)
				shared |= !strcmp(g->switches[a], h->switches[b]);
		if (shared)
			lvl = NVML_TOPOLOGY_MULTIPLE;
		else if (g->host_bridge == h->host_bridge && g->numa_node == h->numa_node)
			lvl = NVML_TOPOLOGY_HOSTBRIDGE;
		else if (g->numa_node == h->numa_node)
			lvl = NVML_TOPOLOGY_NODE;
		else
			lvl = NVML_TOPOLOGY_SYSTEM;
	}
	*pathInfo = lvl;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link,
                                      nvmlEnableState_t *isActive)
{
	DEV_BEGIN(device, isActive);
	if (!g->has_nvlink)
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	if (link >= (unsigned)g->n_links)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	*isActive = g->links[link].up ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link,
                                                 nvmlPciInfo_t *pci)
{
	DEV_BEGIN(device, pci);
	if (!g->has_nvlink)
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	if (link >= (unsigned)g->n_links)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	fill_pci(&g->links[link].remote, pci);
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t device, unsigned int link,
                                                 nvmlIntNvLinkDeviceType_t *pNvLinkDeviceType)
{
	DEV_BEGIN(device, pNvLinkDeviceType);
	if (!g->has_nvlink)
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	if (link >= (unsigned)g->n_links)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	*pNvLinkDeviceType = g->links[link].remote_type == SIM_LINK_REMOTE_GPU
	                         ? NVML_NVLINK_DEVICE_TYPE_GPU
	                         : NVML_NVLINK_DEVICE_TYPE_SWITCH;
	return sim_leave(NVML_SUCCESS);
}
