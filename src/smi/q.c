/*
 * q.c - `gpuwhy query -q [-d SECTION,...]`: nvidia-smi -q's sectioned text.
 *
 * The layout follows nvidia-smi 590's: a label column 55 wide (indent
 * included), then ": value"; values NVML does not give print N/A. PCIE is
 * a section of gpuwhy's own (nvidia-smi has no -d PCIE) that selects the
 * PCI block with its link, replay and error counters.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "smi/smi.h"
#include "gpu/cell.h"
#include "gpu/gpu_reasons.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/timeutil.h"

enum {
	QS_MEMORY = 1u << 0,
	QS_UTILIZATION = 1u << 1,
	QS_ECC = 1u << 2,
	QS_TEMPERATURE = 1u << 3,
	QS_POWER = 1u << 4,
	QS_CLOCK = 1u << 5,
	QS_COMPUTE = 1u << 6,
	QS_PIDS = 1u << 7,
	QS_PERFORMANCE = 1u << 8,
	QS_PAGE_RETIREMENT = 1u << 9,
	QS_ROW_REMAPPER = 1u << 10,
	QS_PCIE = 1u << 11,
	QS_ACCOUNTING = 1u << 12,
	QS_ENCODER_STATS = 1u << 13,
};

static const struct {
	const char *name;
	unsigned bit;
} section_names[] = {
    {"MEMORY", QS_MEMORY},
    {"UTILIZATION", QS_UTILIZATION},
    {"ECC", QS_ECC},
    {"TEMPERATURE", QS_TEMPERATURE},
    {"POWER", QS_POWER},
    {"CLOCK", QS_CLOCK},
    {"COMPUTE", QS_COMPUTE},
    {"PIDS", QS_PIDS},
    {"PERFORMANCE", QS_PERFORMANCE},
    {"PAGE_RETIREMENT", QS_PAGE_RETIREMENT},
    {"ROW_REMAPPER", QS_ROW_REMAPPER},
    {"PCIE", QS_PCIE},
    {"ACCOUNTING", QS_ACCOUNTING},
    {"ENCODER_STATS", QS_ENCODER_STATS},
};
#define NSECTIONS (sizeof section_names / sizeof *section_names)

int smi_q_parse_sections(const char *list, unsigned *mask)
{
	char *copy = strdup(list), *save = NULL;
	if (!copy)
		return gw_error(GW_EXIT_ENV, "-d", NULL, "out of memory");
	*mask = 0;
	int rc = 0;
	for (char *t = strtok_r(copy, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
		while (*t == ' ')
			t++;
		unsigned bit = 0;
		for (size_t k = 0; k < NSECTIONS; k++)
			if (!strcasecmp(section_names[k].name, t))
				bit = section_names[k].bit;
		if (!bit)
			rc = gw_error(
			    GW_EXIT_USAGE, "-d",
			    N_("MEMORY, UTILIZATION, ECC, TEMPERATURE, POWER, CLOCK, COMPUTE, "
			       "PIDS, PERFORMANCE, PAGE_RETIREMENT, ROW_REMAPPER, PCIE, "
			       "ACCOUNTING, ENCODER_STATS"),
			    "unknown section '%s'", t);
		*mask |= bit;
	}
	free(copy);
	if (!rc && !*mask)
		rc = gw_error(GW_EXIT_USAGE, "-d", N_("e.g. -d CLOCK,PCIE"), "no section given");
	return rc;
}

/* One GPU being printed: its values and where they come from. */
typedef struct {
	gpu_ctx *c;
	int i;
	const gpu_values *v;
} qgpu;

#define LABEL_W 55

/* A label indented by depth and padded to a column of width, then ": value". */
static void line_w(int width, int depth, const char *label, const char *value)
{
	char l[96];
	snprintf(l, sizeof l, "%*s%s", 4 * depth, "", label);
	printf("%-*s: %s\n", width, l, value);
}

static void line(int depth, const char *label, const char *value)
{
	line_w(LABEL_W, depth, label, value);
}

static void head(int depth, const char *label)
{
	printf("%*s%s\n", 4 * depth, "", label);
}

/* A metric as -q prints it: "N/A" without brackets, units after numbers. */
static void metric(const qgpu *g, int depth, const char *label, gpu_metric_id id)
{
	char buf[128], bare[128];
	if (!gpu_cell_text(g->c, g->i, g->v, id, true, buf, sizeof buf)) {
		/* -q writes N/A and nvidia-smi's error texts without the CSV's brackets. */
		size_t n = strlen(buf);
		snprintf(bare, sizeof bare, "%.*s", (int)(n > 2 ? n - 2 : 0), buf + 1);
		line(depth, label, bare);
		return;
	}
	line(depth, label, buf);
}

/* An integer metric with a unit of -q's own ("16x", "2560 bank(s)", "41 C"). */
static void metric_unit(const qgpu *g, int depth, const char *label, gpu_metric_id id,
                        const char *fmt)
{
	char buf[64];
	if (!g->v->ok[id]) {
		line(depth, label, "N/A");
		return;
	}
	snprintf(buf, sizeof buf, fmt, g->v->v[id]);
	line(depth, label, buf);
}

static void uval(int depth, const char *label, bool ok, unsigned long long v, const char *unit)
{
	char b[48];
	if (ok)
		snprintf(b, sizeof b, "%llu%s", v, unit);
	else
		snprintf(b, sizeof b, "N/A");
	line(depth, label, b);
}

/* MIG devices as nvidia-smi -q lists them under "MIG Mode". */
static void mig_devices(const qgpu *g)
{
	gpu_mig m[GPU_MIG_MAX];
	int n = gpu_mig_devices(g->c, g->i, m, GPU_MIG_MAX);
	for (int k = 0; k < n; k++) {
		const gpu_mig *d = &m[k];
		head(1, "MIG Device");
		uval(2, "Index", true, (unsigned long long)d->index, "");
		uval(2, "GPU Instance ID", d->ids_ok, d->gi, "");
		uval(2, "Compute Instance ID", d->ids_ok, d->ci, "");
		head(2, "Device Attributes");
		head(3, "Shared");
		uval(4, "Multiprocessor count", d->attr_ok, d->sm_count, "");
		uval(4, "Copy Engine count", d->attr_ok, d->ce_count, "");
		uval(4, "Encoder count", d->attr_ok, d->enc_count, "");
		uval(4, "Decoder count", d->attr_ok, d->dec_count, "");
		uval(4, "OFA count", d->attr_ok, d->ofa_count, "");
		uval(4, "JPG count", d->attr_ok, d->jpg_count, "");
		head(2, "ECC Errors");
		head(3, "Volatile");
		line(4, "SRAM Uncorrectable", "N/A");
		head(2, "Shared FB Memory Usage");
		uval(3, "Total", d->mem_ok, (unsigned long long)d->mem_total_mib, " MiB");
		uval(3, "Reserved", d->mem_ok, (unsigned long long)d->mem_reserved_mib, " MiB");
		uval(3, "Used", d->mem_ok, (unsigned long long)d->mem_used_mib, " MiB");
		uval(3, "Free", d->mem_ok, (unsigned long long)d->mem_free_mib, " MiB");
		head(2, "Shared BAR1 Memory");
		uval(3, "Total", d->bar1_ok, (unsigned long long)d->bar1_total_mib, " MiB");
		uval(3, "Used", d->bar1_ok, (unsigned long long)d->bar1_used_mib, " MiB");
		uval(3, "Free", d->bar1_ok, (unsigned long long)d->bar1_free_mib, " MiB");
	}
}

static void identity(const qgpu *g)
{
	const gpu_static *s = gpu_static_info(g->c, g->i);
	line(1, "Product Name", s->name[0] ? s->name : "N/A");
	line(1, "Product Brand", "N/A");
	metric(g, 1, "Product Architecture", GM_ARCH);
	metric(g, 1, "Display Mode", GM_DISPLAY_MODE);
	metric(g, 1, "Display Attached", GM_DISPLAY_ATTACHED);
	metric(g, 1, "Display Active", GM_DISPLAY_ACTIVE);
	metric(g, 1, "Persistence Mode", GM_PERSISTENCE);
	line(1, "Addressing Mode", "N/A");
	head(1, "MIG Mode");
	metric(g, 2, "Current", GM_MIG_CURRENT);
	metric(g, 2, "Pending", GM_MIG_PENDING);
	mig_devices(g);
	metric(g, 1, "Accounting Mode", GM_ACCOUNTING_MODE);
	metric(g, 1, "Accounting Mode Buffer Size", GM_ACCOUNTING_BUFFER);
	head(1, "Driver Model");
	line(2, "Current", "N/A");
	line(2, "Pending", "N/A");
	line(1, "Serial Number", s->serial[0] ? s->serial : "N/A");
	line(1, "GPU UUID", s->uuid[0] ? s->uuid : "N/A");
	metric(g, 1, "Minor Number", GM_MINOR);
	line(1, "VBIOS Version", s->vbios[0] ? s->vbios : "N/A");
}

/* A throughput in KB/s (KiB), as nvidia-smi prints it: gpuwhy's metric is MiB/s. */
static void metric_kbps(const qgpu *g, int depth, const char *label, gpu_metric_id id)
{
	char b[32];
	if (!g->v->ok[id]) {
		line(depth, label, "N/A");
		return;
	}
	snprintf(b, sizeof b, "%.0f KB/s", g->v->v[id] * 1024.0);
	line(depth, label, b);
}

static void pci(const qgpu *g)
{
	const gpu_static *s = gpu_static_info(g->c, g->i);
	head(1, "PCI");
	metric(g, 2, "Bus", GM_PCI_BUS);
	metric(g, 2, "Device", GM_PCI_DEVICE);
	metric(g, 2, "Domain", GM_PCI_DOMAIN);
	metric(g, 2, "Device Id", GM_PCI_DEVICE_ID);
	line(2, "Bus Id", s->pci_bus_id[0] ? s->pci_bus_id : "N/A");
	metric(g, 2, "Sub System Id", GM_PCI_SUB_DEVICE_ID);
	head(2, "GPU Link Info");
	head(3, "PCIe Generation");
	metric(g, 4, "Max", GM_PCIE_GEN_MAX);
	metric(g, 4, "Current", GM_PCIE_GEN_CUR);
	metric(g, 4, "Device Current", GM_PCIE_GEN_GPUCUR);
	metric(g, 4, "Device Max", GM_PCIE_GEN_GPUMAX);
	metric(g, 4, "Host Max", GM_PCIE_GEN_HOSTMAX);
	head(3, "Link Width");
	metric_unit(g, 4, "Max", GM_PCIE_WIDTH_MAX, "%.0fx");
	metric_unit(g, 4, "Current", GM_PCIE_WIDTH_CUR, "%.0fx");
	head(2, "Bridge Chip");
	line(3, "Type", "N/A");
	line(3, "Firmware", "N/A");
	metric(g, 2, "Replays Since Reset", GM_PCIE_REPLAY);
	line(2, "Replay Number Rollovers", "N/A");
	metric_kbps(g, 2, "Tx Throughput", GM_PCIE_TX);
	metric_kbps(g, 2, "Rx Throughput", GM_PCIE_RX);
	/* NVML field-value counters nvidia-smi -q does not show; the guides ask for them. */
	head(2, "Error Counters");
	metric(g, 3, "Correctable Errors", GM_PCIE_ERR_CORRECTABLE);
	metric(g, 3, "Receiver Errors", GM_PCIE_ERR_RECEIVER);
	metric(g, 3, "Bad TLP", GM_PCIE_ERR_BAD_TLP);
	metric(g, 3, "Bad DLLP", GM_PCIE_ERR_BAD_DLLP);
	metric(g, 3, "NAKs Received", GM_PCIE_ERR_NAKS_RECEIVED);
	metric(g, 3, "NAKs Sent", GM_PCIE_ERR_NAKS_SENT);
	metric(g, 3, "L0 To Recovery", GM_PCIE_ERR_L0_TO_RECOVERY);
}

static void performance(const qgpu *g)
{
	metric(g, 1, "Performance State", GM_PSTATE);
	head(1, "Clocks Event Reasons");
	metric(g, 2, "Idle", GM_CLK_R_IDLE);
	metric(g, 2, "Applications Clocks Setting", GM_CLK_R_APP);
	metric(g, 2, "SW Power Cap", GM_CLK_R_SW_POWER);
	metric(g, 2, "HW Slowdown", GM_CLK_R_HW_SLOW);
	metric(g, 3, "HW Thermal Slowdown", GM_CLK_R_HW_THERMAL);
	metric(g, 3, "HW Power Brake Slowdown", GM_CLK_R_HW_POWER_BRAKE);
	metric(g, 2, "Sync Boost", GM_CLK_R_SYNC_BOOST);
	metric(g, 2, "SW Thermal Slowdown", GM_CLK_R_SW_THERMAL);
	if (g->v->ok[GM_CLK_REASONS])
		line(2, "Display Clock Setting",
		     ((uint64_t)g->v->v[GM_CLK_REASONS] & gpu_reason_bit(GPU_REASON_DISPLAY_CLOCKS))
		         ? "Active"
		         : "Not Active");
	else
		line(2, "Display Clock Setting", "N/A");
	head(1, "Clocks Event Reasons Counters");
	metric(g, 2, "SW Power Capping", GM_CLK_RC_SW_POWER_CAP);
	metric(g, 2, "Sync Boost", GM_CLK_RC_SYNC_BOOST);
	metric(g, 2, "SW Thermal Slowdown", GM_CLK_RC_SW_THERMAL_SLOWDOWN);
	metric(g, 2, "HW Thermal Slowdown", GM_CLK_RC_HW_THERMAL_SLOWDOWN);
	metric(g, 2, "HW Power Braking", GM_CLK_RC_HW_POWER_BRAKE_SLOWDOWN);
}

static void memory(const qgpu *g)
{
	head(1, "FB Memory Usage");
	metric(g, 2, "Total", GM_MEM_TOTAL);
	metric(g, 2, "Reserved", GM_MEM_RESERVED);
	metric(g, 2, "Used", GM_MEM_USED);
	metric(g, 2, "Free", GM_MEM_FREE);
	head(1, "BAR1 Memory Usage");
	metric(g, 2, "Total", GM_BAR1_TOTAL);
	metric(g, 2, "Used", GM_BAR1_USED);
	if (g->v->ok[GM_BAR1_TOTAL] && g->v->ok[GM_BAR1_USED]) {
		char b[32];
		snprintf(b, sizeof b, "%.0f MiB", g->v->v[GM_BAR1_TOTAL] - g->v->v[GM_BAR1_USED]);
		line(2, "Free", b);
	} else {
		line(2, "Free", "N/A");
	}
	head(1, "Conf Compute Protected Memory Usage");
	metric(g, 2, "Total", GM_PROT_MEM_TOTAL);
	metric(g, 2, "Used", GM_PROT_MEM_USED);
	metric(g, 2, "Free", GM_PROT_MEM_FREE);
}

static void utilization(const qgpu *g)
{
	head(1, "Utilization");
	metric(g, 2, "GPU", GM_UTIL_GPU);
	metric(g, 2, "Memory", GM_UTIL_MEM);
	metric(g, 2, "Encoder", GM_UTIL_ENC);
	metric(g, 2, "Decoder", GM_UTIL_DEC);
	metric(g, 2, "JPEG", GM_UTIL_JPG);
	metric(g, 2, "OFA", GM_UTIL_OFA);
}

static void encoder_stats(const qgpu *g)
{
	head(1, "Encoder Stats");
	metric(g, 2, "Active Sessions", GM_ENC_SESSIONS);
	metric(g, 2, "Average FPS", GM_ENC_FPS);
	metric(g, 2, "Average Latency", GM_ENC_LATENCY);
}

/* Metrics under one heading, a label each. */
static void metric_list(const qgpu *g, int depth, const char *title, const char *const *labels,
                        const gpu_metric_id *ids, size_t n)
{
	head(depth, title);
	for (size_t k = 0; k < n; k++)
		metric(g, depth + 1, labels[k], ids[k]);
}

#define ECC_COUNTERS 5

/* The volatile and the aggregate error counters carry the same labels. */
static void ecc_counters(const qgpu *g, const char *title, const gpu_metric_id ids[ECC_COUNTERS])
{
	static const char *const labels[ECC_COUNTERS] = {
	    "SRAM Correctable", "SRAM Uncorrectable Parity", "SRAM Uncorrectable SEC-DED",
	    "DRAM Correctable", "DRAM Uncorrectable"};
	metric_list(g, 2, title, labels, ids, ECC_COUNTERS);
}

static void ecc(const qgpu *g)
{
	head(1, "ECC Mode");
	metric(g, 2, "Current", GM_ECC_MODE_CUR);
	metric(g, 2, "Pending", GM_ECC_MODE_PEND);
	head(1, "ECC Errors");
	static const gpu_metric_id vol[ECC_COUNTERS] = {
	    GM_ECC_CORR_VOL_SRAM, GM_SRAM_VOLATILE_SRAM_PARITY, GM_SRAM_VOLATILE_SRAM_SECDED,
	    GM_ECC_CORR_VOL_DRAM, GM_ECC_UNCORR_VOL_DRAM};
	static const gpu_metric_id agg[ECC_COUNTERS] = {
	    GM_ECC_CORR_AGG_SRAM, GM_SRAM_AGGREGATE_SRAM_PARITY, GM_SRAM_AGGREGATE_SRAM_SECDED,
	    GM_ECC_CORR_AGG_DRAM, GM_ECC_UNCORR_AGG_DRAM};
	ecc_counters(g, "Volatile", vol);
	ecc_counters(g, "Aggregate", agg);
	metric(g, 3, "SRAM Threshold Exceeded", GM_SRAM_AGGREGATE_SRAM_THRESHOLDEXCEEDED);
}

static void retired(const qgpu *g)
{
	head(1, "Retired Pages");
	metric(g, 2, "Single Bit ECC", GM_RETIRED_SBE);
	metric(g, 2, "Double Bit ECC", GM_RETIRED_DBE);
	metric(g, 2, "Pending Page Blacklist", GM_RETIRED_PENDING);
}

static void remapped(const qgpu *g)
{
	/* Without the counters (MIG mode, pre-Ampere) nvidia-smi prints one N/A line. */
	if (!g->v->ok[GM_REMAP_CORR] && !g->v->ok[GM_REMAP_UNCORR]) {
		line(1, "Remapped Rows", "N/A");
		return;
	}
	head(1, "Remapped Rows");
	metric(g, 2, "Correctable Error", GM_REMAP_CORR);
	metric(g, 2, "Uncorrectable Error", GM_REMAP_UNCORR);
	metric(g, 2, "Pending", GM_REMAP_PENDING);
	metric(g, 2, "Remapping Failure Occurred", GM_REMAP_FAILURE);
	head(2, "Bank Remap Availability Histogram");
	metric_unit(g, 3, "Max", GM_REMAP_HIST_MAX, "%.0f bank(s)");
	metric_unit(g, 3, "High", GM_REMAP_HIST_HIGH, "%.0f bank(s)");
	metric_unit(g, 3, "Partial", GM_REMAP_HIST_PARTIAL, "%.0f bank(s)");
	metric_unit(g, 3, "Low", GM_REMAP_HIST_LOW, "%.0f bank(s)");
	metric_unit(g, 3, "None", GM_REMAP_HIST_NONE, "%.0f bank(s)");
}

static void temperature(const qgpu *g)
{
	head(1, "Temperature");
	metric_unit(g, 2, "GPU Current Temp", GM_TEMP_GPU, "%.0f C");
	metric_unit(g, 2, "GPU T.Limit Temp", GM_TEMP_TLIMIT, "%.0f C");
	/* nvidia-smi 590 prints these as margins to T.Limit; NVML's thresholds are absolute. */
	metric_unit(g, 2, "GPU Shutdown Temp", GM_TEMP_SHUTDOWN, "%.0f C");
	metric_unit(g, 2, "GPU Slowdown Temp", GM_TEMP_SLOWDOWN, "%.0f C");
	line(2, "GPU Target Temperature", "N/A");
	metric_unit(g, 2, "Memory Current Temp", GM_TEMP_MEM, "%.0f C");
}

#define POWER_READINGS 7

/* The GPU's and the whole module's readings carry the same labels. */
static void power_readings(const qgpu *g, const char *title,
                           const gpu_metric_id ids[POWER_READINGS])
{
	static const char *const labels[POWER_READINGS] = {
	    "Average Power Draw",    "Instantaneous Power Draw", "Current Power Limit",
	    "Requested Power Limit", "Default Power Limit",      "Min Power Limit",
	    "Max Power Limit"};
	metric_list(g, 1, title, labels, ids, POWER_READINGS);
}

static void power(const qgpu *g)
{
	const gpu_metric_id gpu[POWER_READINGS] = {g->v->ok[GM_POWER_AVG] ? GM_POWER_AVG
	                                                                  : GM_POWER_DRAW,
	                                           GM_POWER_INSTANT,
	                                           GM_POWER_ENFORCED_LIMIT,
	                                           GM_POWER_LIMIT,
	                                           GM_POWER_DEFAULT_LIMIT,
	                                           GM_POWER_MIN_LIMIT,
	                                           GM_POWER_MAX_LIMIT};
	static const gpu_metric_id module[POWER_READINGS] = {
	    GM_MODULE_POWER_DRAW_AVERAGE,   GM_MODULE_POWER_DRAW_INSTANT,
	    GM_MODULE_ENFORCED_POWER_LIMIT, GM_MODULE_POWER_LIMIT,
	    GM_MODULE_POWER_DEFAULT_LIMIT,  GM_MODULE_POWER_MIN_LIMIT,
	    GM_MODULE_POWER_MAX_LIMIT};
	power_readings(g, "GPU Power Readings", gpu);
	power_readings(g, "Module Power Readings", module);
}

static void clocks(const qgpu *g)
{
	head(1, "Clocks");
	metric(g, 2, "Graphics", GM_CLK_GR);
	metric(g, 2, "SM", GM_CLK_SM);
	metric(g, 2, "Memory", GM_CLK_MEM);
	metric(g, 2, "Video", GM_CLK_VIDEO);
	head(1, "Applications Clocks");
	metric(g, 2, "Graphics", GM_CLK_APP_GR);
	metric(g, 2, "Memory", GM_CLK_APP_MEM);
	head(1, "Default Applications Clocks");
	metric(g, 2, "Graphics", GM_CLK_DEF_APP_GR);
	metric(g, 2, "Memory", GM_CLK_DEF_APP_MEM);
	head(1, "Max Clocks");
	metric(g, 2, "Graphics", GM_CLK_MAX_GR);
	metric(g, 2, "SM", GM_CLK_MAX_SM);
	metric(g, 2, "Memory", GM_CLK_MAX_MEM);
}

/* Processes use a narrower label column (42), as nvidia-smi's. */
static void pline(int depth, const char *label, const char *value)
{
	line_w(42, depth, label, value);
}

static void pids(const qgpu *g)
{
	gpu_proc procs[256];
	int n = gpu_processes(g->c, g->i, procs, 256);
	if (n <= 0) {
		line(1, "Processes", n < 0 ? "N/A" : "None");
		return;
	}
	head(1, "Processes");
	for (int k = 0; k < n; k++) {
		char b[256];
		pline(2, "GPU instance ID", "N/A");
		pline(2, "Compute instance ID", "N/A");
		snprintf(b, sizeof b, "%u", procs[k].pid);
		pline(2, "Process ID", b);
		unsigned t = procs[k].type;
		pline(3, "Type",
		      t == (GPU_PROC_COMPUTE | GPU_PROC_GRAPHICS) ? "C+G"
		      : (t & GPU_PROC_GRAPHICS)                   ? "G"
		                                                  : "C");
		pline(3, "Name", gpu_process_name(g->c, procs[k].pid, b, sizeof b) ? b : "N/A");
		if (procs[k].mem_ok)
			snprintf(b, sizeof b, "%llu MiB",
			         (unsigned long long)(procs[k].mem_bytes / 1048576ULL));
		else
			snprintf(b, sizeof b, "N/A");
		pline(3, "Used GPU Memory", b);
	}
}

static void one_gpu(const qgpu *g, unsigned mask)
{
	bool all = mask == 0;
	const gpu_static *s = gpu_static_info(g->c, g->i);
	printf("GPU %s\n", s->pci_bus_id[0] ? s->pci_bus_id : "N/A");
	if (all)
		identity(g);
	if (all || (mask & QS_PCIE))
		pci(g);
	if (all)
		metric(g, 1, "Fan Speed", GM_FAN);
	if (all || (mask & QS_PERFORMANCE))
		performance(g);
	if (all || (mask & QS_MEMORY))
		memory(g);
	if (all || (mask & QS_COMPUTE))
		metric(g, 1, "Compute Mode", GM_COMPUTE_MODE);
	if (all || (mask & QS_UTILIZATION))
		utilization(g);
	if (all || (mask & QS_ENCODER_STATS))
		encoder_stats(g);
	if (all || (mask & QS_ECC))
		ecc(g);
	if (all || (mask & QS_PAGE_RETIREMENT))
		retired(g);
	if (all || (mask & QS_ROW_REMAPPER))
		remapped(g);
	if (all || (mask & QS_TEMPERATURE))
		temperature(g);
	if (all || (mask & QS_POWER))
		power(g);
	if (all || (mask & QS_CLOCK))
		clocks(g);
	if (all || (mask & QS_PIDS))
		pids(g);
	if (mask & QS_ACCOUNTING) {
		metric(g, 1, "Accounting Mode", GM_ACCOUNTING_MODE);
		metric(g, 1, "Accounting Mode Buffer Size", GM_ACCOUNTING_BUFFER);
	}
	putchar('\n');
}

void smi_q_print(gpu_ctx *c, const smi_sel *s, unsigned mask)
{
	char ts[64];
	time_t now = (time_t)gw_wall_s();
	struct tm tm;
	localtime_r(&now, &tm);
	strftime(ts, sizeof ts, "%a %b %e %H:%M:%S %Y", &tm);
	printf("\n==============NVSMI LOG==============\n\n");
	line(0, "Timestamp", ts);
	line(0, "Driver Version", gpu_driver_version(c)[0] ? gpu_driver_version(c) : "N/A");
	line(0, "CUDA Version", gpu_cuda_driver_version(c)[0] ? gpu_cuda_driver_version(c) : "N/A");
	putchar('\n');
	char n[16];
	snprintf(n, sizeof n, "%d", gpu_count_all(c));
	line(0, "Attached GPUs", n);
	gpu_values v;
	for (int k = 0; k < s->n; k++) {
		gpu_sample(c, s->idx[k], &v);
		qgpu g = {c, s->idx[k], &v};
		one_gpu(&g, mask);
	}
}
