/*
 * The simulator's gpu_metrics encoder (sim/sim_amdmetrics.c): its layouts
 * against offsets of the kernel's struct gpu_metrics_v1_3 / v2_1 / v2_2
 * (kgd_pp_interface.h) written out here, and its tables read back by gpuwhy's
 * own reader (src/gpu/amdgpu_metrics.c), which neither side's code shares.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "gpu/amdgpu_metrics.h"
#include "gpu/gpu_reasons.h"
#include "nvml_abi.h"
#include "sim_amdmetrics.h"

static unsigned u16_at(const uint8_t *b, size_t off)
{
	return b[off] | (unsigned)b[off + 1] << 8;
}

static uint64_t u64_at(const uint8_t *b, size_t off)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | b[off + (size_t)i];
	return v;
}

static sim_amdm busy_card(void)
{
	sim_amdm v = {.temp_edge = 67.4,
	              .temp_hotspot = 79,
	              .temp_mem = 77,
	              .power_w = 312.07,
	              .gfx_pct = 99,
	              .umc_pct = 60,
	              .gfxclk = 2150,
	              .socclk = 1200,
	              .uclk = 1249,
	              .fan_rpm = 2250,
	              .indep_throttle = 1ull << 0 | 1ull << 36};
	return v;
}

static void test_v1_3_layout(void **state)
{
	(void)state;
	uint8_t b[SIM_AMDM_MAX];
	sim_amdm v = busy_card();
	assert_int_equal(sim_amdm_encode(SIM_AMDM_V1_3, &v, b), 120);
	/* metrics_table_header: structure_size, format_revision, content_revision */
	assert_int_equal(u16_at(b, 0), 120);
	assert_int_equal(b[2], 1);
	assert_int_equal(b[3], 3);
	assert_int_equal(u16_at(b, 4), 67);          /* temperature_edge */
	assert_int_equal(u16_at(b, 6), 79);          /* temperature_hotspot */
	assert_int_equal(u16_at(b, 8), 77);          /* temperature_mem */
	assert_int_equal(u16_at(b, 10), 0xFFFF);     /* temperature_vrgfx: not filled */
	assert_int_equal(u16_at(b, 16), 99);         /* average_gfx_activity */
	assert_int_equal(u16_at(b, 18), 60);         /* average_umc_activity */
	assert_int_equal(u16_at(b, 22), 312);        /* average_socket_power, W */
	assert_int_equal(u64_at(b, 24), UINT64_MAX); /* energy_accumulator */
	assert_int_equal(u16_at(b, 40), 2150);       /* average_gfxclk_frequency */
	assert_int_equal(u16_at(b, 54), 2150);       /* current_gfxclk */
	assert_int_equal(u16_at(b, 56), 1200);       /* current_socclk */
	assert_int_equal(u16_at(b, 58), 1249);       /* current_uclk */
	assert_int_equal(u16_at(b, 72), 2250);       /* current_fan_speed */
	assert_int_equal(u64_at(b, 112), 1ull << 0 | 1ull << 36); /* indep_throttle_status */
}

static void test_v2_layouts(void **state)
{
	(void)state;
	uint8_t b[SIM_AMDM_MAX];
	sim_amdm v = busy_card();
	v.indep_throttle = 1ull << 4;
	assert_int_equal(sim_amdm_encode(SIM_AMDM_V2_1, &v, b), 120);
	assert_int_equal(u16_at(b, 0), 120);
	assert_int_equal(b[2], 2);
	assert_int_equal(b[3], 1);
	assert_int_equal(u16_at(b, 4), 6740);   /* temperature_gfx, centi-degrees */
	assert_int_equal(u16_at(b, 6), 0xFFFF); /* temperature_soc */
	assert_int_equal(u16_at(b, 28), 9900);  /* average_gfx_activity, centi-% */
	assert_int_equal(u16_at(b, 40),
	                 0xFFFE); /* average_socket_power: 312 W in mW is kept below all ones */
	assert_int_equal(u16_at(b, 76), 2150);    /* current_gfxclk */
	assert_int_equal(u16_at(b, 78), 1200);    /* current_socclk */
	assert_int_equal(u16_at(b, 80), 1249);    /* current_uclk */
	assert_int_equal(u16_at(b, 112), 0xFFFF); /* fan_pwm: an APU has no fan */
	assert_int_equal(sim_amdm_encode(SIM_AMDM_V2_2, &v, b), 128);
	assert_int_equal(u16_at(b, 0), 128);
	assert_int_equal(b[3], 2);
	assert_int_equal(u64_at(b, 120), 1ull << 4); /* indep_throttle_status */
	assert_int_equal(sim_amdm_encode(SIM_AMDM_NONE, &v, b), 0);
	assert_int_equal(sim_amdm_encode(99, &v, b), 0);
}

/* gpuwhy's reader gets back what the simulator wrote, reasons included. */
static void test_read_back(void **state)
{
	(void)state;
	uint8_t b[SIM_AMDM_MAX];
	sim_amdm v = busy_card();
	v.temp_mem = NAN; /* not filled: absent, never 0 */
	amdgpu_metrics m;
	assert_true(amdgpu_metrics_parse(b, sim_amdm_encode(SIM_AMDM_V1_3, &v, b), &m));
	assert_true(m.known);
	assert_int_equal(m.v[AMDGPU_M_TEMP_EDGE], 67);
	assert_int_equal(m.v[AMDGPU_M_TEMP_HOTSPOT], 79);
	assert_false(m.ok[AMDGPU_M_TEMP_MEM]);
	assert_int_equal(m.v[AMDGPU_M_POWER_W], 312);
	assert_int_equal(m.v[AMDGPU_M_GFXCLK_MHZ], 2150);
	assert_true(m.throttle_ok);
	assert_int_equal(amdgpu_throttle_reasons(m.throttle_raw),
	                 gpu_reason_bit(GPU_REASON_SW_POWER_CAP) |
	                     gpu_reason_bit(GPU_REASON_SW_THERMAL));
	v.power_w = 33.1;
	assert_true(amdgpu_metrics_parse(b, sim_amdm_encode(SIM_AMDM_V2_2, &v, b), &m));
	assert_true(fabs(m.v[AMDGPU_M_POWER_W] - 33.1) < 1e-9);
	assert_true(fabs(m.v[AMDGPU_M_TEMP_EDGE] - 67.4) < 1e-9);
	assert_false(m.ok[AMDGPU_M_UMC_ACTIVITY]);
	assert_true(m.throttle_ok);
	assert_true(amdgpu_metrics_parse(b, sim_amdm_encode(SIM_AMDM_V2_1, &v, b), &m));
	assert_false(m.throttle_ok); /* v2.1 has no indep_throttle_status */
}

/* Each NVML reason a scenario names lands on a bit gpuwhy maps back to the same reason. */
static void test_throttle_bits(void **state)
{
	(void)state;
	static const struct {
		unsigned long long nvml;
		gpu_reason back;
	} map[] = {
	    {nvmlClocksEventReasonSwPowerCap, GPU_REASON_SW_POWER_CAP},
	    {nvmlClocksEventReasonSwThermalSlowdown, GPU_REASON_SW_THERMAL},
	    {nvmlClocksThrottleReasonHwThermalSlowdown, GPU_REASON_HW_THERMAL},
	    {nvmlClocksThrottleReasonHwSlowdown, GPU_REASON_HW_SLOWDOWN},
	};
	for (int apu = 0; apu < 2; apu++)
		for (size_t i = 0; i < sizeof map / sizeof *map; i++) {
			uint64_t bits = sim_amdm_throttle_bits(map[i].nvml, apu);
			assert_int_equal(__builtin_popcountll(bits), 1);
			assert_int_equal(amdgpu_throttle_reasons(bits),
			                 gpu_reason_bit(map[i].back));
		}
	assert_int_equal(sim_amdm_throttle_bits(nvmlClocksEventReasonSwPowerCap, false), 1ull << 0);
	assert_int_equal(sim_amdm_throttle_bits(nvmlClocksEventReasonSwPowerCap, true), 1ull << 4);
	assert_int_equal(sim_amdm_throttle_bits(nvmlClocksEventReasonGpuIdle |
	                                            nvmlClocksThrottleReasonHwPowerBrakeSlowdown,
	                                        false),
	                 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_v1_3_layout),
	    cmocka_unit_test(test_v2_layouts),
	    cmocka_unit_test(test_read_back),
	    cmocka_unit_test(test_throttle_bits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
