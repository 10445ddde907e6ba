/* nvml_smi.c - the simulated driver's answers to what nvidia-smi's query and -q views read
 * beyond the basics: display, accounting, JPEG/OFA engines, encoder sessions, ECC by
 * location, the row remapper histogram and the clock event reasons a GPU supports. */
#include <math.h>
#include <string.h>

#include "sim_lib.h"

/* Rows a bank can remap before it runs out (the H100 capture reports 2560 banks). */
#define SIM_REMAP_BANKS 2560u
/* Accounting buffer of the real driver (nvidia-smi -q: "Accounting Mode Buffer Size: 4000"). */
#define SIM_ACCOUNTING_BUFFER 4000u
/* Every reason bit NVML defines, as a Hopper capture's clocks_event_reasons.supported shows. */
#define SIM_SUPPORTED_REASONS 0x1FFULL

nvmlReturn_t nvmlDeviceGetDisplayMode(nvmlDevice_t device, nvmlEnableState_t *display)
{
	DEV_BEGIN(device, display);
	/* Data-centre boards report the connector state as attached with no display active. */
	*display = NVML_FEATURE_ENABLED;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetDisplayActive(nvmlDevice_t device, nvmlEnableState_t *isActive)
{
	DEV_BEGIN(device, isActive);
	*isActive = NVML_FEATURE_DISABLED;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetAccountingMode(nvmlDevice_t device, nvmlEnableState_t *mode)
{
	DEV_BEGIN(device, mode);
	*mode = NVML_FEATURE_DISABLED;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetAccountingBufferSize(nvmlDevice_t device, unsigned int *bufferSize)
{
	DEV_BEGIN(device, bufferSize);
	*bufferSize = SIM_ACCOUNTING_BUFFER;
	return sim_leave(NVML_SUCCESS);
}

/* JPEG and OFA engines exist from Ampere on; nothing in the simulator uses them. */
static nvmlReturn_t engine_util(nvmlDevice_t device, unsigned *util, unsigned *period)
{
	DEV_BEGIN(device, util);
	if (!period)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	if (g->arch < NVML_DEVICE_ARCH_AMPERE || (g->has_mig && g->mig_current))
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	*util = 0;
	*period = (unsigned)lround(g->util_period * 1e6);
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetJpgUtilization(nvmlDevice_t device, unsigned int *utilization,
                                         unsigned int *samplingPeriodUs)
{
	return engine_util(device, utilization, samplingPeriodUs);
}

nvmlReturn_t nvmlDeviceGetOfaUtilization(nvmlDevice_t device, unsigned int *utilization,
                                         unsigned int *samplingPeriodUs)
{
	return engine_util(device, utilization, samplingPeriodUs);
}

nvmlReturn_t nvmlDeviceGetEncoderStats(nvmlDevice_t device, unsigned int *sessionCount,
                                       unsigned int *averageFps, unsigned int *averageLatency)
{
	DEV_BEGIN(device, sessionCount);
	if (!averageFps || !averageLatency)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	/* No simulated workload encodes video. */
	*sessionCount = *averageFps = *averageLatency = 0;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetSupportedClocksEventReasons(nvmlDevice_t device,
                                                      unsigned long long *supported)
{
	DEV_BEGIN(device, supported);
	*supported = SIM_SUPPORTED_REASONS;
	return sim_leave(NVML_SUCCESS);
}

/*
 * ECC by location: the scenario's errors are DRAM errors; SRAM has none; the
 * other locations are not counted on Hopper-class boards, as the capture shows.
 */
nvmlReturn_t nvmlDeviceGetMemoryErrorCounter(nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
                                             nvmlEccCounterType_t counterType,
                                             nvmlMemoryLocation_t locationType,
                                             unsigned long long *count)
{
	DEV_BEGIN(device, count);
	if ((errorType != NVML_MEMORY_ERROR_TYPE_CORRECTED &&
	     errorType != NVML_MEMORY_ERROR_TYPE_UNCORRECTED) ||
	    (counterType != NVML_VOLATILE_ECC && counterType != NVML_AGGREGATE_ECC) ||
	    locationType < 0 || locationType > NVML_MEMORY_LOCATION_SRAM)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	if (!g->has_ecc || !g->ecc_enabled)
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	if (locationType == NVML_MEMORY_LOCATION_SRAM) {
		*count = 0;
		return sim_leave(NVML_SUCCESS);
	}
	if (locationType != NVML_MEMORY_LOCATION_DRAM)
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	unsigned long long sv, dv, sa, da;
	sim_ecc_counts(g, now.t, &sv, &dv, &sa, &da);
	bool corr = errorType == NVML_MEMORY_ERROR_TYPE_CORRECTED;
	*count = counterType == NVML_VOLATILE_ECC ? (corr ? sv : dv) : (corr ? sa : da);
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetRowRemapperHistogram(nvmlDevice_t device,
                                               nvmlRowRemapperHistogramValues_t *values)
{
	DEV_BEGIN(device, values);
	if (!g->has_remap)
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	/* Each remapped row uses a spare of its own bank, which then has "high" availability. */
	unsigned used = g->remap_corr + g->remap_unc;
	if (used > SIM_REMAP_BANKS)
		used = SIM_REMAP_BANKS;
	memset(values, 0, sizeof *values);
	values->max = SIM_REMAP_BANKS - used;
	values->high = used;
	return sim_leave(NVML_SUCCESS);
}
