/*
 * A deliberately minimal NVML for unit tests of the device layer: two GPUs,
 * only a handful of entry points (everything else must come out absent),
 * the 32-byte process layout of drivers 535.43-535.8x through _v3, and GPU 1
 * falling off the bus once FAKE_NVML_LOSE_GPU1 is set.
 */
#include <stdlib.h>
#include <string.h>

#include "nvml_abi.h"

#define API __attribute__((visibility("default")))

static int inited;

API nvmlReturn_t nvmlInit_v2(void)
{
	inited++;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlShutdown(void)
{
	if (!inited)
		return NVML_ERROR_UNINITIALIZED;
	inited--;
	return NVML_SUCCESS;
}

API const char *nvmlErrorString(nvmlReturn_t r)
{
	return r == NVML_SUCCESS ? "Success" : "Fake error";
}

API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned *n)
{
	*n = 2;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t *d)
{
	if (i > 1)
		return NVML_ERROR_INVALID_ARGUMENT;
	*d = (nvmlDevice_t)(uintptr_t)(0x1000 + i);
	return NVML_SUCCESS;
}

static int dev_index(nvmlDevice_t d)
{
	return (int)((uintptr_t)d - 0x1000);
}

static int lost(nvmlDevice_t d)
{
	return dev_index(d) == 1 && getenv("FAKE_NVML_LOSE_GPU1");
}

API nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *buf, unsigned len)
{
	const char *u = dev_index(d) ? "GPU-22222222-0000-0000-0000-000000000001"
	                             : "GPU-11111111-0000-0000-0000-000000000000";
	if (len < strlen(u) + 1)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	strcpy(buf, u);
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *buf, unsigned len)
{
	(void)d;
	strncpy(buf, "Fake GPU", len);
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
	if (lost(d))
		return NVML_ERROR_GPU_IS_LOST;
	u->gpu = dev_index(d) ? 10 : 55;
	u->memory = 7;
	return NVML_SUCCESS;
}

/* Power is modelled as unsupported: the layer must leave it absent. */
API nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned *mw)
{
	(void)d;
	(void)mw;
	return NVML_ERROR_NOT_SUPPORTED;
}

API nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m)
{
	if (lost(d))
		return NVML_ERROR_GPU_IS_LOST;
	if (m->version != nvmlMemory_v2)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	m->total = 80ULL << 30;
	m->reserved = 512ULL << 20;
	m->used = 4ULL << 30;
	m->free = m->total - m->used - m->reserved;
	return NVML_SUCCESS;
}

/* The 535.43 trap: _v3 writes 32-byte entries. */
API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned *count,
                                                         nvmlProcessInfo_t *infos)
{
	if (lost(d))
		return NVML_ERROR_GPU_IS_LOST;
	const unsigned have = 2;
	if (!infos || *count < have) {
		*count = have;
		return infos || *count ? NVML_ERROR_INSUFFICIENT_SIZE
		                       : NVML_ERROR_INSUFFICIENT_SIZE;
	}
	nvmlProcessInfo_535_t *p = (nvmlProcessInfo_535_t *)infos;
	for (unsigned i = 0; i < have; i++) {
		p[i].pid = 4000 + i;
		p[i].usedGpuMemory = (1ULL + i) << 30;
		p[i].gpuInstanceId = 0xFFFFFFFFu;
		p[i].computeInstanceId = 0xFFFFFFFFu;
		p[i].usedGpuCcProtectedMemory = 0;
	}
	*count = have;
	return NVML_SUCCESS;
}
