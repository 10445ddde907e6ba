/*
 * sim_amdmetrics.c - the gpu_metrics table of a simulated AMD GPU (sim_amdmetrics.h).
 *
 * Each layout is the kernel struct's field list in its order (name, size,
 * count); offsets follow from natural alignment as the compiler lays the
 * struct out on a little-endian machine, so the table is built the way the
 * driver's is and no offset is written twice by hand.
 */
#include "sim_amdmetrics.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nvml_abi.h"

typedef struct {
	const char *name;
	unsigned char size, count;
} mfield;

/* struct gpu_metrics_v1_3 (Navi 2x/3x, MI200): degrees C, W, %, MHz. */
static const mfield v1_3[] = {
    {"header", 4, 1},
    {"temperature_edge", 2, 1},
    {"temperature_hotspot", 2, 1},
    {"temperature_mem", 2, 1},
    {"temperature_vrgfx", 2, 1},
    {"temperature_vrsoc", 2, 1},
    {"temperature_vrmem", 2, 1},
    {"average_gfx_activity", 2, 1},
    {"average_umc_activity", 2, 1},
    {"average_mm_activity", 2, 1},
    {"average_socket_power", 2, 1},
    {"energy_accumulator", 8, 1},
    {"system_clock_counter", 8, 1},
    {"average_gfxclk_frequency", 2, 1},
    {"average_socclk_frequency", 2, 1},
    {"average_uclk_frequency", 2, 1},
    {"average_vclk0_frequency", 2, 1},
    {"average_dclk0_frequency", 2, 1},
    {"average_vclk1_frequency", 2, 1},
    {"average_dclk1_frequency", 2, 1},
    {"current_gfxclk", 2, 1},
    {"current_socclk", 2, 1},
    {"current_uclk", 2, 1},
    {"current_vclk0", 2, 1},
    {"current_dclk0", 2, 1},
    {"current_vclk1", 2, 1},
    {"current_dclk1", 2, 1},
    {"throttle_status", 4, 1},
    {"current_fan_speed", 2, 1},
    {"pcie_link_width", 2, 1},
    {"pcie_link_speed", 2, 1},
    {"padding", 2, 1},
    {"gfx_activity_acc", 4, 1},
    {"mem_activity_acc", 4, 1},
    {"temperature_hbm", 2, 4},
    {"firmware_timestamp", 8, 1},
    {"voltage_soc", 2, 1},
    {"voltage_gfx", 2, 1},
    {"voltage_mem", 2, 1},
    {"padding1", 2, 1},
    {"indep_throttle_status", 8, 1},
    {NULL, 0, 0},
};

/*
 * struct gpu_metrics_v2_1 (APUs: Phoenix, Rembrandt): centi-degrees C, mW,
 * centi-%, MHz; v2.2 (Renoir, Van Gogh) appends indep_throttle_status.
 */
#define V2_1_FIELDS                                                                                \
	{"header", 4, 1}, {"temperature_gfx", 2, 1}, {"temperature_soc", 2, 1},                    \
	    {"temperature_core", 2, 8}, {"temperature_l3", 2, 2}, {"average_gfx_activity", 2, 1},  \
	    {"average_mm_activity", 2, 1}, {"system_clock_counter", 8, 1},                         \
	    {"average_socket_power", 2, 1}, {"average_cpu_power", 2, 1},                           \
	    {"average_soc_power", 2, 1}, {"average_gfx_power", 2, 1},                              \
	    {"average_core_power", 2, 8}, {"average_gfxclk_frequency", 2, 1},                      \
	    {"average_socclk_frequency", 2, 1}, {"average_uclk_frequency", 2, 1},                  \
	    {"average_fclk_frequency", 2, 1}, {"average_vclk_frequency", 2, 1},                    \
	    {"average_dclk_frequency", 2, 1}, {"current_gfxclk", 2, 1}, {"current_socclk", 2, 1},  \
	    {"current_uclk", 2, 1}, {"current_fclk", 2, 1}, {"current_vclk", 2, 1},                \
	    {"current_dclk", 2, 1}, {"current_coreclk", 2, 8}, {"current_l3clk", 2, 2},            \
	    {"throttle_status", 4, 1}, {"fan_pwm", 2, 1},                                          \
	{                                                                                          \
		"padding", 2, 3                                                                    \
	}
static const mfield v2_1[] = {V2_1_FIELDS, {NULL, 0, 0}};
static const mfield v2_2[] = {V2_1_FIELDS, {"indep_throttle_status", 8, 1}, {NULL, 0, 0}};

/* A table being built: its field list, its bytes, its size so far. */
typedef struct {
	const mfield *f;
	uint8_t *b;
} table;

/* Offset of a field (natural alignment), or -1; *size gets the table's whole size. */
static long field_off(const mfield *f, const char *name, size_t *size)
{
	size_t off = 0, align = 1;
	long at = -1;
	for (; f->name; f++) {
		off = (off + f->size - 1) / f->size * f->size;
		if (f->size > align)
			align = f->size;
		if (name && !strcmp(f->name, name))
			at = (long)off;
		off += (size_t)f->size * f->count;
	}
	if (size)
		*size = (off + align - 1) / align * align;
	return at;
}

static void put_le(uint8_t *p, uint64_t v, unsigned size)
{
	for (unsigned i = 0; i < size; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* name = v * scale, rounded and kept below all ones; NAN or negative leaves it unfilled. */
static void set(table *t, const char *name, double v, double scale)
{
	long off = field_off(t->f, name, NULL);
	if (off < 0 || isnan(v) || v < 0)
		return;
	double x = floor(v * scale + 0.5);
	put_le(t->b + off, x > 0xFFFE ? 0xFFFE : (uint64_t)x, 2);
}

static void set_raw(table *t, const char *name, uint64_t v, unsigned size)
{
	long off = field_off(t->f, name, NULL);
	if (off >= 0)
		put_le(t->b + off, v, size);
}

/* v1: degrees C, W, %; the current and the average clocks read the same. */
static void fill_v1(table *t, const sim_amdm *v)
{
	set(t, "temperature_edge", v->temp_edge, 1);
	set(t, "temperature_hotspot", v->temp_hotspot, 1);
	set(t, "temperature_mem", v->temp_mem, 1);
	set(t, "average_gfx_activity", v->gfx_pct, 1);
	set(t, "average_umc_activity", v->umc_pct, 1);
	set(t, "average_socket_power", v->power_w, 1);
	set(t, "average_gfxclk_frequency", v->gfxclk, 1);
	set(t, "average_socclk_frequency", v->socclk, 1);
	set(t, "average_uclk_frequency", v->uclk, 1);
	set(t, "current_gfxclk", v->gfxclk, 1);
	set(t, "current_socclk", v->socclk, 1);
	set(t, "current_uclk", v->uclk, 1);
	set(t, "current_fan_speed", v->fan_rpm, 1);
	set_raw(t, "padding", 0, 2);
	set_raw(t, "padding1", 0, 2);
	set_raw(t, "indep_throttle_status", v->indep_throttle, 8);
}

/* v2: centi-degrees, mW, centi-%; the gfx temperature is the APU's edge. */
static void fill_v2(table *t, const sim_amdm *v)
{
	set(t, "temperature_gfx", v->temp_edge, 100);
	set(t, "average_gfx_activity", v->gfx_pct, 100);
	set(t, "average_socket_power", v->power_w, 1000);
	set(t, "average_gfxclk_frequency", v->gfxclk, 1);
	set(t, "average_socclk_frequency", v->socclk, 1);
	set(t, "average_uclk_frequency", v->uclk, 1);
	set(t, "current_gfxclk", v->gfxclk, 1);
	set(t, "current_socclk", v->socclk, 1);
	set(t, "current_uclk", v->uclk, 1);
	long pad = field_off(t->f, "padding", NULL);
	memset(t->b + pad, 0, 6);
	set_raw(t, "indep_throttle_status", v->indep_throttle, 8);
}

size_t sim_amdm_encode(int version, const sim_amdm *v, uint8_t *buf)
{
	static const struct {
		int version;
		const mfield *f;
		uint8_t format, content;
	} known[] = {
	    {SIM_AMDM_V1_3, v1_3, 1, 3},
	    {SIM_AMDM_V2_1, v2_1, 2, 1},
	    {SIM_AMDM_V2_2, v2_2, 2, 2},
	};
	for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
		if (known[i].version != version)
			continue;
		size_t size;
		field_off(known[i].f, NULL, &size);
		if (size > SIM_AMDM_MAX)
			return 0;
		table t = {known[i].f, buf};
		memset(buf, 0xFF, size); /* what the firmware does not fill */
		/* struct metrics_table_header: structure_size, format_revision, content_revision */
		put_le(buf, size, 2);
		buf[2] = known[i].format;
		buf[3] = known[i].content;
		if (known[i].format == 1)
			fill_v1(&t, v);
		else
			fill_v2(&t, v);
		return size;
	}
	return 0;
}

uint64_t sim_amdm_throttle_bits(unsigned long long nvml_reasons, bool apu)
{
	/* SMU_THROTTLER_*_BIT of the kernel's amdgpu_smu.h */
	enum { PPT0 = 0, SPL = 4, TEMP_GPU = 32, TEMP_HOTSPOT = 36, VRHOT0 = 44, PROCHOT_GFX = 47 };
	uint64_t out = 0;
	if (nvml_reasons & nvmlClocksEventReasonSwPowerCap)
		out |= 1ull << (apu ? SPL : PPT0);
	if (nvml_reasons & nvmlClocksEventReasonSwThermalSlowdown)
		out |= 1ull << (apu ? TEMP_GPU : TEMP_HOTSPOT);
	if (nvml_reasons & nvmlClocksThrottleReasonHwThermalSlowdown)
		out |= 1ull << VRHOT0;
	if (nvml_reasons & nvmlClocksThrottleReasonHwSlowdown)
		out |= 1ull << PROCHOT_GFX;
	return out;
}

int sim_amdm_write(const char *dev, int version, const sim_amdm *v)
{
	uint8_t buf[SIM_AMDM_MAX], old[SIM_AMDM_MAX + 1];
	size_t n = sim_amdm_encode(version, v, buf);
	if (n == 0)
		return 0;
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	if ((size_t)snprintf(path, sizeof path, "%s/gpu_metrics", dev) >= sizeof path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* unchanged: leave it (most readings repeat the last one) */
	FILE *f = fopen(path, "rb");
	if (f) {
		size_t had = fread(old, 1, sizeof old, f);
		fclose(f);
		if (had == n && memcmp(old, buf, n) == 0)
			return 0;
	}
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	f = fopen(tmp, "wb");
	if (!f)
		return -1;
	size_t wrote = fwrite(buf, 1, n, f);
	if (fclose(f) != 0 || wrote != n || rename(tmp, path) != 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}
