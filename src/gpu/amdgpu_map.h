/*
 * amdgpu_map.h - an AMD GPU's facts and readings in the terms of the metric
 * table (gpu/metrics.def), so every face shows them as it shows an NVIDIA GPU.
 *
 * Meanings are nvidia-smi's where the driver measures the same thing:
 *   utilization.gpu      gpu_busy_percent
 *   utilization.memory   mem_busy_percent (memory controller activity)
 *   memory.total/used/free  VRAM (mem_info_vram_*), MiB
 *   power.draw           hwmon power1_average, else power1_input
 *   power.limit          hwmon power1_cap
 *   temperature.gpu      edge sensor, else junction (boards without an edge sensor: MI300)
 *   temperature.memory   mem sensor
 *   fan.speed            pwm1 against pwm1_max, %
 *   clocks.current.graphics and .sm   sclk (one clock drives both); .memory mclk
 *   clocks.max.*         the highest pp_dpm_sclk / pp_dpm_mclk level
 *   pcie.link.gen/width.current/max   the PCI function's link files
 *   clocks_event_reasons.*  gpu_metrics' indep_throttle_status (amdgpu_throttle_reasons):
 *                        sw_power_cap, sw_thermal, hw_thermal, hw_slowdown; the others absent
 *   ecc.errors.{corrected,uncorrected}.volatile.total   RAS counts summed over blocks
 * Everything else (ECC detail and aggregate, NVLink, MIG, GPM, ...) is NVIDIA's
 * alone and stays absent.
 */
#ifndef GPUWHY_GPU_AMDGPU_MAP_H
#define GPUWHY_GPU_AMDGPU_MAP_H

#include "gpu/amdgpu.h"
#include "gpu/gpu.h"

/*
 * Static facts of card c as GPU number index: the board's product name (else
 * its name in pci.ids, else "AMD GPU 1002:DEVICE"), its unique_id as serial,
 * the PCI address in NVML's spelling ("00000000:9F:00.0") and ids packed as
 * NVML packs them (device << 16 | vendor). The UUID stays "" (amdgpu has none
 * in sysfs).
 */
void amdgpu_static(const amdgpu_card *c, int index, gpu_static *st);

/* One reading as metric values; index and PCI ids from st. Absent stays absent. */
void amdgpu_to_gpu_values(const gpu_static *st, const amdgpu_values *a, gpu_values *o);

#endif
