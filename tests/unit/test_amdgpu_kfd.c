/* Per-process VRAM from the KFD (tests/fixtures/amdgpu/kfd; README there). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "gpu/amdgpu.h"

#include <string.h>

#define ROOT(name) FIXTURES_DIR "/amdgpu/" name

static void test_parse_props(void **state)
{
	(void)state;
	amdgpu_kfd_node n;
	assert_true(amdgpu_parse_kfd_props("simd_count 1216\nlocation_id 40704\ndomain 0\n", &n));
	assert_string_equal(n.pdev, "0000:9f:00.0");
	/* devfn 0x0b: device 1, function 3; a second PCI domain */
	assert_true(amdgpu_parse_kfd_props("domain 2\nlocation_id 6923", &n));
	assert_string_equal(n.pdev, "0002:1b:01.3");
	/* no domain before Linux 5.9; partition bits above the address are not part of it */
	assert_true(amdgpu_parse_kfd_props("location_id 268442368\n", &n));
	assert_string_equal(n.pdev, "0000:1b:00.0");
	/* a key that only starts like location_id, a value that is no number, none at all */
	assert_false(amdgpu_parse_kfd_props("location_idx 40704\n", &n));
	assert_false(amdgpu_parse_kfd_props("location_id 9f00\n", &n));
	assert_false(amdgpu_parse_kfd_props("location_id 40704 7\n", &n));
	assert_false(amdgpu_parse_kfd_props("", &n));
	assert_false(amdgpu_parse_kfd_props("location_id 40704\ndomain 65536\n", &n));
}

static void test_nodes(void **state)
{
	(void)state;
	amdgpu_kfd_node n[8];
	int k = amdgpu_kfd_nodes(ROOT("kfd"), n, 8);
	/* node 0 is the CPU (gpu_id 0) and node 4 has no location_id */
	assert_int_equal(k, 3);
	int seen = 0;
	for (int i = 0; i < k; i++) {
		if (n[i].gpu_id == 48346) {
			assert_string_equal(n[i].pdev, "0000:9f:00.0");
			seen |= 1;
		} else if (n[i].gpu_id == 61203 || n[i].gpu_id == 11111) {
			assert_string_equal(n[i].pdev, "0000:1b:00.0");
			seen |= n[i].gpu_id == 61203 ? 2 : 4;
		}
	}
	assert_int_equal(seen, 7);
	assert_int_equal(amdgpu_kfd_nodes(ROOT("no-such-tree"), n, 8), 0);
	assert_int_equal(amdgpu_kfd_nodes(ROOT("kfd"), n, 1), 1);
}

static void test_procs(void **state)
{
	(void)state;
	amdgpu_proc p[8];
	amdgpu_kfd_node nodes[AMDGPU_KFD_MAX_NODES];
	int nn = amdgpu_kfd_nodes(ROOT("kfd"), nodes, AMDGPU_KFD_MAX_NODES);
	int n = amdgpu_kfd_procs_read(ROOT("kfd"), nodes, nn, p, 8);
	assert_int_equal(n, 3);
	assert_int_equal(p[0].pid, 4242);
	assert_string_equal(p[0].pdev, "0000:9f:00.0");
	assert_true(p[0].vram_ok);
	assert_int_equal(p[0].vram_bytes, 9000000000ull);
	/* 8000: two nodes (a partition) of one device summed; 0 bytes on the other kept as 0 */
	assert_int_equal(p[1].pid, 8000);
	assert_string_equal(p[1].pdev, "0000:1b:00.0");
	assert_int_equal(p[1].vram_bytes, (3ull << 30) + (1ull << 20));
	assert_int_equal(p[2].pid, 8000);
	assert_string_equal(p[2].pdev, "0000:9f:00.0");
	assert_true(p[2].vram_ok);
	assert_int_equal(p[2].vram_bytes, 0);
	/* 8001 has no vram files; 8002's name an unknown node, a node without address, or hold text
	 */
	for (int i = 0; i < n; i++) {
		assert_false(p[i].gtt_ok);
		assert_false(p[i].gfx_ok);
		assert_false(p[i].compute_ok);
	}
	assert_int_equal(amdgpu_kfd_procs_read(ROOT("no-such-tree"), nodes, nn, p, 8), 0);
	assert_int_equal(amdgpu_kfd_procs_read(ROOT("kfd"), nodes, nn, p, 1), 1);
	/* no topology, no processes: the fdinfo tree has no KFD */
	assert_int_equal(amdgpu_kfd_nodes(ROOT("mi300x"), nodes, AMDGPU_KFD_MAX_NODES), 0);
	assert_int_equal(amdgpu_kfd_procs_read(ROOT("mi300x"), nodes, 0, p, 8), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_props),
	    cmocka_unit_test(test_nodes),
	    cmocka_unit_test(test_procs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
