/* gpu_reasons.c - NVML topology levels and clock event reason bits, by meaning. */
#include "gpu/gpu_reasons.h"

#include "nvml_abi.h"

const char *gpu_topo_level_name(int level)
{
	switch (level) {
	case NVML_TOPOLOGY_INTERNAL:
		return "X";
	case NVML_TOPOLOGY_SINGLE:
		return "PIX";
	case NVML_TOPOLOGY_MULTIPLE:
		return "PXB";
	case NVML_TOPOLOGY_HOSTBRIDGE:
		return "PHB";
	case NVML_TOPOLOGY_NODE:
		return "NODE";
	case NVML_TOPOLOGY_SYSTEM:
		return "SYS";
	default:
		return NULL;
	}
}

bool gpu_topo_level_known(int level)
{
	return gpu_topo_level_name(level) != NULL;
}

bool gpu_topo_level_is_internal(int level)
{
	return level == NVML_TOPOLOGY_INTERNAL;
}

bool gpu_topo_level_is_cross_cpu(int level)
{
	return gpu_topo_level_known(level) && level >= NVML_TOPOLOGY_HOSTBRIDGE;
}

bool gpu_topo_level_is_cross_numa(int level)
{
	return level == NVML_TOPOLOGY_SYSTEM;
}

static const struct {
	uint64_t bit;
	gpu_metric_id metric;
} reasons[GPU_REASON__COUNT] = {
    [GPU_REASON_GPU_IDLE] = {nvmlClocksEventReasonGpuIdle, GM_CLK_R_IDLE},
    [GPU_REASON_APP_CLOCKS] = {nvmlClocksEventReasonApplicationsClocksSetting, GM_CLK_R_APP},
    [GPU_REASON_SW_POWER_CAP] = {nvmlClocksEventReasonSwPowerCap, GM_CLK_R_SW_POWER},
    [GPU_REASON_HW_SLOWDOWN] = {nvmlClocksThrottleReasonHwSlowdown, GM_CLK_R_HW_SLOW},
    [GPU_REASON_SYNC_BOOST] = {nvmlClocksEventReasonSyncBoost, GM_CLK_R_SYNC_BOOST},
    [GPU_REASON_SW_THERMAL] = {nvmlClocksEventReasonSwThermalSlowdown, GM_CLK_R_SW_THERMAL},
    [GPU_REASON_HW_THERMAL] = {nvmlClocksThrottleReasonHwThermalSlowdown, GM_CLK_R_HW_THERMAL},
    [GPU_REASON_HW_POWER_BRAKE] = {nvmlClocksThrottleReasonHwPowerBrakeSlowdown,
                                   GM_CLK_R_HW_POWER_BRAKE},
    [GPU_REASON_DISPLAY_CLOCKS] = {nvmlClocksEventReasonDisplayClockSetting, GM__COUNT},
};

uint64_t gpu_reason_bit(gpu_reason r)
{
	return (unsigned)r < GPU_REASON__COUNT ? reasons[r].bit : 0;
}

gpu_metric_id gpu_reason_metric(gpu_reason r)
{
	return (unsigned)r < GPU_REASON__COUNT ? reasons[r].metric : GM__COUNT;
}

uint64_t gpu_reasons_from_value(double v)
{
	/* Doubles hold integers exactly up to 2^53; a damaged value is no mask. */
	return v >= 0 && v < 9007199254740992.0 ? (uint64_t)v : 0;
}

uint64_t gpu_reasons_known(void)
{
	uint64_t m = 0;
	for (int r = 0; r < GPU_REASON__COUNT; r++)
		m |= reasons[r].bit;
	return m;
}

bool gpu_reasons_idle(uint64_t mask)
{
	return (mask & nvmlClocksEventReasonGpuIdle) != 0;
}

bool gpu_reasons_power_cap(uint64_t mask)
{
	return (mask & nvmlClocksEventReasonSwPowerCap) != 0;
}

#define THERMAL (nvmlClocksEventReasonSwThermalSlowdown | nvmlClocksThrottleReasonHwThermalSlowdown)
#define HW_SLOW (nvmlClocksThrottleReasonHwSlowdown | nvmlClocksThrottleReasonHwPowerBrakeSlowdown)

bool gpu_reasons_thermal(uint64_t mask)
{
	return (mask & THERMAL) != 0;
}

bool gpu_reasons_hw_slowdown(uint64_t mask)
{
	return (mask & HW_SLOW) != 0;
}

uint64_t gpu_reasons_slowing(uint64_t mask)
{
	return mask & (nvmlClocksEventReasonSwPowerCap | THERMAL | HW_SLOW);
}

uint64_t gpu_reasons_unwanted(uint64_t mask)
{
	return mask & (THERMAL | HW_SLOW);
}

gpu_reason_severity gpu_reasons_severity(uint64_t mask)
{
	mask &= gpu_reasons_known() & ~(uint64_t)nvmlClocksEventReasonGpuIdle;
	if (!mask)
		return GPU_REASON_SEV_NONE;
	if (mask & (HW_SLOW | nvmlClocksThrottleReasonHwThermalSlowdown))
		return GPU_REASON_SEV_HARDWARE;
	if (mask & nvmlClocksEventReasonSwThermalSlowdown)
		return GPU_REASON_SEV_THERMAL;
	return GPU_REASON_SEV_SETTING;
}
