/*
 * sim_scenario_gpu.c - one GPU object of a scenario: identity, modes, PCI,
 * memory, power, clocks, thermal limits, reliability, NVLink and MIG.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nvml_abi.h"
#include "sim_parse_int.h"

/* ---- pieces of a GPU ---- */

static bool parse_bus_id(const char *s, sim_pci *p)
{
	unsigned dom, bus, dev, fn;
	int used = 0;
	const char *colon = strchr(s, ':');
	if (!colon)
		return false;
	size_t dlen = (size_t)(colon - s);
	if ((dlen != 4 && dlen != 8) || strspn(s, "0123456789abcdefABCDEF") != dlen)
		return false;
	if (sscanf(s, "%x:%2x:%2x.%1x%n", &dom, &bus, &dev, &fn, &used) != 4 || s[used] ||
	    strlen(colon) != 8 || dev > 0x1F || fn > 7)
		return false;
	p->domain = dom;
	p->bus = bus;
	p->device = dev;
	p->function = fn;
	snprintf(p->bus_id, sizeof p->bus_id, "%08X:%02X:%02X.%X", dom, bus, dev, fn);
	snprintf(p->bus_id_legacy, sizeof p->bus_id_legacy, "%04X:%02X:%02X.%X", dom & 0xFFFF, bus,
	         dev, fn);
	return true;
}

static bool get_bus_id(sim_sc_ctx *c, json_t *o, const char *path, const char *key, bool req,
                       sim_pci *out)
{
	char s[40] = "";
	if (!sim_sc_get_str(c, o, path, key, req, 32, s, sizeof s))
		return false;
	if (!*s)
		return true;
	if (!parse_bus_id(s, out))
		return sim_sc_fail(
		    c, path, key,
		    "\"%s\" is not a PCI bus id like \"00000000:1B:00.0\" or \"0000:1b:00.0\"", s);
	return true;
}

static bool parse_cpulist(const char *s, unsigned long *mask)
{
	memset(mask, 0, SIM_AFFINITY_WORDS * sizeof *mask);
	const unsigned maxcpu = SIM_AFFINITY_WORDS * 64;
	const char *p = s;
	if (!*p)
		return false;
	while (*p) {
		char *end;
		if (*p < '0' || *p > '9')
			return false;
		unsigned long a = strtoul(p, &end, 10), b = a;
		p = end;
		if (*p == '-') {
			if (p[1] < '0' || p[1] > '9')
				return false;
			b = strtoul(p + 1, &end, 10);
			p = end;
		}
		if (a > b || b >= maxcpu)
			return false;
		for (unsigned long k = a; k <= b; k++)
			mask[k / 64] |= 1UL << (k % 64);
		if (*p == ',')
			p++;
		else if (*p)
			return false;
	}
	return true;
}

static bool parse_pages(sim_sc_ctx *c, json_t *o, const char *path, const char *key,
                        unsigned long long *pages, int *n)
{
	json_t *arr;
	if (!sim_sc_get_arr(c, o, path, key, false, SIM_MAX_PAGES, &arr))
		return false;
	*n = 0;
	if (!arr)
		return true;
	size_t i;
	json_t *v;
	json_array_foreach(arr, i, v)
	{
		char ep[330];
		snprintf(ep, sizeof ep, "%.200s.%s[%zu]", path, key, i);
		unsigned long long a;
		if (json_is_integer(v) && json_integer_value(v) >= 0) {
			a = (unsigned long long)json_integer_value(v);
		} else if (json_is_string(v)) {
			const char *s = json_string_value(v);
			const char *h = (!strncmp(s, "0x", 2) || !strncmp(s, "0X", 2)) ? s + 2 : s;
			size_t len = strlen(h);
			if (!len || len > 16 || strspn(h, "0123456789abcdefABCDEF") != len)
				return sim_sc_fail(c, ep, NULL, "\"%s\" is not a hex page address",
				                   s);
			a = strtoull(h, NULL, 16);
		} else {
			return sim_sc_fail(c, ep, NULL, "expected a page address, got %s",
			                   sim_sc_tname(v));
		}
		pages[(*n)++] = a;
	}
	return true;
}

static bool parse_pci(sim_sc_ctx *c, json_t *o, const char *path, sim_gpu *g)
{
	static const char *const keys[] = {
	    "bus_id",    "device_id",   "subsystem_id",   "gen",      "width",       "max_gen",
	    "max_width", "gpu_max_gen", "replay_counter", "switches", "host_bridge", NULL};
	static const long long widths[] = {1, 2, 4, 8, 12, 16, 32};
	if (!sim_sc_check_keys(c, o, path, keys) ||
	    !get_bus_id(c, o, path, "bus_id", true, &g->pci) ||
	    !sim_sc_get_hex32(c, o, path, "device_id", true, &g->pci.device_id) ||
	    !sim_sc_get_hex32(c, o, path, "subsystem_id", false, &g->pci.subsystem_id) ||
	    !sim_sc_get_uns(c, o, path, "max_gen", true, 1, 6, &g->pcie_max_gen) ||
	    !sim_sc_get_uns(c, o, path, "max_width", true, 1, 32, &g->pcie_max_width))
		return false;
	g->pcie_gen = g->pcie_max_gen;
	g->pcie_width = g->pcie_max_width;
	g->pcie_gpu_max_gen = g->pcie_max_gen;
	if (!sim_sc_get_uns(c, o, path, "gen", false, 1, g->pcie_max_gen, &g->pcie_gen) ||
	    !sim_sc_get_uns(c, o, path, "width", false, 1, g->pcie_max_width, &g->pcie_width) ||
	    !sim_sc_get_uns(c, o, path, "gpu_max_gen", false, g->pcie_max_gen, 6,
	                    &g->pcie_gpu_max_gen) ||
	    !sim_sc_get_ull(c, o, path, "replay_counter", false, 0, 0xFFFFFFFFLL,
	                    &g->replay_initial))
		return false;
	const char *wkeys[] = {"width", "max_width"};
	unsigned wv[] = {g->pcie_width, g->pcie_max_width};
	for (int k = 0; k < 2; k++) {
		bool ok = false;
		for (size_t q = 0; q < sizeof widths / sizeof *widths; q++)
			ok |= widths[q] == wv[k];
		if (!ok)
			return sim_sc_fail(c, path, wkeys[k],
			                   "%u is not a PCIe link width (1, 2, 4, 8, 12, 16, 32)",
			                   wv[k]);
	}
	long long hb = g->numa_node >= 0 ? g->numa_node : 0;
	if (!sim_sc_get_int(c, o, path, "host_bridge", false, 0, 1024, &hb))
		return false;
	g->host_bridge = (int)hb;
	json_t *sw;
	if (!sim_sc_get_arr(c, o, path, "switches", false, SIM_MAX_SWITCHES, &sw))
		return false;
	g->n_switches = 0;
	size_t i;
	json_t *v;
	json_array_foreach(sw, i, v)
	{
		char ep[330];
		snprintf(ep, sizeof ep, "%.200s.switches[%zu]", path, i);
		if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) > 31)
			return sim_sc_fail(c, ep, NULL,
			                   "expected a switch name (1 to 31 characters)");
		snprintf(g->switches[g->n_switches++], sizeof g->switches[0], "%s",
		         json_string_value(v));
	}
	return true;
}

/*
 * A memory amount in MiB that may have a fraction: the driver's reserved and
 * used memory are not whole MiB (nvidia-smi's free is then one more than its
 * total - reserved - used). *bytes is exact, *mib the MiB rounded up.
 */
static bool get_mib(sim_sc_ctx *c, json_t *o, const char *path, const char *key, double hi,
                    unsigned long long *mib, unsigned long long *bytes)
{
	double v = (double)*mib;
	if (!sim_sc_get_num(c, o, path, key, false, 0, hi, &v))
		return false;
	*bytes = (unsigned long long)llround(v * 1048576.0);
	*mib = (unsigned long long)ceil(v);
	return true;
}

static bool parse_memory(sim_sc_ctx *c, json_t *o, const char *path, sim_gpu *g)
{
	static const char *const keys[] = {"total_mib",     "reserved_mib", "used_mib", "bar1_mib",
	                                   "bar1_used_mib", "bus_width",    NULL};
	g->bar1_total = 256;
	g->bar1_used = 1;
	if (!sim_sc_check_keys(c, o, path, keys) ||
	    !sim_sc_get_ull(c, o, path, "total_mib", true, 1, 1LL << 30, &g->mem_total) ||
	    !get_mib(c, o, path, "reserved_mib", (double)g->mem_total - 1, &g->mem_reserved,
	             &g->mem_reserved_b) ||
	    !get_mib(c, o, path, "used_mib",
	             (double)g->mem_total - (double)g->mem_reserved_b / 1048576.0, &g->mem_used,
	             &g->mem_used_b) ||
	    !sim_sc_get_ull(c, o, path, "bar1_mib", false, 1, 1LL << 30, &g->bar1_total) ||
	    !sim_sc_get_ull(c, o, path, "bar1_used_mib", false, 0, (long long)g->bar1_total,
	                    &g->bar1_used))
		return false;
	unsigned long long w = 0;
	if (!sim_sc_get_ull(c, o, path, "bus_width", false, 1, 8192, &w))
		return false;
	g->mem_bus_width = (unsigned)w;
	return true;
}

static bool parse_power(sim_sc_ctx *c, json_t *o, const char *path, sim_gpu *g)
{
	static const char *const keys[] = {
	    "limit_w", "default_limit_w", "min_limit_w", "max_limit_w", "idle_w", "busy_w", NULL};
	if (!sim_sc_check_keys(c, o, path, keys) ||
	    !sim_sc_get_num(c, o, path, "min_limit_w", true, 1, 10000, &g->power_min) ||
	    !sim_sc_get_num(c, o, path, "max_limit_w", true, g->power_min, 10000, &g->power_max) ||
	    !sim_sc_get_num(c, o, path, "limit_w", true, g->power_min, g->power_max,
	                    &g->power_limit))
		return false;
	g->power_default = g->power_limit;
	if (!sim_sc_get_num(c, o, path, "default_limit_w", false, g->power_min, g->power_max,
	                    &g->power_default) ||
	    !sim_sc_get_num(c, o, path, "idle_w", true, 1, g->power_limit, &g->power_idle) ||
	    !sim_sc_get_num(c, o, path, "busy_w", true, g->power_idle, g->power_max * 1.5,
	                    &g->power_busy))
		return false;
	return true;
}

static bool parse_clocks(sim_sc_ctx *c, json_t *o, const char *path, sim_gpu *g)
{
	static const char *const keys[] = {"max_sm_mhz",    "max_mem_mhz",  "max_graphics_mhz",
	                                   "max_video_mhz", "idle_sm_mhz",  "idle_mem_mhz",
	                                   "busy_sm_mhz",   "applications", NULL};
	if (!sim_sc_check_keys(c, o, path, keys) ||
	    !sim_sc_get_uns(c, o, path, "max_sm_mhz", true, 1, 20000, &g->clk_max_sm) ||
	    !sim_sc_get_uns(c, o, path, "max_mem_mhz", true, 1, 50000, &g->clk_max_mem) ||
	    !sim_sc_get_uns(c, o, path, "idle_sm_mhz", true, 1, g->clk_max_sm, &g->clk_idle_sm))
		return false;
	g->clk_max_gr = g->clk_max_sm;
	g->clk_idle_mem = g->clk_max_mem;
	g->clk_busy_sm = g->clk_max_sm;
	json_t *app;
	if (!sim_sc_get_uns(c, o, path, "max_graphics_mhz", false, 1, 20000, &g->clk_max_gr) ||
	    !sim_sc_get_uns(c, o, path, "max_video_mhz", false, 1, 20000, &g->clk_max_video) ||
	    !sim_sc_get_uns(c, o, path, "idle_mem_mhz", false, 1, g->clk_max_mem,
	                    &g->clk_idle_mem) ||
	    !sim_sc_get_obj(c, o, path, "applications", false, &app))
		return false;
	if (app) {
		static const char *const akeys[] = {"graphics_mhz", "mem_mhz", NULL};
		char sub[300];
		snprintf(sub, sizeof sub, "%.200s.applications", path);
		if (!sim_sc_check_keys(c, app, sub, akeys) ||
		    !sim_sc_get_uns(c, app, sub, "graphics_mhz", true, 1, g->clk_max_gr,
		                    &g->app_gr) ||
		    !sim_sc_get_uns(c, app, sub, "mem_mhz", true, 1, g->clk_max_mem, &g->app_mem))
			return false;
		g->has_app_clocks = true;
		g->clk_busy_sm = g->app_gr < g->clk_max_sm ? g->app_gr : g->clk_max_sm;
	}
	return sim_sc_get_uns(c, o, path, "busy_sm_mhz", false, g->clk_idle_sm, g->clk_max_sm,
	                      &g->clk_busy_sm);
}

static bool parse_thermal(sim_sc_ctx *c, json_t *o, const char *path, sim_gpu *g)
{
	static const char *const keys[] = {"idle_c",    "busy_c",    "slowdown_c",     "shutdown_c",
	                                   "gpu_max_c", "mem_max_c", "memory_delta_c", NULL};
	long long gmax = -1, mmax = -1;
	if (!sim_sc_check_keys(c, o, path, keys) ||
	    !sim_sc_get_uns(c, o, path, "shutdown_c", true, 30, 150, &g->t_shutdown) ||
	    !sim_sc_get_uns(c, o, path, "slowdown_c", true, 20, g->t_shutdown - 1,
	                    &g->t_slowdown) ||
	    !sim_sc_get_num(c, o, path, "idle_c", true, 0, g->t_shutdown - 1, &g->temp_idle) ||
	    !sim_sc_get_num(c, o, path, "busy_c", true, g->temp_idle, g->t_shutdown - 1,
	                    &g->temp_busy) ||
	    !sim_sc_get_int(c, o, path, "gpu_max_c", false, 20, g->t_shutdown, &gmax) ||
	    !sim_sc_get_int(c, o, path, "mem_max_c", false, 20, 150, &mmax))
		return false;
	g->t_gpu_max = (int)gmax;
	g->t_mem_max = (int)mmax;
	g->has_mem_temp = sim_sc_member(o, "memory_delta_c") != NULL;
	return sim_sc_get_num(c, o, path, "memory_delta_c", false, -50, 50, &g->mem_temp_delta);
}

static bool parse_reliability(sim_sc_ctx *c, json_t *gj, const char *path, sim_gpu *g)
{
	char sub[300];
	json_t *o;
	if (!sim_sc_get_obj(c, gj, path, "ecc", false, &o))
		return false;
	if (o) {
		static const char *const keys[] = {"enabled",       "sbe_volatile",  "dbe_volatile",
		                                   "sbe_aggregate", "dbe_aggregate", NULL};
		snprintf(sub, sizeof sub, "%.200s.ecc", path);
		g->has_ecc = g->ecc_enabled = true;
		if (!sim_sc_check_keys(c, o, sub, keys) ||
		    !sim_sc_get_bool(c, o, sub, "enabled", false, &g->ecc_enabled) ||
		    !sim_sc_get_ull(c, o, sub, "sbe_volatile", false, 0, 1LL << 40,
		                    &g->ecc_sbe_vol) ||
		    !sim_sc_get_ull(c, o, sub, "dbe_volatile", false, 0, 1LL << 40,
		                    &g->ecc_dbe_vol) ||
		    !sim_sc_get_ull(c, o, sub, "sbe_aggregate", false, 0, 1LL << 40,
		                    &g->ecc_sbe_agg) ||
		    !sim_sc_get_ull(c, o, sub, "dbe_aggregate", false, 0, 1LL << 40,
		                    &g->ecc_dbe_agg))
			return false;
		if (g->ecc_sbe_agg < g->ecc_sbe_vol || g->ecc_dbe_agg < g->ecc_dbe_vol)
			return sim_sc_fail(
			    c, sub, NULL,
			    "aggregate counts include the volatile ones, so cannot be lower");
	}
	if (!sim_sc_get_obj(c, gj, path, "retired_pages", false, &o))
		return false;
	if (o) {
		static const char *const keys[] = {"sbe", "dbe", "pending", NULL};
		snprintf(sub, sizeof sub, "%.200s.retired_pages", path);
		if (!g->has_ecc)
			return sim_sc_fail(c, path, "retired_pages",
			                   "retired pages need an \"ecc\" object");
		g->has_retired = true;
		if (!sim_sc_check_keys(c, o, sub, keys) ||
		    !parse_pages(c, o, sub, "sbe", g->retired_sbe, &g->n_retired_sbe) ||
		    !parse_pages(c, o, sub, "dbe", g->retired_dbe, &g->n_retired_dbe) ||
		    !sim_sc_get_bool(c, o, sub, "pending", false, &g->retired_pending))
			return false;
	}
	if (!sim_sc_get_obj(c, gj, path, "remapped_rows", false, &o))
		return false;
	if (o) {
		static const char *const keys[] = {"correctable", "uncorrectable", "pending",
		                                   "failure", NULL};
		snprintf(sub, sizeof sub, "%.200s.remapped_rows", path);
		if (!g->has_ecc)
			return sim_sc_fail(c, path, "remapped_rows",
			                   "remapped rows need an \"ecc\" object");
		g->has_remap = true;
		if (!sim_sc_check_keys(c, o, sub, keys) ||
		    !sim_sc_get_uns(c, o, sub, "correctable", false, 0, 100000, &g->remap_corr) ||
		    !sim_sc_get_uns(c, o, sub, "uncorrectable", false, 0, 100000, &g->remap_unc) ||
		    !sim_sc_get_bool(c, o, sub, "pending", false, &g->remap_pending) ||
		    !sim_sc_get_bool(c, o, sub, "failure", false, &g->remap_failure))
			return false;
	}
	return true;
}

static bool parse_nvlink(sim_sc_ctx *c, json_t *gj, const char *path, sim_gpu *g)
{
	json_t *arr;
	if (!sim_sc_get_arr(c, gj, path, "nvlink", false, SIM_MAX_LINKS, &arr))
		return false;
	if (!arr)
		return true;
	static const char *const keys[] = {"links", "gpu", "bus_id", "device_id", "state", NULL};
	static const char *const states[] = {"up", "down", NULL};
	g->has_nvlink = true;
	size_t i;
	json_t *o;
	json_array_foreach(arr, i, o)
	{
		char sub[300];
		snprintf(sub, sizeof sub, "%.200s.nvlink[%zu]", path, i);
		if (!json_is_object(o))
			return sim_sc_fail(c, sub, NULL, "expected an object, got %s",
			                   sim_sc_tname(o));
		long long links = 0, gpu = -1;
		int state = 0;
		sim_link l;
		memset(&l, 0, sizeof l);
		l.remote.device_id = 0x22A310DE; /* NVSwitch (third generation) */
		if (!sim_sc_check_keys(c, o, sub, keys) ||
		    !sim_sc_get_int(c, o, sub, "links", true, 1, SIM_MAX_LINKS, &links) ||
		    !sim_sc_get_int(c, o, sub, "gpu", false, 0, SIM_MAX_GPUS - 1, &gpu) ||
		    !get_bus_id(c, o, sub, "bus_id", false, &l.remote) ||
		    !sim_sc_get_hex32(c, o, sub, "device_id", false, &l.remote.device_id) ||
		    !sim_sc_get_enum(c, o, sub, "state", false, states, NULL, &state))
			return false;
		bool has_bus = sim_sc_member(o, "bus_id") != NULL;
		if ((gpu >= 0) == has_bus)
			return sim_sc_fail(
			    c, sub, NULL,
			    "give the remote end as \"gpu\" (an index) or \"bus_id\" (an "
			    "NVSwitch)");
		if (gpu >= 0 && sim_sc_member(o, "device_id"))
			return sim_sc_fail(c, sub, "device_id",
			                   "device_id is taken from the remote GPU");
		if (gpu == g->index)
			return sim_sc_fail(c, sub, "gpu", "a GPU cannot link to itself");
		l.remote_gpu = (int)gpu;
		l.remote_type = gpu >= 0 ? SIM_LINK_REMOTE_GPU : SIM_LINK_REMOTE_SWITCH;
		l.up = state == 0;
		if (g->n_links + links > SIM_MAX_LINKS)
			return sim_sc_fail(c, sub, "links", "more than %d NVLinks on one GPU",
			                   SIM_MAX_LINKS);
		for (long long k = 0; k < links; k++)
			g->links[g->n_links++] = l;
	}
	return true;
}

const char *const sim_sc_gpu_keys[] = {"name",
                                       "vendor",
                                       "architecture",
                                       "uuid",
                                       "serial",
                                       "vbios",
                                       "pci",
                                       "minor_number",
                                       "memory",
                                       "power",
                                       "clocks",
                                       "thermal",
                                       "fan",
                                       "ecc",
                                       "retired_pages",
                                       "remapped_rows",
                                       "compute_capability",
                                       "persistence_mode",
                                       "compute_mode",
                                       "mig",
                                       "numa_node",
                                       "cpu_affinity",
                                       "nvlink",
                                       "nvenc",
                                       "nvdec",
                                       "gpm",
                                       "pstate",
                                       "util_period_ms",
                                       "amdgpu",
                                       "noise",
                                       "idle",
                                       "load",
                                       "episodes",
                                       "repeat_s",
                                       "lost_after_s",
                                       "reset_at_s",
                                       "back_after_s",
                                       NULL};

static bool parse_identity(sim_sc_ctx *c, json_t *gj, const char *path, sim_gpu *g)
{
	/* AMD's architectures come after NVIDIA's; NVML knows none of them (arch 0). */
	static const char *const archs[] = {"kepler", "maxwell", "pascal", "volta",     "turing",
	                                    "ampere", "ada",     "hopper", "blackwell", "cdna2",
	                                    "cdna3",  "rdna2",   "rdna3",  NULL};
	static const int arch_ids[] = {NVML_DEVICE_ARCH_KEPLER,
	                               NVML_DEVICE_ARCH_MAXWELL,
	                               NVML_DEVICE_ARCH_PASCAL,
	                               NVML_DEVICE_ARCH_VOLTA,
	                               NVML_DEVICE_ARCH_TURING,
	                               NVML_DEVICE_ARCH_AMPERE,
	                               NVML_DEVICE_ARCH_ADA,
	                               NVML_DEVICE_ARCH_HOPPER,
	                               NVML_DEVICE_ARCH_BLACKWELL,
	                               -1,
	                               -2,
	                               -3,
	                               -4};
	static const char *const vendors[] = {"nvidia", "amd", NULL};
	int arch = 0, vendor = 0;
	if (!sim_sc_get_enum(c, gj, path, "vendor", false, vendors, NULL, &vendor))
		return false;
	g->amd = vendor == 1;
	if (!sim_sc_get_str(c, gj, path, "name", true, 95, g->name, sizeof g->name) ||
	    !sim_sc_get_enum(c, gj, path, "architecture", true, archs, arch_ids, &arch) ||
	    !sim_sc_get_str(c, gj, path, "uuid", false, 79, g->uuid, sizeof g->uuid) ||
	    !sim_sc_get_str(c, gj, path, "serial", false, 29, g->serial, sizeof g->serial) ||
	    !sim_sc_get_str(c, gj, path, "vbios", true, 31, g->vbios, sizeof g->vbios))
		return false;
	if ((arch < 0) != g->amd)
		return sim_sc_fail(c, path, "architecture",
		                   g->amd
		                       ? "an AMD GPU's architecture is cdna2, cdna3, rdna2 or rdna3"
		                       : "cdna and rdna architectures need \"vendor\": \"amd\"");
	g->arch = arch < 0 ? 0 : (unsigned)arch;
	g->amd_family = arch < 0 ? -arch : 0;
	if (!*g->name)
		return sim_sc_fail(c, path, "name", "the name cannot be empty");
	uint64_t h1 = sim_hash(c->seed, 1, (uint64_t)g->index, 0);
	uint64_t h2 = sim_hash(c->seed, 2, (uint64_t)g->index, 0);
	if (!*g->uuid)
		snprintf(g->uuid, sizeof g->uuid, "GPU-%08x-%04x-%04x-%04x-%012llx",
		         (unsigned)(h1 >> 32), (unsigned)(h1 >> 16) & 0xFFFF,
		         0x4000 | ((unsigned)h1 & 0x0FFF), 0x8000 | ((unsigned)(h2 >> 48) & 0x3FFF),
		         (unsigned long long)(h2 & 0xFFFFFFFFFFFFULL));
	else if (strncmp(g->uuid, "GPU-", 4) || strlen(g->uuid) < 8)
		return sim_sc_fail(c, path, "uuid", "a GPU UUID starts with \"GPU-\"");
	/* An empty serial means the board reports none (GeForce); absent means derive one. */
	g->has_serial = !sim_sc_member(gj, "serial") || *g->serial;
	if (!sim_sc_member(gj, "serial"))
		snprintf(g->serial, sizeof g->serial, "165%010llu",
		         (unsigned long long)(h2 % 10000000000ULL));
	long long minor = g->index;
	if (!sim_sc_get_int(c, gj, path, "minor_number", false, 0, 255, &minor))
		return false;
	g->minor = (unsigned)minor;
	json_t *cc;
	if (!sim_sc_get_arr(c, gj, path, "compute_capability", !g->amd, 2, &cc))
		return false;
	if (!cc)
		return true; /* an AMD GPU has no CUDA compute capability */
	if (json_array_size(cc) != 2 || !json_is_integer(json_array_get(cc, 0)) ||
	    !json_is_integer(json_array_get(cc, 1)) ||
	    json_integer_value(json_array_get(cc, 0)) < 1 ||
	    json_integer_value(json_array_get(cc, 0)) > 20 ||
	    json_integer_value(json_array_get(cc, 1)) < 0 ||
	    json_integer_value(json_array_get(cc, 1)) > 9)
		return sim_sc_fail(c, path, "compute_capability",
		                   "expected [major, minor], like [9, 0]");
	g->cc_major = (int)json_integer_value(json_array_get(cc, 0));
	g->cc_minor = (int)json_integer_value(json_array_get(cc, 1));
	return true;
}

/* mig.devices: the MIG devices of a GPU in MIG mode (one compute instance per GPU instance). */
static bool parse_mig_devices(sim_sc_ctx *c, json_t *o, const char *path, sim_gpu *g)
{
	json_t *arr;
	if (!sim_sc_get_arr(c, o, path, "devices", false, SIM_MAX_MIG, &arr))
		return false;
	g->n_mig = 0;
	if (!arr)
		return true;
	if (!g->mig_current)
		return sim_sc_fail(c, path, "devices", "MIG devices need \"current\": true");
	static const char *const keys[] = {
	    "profile",  "uuid", "gpu_instance", "compute_instance", "sm_count", "copy_engines",
	    "decoders", "jpeg", "ofa",          "memory_mib",       "used_mib", "bar1_mib",
	    NULL};
	for (size_t k = 0; k < json_array_size(arr); k++) {
		json_t *d = json_array_get(arr, k);
		char sub[256];
		snprintf(sub, sizeof sub, "%.200s.devices[%zu]", path, k);
		if (!json_is_object(d))
			return sim_sc_fail(c, sub, NULL, "expected an object, got %s",
			                   sim_sc_tname(d));
		sim_mig *m = &g->mig[k];
		memset(m, 0, sizeof *m);
		if (!sim_sc_check_keys(c, d, sub, keys) ||
		    !sim_sc_get_str(c, d, sub, "profile", true, 15, m->profile,
		                    sizeof m->profile) ||
		    !sim_sc_get_str(c, d, sub, "uuid", true, 95, m->uuid, sizeof m->uuid) ||
		    !sim_sc_get_uns(c, d, sub, "gpu_instance", true, 0, 64, &m->gi) ||
		    !sim_sc_get_uns(c, d, sub, "compute_instance", false, 0, 64, &m->ci) ||
		    !sim_sc_get_uns(c, d, sub, "sm_count", true, 1, 1024, &m->sm_count) ||
		    !sim_sc_get_uns(c, d, sub, "copy_engines", false, 0, 64, &m->ce_count) ||
		    !sim_sc_get_uns(c, d, sub, "decoders", false, 0, 64, &m->dec_count) ||
		    !sim_sc_get_uns(c, d, sub, "jpeg", false, 0, 64, &m->jpg_count) ||
		    !sim_sc_get_uns(c, d, sub, "ofa", false, 0, 64, &m->ofa_count) ||
		    !sim_sc_get_ull(c, d, sub, "memory_mib", true, 1, 1LL << 30, &m->mem_total) ||
		    !get_mib(c, d, sub, "used_mib", (double)m->mem_total, &m->mem_used,
		             &m->mem_used_b) ||
		    !sim_sc_get_ull(c, d, sub, "bar1_mib", false, 0, 1LL << 30, &m->bar1_total))
			return false;
		for (size_t j = 0; j < k; j++)
			if (g->mig[j].gi == m->gi)
				return sim_sc_fail(c, sub, "gpu_instance",
				                   "GPU instance %u is listed twice", m->gi);
		g->n_mig++;
	}
	return true;
}

static bool parse_modes(sim_sc_ctx *c, json_t *gj, const char *path, sim_gpu *g)
{
	static const char *const cmodes[] = {"default", "exclusive_thread", "prohibited",
	                                     "exclusive_process", NULL};
	json_t *o;
	char sub[300];
	g->persistence = true;
	g->compute_mode = NVML_COMPUTEMODE_DEFAULT;
	g->nvenc = g->nvdec = true;
	g->gpm = g->arch >= NVML_DEVICE_ARCH_HOPPER;
	long long numa = -1;
	if (!sim_sc_get_bool(c, gj, path, "persistence_mode", false, &g->persistence) ||
	    !sim_sc_get_enum(c, gj, path, "compute_mode", false, cmodes, NULL, &g->compute_mode) ||
	    !sim_sc_get_bool(c, gj, path, "nvenc", false, &g->nvenc) ||
	    !sim_sc_get_bool(c, gj, path, "nvdec", false, &g->nvdec) ||
	    !sim_sc_get_bool(c, gj, path, "gpm", false, &g->gpm) ||
	    !sim_sc_get_int(c, gj, path, "numa_node", false, 0, 1023, &numa))
		return false;
	if (g->gpm && g->arch < NVML_DEVICE_ARCH_HOPPER)
		return sim_sc_fail(c, path, "gpm", "GPM needs a Hopper or newer architecture");
	g->numa_node = (int)numa;
	char cpus[1024] = "";
	if (!sim_sc_get_str(c, gj, path, "cpu_affinity", false, sizeof cpus - 1, cpus, sizeof cpus))
		return false;
	if (*cpus) {
		if (!parse_cpulist(cpus, g->affinity))
			return sim_sc_fail(
			    c, path, "cpu_affinity",
			    "\"%s\" is not a CPU list like \"0-31,64-95\" (CPUs below %d)", cpus,
			    SIM_AFFINITY_WORDS * 64);
		g->has_affinity = true;
	}
	if (!sim_sc_get_obj(c, gj, path, "mig", false, &o))
		return false;
	if (o) {
		static const char *const keys[] = {"current", "pending", "devices", NULL};
		snprintf(sub, sizeof sub, "%.200s.mig", path);
		g->has_mig = true;
		if (!sim_sc_check_keys(c, o, sub, keys) ||
		    !sim_sc_get_bool(c, o, sub, "current", true, &g->mig_current))
			return false;
		g->mig_pending = g->mig_current;
		if (!sim_sc_get_bool(c, o, sub, "pending", false, &g->mig_pending) ||
		    !parse_mig_devices(c, o, sub, g))
			return false;
	}
	if (!sim_sc_get_obj(c, gj, path, "fan", false, &o))
		return false;
	if (o) {
		static const char *const keys[] = {"idle_pct", "busy_pct", NULL};
		snprintf(sub, sizeof sub, "%.200s.fan", path);
		g->has_fan = true;
		if (!sim_sc_check_keys(c, o, sub, keys) ||
		    !sim_sc_get_num(c, o, sub, "idle_pct", true, 0, 100, &g->fan_idle) ||
		    !sim_sc_get_num(c, o, sub, "busy_pct", true, g->fan_idle, 100, &g->fan_busy))
			return false;
	}
	if (!sim_sc_get_obj(c, gj, path, "pstate", false, &o))
		return false;
	g->idle_pstate = g->busy_pstate = 0;
	if (o) {
		static const char *const keys[] = {"idle", "busy", NULL};
		long long idle = 0, busy = 0;
		snprintf(sub, sizeof sub, "%.200s.pstate", path);
		if (!sim_sc_check_keys(c, o, sub, keys) ||
		    !sim_sc_get_int(c, o, sub, "idle", false, 0, 15, &idle) ||
		    !sim_sc_get_int(c, o, sub, "busy", false, 0, idle, &busy))
			return false;
		g->idle_pstate = (int)idle;
		g->busy_pstate = (int)busy;
	}
	double period_ms = 1000.0 / 6;
	if (!sim_sc_get_num(c, gj, path, "util_period_ms", false, 100, 1000, &period_ms))
		return false;
	g->util_period = period_ms / 1000.0;
	if (!sim_sc_get_obj(c, gj, path, "noise", false, &o))
		return false;
	if (o) {
		static const char *const keys[] = {"util", "power_w", "temp_c", NULL};
		snprintf(sub, sizeof sub, "%.200s.noise", path);
		if (!sim_sc_check_keys(c, o, sub, keys) ||
		    !sim_sc_get_num(c, o, sub, "util", false, 0, 50, &g->noise_util) ||
		    !sim_sc_get_num(c, o, sub, "power_w", false, 0, 1000, &g->noise_power) ||
		    !sim_sc_get_num(c, o, sub, "temp_c", false, 0, 20, &g->noise_temp))
			return false;
	}
	return true;
}

/*
 * The KFD's gfx_target_version of a board (major * 10000 + minor * 100 +
 * stepping, as the ISA name gfxMmS): by its PCI device id where this table
 * knows it, else its family's usual chip.
 */
static unsigned gfx_target_of(const sim_gpu *g)
{
	static const struct {
		unsigned did, v;
	} known[] = {{0x74a1, 90402},  {0x74a5, 90402},  {0x740c, 90010},  {0x740f, 90010},
	             {0x738c, 90008},  {0x73bf, 100300}, {0x73df, 100301}, {0x744c, 110000},
	             {0x7480, 110002}, {0x15bf, 110003}, {0x1681, 100305}};
	unsigned did = g->pci.device_id >> 16;
	for (size_t i = 0; i < sizeof known / sizeof *known; i++)
		if (known[i].did == did)
			return known[i].v;
	return g->amd_family == SIM_AMD_CDNA3   ? 90402
	       : g->amd_family == SIM_AMD_CDNA2 ? 90010
	       : g->amd_family == SIM_AMD_RDNA2 ? 100300
	                                        : 110000;
}

/*
 * amdgpu: what only an AMD GPU has. Without it a board is discrete, and its
 * gpu_metrics table the one its family's driver writes: v1.3 (RDNA2/3 and
 * CDNA2), none for CDNA3 (MI300's v1.4-1.6 are not simulated); an APU's is
 * v2.1 (Phoenix, Rembrandt) unless the scenario names v2.2 (Renoir, Van Gogh).
 */
static bool parse_amdgpu(sim_sc_ctx *c, json_t *gj, const char *path, sim_gpu *g)
{
	static const char *const keys[] = {
	    "apu",       "gpu_metrics", "gtt_mib", "gtt_used_mib", "gfx_target_version",
	    "xgmi_hive", NULL};
	static const char *const tables[] = {"none", "1.3", "2.1", "2.2", NULL};
	static const int table_ids[] = {SIM_AMDM_NONE, SIM_AMDM_V1_3, SIM_AMDM_V2_1, SIM_AMDM_V2_2};
	json_t *o;
	char sub[300];
	if (!sim_sc_get_obj(c, gj, path, "amdgpu", false, &o))
		return false;
	if (o && !g->amd)
		return sim_sc_fail(c, path, "amdgpu", "only a GPU with \"vendor\": \"amd\" has it");
	snprintf(sub, sizeof sub, "%.200s.amdgpu", path);
	unsigned long long gtt = 0, gtt_used = 0, gfx = g->amd ? gfx_target_of(g) : 0;
	if (o && (!sim_sc_check_keys(c, o, sub, keys) ||
	          !sim_sc_get_bool(c, o, sub, "apu", false, &g->apu) ||
	          !sim_sc_get_ull(c, o, sub, "gtt_mib", false, 1, 1LL << 30, &gtt) ||
	          !sim_sc_get_ull(c, o, sub, "gtt_used_mib", false, 0, (long long)gtt, &gtt_used) ||
	          !sim_sc_get_ull(c, o, sub, "gfx_target_version", false, 10000, 999999, &gfx) ||
	          !sim_sc_get_ull(c, o, sub, "xgmi_hive", false, 1, LLONG_MAX, &g->xgmi_hive)))
		return false;
	g->gfx_target_version = (unsigned)gfx;
	g->gtt_total_b = gtt * 1048576ull;
	g->gtt_used_b = gtt_used * 1048576ull;
	g->gpu_metrics = !g->amd                          ? SIM_AMDM_NONE
	                 : g->apu                         ? SIM_AMDM_V2_1
	                 : g->amd_family == SIM_AMD_CDNA3 ? SIM_AMDM_NONE
	                                                  : SIM_AMDM_V1_3;
	if (o &&
	    !sim_sc_get_enum(c, o, sub, "gpu_metrics", false, tables, table_ids, &g->gpu_metrics))
		return false;
	bool v2 = g->gpu_metrics == SIM_AMDM_V2_1 || g->gpu_metrics == SIM_AMDM_V2_2;
	if (g->gpu_metrics != SIM_AMDM_NONE && v2 != g->apu)
		return sim_sc_fail(c, sub, "gpu_metrics",
		                   "v2 tables are an APU's, v1 a discrete GPU's (\"apu\": %s)",
		                   g->apu ? "true" : "false");
	return true;
}

bool sim_sc_parse_gpu(sim_sc_ctx *c, json_t *gj, const char *path, sim_gpu *g)
{
	json_t *o;
	char sub[300];
	if (!sim_sc_check_keys(c, gj, path, sim_sc_gpu_keys) || !parse_identity(c, gj, path, g) ||
	    !parse_modes(c, gj, path, g))
		return false;
	if (!sim_sc_get_obj(c, gj, path, "pci", true, &o))
		return false;
	snprintf(sub, sizeof sub, "%.200s.pci", path);
	if (!parse_pci(c, o, sub, g))
		return false;
	if (!sim_sc_get_obj(c, gj, path, "memory", true, &o))
		return false;
	snprintf(sub, sizeof sub, "%.200s.memory", path);
	if (!parse_memory(c, o, sub, g))
		return false;
	if (!sim_sc_get_obj(c, gj, path, "power", true, &o))
		return false;
	snprintf(sub, sizeof sub, "%.200s.power", path);
	if (!parse_power(c, o, sub, g))
		return false;
	if (!sim_sc_get_obj(c, gj, path, "clocks", true, &o))
		return false;
	snprintf(sub, sizeof sub, "%.200s.clocks", path);
	if (!parse_clocks(c, o, sub, g))
		return false;
	if (!sim_sc_get_obj(c, gj, path, "thermal", true, &o))
		return false;
	snprintf(sub, sizeof sub, "%.200s.thermal", path);
	if (!parse_thermal(c, o, sub, g))
		return false;
	return parse_reliability(c, gj, path, g) && parse_nvlink(c, gj, path, g) &&
	       parse_amdgpu(c, gj, path, g) && sim_sc_parse_behaviour(c, gj, path, g);
}
