/*
 * AMD's SMI library through dlopen (src/gpu/amdsmi.c): PCI addresses, the
 * versions whose layouts are known, sysfs before the library, and every way
 * the library can fail leaving the fields absent. The library is the
 * simulated libamd_smi.so.24 (sim/amdsmi_sim.c) on the mi300x8 scenario.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/amdsmi.h"
#include "util/err.h"

#define MI300X8 GPUWHY_SOURCE_SCENARIOS "/mi300x8.json"

static int setup(void **state)
{
	(void)state;
	setenv("GPUWHY_SIM_SCENARIO", MI300X8, 1);
	/* 100 s in: 80 s busy (square wave, duty 0.8), energy known in closed form */
	setenv("GPUWHY_SIM_TIME", "100", 1);
	unsetenv("GPUWHY_SIM_AMDSMI_FAIL");
	unsetenv("GPUWHY_SIM_AMDSMI_VERSION");
	unsetenv("GPUWHY_AMDSMI");
	return 0;
}

static amdsmi_lib *open_one(const char *path, gw_fail *f)
{
	const char *names[] = {path};
	return amdsmi_lib_open(names, 1, f);
}

static void test_bdf_text(void **state)
{
	(void)state;
	char b[24];
	amdsmi_bdf_text(AMDSMI_BDF_MAKE(0, 0x0c, 0, 0), b, sizeof b);
	assert_string_equal(b, "0000:0c:00.0");
	amdsmi_bdf_text(AMDSMI_BDF_MAKE(0x1, 0xdf, 0x1f, 7), b, sizeof b);
	assert_string_equal(b, "0001:df:1f.7");
	/* the bit positions of amdsmi_bdf_t: function 0-2, device 3-7, bus 8-15, domain 16- */
	amdsmi_bdf_text((amdsmi_bdf_t)0x0002a30bu, b, sizeof b);
	assert_string_equal(b, "0002:a3:01.3");
	amdsmi_bdf_text(AMDSMI_BDF_MAKE(0xffffffffffffull, 0xff, 0x1f, 7), b, sizeof b);
	assert_string_equal(b, "ffffffffffff:ff:1f.7");
}

/* Whether the words w are a known version, and as what text. */
static bool read_words(uint32_t a, uint32_t b, uint32_t c, uint32_t d, const char *text)
{
	const uint32_t w[4] = {a, b, c, d};
	char t[48];
	bool known = amdsmi_version_read(w, t, sizeof t);
	assert_string_equal(t, text);
	return known;
}

static void test_versions(void **state)
{
	(void)state;
	/* 24.x: year, major, minor, release */
	assert_true(read_words(24, 5, 0, 0, "24.5.0"));
	assert_true(read_words(24, 6, 1, 0, "24.6.1"));
	assert_true(read_words(24, 7, 1, 0, "24.7.1"));
	assert_false(read_words(24, 4, 0, 0, "24.4.0"));
	assert_false(read_words(24, 8, 0, 0, "24.8.0"));
	/* 25.x: the same struct, major 25, year not filled (or 25) */
	assert_true(read_words(0, 25, 3, 0, "25.3.0"));
	assert_true(read_words(25, 25, 5, 1, "25.5.1"));
	/* 26.x: no year, major first */
	assert_true(read_words(26, 0, 2, 0, "26.0.2"));
	assert_true(read_words(26, 25, 0, 0, "26.25.0"));
	/* anything else is refused */
	assert_false(read_words(27, 0, 0, 0, "27.0.0"));
	assert_false(read_words(25, 3, 0, 0, "25.3.0")); /* 25 never wrote this layout */
	assert_false(read_words(23, 6, 0, 0, "23.6.0"));
	assert_false(read_words(0, 0, 0, 0, "0.0.0"));
}

static void test_merge_precedence(void **state)
{
	(void)state;
	amdsmi_values a = {
	    .energy_ok = true, .energy_mj = 1234, .ecc_ok = true, .ecc_ce = 5, .ecc_ue = 2};
	gpu_values o;
	memset(&o, 0, sizeof o);
	amdsmi_merge(&a, &o);
	assert_true(o.ok[GM_ENERGY] && o.v[GM_ENERGY] == 1234);
	assert_true(o.ok[GM_ECC_CORR_VOL] && o.v[GM_ECC_CORR_VOL] == 5);
	assert_true(o.ok[GM_ECC_UNCORR_VOL] && o.v[GM_ECC_UNCORR_VOL] == 2);
	/* RAS's files gave the counts: they stay (and so would an energy counter of the files) */
	memset(&o, 0, sizeof o);
	o.ok[GM_ENERGY] = 1;
	o.v[GM_ENERGY] = 99;
	o.ok[GM_ECC_CORR_VOL] = o.ok[GM_ECC_UNCORR_VOL] = 1;
	o.v[GM_ECC_CORR_VOL] = 17;
	o.v[GM_ECC_UNCORR_VOL] = 4;
	amdsmi_merge(&a, &o);
	assert_true(o.v[GM_ECC_CORR_VOL] == 17 && o.v[GM_ECC_UNCORR_VOL] == 4);
	assert_true(o.v[GM_ENERGY] == 99);
	/* one of the pair from the files: the other is not taken from another source */
	memset(&o, 0, sizeof o);
	o.ok[GM_ECC_CORR_VOL] = 1;
	o.v[GM_ECC_CORR_VOL] = 17;
	amdsmi_merge(&a, &o);
	assert_false(o.ok[GM_ECC_UNCORR_VOL]);
	/* what the library does not give is not set at all */
	amdsmi_values none;
	memset(&none, 0, sizeof none);
	memset(&o, 0, sizeof o);
	amdsmi_merge(&none, &o);
	assert_false(o.ok[GM_ENERGY]);
	assert_false(o.ok[GM_ECC_CORR_VOL]);
}

static void test_sim_gpus_by_bdf(void **state)
{
	(void)state;
	gw_fail f;
	amdsmi_lib *l = open_one(AMDSMI_SIM_LIB, &f);
	assert_non_null(l);
	assert_int_equal(f.code, 0);
	assert_string_equal(amdsmi_lib_version(l), "24.7.0");
	assert_int_equal(amdsmi_lib_gpus(l), 8);
	assert_true(amdsmi_lib_has(l, "0000:0c:00.0"));
	assert_true(amdsmi_lib_has(l, "0000:DF:00.0")); /* sysfs may spell it in capitals */
	assert_false(amdsmi_lib_has(l, "0000:0d:00.0"));
	amdsmi_values v;
	amdsmi_lib_read(l, "0000:0c:00.0", &v);
	assert_true(v.energy_ok);
	/* 131 W * 100 s + (720 - 131) W * (0.35 * 80 s + 0.65 * 0.72 * 80 s) */
	assert_true(fabs(v.energy_mj - 51644160.0) < 1.0);
	assert_false(v.ecc_ok); /* the scenario's GPUs have no ECC */
	amdsmi_lib_read(l, "0000:0d:00.0", &v);
	assert_false(v.energy_ok);
	amdsmi_lib_close(l);
}

static void test_fails_leave_absent(void **state)
{
	(void)state;
	gw_fail f;
	assert_null(open_one("/nonexistent/libamd_smi.so.24", &f));
	assert_int_equal(f.code, GW_EXIT_ENV);
	assert_non_null(strstr(f.why, "cannot load"));

	setenv("GPUWHY_SIM_AMDSMI_FAIL", "init", 1);
	assert_null(open_one(AMDSMI_SIM_LIB, &f));
	assert_non_null(strstr(f.why, "amdsmi_init failed"));

	setenv("GPUWHY_SIM_AMDSMI_FAIL", "energy", 1);
	amdsmi_lib *l = open_one(AMDSMI_SIM_LIB, &f);
	assert_non_null(l);
	amdsmi_values v;
	amdsmi_lib_read(l, "0000:0c:00.0", &v);
	assert_false(v.energy_ok);
	amdsmi_lib_close(l);
	unsetenv("GPUWHY_SIM_AMDSMI_FAIL");

	/* a version whose layouts are not known is not read at all */
	setenv("GPUWHY_SIM_AMDSMI_VERSION", "27.0.0", 1);
	assert_null(open_one(AMDSMI_SIM_LIB, &f));
	assert_non_null(strstr(f.why, "version 27.0.0 has struct layouts"));
	setenv("GPUWHY_SIM_AMDSMI_VERSION", "24.8.0", 1);
	assert_null(open_one(AMDSMI_SIM_LIB, &f));
	assert_non_null(strstr(f.why, "version 24.8.0 has struct layouts"));
	unsetenv("GPUWHY_SIM_AMDSMI_VERSION");

	/* an optional symbol missing: that field alone is absent */
	l = open_one(AMDSMI_SIM_NOENERGY_LIB, &f);
	assert_non_null(l);
	assert_int_equal(amdsmi_lib_gpus(l), 8);
	amdsmi_lib_read(l, "0000:0c:00.0", &v);
	assert_false(v.energy_ok);
	amdsmi_lib_close(l);

	/* a library without the required entry points */
	assert_null(open_one(FAKE_NVML_LIB, &f));
	assert_non_null(strstr(f.why, "has no amdsmi_"));
}

/* ROCm 6.4's 25.x and ROCm 7's 26.x, each in its own version layout, are read like 24.7. */
static void test_newer_versions_read(void **state)
{
	(void)state;
	static const char *const vs[] = {"25.3.0", "26.0.2"};
	for (size_t i = 0; i < sizeof vs / sizeof *vs; i++) {
		setenv("GPUWHY_SIM_AMDSMI_VERSION", vs[i], 1);
		gw_fail f;
		amdsmi_lib *l = open_one(AMDSMI_SIM_LIB, &f);
		assert_non_null(l);
		assert_string_equal(amdsmi_lib_version(l), vs[i]);
		assert_int_equal(amdsmi_lib_gpus(l), 8);
		amdsmi_values v;
		amdsmi_lib_read(l, "0000:0c:00.0", &v);
		assert_true(v.energy_ok);
		assert_true(fabs(v.energy_mj - 51644160.0) < 1.0);
		amdsmi_lib_close(l);
	}
	unsetenv("GPUWHY_SIM_AMDSMI_VERSION");
}

static void test_which_library(void **state)
{
	(void)state;
	gw_fail f;
	setenv("GPUWHY_AMDSMI", "", 1); /* set but empty: none */
	assert_null(amdsmi_lib_open_default(true, &f));
	assert_int_equal(f.code, 0);
	unsetenv("GPUWHY_AMDSMI"); /* a fixture or simulated tree: not the system's */
	assert_null(amdsmi_lib_open_default(false, &f));
	assert_int_equal(f.code, 0);
	setenv("GPUWHY_AMDSMI", AMDSMI_SIM_LIB, 1);
	amdsmi_lib *l = amdsmi_lib_open_default(false, &f);
	assert_non_null(l);
	amdsmi_lib_close(l);
	unsetenv("GPUWHY_AMDSMI");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bdf_text),
	    cmocka_unit_test(test_versions),
	    cmocka_unit_test(test_merge_precedence),
	    cmocka_unit_test_setup(test_sim_gpus_by_bdf, setup),
	    cmocka_unit_test_setup(test_fails_leave_absent, setup),
	    cmocka_unit_test_setup(test_newer_versions_read, setup),
	    cmocka_unit_test_setup(test_which_library, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
