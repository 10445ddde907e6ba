/*
 * The gpu_metrics reader on the tables of tests/fixtures/amdgpu/gpu_metrics,
 * written by tests/fixtures/amdgpu/gen_gpu_metrics.py (its own offsets,
 * computed from the kernel's field lists, not from the reader's table).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "gpu/amdgpu.h"
#include "gpu/amdgpu_metrics.h"
#include "gpu/gpu_reasons.h"

#include <stdio.h>
#include <string.h>

#define TABLE(name) FIXTURES_DIR "/amdgpu/gpu_metrics/" name

static size_t load(const char *path, uint8_t *buf, size_t size)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("%s: cannot open", path);
	size_t n = fread(buf, 1, size, f);
	fclose(f);
	return n;
}

static bool parse_file(const char *path, amdgpu_metrics *m)
{
	uint8_t buf[1024];
	size_t n = load(path, buf, sizeof buf);
	return amdgpu_metrics_parse(buf, n, m);
}

static void assert_m(const amdgpu_metrics *m, amdgpu_metric k, double want)
{
	if (!m->ok[k])
		fail_msg("%s: absent, want %g", amdgpu_metric_name(k), want);
	if (m->v[k] < want - 1e-6 || m->v[k] > want + 1e-6)
		fail_msg("%s: %g, want %g", amdgpu_metric_name(k), m->v[k], want);
}

static void assert_none(const amdgpu_metrics *m)
{
	for (int k = 0; k < AMDGPU_M__COUNT; k++)
		if (m->ok[k])
			fail_msg("%s: %g, want absent", amdgpu_metric_name(k), m->v[k]);
	assert_false(m->throttle_ok);
}

static void test_v1_3_navi31(void **state)
{
	(void)state;
	amdgpu_metrics m;
	assert_true(parse_file(TABLE("v1_3_navi31.bin"), &m));
	assert_int_equal(m.structure_size, 120);
	assert_int_equal(m.format_revision, 1);
	assert_int_equal(m.content_revision, 3);
	assert_m(&m, AMDGPU_M_TEMP_EDGE, 61);
	assert_m(&m, AMDGPU_M_TEMP_HOTSPOT, 95);
	assert_m(&m, AMDGPU_M_TEMP_MEM, 72);
	assert_m(&m, AMDGPU_M_GFX_ACTIVITY, 99);
	assert_m(&m, AMDGPU_M_UMC_ACTIVITY, 41);
	assert_m(&m, AMDGPU_M_POWER_W, 339);
	assert_m(&m, AMDGPU_M_GFXCLK_MHZ, 2310);
	assert_m(&m, AMDGPU_M_SOCCLK_MHZ, 1200);
	assert_m(&m, AMDGPU_M_UCLK_MHZ, 1249);
	assert_true(m.throttle_ok);
	assert_int_equal(m.throttle_raw, 1ull << 0 | 1ull << 36 | 1ull << 16);
	/* power limit and hotspot limit; the current limit (TDC) has no NVIDIA meaning */
	assert_int_equal(amdgpu_throttle_reasons(m.throttle_raw),
	                 gpu_reason_bit(GPU_REASON_SW_POWER_CAP) |
	                     gpu_reason_bit(GPU_REASON_SW_THERMAL));
}

static void test_v1_3_idle_and_unsupported(void **state)
{
	(void)state;
	amdgpu_metrics m;
	assert_true(parse_file(TABLE("v1_3_idle.bin"), &m));
	assert_m(&m, AMDGPU_M_TEMP_EDGE, 38);
	assert_m(&m, AMDGPU_M_GFX_ACTIVITY, 0); /* a real 0 is present */
	assert_false(m.ok[AMDGPU_M_TEMP_MEM]);  /* 0xFFFF: not supported */
	assert_true(m.throttle_ok);
	assert_int_equal(m.throttle_raw, 0);
	assert_int_equal(amdgpu_throttle_reasons(0), 0);

	/* the layout is known, but the firmware filled nothing */
	assert_true(parse_file(TABLE("v1_3_unsupported.bin"), &m));
	assert_true(m.known);
	assert_none(&m);
}

static void test_v1_4_mi300x(void **state)
{
	(void)state;
	amdgpu_metrics m;
	assert_true(parse_file(TABLE("v1_4_mi300x.bin"), &m));
	assert_int_equal(m.structure_size, 288);
	assert_false(m.ok[AMDGPU_M_TEMP_EDGE]); /* MI300 has no edge sensor */
	assert_m(&m, AMDGPU_M_TEMP_HOTSPOT, 74);
	assert_m(&m, AMDGPU_M_TEMP_MEM, 66);
	assert_m(&m, AMDGPU_M_POWER_W, 653);
	assert_m(&m, AMDGPU_M_GFX_ACTIVITY, 100);
	assert_m(&m, AMDGPU_M_UMC_ACTIVITY, 57);
	assert_m(&m, AMDGPU_M_GFXCLK_MHZ, (2100.0 * 6 + 2080 + 2060) / 8);
	assert_m(&m, AMDGPU_M_SOCCLK_MHZ, 1143);
	assert_m(&m, AMDGPU_M_UCLK_MHZ, 1300);
	/* v1.4 has only the ASIC-dependent throttle bits: not read */
	assert_false(m.throttle_ok);
}

static void test_v1_5_mi300x_partition(void **state)
{
	(void)state;
	amdgpu_metrics m;
	assert_true(parse_file(TABLE("v1_5_mi300x_cpx.bin"), &m));
	assert_int_equal(m.structure_size, 360);
	assert_m(&m, AMDGPU_M_TEMP_HOTSPOT, 52);
	assert_m(&m, AMDGPU_M_TEMP_MEM, 48);
	assert_m(&m, AMDGPU_M_POWER_W, 211);
	assert_m(&m, AMDGPU_M_GFX_ACTIVITY, 37);
	/* only the two XCDs of the partition report a clock */
	assert_m(&m, AMDGPU_M_GFXCLK_MHZ, 1600);
	assert_m(&m, AMDGPU_M_SOCCLK_MHZ, 1143);
	assert_m(&m, AMDGPU_M_UCLK_MHZ, 900);
}

static void test_v2_apu(void **state)
{
	(void)state;
	amdgpu_metrics m;
	assert_true(parse_file(TABLE("v2_1_apu.bin"), &m));
	assert_int_equal(m.format_revision, 2);
	assert_m(&m, AMDGPU_M_TEMP_EDGE, 47.25);    /* centi-degrees */
	assert_m(&m, AMDGPU_M_GFX_ACTIVITY, 12.34); /* centi-percent */
	assert_m(&m, AMDGPU_M_POWER_W, 15.25);      /* mW */
	assert_m(&m, AMDGPU_M_GFXCLK_MHZ, 1600);
	assert_false(m.ok[AMDGPU_M_TEMP_HOTSPOT]);
	assert_false(m.ok[AMDGPU_M_UMC_ACTIVITY]);
	assert_false(m.throttle_ok); /* v2.1 has no independent throttle bits */

	assert_true(parse_file(TABLE("v2_2_apu_spl.bin"), &m));
	assert_m(&m, AMDGPU_M_TEMP_EDGE, 90.5);
	assert_m(&m, AMDGPU_M_GFX_ACTIVITY, 100);
	assert_m(&m, AMDGPU_M_POWER_W, 28);
	assert_true(m.throttle_ok);
	assert_int_equal(amdgpu_throttle_reasons(m.throttle_raw),
	                 gpu_reason_bit(GPU_REASON_SW_POWER_CAP) |
	                     gpu_reason_bit(GPU_REASON_HW_SLOWDOWN));
}

/* v1.0: 4 bytes of padding after the header, so every field sits 12 bytes later. */
static void test_v1_0_navi10(void **state)
{
	(void)state;
	amdgpu_metrics m;
	assert_true(parse_file(TABLE("v1_0_navi10.bin"), &m));
	assert_int_equal(m.structure_size, 80);
	assert_int_equal(m.content_revision, 0);
	assert_m(&m, AMDGPU_M_TEMP_EDGE, 58);
	assert_m(&m, AMDGPU_M_TEMP_HOTSPOT, 77);
	assert_m(&m, AMDGPU_M_TEMP_MEM, 70);
	assert_m(&m, AMDGPU_M_GFX_ACTIVITY, 87);
	assert_m(&m, AMDGPU_M_UMC_ACTIVITY, 30);
	assert_m(&m, AMDGPU_M_POWER_W, 160);
	assert_m(&m, AMDGPU_M_GFXCLK_MHZ, 1850);
	assert_m(&m, AMDGPU_M_SOCCLK_MHZ, 1000);
	assert_m(&m, AMDGPU_M_UCLK_MHZ, 875);
	assert_false(m.throttle_ok); /* only the ASIC-dependent throttle_status */
	assert_false(m.resid.ok);
	/* the 72-byte layout a 32-bit kernel would write is not the one known */
	assert_false(parse_file(TABLE("v1_0_size72.bin"), &m));
	assert_int_equal(m.structure_size, 72);
	assert_none(&m);
}

/* v2.0 (Renoir): the APU units, 4 bytes of padding after the header. */
static void test_v2_0_renoir(void **state)
{
	(void)state;
	amdgpu_metrics m;
	assert_true(parse_file(TABLE("v2_0_renoir.bin"), &m));
	assert_int_equal(m.structure_size, 120);
	assert_int_equal(m.format_revision, 2);
	assert_int_equal(m.content_revision, 0);
	assert_m(&m, AMDGPU_M_TEMP_EDGE, 51.25);
	assert_m(&m, AMDGPU_M_GFX_ACTIVITY, 45.67);
	assert_m(&m, AMDGPU_M_POWER_W, 9.75);
	assert_m(&m, AMDGPU_M_GFXCLK_MHZ, 1750);
	assert_m(&m, AMDGPU_M_SOCCLK_MHZ, 1200);
	assert_m(&m, AMDGPU_M_UCLK_MHZ, 1600);
	assert_false(m.ok[AMDGPU_M_TEMP_HOTSPOT]);
	assert_false(m.throttle_ok);
}

/* v3.0 (Strix): 32-bit socket power in mW, time-filtered clocks, no gfx activity read. */
static void test_v3_0_strix(void **state)
{
	(void)state;
	amdgpu_metrics m;
	assert_true(parse_file(TABLE("v3_0_strix.bin"), &m));
	assert_int_equal(m.structure_size, 264);
	assert_int_equal(m.format_revision, 3);
	assert_m(&m, AMDGPU_M_TEMP_EDGE, 63.5);
	assert_m(&m, AMDGPU_M_POWER_W, 84.25); /* more than a u16 of mW holds */
	assert_m(&m, AMDGPU_M_GFXCLK_MHZ, 2900);
	assert_m(&m, AMDGPU_M_SOCCLK_MHZ, 1400);
	assert_m(&m, AMDGPU_M_UCLK_MHZ, 2000);
	/* filled in the table, but centi-percent or percent by the firmware: not read */
	assert_false(m.ok[AMDGPU_M_GFX_ACTIVITY]);
	assert_false(m.ok[AMDGPU_M_UMC_ACTIVITY]);
	assert_false(m.throttle_ok);
	assert_false(m.resid.ok); /* its residencies have no accumulation counter */
}

/* v1.6 (MI300): the clocks and the residency counters at their offsets. */
static void test_v1_6_mi300x(void **state)
{
	(void)state;
	amdgpu_metrics m;
	assert_true(parse_file(TABLE("v1_6_mi300x_t0.bin"), &m));
	assert_int_equal(m.structure_size, 384);
	assert_m(&m, AMDGPU_M_TEMP_HOTSPOT, 81);
	assert_m(&m, AMDGPU_M_POWER_W, 748);
	assert_m(&m, AMDGPU_M_GFXCLK_MHZ, 1900);
	assert_m(&m, AMDGPU_M_SOCCLK_MHZ, 1143);
	assert_m(&m, AMDGPU_M_UCLK_MHZ, 1300);
	assert_false(m.throttle_ok);
	assert_true(m.resid.ok);
	assert_int_equal(m.resid.acc, 100000);
	assert_int_equal(m.resid.res[AMDGPU_RES_PROCHOT], 0);
	assert_int_equal(m.resid.res[AMDGPU_RES_PPT], 5000);
	assert_int_equal(m.resid.res[AMDGPU_RES_SOCKET_THM], 0);
	assert_false(m.resid.res_ok[AMDGPU_RES_VR_THM]); /* all ones: not supported */
	assert_int_equal(m.resid.res[AMDGPU_RES_HBM_THM], 200);
	for (int k = 0; k < AMDGPU_RES__COUNT; k++)
		assert_int_equal(m.resid.res_ok[k], k != AMDGPU_RES_VR_THM);
	assert_string_equal(amdgpu_residency_name(AMDGPU_RES_HBM_THM), "hbm_thm_residency_acc");
	/* other versions carry none */
	assert_true(parse_file(TABLE("v1_5_mi300x_cpx.bin"), &m));
	assert_false(m.resid.ok);
}

/* Unknown versions, wrong sizes and short files give nothing, never guesses. */
static void test_not_trusted(void **state)
{
	(void)state;
	amdgpu_metrics m;
	assert_false(parse_file(TABLE("v1_9_unknown.bin"), &m));
	assert_true(m.header_ok);
	assert_int_equal(m.content_revision, 9);
	assert_false(m.known);
	assert_none(&m);
	assert_false(parse_file(TABLE("v1_3_wrong_size.bin"), &m));
	assert_int_equal(m.structure_size, 128);
	assert_none(&m);
	assert_false(parse_file(TABLE("v1_3_short.bin"), &m));
	assert_none(&m);
	assert_false(parse_file(TABLE("tiny.bin"), &m));
	assert_false(m.header_ok);
	assert_none(&m);
	assert_false(amdgpu_metrics_parse(NULL, 0, &m));
}

static void test_throttle_map(void **state)
{
	(void)state;
	uint64_t pw = gpu_reason_bit(GPU_REASON_SW_POWER_CAP);
	uint64_t th = gpu_reason_bit(GPU_REASON_SW_THERMAL);
	for (unsigned b = 0; b < 8; b++)
		assert_int_equal(amdgpu_throttle_reasons(1ull << b), pw);
	for (unsigned b = 16; b < 24; b++) /* TDC, EDC, APCC: current limits */
		assert_int_equal(amdgpu_throttle_reasons(1ull << b), 0);
	for (unsigned b = 32; b < 44; b++)
		assert_int_equal(amdgpu_throttle_reasons(1ull << b), th);
	assert_int_equal(amdgpu_throttle_reasons(1ull << 44),
	                 gpu_reason_bit(GPU_REASON_HW_THERMAL));
	assert_int_equal(amdgpu_throttle_reasons(1ull << 46),
	                 gpu_reason_bit(GPU_REASON_HW_SLOWDOWN));
	assert_int_equal(amdgpu_throttle_reasons(1ull << 56 | 1ull << 57 | 1ull << 12), 0);
	assert_string_equal(amdgpu_throttle_name(36), "temp_hotspot");
	assert_string_equal(amdgpu_throttle_group(36), "thermal");
	assert_string_equal(amdgpu_throttle_group(17), "current");
	assert_string_equal(amdgpu_throttle_group(5), "power");
	assert_string_equal(amdgpu_throttle_group(57), "other");
	assert_null(amdgpu_throttle_name(12));
	assert_null(amdgpu_throttle_name(64));
}

/* The reader's one reading of a card takes the table's throttle status. */
static void test_read_card(void **state)
{
	(void)state;
	amdgpu_card cards[4];
	assert_int_equal(amdgpu_discover(FIXTURES_DIR "/amdgpu/rx7900xtx", cards, 4), 1);
	amdgpu_metrics m;
	assert_true(amdgpu_metrics_read(cards[0].dev_path, &m));
	assert_m(&m, AMDGPU_M_TEMP_HOTSPOT, 95);
	amdgpu_values v;
	amdgpu_read(&cards[0], &v);
	assert_true(v.ok[AMD_THROTTLE_REASONS]);
	assert_int_equal((uint64_t)v.v[AMD_THROTTLE_REASONS],
	                 gpu_reason_bit(GPU_REASON_SW_POWER_CAP) |
	                     gpu_reason_bit(GPU_REASON_SW_THERMAL));
	/* the hwmon sensors stay what the reading reports */
	assert_true(v.ok[AMD_TEMP_JUNCTION]);
	/* a card without the file: nothing */
	assert_int_equal(amdgpu_discover(FIXTURES_DIR "/amdgpu/mi300x", cards, 4), 2);
	assert_false(amdgpu_metrics_read(cards[0].dev_path, &m));
	amdgpu_read(&cards[0], &v);
	assert_false(v.ok[AMD_THROTTLE_REASONS]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_v1_3_navi31),  cmocka_unit_test(test_v1_3_idle_and_unsupported),
	    cmocka_unit_test(test_v1_4_mi300x),  cmocka_unit_test(test_v1_5_mi300x_partition),
	    cmocka_unit_test(test_v2_apu),       cmocka_unit_test(test_not_trusted),
	    cmocka_unit_test(test_throttle_map), cmocka_unit_test(test_read_card),
	    cmocka_unit_test(test_v1_0_navi10),  cmocka_unit_test(test_v2_0_renoir),
	    cmocka_unit_test(test_v3_0_strix),   cmocka_unit_test(test_v1_6_mi300x),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
