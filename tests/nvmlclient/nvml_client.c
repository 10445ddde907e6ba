/*
 * nvml_client.c - an NVML client of the kind nvtop, nvitop, gpustat and
 * pynvml are: it dlopen()s a libnvidia-ml.so.1, looks up every entry point
 * those programs look up (by the public prototypes in include/nvml_abi.h) and
 * calls each one on every GPU, checking the return code against what NVML
 * documents for it and the values against each other.
 *
 * usage: nvml_client LIBRARY   (exit 0: all good, 1: a check failed,
 *                               2: usage, 3: the library or a symbol is missing)
 * Prints one summary line per GPU: "gpu I: lost=0 procs=N procutil=M samples=K".
 */
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "nvml_abi.h"

/* Every entry point, typed from the public prototypes. */
#define PTR(ret, name, params) ret(*name) params;
static struct {
	NVML_ENTRY_POINTS(PTR) NVML_PEER_ENTRY_POINTS(PTR)
} N;
#undef PTR

static int failures;
static bool pinned; /* GPUWHY_SIM_TIME set: readings taken twice must agree */

__attribute__((format(printf, 1, 2))) static void fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("FAIL: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	failures++;
}

/* Allowed outcomes of a call, besides success. */
enum { OPT = 1, LOSTOK = 2, NOTFOUND = 4, DEPR = 8 };

static bool expect(const char *what, unsigned gpu, nvmlReturn_t rc, int allow)
{
	if (rc == NVML_SUCCESS || (rc == NVML_ERROR_NOT_SUPPORTED && (allow & OPT)) ||
	    (rc == NVML_ERROR_GPU_IS_LOST && (allow & LOSTOK)) ||
	    (rc == NVML_ERROR_NOT_FOUND && (allow & NOTFOUND)) ||
	    (rc == NVML_ERROR_DEPRECATED && (allow & DEPR)))
		return rc == NVML_SUCCESS;
	fail("gpu %u: %s returned %d (%s)", gpu, what, rc, N.nvmlErrorString(rc));
	return false;
}

static int load(const char *path)
{
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "nvml_client: %s: %s\n", path, dlerror());
		return 3;
	}
	int missing = 0;
#define LOAD(ret, name, params)                                                                    \
	if (!(*(void **)&N.name = dlsym(lib, #name))) {                                            \
		fprintf(stderr, "FAIL: missing symbol %s\n", #name);                               \
		missing++;                                                                         \
	}
	NVML_ENTRY_POINTS(LOAD)
	NVML_PEER_ENTRY_POINTS(LOAD)
#undef LOAD
	return missing ? 3 : 0;
}

/* The three generations of a process list agree, and the size query works. */
typedef nvmlReturn_t (*proc_fn)(nvmlDevice_t, unsigned *, nvmlProcessInfo_t *);
typedef nvmlReturn_t (*proc_v1_fn)(nvmlDevice_t, unsigned *, nvmlProcessInfo_v1_t *);

static int process_list(const char *what, unsigned gpu, nvmlDevice_t d, int allow, proc_fn v3,
                        proc_fn v2, proc_v1_fn v1, nvmlProcessInfo_t *out, unsigned cap)
{
	unsigned n = 0;
	nvmlReturn_t rc = v3(d, &n, NULL);
	if (rc == NVML_ERROR_INSUFFICIENT_SIZE || rc == NVML_SUCCESS) {
		unsigned want = n;
		if (n > cap) {
			fail("gpu %u: %s: %u processes", gpu, what, n);
			return 0;
		}
		n = cap;
		rc = v3(d, &n, out);
		if (!expect(what, gpu, rc, allow))
			return 0;
		if (pinned && n != want)
			fail("gpu %u: %s: size query said %u, list has %u", gpu, what, want, n);
	} else if (!expect(what, gpu, rc, allow)) {
		return 0;
	}
	nvmlProcessInfo_t b2[64];
	nvmlProcessInfo_v1_t b1[64];
	unsigned n2 = 64, n1 = 64;
	bool ok2 = expect("..._v2", gpu, v2(d, &n2, b2), allow);
	bool ok1 = expect("...(v1)", gpu, v1(d, &n1, b1), allow);
	if (pinned && ok2 && ok1 && (n2 != n || n1 != n))
		fail("gpu %u: %s: v3 %u, v2 %u, v1 %u processes", gpu, what, n, n2, n1);
	for (unsigned i = 0; pinned && ok1 && i < n && i < n1; i++)
		if (b1[i].pid != out[i].pid || b1[i].usedGpuMemory != out[i].usedGpuMemory)
			fail("gpu %u: %s: v1 entry %u differs from v3", gpu, what, i);
	return (int)n;
}

static unsigned long long wall_us(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (unsigned long long)tv.tv_sec * 1000000ULL + (unsigned long long)tv.tv_usec;
}

static void identity(unsigned i, nvmlDevice_t d, int lk)
{
	char s[128];
	unsigned u;
	int a, b;
	nvmlEnableState_t e, e2;
	nvmlDevice_t h;
	expect("GetName", i, N.nvmlDeviceGetName(d, s, sizeof s), lk);
	expect("GetSerial", i, N.nvmlDeviceGetSerial(d, s, sizeof s), lk | OPT);
	expect("GetVbiosVersion", i, N.nvmlDeviceGetVbiosVersion(d, s, sizeof s), lk);
	if (expect("GetUUID", i, N.nvmlDeviceGetUUID(d, s, sizeof s), lk) &&
	    expect("GetHandleByUUID", i, N.nvmlDeviceGetHandleByUUID(s, &h), lk) && h != d)
		fail("gpu %u: GetHandleByUUID gave another handle", i);
	nvmlPciInfo_t pci, pci2;
	if (expect("GetPciInfo_v3", i, N.nvmlDeviceGetPciInfo_v3(d, &pci), lk) &&
	    expect("GetHandleByPciBusId_v2", i, N.nvmlDeviceGetHandleByPciBusId_v2(pci.busId, &h),
	           lk) &&
	    h != d)
		fail("gpu %u: GetHandleByPciBusId_v2 gave another handle", i);
	if (expect("GetPciInfo_v2", i, N.nvmlDeviceGetPciInfo_v2(d, &pci2), lk) &&
	    strcmp(pci.busId, pci2.busId) != 0)
		fail("gpu %u: PCI bus ids of v2 and v3 differ", i);
	expect("GetMinorNumber", i, N.nvmlDeviceGetMinorNumber(d, &u), lk);
	if (expect("GetIndex", i, N.nvmlDeviceGetIndex(d, &u), lk) && u != i)
		fail("gpu %u: GetIndex says %u", i, u);
	nvmlDeviceArchitecture_t arch;
	expect("GetArchitecture", i, N.nvmlDeviceGetArchitecture(d, &arch), lk);
	expect("GetCudaComputeCapability", i, N.nvmlDeviceGetCudaComputeCapability(d, &a, &b), lk);
	expect("GetPersistenceMode", i, N.nvmlDeviceGetPersistenceMode(d, &e), lk | OPT);
	nvmlComputeMode_t cm;
	expect("GetComputeMode", i, N.nvmlDeviceGetComputeMode(d, &cm), lk);
	unsigned cur, pend;
	expect("GetMigMode", i, N.nvmlDeviceGetMigMode(d, &cur, &pend), lk | OPT);
	expect("GetEccMode", i, N.nvmlDeviceGetEccMode(d, &e, &e2), lk | OPT);
	expect("GetDisplayMode", i, N.nvmlDeviceGetDisplayMode(d, &e), lk | OPT);
	expect("GetDisplayActive", i, N.nvmlDeviceGetDisplayActive(d, &e), lk | OPT);
	if (expect("IsMigDeviceHandle", i, N.nvmlDeviceIsMigDeviceHandle(d, &u), lk) && u != 0)
		fail("gpu %u: a whole GPU's handle called a MIG device handle", i);
	expect("GetAccountingMode", i, N.nvmlDeviceGetAccountingMode(d, &e), lk | OPT);
	/* The driver model is Windows-only: Linux drivers answer NOT_SUPPORTED. */
	nvmlDriverModel_t dm, dp;
	nvmlReturn_t rc = N.nvmlDeviceGetDriverModel_v2(d, &dm, &dp);
	if (rc != NVML_ERROR_NOT_SUPPORTED && !(lk && rc == NVML_ERROR_GPU_IS_LOST))
		fail("gpu %u: GetDriverModel_v2 returned %d, not NOT_SUPPORTED", i, rc);
	rc = N.nvmlDeviceGetDriverModel(d, &dm, &dp);
	if (rc != NVML_ERROR_NOT_SUPPORTED && !(lk && rc == NVML_ERROR_GPU_IS_LOST))
		fail("gpu %u: GetDriverModel returned %d, not NOT_SUPPORTED", i, rc);
	unsigned long cpus[8];
	expect("GetCpuAffinity", i, N.nvmlDeviceGetCpuAffinity(d, 8, cpus), lk | OPT);
	expect("GetNumaNodeId", i, N.nvmlDeviceGetNumaNodeId(d, &u), lk | OPT);
}

static void memory_power(unsigned i, nvmlDevice_t d, int lk)
{
	nvmlMemory_v2_t m2 = {.version = nvmlMemory_v2};
	nvmlMemory_t m;
	nvmlBAR1Memory_t bar;
	bool have_m = expect("GetMemoryInfo", i, N.nvmlDeviceGetMemoryInfo(d, &m), lk);
	if (expect("GetMemoryInfo_v2", i, N.nvmlDeviceGetMemoryInfo_v2(d, &m2), lk) && have_m &&
	    m2.total != m.total)
		fail("gpu %u: memory totals of v1 and v2 differ", i);
	expect("GetBAR1MemoryInfo", i, N.nvmlDeviceGetBAR1MemoryInfo(d, &bar), lk | OPT);
	nvmlConfComputeMemSizeInfo_t cc;
	if (expect("GetConfComputeMemSizeInfo", i, N.nvmlDeviceGetConfComputeMemSizeInfo(d, &cc),
	           lk | OPT) &&
	    have_m && cc.protectedMemSizeKib + cc.unprotectedMemSizeKib != m.total / 1024)
		fail("gpu %u: ConfCompute memory split does not add up to the total", i);
	unsigned p, lim, lo, hi, u;
	unsigned long long energy;
	expect("GetPowerUsage", i, N.nvmlDeviceGetPowerUsage(d, &p), lk | OPT);
	expect("GetPowerManagementLimit", i, N.nvmlDeviceGetPowerManagementLimit(d, &u), lk | OPT);
	expect("GetPowerManagementDefaultLimit", i,
	       N.nvmlDeviceGetPowerManagementDefaultLimit(d, &u), lk | OPT);
	if (expect("GetEnforcedPowerLimit", i, N.nvmlDeviceGetEnforcedPowerLimit(d, &lim),
	           lk | OPT) &&
	    expect("GetPowerManagementLimitConstraints", i,
	           N.nvmlDeviceGetPowerManagementLimitConstraints(d, &lo, &hi), lk | OPT) &&
	    (lim < lo || lim > hi))
		fail("gpu %u: enforced limit %u mW outside [%u, %u]", i, lim, lo, hi);
	expect("GetTotalEnergyConsumption", i, N.nvmlDeviceGetTotalEnergyConsumption(d, &energy),
	       lk | OPT);
	unsigned t = 0;
	bool have_t = expect("GetTemperature", i,
	                     N.nvmlDeviceGetTemperature(d, NVML_TEMPERATURE_GPU, &t), lk);
	nvmlTemperature_t tv = {.version = nvmlTemperature_v1, .sensorType = NVML_TEMPERATURE_GPU};
	if (expect("GetTemperatureV", i, N.nvmlDeviceGetTemperatureV(d, &tv), lk) && have_t &&
	    pinned && tv.temperature != (int)t)
		fail("gpu %u: GetTemperatureV %d C, GetTemperature %u C", i, tv.temperature, t);
	tv.version = 0;
	nvmlReturn_t rc = N.nvmlDeviceGetTemperatureV(d, &tv);
	if (rc != NVML_ERROR_ARGUMENT_VERSION_MISMATCH && !(lk && rc == NVML_ERROR_GPU_IS_LOST))
		fail("gpu %u: GetTemperatureV with version 0 returned %d", i, rc);
	expect("GetTemperatureThreshold", i,
	       N.nvmlDeviceGetTemperatureThreshold(d, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, &u),
	       lk | OPT);
	expect("GetTemperatureThreshold", i,
	       N.nvmlDeviceGetTemperatureThreshold(d, NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, &u),
	       lk | OPT);
	expect("GetFanSpeed", i, N.nvmlDeviceGetFanSpeed(d, &u), lk | OPT);
}

static void clocks_links(unsigned i, nvmlDevice_t d, int lk)
{
	unsigned u, per;
	unsigned long long r, r2;
	nvmlUtilization_t ut;
	expect("GetUtilizationRates", i, N.nvmlDeviceGetUtilizationRates(d, &ut), lk | OPT);
	expect("GetEncoderUtilization", i, N.nvmlDeviceGetEncoderUtilization(d, &u, &per),
	       lk | OPT);
	expect("GetDecoderUtilization", i, N.nvmlDeviceGetDecoderUtilization(d, &u, &per),
	       lk | OPT);
	for (nvmlClockType_t c = NVML_CLOCK_GRAPHICS; c <= NVML_CLOCK_VIDEO; c++) {
		expect("GetClockInfo", i, N.nvmlDeviceGetClockInfo(d, c, &u), lk | OPT);
		expect("GetMaxClockInfo", i, N.nvmlDeviceGetMaxClockInfo(d, c, &u), lk | OPT);
		/* deprecated from driver 580 on */
		expect("GetApplicationsClock", i, N.nvmlDeviceGetApplicationsClock(d, c, &u),
		       lk | OPT | DEPR);
		expect("GetClock", i, N.nvmlDeviceGetClock(d, c, NVML_CLOCK_ID_CURRENT, &u),
		       lk | OPT);
	}
	if (expect("GetCurrentClocksEventReasons", i,
	           N.nvmlDeviceGetCurrentClocksEventReasons(d, &r), lk | OPT) &&
	    expect("GetCurrentClocksThrottleReasons", i,
	           N.nvmlDeviceGetCurrentClocksThrottleReasons(d, &r2), lk | OPT) &&
	    pinned && r != r2)
		fail("gpu %u: event reasons 0x%llx, throttle reasons 0x%llx", i, r, r2);
	nvmlPstates_t ps;
	expect("GetPerformanceState", i, N.nvmlDeviceGetPerformanceState(d, &ps), lk | OPT);
	expect("GetCurrPcieLinkGeneration", i, N.nvmlDeviceGetCurrPcieLinkGeneration(d, &u),
	       lk | OPT);
	expect("GetCurrPcieLinkWidth", i, N.nvmlDeviceGetCurrPcieLinkWidth(d, &u), lk | OPT);
	expect("GetMaxPcieLinkGeneration", i, N.nvmlDeviceGetMaxPcieLinkGeneration(d, &u),
	       lk | OPT);
	expect("GetMaxPcieLinkWidth", i, N.nvmlDeviceGetMaxPcieLinkWidth(d, &u), lk | OPT);
	expect("GetGpuMaxPcieLinkGeneration", i, N.nvmlDeviceGetGpuMaxPcieLinkGeneration(d, &u),
	       lk | OPT);
	expect("GetPcieThroughput", i,
	       N.nvmlDeviceGetPcieThroughput(d, NVML_PCIE_UTIL_TX_BYTES, &u), lk | OPT);
	expect("GetPcieThroughput", i,
	       N.nvmlDeviceGetPcieThroughput(d, NVML_PCIE_UTIL_RX_BYTES, &u), lk | OPT);
	expect("GetPcieReplayCounter", i, N.nvmlDeviceGetPcieReplayCounter(d, &u), lk | OPT);
	expect("GetTotalEccErrors", i,
	       N.nvmlDeviceGetTotalEccErrors(d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
	                                     NVML_VOLATILE_ECC, &r),
	       lk | OPT);
	unsigned cr, ur, pend, failed;
	expect("GetRemappedRows", i, N.nvmlDeviceGetRemappedRows(d, &cr, &ur, &pend, &failed),
	       lk | OPT);
	nvmlEnableState_t e;
	expect("GetRetiredPagesPendingStatus", i, N.nvmlDeviceGetRetiredPagesPendingStatus(d, &e),
	       lk | OPT);
	nvmlFieldValue_t fv = {.fieldId = NVML_FI_DEV_POWER_INSTANT};
	expect("GetFieldValues", i, N.nvmlDeviceGetFieldValues(d, 1, &fv), lk);
	nvmlGpmSupport_t gs = {.version = NVML_GPM_SUPPORT_VERSION};
	expect("GpmQueryDeviceSupport", i, N.nvmlGpmQueryDeviceSupport(d, &gs), lk | OPT);
}

/* Process lists and the per-process and driver sample histories, since a second ago. */
static void processes(unsigned i, nvmlDevice_t d, int lk, int *nproc, int *nutil, int *nsamp)
{
	nvmlProcessInfo_t p[64];
	*nproc = process_list("GetComputeRunningProcesses_v3", i, d, lk,
	                      N.nvmlDeviceGetComputeRunningProcesses_v3,
	                      N.nvmlDeviceGetComputeRunningProcesses_v2,
	                      N.nvmlDeviceGetComputeRunningProcesses, p, 64);
	for (int k = 0; k < *nproc; k++) {
		char name[256];
		expect("SystemGetProcessName", i,
		       N.nvmlSystemGetProcessName(p[k].pid, name, sizeof name), NOTFOUND);
	}
	process_list("GetGraphicsRunningProcesses_v3", i, d, lk,
	             N.nvmlDeviceGetGraphicsRunningProcesses_v3,
	             N.nvmlDeviceGetGraphicsRunningProcesses_v2,
	             N.nvmlDeviceGetGraphicsRunningProcesses, p, 64);
	process_list("GetMPSComputeRunningProcesses_v3", i, d, lk | OPT,
	             N.nvmlDeviceGetMPSComputeRunningProcesses_v3,
	             N.nvmlDeviceGetMPSComputeRunningProcesses_v2,
	             N.nvmlDeviceGetMPSComputeRunningProcesses, p, 64);
	unsigned long long since = wall_us() - 1000000ULL;
	nvmlProcessUtilizationSample_t us[64];
	unsigned n = 64;
	*nutil = expect("GetProcessUtilization", i,
	                N.nvmlDeviceGetProcessUtilization(d, us, &n, since), lk | OPT | NOTFOUND)
	             ? (int)n
	             : 0;
	nvmlSample_t s[256];
	nvmlValueType_t vt;
	n = 256;
	*nsamp = expect("GetSamples", i,
	                N.nvmlDeviceGetSamples(d, NVML_GPU_UTILIZATION_SAMPLES, since, &vt, &n, s),
	                lk | OPT | NOTFOUND)
	             ? (int)n
	             : 0;
	for (int k = 0; k < *nsamp; k++)
		if (s[k].timeStamp <= since)
			fail("gpu %u: sample %d at %llu us is older than asked for", i, k,
			     s[k].timeStamp);
}

/* GPM's graphics and SM utilization between two samples; NAN when a call fails. */
static double gpm_pair(unsigned i, nvmlGpmSample_t a, nvmlGpmSample_t b, double *sm, int lk)
{
	static nvmlGpmMetricsGet_t mg;
	memset(&mg, 0, sizeof mg);
	mg.version = NVML_GPM_METRICS_GET_VERSION;
	mg.numMetrics = 2;
	mg.sample1 = a;
	mg.sample2 = b;
	mg.metrics[0].metricId = NVML_GPM_METRIC_GRAPHICS_UTIL;
	mg.metrics[1].metricId = NVML_GPM_METRIC_SM_UTIL;
	if (!expect("GpmMetricsGet", i, N.nvmlGpmMetricsGet(&mg), lk) ||
	    !expect("GpmMetricsGet(graphics)", i, mg.metrics[0].nvmlReturn, 0) ||
	    !expect("GpmMetricsGet(SM)", i, mg.metrics[1].nvmlReturn, 0))
		return NAN;
	*sm = mg.metrics[1].value;
	return mg.metrics[0].value;
}

/*
 * Polling the way nvtop and DCGM do, with no pause between calls: per-process
 * samples newer than the newest one seen, twice, and three GPM samples taken
 * back to back. Pinned, every call is a new sample of the same steady instant,
 * so both rounds find samples and both GPM pairs give the same rates. Prints
 * "gpu I: repoll=N1,N2 gpm=GRAPHICS,SM" (gpm=- without GPM).
 */
static void repoll(unsigned i, nvmlDevice_t d, int lk)
{
	nvmlProcessUtilizationSample_t us[64];
	unsigned long long seen = 0;
	int got[2] = {0, 0};
	for (int round = 0; round < 2; round++) {
		unsigned n = 64;
		if (!expect("GetProcessUtilization", i,
		            N.nvmlDeviceGetProcessUtilization(d, us, &n, seen),
		            lk | OPT | NOTFOUND))
			continue;
		unsigned long long newest = seen;
		for (unsigned k = 0; k < n; k++) {
			if (us[k].timeStamp <= seen)
				fail("gpu %u: sample at %llu us, not after %llu", i,
				     us[k].timeStamp, seen);
			if (us[k].timeStamp > newest)
				newest = us[k].timeStamp;
		}
		got[round] = (int)n;
		seen = newest;
	}
	printf("gpu %u: repoll=%d,%d ", i, got[0], got[1]);
	nvmlGpmSupport_t gs = {.version = NVML_GPM_SUPPORT_VERSION};
	nvmlGpmSample_t s[3] = {NULL, NULL, NULL};
	bool ok = N.nvmlGpmQueryDeviceSupport(d, &gs) == NVML_SUCCESS && gs.isSupportedDevice;
	for (int k = 0; ok && k < 3; k++)
		ok = expect("GpmSampleAlloc", i, N.nvmlGpmSampleAlloc(&s[k]), 0) &&
		     expect("GpmSampleGet", i, N.nvmlGpmSampleGet(d, s[k]), lk);
	double sm1 = NAN, sm2 = NAN;
	double g1 = ok ? gpm_pair(i, s[0], s[1], &sm1, lk) : NAN;
	double g2 = ok ? gpm_pair(i, s[1], s[2], &sm2, lk) : NAN;
	if (ok && pinned && (fabs(g1 - g2) > 1e-6 || fabs(sm1 - sm2) > 1e-6))
		fail("gpu %u: pinned GPM pairs disagree: %g/%g then %g/%g", i, g1, sm1, g2, sm2);
	for (int k = 0; k < 3; k++)
		if (s[k])
			N.nvmlGpmSampleFree(s[k]);
	if (ok && !isnan(g1))
		printf("gpm=%.1f,%.1f\n", g1, sm1);
	else
		printf("gpm=-\n");
}

/*
 * The MIG devices of a GPU in MIG mode answer what NVML documents per
 * instance: memory, BAR1 and the processes running on them. Prints
 * "mig I.J: procs=N bar1=USED/TOTAL" for each.
 */
static void mig_devices(unsigned i, nvmlDevice_t d, int lk)
{
	unsigned cur, pend, max;
	if (N.nvmlDeviceGetMigMode(d, &cur, &pend) != NVML_SUCCESS || !cur ||
	    N.nvmlDeviceGetMaxMigDeviceCount(d, &max) != NVML_SUCCESS)
		return;
	for (unsigned j = 0; j < max; j++) {
		nvmlDevice_t m;
		nvmlReturn_t rc = N.nvmlDeviceGetMigDeviceHandleByIndex(d, j, &m);
		if (rc == NVML_ERROR_NOT_FOUND)
			continue;
		if (!expect("GetMigDeviceHandleByIndex", i, rc, lk))
			continue;
		nvmlMemory_t mem;
		nvmlBAR1Memory_t bar = {0};
		nvmlProcessInfo_t p[64];
		expect("GetMemoryInfo (MIG)", i, N.nvmlDeviceGetMemoryInfo(m, &mem), lk);
		if (expect("GetBAR1MemoryInfo (MIG)", i, N.nvmlDeviceGetBAR1MemoryInfo(m, &bar),
		           lk) &&
		    (bar.bar1Total == 0 || bar.bar1Used + bar.bar1Free != bar.bar1Total))
			fail("gpu %u: MIG %u: BAR1 %llu used + %llu free != %llu total", i, j,
			     bar.bar1Used, bar.bar1Free, bar.bar1Total);
		int n = process_list("GetComputeRunningProcesses_v3 (MIG)", i, m, lk,
		                     N.nvmlDeviceGetComputeRunningProcesses_v3,
		                     N.nvmlDeviceGetComputeRunningProcesses_v2,
		                     N.nvmlDeviceGetComputeRunningProcesses, p, 64);
		unsigned gi;
		if (n > 0 && N.nvmlDeviceGetGpuInstanceId(m, &gi) == NVML_SUCCESS)
			for (int k = 0; k < n; k++)
				if (p[k].gpuInstanceId != gi)
					fail(
					    "gpu %u: MIG %u: process %u in GPU instance %u, not %u",
					    i, j, p[k].pid, p[k].gpuInstanceId, gi);
		process_list("GetGraphicsRunningProcesses_v3 (MIG)", i, m, lk,
		             N.nvmlDeviceGetGraphicsRunningProcesses_v3,
		             N.nvmlDeviceGetGraphicsRunningProcesses_v2,
		             N.nvmlDeviceGetGraphicsRunningProcesses, p, 64);
		printf("mig %u.%u: procs=%d bar1=%llu/%llu\n", i, j, n, bar.bar1Used >> 20,
		       bar.bar1Total >> 20);
	}
}

static void events(unsigned i, nvmlDevice_t d, int lk)
{
	nvmlEventSet_t set;
	if (!expect("EventSetCreate", i, N.nvmlEventSetCreate(&set), 0))
		return;
	expect("RegisterEvents", i,
	       N.nvmlDeviceRegisterEvents(d, nvmlEventTypeXidCriticalError, set), lk | OPT);
	nvmlEventData_t ev;
	nvmlReturn_t rc = N.nvmlEventSetWait_v2(set, &ev, 0);
	if (rc != NVML_SUCCESS && rc != NVML_ERROR_TIMEOUT)
		fail("gpu %u: EventSetWait_v2 returned %d", i, rc);
	expect("EventSetFree", i, N.nvmlEventSetFree(set), 0);
}

static void system_calls(void)
{
	char s[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
	int v, v2;
	unsigned c, c2;
	expect("SystemGetDriverVersion", 0, N.nvmlSystemGetDriverVersion(s, sizeof s), 0);
	expect("SystemGetNVMLVersion", 0, N.nvmlSystemGetNVMLVersion(s, sizeof s), 0);
	if (expect("SystemGetCudaDriverVersion", 0, N.nvmlSystemGetCudaDriverVersion(&v), 0) &&
	    expect("SystemGetCudaDriverVersion_v2", 0, N.nvmlSystemGetCudaDriverVersion_v2(&v2),
	           0) &&
	    v != v2)
		fail("CUDA driver versions differ: %d and %d", v, v2);
	if (expect("DeviceGetCount", 0, N.nvmlDeviceGetCount(&c), 0) &&
	    expect("DeviceGetCount_v2", 0, N.nvmlDeviceGetCount_v2(&c2), 0) && c != c2)
		fail("device counts differ: %u and %u", c, c2);
}

static void gpu(unsigned i, nvmlDevice_t first)
{
	nvmlDevice_t d, d1;
	if (!expect("GetHandleByIndex_v2", i, N.nvmlDeviceGetHandleByIndex_v2(i, &d), 0))
		return;
	if (expect("GetHandleByIndex", i, N.nvmlDeviceGetHandleByIndex(i, &d1), 0) && d1 != d)
		fail("gpu %u: GetHandleByIndex and _v2 give different handles", i);
	unsigned p;
	bool lost = N.nvmlDeviceGetPowerUsage(d, &p) == NVML_ERROR_GPU_IS_LOST;
	int lk = lost ? LOSTOK : 0;
	identity(i, d, lk);
	memory_power(i, d, lk);
	clocks_links(i, d, lk);
	int np, nu, ns;
	processes(i, d, lk, &np, &nu, &ns);
	events(i, d, lk);
	mig_devices(i, d, lk);
	nvmlGpuTopologyLevel_t lvl;
	if (first && first != d)
		expect("GetTopologyCommonAncestor", i,
		       N.nvmlDeviceGetTopologyCommonAncestor(first, d, &lvl), lk | OPT);
	nvmlEnableState_t e;
	nvmlReturn_t rc = N.nvmlDeviceGetNvLinkState(d, 0, &e);
	if (rc != NVML_SUCCESS && rc != NVML_ERROR_NOT_SUPPORTED &&
	    rc != NVML_ERROR_INVALID_ARGUMENT && !(lost && rc == NVML_ERROR_GPU_IS_LOST))
		fail("gpu %u: GetNvLinkState returned %d", i, rc);
	printf("gpu %u: lost=%d procs=%d procutil=%d samples=%d\n", i, lost, np, nu, ns);
	repoll(i, d, lk);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: nvml_client LIBRARY\n");
		return 2;
	}
	int rc = load(argv[1]);
	if (rc)
		return rc;
	pinned = getenv("GPUWHY_SIM_TIME") && *getenv("GPUWHY_SIM_TIME");
	unsigned n;
	if (N.nvmlDeviceGetCount_v2(&n) != NVML_ERROR_UNINITIALIZED)
		fail("DeviceGetCount_v2 before nvmlInit did not say UNINITIALIZED");
	if (N.nvmlInit_v2() != NVML_SUCCESS) {
		fprintf(stderr, "nvml_client: nvmlInit_v2 failed\n");
		return 3;
	}
	system_calls();
	if (N.nvmlDeviceGetCount_v2(&n) != NVML_SUCCESS)
		n = 0;
	nvmlDevice_t first = NULL;
	if (n > 0 && N.nvmlDeviceGetHandleByIndex_v2(0, &first) != NVML_SUCCESS)
		first = NULL;
	for (unsigned i = 0; i < n; i++)
		gpu(i, first);
	expect("Shutdown", 0, N.nvmlShutdown(), 0);
	if (N.nvmlDeviceGetCount_v2(&n) != NVML_ERROR_UNINITIALIZED)
		fail("DeviceGetCount_v2 after nvmlShutdown did not say UNINITIALIZED");
	return failures ? 1 : 0;
}
