/* NICs and PCIe distances on a fixture sysfs tree (tests/fixtures/sysfs/make-pci-tree.sh). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_tmpdir.h"

#include "host/host_pcitopo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char root[256];

static int setup(void **state)
{
	(void)state;
	return test_tmpdir_script(root, sizeof root, "pcitopo",
	                          FIXTURES_DIR "/sysfs/make-pci-tree.sh");
}

static int teardown(void **state)
{
	(void)state;
	return test_tmpdir_remove(root);
}

static void test_nics(void **state)
{
	(void)state;
	pcitopo_nic n[PCITOPO_MAX_NICS];
	int k = pcitopo_nics(root, n, PCITOPO_MAX_NICS);
	/* RDMA first, then network devices no RDMA device names; lo has no PCI device */
	assert_int_equal(k, 4);
	assert_string_equal(n[0].name, "mlx5_0");
	assert_string_equal(n[0].bdf, "0000:1c:00.0");
	assert_int_equal(n[0].rdma, 1);
	assert_string_equal(n[1].name, "mlx5_1");
	assert_string_equal(n[2].name, "eth0");
	assert_int_equal(n[2].rdma, 0);
	assert_string_equal(n[3].name, "eth1");
	assert_int_equal(n[3].numa_node, 1);
	assert_int_equal(pcitopo_nics("/nonexistent-root", n, PCITOPO_MAX_NICS), 0);
}

static void test_levels(void **state)
{
	(void)state;
	/* NVML's spelling of the GPU's bus id, sysfs spelling of the NICs' */
	const char *gpu = "00000000:1B:00.0";
	assert_int_equal(pcitopo_level(root, gpu, gpu), 0);
	assert_int_equal(pcitopo_level(root, gpu, "0000:1c:00.0"), 10);     /* PIX */
	assert_int_equal(pcitopo_level(root, gpu, "00000000:1F:00.0"), 20); /* PXB */
	assert_int_equal(pcitopo_level(root, gpu, "0000:20:00.0"), 30);     /* PHB */
	assert_int_equal(pcitopo_level(root, gpu, "0000:3b:00.0"), 40);     /* NODE */
	assert_int_equal(pcitopo_level(root, gpu, "0000:81:00.0"), 50);     /* SYS */
	assert_int_equal(pcitopo_level(root, "0000:81:00.0", gpu), 50);     /* symmetric */
	assert_int_equal(pcitopo_level(root, gpu, "0000:99:00.0"), -1);     /* not in sysfs */
	assert_int_equal(pcitopo_level(root, gpu, "garbage"), -1);
}

static void test_bdf_spelling(void **state)
{
	(void)state;
	char b[16];
	assert_true(pcitopo_sysfs_bdf("00000000:1B:00.0", b, sizeof b));
	assert_string_equal(b, "0000:1b:00.0");
	assert_false(pcitopo_sysfs_bdf("1B:00.0", b, sizeof b));
	assert_false(pcitopo_sysfs_bdf("0000:1b:00.0x", b, sizeof b));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nics),
	    cmocka_unit_test(test_levels),
	    cmocka_unit_test(test_bdf_spelling),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
