/*
 * test_sim_nvml.c - the simulated libnvidia-ml.so.1 through its NVML entry
 * points: every scenario loads, values are the scenario's, and the return
 * codes follow NVML (uninitialised, bad arguments, sizing calls, features a
 * model lacks, a GPU off the bus, version checks). Clock pinned with
 * GPUWHY_SIM_TIME unless a test needs time to pass.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sim_scenario.h"
#include "test_sim_common.h"

#define MIB 1048576ULL

static void test_every_entry_point_exported(void **state)
{
	(void)state;
#define CHECK_SYM(ret, name, params)                                                               \
	if (!dlsym(N.h, #name))                                                                    \
		fail_msg("%s is not exported", #name);
	NVML_ENTRY_POINTS(CHECK_SYM)
#undef CHECK_SYM
	/* Internal helpers stay hidden. */
	assert_null(dlsym(N.h, "sim_scenario_parse"));
	assert_null(dlsym(N.h, "sim_g"));
}

static void test_uninitialized(void **state)
{
	(void)state;
	unsigned n;
	nvmlDevice_t d;
	char buf[80];
	assert_int_equal(N.nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
	assert_int_equal(N.nvmlDeviceGetHandleByIndex_v2(0, &d), NVML_ERROR_UNINITIALIZED);
	assert_int_equal(N.nvmlSystemGetDriverVersion(buf, sizeof buf), NVML_ERROR_UNINITIALIZED);
	assert_int_equal(N.nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
	nvmlGpmSample_t s;
	assert_int_equal(N.nvmlGpmSampleAlloc(&s), NVML_ERROR_UNINITIALIZED);
	assert_string_equal(N.nvmlErrorString(NVML_ERROR_UNINITIALIZED), "Uninitialized");
}

static void test_init_needs_scenario(void **state)
{
	(void)state;
	unsetenv("GPUWHY_SIM_SCENARIO");
	assert_int_equal(N.nvmlInit_v2(), NVML_ERROR_DRIVER_NOT_LOADED);
	assert_non_null(strstr(N.lastError(), "GPUWHY_SIM_SCENARIO"));
	setenv("GPUWHY_SIM_SCENARIO", "/nonexistent/x.json", 1);
	assert_int_equal(N.nvmlInit_v2(), NVML_ERROR_DRIVER_NOT_LOADED);
	assert_non_null(strstr(N.lastError(), "/nonexistent/x.json: No such file"));
	sim_use_text("broken.json", "{\"schema\": 1,\n  \"gpus\": [}\n", NULL);
	assert_int_equal(N.nvmlInit_v2(), NVML_ERROR_DRIVER_NOT_LOADED);
	if (!strstr(N.lastError(), "broken.json:2:12:"))
		fail_msg("%s", N.lastError());
	sim_use("h100x1", "abc");
	assert_int_equal(N.nvmlInit_v2(), NVML_ERROR_DRIVER_NOT_LOADED);
	assert_non_null(strstr(N.lastError(), "GPUWHY_SIM_TIME=abc"));
	unsigned n;
	assert_int_equal(N.nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
	assert_int_equal(N.nvmlInitWithFlags(8), NVML_ERROR_INVALID_ARGUMENT);
}

static void test_init_refcount(void **state)
{
	(void)state;
	unsigned n = 0;
	sim_use("h100x1", "10");
	sim_init_ok();
	assert_int_equal(N.nvmlInit(), NVML_SUCCESS);
	assert_int_equal(N.nvmlInitWithFlags(0), NVML_SUCCESS);
	assert_int_equal(N.nvmlShutdown(), NVML_SUCCESS);
	assert_int_equal(N.nvmlShutdown(), NVML_SUCCESS);
	assert_int_equal(N.nvmlDeviceGetCount_v2(&n), NVML_SUCCESS);
	assert_int_equal(n, 1);
	assert_int_equal(N.nvmlShutdown(), NVML_SUCCESS);
	assert_int_equal(N.nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
	assert_int_equal(N.nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
}

/* Every shipped scenario loads and reports what its file says. */
static void test_every_scenario_loads(void **state)
{
	(void)state;
	static const char *names[] = {"h100x1",           "h100x8-nvlink",        "a100x4-pcie",
	                              "rtx4090-throttle", "a100x2-pcie-degraded", "l4x2-foreign",
	                              "h100x1-lost"};
	for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
		sim_scenario *s;
		char err[600];
		if (sim_scenario_load(sim_scenario_file(names[k]), &s, err, sizeof err) != 0)
			fail_msg("%s", err);
		sim_use(names[k], "1");
		sim_init_ok();
		unsigned n = 0;
		assert_int_equal(N.nvmlDeviceGetCount_v2(&n), NVML_SUCCESS);
		assert_int_equal(n, (unsigned)s->n_gpus);
		char buf[96];
		int cuda;
		assert_int_equal(N.nvmlSystemGetDriverVersion(buf, sizeof buf), NVML_SUCCESS);
		assert_string_equal(buf, s->driver_version);
		assert_int_equal(N.nvmlSystemGetCudaDriverVersion_v2(&cuda), NVML_SUCCESS);
		assert_int_equal(cuda, s->cuda_version);
		for (unsigned i = 0; i < n; i++) {
			const sim_gpu *g = &s->gpus[i];
			nvmlDevice_t d = sim_dev(i), d2;
			nvmlPciInfo_t pci;
			nvmlMemory_v2_t m = {.version = nvmlMemory_v2};
			unsigned limit, idx;
			assert_int_equal(N.nvmlDeviceGetName(d, buf, sizeof buf), NVML_SUCCESS);
			assert_string_equal(buf, g->name);
			assert_int_equal(N.nvmlDeviceGetUUID(d, buf, sizeof buf), NVML_SUCCESS);
			assert_string_equal(buf, g->uuid);
			assert_int_equal(N.nvmlDeviceGetHandleByUUID(buf, &d2), NVML_SUCCESS);
			assert_ptr_equal(d, d2);
			assert_int_equal(N.nvmlDeviceGetPciInfo_v3(d, &pci), NVML_SUCCESS);
			assert_string_equal(pci.busId, g->pci.bus_id);
			assert_int_equal(pci.pciDeviceId, g->pci.device_id);
			assert_int_equal(N.nvmlDeviceGetHandleByPciBusId_v2(pci.busIdLegacy, &d2),
			                 NVML_SUCCESS);
			assert_ptr_equal(d, d2);
			assert_int_equal(N.nvmlDeviceGetMemoryInfo_v2(d, &m), NVML_SUCCESS);
			assert_int_equal(m.total, g->mem_total * MIB);
			assert_int_equal(m.reserved, g->mem_reserved * MIB);
			assert_int_equal(m.total, m.reserved + m.used + m.free);
			assert_int_equal(N.nvmlDeviceGetPowerManagementLimit(d, &limit),
			                 NVML_SUCCESS);
			assert_int_equal(limit, (unsigned)(g->power_limit * 1000));
			assert_int_equal(N.nvmlDeviceGetIndex(d, &idx), NVML_SUCCESS);
			assert_int_equal(idx, i);
		}
		sim_shutdown_all();
		sim_scenario_free(s);
	}
}

static void test_h100x1_values(void **state)
{
	(void)state;
	sim_use("h100x1", "10");
	sim_init_ok();
	nvmlDevice_t d = sim_dev(0);
	char buf[96];
	unsigned u, u2, u3, u4;
	int major, minor;
	nvmlEnableState_t en, en2;
	unsigned long long ull;
	assert_int_equal(N.nvmlDeviceGetName(d, buf, sizeof buf), NVML_SUCCESS);
	assert_string_equal(buf, "NVIDIA H100 80GB HBM3");
	assert_int_equal(N.nvmlDeviceGetName(d, buf, 5), NVML_ERROR_INSUFFICIENT_SIZE);
	assert_int_equal(N.nvmlDeviceGetSerial(d, buf, sizeof buf), NVML_SUCCESS);
	assert_string_equal(buf, "1654123012345");
	assert_int_equal(N.nvmlDeviceGetVbiosVersion(d, buf, sizeof buf), NVML_SUCCESS);
	assert_string_equal(buf, "96.00.89.00.01");
	assert_int_equal(N.nvmlSystemGetNVMLVersion(buf, sizeof buf), NVML_SUCCESS);
	assert_string_equal(buf, "12.550.54.15");

	nvmlMemory_v2_t m2 = {.version = nvmlMemory_v2};
	nvmlMemory_t m1;
	assert_int_equal(N.nvmlDeviceGetMemoryInfo_v2(d, &m2), NVML_SUCCESS);
	assert_int_equal(m2.total, 81559 * MIB);
	assert_int_equal(m2.reserved, 328 * MIB);
	assert_int_equal(m2.used, 0);
	assert_int_equal(m2.free, (81559 - 328) * MIB);
	assert_int_equal(N.nvmlDeviceGetMemoryInfo(d, &m1), NVML_SUCCESS);
	assert_int_equal(m1.used, 328 * MIB); /* v1 counts reserved as used */
	assert_int_equal(m1.free, m2.free);
	m2.version = 1;
	assert_int_equal(N.nvmlDeviceGetMemoryInfo_v2(d, &m2),
	                 NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
	nvmlBAR1Memory_t bar1;
	assert_int_equal(N.nvmlDeviceGetBAR1MemoryInfo(d, &bar1), NVML_SUCCESS);
	assert_int_equal(bar1.bar1Total, 131072 * MIB);

	nvmlUtilization_t util;
	assert_int_equal(N.nvmlDeviceGetUtilizationRates(d, &util), NVML_SUCCESS);
	assert_int_equal(util.gpu, 0);
	assert_int_equal(util.memory, 0);
	assert_int_equal(N.nvmlDeviceGetPowerUsage(d, &u), NVML_SUCCESS);
	assert_int_equal(u, 71000);
	assert_int_equal(N.nvmlDeviceGetPowerManagementDefaultLimit(d, &u), NVML_SUCCESS);
	assert_int_equal(u, 700000);
	assert_int_equal(N.nvmlDeviceGetEnforcedPowerLimit(d, &u), NVML_SUCCESS);
	assert_int_equal(u, 700000);
	assert_int_equal(N.nvmlDeviceGetPowerManagementLimitConstraints(d, &u, &u2), NVML_SUCCESS);
	assert_int_equal(u, 200000);
	assert_int_equal(u2, 700000);
	assert_int_equal(N.nvmlDeviceGetTotalEnergyConsumption(d, &ull), NVML_SUCCESS);
	assert_int_equal(ull, 710000); /* 71 W for 10 s, in mJ */
	assert_int_equal(N.nvmlDeviceGetTemperature(d, NVML_TEMPERATURE_GPU, &u), NVML_SUCCESS);
	assert_int_equal(u, 33);
	assert_int_equal(N.nvmlDeviceGetTemperature(d, 7, &u), NVML_ERROR_INVALID_ARGUMENT);
	assert_int_equal(
	    N.nvmlDeviceGetTemperatureThreshold(d, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, &u),
	    NVML_SUCCESS);
	assert_int_equal(u, 90);
	assert_int_equal(
	    N.nvmlDeviceGetTemperatureThreshold(d, NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, &u),
	    NVML_SUCCESS);
	assert_int_equal(u, 92);
	assert_int_equal(
	    N.nvmlDeviceGetTemperatureThreshold(d, NVML_TEMPERATURE_THRESHOLD_GPU_MAX, &u),
	    NVML_SUCCESS);
	assert_int_equal(u, 87);
	assert_int_equal(N.nvmlDeviceGetTemperatureThreshold(d, 4, &u), NVML_ERROR_NOT_SUPPORTED);
	assert_int_equal(N.nvmlDeviceGetTemperatureThreshold(d, 99, &u),
	                 NVML_ERROR_INVALID_ARGUMENT);
	assert_int_equal(N.nvmlDeviceGetFanSpeed(d, &u), NVML_ERROR_NOT_SUPPORTED);

	assert_int_equal(N.nvmlDeviceGetClockInfo(d, NVML_CLOCK_SM, &u), NVML_SUCCESS);
	assert_int_equal(u, 345);
	assert_int_equal(N.nvmlDeviceGetClockInfo(d, NVML_CLOCK_MEM, &u), NVML_SUCCESS);
	assert_int_equal(u, 2619);
	assert_int_equal(N.nvmlDeviceGetClockInfo(d, 9, &u), NVML_ERROR_INVALID_ARGUMENT);
	assert_int_equal(N.nvmlDeviceGetMaxClockInfo(d, NVML_CLOCK_SM, &u), NVML_SUCCESS);
	assert_int_equal(u, 1980);
	assert_int_equal(N.nvmlDeviceGetApplicationsClock(d, NVML_CLOCK_MEM, &u), NVML_SUCCESS);
	assert_int_equal(u, 2619);
	assert_int_equal(
	    N.nvmlDeviceGetClock(d, NVML_CLOCK_SM, NVML_CLOCK_ID_APP_CLOCK_DEFAULT, &u),
	    NVML_SUCCESS);
	assert_int_equal(u, 1980);
	assert_int_equal(N.nvmlDeviceGetCurrentClocksEventReasons(d, &ull), NVML_SUCCESS);
	assert_int_equal(ull, nvmlClocksEventReasonGpuIdle);
	assert_int_equal(N.nvmlDeviceGetCurrentClocksThrottleReasons(d, &ull), NVML_SUCCESS);
	assert_int_equal(ull, nvmlClocksEventReasonGpuIdle);
	nvmlPstates_t ps;
	assert_int_equal(N.nvmlDeviceGetPerformanceState(d, &ps), NVML_SUCCESS);
	assert_int_equal(ps, 0);

	assert_int_equal(N.nvmlDeviceGetCurrPcieLinkGeneration(d, &u), NVML_SUCCESS);
	assert_int_equal(u, 5);
	assert_int_equal(N.nvmlDeviceGetMaxPcieLinkWidth(d, &u), NVML_SUCCESS);
	assert_int_equal(u, 16);
	assert_int_equal(N.nvmlDeviceGetGpuMaxPcieLinkGeneration(d, &u), NVML_SUCCESS);
	assert_int_equal(u, 5);
	assert_int_equal(N.nvmlDeviceGetPcieReplayCounter(d, &u), NVML_SUCCESS);
	assert_int_equal(u, 0);

	nvmlDeviceArchitecture_t arch;
	assert_int_equal(N.nvmlDeviceGetArchitecture(d, &arch), NVML_SUCCESS);
	assert_int_equal(arch, NVML_DEVICE_ARCH_HOPPER);
	assert_int_equal(N.nvmlDeviceGetCudaComputeCapability(d, &major, &minor), NVML_SUCCESS);
	assert_int_equal(major * 10 + minor, 90);
	assert_int_equal(N.nvmlDeviceGetPersistenceMode(d, &en), NVML_SUCCESS);
	assert_int_equal(en, NVML_FEATURE_ENABLED);
	nvmlComputeMode_t cm;
	assert_int_equal(N.nvmlDeviceGetComputeMode(d, &cm), NVML_SUCCESS);
	assert_int_equal(cm, NVML_COMPUTEMODE_DEFAULT);
	assert_int_equal(N.nvmlDeviceGetMigMode(d, &u, &u2), NVML_SUCCESS);
	assert_int_equal(u, 0);
	assert_int_equal(N.nvmlDeviceGetEccMode(d, &en, &en2), NVML_SUCCESS);
	assert_int_equal(en, NVML_FEATURE_ENABLED);
	assert_int_equal(N.nvmlDeviceGetTotalEccErrors(d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
	                                               NVML_AGGREGATE_ECC, &ull),
	                 NVML_SUCCESS);
	assert_int_equal(ull, 0);
	assert_int_equal(N.nvmlDeviceGetTotalEccErrors(d, 5, NVML_AGGREGATE_ECC, &ull),
	                 NVML_ERROR_INVALID_ARGUMENT);
	assert_int_equal(N.nvmlDeviceGetRemappedRows(d, &u, &u2, &u3, &u4), NVML_SUCCESS);
	assert_int_equal(u + u2 + u3 + u4, 0);
	/* Ampere and newer remap rows instead of retiring pages. */
	unsigned cnt = 0;
	assert_int_equal(N.nvmlDeviceGetRetiredPages(
	                     d, NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, &cnt, NULL),
	                 NVML_ERROR_NOT_SUPPORTED);
	/* A GPU without NVENC reports 0 %, as a real H100 on 590 does. */
	assert_int_equal(N.nvmlDeviceGetEncoderUtilization(d, &u, &u2), NVML_SUCCESS);
	assert_int_equal(u, 0);
	assert_int_equal(N.nvmlDeviceGetDecoderUtilization(d, &u, &u2), NVML_SUCCESS);
	assert_int_equal(u2, 166667);

	assert_int_equal(N.nvmlDeviceGetNumaNodeId(d, &u), NVML_SUCCESS);
	assert_int_equal(u, 0);
	unsigned long cpus[4] = {0};
	assert_int_equal(N.nvmlDeviceGetCpuAffinity(d, 4, cpus), NVML_SUCCESS);
	assert_int_equal(cpus[0], 0x00FFFFFFFFFFFFFFUL); /* CPUs 0-55 */
	assert_int_equal(cpus[1], 0xFFFF000000000000UL); /* 112-127 */
	assert_int_equal(cpus[2], 0x000000FFFFFFFFFFUL); /* 128-167 */
	assert_int_equal(N.nvmlDeviceGetCpuAffinity(d, 0, cpus), NVML_ERROR_INVALID_ARGUMENT);

	nvmlGpmSupport_t gs = {.version = NVML_GPM_SUPPORT_VERSION};
	assert_int_equal(N.nvmlGpmQueryDeviceSupport(d, &gs), NVML_SUCCESS);
	assert_int_equal(gs.isSupportedDevice, 1);
	gs.version = 2;
	assert_int_equal(N.nvmlGpmQueryDeviceSupport(d, &gs), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);

	/* NVLink: 18 links through NVSwitches; past the count is an invalid argument. */
	assert_int_equal(N.nvmlDeviceGetNvLinkState(d, 17, &en), NVML_SUCCESS);
	assert_int_equal(en, NVML_FEATURE_ENABLED);
	assert_int_equal(N.nvmlDeviceGetNvLinkState(d, 18, &en), NVML_ERROR_INVALID_ARGUMENT);
	nvmlPciInfo_t pci;
	assert_int_equal(N.nvmlDeviceGetNvLinkRemotePciInfo_v2(d, 5, &pci), NVML_SUCCESS);
	assert_string_equal(pci.busId, "00000000:06:00.0");
	nvmlIntNvLinkDeviceType_t lt;
	assert_int_equal(N.nvmlDeviceGetNvLinkRemoteDeviceType(d, 0, &lt), NVML_SUCCESS);
	assert_int_equal(lt, NVML_NVLINK_DEVICE_TYPE_SWITCH);
	nvmlGpuTopologyLevel_t lvl;
	assert_int_equal(N.nvmlDeviceGetTopologyCommonAncestor(d, d, &lvl), NVML_SUCCESS);
	assert_int_equal(lvl, NVML_TOPOLOGY_INTERNAL);

	/* Bad handles and NULL outputs. */
	assert_int_equal(N.nvmlDeviceGetPowerUsage(NULL, &u), NVML_ERROR_INVALID_ARGUMENT);
	assert_int_equal(N.nvmlDeviceGetPowerUsage((nvmlDevice_t)&u, &u),
	                 NVML_ERROR_INVALID_ARGUMENT);
	assert_int_equal(N.nvmlDeviceGetPowerUsage(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
	nvmlDevice_t d2;
	assert_int_equal(N.nvmlDeviceGetHandleByIndex_v2(1, &d2), NVML_ERROR_INVALID_ARGUMENT);
	assert_int_equal(N.nvmlDeviceGetHandleByUUID("GPU-nope", &d2), NVML_ERROR_NOT_FOUND);
	assert_int_equal(N.nvmlDeviceGetHandleByPciBusId_v2("0000:99:00.0", &d2),
	                 NVML_ERROR_NOT_FOUND);
	sim_shutdown_all();
}

static void test_consumer_card_lacks_features(void **state)
{
	(void)state;
	sim_use("rtx4090-throttle", "10");
	sim_init_ok();
	nvmlDevice_t d = sim_dev(0);
	unsigned u, u2, u3, u4;
	char buf[64];
	unsigned long long ull;
	nvmlEnableState_t en, en2;
	assert_int_equal(N.nvmlDeviceGetSerial(d, buf, sizeof buf), NVML_ERROR_NOT_SUPPORTED);
	assert_int_equal(N.nvmlDeviceGetEccMode(d, &en, &en2), NVML_ERROR_NOT_SUPPORTED);
	assert_int_equal(N.nvmlDeviceGetTotalEccErrors(d, NVML_MEMORY_ERROR_TYPE_CORRECTED,
	                                               NVML_VOLATILE_ECC, &ull),
	                 NVML_ERROR_NOT_SUPPORTED);
	assert_int_equal(N.nvmlDeviceGetRemappedRows(d, &u, &u2, &u3, &u4),
	                 NVML_ERROR_NOT_SUPPORTED);
	assert_int_equal(N.nvmlDeviceGetMigMode(d, &u, &u2), NVML_ERROR_NOT_SUPPORTED);
	assert_int_equal(N.nvmlDeviceGetApplicationsClock(d, NVML_CLOCK_GRAPHICS, &u),
	                 NVML_ERROR_NOT_SUPPORTED);
	assert_int_equal(N.nvmlDeviceGetNvLinkState(d, 0, &en), NVML_ERROR_NOT_SUPPORTED);
	nvmlGpmSupport_t gs = {.version = NVML_GPM_SUPPORT_VERSION};
	assert_int_equal(N.nvmlGpmQueryDeviceSupport(d, &gs), NVML_SUCCESS);
	assert_int_equal(gs.isSupportedDevice, 0);
	nvmlGpmSample_t s;
	assert_int_equal(N.nvmlGpmSampleAlloc(&s), NVML_SUCCESS);
	assert_int_equal(N.nvmlGpmSampleGet(d, s), NVML_ERROR_NOT_SUPPORTED);
	assert_int_equal(N.nvmlGpmSampleFree(s), NVML_SUCCESS);
	assert_int_equal(N.nvmlDeviceGetFanSpeed(d, &u), NVML_SUCCESS);
	assert_true(u >= 30 && u <= 62);
	nvmlPstates_t ps;
	assert_int_equal(N.nvmlDeviceGetPerformanceState(d, &ps), NVML_SUCCESS);
	assert_int_equal(ps, 2);
	nvmlFieldValue_t f = {.fieldId = NVML_FI_DEV_MEMORY_TEMP};
	assert_int_equal(N.nvmlDeviceGetFieldValues(d, 1, &f), NVML_SUCCESS);
	assert_int_equal(f.nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
	sim_shutdown_all();
}

static void reasons_clock_at(const char *t, unsigned long long *reasons, unsigned *sm,
                             unsigned *power_mw, unsigned *temp, unsigned *fan)
{
	sim_use("rtx4090-throttle", t);
	sim_init_ok();
	nvmlDevice_t d = sim_dev(0);
	assert_int_equal(N.nvmlDeviceGetCurrentClocksEventReasons(d, reasons), NVML_SUCCESS);
	assert_int_equal(N.nvmlDeviceGetClockInfo(d, NVML_CLOCK_SM, sm), NVML_SUCCESS);
	assert_int_equal(N.nvmlDeviceGetPowerUsage(d, power_mw), NVML_SUCCESS);
	assert_int_equal(N.nvmlDeviceGetTemperature(d, NVML_TEMPERATURE_GPU, temp), NVML_SUCCESS);
	assert_int_equal(N.nvmlDeviceGetFanSpeed(d, fan), NVML_SUCCESS);
	sim_shutdown_all();
}

static void test_throttle_episodes(void **state)
{
	(void)state;
	unsigned long long r;
	unsigned sm, p, t, fan;
	reasons_clock_at("10", &r, &sm, &p, &t, &fan);
	assert_int_equal(r, 0);
	assert_int_equal(sm, 2745);
	reasons_clock_at("45", &r, &sm, &p, &t, &fan);
	assert_int_equal(r, nvmlClocksEventReasonSwThermalSlowdown |
	                        nvmlClocksThrottleReasonHwThermalSlowdown);
	assert_int_equal(sm, 1650);
	assert_true(t >= 88 && t <= 90);
	assert_int_equal(fan, 100);
	reasons_clock_at("90", &r, &sm, &p, &t, &fan);
	assert_int_equal(r, nvmlClocksEventReasonSwPowerCap);
	assert_int_equal(sm, 2280);
	assert_true(p >= 444000 && p <= 456000);
	/* The behaviour repeats every 120 s. */
	unsigned long long r2;
	unsigned sm2, p2, t2, fan2;
	reasons_clock_at("165", &r2, &sm2, &p2, &t2, &fan2);
	assert_int_equal(r2, nvmlClocksEventReasonSwThermalSlowdown |
	                         nvmlClocksThrottleReasonHwThermalSlowdown);
	assert_int_equal(sm2, 1650);
}

static void test_topology_and_links(void **state)
{
	(void)state;
	nvmlGpuTopologyLevel_t lvl;
	nvmlEnableState_t en;
	sim_use("a100x4-pcie", "1");
	sim_init_ok();
	assert_int_equal(N.nvmlDeviceGetTopologyCommonAncestor(sim_dev(0), sim_dev(1), &lvl),
	                 NVML_SUCCESS);
	assert_int_equal(lvl, NVML_TOPOLOGY_SINGLE);
	assert_int_equal(N.nvmlDeviceGetTopologyCommonAncestor(sim_dev(1), sim_dev(2), &lvl),
	                 NVML_SUCCESS);
	assert_int_equal(lvl, NVML_TOPOLOGY_SYSTEM);
	assert_int_equal(N.nvmlDeviceGetTopologyCommonAncestor(sim_dev(2), sim_dev(3), &lvl),
	                 NVML_SUCCESS);
	assert_int_equal(lvl, NVML_TOPOLOGY_SINGLE);
	assert_int_equal(N.nvmlDeviceGetNvLinkState(sim_dev(0), 0, &en), NVML_ERROR_NOT_SUPPORTED);
	nvmlGpmSupport_t gs = {.version = NVML_GPM_SUPPORT_VERSION};
	assert_int_equal(N.nvmlGpmQueryDeviceSupport(sim_dev(0), &gs), NVML_SUCCESS);
	assert_int_equal(gs.isSupportedDevice, 0);
	sim_shutdown_all();

	sim_use("h100x8-nvlink", "1");
	sim_init_ok();
	assert_int_equal(N.nvmlDeviceGetTopologyCommonAncestor(sim_dev(0), sim_dev(1), &lvl),
	                 NVML_SUCCESS);
	assert_int_equal(lvl, NVML_TOPOLOGY_HOSTBRIDGE);
	assert_int_equal(N.nvmlDeviceGetTopologyCommonAncestor(sim_dev(0), sim_dev(3), &lvl),
	                 NVML_SUCCESS);
	assert_int_equal(lvl, NVML_TOPOLOGY_NODE);
	assert_int_equal(N.nvmlDeviceGetTopologyCommonAncestor(sim_dev(3), sim_dev(4), &lvl),
	                 NVML_SUCCESS);
	assert_int_equal(lvl, NVML_TOPOLOGY_SYSTEM);
	/* Every GPU reaches the same four NVSwitches with 18 links: NV18 between any pair. */
	for (unsigned i = 0; i < 8; i++) {
		unsigned links = 0;
		nvmlPciInfo_t pci;
		for (unsigned l = 0; N.nvmlDeviceGetNvLinkState(sim_dev(i), l, &en) == NVML_SUCCESS;
		     l++)
			links += en == NVML_FEATURE_ENABLED;
		assert_int_equal(links, 18);
		assert_int_equal(N.nvmlDeviceGetNvLinkRemotePciInfo_v2(sim_dev(i), 17, &pci),
		                 NVML_SUCCESS);
		assert_string_equal(pci.busId, "00000000:08:00.0");
		assert_int_equal(pci.pciDeviceId, 0x22A310DE);
		unsigned node;
		assert_int_equal(N.nvmlDeviceGetNumaNodeId(sim_dev(i), &node), NVML_SUCCESS);
		assert_int_equal(node, i < 4 ? 0 : 1);
	}
	nvmlFieldValue_t f[2] = {{.fieldId = NVML_FI_DEV_NVLINK_LINK_COUNT},
	                         {.fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, .scopeId = 40}};
	assert_int_equal(N.nvmlDeviceGetFieldValues(sim_dev(5), 2, f), NVML_SUCCESS);
	assert_int_equal(f[0].nvmlReturn, NVML_SUCCESS);
	assert_int_equal(f[0].value.uiVal, 18);
	assert_int_equal(f[1].nvmlReturn, NVML_ERROR_INVALID_ARGUMENT);
	sim_shutdown_all();
}

static void test_degraded_link_and_replays(void **state)
{
	(void)state;
	sim_use("a100x2-pcie-degraded", "10");
	sim_init_ok();
	nvmlDevice_t d0 = sim_dev(0), d1 = sim_dev(1);
	unsigned u;
	assert_int_equal(N.nvmlDeviceGetCurrPcieLinkGeneration(d0, &u), NVML_SUCCESS);
	assert_int_equal(u, 3);
	assert_int_equal(N.nvmlDeviceGetCurrPcieLinkWidth(d0, &u), NVML_SUCCESS);
	assert_int_equal(u, 8);
	assert_int_equal(N.nvmlDeviceGetMaxPcieLinkGeneration(d0, &u), NVML_SUCCESS);
	assert_int_equal(u, 4);
	assert_int_equal(N.nvmlDeviceGetMaxPcieLinkWidth(d0, &u), NVML_SUCCESS);
	assert_int_equal(u, 16);
	assert_int_equal(N.nvmlDeviceGetPcieReplayCounter(d0, &u), NVML_SUCCESS);
	assert_int_equal(u, 1400); /* 1200 + 20/s for 10 s */
	assert_int_equal(N.nvmlDeviceGetPcieReplayCounter(d1, &u), NVML_SUCCESS);
	assert_int_equal(u, 0);
	nvmlFieldValue_t f[3] = {{.fieldId = NVML_FI_DEV_PCIE_REPLAY_COUNTER},
	                         {.fieldId = NVML_FI_DEV_PCIE_COUNT_RX_BYTES},
	                         {.fieldId = 4242}};
	assert_int_equal(N.nvmlDeviceGetFieldValues(d0, 3, f), NVML_SUCCESS);
	assert_int_equal(f[0].nvmlReturn, NVML_SUCCESS);
	assert_int_equal(f[0].value.ullVal, 1400);
	assert_int_equal(f[1].nvmlReturn, NVML_SUCCESS);
	assert_int_equal(f[1].value.ullVal, 5200ULL * MIB * 10); /* 5200 MiB/s for 10 s */
	assert_int_equal(f[2].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
	assert_int_equal(N.nvmlDeviceGetFieldValues(d0, 0, f), NVML_ERROR_INVALID_ARGUMENT);
	nvmlUtilization_t ut;
	assert_int_equal(N.nvmlDeviceGetUtilizationRates(d1, &ut), NVML_SUCCESS);
	assert_int_equal(ut.gpu, 62);
	sim_shutdown_all();
	sim_use("a100x2-pcie-degraded", "20");
	sim_init_ok();
	assert_int_equal(N.nvmlDeviceGetPcieReplayCounter(sim_dev(0), &u), NVML_SUCCESS);
	assert_int_equal(u, 1600);
	/* The 20 ms PCIe throughput call reports the scenario's traffic, in KB/s. */
	assert_int_equal(N.nvmlDeviceGetPcieThroughput(sim_dev(0), NVML_PCIE_UTIL_RX_BYTES, &u),
	                 NVML_SUCCESS);
	assert_int_equal(u, 5200 * 1024);
	assert_int_equal(N.nvmlDeviceGetPcieThroughput(sim_dev(0), 2, &u),
	                 NVML_ERROR_INVALID_ARGUMENT);
	sim_shutdown_all();
}

static void test_foreign_processes(void **state)
{
	(void)state;
	sim_use("l4x2-foreign", "10");
	sim_init_ok();
	nvmlDevice_t d0 = sim_dev(0), d1 = sim_dev(1);
	unsigned cnt = 0;
	nvmlProcessInfo_t p[4];
	nvmlProcessInfo_v1_t p1[4];
	/* Sizing: too small a buffer gives INSUFFICIENT_SIZE and the count needed. */
	assert_int_equal(N.nvmlDeviceGetComputeRunningProcesses_v3(d0, &cnt, NULL),
	                 NVML_ERROR_INSUFFICIENT_SIZE);
	assert_int_equal(cnt, 1);
	cnt = 4;
	assert_int_equal(N.nvmlDeviceGetComputeRunningProcesses_v3(d0, &cnt, NULL),
	                 NVML_ERROR_INVALID_ARGUMENT);
	assert_int_equal(N.nvmlDeviceGetComputeRunningProcesses_v3(d0, NULL, p),
	                 NVML_ERROR_INVALID_ARGUMENT);
	cnt = 4;
	assert_int_equal(N.nvmlDeviceGetComputeRunningProcesses_v3(d0, &cnt, p), NVML_SUCCESS);
	assert_int_equal(cnt, 1);
	assert_int_equal(p[0].pid, 1);
	assert_int_equal(p[0].usedGpuMemory, 15360 * MIB);
	assert_int_equal(p[0].gpuInstanceId, 0xFFFFFFFFu);
	cnt = 4;
	assert_int_equal(N.nvmlDeviceGetComputeRunningProcesses_v2(d1, &cnt, p), NVML_SUCCESS);
	assert_int_equal(cnt, 1);
	assert_int_equal(p[0].pid, 4194001);
	cnt = 4;
	assert_int_equal(N.nvmlDeviceGetComputeRunningProcesses(d1, &cnt, p1), NVML_SUCCESS);
	assert_int_equal(p1[0].usedGpuMemory, 9216 * MIB);
	cnt = 0;
	assert_int_equal(N.nvmlDeviceGetGraphicsRunningProcesses_v3(d0, &cnt, NULL), NVML_SUCCESS);
	assert_int_equal(cnt, 0);
	nvmlMemory_v2_t m = {.version = nvmlMemory_v2};
	assert_int_equal(N.nvmlDeviceGetMemoryInfo_v2(d1, &m), NVML_SUCCESS);
	assert_int_equal(m.used, 9216 * MIB);

	/* Per-process utilization: sizing, then the sample. */
	nvmlProcessUtilizationSample_t s[4];
	cnt = 0;
	assert_int_equal(N.nvmlDeviceGetProcessUtilization(d0, NULL, &cnt, 0),
	                 NVML_ERROR_INSUFFICIENT_SIZE);
	assert_int_equal(cnt, 1);
	cnt = 4;
	assert_int_equal(N.nvmlDeviceGetProcessUtilization(d0, s, &cnt, 0), NVML_SUCCESS);
	assert_int_equal(cnt, 1);
	assert_int_equal(s[0].pid, 1);
	assert_int_equal(s[0].smUtil, 40);
	/*
	 * Pinned, the scenario stands still while the wall clock runs: asking
	 * again for samples newer than that one (nvtop's next refresh) gets a new
	 * sample of the same steady instant, stamped later; a stamp from the
	 * future finds none.
	 */
	unsigned long long seen = s[0].timeStamp;
	cnt = 4;
	assert_int_equal(N.nvmlDeviceGetProcessUtilization(d0, s, &cnt, seen), NVML_SUCCESS);
	assert_int_equal(cnt, 1);
	assert_true(s[0].timeStamp > seen);
	assert_int_equal(s[0].smUtil, 40);
	cnt = 4;
	assert_int_equal(N.nvmlDeviceGetProcessUtilization(d0, s, &cnt, seen + 3600000000ULL),
	                 NVML_ERROR_NOT_FOUND);
	/* A process holding memory and running nothing has no samples. */
	cnt = 4;
	assert_int_equal(N.nvmlDeviceGetProcessUtilization(d1, s, &cnt, 0), NVML_ERROR_NOT_FOUND);
	char name[64];
	assert_int_equal(N.nvmlSystemGetProcessName(4194001, name, sizeof name), NVML_SUCCESS);
	assert_string_equal(name, "python3");
	assert_int_equal(N.nvmlSystemGetProcessName(4194001, name, 3),
	                 NVML_ERROR_INSUFFICIENT_SIZE);
	sim_shutdown_all();
}

static void test_driver_samples(void **state)
{
	(void)state;
	sim_use("a100x2-pcie-degraded", "10");
	sim_init_ok();
	nvmlDevice_t d = sim_dev(1);
	nvmlValueType_t vt;
	unsigned cnt = 0;
	nvmlSample_t s[200];
	/* 10 s at 1/6 s: 60 samples since the clock started. */
	assert_int_equal(
	    N.nvmlDeviceGetSamples(d, NVML_GPU_UTILIZATION_SAMPLES, 0, &vt, &cnt, NULL),
	    NVML_SUCCESS);
	assert_int_equal(cnt, 60);
	assert_int_equal(vt, NVML_VALUE_TYPE_UNSIGNED_INT);
	cnt = 10;
	assert_int_equal(N.nvmlDeviceGetSamples(d, NVML_GPU_UTILIZATION_SAMPLES, 0, &vt, &cnt, s),
	                 NVML_ERROR_INSUFFICIENT_SIZE);
	assert_int_equal(cnt, 60);
	cnt = 200;
	assert_int_equal(N.nvmlDeviceGetSamples(d, NVML_GPU_UTILIZATION_SAMPLES, 0, &vt, &cnt, s),
	                 NVML_SUCCESS);
	assert_int_equal(cnt, 60);
	for (unsigned i = 0; i < cnt; i++) {
		assert_int_equal(s[i].sampleValue.uiVal, 62);
		/* Microsecond timestamps of 1/6 s periods: 166666 or 166667 apart. */
		if (i)
			assert_in_range(s[i].timeStamp - s[i - 1].timeStamp, 166666, 166667);
	}
	unsigned long long seen = s[49].timeStamp;
	cnt = 200;
	assert_int_equal(
	    N.nvmlDeviceGetSamples(d, NVML_GPU_UTILIZATION_SAMPLES, seen, &vt, &cnt, s),
	    NVML_SUCCESS);
	assert_int_equal(cnt, 10);
	cnt = 200;
	assert_int_equal(
	    N.nvmlDeviceGetSamples(d, NVML_GPU_UTILIZATION_SAMPLES, s[9].timeStamp, &vt, &cnt, s),
	    NVML_ERROR_NOT_FOUND);
	cnt = 200;
	assert_int_equal(N.nvmlDeviceGetSamples(d, NVML_TOTAL_POWER_SAMPLES, 0, &vt, &cnt, s),
	                 NVML_SUCCESS);
	assert_int_equal(s[0].sampleValue.uiVal,
	                 169202); /* 44 + 231 * (0.35 * 0.62 + 0.65 * 0.5) W */
	cnt = 200;
	assert_int_equal(N.nvmlDeviceGetSamples(d, NVML_MODULE_POWER_SAMPLES, 0, &vt, &cnt, s),
	                 NVML_ERROR_NOT_SUPPORTED);
	assert_int_equal(N.nvmlDeviceGetSamples(d, 42, 0, &vt, &cnt, s),
	                 NVML_ERROR_INVALID_ARGUMENT);
	sim_shutdown_all();
	/* At time 0 nothing has been sampled yet. */
	sim_use("a100x2-pcie-degraded", "0");
	sim_init_ok();
	cnt = 200;
	assert_int_equal(
	    N.nvmlDeviceGetSamples(sim_dev(0), NVML_GPU_UTILIZATION_SAMPLES, 0, &vt, &cnt, s),
	    NVML_ERROR_NOT_FOUND);
	sim_shutdown_all();
}

static void test_gpu_lost(void **state)
{
	(void)state;
	unsigned u, n;
	nvmlUtilization_t ut;
	sim_use("h100x1-lost", "4.9");
	sim_init_ok();
	assert_int_equal(N.nvmlDeviceGetUtilizationRates(sim_dev(0), &ut), NVML_SUCCESS);
	assert_int_equal(ut.gpu, 85);
	sim_shutdown_all();
	sim_use("h100x1-lost", "5");
	sim_init_ok();
	assert_int_equal(N.nvmlDeviceGetCount_v2(&n), NVML_SUCCESS);
	assert_int_equal(n, 1);
	nvmlDevice_t d = sim_dev(0);
	assert_non_null(d);
	char buf[96];
	nvmlMemory_v2_t m = {.version = nvmlMemory_v2};
	nvmlFieldValue_t f = {.fieldId = NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION};
	nvmlProcessInfo_t p[2];
	nvmlGpmSample_t gs;
	assert_int_equal(N.nvmlDeviceGetName(d, buf, sizeof buf), NVML_ERROR_GPU_IS_LOST);
	assert_int_equal(N.nvmlDeviceGetUtilizationRates(d, &ut), NVML_ERROR_GPU_IS_LOST);
	assert_int_equal(N.nvmlDeviceGetMemoryInfo_v2(d, &m), NVML_ERROR_GPU_IS_LOST);
	assert_int_equal(N.nvmlDeviceGetPowerUsage(d, &u), NVML_ERROR_GPU_IS_LOST);
	assert_int_equal(N.nvmlDeviceGetFieldValues(d, 1, &f), NVML_ERROR_GPU_IS_LOST);
	u = 2;
	assert_int_equal(N.nvmlDeviceGetComputeRunningProcesses_v3(d, &u, p),
	                 NVML_ERROR_GPU_IS_LOST);
	assert_int_equal(N.nvmlGpmSampleAlloc(&gs), NVML_SUCCESS);
	assert_int_equal(N.nvmlGpmSampleGet(d, gs), NVML_ERROR_GPU_IS_LOST);
	N.nvmlGpmSampleFree(gs);
	sim_shutdown_all();
}

/* A GPU that falls off the bus 0.3 s after the clock starts, seen live through events. */
static void test_lost_event(void **state)
{
	(void)state;
	sim_use_text("lost-soon.json",
	             SIM_TEST_HEAD "\"gpus\": [{" SIM_TEST_GPU_BASE ", \"lost_after_s\": 0.3, "
	                           "\"ecc\": {}, \"episodes\": [{\"kind\": \"xid\", \"at_s\": 0.1, "
	                           "\"code\": 48}]}]}",
	             NULL);
	sim_init_ok();
	nvmlDevice_t d = sim_dev(0);
	nvmlEventSet_t set;
	nvmlEventData_t ev;
	assert_int_equal(N.nvmlEventSetCreate(&set), NVML_SUCCESS);
	assert_int_equal(N.nvmlDeviceRegisterEvents(d, 0x4, set), NVML_ERROR_NOT_SUPPORTED);
	assert_int_equal(N.nvmlDeviceRegisterEvents(d, nvmlEventTypeXidCriticalError, set),
	                 NVML_SUCCESS);
	assert_int_equal(N.nvmlEventSetWait_v2(set, &ev, 2000), NVML_SUCCESS);
	assert_ptr_equal(ev.device, d);
	assert_int_equal(ev.eventType, nvmlEventTypeXidCriticalError);
	assert_int_equal(ev.eventData, 48);
	assert_int_equal(N.nvmlEventSetWait_v2(set, &ev, 2000), NVML_SUCCESS);
	assert_int_equal(ev.eventData, 79);
	unsigned u;
	assert_int_equal(N.nvmlDeviceGetPowerUsage(d, &u), NVML_ERROR_GPU_IS_LOST);
	assert_int_equal(N.nvmlEventSetWait_v2(set, &ev, 50), NVML_ERROR_TIMEOUT);
	assert_int_equal(N.nvmlEventSetFree(set), NVML_SUCCESS);
	sim_shutdown_all();
}

static void test_gpm_metrics(void **state)
{
	(void)state;
	sim_use("h100x1-lost", "1");
	sim_init_ok();
	nvmlDevice_t d = sim_dev(0);
	nvmlGpmSample_t s1, s2;
	assert_int_equal(N.nvmlGpmSampleAlloc(&s1), NVML_SUCCESS);
	assert_int_equal(N.nvmlGpmSampleAlloc(&s2), NVML_SUCCESS);
	assert_int_equal(N.nvmlGpmSampleGet(d, s1), NVML_SUCCESS);
	setenv("GPUWHY_SIM_TIME", "3", 1);
	assert_int_equal(N.nvmlGpmSampleGet(d, s2), NVML_SUCCESS);
	nvmlGpmMetricsGet_t *mg = calloc(1, sizeof *mg);
	assert_non_null(mg);
	static const unsigned ids[] = {NVML_GPM_METRIC_GRAPHICS_UTIL,
	                               NVML_GPM_METRIC_SM_UTIL,
	                               NVML_GPM_METRIC_SM_OCCUPANCY,
	                               NVML_GPM_METRIC_ANY_TENSOR_UTIL,
	                               NVML_GPM_METRIC_DRAM_BW_UTIL,
	                               NVML_GPM_METRIC_PCIE_RX_PER_SEC,
	                               NVML_GPM_METRIC_PCIE_TX_PER_SEC,
	                               NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC,
	                               999};
	const size_t n = sizeof ids / sizeof *ids;
	mg->version = NVML_GPM_METRICS_GET_VERSION;
	mg->numMetrics = (unsigned)n;
	mg->sample1 = s1;
	mg->sample2 = s2;
	for (size_t i = 0; i < n; i++)
		mg->metrics[i].metricId = ids[i];
	assert_int_equal(N.nvmlGpmMetricsGet(mg), NVML_SUCCESS);
	assert_int_equal(mg->metrics[0].nvmlReturn, NVML_SUCCESS);
	assert_float_equal(mg->metrics[0].value, 85.0, 1e-6);
	assert_float_equal(mg->metrics[1].value, 70.0, 1e-6);
	assert_float_equal(mg->metrics[2].value, 35.0, 1e-6); /* derived: 0.5 x SM active */
	assert_float_equal(mg->metrics[3].value, 35.0, 1e-6);
	assert_float_equal(mg->metrics[4].value, 28.0, 1e-6);
	assert_float_equal(mg->metrics[5].value, 800.0, 1e-6); /* MiB/s */
	assert_float_equal(mg->metrics[6].value, 0.0, 1e-6);
	/* This H100 has no NVLink in the scenario: not supported, per metric. */
	assert_int_equal(mg->metrics[7].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
	assert_int_equal(mg->metrics[8].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
	assert_string_equal(mg->metrics[1].metricInfo.unit, "%");
	mg->version = 2;
	assert_int_equal(N.nvmlGpmMetricsGet(mg), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
	mg->version = NVML_GPM_METRICS_GET_VERSION;
	mg->sample2 = s1; /* no time between the samples */
	assert_int_equal(N.nvmlGpmMetricsGet(mg), NVML_ERROR_INVALID_ARGUMENT);
	/* Two samples of one pinned instant: the scenario's steady rates at that instant. */
	nvmlGpmSample_t s3;
	assert_int_equal(N.nvmlGpmSampleAlloc(&s3), NVML_SUCCESS);
	assert_int_equal(N.nvmlGpmSampleGet(d, s3), NVML_SUCCESS);
	mg->sample1 = s2;
	mg->sample2 = s3;
	assert_int_equal(N.nvmlGpmMetricsGet(mg), NVML_SUCCESS);
	assert_int_equal(mg->metrics[0].nvmlReturn, NVML_SUCCESS);
	assert_float_equal(mg->metrics[0].value, 85.0, 1e-6);
	assert_float_equal(mg->metrics[1].value, 70.0, 1e-6);
	assert_float_equal(mg->metrics[5].value, 800.0, 1e-6);
	assert_int_equal(N.nvmlGpmSampleFree(s3), NVML_SUCCESS);
	mg->sample1 = s1;
	mg->sample2 = s2;
	mg->numMetrics = NVML_GPM_METRIC_MAX + 1;
	assert_int_equal(N.nvmlGpmMetricsGet(mg), NVML_ERROR_INVALID_ARGUMENT);
	assert_int_equal(N.nvmlGpmMetricsGet(NULL), NVML_ERROR_INVALID_ARGUMENT);
	free(mg);
	assert_int_equal(N.nvmlGpmSampleFree(s1), NVML_SUCCESS);
	assert_int_equal(N.nvmlGpmSampleFree(s2), NVML_SUCCESS);
	sim_shutdown_all();
}

/* Shapes: a square wave, a ramp and a sine, checked at instants and through energy. */
static void test_load_shapes(void **state)
{
	(void)state;
	const char *text =
	    SIM_TEST_HEAD "\"gpus\": [{" SIM_TEST_GPU_BASE ", \"util_period_ms\": 1000, "
	                  "\"load\": ["
	                  "{\"start_s\": 0, \"end_s\": 20, \"shape\": \"square\", \"period_s\": 4, "
	                  "\"duty\": 0.25, \"level\": {\"util\": 100, \"sm_active\": 1}},"
	                  "{\"start_s\": 20, \"end_s\": 30, \"shape\": \"ramp\", "
	                  "\"level\": {\"util\": 100, \"sm_active\": 0}},"
	                  "{\"start_s\": 30, \"end_s\": 40, \"shape\": \"sine\", \"period_s\": 10, "
	                  "\"level\": {\"util\": 100, \"sm_active\": 0}}]}]}";
	struct {
		const char *t;
		unsigned util;
	} at[] = {{"1", 100}, {"2", 0}, {"5", 100}, {"25", 45}, {"30", 95}, {"35", 97}, {"50", 0}};
	for (size_t k = 0; k < sizeof at / sizeof *at; k++) {
		sim_use_text("shapes.json", text, at[k].t);
		sim_init_ok();
		nvmlUtilization_t u;
		assert_int_equal(N.nvmlDeviceGetUtilizationRates(sim_dev(0), &u), NVML_SUCCESS);
		if (u.gpu != at[k].util)
			fail_msg("t=%s: util %u, want %u", at[k].t, u.gpu, at[k].util);
		sim_shutdown_all();
	}
	/* Energy over [0, 40]: idle 50 W plus 400 W x (0.35 util + 0.65 sm) integrated exactly:
	 * square 5 s at util 1 sm 1; ramp util 5 s; sine util 5 s. */
	sim_use_text("shapes.json", text, "40");
	sim_init_ok();
	unsigned long long e;
	assert_int_equal(N.nvmlDeviceGetTotalEnergyConsumption(sim_dev(0), &e), NVML_SUCCESS);
	double want = 50.0 * 40 + 400.0 * (0.35 * 15 + 0.65 * 5);
	assert_true(fabs((double)e - want * 1000) < 2);
	sim_shutdown_all();
}

/* Same scenario, same pinned time: identical answers (noise included). */
static void read_many(const char *t, unsigned out[8])
{
	sim_use("rtx4090-throttle", t);
	sim_init_ok();
	nvmlDevice_t d = sim_dev(0);
	nvmlUtilization_t u;
	N.nvmlDeviceGetUtilizationRates(d, &u);
	out[0] = u.gpu;
	out[1] = u.memory;
	N.nvmlDeviceGetPowerUsage(d, &out[2]);
	N.nvmlDeviceGetTemperature(d, NVML_TEMPERATURE_GPU, &out[3]);
	N.nvmlDeviceGetClockInfo(d, NVML_CLOCK_SM, &out[4]);
	N.nvmlDeviceGetFanSpeed(d, &out[5]);
	unsigned long long e;
	N.nvmlDeviceGetTotalEnergyConsumption(d, &e);
	out[6] = (unsigned)(e & 0xFFFFFFFF);
	N.nvmlDeviceGetPcieReplayCounter(d, &out[7]);
	sim_shutdown_all();
}

static void test_deterministic(void **state)
{
	(void)state;
	unsigned a[8], b[8], c[8];
	read_many("47.3", a);
	read_many("47.3", b);
	read_many("3.3", c);
	assert_memory_equal(a, b, sizeof a);
	assert_memory_not_equal(a, c, sizeof a);
}

static void test_mig_mode_hides_utilization(void **state)
{
	(void)state;
	sim_use_text("mig.json",
	             SIM_TEST_HEAD "\"gpus\": [{" SIM_TEST_GPU_BASE
	                           ", \"mig\": {\"current\": true}}]}",
	             "5");
	sim_init_ok();
	nvmlUtilization_t u;
	unsigned cur, pend, cnt = 0;
	nvmlValueType_t vt;
	assert_int_equal(N.nvmlDeviceGetMigMode(sim_dev(0), &cur, &pend), NVML_SUCCESS);
	assert_int_equal(cur, 1);
	assert_int_equal(N.nvmlDeviceGetUtilizationRates(sim_dev(0), &u), NVML_ERROR_NOT_SUPPORTED);
	assert_int_equal(
	    N.nvmlDeviceGetSamples(sim_dev(0), NVML_GPU_UTILIZATION_SAMPLES, 0, &vt, &cnt, NULL),
	    NVML_ERROR_NOT_SUPPORTED);
	assert_int_equal(N.nvmlDeviceGetProcessUtilization(sim_dev(0), NULL, &cnt, 0),
	                 NVML_ERROR_NOT_SUPPORTED);
	sim_shutdown_all();
}

static void test_retired_pages(void **state)
{
	(void)state;
	sim_use_text(
	    "pages.json",
	    SIM_TEST_HEAD
	    "\"gpus\": [{\"name\": \"Tesla V100-SXM2-32GB\", "
	    "\"architecture\": \"volta\", \"compute_capability\": [7, 0], " SIM_TEST_GPU_REST ", "
	    "\"ecc\": {\"sbe_volatile\": 2, \"sbe_aggregate\": 9}, "
	    "\"retired_pages\": {\"sbe\": [\"0x1000\", 8192], \"pending\": true}, "
	    "\"episodes\": [{\"kind\": \"ecc\", \"at_s\": 3, \"sbe\": 5}]}]}",
	    "4");
	sim_init_ok();
	nvmlDevice_t d = sim_dev(0);
	unsigned cnt = 0;
	unsigned long long pages[4], ull;
	nvmlEnableState_t pending;
	nvmlGpmSupport_t gs = {.version = NVML_GPM_SUPPORT_VERSION};
	assert_int_equal(N.nvmlGpmQueryDeviceSupport(d, &gs), NVML_SUCCESS);
	assert_int_equal(gs.isSupportedDevice, 0);
	assert_int_equal(
	    N.nvmlDeviceGetRetiredPages(
	        d, NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, &cnt, NULL),
	    NVML_ERROR_INSUFFICIENT_SIZE);
	assert_int_equal(cnt, 2);
	assert_int_equal(
	    N.nvmlDeviceGetRetiredPages(
	        d, NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, &cnt, pages),
	    NVML_SUCCESS);
	assert_int_equal(pages[0], 0x1000);
	assert_int_equal(pages[1], 8192);
	cnt = 0;
	assert_int_equal(N.nvmlDeviceGetRetiredPages(
	                     d, NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, &cnt, NULL),
	                 NVML_SUCCESS);
	assert_int_equal(cnt, 0);
	assert_int_equal(N.nvmlDeviceGetRetiredPagesPendingStatus(d, &pending), NVML_SUCCESS);
	assert_int_equal(pending, NVML_FEATURE_ENABLED);
	assert_int_equal(N.nvmlDeviceGetTotalEccErrors(d, NVML_MEMORY_ERROR_TYPE_CORRECTED,
	                                               NVML_VOLATILE_ECC, &ull),
	                 NVML_SUCCESS);
	assert_int_equal(ull, 7);
	assert_int_equal(N.nvmlDeviceGetTotalEccErrors(d, NVML_MEMORY_ERROR_TYPE_CORRECTED,
	                                               NVML_AGGREGATE_ECC, &ull),
	                 NVML_SUCCESS);
	assert_int_equal(ull, 14);
	sim_shutdown_all();
}

static void test_error_strings(void **state)
{
	(void)state;
	assert_string_equal(N.nvmlErrorString(NVML_SUCCESS), "Success");
	assert_string_equal(N.nvmlErrorString(NVML_ERROR_GPU_IS_LOST), "GPU is lost");
	assert_string_equal(N.nvmlErrorString(NVML_ERROR_INSUFFICIENT_SIZE), "Insufficient Size");
	assert_string_equal(N.nvmlErrorString(12345), "Unknown Error");
	for (int rc = 0; rc <= 30; rc++)
		assert_true(strlen(N.nvmlErrorString(rc)) > 0);
}

/* A failed assertion skips a test's own shutdown: never let it leak into the next test. */
static int each_teardown(void **state)
{
	(void)state;
	sim_shutdown_all();
	unsetenv("GPUWHY_SIM_TIME");
	return 0;
}

static int group_setup(void **state)
{
	(void)state;
	if (sim_load() != 0)
		return -1;
	sim_state_setup();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_teardown(test_every_entry_point_exported, each_teardown),
	    cmocka_unit_test_teardown(test_uninitialized, each_teardown),
	    cmocka_unit_test_teardown(test_init_needs_scenario, each_teardown),
	    cmocka_unit_test_teardown(test_init_refcount, each_teardown),
	    cmocka_unit_test_teardown(test_every_scenario_loads, each_teardown),
	    cmocka_unit_test_teardown(test_h100x1_values, each_teardown),
	    cmocka_unit_test_teardown(test_consumer_card_lacks_features, each_teardown),
	    cmocka_unit_test_teardown(test_throttle_episodes, each_teardown),
	    cmocka_unit_test_teardown(test_topology_and_links, each_teardown),
	    cmocka_unit_test_teardown(test_degraded_link_and_replays, each_teardown),
	    cmocka_unit_test_teardown(test_foreign_processes, each_teardown),
	    cmocka_unit_test_teardown(test_driver_samples, each_teardown),
	    cmocka_unit_test_teardown(test_gpu_lost, each_teardown),
	    cmocka_unit_test_teardown(test_lost_event, each_teardown),
	    cmocka_unit_test_teardown(test_gpm_metrics, each_teardown),
	    cmocka_unit_test_teardown(test_load_shapes, each_teardown),
	    cmocka_unit_test_teardown(test_deterministic, each_teardown),
	    cmocka_unit_test_teardown(test_mig_mode_hides_utilization, each_teardown),
	    cmocka_unit_test_teardown(test_retired_pages, each_teardown),
	    cmocka_unit_test_teardown(test_error_strings, each_teardown),
	};
	return cmocka_run_group_tests(tests, group_setup, sim_group_teardown);
}
