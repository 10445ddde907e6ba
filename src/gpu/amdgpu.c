/* amdgpu.c - AMD GPUs found in sysfs, and one reading of a card's files. */
#include "gpu/amdgpu.h"

#include "gpu/amdgpu_metrics.h"
#include "gpu/amdgpu_pciids.h"
#include "gpu/amdgpu_ras.h"
#include "host/host_pcitopo.h"

#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool amdgpu_read_text(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	size_t n = fread(buf, 1, size - 1, f);
	bool err = ferror(f);
	fclose(f);
	if (err)
		return false;
	buf[n] = '\0';
	while (n > 0 && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
	return true;
}

static bool read_at(const char *dir, const char *name, char *buf, size_t size)
{
	if (!dir || !*dir)
		return false;
	char path[PATH_MAX];
	if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
		return false;
	return amdgpu_read_text(path, buf, size);
}

bool amdgpu_read_num(const char *dir, const char *name, bool hex, unsigned long long *v)
{
	char buf[64], *end;
	if (!read_at(dir, name, buf, sizeof buf) || !buf[0] || buf[0] == '-')
		return false;
	if (hex && strncmp(buf, "0x", 2) != 0)
		return false;
	*v = strtoull(buf, &end, hex ? 16 : 10);
	return end != buf && *end == '\0';
}

static void set(amdgpu_values *o, amdgpu_field f, double v)
{
	o->v[f] = v;
	o->ok[f] = 1;
}

/* Set f from a decimal file, scaled (1e-6 for micro units); false when absent. */
static bool set_num(amdgpu_values *o, amdgpu_field f, const char *dir, const char *name,
                    double scale)
{
	unsigned long long v;
	if (!amdgpu_read_num(dir, name, false, &v))
		return false;
	set(o, f, (double)v * scale);
	return true;
}

static bool is_card_name(const char *s)
{
	if (strncmp(s, "card", 4) != 0 || !s[4])
		return false;
	for (s += 4; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* "0000:03:00.0": from where the device link ends, else from uevent's PCI_SLOT_NAME. */
static void card_bdf(amdgpu_card *c)
{
	char real[PATH_MAX], ue[1024];
	unsigned d, b, s, f;
	char tail;
	const char *cand = NULL;
	if (realpath(c->dev_path, real)) {
		const char *base = strrchr(real, '/');
		cand = base ? base + 1 : real;
	}
	if (cand && sscanf(cand, "%x:%x:%x.%x%c", &d, &b, &s, &f, &tail) == 4)
		goto found;
	cand = NULL;
	if (read_at(c->dev_path, "uevent", ue, sizeof ue)) {
		const char *k = strstr(ue, "PCI_SLOT_NAME=");
		cand = k ? k + strlen("PCI_SLOT_NAME=") : NULL;
	}
	if (!cand || sscanf(cand, "%x:%x:%x.%x", &d, &b, &s, &f) != 4)
		return;
found:
	if (d <= 0xffff && b <= 0xff && s <= 0x1f && f <= 7)
		snprintf(c->bdf, sizeof c->bdf, "%04x:%02x:%02x.%x", d, b, s, f);
}

/* The hwmon directory the driver registered: the one named "amdgpu", else the first. */
static void card_hwmon(amdgpu_card *c)
{
	char dir[sizeof c->dev_path + 8];
	snprintf(dir, sizeof dir, "%s/hwmon", c->dev_path);
	DIR *d = opendir(dir);
	if (!d)
		return;
	char first[64] = "", named[64] = "";
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "hwmon", 5) != 0)
			continue;
		if (!first[0] || strcmp(e->d_name, first) < 0)
			snprintf(first, sizeof first, "%.63s", e->d_name);
		char sub[sizeof dir + 256], name[32];
		snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
		if (read_at(sub, "name", name, sizeof name) && !strcmp(name, "amdgpu") &&
		    (!named[0] || strcmp(e->d_name, named) < 0))
			snprintf(named, sizeof named, "%.63s", e->d_name);
	}
	closedir(d);
	const char *pick = named[0] ? named : first;
	if (pick[0])
		snprintf(c->hwmon_path, sizeof c->hwmon_path, "%s/%s", dir, pick);
}

/* Fill c for ROOT/sys/class/drm/NAME; false when it is no AMD GPU. */
static bool card_probe(const char *root, const char *name, amdgpu_card *c)
{
	memset(c, 0, sizeof *c);
	snprintf(c->card, sizeof c->card, "%.15s", name);
	if ((size_t)snprintf(c->dev_path, sizeof c->dev_path, "%s/sys/class/drm/%s/device", root,
	                     name) >= sizeof c->dev_path)
		return false;
	unsigned long long v;
	if (!amdgpu_read_num(c->dev_path, "vendor", true, &v) || v != AMDGPU_VENDOR_ID)
		return false;
	c->vendor = (unsigned)v;
	if (amdgpu_read_num(c->dev_path, "device", true, &v)) {
		c->device = (unsigned)v;
		c->ids_ok = true;
	}
	if (amdgpu_read_num(c->dev_path, "subsystem_vendor", true, &v))
		c->subsys_vendor = (unsigned)v;
	if (amdgpu_read_num(c->dev_path, "subsystem_device", true, &v))
		c->subsys_device = (unsigned)v;
	if (amdgpu_read_num(c->dev_path, "revision", true, &v))
		c->revision = (unsigned)v;
	if (!read_at(c->dev_path, "product_name", c->product_name, sizeof c->product_name))
		c->product_name[0] = '\0';
	if (!read_at(c->dev_path, "unique_id", c->unique_id, sizeof c->unique_id))
		c->unique_id[0] = '\0';
	amdgpu_pciids_query q = {c->vendor, c->device, c->subsys_vendor, c->subsys_device, "", ""};
	if (!c->product_name[0] && c->ids_ok && amdgpu_pciids_lookup(root, &q))
		snprintf(c->pci_name, sizeof c->pci_name, "%s", amdgpu_pciids_name(&q));
	card_bdf(c);
	card_hwmon(c);
	/* the hive's directory on its first device, a link to it on the others (amdgpu_xgmi.c) */
	if (!amdgpu_read_num(c->dev_path, "xgmi_hive_info/xgmi_hive_id", false, &v))
		v = 0;
	c->xgmi_hive = v;
	return true;
}

/* By PCI address; cards whose address is unknown last, by card number. */
static int by_bdf(const void *a, const void *b)
{
	const amdgpu_card *x = a, *y = b;
	if (!x->bdf[0] != !y->bdf[0])
		return x->bdf[0] ? -1 : 1;
	int c = strcmp(x->bdf, y->bdf);
	if (c)
		return c;
	return atoi(x->card + 4) - atoi(y->card + 4);
}

int amdgpu_discover(const char *root, amdgpu_card *out, int max)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/sys/class/drm", root ? root : "");
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < max) {
		if (!is_card_name(e->d_name) || !card_probe(root ? root : "", e->d_name, &out[n]))
			continue;
		/* one PCI function, two cardN (never seen, but then keep the lower N) */
		int dup = -1;
		for (int k = 0; k < n && dup < 0; k++)
			if (out[n].bdf[0] && !strcmp(out[k].bdf, out[n].bdf))
				dup = k;
		if (dup < 0)
			n++;
		else if (atoi(out[n].card + 4) < atoi(out[dup].card + 4))
			out[dup] = out[n];
	}
	closedir(d);
	qsort(out, (size_t)n, sizeof *out, by_bdf);
	return n;
}

/* tempN by its label (edge, junction, mem); without labels, the driver's numbering. */
static void read_temps(const char *hw, amdgpu_values *o)
{
	static const char *const labels[] = {"edge", "junction", "mem"};
	static const amdgpu_field fields[] = {AMD_TEMP_EDGE, AMD_TEMP_JUNCTION, AMD_TEMP_MEM};
	for (int i = 1; i <= 8; i++) {
		char name[32], label[32];
		snprintf(name, sizeof name, "temp%d_label", i);
		int which = -1;
		if (read_at(hw, name, label, sizeof label)) {
			for (int k = 0; k < 3; k++)
				if (!strcmp(label, labels[k]))
					which = k;
		} else if (i <= 3) {
			which = i - 1;
		}
		if (which < 0 || o->ok[fields[which]])
			continue;
		snprintf(name, sizeof name, "temp%d_input", i);
		set_num(o, fields[which], hw, name, 1e-3);
	}
}

/* freqN_input (Hz) whose freqN_label is want ("sclk", "mclk"); false when none. */
static bool read_freq(const char *hw, const char *want, amdgpu_values *o, amdgpu_field f)
{
	for (int i = 1; i <= 4; i++) {
		char name[32], label[32];
		snprintf(name, sizeof name, "freq%d_label", i);
		if (!read_at(hw, name, label, sizeof label) || strcmp(label, want) != 0)
			continue;
		snprintf(name, sizeof name, "freq%d_input", i);
		return set_num(o, f, hw, name, 1e-6);
	}
	return false;
}

static void read_hwmon(const char *hw, amdgpu_values *o)
{
	if (!hw[0])
		return;
	/* microwatts; newer kernels have only the instantaneous power1_input on some boards */
	if (!set_num(o, AMD_POWER_W, hw, "power1_average", 1e-6))
		set_num(o, AMD_POWER_W, hw, "power1_input", 1e-6);
	set_num(o, AMD_POWER_CAP_W, hw, "power1_cap", 1e-6);
	read_temps(hw, o);
	set_num(o, AMD_FAN_RPM, hw, "fan1_input", 1);
	unsigned long long pwm, pmax;
	if (!amdgpu_read_num(hw, "pwm1_max", false, &pmax))
		pmax = 255; /* the hwmon ABI's range of pwmN */
	if (amdgpu_read_num(hw, "pwm1", false, &pwm) && pmax > 0 && pwm <= pmax)
		set(o, AMD_FAN_PCT, 100.0 * (double)pwm / (double)pmax);
	read_freq(hw, "sclk", o, AMD_SCLK_MHZ);
	read_freq(hw, "mclk", o, AMD_MCLK_MHZ);
}

/* pp_dpm_NAME: the current level where hwmon had no frequency, and the top level. */
static void read_dpm(const char *dev, const char *name, amdgpu_values *o, amdgpu_field cur,
                     amdgpu_field top)
{
	char buf[4096];
	amdgpu_dpm d;
	if (!read_at(dev, name, buf, sizeof buf) || !amdgpu_parse_dpm(buf, strlen(buf), &d))
		return;
	if (d.cur_ok && !o->ok[cur])
		set(o, cur, d.cur_mhz);
	set(o, top, d.max_mhz);
}

static void read_link(const char *dev, const char *speed, const char *width, amdgpu_values *o,
                      amdgpu_field fgen, amdgpu_field fwidth)
{
	char buf[64];
	unsigned long long w;
	int gen = read_at(dev, speed, buf, sizeof buf) ? amdgpu_link_gen(buf) : 0;
	if (gen > 0)
		set(o, fgen, gen);
	if (amdgpu_read_num(dev, width, false, &w) && w > 0 && w <= 32)
		set(o, fwidth, (double)w);
}

/* gpu_metrics: the throttle status, and what sysfs and hwmon did not give. */
static void read_metrics(const char *dev, amdgpu_values *o)
{
	static const struct {
		amdgpu_metric m;
		amdgpu_field f;
	} fill[] = {
	    {AMDGPU_M_GFX_ACTIVITY, AMD_GPU_BUSY},
	    {AMDGPU_M_UMC_ACTIVITY, AMD_MEM_BUSY},
	    {AMDGPU_M_POWER_W, AMD_POWER_W},
	    {AMDGPU_M_TEMP_EDGE, AMD_TEMP_EDGE},
	    {AMDGPU_M_TEMP_HOTSPOT, AMD_TEMP_JUNCTION},
	    {AMDGPU_M_TEMP_MEM, AMD_TEMP_MEM},
	    {AMDGPU_M_GFXCLK_MHZ, AMD_SCLK_MHZ},
	    {AMDGPU_M_UCLK_MHZ, AMD_MCLK_MHZ},
	};
	amdgpu_metrics m;
	if (!amdgpu_metrics_read(dev, &m))
		return;
	for (size_t i = 0; i < sizeof fill / sizeof *fill; i++)
		if (m.ok[fill[i].m] && !o->ok[fill[i].f])
			set(o, fill[i].f, m.v[fill[i].m]);
	if (m.throttle_ok)
		set(o, AMD_THROTTLE_REASONS, (double)amdgpu_throttle_reasons(m.throttle_raw));
	o->resid = m.resid;
}

void amdgpu_read(const amdgpu_card *c, amdgpu_values *o)
{
	memset(o, 0, sizeof *o);
	const char *dev = c->dev_path;
	set_num(o, AMD_GPU_BUSY, dev, "gpu_busy_percent", 1);
	set_num(o, AMD_MEM_BUSY, dev, "mem_busy_percent", 1);
	set_num(o, AMD_VRAM_TOTAL, dev, "mem_info_vram_total", 1);
	set_num(o, AMD_VRAM_USED, dev, "mem_info_vram_used", 1);
	set_num(o, AMD_GTT_TOTAL, dev, "mem_info_gtt_total", 1);
	set_num(o, AMD_GTT_USED, dev, "mem_info_gtt_used", 1);
	read_hwmon(c->hwmon_path, o);
	read_dpm(dev, "pp_dpm_sclk", o, AMD_SCLK_MHZ, AMD_SCLK_MAX_MHZ);
	read_dpm(dev, "pp_dpm_mclk", o, AMD_MCLK_MHZ, AMD_MCLK_MAX_MHZ);
	read_link(dev, "current_link_speed", "current_link_width", o, AMD_PCIE_GEN, AMD_PCIE_WIDTH);
	read_link(dev, "max_link_speed", "max_link_width", o, AMD_PCIE_GEN_MAX, AMD_PCIE_WIDTH_MAX);
	read_metrics(dev, o);
	amdgpu_ras counts;
	if (amdgpu_ras_read(dev, &counts)) {
		set(o, AMD_RAS_CE, (double)counts.ce);
		set(o, AMD_RAS_UE, (double)counts.ue);
	}
}

bool amdgpu_xgmi_linked(const amdgpu_card *a, const amdgpu_card *b)
{
	return a && b && a->xgmi_hive && a->xgmi_hive == b->xgmi_hive;
}

/*
 * Whether the card's PCI function sits in ROOT's tree of host bridges
 * (sys/bus/pci/devices/BDF a link into sys/devices/pciDDDD:BB/...): only
 * then do the bridges of its path say where it is. A tree that keeps the
 * device as a plain directory there (the simulated cards) has no bridges.
 */
static bool in_pci_tree(const char *root, const amdgpu_card *c)
{
	char link[PATH_MAX], real[PATH_MAX];
	if ((size_t)snprintf(link, sizeof link, "%s/sys/bus/pci/devices/%s", root, c->bdf) >=
	        sizeof link ||
	    !realpath(link, real))
		return false;
	return strstr(real, "/sys/devices/pci") != NULL;
}

int amdgpu_topo_level(const char *root, const amdgpu_card *a, const amdgpu_card *b)
{
	root = root ? root : "";
	if (!a || !b || !a->bdf[0] || !b->bdf[0] || !in_pci_tree(root, a) || !in_pci_tree(root, b))
		return -1;
	return pcitopo_level(root, a->bdf, b->bdf);
}

const char *amdgpu_field_name(amdgpu_field f)
{
	static const char *const names[AMD__COUNT] = {
	    [AMD_GPU_BUSY] = "gpu_busy_percent",
	    [AMD_MEM_BUSY] = "mem_busy_percent",
	    [AMD_VRAM_TOTAL] = "vram_total",
	    [AMD_VRAM_USED] = "vram_used",
	    [AMD_GTT_TOTAL] = "gtt_total",
	    [AMD_GTT_USED] = "gtt_used",
	    [AMD_POWER_W] = "power",
	    [AMD_POWER_CAP_W] = "power_cap",
	    [AMD_TEMP_EDGE] = "temp_edge",
	    [AMD_TEMP_JUNCTION] = "temp_junction",
	    [AMD_TEMP_MEM] = "temp_mem",
	    [AMD_FAN_RPM] = "fan_rpm",
	    [AMD_FAN_PCT] = "fan_percent",
	    [AMD_SCLK_MHZ] = "sclk",
	    [AMD_MCLK_MHZ] = "mclk",
	    [AMD_SCLK_MAX_MHZ] = "sclk_max",
	    [AMD_MCLK_MAX_MHZ] = "mclk_max",
	    [AMD_PCIE_GEN] = "pcie_gen",
	    [AMD_PCIE_WIDTH] = "pcie_width",
	    [AMD_PCIE_GEN_MAX] = "pcie_gen_max",
	    [AMD_PCIE_WIDTH_MAX] = "pcie_width_max",
	    [AMD_THROTTLE_REASONS] = "throttle_reasons",
	    [AMD_RAS_CE] = "ras_ce",
	    [AMD_RAS_UE] = "ras_ue",
	    [AMD_THROTTLE_KNOWN] = "throttle_known",
	};
	return (unsigned)f < AMD__COUNT && names[f] ? names[f] : "?";
}
