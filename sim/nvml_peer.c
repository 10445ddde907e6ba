/*
 * nvml_peer.c - NVML entry points gpuwhy does not call itself but other NVML
 * programs do (nvitop, nvtop, gpustat, pynvml): driver model, Confidential
 * Computing memory split and the versioned temperature query, answered the
 * way the Linux driver answers them on a data-centre GPU.
 */
#include <math.h>

#include "sim_lib.h"

/* The driver model (WDDM, TCC/WDM, MCDM) exists only on Windows: Linux says NOT_SUPPORTED. */
static nvmlReturn_t driver_model(nvmlDevice_t device, nvmlDriverModel_t *current,
                                 nvmlDriverModel_t *pending)
{
	const void *out = current ? (const void *)current : (const void *)pending;
	DEV_BEGIN(device, out);
	return sim_leave(NVML_ERROR_NOT_SUPPORTED);
}

nvmlReturn_t nvmlDeviceGetDriverModel_v2(nvmlDevice_t device, nvmlDriverModel_t *current,
                                         nvmlDriverModel_t *pending)
{
	return driver_model(device, current, pending);
}

nvmlReturn_t nvmlDeviceGetDriverModel(nvmlDevice_t device, nvmlDriverModel_t *current,
                                      nvmlDriverModel_t *pending)
{
	return driver_model(device, current, pending);
}

/*
 * Confidential Computing needs Hopper or newer; with it off (the simulator has
 * no CC mode) no memory is protected and the whole framebuffer is unprotected.
 */
nvmlReturn_t nvmlDeviceGetConfComputeMemSizeInfo(nvmlDevice_t device,
                                                 nvmlConfComputeMemSizeInfo_t *memInfo)
{
	DEV_BEGIN(device, memInfo);
	if (g->arch < NVML_DEVICE_ARCH_HOPPER)
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	memInfo->protectedMemSizeKib = 0;
	memInfo->unprotectedMemSizeKib = g->mem_total * 1024ULL; /* MiB to KiB */
	return sim_leave(NVML_SUCCESS);
}

/* The versioned form of nvmlDeviceGetTemperature: same sensor, signed result. */
nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_t *temperature)
{
	unsigned c = 0;
	nvmlReturn_t rc = nvmlDeviceGetTemperature(
	    device, temperature ? temperature->sensorType : 0, temperature ? &c : NULL);
	if (rc != NVML_SUCCESS)
		return rc;
	if (temperature->version != nvmlTemperature_v1)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	temperature->temperature = (int)c;
	return NVML_SUCCESS;
}
