/*
 * gpu_bench - CPU time and memory of sampling every GPU with the full metric
 * set through the device layer, against a bare loop that calls the same
 * library's core NVML getters directly (the floor any tool pays for that
 * library). Run by bench/gpu-sampling.sh with the simulated 8-GPU machine.
 *
 *   gpu_bench layer|bare HZ SECONDS
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "gpu/gpu.h"
#include "nvml_abi.h"
#include "util/timeutil.h"

static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

static long hwm_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "VmHWM:", 6))
			v = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

typedef struct {
#define X(ret, name, args) ret(*name) args;
	NVML_ENTRY_POINTS(X)
#undef X
} api_t;

static int run_bare(int hz, double secs, long *ticks)
{
	void *h = dlopen(getenv("GPUWHY_NVML"), RTLD_NOW);
	if (!h)
		return -1;
	api_t a;
#define X(ret, name, args) *(void **)(&a.name) = dlsym(h, #name);
	NVML_ENTRY_POINTS(X)
#undef X
	a.nvmlInit_v2();
	unsigned n;
	a.nvmlDeviceGetCount_v2(&n);
	nvmlDevice_t dev[64];
	for (unsigned i = 0; i < n && i < 64; i++)
		a.nvmlDeviceGetHandleByIndex_v2(i, &dev[i]);
	int64_t period = 1000000000LL / hz, next = gw_mono_ns(), end = next + (int64_t)(secs * 1e9);
	while (gw_mono_ns() < end) {
		for (unsigned i = 0; i < n; i++) {
			nvmlUtilization_t u;
			nvmlMemory_v2_t m = {.version = nvmlMemory_v2};
			unsigned v;
			unsigned long long r;
			a.nvmlDeviceGetUtilizationRates(dev[i], &u);
			a.nvmlDeviceGetMemoryInfo_v2(dev[i], &m);
			a.nvmlDeviceGetPowerUsage(dev[i], &v);
			a.nvmlDeviceGetTemperature(dev[i], NVML_TEMPERATURE_GPU, &v);
			a.nvmlDeviceGetClockInfo(dev[i], NVML_CLOCK_SM, &v);
			a.nvmlDeviceGetClockInfo(dev[i], NVML_CLOCK_MEM, &v);
			a.nvmlDeviceGetCurrentClocksEventReasons(dev[i], &r);
			a.nvmlDeviceGetPerformanceState(dev[i], (nvmlPstates_t *)&v);
			unsigned cnt = 0;
			a.nvmlDeviceGetComputeRunningProcesses_v3(dev[i], &cnt, NULL);
		}
		(*ticks)++;
		next += period;
		gw_sleep_until_ns(next);
	}
	a.nvmlShutdown();
	return 0;
}

static int run_layer(int hz, double secs, long *ticks)
{
	gpu_ctx *c;
	if (gpu_open(NULL, &c))
		return -1;
	gpu_slow_thread_start(c);
	int n = gpu_count(c);
	gpu_values v;
	gpu_proc p[64];
	int64_t period = 1000000000LL / hz, next = gw_mono_ns(), end = next + (int64_t)(secs * 1e9);
	while (gw_mono_ns() < end) {
		for (int i = 0; i < n; i++) {
			gpu_sample(c, i, &v);
			gpu_processes(c, i, p, 64);
		}
		(*ticks)++;
		next += period;
		gw_sleep_until_ns(next);
	}
	gpu_close(c);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	int hz = atoi(argv[2]);
	double secs = atof(argv[3]);
	long ticks = 0;
	double c0 = cpu_s();
	int rc =
	    !strcmp(argv[1], "bare") ? run_bare(hz, secs, &ticks) : run_layer(hz, secs, &ticks);
	double c1 = cpu_s();
	if (rc)
		return 1;
	printf("%s %d %ld %.4f %.3f %ld\n", argv[1], hz, ticks, (c1 - c0) / (double)ticks * 1e3,
	       (c1 - c0) / secs * 100, hwm_kib());
	return 0;
}
