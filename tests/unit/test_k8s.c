/* Pod and container of a process from a fixture cgroup tree and kubelet log names. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "host/host_k8s.h"

#include <string.h>

#define FIX FIXTURES_DIR "/k8s/"

static void test_systemd_containerd(void **state)
{
	(void)state;
	host_k8s k;
	assert_true(host_k8s_lookup(FIX "proc", FIX "var/log", 4242, &k));
	assert_string_equal(k.pod_uid, "7c0e5a1b-2d3f-4e6a-9b8c-1d2e3f4a5b6c");
	assert_string_equal(k.container_id,
	                    "3f9a1c2b4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8");
	assert_string_equal(k.pod, "trainer-7d9f");
	assert_string_equal(k.namespace_, "ml-team");
	assert_string_equal(k.container, "pytorch");
}

static void test_cgroupfs_without_names(void **state)
{
	(void)state;
	host_k8s k;
	/* in a pod, but the kubelet's log names do not list the container: no labels */
	assert_false(host_k8s_lookup(FIX "proc", FIX "var/log", 4343, &k));
	assert_string_equal(k.pod_uid, "11112222-3333-4444-5555-666677778888");
	assert_string_equal(k.pod, "");
}

static void test_not_in_a_pod(void **state)
{
	(void)state;
	host_k8s k;
	assert_false(host_k8s_lookup(FIX "proc", FIX "var/log", 4444, &k));
	assert_string_equal(k.pod_uid, "");
	assert_false(host_k8s_lookup(FIX "proc", FIX "var/log", 99999, &k));
	assert_false(host_k8s_parse_cgroup("/kubepods/burstable/podnot-a-uid/abc", &k));
	assert_false(host_k8s_parse_cgroup("", &k));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_systemd_containerd),
	    cmocka_unit_test(test_cgroupfs_without_names),
	    cmocka_unit_test(test_not_in_a_pod),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
