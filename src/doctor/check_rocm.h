/*
 * check_rocm.h - doctor's rocm.* checks: what stands between an AMD GPU and
 * the work meant for it (device nodes and groups, the PyTorch build, the
 * device-selection variables, HSA_OVERRIDE_GFX_VERSION, ComfyUI and Ollama
 * running on the CPU). Each says SKIP on a machine without an AMD GPU, found
 * by the amdgpu reader (gpu/amdgpu.h) below the probe's root: the directory
 * whose "sys" is the probe's sys_root ("" for the real /sys).
 *
 * Implemented by check_rocm.c (devices, PyTorch, variables, gfx targets),
 * check_rocm_apps.c (ComfyUI and Ollama) and check_rocm_faults.c (ring
 * timeouts and GPU resets in the kernel log).
 */
#ifndef GPUWHY_DOCTOR_CHECK_ROCM_H
#define GPUWHY_DOCTOR_CHECK_ROCM_H

#include "doctor/probe.h"
#include "util/i18n.h"

void doctor_check_rocm_devices(doctor_ctx *c);
void doctor_check_rocm_torch(doctor_ctx *c);
void doctor_check_rocm_visible_devices(doctor_ctx *c);
void doctor_check_rocm_gfx_override(doctor_ctx *c);
void doctor_check_rocm_apps(doctor_ctx *c);
void doctor_check_rocm_faults(doctor_ctx *c);

/* The AMD GPUs the probe's sysfs shows (amdgpu_discover); 0 when none. */
int doctor_rocm_gpu_count(const doctor_ctx *c);

/*
 * The gfx target a KFD topology gfx_target_version names (110000 -> "gfx1100",
 * 90010 -> "gfx90a"), and what it needs: 0 supported by ROCm as it is, 1 runs
 * only with HSA_OVERRIDE_GFX_VERSION (want holds the value: "10.3.0"), -1 not
 * in gpuwhy's table.
 */
int doctor_rocm_gfx_support(unsigned version, char *name, size_t nlen, char *want, size_t wlen);

/* The rows of doctor_checks[] (checks.c), in the order they print. */
#define DOCTOR_ROCM_CHECKS                                                                         \
	{"rocm.devices", doctor_check_rocm_devices,                                                \
	 N_("AMD GPUs: /dev/kfd and /dev/dri/renderD* present and read/writable (render and "      \
	    "video groups; containers need --device=/dev/kfd --device=/dev/dri)")},                \
	    {"rocm.torch", doctor_check_rocm_torch,                                                \
	     N_("AMD GPUs: a ROCm build of PyTorch that sees them; a CUDA or CPU build on an "     \
	        "AMD-only machine named as the problem")},                                         \
	    {"rocm.visible_devices", doctor_check_rocm_visible_devices,                            \
	     N_("AMD GPUs: ROCR_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES and CUDA_VISIBLE_DEVICES "    \
	        "against the GPUs there and each other")},                                         \
	    {"rocm.gfx_override", doctor_check_rocm_gfx_override,                                  \
	     N_("AMD GPUs: HSA_OVERRIDE_GFX_VERSION for consumer cards ROCm does not list, and "   \
	        "set where it should not be")},                                                    \
	    {"rocm.apps", doctor_check_rocm_apps,                                                  \
	     N_("AMD GPUs: ComfyUI and Ollama running without the GPU (no /dev/kfd open)")},       \
	{                                                                                          \
		"rocm.faults", doctor_check_rocm_faults,                                           \
		    N_("AMD GPUs: amdgpu ring timeouts and GPU resets in the kernel log, per GPU") \
	}

#endif
