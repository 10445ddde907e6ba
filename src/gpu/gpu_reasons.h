/*
 * gpu_reasons.h - what NVML's codes mean, by name: the topology level
 * between two devices (nvmlGpuTopologyLevel_t) and the clock event
 * (throttle) reason bits. Callers ask "does this path cross the CPU?" or
 * "is this slowdown the hardware's?" instead of re-typing 10..50 or 0x40.
 * Reason names (gpu_reason_name) live beside the metric table in metrics.h.
 */
#ifndef GPUWHY_GPU_GPU_REASONS_H
#define GPUWHY_GPU_GPU_REASONS_H

#include <stdbool.h>
#include <stdint.h>

#include "gpu/metrics.h"

/* ---- topology levels: larger is a longer path; -1 (or anything else) unknown ---- */

/* nvidia-smi topo -m's word: "X" (same board), "PIX", "PXB", "PHB", "NODE", "SYS"; NULL unknown. */
const char *gpu_topo_level_name(int level);
/* A level NVML defines (0 same board .. SYS). */
bool gpu_topo_level_known(int level);
/* Both on one board (a dual-GPU card, or a device and itself). */
bool gpu_topo_level_is_internal(int level);
/* The path runs through a PCIe host bridge, i.e. through the CPU (PHB, NODE, SYS). */
bool gpu_topo_level_is_cross_cpu(int level);
/* The path crosses the interconnect between NUMA nodes (SYS). */
bool gpu_topo_level_is_cross_numa(int level);

/* ---- clock event (throttle) reasons ---- */

/* One bit of the reason mask. */
typedef enum {
	GPU_REASON_GPU_IDLE,
	GPU_REASON_APP_CLOCKS,
	GPU_REASON_SW_POWER_CAP,
	GPU_REASON_HW_SLOWDOWN,
	GPU_REASON_SYNC_BOOST,
	GPU_REASON_SW_THERMAL,
	GPU_REASON_HW_THERMAL,
	GPU_REASON_HW_POWER_BRAKE,
	GPU_REASON_DISPLAY_CLOCKS,
	GPU_REASON__COUNT
} gpu_reason;

/* The mask bit of reason r (0 for an unknown r). */
uint64_t gpu_reason_bit(gpu_reason r);
/* The per-reason metric (GM_CLK_R_*) that reports r as 0/1; GM__COUNT when none. */
gpu_metric_id gpu_reason_metric(gpu_reason r);
/* The mask as a metric value (clocks_event_reasons.active): 0 when negative or not exact. */
uint64_t gpu_reasons_from_value(double v);

/* Every bit NVML defines. */
uint64_t gpu_reasons_known(void);
/* Nothing runs: clocks drop by design. */
bool gpu_reasons_idle(uint64_t mask);
/* The software power cap holds clocks (the board at its power limit). */
bool gpu_reasons_power_cap(uint64_t mask);
/* Heat: software or hardware thermal slowdown. */
bool gpu_reasons_thermal(uint64_t mask);
/* Hardware slowdown or the external power brake (not heat alone). */
bool gpu_reasons_hw_slowdown(uint64_t mask);
/* The bits that hold clocks down under load: power cap, heat, hardware slowdown. */
uint64_t gpu_reasons_slowing(uint64_t mask);
/* The bits that slow the GPU against its will: heat and hardware slowdown. */
uint64_t gpu_reasons_unwanted(uint64_t mask);

/* How bad the active reasons are, gpu_idle left out. */
typedef enum {
	GPU_REASON_SEV_NONE,     /* no reason (or only idle) */
	GPU_REASON_SEV_SETTING,  /* power cap, sync boost, application or display clocks */
	GPU_REASON_SEV_THERMAL,  /* software thermal slowdown */
	GPU_REASON_SEV_HARDWARE, /* hardware slowdown, hardware thermal, power brake */
} gpu_reason_severity;
gpu_reason_severity gpu_reasons_severity(uint64_t mask);

#endif
