/*
 * machine.h - what the device layer saw: NVML's state, the GPUs, their values and
 * processes; read once for all checks (machine.c) or built by hand in tests.
 */
#ifndef GPUWHY_DOCTOR_MACHINE_H
#define GPUWHY_DOCTOR_MACHINE_H

#include <stdbool.h>
#include <stdint.h>

#include "gpu/gpu.h"

typedef enum {
	DOCTOR_NVML_OK,
	DOCTOR_NVML_NO_LIBRARY,    /* libnvidia-ml.so.1 not found or not loadable */
	DOCTOR_NVML_NOT_LOADED,    /* library there, kernel driver not loaded */
	DOCTOR_NVML_MISMATCH,      /* library and kernel module versions differ */
	DOCTOR_NVML_NO_PERMISSION, /* /dev/nvidia* refused */
	DOCTOR_NVML_OTHER,
} doctor_nvml_state;

#define DOCTOR_PROCS_MAX 64

typedef struct {
	gpu_static st;
	bool lost;
	gpu_values v;
	bool procs_ok; /* the process list could be read */
	int nproc;
	gpu_proc procs[DOCTOR_PROCS_MAX];
} doctor_gpu;

typedef struct {
	doctor_nvml_state nvml;
	char error[512];    /* the device layer's message when nvml != DOCTOR_NVML_OK */
	char lib_path[512]; /* the NVML library file in use (resolved), "" when unknown */
	bool simulated;     /* the simulated GPU (--sim / GPUWHY_SIM_SCENARIO) */
	char driver[96];    /* "550.54.14", "" when unknown */
	char cuda[16];      /* highest CUDA the driver supports, "12.4", "" when unknown */
	char nvml_version[96];
	int n;           /* every GPU NVML enumerates */
	doctor_gpu *gpu; /* n entries, NVML index order */
	bool has_selection;
	bool selected[GPU_MAX]; /* --gpus: only these get per-GPU checks */
} doctor_machine;

/* Open NVML (all GPUs), read everything, close. A driver failure is not an
 * error here: it is recorded in m->nvml / m->error. gpus is the --gpus list
 * or NULL; returns GW_EXIT_USAGE (message printed) when it names no GPU. */
int doctor_machine_load(doctor_machine *m, const char *gpus);
/* doctor_machine_load in a child process: a driver that hangs (a GPU fallen off the
 * bus can stall NVML for minutes) becomes a driver.nvml failure after timeout_ns. */
int doctor_machine_load_guarded(doctor_machine *m, const char *gpus, int64_t timeout_ns);
void doctor_machine_free(doctor_machine *m);
/* Tests: append a GPU with index and every value absent. */
doctor_gpu *doctor_machine_add_gpu(doctor_machine *m);
/* Whether GPU i gets per-GPU checks (the --gpus selection). */
bool doctor_gpu_selected(const doctor_machine *m, int i);

#endif
