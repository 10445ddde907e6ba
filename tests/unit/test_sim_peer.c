/*
 * test_sim_peer.c - what the simulated GPU promises the other NVML programs
 * (nvtop, nvitop, pynvml): the entry points only they call, process names as
 * the driver gives them, power that never crosses the enforced limit while
 * capped, and recent timestamps while the scenario clock is pinned.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>

#include <cmocka.h>

#include "test_sim_common.h"

#define PEER_PTR(ret, name, params) static ret(*P_##name) params;
NVML_PEER_ENTRY_POINTS(PEER_PTR)
#undef PEER_PTR

static unsigned long long wall_us(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (unsigned long long)tv.tv_sec * 1000000ULL + (unsigned long long)tv.tv_usec;
}

static void test_peer_entry_points(void **state)
{
	(void)state;
	sim_use("h100x1", "10");
	sim_init_ok();
	nvmlDevice_t d = sim_dev(0);
	nvmlDriverModel_t cur = -1, pend = -1;
	assert_int_equal(P_nvmlDeviceGetDriverModel_v2(d, &cur, &pend), NVML_ERROR_NOT_SUPPORTED);
	assert_int_equal(P_nvmlDeviceGetDriverModel(d, &cur, NULL), NVML_ERROR_NOT_SUPPORTED);
	assert_int_equal(P_nvmlDeviceGetDriverModel_v2(d, NULL, NULL), NVML_ERROR_INVALID_ARGUMENT);
	nvmlTemperature_t t = {.version = nvmlTemperature_v1, .sensorType = NVML_TEMPERATURE_GPU};
	unsigned c;
	assert_int_equal(P_nvmlDeviceGetTemperatureV(d, &t), NVML_SUCCESS);
	assert_int_equal(N.nvmlDeviceGetTemperature(d, NVML_TEMPERATURE_GPU, &c), NVML_SUCCESS);
	assert_int_equal(t.temperature, (int)c);
	t.version = nvmlMemory_v2;
	assert_int_equal(P_nvmlDeviceGetTemperatureV(d, &t), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
	nvmlConfComputeMemSizeInfo_t cc;
	nvmlMemory_t m;
	assert_int_equal(P_nvmlDeviceGetConfComputeMemSizeInfo(d, &cc), NVML_SUCCESS);
	assert_int_equal(N.nvmlDeviceGetMemoryInfo(d, &m), NVML_SUCCESS);
	assert_int_equal(cc.protectedMemSizeKib, 0);
	assert_int_equal(cc.unprotectedMemSizeKib, m.total / 1024);
	sim_shutdown_all();
	/* No MPS server: every process has its own context, the MPS list is empty. */
	sim_use("h100x1-lost", "2");
	sim_init_ok();
	d = sim_dev(0);
	unsigned n = 4, nc = 8;
	nvmlProcessInfo_t p[8];
	nvmlProcessInfo_v1_t p1[8];
	assert_int_equal(P_nvmlDeviceGetMPSComputeRunningProcesses_v3(d, &n, p), NVML_SUCCESS);
	assert_int_equal(n, 0);
	n = 4;
	assert_int_equal(P_nvmlDeviceGetMPSComputeRunningProcesses(d, &n, p1), NVML_SUCCESS);
	assert_int_equal(n, 0);
	assert_int_equal(N.nvmlDeviceGetComputeRunningProcesses_v3(d, &nc, p), NVML_SUCCESS);
	assert_true(nc >= 1);
	n = 8;
	assert_int_equal(P_nvmlDeviceGetGraphicsRunningProcesses_v2(d, &n, p), NVML_SUCCESS);
	unsigned n1 = 8;
	assert_int_equal(P_nvmlDeviceGetGraphicsRunningProcesses(d, &n1, p1), NVML_SUCCESS);
	assert_int_equal(n, n1);
	sim_shutdown_all();
	/* Ampere has no Confidential Computing. */
	sim_use("a100x4-pcie", "10");
	sim_init_ok();
	assert_int_equal(P_nvmlDeviceGetConfComputeMemSizeInfo(sim_dev(0), &cc),
	                 NVML_ERROR_NOT_SUPPORTED);
	sim_shutdown_all();
	/* Off the bus, each says so. */
	sim_use("h100x1-lost", "30");
	sim_init_ok();
	d = sim_dev(0);
	assert_int_equal(P_nvmlDeviceGetTemperatureV(d, &t), NVML_ERROR_GPU_IS_LOST);
	assert_int_equal(P_nvmlDeviceGetMPSComputeRunningProcesses_v2(d, &n, p),
	                 NVML_ERROR_GPU_IS_LOST);
	assert_int_equal(P_nvmlDeviceGetDriverModel_v2(d, &cur, &pend), NVML_ERROR_GPU_IS_LOST);
	sim_shutdown_all();
}

/* The driver names a process by the path it was started as, like nvidia-smi shows it. */
static void test_process_name_is_path(void **state)
{
	(void)state;
	sim_use("h100x1", NULL);
	sim_init_ok();
	char name[PATH_MAX], argv0[PATH_MAX] = "";
	FILE *f = fopen("/proc/self/cmdline", "re");
	assert_non_null(f);
	size_t k = fread(argv0, 1, sizeof argv0 - 1, f);
	fclose(f);
	argv0[k] = '\0';
	assert_int_equal(N.nvmlSystemGetProcessName((unsigned)getpid(), name, sizeof name),
	                 NVML_SUCCESS);
	assert_string_equal(name, argv0);
	assert_non_null(strchr(name, '/')); /* a path, not the short name */
	assert_int_equal(N.nvmlSystemGetProcessName((unsigned)getpid(), name, 4),
	                 NVML_ERROR_INSUFFICIENT_SIZE);
	sim_shutdown_all();
}

/* rtx4090-throttle caps power at 80-105 s of every 120 s: never above the 450 W limit. */
static void test_power_cap_holds(void **state)
{
	(void)state;
	int capped = 0, under = 0;
	for (int rep = 0; rep < 3; rep++)
		for (double t = 80.1; t < 105; t += 1.0 / 3) {
			char ts[32];
			snprintf(ts, sizeof ts, "%.3f", rep * 120 + t);
			sim_use("rtx4090-throttle", ts);
			sim_init_ok();
			nvmlDevice_t d = sim_dev(0);
			unsigned mw, lim;
			unsigned long long r;
			assert_int_equal(N.nvmlDeviceGetPowerUsage(d, &mw), NVML_SUCCESS);
			assert_int_equal(N.nvmlDeviceGetEnforcedPowerLimit(d, &lim), NVML_SUCCESS);
			assert_int_equal(N.nvmlDeviceGetCurrentClocksEventReasons(d, &r),
			                 NVML_SUCCESS);
			nvmlFieldValue_t fv = {.fieldId = NVML_FI_DEV_POWER_INSTANT};
			assert_int_equal(N.nvmlDeviceGetFieldValues(d, 1, &fv), NVML_SUCCESS);
			if (r & nvmlClocksEventReasonSwPowerCap)
				capped++;
			if (mw < lim)
				under++;
			if (mw > lim)
				fail_msg("t=%s: %u mW over the %u mW enforced limit", ts, mw, lim);
			if (fv.nvmlReturn == NVML_SUCCESS && fv.value.uiVal > lim)
				fail_msg("t=%s: instant %u mW over the limit", ts, fv.value.uiVal);
			sim_shutdown_all();
		}
	assert_true(capped > 60);
	assert_true(under > 0); /* hovering under it, not pinned to it */
}

/* Pinned scenario time: samples are stamped near the wall clock of nvmlInit. */
static void test_pinned_timestamps_are_recent(void **state)
{
	(void)state;
	sim_use("h100x1-lost", "2"); /* a process at 85 % SM until the GPU is lost at 5 s */
	unsigned long long before = wall_us();
	sim_init_ok();
	unsigned long long after = wall_us();
	nvmlDevice_t d = sim_dev(0);
	nvmlSample_t s[200];
	nvmlValueType_t vt;
	unsigned cnt = 200;
	assert_int_equal(
	    N.nvmlDeviceGetSamples(d, NVML_GPU_UTILIZATION_SAMPLES, after - 1000000, &vt, &cnt, s),
	    NVML_SUCCESS);
	assert_true(cnt >= 1);
	for (unsigned i = 0; i < cnt; i++) {
		assert_true(s[i].timeStamp > after - 1000000);
		assert_true(s[i].timeStamp <= after);
	}
	assert_true(s[cnt - 1].timeStamp >=
	            before - 200000); /* the last one is the pinned instant */
	nvmlProcessUtilizationSample_t u[8];
	cnt = 8;
	assert_int_equal(N.nvmlDeviceGetProcessUtilization(d, u, &cnt, after - 1000000),
	                 NVML_SUCCESS);
	assert_true(cnt >= 1);
	assert_true(u[0].smUtil > 0);
	sim_shutdown_all();
}

static int group_setup(void **state)
{
	(void)state;
	if (sim_load() != 0)
		return -1;
#define PEER_LOAD(ret, name, params) *(void **)&P_##name = dlsym(N.h, #name);
	NVML_PEER_ENTRY_POINTS(PEER_LOAD)
#undef PEER_LOAD
	sim_state_setup();
	return 0;
}

static void test_peer_symbols_exported(void **state)
{
	(void)state;
#define CHECK_SYM(ret, name, params)                                                               \
	if (!P_##name)                                                                             \
		fail_msg("%s is not exported", #name);
	NVML_PEER_ENTRY_POINTS(CHECK_SYM)
#undef CHECK_SYM
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_peer_symbols_exported),
	    cmocka_unit_test(test_peer_entry_points),
	    cmocka_unit_test(test_process_name_is_path),
	    cmocka_unit_test(test_power_cap_holds),
	    cmocka_unit_test(test_pinned_timestamps_are_recent),
	};
	return cmocka_run_group_tests(tests, group_setup, sim_group_teardown);
}
