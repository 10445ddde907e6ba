/*
 * sim_nvml_bench - the simulated NVML's own cost: CPU time of one full query
 * round over every GPU (the calls a monitor makes each tick), measured in a
 * tight loop with the scenario clock advanced one second per round so that
 * every round recomputes (nothing served from the per-period cache), then
 * the same round repeated within one period (cached), and the cheapest entry
 * point as the floor. Run by bench/sim-nvml.sh.
 *
 *   sim_nvml_bench ROUNDS
 * prints: gpus calls_per_round us_per_round_fresh us_per_round_cached us_floor_call
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nvml_abi.h"

typedef struct {
#define X(ret, name, args) ret(*name) args;
	NVML_ENTRY_POINTS(X)
#undef X
} api_t;

static api_t a;
static nvmlDevice_t dev[64];
static unsigned n;
static unsigned long long last_ts[64];
static nvmlGpmSample_t gpm[64][2];
static nvmlGpmMetricsGet_t mg;

static double cpu_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* One tick of a monitor: returns the number of NVML calls made. */
static int round_all(int k)
{
	int calls = 0;
	for (unsigned i = 0; i < n; i++) {
		nvmlDevice_t d = dev[i];
		nvmlUtilization_t u;
		nvmlMemory_v2_t m = {.version = nvmlMemory_v2};
		unsigned v, cnt;
		unsigned long long r;
		a.nvmlDeviceGetUtilizationRates(d, &u);
		a.nvmlDeviceGetMemoryInfo_v2(d, &m);
		a.nvmlDeviceGetPowerUsage(d, &v);
		a.nvmlDeviceGetTemperature(d, NVML_TEMPERATURE_GPU, &v);
		a.nvmlDeviceGetClockInfo(d, NVML_CLOCK_SM, &v);
		a.nvmlDeviceGetClockInfo(d, NVML_CLOCK_MEM, &v);
		a.nvmlDeviceGetCurrentClocksEventReasons(d, &r);
		a.nvmlDeviceGetPerformanceState(d, (nvmlPstates_t *)&v);
		a.nvmlDeviceGetCurrPcieLinkGeneration(d, &v);
		a.nvmlDeviceGetCurrPcieLinkWidth(d, &v);
		a.nvmlDeviceGetPcieReplayCounter(d, &v);
		a.nvmlDeviceGetTotalEnergyConsumption(d, &r);
		calls += 12;
		nvmlFieldValue_t f[5];
		memset(f, 0, sizeof f);
		f[0].fieldId = NVML_FI_DEV_MEMORY_TEMP;
		f[1].fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX;
		f[1].scopeId = 0xFFFFFFFFu;
		f[2].fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX;
		f[2].scopeId = 0xFFFFFFFFu;
		f[3].fieldId = NVML_FI_DEV_PCIE_COUNT_TX_BYTES;
		f[4].fieldId = NVML_FI_DEV_PCIE_COUNT_RX_BYTES;
		a.nvmlDeviceGetFieldValues(d, 5, f);
		nvmlSample_t s[128];
		nvmlValueType_t vt;
		cnt = 128;
		if (a.nvmlDeviceGetSamples(d, NVML_GPU_UTILIZATION_SAMPLES, last_ts[i], &vt, &cnt,
		                           s) == NVML_SUCCESS &&
		    cnt)
			last_ts[i] = s[cnt - 1].timeStamp;
		nvmlProcessInfo_t p[64];
		cnt = 0;
		a.nvmlDeviceGetComputeRunningProcesses_v3(d, &cnt, NULL);
		cnt = 64;
		a.nvmlDeviceGetComputeRunningProcesses_v3(d, &cnt, p);
		nvmlProcessUtilizationSample_t ps[64];
		cnt = 64;
		a.nvmlDeviceGetProcessUtilization(d, ps, &cnt, 0);
		calls += 5;
		/* GPM: a new sample, the metrics of the interval since the previous one. */
		a.nvmlGpmSampleGet(d, gpm[i][k & 1]);
		if (k > 0) {
			mg.sample1 = gpm[i][(k - 1) & 1];
			mg.sample2 = gpm[i][k & 1];
			a.nvmlGpmMetricsGet(&mg);
			calls++;
		}
		calls++;
	}
	return calls;
}

static void pin(double t)
{
	char s[32];
	snprintf(s, sizeof s, "%.3f", t);
	setenv("GPUWHY_SIM_TIME", s, 1);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 300;
	void *h = dlopen(getenv("GPUWHY_NVML"), RTLD_NOW);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
#define X(ret, name, args) *(void **)(&a.name) = dlsym(h, #name);
	NVML_ENTRY_POINTS(X)
#undef X
	pin(100);
	if (a.nvmlInit_v2() != NVML_SUCCESS)
		return 1;
	a.nvmlDeviceGetCount_v2(&n);
	for (unsigned i = 0; i < n && i < 64; i++) {
		a.nvmlDeviceGetHandleByIndex_v2(i, &dev[i]);
		a.nvmlGpmSampleAlloc(&gpm[i][0]);
		a.nvmlGpmSampleAlloc(&gpm[i][1]);
	}
	mg.version = NVML_GPM_METRICS_GET_VERSION;
	mg.numMetrics = 7;
	static const unsigned ids[7] = {1, 2, 3, 5, 10, 20, 21};
	for (int k = 0; k < 7; k++)
		mg.metrics[k].metricId = ids[k];
	/* Fresh: each round one scenario second later, so nothing is reused. */
	int calls = 0;
	double c0 = cpu_us();
	for (int k = 0; k < rounds; k++) {
		pin(100 + k);
		calls = round_all(k);
	}
	double fresh = (cpu_us() - c0) / rounds;
	/* Cached: the same period again (a second reader within 1/6 s). */
	c0 = cpu_us();
	for (int k = 0; k < rounds; k++)
		round_all(k + rounds);
	double cached = (cpu_us() - c0) / rounds;
	/* The floor: the cheapest entry point (lock, clock, state-directory check). */
	unsigned cnt;
	c0 = cpu_us();
	for (int k = 0; k < rounds * 100; k++)
		a.nvmlDeviceGetCount_v2(&cnt);
	double floor_us = (cpu_us() - c0) / (rounds * 100);
	printf("%u %d %.1f %.1f %.3f\n", n, calls, fresh, cached, floor_us);
	a.nvmlShutdown();
	return 0;
}
