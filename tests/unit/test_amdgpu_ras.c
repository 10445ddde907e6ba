/* RAS error counts of the amdgpu reader (tests/fixtures/amdgpu/mi300x has a ras directory). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "gpu/amdgpu.h"
#include "gpu/amdgpu_map.h"
#include "gpu/amdgpu_ras.h"

#include <string.h>

#define ROOT(name) FIXTURES_DIR "/amdgpu/" name

static void test_parse(void **state)
{
	(void)state;
	uint64_t ue = 9, ce = 9;
	const char *ok = "ue: 4\nce: 17\n";
	assert_true(amdgpu_ras_parse(ok, strlen(ok), &ue, &ce));
	assert_int_equal(ue, 4);
	assert_int_equal(ce, 17);
	const char *de = "ue: 0\nce: 0\nde: 5\n"; /* newer umc: deferred errors beside */
	assert_true(amdgpu_ras_parse(de, strlen(de), &ue, &ce));
	assert_int_equal(ue, 0);
	assert_int_equal(ce, 0);
	const char *order = "ce: 2\nue: 1"; /* no trailing newline, other order */
	assert_true(amdgpu_ras_parse(order, strlen(order), &ue, &ce));
	assert_int_equal(ue, 1);
	assert_int_equal(ce, 2);
	static const char *const bad[] = {
	    "Query currently inaccessible\n",
	    "ue: 1\n",                           /* no ce */
	    "ue: -1\nce: 0\n",                   /* no count */
	    "ue: 1x\nce: 0\n",                   /* trailing garbage */
	    "ue: 99999999999999999999\nce: 0\n", /* overflows 64 bits */
	    "uue: 1\nce: 0\n",
	    "",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		if (amdgpu_ras_parse(bad[i], strlen(bad[i]), &ue, &ce))
			fail_msg("parsed: %s", bad[i]);
	/* the length bounds the text: "ue: 12" cut after "ue: 1" */
	const char *cut = "ce: 0\nue: 12";
	assert_true(amdgpu_ras_parse(cut, strlen(cut) - 1, &ue, &ce));
	assert_int_equal(ue, 1);
}

static void test_read_fixture(void **state)
{
	(void)state;
	amdgpu_card cards[4];
	assert_int_equal(amdgpu_discover(ROOT("mi300x"), cards, 4), 2);
	amdgpu_ras r;
	/* cards[0] is 0000:1b:00.0, the board with a ras directory */
	assert_true(amdgpu_ras_read(cards[0].dev_path, &r));
	assert_int_equal(r.nblocks, 3); /* xgmi_wafl is inaccessible, features no count */
	assert_string_equal(r.blocks[0].name, "gfx");
	assert_string_equal(r.blocks[1].name, "sdma");
	assert_string_equal(r.blocks[2].name, "umc");
	assert_int_equal(r.blocks[2].ce, 3);
	assert_int_equal(r.ue, 1);
	assert_int_equal(r.ce, 5);
	amdgpu_values v;
	amdgpu_read(&cards[0], &v);
	assert_true(v.ok[AMD_RAS_CE]);
	assert_true(v.ok[AMD_RAS_UE]);
	assert_true(v.v[AMD_RAS_CE] == 5 && v.v[AMD_RAS_UE] == 1);
	gpu_static st;
	gpu_values g;
	amdgpu_static(&cards[0], 0, &st);
	amdgpu_to_gpu_values(&st, &v, &g);
	assert_true(g.ok[GM_ECC_CORR_VOL] && g.v[GM_ECC_CORR_VOL] == 5);
	assert_true(g.ok[GM_ECC_UNCORR_VOL] && g.v[GM_ECC_UNCORR_VOL] == 1);
	assert_false(g.ok[GM_ECC_CORR_AGG]);

	/* no ras directory: absent, never 0 */
	assert_false(amdgpu_ras_read(cards[1].dev_path, &r));
	assert_int_equal(r.nblocks, 0);
	amdgpu_read(&cards[1], &v);
	assert_false(v.ok[AMD_RAS_CE]);
	assert_false(v.ok[AMD_RAS_UE]);
	amdgpu_static(&cards[1], 1, &st);
	amdgpu_to_gpu_values(&st, &v, &g);
	assert_false(g.ok[GM_ECC_CORR_VOL]);
	assert_false(g.ok[GM_ECC_UNCORR_VOL]);
}

/* The throttle status reaches the metric table as NVML's reasons. */
static void test_map_reasons(void **state)
{
	(void)state;
	amdgpu_card cards[4];
	assert_int_equal(amdgpu_discover(ROOT("rx7900xtx"), cards, 4), 1);
	amdgpu_values v;
	amdgpu_read(&cards[0], &v);
	gpu_static st;
	gpu_values g;
	amdgpu_static(&cards[0], 0, &st);
	amdgpu_to_gpu_values(&st, &v, &g);
	assert_true(g.ok[GM_CLK_REASONS]);
	assert_true(g.ok[GM_CLK_R_SW_POWER] && g.v[GM_CLK_R_SW_POWER] == 1);
	assert_true(g.ok[GM_CLK_R_SW_THERMAL] && g.v[GM_CLK_R_SW_THERMAL] == 1);
	assert_true(g.ok[GM_CLK_R_HW_THERMAL] && g.v[GM_CLK_R_HW_THERMAL] == 0);
	assert_true(g.ok[GM_CLK_R_HW_SLOW] && g.v[GM_CLK_R_HW_SLOW] == 0);
	/* what gpu_metrics cannot say stays absent */
	assert_false(g.ok[GM_CLK_R_IDLE]);
	assert_false(g.ok[GM_CLK_R_SYNC_BOOST]);
	assert_false(g.ok[GM_CLK_R_HW_POWER_BRAKE]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse),
	    cmocka_unit_test(test_read_fixture),
	    cmocka_unit_test(test_map_reasons),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
