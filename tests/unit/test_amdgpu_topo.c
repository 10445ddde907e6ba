/*
 * How two AMD GPUs connect: XGMI hives and PCIe levels read from a sysfs
 * tree (tests/fixtures/amdgpu/make-xgmi-tree.sh), first by the amdgpu
 * reader, then through the device layer (gpu_topology_level,
 * gpu_xgmi_linked) as `topo`, `top` and recordings ask for them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_tmpdir.h"

#include "gpu/amdgpu.h"
#include "gpu/gpu.h"
#include "gpu/gpu_reasons.h"
#include "nvml_abi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char root[256];

static int setup(void **state)
{
	(void)state;
	return test_tmpdir_script(root, sizeof root, "xgmi",
	                          FIXTURES_DIR "/amdgpu/make-xgmi-tree.sh");
}

static int teardown(void **state)
{
	(void)state;
	return test_tmpdir_remove(root);
}

/* The cards in PCI order: A 03, B 04, C 07, D 11, E 41, F c1. */
enum { A, B, C, D, E, F, NCARD };
static const char *const bdf[NCARD] = {"0000:03:00.0", "0000:04:00.0", "0000:07:00.0",
                                       "0000:11:00.0", "0000:41:00.0", "0000:c1:00.0"};

/* What each pair is: "XGMI" or the PCIe level's name. */
static const char *const want[NCARD][NCARD] = {
    /*        A       B      C      D       E       F */
    [A] = {"X", "PIX", "PXB", "PHB", "NODE", "XGMI"},
    [B] = {"PIX", "X", "PXB", "PHB", "NODE", "SYS"},
    [C] = {"PXB", "PXB", "X", "PHB", "NODE", "SYS"},
    [D] = {"PHB", "PHB", "PHB", "X", "NODE", "SYS"},
    [E] = {"NODE", "NODE", "NODE", "NODE", "X", "SYS"},
    [F] = {"XGMI", "SYS", "SYS", "SYS", "SYS", "X"},
};

/* The PCIe level under an XGMI pair (A and F sit on two sockets). */
static const char *pcie_want(int i, int j)
{
	return (i == A && j == F) || (i == F && j == A) ? "SYS" : want[i][j];
}

static void test_reader(void **state)
{
	(void)state;
	amdgpu_card cards[AMDGPU_MAX_CARDS];
	assert_int_equal(amdgpu_discover(root, cards, AMDGPU_MAX_CARDS), NCARD);
	for (int i = 0; i < NCARD; i++)
		assert_string_equal(cards[i].bdf, bdf[i]);
	/* the hive's directory (A), a link to it (F), a hive id of 0 (C, D), none (B) */
	assert_true(cards[A].xgmi_hive == 7310232410154211329ull);
	assert_true(cards[F].xgmi_hive == cards[A].xgmi_hive);
	assert_true(cards[E].xgmi_hive == 1469432011453497858ull);
	assert_true(cards[B].xgmi_hive == 0 && cards[C].xgmi_hive == 0 && cards[D].xgmi_hive == 0);
	for (int i = 0; i < NCARD; i++)
		for (int j = 0; j < NCARD; j++) {
			if (i == j)
				continue;
			bool x = amdgpu_xgmi_linked(&cards[i], &cards[j]);
			if (x != !strcmp(want[i][j], "XGMI"))
				fail_msg("%s-%s: XGMI %d, want %s", bdf[i], bdf[j], x, want[i][j]);
			const char *lv =
			    gpu_topo_level_name(amdgpu_topo_level(root, &cards[i], &cards[j]));
			if (!lv || strcmp(lv, pcie_want(i, j)))
				fail_msg("%s-%s: %s, want %s", bdf[i], bdf[j], lv ? lv : "unknown",
				         pcie_want(i, j));
		}
	/* a card whose place in the tree is unknown */
	amdgpu_card nowhere = cards[B];
	nowhere.bdf[0] = '\0';
	assert_int_equal(amdgpu_topo_level(root, &cards[A], &nowhere), -1);
	assert_false(amdgpu_xgmi_linked(&cards[A], NULL));
	/* cards kept as plain directories in sys/bus/pci/devices (the simulated tree): no
	 * bridges, so no level, never a guessed PIX */
	char cmd[700];
	snprintf(cmd, sizeof cmd,
	         "mkdir -p %s/flat/sys/bus/pci/devices/0000:1b:00.0 "
	         "%s/flat/sys/bus/pci/devices/0000:1c:00.0",
	         root, root);
	assert_int_equal(system(cmd), 0);
	char flat[300];
	snprintf(flat, sizeof flat, "%s/flat", root);
	amdgpu_card x = cards[A], y = cards[B];
	snprintf(x.bdf, sizeof x.bdf, "0000:1b:00.0");
	snprintf(y.bdf, sizeof y.bdf, "0000:1c:00.0");
	assert_int_equal(amdgpu_topo_level(flat, &x, &y), -1);
}

/* The device layer's answers, by the AMD GPUs' indices (a real NVIDIA driver's come first). */
static void test_device_layer(void **state)
{
	(void)state;
	setenv("GPUWHY_SYSFS_ROOT", root, 1);
	unsetenv("GPUWHY_NVML");
	unsetenv("GPUWHY_SIM_SCENARIO");
	gpu_ctx *c;
	assert_int_equal(gpu_open(NULL, &c), 0);
	int idx[NCARD], n = 0;
	for (int i = 0; i < gpu_count(c) && n < NCARD; i++)
		if (!strcmp(gpu_static_info(c, i)->vendor, "amd"))
			idx[n++] = i;
	assert_int_equal(n, NCARD);
	for (int i = 0; i < NCARD; i++)
		for (int j = 0; j < NCARD; j++) {
			int lv = gpu_topology_level(c, idx[i], idx[j]);
			int x = gpu_xgmi_linked(c, idx[i], idx[j]);
			if (i == j) {
				assert_int_equal(lv, NVML_TOPOLOGY_INTERNAL);
				assert_int_equal(x, 0);
				continue;
			}
			assert_int_equal(x, !strcmp(want[i][j], "XGMI"));
			const char *w = gpu_topo_level_name(lv);
			if (!w || strcmp(w, pcie_want(i, j)))
				fail_msg("GPU%d-GPU%d: %s, want %s", idx[i], idx[j],
				         w ? w : "unknown", pcie_want(i, j));
			/* no NVLink is claimed for AMD GPUs */
			assert_int_equal(gpu_nvlink_count(c, idx[i], idx[j]), -1);
		}
	gpu_close(c);
	unsetenv("GPUWHY_SYSFS_ROOT");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reader),
	    cmocka_unit_test(test_device_layer),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
