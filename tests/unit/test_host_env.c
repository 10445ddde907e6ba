/* Identity, container, WSL and PID-namespace probes on fixture trees. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "host/host_env.h"

#include <stdlib.h>
#include <string.h>

#define FIX FIXTURES_DIR "/host/"

static host_config at(const char *proc, const char *sys, const char *fs)
{
	host_config cfg;
	host_config_default(&cfg);
	cfg.proc_root = proc;
	cfg.sys_root = sys;
	cfg.fs_root = fs;
	return cfg;
}

static void test_identity(void **state)
{
	(void)state;
	host_config cfg = at(FIX "basic/t0/proc", FIX "basic/t0/sys", FIX "basic/t0");
	host_identity id;
	host_identity_read(&cfg, &id);
	assert_string_equal(id.hostname, "fixture-host");
	assert_string_equal(id.kernel_release, "6.1.0-fixture");
	assert_true(id.cpus_online_ok);
	assert_int_equal(id.cpus_online, 4);
	assert_true(id.mem_total_ok);
	assert_int_equal(id.mem_total, 16384000ull * 1024);
	assert_true(id.boot_time_ok);
	assert_int_equal(id.boot_time, 1700000000);

	/* CPUs from sysfs when there is one ("0-2,4" in t1), else the cpuN lines */
	cfg = at(FIX "basic/t1/proc", FIX "basic/t1/sys", FIX "basic/t1");
	host_identity_read(&cfg, &id);
	assert_int_equal(id.cpus_online, 4);
	cfg = at(FIX "container/proc", FIX "container/sys", FIX "container/root");
	host_identity_read(&cfg, &id);
	assert_string_equal(id.hostname, "c0ffee");
	assert_string_equal(id.kernel_release, "");
	assert_int_equal(id.cpus_online, 1);
	assert_int_equal(id.mem_total, 1024 * 1024);

	cfg = at(FIX "empty/proc", FIX "empty/sys", FIX "empty");
	host_identity_read(&cfg, &id);
	assert_string_equal(id.hostname, "");
	assert_false(id.cpus_online_ok);
	assert_false(id.mem_total_ok);
	assert_false(id.boot_time_ok);
}

static void test_bare_host(void **state)
{
	(void)state;
	unsetenv("WSL_DISTRO_NAME");
	host_config cfg = at(FIX "basic/t0/proc", FIX "basic/t0/sys", FIX "basic/t0");
	host_env env;
	host_env_probe(&cfg, &env);
	assert_false(env.in_container);
	assert_int_equal(env.container_how, 0);
	assert_int_equal(env.runtime, HOST_RT_NONE);
	assert_false(env.in_wsl);
	assert_true(env.pid_ns_ok);
	assert_int_equal(env.pid_ns_depth, 1);
	assert_true(env.kthreadd_seen);
	assert_false(env.pid_ns_nested);

	setenv("WSL_DISTRO_NAME", "Ubuntu", 1);
	host_env_probe(&cfg, &env);
	assert_true(env.in_wsl);
	unsetenv("WSL_DISTRO_NAME");
}

static void test_container(void **state)
{
	(void)state;
	unsetenv("WSL_DISTRO_NAME");
	host_config cfg = at(FIX "container/proc", FIX "container/sys", FIX "container/root");
	host_env env;
	host_env_probe(&cfg, &env);
	assert_true(env.in_container);
	assert_int_equal(env.container_how, HOST_CT_DOCKERENV | HOST_CT_CGROUP);
	assert_int_equal(env.runtime, HOST_RT_DOCKER);
	assert_int_equal(strlen(env.container_id), 64);
	assert_true(env.in_wsl); /* "microsoft-standard-WSL2" kernel */
	assert_int_equal(env.pid_ns_depth, 2);
	assert_false(env.kthreadd_seen);
	assert_true(env.pid_ns_nested);
}

static void test_nothing_readable(void **state)
{
	(void)state;
	unsetenv("WSL_DISTRO_NAME");
	host_config cfg = at(FIX "empty/proc", FIX "empty/sys", FIX "empty");
	host_env env;
	host_env_probe(&cfg, &env);
	assert_false(env.in_container);
	assert_false(env.in_wsl);
	assert_false(env.pid_ns_ok);
	assert_false(env.kthreadd_seen);
	/* pid 1 is there (empty stat file) but kthreadd is not: a nested namespace */
	assert_true(env.pid_ns_nested);
	cfg = at(FIX "no-such/proc", FIX "no-such/sys", FIX "no-such");
	host_env_probe(&cfg, &env);
	assert_false(env.pid_ns_nested); /* nothing visible: no claim */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_identity),
	    cmocka_unit_test(test_bare_host),
	    cmocka_unit_test(test_container),
	    cmocka_unit_test(test_nothing_readable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
