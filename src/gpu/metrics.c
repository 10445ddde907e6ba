#include "gpu/metrics.h"

#include <stdio.h>
#include <string.h>

#include "util/i18n.h"

const gpu_metric_desc gpu_metrics[GM__COUNT] = {
#define X(id, q, d, u, f, p, c, r, h, e)                                                           \
	{GM_##id, q, d, u, GMF_##f, GMP_##p, GMC_##c, r, h, GME_##e},
#include "gpu/metrics.def"
#undef X
};

/* The aliases nvidia-smi 590 --help-query-gpu lists ("X" or "Y"). */
const char *const gpu_metric_aliases[][2] = {
    {"gpu_name", "name"},
    {"gpu_serial", "serial"},
    {"gpu_uuid", "uuid"},
    {"gpu_bus_id", "pci.bus_id"},
    {"inforom.image", "inforom.img"},
    {"inforom.power", "inforom.pwr"},
    {"gpu_operation_mode.current", "gom.current"},
    {"gpu_operation_mode.pending", "gom.pending"},
    {"clocks_throttle_reasons.supported", "clocks_event_reasons.supported"},
    {"clocks_throttle_reasons.active", "clocks_event_reasons.active"},
    {"clocks_throttle_reasons.gpu_idle", "clocks_event_reasons.gpu_idle"},
    {"clocks_throttle_reasons.applications_clocks_setting",
     "clocks_event_reasons.applications_clocks_setting"},
    {"clocks_throttle_reasons.sw_power_cap", "clocks_event_reasons.sw_power_cap"},
    {"clocks_throttle_reasons.hw_slowdown", "clocks_event_reasons.hw_slowdown"},
    {"clocks_throttle_reasons.hw_thermal_slowdown", "clocks_event_reasons.hw_thermal_slowdown"},
    {"clocks_throttle_reasons.hw_power_brake_slowdown",
     "clocks_event_reasons.hw_power_brake_slowdown"},
    {"clocks_throttle_reasons.sw_thermal_slowdown", "clocks_event_reasons.sw_thermal_slowdown"},
    {"clocks_throttle_reasons.sync_boost", "clocks_event_reasons.sync_boost"},
    {"retired_pages.sbe", "retired_pages.single_bit_ecc.count"},
    {"retired_pages.dbe", "retired_pages.double_bit.count"},
    {"remapped_rows.sbe", "remapped_rows.correctable"},
    {"remapped_rows.dbe", "remapped_rows.uncorrectable"},
    {"gpu.power.draw.average", "power.draw.average"},
    {"gpu.power.draw.instant", "power.draw.instant"},
    {"gpu.power.requested_limit", "power.limit"},
    {"gpu.power.current_limit", "enforced.power.limit"},
    {"gpu.power.default_limit", "power.default_limit"},
    {"gpu.power.min_limit", "power.min_limit"},
    {"gpu.power.max_limit", "power.max_limit"},
    {"module.power.requested_limit", "module.power.limit"},
    {"module.power.current_limit", "module.enforced.power.limit"},
    {"clocks.gr", "clocks.current.graphics"},
    {"clocks.sm", "clocks.current.sm"},
    {"clocks.mem", "clocks.current.memory"},
    {"clocks.video", "clocks.current.video"},
    {"clocks.applications.gr", "clocks.applications.graphics"},
    {"clocks.applications.mem", "clocks.applications.memory"},
    {"clocks.default_applications.gr", "clocks.default_applications.graphics"},
    {"clocks.default_applications.mem", "clocks.default_applications.memory"},
    {"clocks.max.gr", "clocks.max.graphics"},
    {"clocks.max.mem", "clocks.max.memory"},
    {NULL, NULL},
};

int gpu_metric_lookup(const char *name)
{
	for (int i = 0; i < GM__COUNT; i++)
		if (!strcmp(gpu_metrics[i].key, name))
			return i;
	for (int i = 0; gpu_metric_aliases[i][0]; i++)
		if (!strcmp(gpu_metric_aliases[i][0], name))
			return gpu_metric_lookup(gpu_metric_aliases[i][1]);
	return -1;
}

bool gpu_metric_readable(gpu_metric_id id)
{
	return gpu_metrics[id].cadence != GMC_NONE;
}

void gpu_metric_column(gpu_metric_id id, char *out, size_t outlen)
{
	snprintf(out, outlen, "%s", gpu_metrics[id].key);
	for (char *p = out; *p; p++)
		if (*p == '.')
			*p = '_';
}

static const char *const reason_names[] = {
    "gpu_idle",
    "applications_clocks_setting",
    "sw_power_cap",
    "hw_slowdown",
    "sync_boost",
    "sw_thermal_slowdown",
    "hw_thermal_slowdown",
    "hw_power_brake_slowdown",
    "display_clock_setting",
};

const char *gpu_reason_name(uint64_t bit)
{
	for (unsigned i = 0; i < sizeof reason_names / sizeof *reason_names; i++)
		if (bit == (1ULL << i))
			return reason_names[i];
	return NULL;
}

void gpu_reasons_words(uint64_t mask, char *out, size_t outlen)
{
	size_t n = 0;
	out[0] = '\0';
	if (!mask) {
		snprintf(out, outlen, "none");
		return;
	}
	for (unsigned i = 0; i < 64; i++) {
		if (!(mask & (1ULL << i)))
			continue;
		const char *nm = gpu_reason_name(1ULL << i);
		char unknown[24];
		if (!nm) {
			snprintf(unknown, sizeof unknown, "bit%u", i);
			nm = unknown;
		}
		int w = snprintf(out + n, n < outlen ? outlen - n : 0, "%s%s", n ? "," : "", nm);
		if (w < 0 || (size_t)w >= outlen - n)
			return;
		n += (size_t)w;
	}
}

/* nvidia-smi -q's names of the clock event reasons, by bit (and the words people read). */
static const char *const reason_display[] = {
    N_("Idle"),
    N_("Applications Clocks Setting"),
    N_("SW Power Cap"),
    N_("HW Slowdown"),
    N_("Sync Boost"),
    N_("SW Thermal Slowdown"),
    N_("HW Thermal Slowdown"),
    N_("HW Power Brake Slowdown"),
    N_("Display Clock Setting"),
};

static void reasons_list(uint64_t mask, bool local, char *out, size_t outlen)
{
	size_t n = 0;
	out[0] = '\0';
	if (!mask) {
		snprintf(out, outlen, "%s", local ? _("none") : "none");
		return;
	}
	for (unsigned i = 0; i < 64; i++) {
		if (!(mask & (1ULL << i)))
			continue;
		char unknown[40];
		const char *nm = unknown;
		if (i < sizeof reason_display / sizeof *reason_display)
			nm = local ? _(reason_display[i]) : reason_display[i];
		else
			snprintf(unknown, sizeof unknown,
			         local ? _("Unknown (0x%llx)") : "Unknown (0x%llx)", 1ULL << i);
		/* TRANSLATORS: the separator between two clock event reasons. */
		const char *sep = n ? (local ? _(", ") : ", ") : "";
		int w = snprintf(out + n, n < outlen ? outlen - n : 0, "%s%s", sep, nm);
		if (w < 0 || (size_t)w >= outlen - n)
			return;
		n += (size_t)w;
	}
}

void gpu_reasons_display(uint64_t mask, char *out, size_t outlen)
{
	reasons_list(mask, false, out, outlen);
}

void gpu_reasons_human(uint64_t mask, char *out, size_t outlen)
{
	reasons_list(mask, true, out, outlen);
}

const char *gpu_arch_name(unsigned arch)
{
	static const char *const names[] = {"Unknown", "Unknown", "Kepler",   "Maxwell",
	                                    "Pascal",  "Volta",   "Turing",   "Ampere",
	                                    "Ada",     "Hopper",  "Blackwell"};
	if (arch < sizeof names / sizeof *names)
		return names[arch];
	return "Unknown";
}

static const char *compute_mode_name(int m)
{
	switch (m) {
	case 0:
		return "Default";
	case 1:
		return "Exclusive_Thread";
	case 2:
		return "Prohibited";
	case 3:
		return "Exclusive_Process";
	default:
		return "Unknown";
	}
}

void gpu_metric_format(gpu_metric_id id, double v, bool with_units, char *out, size_t outlen)
{
	const gpu_metric_desc *d = &gpu_metrics[id];
	const char *unit = with_units && d->unit[0] ? d->unit : NULL;
	switch (d->fmt) {
	case GMF_INT:
		if (unit)
			snprintf(out, outlen, "%.0f %s", v, unit);
		else
			snprintf(out, outlen, "%.0f", v);
		break;
	case GMF_F2:
		if (unit)
			snprintf(out, outlen, "%.2f %s", v, unit);
		else
			snprintf(out, outlen, "%.2f", v);
		break;
	case GMF_F6:
		snprintf(out, outlen, "%.6f", v);
		break;
	case GMF_ENABLED:
		snprintf(out, outlen, "%s", v != 0 ? "Enabled" : "Disabled");
		break;
	case GMF_ACTIVE:
		snprintf(out, outlen, "%s", v != 0 ? "Active" : "Not Active");
		break;
	case GMF_YESNO:
		snprintf(out, outlen, "%s", v != 0 ? "Yes" : "No");
		break;
	case GMF_PSTATE:
		snprintf(out, outlen, "P%.0f", v);
		break;
	case GMF_HEX:
		snprintf(out, outlen, "0x%016llX", (unsigned long long)v);
		break;
	case GMF_CMODE:
		snprintf(out, outlen, "%s", compute_mode_name((int)v));
		break;
	case GMF_CC:
		snprintf(out, outlen, "%.1f", v);
		break;
	case GMF_ARCH:
		snprintf(out, outlen, "%s", gpu_arch_name((unsigned)v));
		break;
	case GMF_STR:
		snprintf(out, outlen, "%.0f", v);
		break;
	case GMF_HEX2:
		snprintf(out, outlen, "0x%02llX", (unsigned long long)v);
		break;
	case GMF_HEX4:
		snprintf(out, outlen, "0x%04llX", (unsigned long long)v);
		break;
	case GMF_HEX8:
		snprintf(out, outlen, "0x%08llX", (unsigned long long)v);
		break;
	case GMF_HEXN:
		snprintf(out, outlen, "0x%llX", (unsigned long long)v);
		break;
	case GMF_DEPRECATED:
		snprintf(out, outlen, "%s", GPU_DEPRECATED_TEXT);
		break;
	}
}

double gpu_metric_dcgm_value(gpu_metric_id id, double v)
{
	switch (id) {
	case GM_GPM_GR_ACTIVE:
	case GM_GPM_SM_ACTIVE:
	case GM_GPM_SM_OCCUPANCY:
	case GM_GPM_TENSOR_ACTIVE:
	case GM_GPM_DRAM_ACTIVE:
		return v / 100.0;
	default:
		return v;
	}
}
