/*
 * nvml_unanswered.c - NVML entry points the simulated GPU exports so that
 * clients resolving them find them, and answers NOT_SUPPORTED, as a GPU
 * without the feature does: vGPU, units, MIG instance management, settings
 * (the scenario fixes them), Confidential Computing, accounting, encoder and
 * frame-buffer-capture sessions, InfoROM, clock offsets and the like. A call
 * with a device handle checks it as every entry point does (INVALID_ARGUMENT,
 * GPU_IS_LOST) first.
 */
#include "sim_lib.h"

/* Their parameters are the ABI's; only the device (if any) is looked at. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

static nvmlReturn_t unanswered_device(nvmlDevice_t device)
{
	struct nvmlDevice_st *d;
	sim_time now;
	nvmlReturn_t rc = sim_enter_dev(device, device, &d, &now);
	return rc != NVML_SUCCESS ? rc : sim_leave(NVML_ERROR_NOT_SUPPORTED);
}

static nvmlReturn_t unanswered(void)
{
	sim_time now;
	nvmlReturn_t rc = sim_enter(&now);
	return rc != NVML_SUCCESS ? rc : sim_leave(NVML_ERROR_NOT_SUPPORTED);
}

#define DEVICE_NOT_SUPPORTED(ret, name, params)                                                    \
	ret name params                                                                            \
	{                                                                                          \
		return unanswered_device(device);                                                  \
	}
#define NOT_SUPPORTED_ANSWER(ret, name, params)                                                    \
	ret name params                                                                            \
	{                                                                                          \
		return unanswered();                                                               \
	}
NVML_UNANSWERED_DEVICE_ENTRY_POINTS(DEVICE_NOT_SUPPORTED)
NVML_UNANSWERED_ENTRY_POINTS(NOT_SUPPORTED_ANSWER)
