/*
 * amdgpu_metrics.c - the gpu_metrics table by its header (see amdgpu_metrics.h).
 *
 * Offsets are byte offsets into the table as the kernel lays it out on a
 * little-endian machine with natural alignment (every field at a multiple of
 * its size, the struct padded to its largest member): the C layout of the
 * 64-bit kernels amdgpu runs on (x86-64, arm64, ppc64le). The kernel's
 * structs are not packed, so v1.0 and v2.0, which put a u64 right after the
 * 4-byte header ("not naturally aligned", the header says), carry 4 bytes of
 * padding there: 80 and 120 bytes. A 32-bit x86 kernel aligns a u64 to 4 and
 * would lay them out in 72 and 116 bytes; no such table is read (its size is
 * not the one known). The offsets are written out here rather than taken from
 * a C struct of ours so that the reader never depends on this compiler's
 * layout, and each layout carries its total size: a table whose header names
 * a known version but another size is not trusted. The units differ by
 * format: v1 (dGPUs) reports degrees C, W and %, v2 and v3 (APUs)
 * centi-degrees, mW and centi-%.
 */
#include "gpu/amdgpu_metrics.h"

#include "gpu/gpu_reasons.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

typedef enum { F_U16, F_U32 } ftype;

/* One value of a layout: COUNT consecutive fields averaged over those supported. */
typedef struct {
	amdgpu_metric m;
	uint16_t off;
	uint8_t type, count;
	double scale;
} field;

typedef struct {
	uint8_t format, content;
	uint16_t size;
	uint16_t throttle_off; /* indep_throttle_status (u64), 0 when the layout has none */
	const field *f;
	size_t nf;
} layout;

/* v1.0 (the first kernels with gpu_metrics: Navi 1x, Sienna Cichlid, MI100): the timestamp
 * first, padded after the header. */
static const field v1_0[] = {
    {AMDGPU_M_TEMP_EDGE, 16, F_U16, 1, 1},    {AMDGPU_M_TEMP_HOTSPOT, 18, F_U16, 1, 1},
    {AMDGPU_M_TEMP_MEM, 20, F_U16, 1, 1},     {AMDGPU_M_GFX_ACTIVITY, 28, F_U16, 1, 1},
    {AMDGPU_M_UMC_ACTIVITY, 30, F_U16, 1, 1}, {AMDGPU_M_POWER_W, 34, F_U16, 1, 1},
    {AMDGPU_M_GFXCLK_MHZ, 54, F_U16, 1, 1},   {AMDGPU_M_SOCCLK_MHZ, 56, F_U16, 1, 1},
    {AMDGPU_M_UCLK_MHZ, 58, F_U16, 1, 1},
};

/* v1.1 to v1.3 share their first 96 bytes (dGPUs from Navi and MI100/MI200). */
static const field v1_dgpu[] = {
    {AMDGPU_M_TEMP_EDGE, 4, F_U16, 1, 1},     {AMDGPU_M_TEMP_HOTSPOT, 6, F_U16, 1, 1},
    {AMDGPU_M_TEMP_MEM, 8, F_U16, 1, 1},      {AMDGPU_M_GFX_ACTIVITY, 16, F_U16, 1, 1},
    {AMDGPU_M_UMC_ACTIVITY, 18, F_U16, 1, 1}, {AMDGPU_M_POWER_W, 22, F_U16, 1, 1},
    {AMDGPU_M_GFXCLK_MHZ, 54, F_U16, 1, 1},   {AMDGPU_M_SOCCLK_MHZ, 56, F_U16, 1, 1},
    {AMDGPU_M_UCLK_MHZ, 58, F_U16, 1, 1},
};

/*
 * v1.4 to v1.6 (MI300): no edge sensor, current socket power, one gfx clock per
 * XCD (8) and SoC clock per instance (4); they differ only in where the clocks sit.
 */
#define MI300_COMMON                                                                               \
	{AMDGPU_M_TEMP_HOTSPOT, 4, F_U16, 1, 1}, {AMDGPU_M_TEMP_MEM, 6, F_U16, 1, 1},              \
	    {AMDGPU_M_POWER_W, 10, F_U16, 1, 1}, {AMDGPU_M_GFX_ACTIVITY, 12, F_U16, 1, 1},         \
	{                                                                                          \
		AMDGPU_M_UMC_ACTIVITY, 14, F_U16, 1, 1                                             \
	}
static const field v1_4[] = {MI300_COMMON,
                             {AMDGPU_M_GFXCLK_MHZ, 240, F_U16, 8, 1},
                             {AMDGPU_M_SOCCLK_MHZ, 256, F_U16, 4, 1},
                             {AMDGPU_M_UCLK_MHZ, 280, F_U16, 1, 1}};
static const field v1_5[] = {MI300_COMMON,
                             {AMDGPU_M_GFXCLK_MHZ, 312, F_U16, 8, 1},
                             {AMDGPU_M_SOCCLK_MHZ, 328, F_U16, 4, 1},
                             {AMDGPU_M_UCLK_MHZ, 352, F_U16, 1, 1}};
static const field v1_6[] = {MI300_COMMON,
                             {AMDGPU_M_GFXCLK_MHZ, 336, F_U16, 8, 1},
                             {AMDGPU_M_SOCCLK_MHZ, 352, F_U16, 4, 1},
                             {AMDGPU_M_UCLK_MHZ, 376, F_U16, 1, 1}};

/*
 * v2.1 to v2.4 (APUs) share their first 120 bytes; centi-degrees, mW, centi-%.
 * The gfx temperature is the one the driver itself reports as the edge.
 */
static const field v2_apu[] = {
    {AMDGPU_M_TEMP_EDGE, 4, F_U16, 1, 0.01}, {AMDGPU_M_GFX_ACTIVITY, 28, F_U16, 1, 0.01},
    {AMDGPU_M_POWER_W, 40, F_U16, 1, 0.001}, {AMDGPU_M_GFXCLK_MHZ, 76, F_U16, 1, 1},
    {AMDGPU_M_SOCCLK_MHZ, 78, F_U16, 1, 1},  {AMDGPU_M_UCLK_MHZ, 80, F_U16, 1, 1},
};

/* v2.0 (the same kernels: Renoir, Van Gogh): v2.1's fields with the timestamp first, padded. */
static const field v2_0[] = {
    {AMDGPU_M_TEMP_EDGE, 16, F_U16, 1, 0.01}, {AMDGPU_M_GFX_ACTIVITY, 40, F_U16, 1, 0.01},
    {AMDGPU_M_POWER_W, 44, F_U16, 1, 0.001},  {AMDGPU_M_GFXCLK_MHZ, 80, F_U16, 1, 1},
    {AMDGPU_M_SOCCLK_MHZ, 82, F_U16, 1, 1},   {AMDGPU_M_UCLK_MHZ, 84, F_U16, 1, 1},
};

/*
 * v3.0 (Strix and later APUs): centi-degrees, socket power in mW as a u32, and
 * only time-filtered clocks (the ones the driver itself reports as current).
 * Its gfx activity is not read: the driver copies the firmware's value, which
 * is centi-percent up to firmware 0x5d4600 and percent after it (the
 * driver's own sensor divides by 100 or not by the firmware version), and
 * the table does not say which firmware wrote it.
 */
static const field v3_0[] = {
    {AMDGPU_M_TEMP_EDGE, 4, F_U16, 1, 0.01}, {AMDGPU_M_POWER_W, 112, F_U32, 1, 0.001},
    {AMDGPU_M_GFXCLK_MHZ, 174, F_U16, 1, 1}, {AMDGPU_M_SOCCLK_MHZ, 176, F_U16, 1, 1},
    {AMDGPU_M_UCLK_MHZ, 186, F_U16, 1, 1},
};

/* v1.6: accumulation_counter, then the residencies in amdgpu_res order. */
#define V1_6_ACC_OFF 104

#define N(a) (sizeof(a) / sizeof *(a))
static const layout layouts[] = {
    {1, 0, 80, 0, v1_0, N(v1_0)},        {2, 0, 120, 0, v2_0, N(v2_0)},
    {3, 0, 264, 0, v3_0, N(v3_0)},       {1, 1, 96, 0, v1_dgpu, N(v1_dgpu)},
    {1, 2, 104, 0, v1_dgpu, N(v1_dgpu)}, {1, 3, 120, 112, v1_dgpu, N(v1_dgpu)},
    {1, 4, 288, 0, v1_4, N(v1_4)},       {1, 5, 360, 0, v1_5, N(v1_5)},
    {1, 6, 384, 0, v1_6, N(v1_6)},       {2, 1, 120, 0, v2_apu, N(v2_apu)},
    {2, 2, 128, 120, v2_apu, N(v2_apu)}, {2, 3, 152, 120, v2_apu, N(v2_apu)},
    {2, 4, 168, 120, v2_apu, N(v2_apu)},
};

static unsigned get16(const uint8_t *p)
{
	return (unsigned)p[0] | (unsigned)p[1] << 8;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) | (uint32_t)get16(p + 2) << 16;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static const layout *find_layout(unsigned format, unsigned content)
{
	for (size_t i = 0; i < N(layouts); i++)
		if (layouts[i].format == format && layouts[i].content == content)
			return &layouts[i];
	return NULL;
}

/* One value: the mean of the fields of f the driver filled (all ones: not supported). */
static void read_field(const uint8_t *b, const field *f, amdgpu_metrics *o)
{
	double sum = 0;
	int n = 0;
	for (int i = 0; i < f->count; i++) {
		const uint8_t *p = b + f->off + (size_t)i * (f->type == F_U16 ? 2 : 4);
		uint32_t v = f->type == F_U16 ? get16(p) : get32(p);
		if ((f->type == F_U16 && v == 0xFFFFu) || (f->type == F_U32 && v == 0xFFFFFFFFu))
			continue;
		sum += (double)v;
		n++;
	}
	if (n == 0)
		return;
	o->v[f->m] = sum / n * f->scale;
	o->ok[f->m] = 1;
}

/* v1.6's counters; all ones is "not supported". */
static void read_residency(const uint8_t *b, amdgpu_residency *r)
{
	r->acc = get32(b + V1_6_ACC_OFF);
	r->ok = r->acc != UINT32_MAX;
	for (int k = 0; k < AMDGPU_RES__COUNT; k++) {
		r->res[k] = get32(b + V1_6_ACC_OFF + 4 + 4 * k);
		r->res_ok[k] = r->ok && r->res[k] != UINT32_MAX;
		if (!r->res_ok[k])
			r->res[k] = 0;
	}
	if (!r->ok)
		r->acc = 0;
}

bool amdgpu_metrics_parse(const void *buf, size_t len, amdgpu_metrics *o)
{
	memset(o, 0, sizeof *o);
	const uint8_t *b = buf;
	if (!b || len < 4)
		return false;
	o->header_ok = true;
	o->structure_size = get16(b);
	o->format_revision = b[2];
	o->content_revision = b[3];
	const layout *l = find_layout(o->format_revision, o->content_revision);
	if (!l || o->structure_size != l->size || len < l->size)
		return false;
	o->known = true;
	for (size_t i = 0; i < l->nf; i++)
		read_field(b, &l->f[i], o);
	if (l->format == 1 && l->content == 6)
		read_residency(b, &o->resid);
	if (l->throttle_off) {
		uint64_t t = get64(b + l->throttle_off);
		if (t != UINT64_MAX) {
			o->throttle_ok = true;
			o->throttle_raw = t;
		}
	}
	return true;
}

bool amdgpu_metrics_read(const char *dev_path, amdgpu_metrics *o)
{
	memset(o, 0, sizeof *o);
	char path[PATH_MAX];
	if (!dev_path || !*dev_path ||
	    (size_t)snprintf(path, sizeof path, "%s/gpu_metrics", dev_path) >= sizeof path)
		return false;
	FILE *f = fopen(path, "rb");
	if (!f)
		return false;
	/* the largest layout known is 384 bytes; newer ones are longer, never needed whole */
	uint8_t buf[4096];
	size_t n = fread(buf, 1, sizeof buf, f);
	bool err = ferror(f);
	fclose(f);
	return !err && amdgpu_metrics_parse(buf, n, o);
}

const char *amdgpu_metric_name(amdgpu_metric m)
{
	static const char *const names[AMDGPU_M__COUNT] = {
	    [AMDGPU_M_TEMP_EDGE] = "temp_edge",       [AMDGPU_M_TEMP_HOTSPOT] = "temp_hotspot",
	    [AMDGPU_M_TEMP_MEM] = "temp_mem",         [AMDGPU_M_POWER_W] = "socket_power",
	    [AMDGPU_M_GFX_ACTIVITY] = "gfx_activity", [AMDGPU_M_UMC_ACTIVITY] = "umc_activity",
	    [AMDGPU_M_GFXCLK_MHZ] = "gfxclk",         [AMDGPU_M_UCLK_MHZ] = "uclk",
	    [AMDGPU_M_SOCCLK_MHZ] = "socclk",
	};
	return (unsigned)m < AMDGPU_M__COUNT && names[m] ? names[m] : "?";
}

/* The kernel's ASIC-independent throttler bits (SMU_THROTTLER_*_BIT). */
static const char *const throttle_names[64] = {
    [0] = "ppt0",          [1] = "ppt1",          [2] = "ppt2",          [3] = "ppt3",
    [4] = "spl",           [5] = "fppt",          [6] = "sppt",          [7] = "sppt_apu",
    [16] = "tdc_gfx",      [17] = "tdc_soc",      [18] = "tdc_mem",      [19] = "tdc_vdd",
    [20] = "tdc_cvip",     [21] = "edc_cpu",      [22] = "edc_gfx",      [23] = "apcc",
    [32] = "temp_gpu",     [33] = "temp_core",    [34] = "temp_mem",     [35] = "temp_edge",
    [36] = "temp_hotspot", [37] = "temp_soc",     [38] = "temp_vr_gfx",  [39] = "temp_vr_soc",
    [40] = "temp_vr_mem0", [41] = "temp_vr_mem1", [42] = "temp_liquid0", [43] = "temp_liquid1",
    [44] = "vrhot0",       [45] = "vrhot1",       [46] = "prochot_cpu",  [47] = "prochot_gfx",
    [56] = "ppm",          [57] = "fit",
};

const char *amdgpu_throttle_name(unsigned bit)
{
	return bit < 64 ? throttle_names[bit] : NULL;
}

const char *amdgpu_throttle_group(unsigned bit)
{
	if (!amdgpu_throttle_name(bit))
		return NULL;
	if (bit < 16)
		return "power";
	if (bit < 32)
		return "current";
	if (bit < 56)
		return "thermal";
	return "other";
}

uint64_t amdgpu_throttle_reasons(uint64_t raw)
{
	uint64_t out = 0;
	for (unsigned bit = 0; bit < 64; bit++) {
		if (!(raw >> bit & 1) || !throttle_names[bit])
			continue;
		if (bit < 16)
			out |= gpu_reason_bit(GPU_REASON_SW_POWER_CAP);
		else if (bit >= 32 && bit <= 43)
			out |= gpu_reason_bit(GPU_REASON_SW_THERMAL);
		else if (bit == 44 || bit == 45)
			out |= gpu_reason_bit(GPU_REASON_HW_THERMAL);
		else if (bit == 46 || bit == 47)
			out |= gpu_reason_bit(GPU_REASON_HW_SLOWDOWN);
	}
	return out;
}

const char *amdgpu_residency_name(amdgpu_res k)
{
	static const char *const names[AMDGPU_RES__COUNT] = {
	    [AMDGPU_RES_PROCHOT] = "prochot_residency_acc",
	    [AMDGPU_RES_PPT] = "ppt_residency_acc",
	    [AMDGPU_RES_SOCKET_THM] = "socket_thm_residency_acc",
	    [AMDGPU_RES_VR_THM] = "vr_thm_residency_acc",
	    [AMDGPU_RES_HBM_THM] = "hbm_thm_residency_acc",
	};
	return (unsigned)k < AMDGPU_RES__COUNT ? names[k] : "?";
}

/* The reason each residency counter stands for (the limits amdgpu_throttle_reasons maps alike). */
static gpu_reason residency_reason(amdgpu_res k)
{
	switch (k) {
	case AMDGPU_RES_PROCHOT:
		return GPU_REASON_HW_SLOWDOWN;
	case AMDGPU_RES_PPT:
		return GPU_REASON_SW_POWER_CAP;
	case AMDGPU_RES_VR_THM:
		return GPU_REASON_HW_THERMAL;
	default:
		return GPU_REASON_SW_THERMAL; /* socket and HBM thermal limits */
	}
}

bool amdgpu_residency_reasons(const amdgpu_residency *prev, const amdgpu_residency *cur,
                              uint64_t *reasons, uint64_t *known)
{
	*reasons = *known = 0;
	if (!prev || !cur || !prev->ok || !cur->ok || cur->acc <= prev->acc)
		return false;
	uint32_t dacc = cur->acc - prev->acc;
	/* a reason is active when any of its counters advanced, idle when every one is known idle
	 */
	uint64_t active = 0, idle_known = 0, unknown = 0;
	for (int k = 0; k < AMDGPU_RES__COUNT; k++) {
		uint64_t bit = gpu_reason_bit(residency_reason((amdgpu_res)k));
		if (!prev->res_ok[k] || !cur->res_ok[k] || cur->res[k] < prev->res[k] ||
		    cur->res[k] - prev->res[k] > dacc)
			unknown |= bit;
		else if (cur->res[k] > prev->res[k])
			active |= bit;
		else
			idle_known |= bit;
	}
	*reasons = active;
	*known = active | (idle_known & ~unknown);
	return true;
}
