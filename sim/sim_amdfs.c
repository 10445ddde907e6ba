/* sim_amdfs.c - a scenario's AMD GPUs as amdgpu's sysfs, hwmon and fdinfo files (sim_amdfs.h). */
#include "sim_amdfs.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim_amdkmsg.h"
#include "nvml_abi.h"
#include "sim_amdmetrics.h"
#include "sim_model.h"

#define MIB 1048576.0

/* One instant of one AMD GPU, in the driver's units before scaling. */
typedef struct {
	double util, mem_util, power_w, temp_c, fan_pct, sclk, mclk;
	unsigned gen, width;
	unsigned long long vram_used_b;
	unsigned long long reasons; /* NVML's clock event reasons, as the NVML simulator's */
} amd_now;

/* Whether path holds exactly text (most files keep their value from one reading to the next). */
static bool holds(const char *path, const char *text, size_t len)
{
	char buf[512];
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	return n == len && memcmp(buf, text, len) == 0;
}

/*
 * Replace dir/name with the formatted text: written beside, then renamed, and
 * only when it changed (a rename per file and reading was most of the cost).
 */
static int put(const char *dir, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int put(const char *dir, const char *name, const char *fmt, ...)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8], text[512];
	if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	va_list ap;
	va_start(ap, fmt);
	int len = vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	if (len < 0 || (size_t)len >= sizeof text) {
		errno = EOVERFLOW;
		return -1;
	}
	if (holds(path, text, (size_t)len))
		return 0;
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return -1;
	fputs(text, f);
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

static int mkdirs(const char *path)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof buf, "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(buf, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

/* The card's number: its place among the scenario's AMD GPUs. */
static int card_no(const sim_scenario *s, int g)
{
	int k = 0;
	for (int i = 0; i < g; i++)
		k += s->gpus[i].amd;
	return k;
}

/* `gpuwhy sim train`'s activity on top of the scenario's, as the simulated NVML adds it. */
static void add_workloads(const sim_amdwl *wl, double m[SIM_M_COUNT])
{
	if (!wl)
		return;
	double add[][2] = {{SIM_M_UTIL, wl->busy}, {SIM_M_SM, wl->sm}, {SIM_M_MEM_UTIL, wl->dram}};
	for (size_t i = 0; i < sizeof add / sizeof *add; i++) {
		int k = (int)add[i][0];
		m[k] = m[k] + add[i][1] > 1 ? 1 : m[k] + add[i][1];
	}
}

/* The activity model of the simulated NVML (docs/scenarios.md "Values"). */
static void model_at(const sim_scenario *s, const sim_gpu *g, double t, const sim_amdwl *wl,
                     amd_now *o)
{
	double m[SIM_M_COUNT], acc[SIM_M_COUNT] = {0};
	sim_scn_value(g, t, m);
	add_workloads(wl, m);
	o->util = m[SIM_M_UTIL];
	o->mem_util = m[SIM_M_MEM_UTIL];
	double a0 = t > 30 ? t - 30 : 0, act;
	if (t - a0 > 1e-9) {
		sim_scn_integral(g, a0, t, acc);
		act = (0.35 * acc[SIM_M_UTIL] + 0.65 * acc[SIM_M_SM]) / (t - a0);
	} else {
		act = 0.35 * m[SIM_M_UTIL] + 0.65 * m[SIM_M_SM];
	}
	if (wl)
		act = act + wl->act30 > 1 ? 1 : act + wl->act30;
	o->temp_c = g->temp_idle + (g->temp_busy - g->temp_idle) * act;
	o->fan_pct = g->fan_idle + (g->fan_busy - g->fan_idle) * act;
	o->power_w = sim_power_of(g, m[SIM_M_UTIL], m[SIM_M_SM]);
	o->sclk = o->util >= 0.01 ? g->clk_busy_sm : g->clk_idle_sm;
	o->mclk = o->util >= 0.01 ? g->clk_max_mem : g->clk_idle_mem;
	o->reasons = 0;
	if (o->power_w > g->power_limit) {
		o->sclk *= cbrt(g->power_limit / o->power_w);
		o->power_w = g->power_limit;
		o->reasons |= nvmlClocksEventReasonSwPowerCap;
	}
	if (o->temp_c >= g->t_slowdown) {
		o->sclk *= 0.85;
		o->reasons |= nvmlClocksEventReasonSwThermalSlowdown;
	}
	o->gen = g->pcie_gen;
	o->width = g->pcie_width;
	for (int i = 0; i < g->n_episodes; i++) {
		const sim_episode *e = &g->episodes[i];
		if (!sim_ep_active(g, e, t))
			continue;
		if (e->kind == SIM_EP_DOWNTRAIN) {
			o->gen = e->gen;
			o->width = e->width;
		}
		if (e->kind != SIM_EP_THROTTLE)
			continue;
		o->reasons |= e->reasons;
		if (e->sm_clock_mhz > 0)
			o->sclk = e->sm_clock_mhz;
		else if (e->clock_drop_pct >= 0)
			o->sclk = g->clk_busy_sm * (1 - e->clock_drop_pct / 100);
		if (!isnan(e->temp_c))
			o->temp_c = e->temp_c;
		if (!isnan(e->power_w))
			o->power_w = e->power_w;
		if (!isnan(e->fan_pct))
			o->fan_pct = e->fan_pct;
	}
	o->vram_used_b = g->mem_reserved_b + g->mem_used_b + (wl ? wl->mem_bytes : 0);
	for (int i = 0; i < s->n_procs; i++) {
		const sim_fproc *p = &s->procs[i];
		if (p->gpu == g->index && sim_amd_proc_on(g, p, t))
			o->vram_used_b += p->used_mib * 1048576ull;
	}
}

static const char *link_speed(unsigned gen)
{
	static const char *const v[] = {"Unknown",       "2.5 GT/s PCIe",  "5.0 GT/s PCIe",
	                                "8.0 GT/s PCIe", "16.0 GT/s PCIe", "32.0 GT/s PCIe",
	                                "64.0 GT/s PCIe"};
	return gen < sizeof v / sizeof *v ? v[gen] : v[0];
}

/* pp_dpm_*: idle, middle and top level, '*' on the one nearest cur. */
static int put_dpm(const char *dev, const char *name, double lo, double hi, double cur)
{
	double lv[3] = {lo, (lo + hi) / 2, hi};
	int n = hi > lo ? 3 : 1, best = 0;
	for (int i = 1; i < n; i++)
		if (fabs(lv[i] - cur) < fabs(lv[best] - cur))
			best = i;
	char buf[128];
	size_t len = 0;
	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(buf + len, sizeof buf - len, "%d: %.0fMhz%s\n", i, lv[i],
		                        i == best ? " *" : "");
	return put(dev, name, "%s", buf);
}

/*
 * What an APU has instead of a discrete board's files (amdgpu_pm.c hides the
 * rest on APUs): GTT, the system memory it mostly uses, and the PPT label of
 * its power reading; no power cap, no hotspot or memory sensor, no mclk
 * sensor, no fan, no mem_busy_percent.
 */
static int write_static_apu(const sim_gpu *g, const char *dev, const char *hw)
{
	int rc = put(hw, "power1_label", "PPT\n");
	if (g->gtt_total_b)
		rc |= put(dev, "mem_info_gtt_total", "%llu\n", g->gtt_total_b);
	return rc;
}

/* The gpu_metrics table of the scenario's version, from the same readings as the other files. */
static int write_metrics(const sim_gpu *g, const amd_now *o, const char *dev)
{
	bool edge = g->amd_family >= SIM_AMD_RDNA2;
	sim_amdm m = {
	    .temp_edge = edge ? o->temp_c : NAN,
	    .temp_hotspot = g->apu ? NAN : o->temp_c + (edge ? 12 : 0),
	    .temp_mem = g->has_mem_temp && !g->apu ? o->temp_c + g->mem_temp_delta : NAN,
	    .power_w = o->power_w,
	    .gfx_pct = o->util * 100,
	    .umc_pct = g->apu ? NAN : o->mem_util * 100,
	    .gfxclk = o->sclk,
	    .socclk = o->util >= 0.01 ? 1200 : 600,
	    .uclk = o->mclk,
	    .fan_rpm = g->has_fan ? 600 + o->fan_pct * 30 : NAN,
	    .indep_throttle = sim_amdm_throttle_bits(o->reasons, g->apu),
	};
	return sim_amdm_write(dev, g->gpu_metrics, &m);
}

/* What does not change: ids, names, totals, limits, labels. */
static int write_static(const sim_gpu *g, const char *dev, const char *hw)
{
	unsigned did = g->pci.device_id >> 16, sub = g->pci.subsystem_id;
	int rc =
	    put(dev, "vendor", "0x1002\n") | put(dev, "device", "0x%04x\n", did) |
	    put(dev, "subsystem_vendor", "0x%04x\n", sub & 0xFFFF) |
	    put(dev, "subsystem_device", "0x%04x\n", sub >> 16) | put(dev, "revision", "0x00\n") |
	    put(dev, "mem_info_vram_total", "%llu\n", g->mem_total * 1048576ull) |
	    put(dev, "max_link_speed", "%s\n", link_speed(g->pcie_max_gen)) |
	    put(dev, "max_link_width", "%u\n", g->pcie_max_width) | put(hw, "name", "amdgpu\n");
	rc |= g->apu ? write_static_apu(g, dev, hw)
	             : put(hw, "power1_cap", "%.0f\n", g->power_limit * 1e6);
	/* Boards with a FRU (Instinct) name themselves; consumer boards have neither file. */
	if (g->has_serial)
		rc |= put(dev, "product_name", "%s\n", g->name) |
		      put(dev, "unique_id", "%016llx\n",
		          (unsigned long long)sim_hash(0, 7, g->index, 0));
	bool edge = g->amd_family >= SIM_AMD_RDNA2;
	rc |= put(hw, "temp1_label", "%s\n", edge ? "edge" : "junction") |
	      put(hw, "freq1_label", "sclk\n");
	if (!g->apu)
		rc |= put(hw, "temp2_label", "%s\n", edge ? "junction" : "mem") |
		      put(hw, "freq2_label", "mclk\n");
	if (edge && g->has_mem_temp && !g->apu)
		rc |= put(hw, "temp3_label", "mem\n");
	if (g->has_fan)
		rc |= put(hw, "pwm1_max", "255\n");
	return rc ? -1 : 0;
}

/* The readings of an APU: a discrete board's files less those it lacks, and GTT. */
static int write_now_apu(const sim_gpu *g, const amd_now *o, const char *dev, const char *hw)
{
	int rc = put(dev, "gpu_busy_percent", "%.0f\n", o->util * 100) |
	         put(dev, "mem_info_vram_used", "%llu\n", o->vram_used_b) |
	         put(dev, "current_link_speed", "%s\n", link_speed(o->gen)) |
	         put(dev, "current_link_width", "%u\n", o->width) |
	         put_dpm(dev, "pp_dpm_sclk", g->clk_idle_sm, g->clk_max_sm, o->sclk) |
	         put_dpm(dev, "pp_dpm_mclk", g->clk_idle_mem, g->clk_max_mem, o->mclk) |
	         put(hw, "power1_input", "%.0f\n", o->power_w * 1e6) |
	         put(hw, "temp1_input", "%.0f\n", o->temp_c * 1000) |
	         put(hw, "freq1_input", "%.0f\n", o->sclk * 1e6) | write_metrics(g, o, dev);
	if (g->gtt_total_b)
		rc |= put(dev, "mem_info_gtt_used", "%llu\n", g->gtt_used_b);
	return rc ? -1 : 0;
}

/* The readings at one instant. */
static int write_now(const sim_gpu *g, const amd_now *o, const char *dev, const char *hw)
{
	bool edge = g->amd_family >= SIM_AMD_RDNA2;
	/* junction runs hotter than edge; the memory sensor is the scenario's delta */
	double junction = o->temp_c + (edge ? 12 : 0);
	if (g->apu)
		return write_now_apu(g, o, dev, hw);
	int rc = put(dev, "gpu_busy_percent", "%.0f\n", o->util * 100) |
	         put(dev, "mem_busy_percent", "%.0f\n", o->mem_util * 100) |
	         put(dev, "mem_info_vram_used", "%llu\n", o->vram_used_b) |
	         put(dev, "current_link_speed", "%s\n", link_speed(o->gen)) |
	         put(dev, "current_link_width", "%u\n", o->width) |
	         put_dpm(dev, "pp_dpm_sclk", g->clk_idle_sm, g->clk_max_sm, o->sclk) |
	         put_dpm(dev, "pp_dpm_mclk", g->clk_idle_mem, g->clk_max_mem, o->mclk) |
	         put(hw, "power1_average", "%.0f\n", o->power_w * 1e6) |
	         put(hw, "freq1_input", "%.0f\n", o->sclk * 1e6) |
	         put(hw, "freq2_input", "%.0f\n", o->mclk * 1e6);
	if (edge)
		rc |= put(hw, "temp1_input", "%.0f\n", o->temp_c * 1000) |
		      put(hw, "temp2_input", "%.0f\n", junction * 1000);
	else
		rc |= put(hw, "temp1_input", "%.0f\n", junction * 1000);
	if (g->has_mem_temp)
		rc |= put(hw, edge ? "temp3_input" : "temp2_input", "%.0f\n",
		          (o->temp_c + g->mem_temp_delta) * 1000);
	if (g->has_fan)
		rc |= put(hw, "pwm1", "%.0f\n", o->fan_pct * 255 / 100) |
		      put(hw, "fan1_input", "%.0f\n", 600 + o->fan_pct * 30);
	rc |= write_metrics(g, o, dev);
	return rc ? -1 : 0;
}

/* Each scenario process on GPU g as one DRM client: ROOT/proc/PID/fdinfo/(100 + g). */
static int write_procs(const sim_scenario *s, const sim_gpu *g, const char *root, const char *bdf,
                       double t, double busy_clock_s)
{
	int rc = 0;
	for (int i = 0; i < s->n_procs; i++) {
		const sim_fproc *p = &s->procs[i];
		if (p->gpu != g->index)
			continue;
		char dir[PATH_MAX], fd[16];
		snprintf(dir, sizeof dir, "%s/proc/%u/fdinfo", root, p->pid);
		snprintf(fd, sizeof fd, "%d", 100 + g->index);
		if (!sim_amd_proc_on(g, p, t)) {
			char path[PATH_MAX + 16];
			snprintf(path, sizeof path, "%s/%s", dir, fd);
			unlink(path);
			continue;
		}
		double ran = busy_clock_s - (p->start > 0 ? p->start : 0);
		double busy_ns = (ran > 0 ? ran : 0) * p->sm_util / 100 * 1e9;
		rc |= mkdirs(dir) |
		      put(dir, fd,
		          "pos:\t0\nflags:\t02100002\ndrm-driver:\tamdgpu\ndrm-client-id:\t%d\n"
		          "drm-pdev:\t%s\ndrm-memory-vram:\t%llu KiB\ndrm-memory-gtt:\t0 KiB\n"
		          "drm-engine-gfx:\t0 ns\ndrm-engine-compute:\t%.0f ns\n",
		          1000 + i, bdf, p->used_mib * 1024ull, busy_ns);
	}
	return rc ? -1 : 0;
}

/* Whether pid is one of the workloads listed on the GPU. */
static bool wl_has(const sim_amdwl *wl, unsigned pid)
{
	for (int i = 0; wl && i < wl->n; i++)
		if (wl->procs[i].pid == pid)
			return true;
	return false;
}

/*
 * Each `gpuwhy sim train` process on GPU g as a DRM client, ROOT/proc/PID/fdinfo/(200 + g);
 * those of workloads that have ended are removed.
 */
static int write_wl_procs(const sim_amdwl *wl, const sim_gpu *g, const char *root, const char *bdf)
{
	char procs[PATH_MAX], dir[PATH_MAX + 32], fd[16];
	snprintf(procs, sizeof procs, "%s/proc", root);
	snprintf(fd, sizeof fd, "%d", 200 + g->index);
	int rc = 0;
	for (int i = 0; wl && i < wl->n; i++) {
		const sim_amdwl_proc *p = &wl->procs[i];
		snprintf(dir, sizeof dir, "%s/%u/fdinfo", procs, p->pid);
		rc |= mkdirs(dir) |
		      put(dir, fd,
		          "pos:\t0\nflags:\t02100002\ndrm-driver:\tamdgpu\ndrm-client-id:\t%u\n"
		          "drm-pdev:\t%s\ndrm-memory-vram:\t%llu KiB\ndrm-memory-gtt:\t0 KiB\n"
		          "drm-engine-gfx:\t0 ns\ndrm-engine-compute:\t%.0f ns\n",
		          100000u + p->pid, bdf, (unsigned long long)(p->mem_bytes / 1024),
		          p->busy_s * 1e9);
	}
	DIR *d = opendir(procs);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		unsigned pid;
		char tail;
		if (sscanf(e->d_name, "%u%c", &pid, &tail) != 1 || wl_has(wl, pid))
			continue;
		snprintf(dir, sizeof dir, "%s/%u/fdinfo/%s", procs, pid, fd);
		unlink(dir);
	}
	if (d)
		closedir(d);
	return rc ? -1 : 0;
}

/*
 * What ROCm opens, as the kernel's KFD lays it out: the topology node of the
 * card (ROOT/sys/class/kfd/kfd/topology/nodes/N, node 0 the CPU) and the
 * device files /dev/kfd and /dev/dri/renderD(128 + card), plain files this
 * user can read and write, as a member of the render group can.
 */
static int write_kfd(const sim_gpu *g, int card, const char *root)
{
	char nodes[PATH_MAX], node[PATH_MAX + 16], dri[PATH_MAX], dev[PATH_MAX];
	snprintf(nodes, sizeof nodes, "%s/sys/class/kfd/kfd/topology/nodes", root);
	snprintf(node, sizeof node, "%s/%d", nodes, card + 1);
	snprintf(dev, sizeof dev, "%s/dev", root);
	snprintf(dri, sizeof dri, "%s/dev/dri", root);
	if (mkdirs(node) != 0 || mkdirs(dri) != 0)
		return -1;
	snprintf(node, sizeof node, "%s/0", nodes);
	int rc =
	    mkdirs(node) | put(node, "gpu_id", "0\n") |
	    put(node, "properties", "cpu_cores_count 16\nsimd_count 0\ngfx_target_version 0\n");
	snprintf(node, sizeof node, "%s/%d", nodes, card + 1);
	/* a GPU id is a hash in the kernel; the card in its low bits keeps them apart */
	unsigned id = ((unsigned)sim_hash(0, 11, g->index, 0) & 0xfff0u) | (unsigned)card;
	rc |= put(node, "gpu_id", "%u\n", id) |
	      put(node, "properties",
	          "cpu_cores_count 0\nsimd_count %u\ngfx_target_version %u\nvendor_id 4098\n"
	          "device_id %u\nlocation_id %u\ndomain %u\n",
	          g->apu ? 24u : 304u, g->gfx_target_version, g->pci.device_id >> 16,
	          (g->pci.bus << 8) | (g->pci.device << 3) | g->pci.function, g->pci.domain) |
	      put(dev, "kfd", "%s", "");
	char name[32];
	snprintf(name, sizeof name, "card%d", card);
	rc |= put(dri, name, "%s", "");
	snprintf(name, sizeof name, "renderD%d", 128 + card);
	rc |= put(dri, name, "%s", "");
	return rc ? -1 : 0;
}

/*
 * An XGMI hive as amdgpu_xgmi.c shows it: a directory xgmi_hive_info holding
 * xgmi_hive_id on the hive's first device (here: its first GPU in the
 * scenario), a link of that name to it on every other device of the hive.
 */
static int write_xgmi(const sim_scenario *s, int gi, const char *dev)
{
	const sim_gpu *g = &s->gpus[gi];
	if (!g->xgmi_hive)
		return 0;
	int first = gi;
	for (int k = 0; k < gi; k++)
		if (s->gpus[k].amd && s->gpus[k].xgmi_hive == g->xgmi_hive) {
			first = k;
			break;
		}
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/xgmi_hive_info", dev);
	if (first == gi)
		return mkdirs(path) | put(path, "xgmi_hive_id", "%llu\n", g->xgmi_hive);
	const sim_pci *p = &s->gpus[first].pci;
	char target[64];
	snprintf(target, sizeof target, "../%04x:%02x:%02x.%x/xgmi_hive_info", p->domain, p->bus,
	         p->device, p->function);
	return symlink(target, path) != 0 && errno != EEXIST ? -1 : 0;
}

/* The card's link again after a reset took it away (nothing when it is there). */
static int relink(const char *bdf, const char *link)
{
	char target[64];
	snprintf(target, sizeof target, "../../../bus/pci/devices/%s", bdf);
	return symlink(target, link) != 0 && errno != EEXIST ? -1 : 0;
}

int sim_amdfs_write(const sim_scenario *s, int gi, const char *root, double t, double busy_clock_s,
                    bool with_static, const sim_amdwl *wl)
{
	const sim_gpu *g = &s->gpus[gi];
	char bdf[16], dev[PATH_MAX], hw[PATH_MAX + 32], cls[PATH_MAX], link[PATH_MAX + 16];
	snprintf(bdf, sizeof bdf, "%04x:%02x:%02x.%x", g->pci.domain, g->pci.bus, g->pci.device,
	         g->pci.function);
	snprintf(dev, sizeof dev, "%s/sys/bus/pci/devices/%s", root, bdf);
	snprintf(hw, sizeof hw, "%s/hwmon/hwmon%d", dev, card_no(s, gi));
	snprintf(cls, sizeof cls, "%s/sys/class/drm/card%d", root, card_no(s, gi));
	snprintf(link, sizeof link, "%s/device", cls);
	if ((t >= g->lost_after || sim_amd_resetting(g, t)) && !with_static) {
		/* fallen off the bus, or in a reset: the driver's card is gone */
		unlink(link);
		return 0;
	}
	/* Opened after the loss: the tree as it was just before, so that the card is
	 * found and the next reading loses it, as NVML still lists a lost GPU. */
	if (t >= g->lost_after)
		t = g->lost_after;
	if (with_static) {
		char target[64];
		snprintf(target, sizeof target, "../../../bus/pci/devices/%s", bdf);
		if (mkdirs(hw) != 0 || mkdirs(cls) != 0 || write_static(g, dev, hw) != 0 ||
		    write_kfd(g, card_no(s, gi), root) != 0 || write_xgmi(s, gi, dev) != 0)
			return -1;
		if (symlink(target, link) != 0 && errno != EEXIST)
			return -1;
	} else if (!isinf(g->reset_at) && relink(bdf, link) != 0) {
		return -1; /* back from its reset */
	}
	amd_now o;
	model_at(s, g, t, wl, &o);
	if (write_now(g, &o, dev, hw) != 0)
		return -1;
	return write_procs(s, g, root, bdf, t, busy_clock_s) | write_wl_procs(wl, g, root, bdf);
}
