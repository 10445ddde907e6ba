/*
 * MI300's throttle reasons from gpu_metrics v1.6's residency counters: the
 * interval between two readings (amdgpu_residency_reasons), the mapping onto
 * the metric table (amdgpu_to_gpu_values) and the device layer keeping each
 * card's previous reading between samples (gpu_sample on a tree whose table
 * is rewritten between them).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "gpu/amdgpu.h"
#include "gpu/amdgpu_map.h"
#include "gpu/amdgpu_metrics.h"
#include "gpu/gpu.h"
#include "gpu/gpu_reasons.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TABLE(name) FIXTURES_DIR "/amdgpu/gpu_metrics/" name

static uint64_t bit(gpu_reason r)
{
	return gpu_reason_bit(r);
}

#define PWR bit(GPU_REASON_SW_POWER_CAP)
#define STH bit(GPU_REASON_SW_THERMAL)
#define HTH bit(GPU_REASON_HW_THERMAL)
#define HSL bit(GPU_REASON_HW_SLOWDOWN)
#define ALL (PWR | STH | HTH | HSL)

/* A reading with every counter supported: acc, then prochot, ppt, socket, vr, hbm. */
static amdgpu_residency rd(uint32_t acc, uint32_t pro, uint32_t ppt, uint32_t sock, uint32_t vr,
                           uint32_t hbm)
{
	amdgpu_residency r = {.ok = true, .acc = acc, .res = {pro, ppt, sock, vr, hbm}};
	for (int k = 0; k < AMDGPU_RES__COUNT; k++)
		r.res_ok[k] = 1;
	return r;
}

static void test_first_reading(void **state)
{
	(void)state;
	amdgpu_residency none = {0}, cur = rd(1000, 0, 50, 0, 0, 0);
	uint64_t r = 99, k = 99;
	/* no previous reading: no interval, so n/a, never "not throttled" */
	assert_false(amdgpu_residency_reasons(&none, &cur, &r, &k));
	assert_int_equal(r, 0);
	assert_int_equal(k, 0);
	assert_false(amdgpu_residency_reasons(NULL, &cur, &r, &k));
	/* a table without counters (another version) after one with them: n/a too */
	assert_false(amdgpu_residency_reasons(&cur, &none, &r, &k));
}

static void test_advance_and_stall(void **state)
{
	(void)state;
	uint64_t r, k;
	amdgpu_residency a = rd(1000, 3, 50, 7, 0, 9), b = rd(1100, 3, 150, 7, 0, 9);
	/* PPT advanced by the whole interval: power capped; the others stood still */
	assert_true(amdgpu_residency_reasons(&a, &b, &r, &k));
	assert_int_equal(r, PWR);
	assert_int_equal(k, ALL);
	/* one cycle of ten is enough: active over the interval */
	b = rd(1010, 4, 50, 7, 0, 9);
	assert_true(amdgpu_residency_reasons(&a, &b, &r, &k));
	assert_int_equal(r, HSL);
	assert_int_equal(k, ALL);
	/* each counter to its reason */
	b = rd(1010, 3, 50, 8, 0, 9);
	assert_true(amdgpu_residency_reasons(&a, &b, &r, &k));
	assert_int_equal(r, STH);
	b = rd(1010, 3, 50, 7, 1, 9);
	assert_true(amdgpu_residency_reasons(&a, &b, &r, &k));
	assert_int_equal(r, HTH);
	b = rd(1010, 3, 50, 7, 0, 10);
	assert_true(amdgpu_residency_reasons(&a, &b, &r, &k));
	assert_int_equal(r, STH);
	/* every counter stalled while the accumulation counter ran: nothing throttled, known */
	b = rd(1010, 3, 50, 7, 0, 9);
	assert_true(amdgpu_residency_reasons(&a, &b, &r, &k));
	assert_int_equal(r, 0);
	assert_int_equal(k, ALL);
}

static void test_no_interval(void **state)
{
	(void)state;
	uint64_t r, k;
	amdgpu_residency a = rd(1000, 3, 50, 7, 0, 9), b;
	/* the firmware has not counted since: no interval */
	b = rd(1000, 3, 50, 7, 0, 9);
	assert_false(amdgpu_residency_reasons(&a, &b, &r, &k));
	assert_int_equal(k, 0);
	/* reset (driver reload, GPU reset): the counters start again below */
	b = rd(20, 0, 20, 0, 0, 0);
	assert_false(amdgpu_residency_reasons(&a, &b, &r, &k));
	assert_int_equal(k, 0);
	/* a 32-bit wrap looks the same and is treated the same */
	a = rd(0xFFFFFFF0u, 3, 50, 7, 0, 9);
	b = rd(0x10, 3, 60, 7, 0, 9);
	assert_false(amdgpu_residency_reasons(&a, &b, &r, &k));
	assert_int_equal(r, 0);
	assert_int_equal(k, 0);
}

static void test_unknown_counters(void **state)
{
	(void)state;
	uint64_t r, k;
	amdgpu_residency a = rd(1000, 3, 50, 7, 0, 9), b = rd(1010, 3, 50, 7, 0, 9);
	/* VR thermal not supported in one reading: hw_thermal is not known */
	b.res_ok[AMDGPU_RES_VR_THM] = 0;
	assert_true(amdgpu_residency_reasons(&a, &b, &r, &k));
	assert_int_equal(r, 0);
	assert_int_equal(k, PWR | STH | HSL);
	/* one thermal counter unsupported and the other still: sw_thermal unknown ... */
	b = rd(1010, 3, 50, 7, 0, 9);
	a.res_ok[AMDGPU_RES_HBM_THM] = 0;
	assert_true(amdgpu_residency_reasons(&a, &b, &r, &k));
	assert_int_equal(k, PWR | HTH | HSL);
	/* ... but the other advancing is enough to call it active */
	b.res[AMDGPU_RES_SOCKET_THM] = 8;
	assert_true(amdgpu_residency_reasons(&a, &b, &r, &k));
	assert_int_equal(r, STH);
	assert_int_equal(k, ALL);
	/* a residency that went back, or ran ahead of the accumulation counter: not known */
	a = rd(1000, 3, 50, 7, 0, 9);
	b = rd(1010, 2, 61, 7, 0, 9);
	assert_true(amdgpu_residency_reasons(&a, &b, &r, &k));
	assert_int_equal(r, 0);
	assert_int_equal(k, STH | HTH);
}

/* The two fixture tables: PPT advanced by 7 of 10 cycles, HBM stalled, VR not supported. */
static amdgpu_residency from_file(const char *path)
{
	uint8_t buf[1024];
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("%s: cannot open", path);
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	amdgpu_metrics m;
	assert_true(amdgpu_metrics_parse(buf, n, &m));
	return m.resid;
}

static void test_fixture_tables_to_metrics(void **state)
{
	(void)state;
	amdgpu_residency a = from_file(TABLE("v1_6_mi300x_t0.bin")),
	                 b = from_file(TABLE("v1_6_mi300x_t1.bin"));
	uint64_t r, k;
	assert_true(amdgpu_residency_reasons(&a, &b, &r, &k));
	assert_int_equal(r, PWR);
	assert_int_equal(k, PWR | STH | HSL);
	/* as the metric table shows them: the unknown reason n/a, not 0 */
	amdgpu_values v;
	memset(&v, 0, sizeof v);
	v.v[AMD_THROTTLE_REASONS] = (double)r;
	v.ok[AMD_THROTTLE_REASONS] = 1;
	v.v[AMD_THROTTLE_KNOWN] = (double)k;
	v.ok[AMD_THROTTLE_KNOWN] = 1;
	gpu_static st;
	memset(&st, 0, sizeof st);
	gpu_values o;
	memset(&o, 0, sizeof o);
	amdgpu_to_gpu_values(&st, &v, &o);
	assert_true(o.ok[GM_CLK_REASONS]);
	assert_int_equal((uint64_t)o.v[GM_CLK_REASONS], PWR);
	assert_true(o.ok[GM_CLK_R_SW_POWER] && o.v[GM_CLK_R_SW_POWER] == 1);
	assert_true(o.ok[GM_CLK_R_SW_THERMAL] && o.v[GM_CLK_R_SW_THERMAL] == 0);
	assert_true(o.ok[GM_CLK_R_HW_SLOW] && o.v[GM_CLK_R_HW_SLOW] == 0);
	assert_false(o.ok[GM_CLK_R_HW_THERMAL]);
	/* without AMD_THROTTLE_KNOWN (indep_throttle_status) all four are known */
	v.ok[AMD_THROTTLE_KNOWN] = 0;
	amdgpu_to_gpu_values(&st, &v, &o);
	assert_true(o.ok[GM_CLK_R_HW_THERMAL] && o.v[GM_CLK_R_HW_THERMAL] == 0);
}

/* ---- the device layer keeps each card's previous reading between samples ---- */

static char root[256], dev[400];

static void put(const char *name, const char *text)
{
	char p[600];
	snprintf(p, sizeof p, "%s/%s", dev, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* The card's gpu_metrics becomes a copy of fixture table NAME, its counters moved. */
static void table(const char *name, uint32_t acc, uint32_t ppt)
{
	uint8_t buf[384];
	FILE *f = fopen(name, "rb");
	assert_non_null(f);
	assert_int_equal(fread(buf, 1, sizeof buf, f), sizeof buf);
	fclose(f);
	/* accumulation_counter at 104, ppt_residency_acc at 112, little endian */
	for (int i = 0; i < 4; i++) {
		buf[104 + i] = (uint8_t)(acc >> (8 * i));
		buf[112 + i] = (uint8_t)(ppt >> (8 * i));
	}
	char p[600];
	snprintf(p, sizeof p, "%s/gpu_metrics.new", dev);
	f = fopen(p, "wb");
	assert_non_null(f);
	fwrite(buf, 1, sizeof buf, f);
	fclose(f);
	char to[600];
	snprintf(to, sizeof to, "%s/gpu_metrics", dev);
	assert_int_equal(rename(p, to), 0);
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof root, "/tmp/gpuwhy-resid.XXXXXX");
	if (!mkdtemp(root))
		return -1;
	snprintf(dev, sizeof dev, "%s/sys/class/drm/card0/device", root);
	char cmd[600];
	snprintf(cmd, sizeof cmd, "mkdir -p %s", dev);
	if (system(cmd) != 0)
		return -1;
	put("vendor", "0x1002\n");
	put("device", "0x74a1\n");
	put("uevent", "DRIVER=amdgpu\nPCI_SLOT_NAME=0000:1b:00.0\n");
	put("mem_info_vram_total", "206141652992\n");
	put("mem_info_vram_used", "1048576\n");
	setenv("GPUWHY_SYSFS_ROOT", root, 1);
	unsetenv("GPUWHY_NVML");
	unsetenv("GPUWHY_SIM_SCENARIO");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unsetenv("GPUWHY_SYSFS_ROOT");
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf %s", root);
	return system(cmd) == 0 ? 0 : -1;
}

/* The one AMD GPU of the context (a real NVIDIA driver's GPUs would come first). */
static int amd_index(gpu_ctx *c)
{
	for (int i = 0; i < gpu_count(c); i++)
		if (!strcmp(gpu_static_info(c, i)->vendor, "amd"))
			return i;
	fail_msg("no AMD GPU found below %s", root);
	return -1;
}

static void assert_power_capped(gpu_ctx *c, int i, int want)
{
	gpu_values v;
	gpu_sample(c, i, &v);
	if (want < 0) {
		if (v.ok[GM_CLK_REASONS] || v.ok[GM_CLK_R_SW_POWER])
			fail_msg("reasons present (%g), want n/a", v.v[GM_CLK_REASONS]);
		return;
	}
	assert_true(v.ok[GM_CLK_REASONS]);
	assert_true(v.ok[GM_CLK_R_SW_POWER]);
	assert_int_equal((int)v.v[GM_CLK_R_SW_POWER], want);
	assert_false(v.ok[GM_CLK_R_HW_THERMAL]); /* the fixture's VR counter is not supported */
}

static void test_device_layer_intervals(void **state)
{
	(void)state;
	const char *t0 = TABLE("v1_6_mi300x_t0.bin");
	table(t0, 1000, 50);
	gpu_ctx *c;
	assert_int_equal(gpu_open(NULL, &c), 0);
	int i = amd_index(c);
	assert_power_capped(c, i, -1); /* first sample: no interval */
	table(t0, 1010, 57);
	/* a memory reading between samples is no sample: the interval stays the sampler's */
	gpu_memory mem;
	assert_int_equal(gpu_read_memory(c, i, &mem), 0);
	assert_power_capped(c, i, 1);
	table(t0, 1020, 57);
	assert_power_capped(c, i, 0);  /* stalled residency, running counter */
	assert_power_capped(c, i, -1); /* the firmware has not counted since */
	table(t0, 5, 0);
	assert_power_capped(c, i, -1); /* reset */
	table(t0, 15, 1);
	assert_power_capped(c, i, 1); /* counting again from the reset */
	gpu_close(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_first_reading),
	    cmocka_unit_test(test_advance_and_stall),
	    cmocka_unit_test(test_no_interval),
	    cmocka_unit_test(test_unknown_counters),
	    cmocka_unit_test(test_fixture_tables_to_metrics),
	    cmocka_unit_test_setup_teardown(test_device_layer_intervals, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
