/* The metric table is the contract of every face: ids once, names unique, formats sane. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "gpu/gpu.h"
#include "gpu/metrics.h"

static void test_ids_in_order(void **state)
{
	(void)state;
	for (int i = 0; i < GM__COUNT; i++)
		assert_int_equal(gpu_metrics[i].id, i);
}

static void test_keys_unique_and_wellformed(void **state)
{
	(void)state;
	for (int i = 0; i < GM__COUNT; i++) {
		const char *k = gpu_metrics[i].key;
		assert_non_null(k);
		assert_true(strlen(k) > 0);
		for (const char *p = k; *p; p++)
			/* nvidia-smi's own names have capitals (pci.baseClass, fabric.cliqueId). */
			assert_true((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			            (*p >= '0' && *p <= '9') || *p == '.' || *p == '_');
		for (int j = i + 1; j < GM__COUNT; j++)
			assert_string_not_equal(k, gpu_metrics[j].key);
		assert_non_null(gpu_metrics[i].help);
		assert_true(strlen(gpu_metrics[i].help) > 10);
	}
}

static void test_columns_unique(void **state)
{
	(void)state;
	char a[128], b[128];
	for (int i = 0; i < GM__COUNT; i++) {
		gpu_metric_column((gpu_metric_id)i, a, sizeof a);
		assert_null(strchr(a, '.'));
		for (int j = i + 1; j < GM__COUNT; j++) {
			gpu_metric_column((gpu_metric_id)j, b, sizeof b);
			assert_string_not_equal(a, b);
		}
	}
}

static void test_dcgm_names_unique(void **state)
{
	(void)state;
	for (int i = 0; i < GM__COUNT; i++) {
		if (!gpu_metrics[i].dcgm)
			continue;
		assert_true(strncmp(gpu_metrics[i].dcgm, "DCGM_FI_", 8) == 0);
		for (int j = i + 1; j < GM__COUNT; j++)
			if (gpu_metrics[j].dcgm)
				assert_string_not_equal(gpu_metrics[i].dcgm, gpu_metrics[j].dcgm);
	}
}

static void test_aliases_resolve(void **state)
{
	(void)state;
	for (int a = 0; gpu_metric_aliases[a][0]; a++) {
		int id = gpu_metric_lookup(gpu_metric_aliases[a][0]);
		assert_true(id >= 0);
		assert_string_equal(gpu_metrics[id].key, gpu_metric_aliases[a][1]);
		/* an alias never shadows a real key */
		for (int i = 0; i < GM__COUNT; i++)
			assert_string_not_equal(gpu_metrics[i].key, gpu_metric_aliases[a][0]);
	}
	assert_int_equal(gpu_metric_lookup("clocks.sm"), GM_CLK_SM);
	assert_int_equal(gpu_metric_lookup("utilization.gpu"), GM_UTIL_GPU);
	assert_int_equal(gpu_metric_lookup("no.such.field"), -1);
}

static void test_format_like_nvidia_smi(void **state)
{
	(void)state;
	char b[64];
	gpu_metric_format(GM_UTIL_GPU, 87, true, b, sizeof b);
	assert_string_equal(b, "87 %");
	gpu_metric_format(GM_MEM_USED, 81559, true, b, sizeof b);
	assert_string_equal(b, "81559 MiB");
	gpu_metric_format(GM_MEM_USED, 81559, false, b, sizeof b);
	assert_string_equal(b, "81559");
	gpu_metric_format(GM_POWER_DRAW, 312.456, true, b, sizeof b);
	assert_string_equal(b, "312.46 W");
	gpu_metric_format(GM_PSTATE, 0, true, b, sizeof b);
	assert_string_equal(b, "P0");
	gpu_metric_format(GM_PERSISTENCE, 1, true, b, sizeof b);
	assert_string_equal(b, "Enabled");
	gpu_metric_format(GM_CLK_R_SW_POWER, 0, true, b, sizeof b);
	assert_string_equal(b, "Not Active");
	gpu_metric_format(GM_CLK_REASONS, 0x44, true, b, sizeof b);
	assert_string_equal(b, "0x0000000000000044");
	gpu_metric_format(GM_TEMP_GPU, 45, true, b, sizeof b);
	assert_string_equal(b, "45");
	/* PCI fields as an nvidia-smi 590 capture prints them */
	gpu_metric_format(GM_PCI_DOMAIN, 0, true, b, sizeof b);
	assert_string_equal(b, "0x0000");
	gpu_metric_format(GM_PCI_BUS, 0x1b, true, b, sizeof b);
	assert_string_equal(b, "0x1B");
	gpu_metric_format(GM_PCI_DEVICE_ID, 0x233010DE, true, b, sizeof b);
	assert_string_equal(b, "0x233010DE");
	gpu_metric_format(GM_POWER_MGMT, 0, true, b, sizeof b);
	assert_string_equal(b, "[Requested functionality has been deprecated]");
	gpu_metric_format(GM_CLK_R_SUPPORTED, 0x1FF, true, b, sizeof b);
	assert_string_equal(b, "0x00000000000001FF");
}

/* The names nvidia-smi 590 lists as separate fields are not aliases of each other. */
static void test_590_fields_are_distinct(void **state)
{
	(void)state;
	assert_int_not_equal(gpu_metric_lookup("power.management"), GM_PERSISTENCE);
	assert_int_equal(gpu_metric_lookup("pcie.link.gen.gpucurrent"), GM_PCIE_GEN_GPUCUR);
	assert_int_equal(gpu_metric_lookup("pcie.link.gen.hostmax"), GM_PCIE_GEN_HOSTMAX);
	assert_int_not_equal(gpu_metric_lookup("ecc.errors.corrected.volatile.device_memory"),
	                     GM_ECC_CORR_VOL);
	assert_int_equal(gpu_metric_lookup("clocks_throttle_reasons.supported"),
	                 GM_CLK_R_SUPPORTED);
	assert_int_equal(gpu_metric_lookup("gpu.power.current_limit"), GM_POWER_ENFORCED_LIMIT);
	assert_int_equal(gpu_metric_lookup("remapped_rows.sbe"), GM_REMAP_CORR);
	/* names gpuwhy cannot read are accepted, never recorded */
	assert_false(gpu_metric_readable(GM_PCIE_GEN_HOSTMAX));
	assert_true(gpu_metric_readable(GM_PCIE_GEN_GPUMAX));
}

static void test_reason_words(void **state)
{
	(void)state;
	char b[256];
	gpu_reasons_words(0, b, sizeof b);
	assert_string_equal(b, "none");
	gpu_reasons_words(0x4 | 0x40, b, sizeof b);
	assert_string_equal(b, "sw_power_cap,hw_thermal_slowdown");
	gpu_reasons_words(1ULL << 40, b, sizeof b);
	assert_string_equal(b, "bit40");
}

static void test_dcgm_scale(void **state)
{
	(void)state;
	assert_true(gpu_metric_dcgm_value(GM_GPM_SM_ACTIVE, 45.0) == 0.45);
	assert_true(gpu_metric_dcgm_value(GM_UTIL_GPU, 45.0) == 45.0);
}

static void test_selection(void **state)
{
	(void)state;
	gpu_ident ids[3];
	strcpy(ids[0].uuid, "GPU-8f2a1111-aaaa-bbbb-cccc-000000000000");
	strcpy(ids[1].uuid, "GPU-8f2b2222-aaaa-bbbb-cccc-000000000001");
	strcpy(ids[2].uuid, "GPU-1234abcd-aaaa-bbbb-cccc-000000000002");
	int sel[8];
	char err[256];
	assert_int_equal(gpu_parse_selection("0,2", ids, 3, sel, 8, err, sizeof err), 2);
	assert_int_equal(sel[0], 0);
	assert_int_equal(sel[1], 2);
	assert_int_equal(gpu_parse_selection("2,0,2", ids, 3, sel, 8, err, sizeof err), 2);
	assert_int_equal(sel[0], 2);
	assert_int_equal(gpu_parse_selection("GPU-1234", ids, 3, sel, 8, err, sizeof err), 1);
	assert_int_equal(sel[0], 2);
	assert_int_equal(gpu_parse_selection("8f2b", ids, 3, sel, 8, err, sizeof err), 1);
	assert_int_equal(sel[0], 1);
	assert_int_equal(gpu_parse_selection("GPU-8f2b2222-aaaa-bbbb-cccc-000000000001", ids, 3,
	                                     sel, 8, err, sizeof err),
	                 1);
	assert_int_equal(sel[0], 1);
	assert_int_equal(gpu_parse_selection("8f2", ids, 3, sel, 8, err, sizeof err), -1);
	assert_non_null(strstr(err, "matches 2 GPUs"));
	assert_int_equal(gpu_parse_selection("3", ids, 3, sel, 8, err, sizeof err), -1);
	assert_non_null(strstr(err, "does not exist"));
	assert_int_equal(gpu_parse_selection("-1", ids, 3, sel, 8, err, sizeof err), -1);
	assert_int_equal(gpu_parse_selection("ffff", ids, 3, sel, 8, err, sizeof err), -1);
	assert_non_null(strstr(err, "ffff"));
	assert_int_equal(gpu_parse_selection(",", ids, 3, sel, 8, err, sizeof err), -1);
	assert_int_equal(gpu_parse_selection("", ids, 3, sel, 8, err, sizeof err), -1);
	assert_non_null(strstr(err, "empty GPU list"));
	assert_true(gpu_selection_is_empty(""));
	assert_true(gpu_selection_is_empty(" , "));
	assert_false(gpu_selection_is_empty("0"));
	assert_false(gpu_selection_is_empty(",1"));
	assert_int_equal(gpu_parse_selection(" 1 , 0 ", ids, 3, sel, 8, err, sizeof err), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ids_in_order),
	    cmocka_unit_test(test_keys_unique_and_wellformed),
	    cmocka_unit_test(test_columns_unique),
	    cmocka_unit_test(test_dcgm_names_unique),
	    cmocka_unit_test(test_aliases_resolve),
	    cmocka_unit_test(test_format_like_nvidia_smi),
	    cmocka_unit_test(test_reason_words),
	    cmocka_unit_test(test_dcgm_scale),
	    cmocka_unit_test(test_selection),
	    cmocka_unit_test(test_590_fields_are_distinct),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
