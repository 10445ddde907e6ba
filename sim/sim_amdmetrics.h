/*
 * sim_amdmetrics.h - the binary gpu_metrics table of a simulated AMD GPU
 * (ROOT/sys/class/drm/cardN/device/gpu_metrics), laid out as the kernel's
 * struct gpu_metrics_v1_3 (discrete GPUs) and gpu_metrics_v2_1 / v2_2 (APUs)
 * in drivers/gpu/drm/amd/include/kgd_pp_interface.h: little endian, every
 * field at a multiple of its size. Written from those structs' field lists,
 * not from gpuwhy's reader, so that each checks the other.
 *
 * A field the simulated firmware does not fill holds all ones, as the
 * driver's tables do. Implemented by sim_amdmetrics.c; nothing here prints.
 */
#ifndef GPUWHY_SIM_AMDMETRICS_H
#define GPUWHY_SIM_AMDMETRICS_H

#include <stddef.h>
#include <stdint.h>

#include "sim_scenario.h"

/* The largest table written (v1.3: 120 bytes, v2.2: 128). */
#define SIM_AMDM_MAX 128

/* One instant, in gpuwhy's units; NAN (or a negative value) leaves a field unfilled. */
typedef struct {
	double temp_edge, temp_hotspot, temp_mem; /* degrees C */
	double power_w;                           /* average socket power */
	double gfx_pct, umc_pct;                  /* average activities, % */
	double gfxclk, socclk, uclk;              /* current clocks, MHz */
	double fan_rpm;
	uint64_t indep_throttle; /* SMU_THROTTLER_* bits */
} sim_amdm;

/*
 * The table of version (SIM_AMDM_*) into buf (at least SIM_AMDM_MAX bytes):
 * its size, 0 for SIM_AMDM_NONE or an unknown version.
 */
size_t sim_amdm_encode(int version, const sim_amdm *v, uint8_t *buf);

/*
 * NVML clock event reasons (a throttle episode's "reasons", the model's power
 * cap and slowdown) as the ASIC-independent throttler bits a board's firmware
 * would set: power cap -> PPT0 (an APU: SPL), sw thermal -> TEMP_HOTSPOT (an
 * APU: TEMP_GPU), hw thermal -> VRHOT0, hw slowdown -> PROCHOT_GFX. The others
 * (idle, application clocks, sync boost, power brake, display) have no bit.
 */
uint64_t sim_amdm_throttle_bits(unsigned long long nvml_reasons, bool apu);

/* Write dev/gpu_metrics whole (beside, then renamed) when it changed. 0, or -1 with errno. */
int sim_amdm_write(const char *dev, int version, const sim_amdm *v);

#endif
