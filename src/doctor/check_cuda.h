/*
 * check_cuda.h - CUDA_VISIBLE_DEVICES resolved the way CUDA does (check_cuda.c).
 */
#ifndef GPUWHY_DOCTOR_CHECK_CUDA_H
#define GPUWHY_DOCTOR_CHECK_CUDA_H

#include <stdbool.h>

#include "gpu/gpu.h"

#define DOCTOR_CVD_MAX GPU_MAX

typedef struct {
	const char *uuid; /* "GPU-..." */
	const char *name;
	const char *pci;     /* bus id, for PCI_BUS_ID order */
	double cc;           /* compute capability, 0 when unknown */
	double max_sm_clock; /* MHz, 0 when unknown */
	bool mig;            /* MIG mode enabled */
} doctor_cvd_gpu;

typedef struct {
	bool set;                      /* the variable is set */
	int n;                         /* CUDA ordinals that result */
	int phys[DOCTOR_CVD_MAX];      /* ordinal -> index into the GPU list */
	int mig_entry[DOCTOR_CVD_MAX]; /* 1 when that ordinal is a MIG device */
	int stopped_at; /* entry number (0-based) that stopped parsing, -1 when none */
	char stop_entry[96];
	char stop_why[160];
	bool duplicate;            /* a device listed twice: CUDA then sees none */
	int order[DOCTOR_CVD_MAX]; /* CUDA's enumeration order without the variable */
	bool order_is_pci;         /* that order equals PCI bus (NVML) order */
} doctor_cvd_map;

/*
 * Resolve value (NULL = unset) the way CUDA does against gpus[0..n-1]
 * (given in NVML / PCI bus order). pci_bus_order: CUDA_DEVICE_ORDER=PCI_BUS_ID.
 */
void doctor_cvd_resolve(const char *value, const doctor_cvd_gpu *gpus, int n, bool pci_bus_order,
                        doctor_cvd_map *out);

/* Syntax alone: does the value hide every GPU on any machine ("", "-1", "none", "NoDevFiles")? */
bool doctor_cvd_hides_all(const char *value);

#endif
