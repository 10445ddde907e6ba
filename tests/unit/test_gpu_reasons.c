/* NVML topology levels and clock event reason bits by meaning (gpu/gpu_reasons.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "gpu/gpu_reasons.h"

static void test_topo_names(void **state)
{
	(void)state;
	static const struct {
		int level;
		const char *name;
	} t[] = {{0, "X"}, {10, "PIX"}, {20, "PXB"}, {30, "PHB"}, {40, "NODE"}, {50, "SYS"}};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
		assert_string_equal(gpu_topo_level_name(t[i].level), t[i].name);
		assert_true(gpu_topo_level_known(t[i].level));
	}
	/* Unknown levels have no name: the faces print n/a, never a made-up word. */
	static const int unknown[] = {-1, 5, 15, 60, 1000};
	for (size_t i = 0; i < sizeof unknown / sizeof *unknown; i++) {
		assert_null(gpu_topo_level_name(unknown[i]));
		assert_false(gpu_topo_level_known(unknown[i]));
		assert_false(gpu_topo_level_is_cross_cpu(unknown[i]));
		assert_false(gpu_topo_level_is_internal(unknown[i]));
	}
}

static void test_topo_paths(void **state)
{
	(void)state;
	assert_true(gpu_topo_level_is_internal(0));
	assert_false(gpu_topo_level_is_internal(10));
	/* Through the CPU: the host bridge and beyond. */
	assert_false(gpu_topo_level_is_cross_cpu(0));
	assert_false(gpu_topo_level_is_cross_cpu(10));
	assert_false(gpu_topo_level_is_cross_cpu(20));
	assert_true(gpu_topo_level_is_cross_cpu(30));
	assert_true(gpu_topo_level_is_cross_cpu(40));
	assert_true(gpu_topo_level_is_cross_cpu(50));
	assert_false(gpu_topo_level_is_cross_numa(40));
	assert_true(gpu_topo_level_is_cross_numa(50));
}

/* Each reason's bit, its name (metrics.c) and its 0/1 metric (metrics.def) agree. */
static void test_reason_tables_agree(void **state)
{
	(void)state;
	uint64_t all = 0;
	for (int r = 0; r < GPU_REASON__COUNT; r++) {
		uint64_t bit = gpu_reason_bit((gpu_reason)r);
		assert_int_equal(bit, 1ULL << r); /* NVML's bits are dense and in this order */
		const char *name = gpu_reason_name(bit);
		assert_non_null(name);
		gpu_metric_id m = gpu_reason_metric((gpu_reason)r);
		if (r == GPU_REASON_DISPLAY_CLOCKS) {
			assert_int_equal(m, GM__COUNT); /* nvidia-smi has no query field for it */
			continue;
		}
		assert_true(m < GM__COUNT);
		const char *key = gpu_metrics[m].key, *dot = strrchr(key, '.');
		assert_non_null(dot);
		assert_string_equal(dot + 1, name);
		all |= bit;
	}
	assert_int_equal(gpu_reasons_known(), all | gpu_reason_bit(GPU_REASON_DISPLAY_CLOCKS));
	assert_int_equal(gpu_reason_bit(GPU_REASON__COUNT), 0);
	assert_int_equal(gpu_reason_metric(GPU_REASON__COUNT), GM__COUNT);
}

static void test_reason_classes(void **state)
{
	(void)state;
	uint64_t idle = gpu_reason_bit(GPU_REASON_GPU_IDLE),
	         cap = gpu_reason_bit(GPU_REASON_SW_POWER_CAP),
	         swt = gpu_reason_bit(GPU_REASON_SW_THERMAL),
	         hwt = gpu_reason_bit(GPU_REASON_HW_THERMAL),
	         hws = gpu_reason_bit(GPU_REASON_HW_SLOWDOWN),
	         brake = gpu_reason_bit(GPU_REASON_HW_POWER_BRAKE),
	         sync = gpu_reason_bit(GPU_REASON_SYNC_BOOST),
	         app = gpu_reason_bit(GPU_REASON_APP_CLOCKS);
	assert_true(gpu_reasons_idle(idle | cap));
	assert_false(gpu_reasons_idle(cap));
	assert_true(gpu_reasons_power_cap(cap));
	assert_true(gpu_reasons_thermal(swt) && gpu_reasons_thermal(hwt));
	assert_false(gpu_reasons_thermal(hws | brake | cap));
	assert_true(gpu_reasons_hw_slowdown(hws) && gpu_reasons_hw_slowdown(brake));
	assert_false(gpu_reasons_hw_slowdown(hwt));
	/* Slowing under load: power, heat, hardware; not idle, sync boost or settings. */
	assert_int_equal(gpu_reasons_slowing(idle | sync | app), 0);
	assert_int_equal(gpu_reasons_slowing(~0ULL), cap | swt | hwt | hws | brake);
	assert_int_equal(gpu_reasons_unwanted(~0ULL), swt | hwt | hws | brake);
}

static void test_reason_severity(void **state)
{
	(void)state;
	assert_int_equal(gpu_reasons_severity(0), GPU_REASON_SEV_NONE);
	assert_int_equal(gpu_reasons_severity(0x1), GPU_REASON_SEV_NONE);        /* idle */
	assert_int_equal(gpu_reasons_severity(1ULL << 40), GPU_REASON_SEV_NONE); /* unknown */
	assert_int_equal(gpu_reasons_severity(0x4), GPU_REASON_SEV_SETTING);     /* power cap */
	assert_int_equal(gpu_reasons_severity(0x2), GPU_REASON_SEV_SETTING);     /* app clocks */
	assert_int_equal(gpu_reasons_severity(0x10), GPU_REASON_SEV_SETTING);    /* sync boost */
	assert_int_equal(gpu_reasons_severity(0x100), GPU_REASON_SEV_SETTING);   /* display */
	assert_int_equal(gpu_reasons_severity(0x20), GPU_REASON_SEV_THERMAL);
	assert_int_equal(gpu_reasons_severity(0x24), GPU_REASON_SEV_THERMAL);
	assert_int_equal(gpu_reasons_severity(0x40), GPU_REASON_SEV_HARDWARE);
	assert_int_equal(gpu_reasons_severity(0x8), GPU_REASON_SEV_HARDWARE);
	assert_int_equal(gpu_reasons_severity(0x80 | 0x1), GPU_REASON_SEV_HARDWARE);
}

static void test_reasons_from_value(void **state)
{
	(void)state;
	assert_int_equal(gpu_reasons_from_value(0x44), 0x44);
	assert_int_equal(gpu_reasons_from_value(0), 0);
	/* Not a mask: negative, NAN, past the doubles' exact integers. */
	assert_int_equal(gpu_reasons_from_value(-4), 0);
	assert_int_equal(gpu_reasons_from_value(NAN), 0);
	assert_int_equal(gpu_reasons_from_value(ldexp(1, 60)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_topo_names),          cmocka_unit_test(test_topo_paths),
	    cmocka_unit_test(test_reason_tables_agree), cmocka_unit_test(test_reason_classes),
	    cmocka_unit_test(test_reason_severity),     cmocka_unit_test(test_reasons_from_value),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
