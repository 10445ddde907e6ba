/*
 * amdgpu_metrics.h - the amdgpu driver's binary gpu_metrics table
 * (ROOT/sys/class/drm/cardN/device/gpu_metrics), read by its header.
 *
 * The table starts with a 4-byte header: structure_size (u16, little endian),
 * format_revision (u8: 1 dGPUs, 2 and 3 APUs), content_revision (u8). Each
 * (format, content) pair is one fixed layout of the kernel's ABI; the layouts
 * known here are v1.0 to v1.6 (dGPUs; v1.4 and later: MI300), v2.0 to v2.4
 * (APUs) and v3.0 (Strix and later APUs). A pair not known here, a
 * structure_size that is not the one that pair has, or a file shorter than
 * its layout gives no value at all: never a value read at a guessed offset.
 * The driver fills a field it does not support with all ones (0xFFFF,
 * 0xFFFFFFFF, ...); such a field is absent.
 *
 * Implemented by amdgpu_metrics.c. Pure except amdgpu_metrics_read.
 */
#ifndef GPUWHY_GPU_AMDGPU_METRICS_H
#define GPUWHY_GPU_AMDGPU_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The values read from a table, in gpuwhy's units. */
typedef enum {
	AMDGPU_M_TEMP_EDGE,    /* degrees C; APUs: the gfx temperature */
	AMDGPU_M_TEMP_HOTSPOT, /* degrees C (junction); MI300: the socket's hottest */
	AMDGPU_M_TEMP_MEM,     /* degrees C; MI300: the hottest HBM stack */
	AMDGPU_M_POWER_W,      /* socket power, W: average (v1.1-1.3, v2.x), current (v1.4+) */
	AMDGPU_M_GFX_ACTIVITY, /* %, the firmware's average graphics activity */
	AMDGPU_M_UMC_ACTIVITY, /* %, memory controller activity (dGPUs only) */
	AMDGPU_M_GFXCLK_MHZ,   /* current gfx clock; MI300: mean of the XCDs that report one */
	AMDGPU_M_UCLK_MHZ,     /* current memory clock */
	AMDGPU_M_SOCCLK_MHZ,   /* current SoC clock; MI300: mean of the instances */
	AMDGPU_M__COUNT
} amdgpu_metric;

/* The accumulated throttler residencies of v1.6 (MI300), in gpuwhy's reason order. */
typedef enum {
	AMDGPU_RES_PROCHOT,    /* prochot_residency_acc */
	AMDGPU_RES_PPT,        /* ppt_residency_acc: package power tracking */
	AMDGPU_RES_SOCKET_THM, /* socket_thm_residency_acc */
	AMDGPU_RES_VR_THM,     /* vr_thm_residency_acc */
	AMDGPU_RES_HBM_THM,    /* hbm_thm_residency_acc */
	AMDGPU_RES__COUNT
} amdgpu_res;

/*
 * One reading of them: each counter counts the firmware's accumulation cycles
 * in which its throttler was active, accumulation_counter every cycle (so
 * only their changes between two readings mean anything). ok: the counter
 * was there; res_ok[k]: counter k was (all ones: not supported).
 */
typedef struct {
	bool ok;
	uint32_t acc;
	uint32_t res[AMDGPU_RES__COUNT];
	uint8_t res_ok[AMDGPU_RES__COUNT];
} amdgpu_residency;

typedef struct {
	bool header_ok; /* at least the 4-byte header was there */
	unsigned structure_size, format_revision, content_revision;
	bool known; /* the layout is one known here and the file holds it whole */
	double v[AMDGPU_M__COUNT];
	uint8_t ok[AMDGPU_M__COUNT];
	bool throttle_ok;       /* indep_throttle_status (v1.3, v2.2 and later) supported */
	uint64_t throttle_raw;  /* its bits, the kernel's ASIC-independent SMU_THROTTLER_* */
	amdgpu_residency resid; /* v1.6 only; resid.ok false otherwise */
} amdgpu_metrics;

/* Parse one table (the whole file). False when the layout is not known (all absent). */
bool amdgpu_metrics_parse(const void *buf, size_t len, amdgpu_metrics *out);

/* Read DEV_PATH/gpu_metrics; false (all absent) when missing or not known. */
bool amdgpu_metrics_read(const char *dev_path, amdgpu_metrics *out);

/* The name of a value ("temp_hotspot"), for tests and messages. */
const char *amdgpu_metric_name(amdgpu_metric m);

/*
 * indep_throttle_status as gpuwhy's clock event reasons (gpu_reasons.h bits):
 * power limits (PPT0-3, SPL, FPPT, SPPT, SPPT_APU) -> sw_power_cap; temperature
 * limits (TEMP_*, the liquid sensors) -> sw_thermal; VRHOT0/1 -> hw_thermal;
 * PROCHOT_CPU/GFX -> hw_slowdown. Current limits (TDC, EDC, APCC), PPM and FIT
 * have no NVIDIA meaning and are left out (amdgpu_throttle_name names them).
 */
uint64_t amdgpu_throttle_reasons(uint64_t raw);

/* The name of a bit of indep_throttle_status ("ppt0", "tdc_gfx", "temp_hotspot"); NULL when none.
 */
const char *amdgpu_throttle_name(unsigned bit);

/* The group of a bit: "power", "current", "thermal", "other"; NULL when the bit is unassigned. */
const char *amdgpu_throttle_group(unsigned bit);

/*
 * The clock event reasons of the interval between two readings of the
 * residencies (v1.6): a reason is active when one of its counters advanced,
 * not active when all of them stood still while accumulation_counter
 * advanced. PROCHOT -> hw_slowdown, PPT -> sw_power_cap, socket and HBM
 * thermal -> sw_thermal, VR thermal -> hw_thermal (as amdgpu_throttle_reasons
 * maps the same limits). *known gets the reasons the interval speaks for: a
 * reason whose counters are not supported, went back or advanced by more than
 * the accumulation counter is not known. False (nothing known) when either
 * reading has no counter, or the accumulation counter did not advance: the
 * first reading, a firmware that has not counted since, and a counter reset
 * (driver reload, GPU reset) or 32-bit wrap, which cannot be told apart.
 */
bool amdgpu_residency_reasons(const amdgpu_residency *prev, const amdgpu_residency *cur,
                              uint64_t *reasons, uint64_t *known);

/* The name of a residency counter ("ppt_residency_acc"); "?" when none. */
const char *amdgpu_residency_name(amdgpu_res k);

#endif
