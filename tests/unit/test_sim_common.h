/*
 * test_sim_common.h - helpers of the simulated-GPU tests: load the built
 * libnvidia-ml.so.1 with dlopen (GPUWHY_SIM_LIB, else <build>/sim/ beside
 * the test binary), a private state directory, scenario files.
 */
#ifndef GPUWHY_TEST_SIM_COMMON_H
#define GPUWHY_TEST_SIM_COMMON_H

#include <dlfcn.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "nvml_abi.h"
#include "test_tmpdir.h"
#include "util/selfexe.h"

#define SIM_API_PTR(ret, name, params) ret(*name) params;
typedef struct {
	void *h;
	NVML_ENTRY_POINTS(SIM_API_PTR)
	const char *(*lastError)(void);
} sim_api;
#undef SIM_API_PTR

static sim_api N __attribute__((unused));
static char sim_build_dir[PATH_MAX] __attribute__((unused));
static char sim_state_root[PATH_MAX];

/* Load the library; returns 0, or -1 with a reason on stderr. */
static inline int sim_load(void)
{
	char path[PATH_MAX + 32];
	const char *env = getenv("GPUWHY_SIM_LIB");
	if (gw_self_dir(sim_build_dir, sizeof sim_build_dir) != 0)
		return -1;
	if (env && *env)
		snprintf(path, sizeof path, "%s", env);
	else
		snprintf(path, sizeof path, "%s/sim/libnvidia-ml.so.1", sim_build_dir);
	N.h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!N.h) {
		fprintf(stderr, "cannot load %s: %s\n", path, dlerror());
		return -1;
	}
#define SIM_API_LOAD(ret, name, params) N.name = (ret(*) params)dlsym(N.h, #name);
	NVML_ENTRY_POINTS(SIM_API_LOAD)
#undef SIM_API_LOAD
	N.lastError = (const char *(*)(void))dlsym(N.h, "gpuwhySimLastError");
	return 0;
}

/* A private state directory for this test binary; messages from init kept quiet. */
static inline void sim_state_setup(void)
{
	if (test_tmpdir_make(sim_state_root, sizeof sim_state_root, "test")) {
		perror("mkdtemp");
		exit(1);
	}
	setenv("GPUWHY_SIM_STATE", sim_state_root, 1);
	setenv("GPUWHY_SIM_QUIET", "1", 1);
	unsetenv("GPUWHY_SIM_TIME");
}

static inline void sim_state_cleanup(void)
{
	if (sim_state_root[0])
		test_tmpdir_remove(sim_state_root);
}

/* nvmlInit_v2, or the test fails with the library's own reason. */
static inline void sim_init_ok(void)
{
	nvmlReturn_t rc = N.nvmlInit_v2();
	if (rc != NVML_SUCCESS)
		fail_msg("nvmlInit_v2: %d (%s)", rc, N.lastError ? N.lastError() : "");
}

/* Undo every nested nvmlInit. */
static inline void sim_shutdown_all(void)
{
	while (N.nvmlShutdown() == NVML_SUCCESS)
		;
}

/*
 * The cmocka group teardown of the simulated-GPU tests: the library, where
 * one was loaded, shut down (a failed test skips its own shutdown), then the
 * state directory removed.
 */
static inline int sim_group_teardown(void **state)
{
	(void)state;
	if (N.h)
		sim_shutdown_all();
	sim_state_cleanup();
	return 0;
}

static inline const char *sim_scenario_file(const char *name)
{
	static char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s.json", GPUWHY_SOURCE_SCENARIOS, name);
	return path;
}

/* Pin the library's clock at t seconds into the scenario (NULL: live). */
static inline void sim_pin_time(const char *t)
{
	if (t)
		setenv("GPUWHY_SIM_TIME", t, 1);
	else
		unsetenv("GPUWHY_SIM_TIME");
}

/* Point the library at a shipped scenario, with the clock pinned at t (NULL: live). */
static inline void sim_use(const char *name, const char *t)
{
	setenv("GPUWHY_SIM_SCENARIO", sim_scenario_file(name), 1);
	sim_pin_time(t);
}

/* Write a scenario of our own into the state root and point the library at it. */
static inline const char *sim_use_text(const char *file, const char *text, const char *t)
{
	static char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/%s", sim_state_root, file);
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
	setenv("GPUWHY_SIM_SCENARIO", path, 1);
	sim_pin_time(t);
	return path;
}

static inline nvmlDevice_t sim_dev(unsigned i)
{
	nvmlDevice_t d = NULL;
	if (N.nvmlDeviceGetHandleByIndex_v2(i, &d) != NVML_SUCCESS)
		return NULL;
	return d;
}

/* A minimal valid GPU object, for scenarios written by tests. */
#define SIM_TEST_GPU_BASE                                                                          \
	"\"name\": \"Test GPU\", \"architecture\": \"hopper\", \"compute_capability\": [9, "       \
	"0], " SIM_TEST_GPU_REST
/* The same without name, architecture and compute capability. */
#define SIM_TEST_GPU_REST                                                                          \
	"\"vbios\": \"1.0\", "                                                                     \
	"\"pci\": {\"bus_id\": \"0000:01:00.0\", \"device_id\": \"0x233010DE\", \"max_gen\": 5, "  \
	"\"max_width\": 16}, "                                                                     \
	"\"memory\": {\"total_mib\": 1000}, "                                                      \
	"\"power\": {\"limit_w\": 500, \"min_limit_w\": 100, \"max_limit_w\": 500, \"idle_w\": "   \
	"50, "                                                                                     \
	"\"busy_w\": 450}, "                                                                       \
	"\"clocks\": {\"max_sm_mhz\": 2000, \"max_mem_mhz\": 2600, \"idle_sm_mhz\": 300}, "        \
	"\"thermal\": {\"idle_c\": 30, \"busy_c\": 70, \"slowdown_c\": 90, \"shutdown_c\": 95}"

#define SIM_TEST_HEAD                                                                              \
	"{\"schema\": 1, \"driver\": {\"version\": \"550.54.15\", \"cuda_version\": 12040, "       \
	"\"nvml_version\": \"12.550.54.15\", \"pcie_throughput_delay_ms\": 0}, "

#endif
