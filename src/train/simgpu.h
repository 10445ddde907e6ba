/*
 * simgpu.h - the simulated GPU as `gpuwhy sim`'s own commands use it (simgpu.c): the
 * scenario --sim named, the simulated library opened through the device layer, the
 * shipped scenarios' names, and one GPU's reading as `sim show` prints it.
 */
#ifndef GPUWHY_TRAIN_SIMGPU_H
#define GPUWHY_TRAIN_SIMGPU_H

#include <dirent.h>
#include <stddef.h>
#include <stdio.h>

#include "gpu/gpu.h"

/* The scenario given with --sim (GPUWHY_SIM_SCENARIO), or NULL. */
const char *train_sim_scenario(void);
/* The simulated GPU through the device layer, for the command who. Returns 0 or a
 * GW_EXIT_* code (message printed). */
int train_sim_open(gpu_ctx **ctx, const char *who);
/* The names of the scenarios (NAME.json) in d, sorted, each malloc'd; returns how many (at
 * most max). */
size_t train_sim_scenario_names(DIR *d, char **names, size_t max);
/* GPU i's reading now, one line of key=value: the integer the driver gave, "n/a" when
 * absent; "gpu=I lost" for a GPU off the bus. */
void train_sim_show_gpu(FILE *out, gpu_ctx *ctx, int i);

#endif
