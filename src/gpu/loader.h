/*
 * loader.h - which libnvidia-ml.so.1 gpuwhy loads, and the simulated GPU.
 *
 * Order: --nvml PATH, else GPUWHY_NVML, else the system's libnvidia-ml.so.1
 * then libnvidia-ml.so. --sim SCENARIO sets GPUWHY_NVML to the simulator
 * library built beside the binary and GPUWHY_SIM_SCENARIO to the scenario
 * file, so child processes see the same simulated machine.
 */
#ifndef GPUWHY_GPU_LOADER_H
#define GPUWHY_GPU_LOADER_H

#include <stddef.h>

#include "gpu/gpu.h"

/*
 * Apply --sim / --nvml to the environment. Returns 0, or a GW_EXIT_* code
 * with why in *f; prints nothing.
 */
int gpu_loader_setup(const char *sim, const char *nvml, const char *argv0, gw_fail *f);

/* Find a shipped scenario by name (or accept a path). Returns 0 and fills out, or -1. */
int gpu_scenario_resolve(const char *name_or_path, char *out, size_t outlen);

/* Directory that holds the shipped scenarios (first one that exists), or NULL. */
const char *gpu_scenario_dir(void);

/* Path of the simulated libnvidia-ml.so.1 for this binary, or NULL if not found. */
const char *gpu_sim_library(const char *argv0);

#endif
