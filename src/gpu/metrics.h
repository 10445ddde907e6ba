/* metrics.h - the GPU metric table (metrics.def) as data: ids, names, formatting. */
#ifndef GPUWHY_GPU_METRICS_H
#define GPUWHY_GPU_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
#define X(id, q, d, u, f, p, c, r, h, e) GM_##id,
#include "gpu/metrics.def"
#undef X
	GM__COUNT
} gpu_metric_id;

typedef enum {
	GMF_INT,
	GMF_F2,
	GMF_F6,
	GMF_STR,
	GMF_ENABLED,
	GMF_PSTATE,
	GMF_HEX,
	GMF_ACTIVE,
	GMF_CMODE,
	GMF_CC,
	GMF_ARCH,
	GMF_YESNO,
	GMF_HEX2,
	GMF_HEX4,
	GMF_HEX8,
	GMF_HEXN,
	GMF_DEPRECATED
} gpu_metric_fmt;

typedef enum { GMC_STATIC, GMC_FAST, GMC_SLOW, GMC_NONE } gpu_metric_cadence;
typedef enum { GMP_gauge, GMP_counter } gpu_metric_prom;
/* Whether the exporter exports a DCGM-named metric by default or only when a CSV asks. */
typedef enum { GME_DEF, GME_CSV } gpu_metric_export;

typedef enum {
	R_IDENTITY,
	R_MODES,
	R_UTIL,
	R_CODEC,
	R_SAMPLES,
	R_MEM,
	R_BAR1,
	R_POWER,
	R_POWER_LIMITS,
	R_ENERGY,
	R_TEMP,
	R_FIELDS,
	R_THRESHOLDS,
	R_FAN,
	R_CLOCKS,
	R_MAX_CLOCKS,
	R_APP_CLOCKS,
	R_REASONS,
	R_PSTATE,
	R_PCIE_LINK,
	R_PCIE_LINK_MAX,
	R_PCIE_THROUGHPUT,
	R_PCIE_REPLAY,
	R_ECC,
	R_RETIRED,
	R_REMAP,
	R_GPM,
	R_XID,
	R_PCI,
	R_DISPLAY,
	R_ACCOUNTING,
	R_ENC_STATS,
	R_POWER_FIELDS,
	R_DEF_APP_CLOCKS,
	R_SUPPORTED_REASONS,
	R_PCIE_ERRORS,
	R_ECC_MODE,
	R_ECC_DETAIL,
	R_REMAP_HIST,
	R_NONE,
	R__COUNT
} gpu_reader;

typedef struct {
	gpu_metric_id id;
	const char *key;  /* query name, e.g. "utilization.gpu" */
	const char *dcgm; /* dcgm-exporter name or NULL */
	const char *unit; /* "" when none */
	gpu_metric_fmt fmt;
	gpu_metric_prom prom;
	gpu_metric_cadence cadence;
	gpu_reader reader;
	const char *help;
	gpu_metric_export exported;
} gpu_metric_desc;

extern const gpu_metric_desc gpu_metrics[GM__COUNT];

/* Look a field up by its query name or a documented alias (clocks.sm, ...). -1 if unknown. */
int gpu_metric_lookup(const char *name);

/* Whether gpuwhy reads the metric at all (cadence NONE: a name nvidia-smi has, never read). */
bool gpu_metric_readable(gpu_metric_id id);

/* nvidia-smi's text for a value NVML refused as deprecated. */
#define GPU_DEPRECATED_TEXT "[Requested functionality has been deprecated]"

/* Aliases accepted by gpu_metric_lookup, NULL-terminated pairs {alias, key}. */
extern const char *const gpu_metric_aliases[][2];

/* Column-safe identifier for stores and JSON-ish uses: "utilization.gpu" -> "utilization_gpu". */
void gpu_metric_column(gpu_metric_id id, char *out, size_t outlen);

/*
 * Format a numeric value the way nvidia-smi's CSV does: with_units adds " %",
 * " MiB", ... Enumerations print as words (Enabled, P0, Active). STR fields
 * are not handled here (their text lives in the GPU's static facts).
 */
void gpu_metric_format(gpu_metric_id id, double v, bool with_units, char *out, size_t outlen);

/* The value in dcgm-exporter's scale (GPM percentages become 0..1 ratios). */
double gpu_metric_dcgm_value(gpu_metric_id id, double v);

/* Names for clock event reason bits, in bit order. */
const char *gpu_reason_name(uint64_t bit);
/* Comma-separated words for a reason mask ("sw_power_cap,hw_thermal_slowdown"), "none" for 0. */
void gpu_reasons_words(uint64_t mask, char *out, size_t outlen);
/*
 * The same mask in the driver's own words, as nvidia-smi -q lists "Clocks
 * Event Reasons" ("Idle", "SW Power Cap, HW Slowdown"; "none" for 0): what
 * every human-readable face shows.
 */
void gpu_reasons_display(uint64_t mask, char *out, size_t outlen);
/* The same list in the user's language (util/i18n.h): the driver's names stay in
 * gpu_reasons_display for the faces that print what nvidia-smi prints. */
void gpu_reasons_human(uint64_t mask, char *out, size_t outlen);

/* Architecture name from nvmlDeviceArchitecture_t, "Unknown" otherwise. */
const char *gpu_arch_name(unsigned arch);

#endif
