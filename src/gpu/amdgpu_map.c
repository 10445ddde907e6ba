/* amdgpu_map.c - AMD readings in the metric table's terms (see amdgpu_map.h). */
#include "gpu/amdgpu_map.h"

#include "gpu/gpu_reasons.h"

#include <stdio.h>
#include <string.h>

void amdgpu_static(const amdgpu_card *c, int index, gpu_static *st)
{
	memset(st, 0, sizeof *st);
	st->index = index;
	if (c->product_name[0])
		snprintf(st->name, sizeof st->name, "%s", c->product_name);
	else if (c->pci_name[0])
		snprintf(st->name, sizeof st->name, "%.95s", c->pci_name);
	else if (c->ids_ok)
		snprintf(st->name, sizeof st->name, "AMD GPU %04x:%04x", c->vendor, c->device);
	snprintf(st->serial, sizeof st->serial, "%.31s", c->unique_id);
	unsigned dom, bus, dev, fn;
	if (c->bdf[0] && sscanf(c->bdf, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) == 4) {
		snprintf(st->pci_bus_id, sizeof st->pci_bus_id, "%08X:%02X:%02X.%X", dom, bus, dev,
		         fn);
		st->pci_domain = dom;
		st->pci_bus = bus;
		st->pci_device = dev;
		st->pci_ok = c->ids_ok;
	}
	st->pci_device_id = c->device << 16 | c->vendor;
	st->pci_subsystem_id = c->subsys_device << 16 | c->subsys_vendor;
	st->numa_node = -1;
}

static void copy(const amdgpu_values *a, amdgpu_field f, gpu_values *o, gpu_metric_id id)
{
	if (!a->ok[f])
		return;
	o->v[id] = a->v[f];
	o->ok[id] = 1;
}

static void set(gpu_values *o, gpu_metric_id id, double v)
{
	o->v[id] = v;
	o->ok[id] = 1;
}

/* VRAM in whole MiB: total rounded down, used up, so free is never overstated. */
static void map_memory(const amdgpu_values *a, gpu_values *o)
{
	const double mib = 1048576.0;
	if (a->ok[AMD_VRAM_TOTAL])
		set(o, GM_MEM_TOTAL, (double)(unsigned long long)(a->v[AMD_VRAM_TOTAL] / mib));
	if (a->ok[AMD_VRAM_USED]) {
		unsigned long long b = (unsigned long long)a->v[AMD_VRAM_USED];
		set(o, GM_MEM_USED, (double)((b + 1048575ull) / 1048576ull));
	}
	if (o->ok[GM_MEM_TOTAL] && o->ok[GM_MEM_USED])
		set(o, GM_MEM_FREE,
		    o->v[GM_MEM_TOTAL] > o->v[GM_MEM_USED] ? o->v[GM_MEM_TOTAL] - o->v[GM_MEM_USED]
		                                           : 0);
}

/* The reasons gpu_metrics can report, as NVML's mask and one 0/1 metric each. */
static void map_reasons(const amdgpu_values *a, gpu_values *o)
{
	static const gpu_reason can[] = {GPU_REASON_SW_POWER_CAP, GPU_REASON_SW_THERMAL,
	                                 GPU_REASON_HW_THERMAL, GPU_REASON_HW_SLOWDOWN};
	if (!a->ok[AMD_THROTTLE_REASONS])
		return;
	uint64_t mask = gpu_reasons_from_value(a->v[AMD_THROTTLE_REASONS]);
	/* a reason the reading does not speak for (an unsupported residency counter) stays n/a */
	uint64_t known =
	    a->ok[AMD_THROTTLE_KNOWN] ? gpu_reasons_from_value(a->v[AMD_THROTTLE_KNOWN]) : ~0ull;
	set(o, GM_CLK_REASONS, (double)mask);
	for (size_t i = 0; i < sizeof can / sizeof *can; i++)
		if (known & gpu_reason_bit(can[i]))
			set(o, gpu_reason_metric(can[i]), (mask & gpu_reason_bit(can[i])) ? 1 : 0);
}

void amdgpu_to_gpu_values(const gpu_static *st, const amdgpu_values *a, gpu_values *o)
{
	memset(o->ok, 0, sizeof o->ok);
	memset(o->why, 0, sizeof o->why);
	o->lost = false;
	set(o, GM_INDEX, st->index);
	if (st->pci_ok) {
		set(o, GM_PCI_DOMAIN, st->pci_domain);
		set(o, GM_PCI_BUS, st->pci_bus);
		set(o, GM_PCI_DEVICE, st->pci_device);
		set(o, GM_PCI_DEVICE_ID, st->pci_device_id);
		set(o, GM_PCI_SUB_DEVICE_ID, st->pci_subsystem_id);
	}
	copy(a, AMD_GPU_BUSY, o, GM_UTIL_GPU);
	copy(a, AMD_MEM_BUSY, o, GM_UTIL_MEM);
	map_memory(a, o);
	copy(a, AMD_POWER_W, o, GM_POWER_DRAW);
	copy(a, AMD_POWER_CAP_W, o, GM_POWER_LIMIT);
	copy(a, AMD_POWER_CAP_W, o,
	     GM_POWER_ENFORCED_LIMIT); /* the cap is what the driver enforces */
	copy(a, a->ok[AMD_TEMP_EDGE] ? AMD_TEMP_EDGE : AMD_TEMP_JUNCTION, o, GM_TEMP_GPU);
	copy(a, AMD_TEMP_MEM, o, GM_TEMP_MEM);
	copy(a, AMD_FAN_PCT, o, GM_FAN);
	copy(a, AMD_SCLK_MHZ, o, GM_CLK_GR);
	copy(a, AMD_SCLK_MHZ, o, GM_CLK_SM);
	copy(a, AMD_MCLK_MHZ, o, GM_CLK_MEM);
	copy(a, AMD_SCLK_MAX_MHZ, o, GM_CLK_MAX_GR);
	copy(a, AMD_SCLK_MAX_MHZ, o, GM_CLK_MAX_SM);
	copy(a, AMD_MCLK_MAX_MHZ, o, GM_CLK_MAX_MEM);
	copy(a, AMD_PCIE_GEN, o, GM_PCIE_GEN_CUR);
	copy(a, AMD_PCIE_GEN_MAX, o, GM_PCIE_GEN_MAX);
	copy(a, AMD_PCIE_WIDTH, o, GM_PCIE_WIDTH_CUR);
	copy(a, AMD_PCIE_WIDTH_MAX, o, GM_PCIE_WIDTH_MAX);
	map_reasons(a, o);
	copy(a, AMD_RAS_CE, o, GM_ECC_CORR_VOL);
	copy(a, AMD_RAS_UE, o, GM_ECC_UNCORR_VOL);
}
