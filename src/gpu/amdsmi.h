/*
 * amdsmi.h - AMD's SMI library (libamd_smi.so), opened with dlopen, for the
 * few AMD GPU fields the amdgpu driver's files do not give.
 *
 * It is never required: a missing library, a missing symbol, a failed
 * amdsmi_init, a library version whose struct layouts gpuwhy does not know
 * (include/amdsmi_abi.h) or an error status from any call leave the field
 * absent, never 0. The library's GPUs are matched to the amdgpu cards by PCI
 * address. Nothing here prints: why the library is not used is kept in a
 * gw_fail for `status -v` and doctor.
 */
#ifndef GPUWHY_GPU_AMDSMI_H
#define GPUWHY_GPU_AMDSMI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "amdsmi_abi.h"
#include "gpu/gpu.h"
#include "util/fail.h"

typedef struct amdsmi_lib amdsmi_lib;

/* What one GPU gives through the library; a false ok is n/a. */
typedef struct {
	bool energy_ok;
	double energy_mj; /* total energy since the driver loaded */
	bool ecc_ok;
	unsigned long long ecc_ce, ecc_ue; /* corrected, uncorrected, summed over the blocks */
} amdsmi_values;

/*
 * Open the first of names that loads, initialise it for GPUs and list its
 * GPUs. Returns the library, or NULL with *f filled (GW_EXIT_ENV): cannot
 * load, a required symbol missing, amdsmi_init failed, an unknown version.
 */
amdsmi_lib *amdsmi_lib_open(const char *const *names, size_t n_names, gw_fail *f);

/*
 * Which library gpuwhy opens, from GPUWHY_AMDSMI: unset, the system's
 * (AMDSMI_ABI_SONAME, then libamd_smi.so, then ROCm's /opt/rocm/lib) but only
 * where the cards are the real machine's (real_tree); set to a path, that
 * library; set to "sim", the simulated one built beside gpuwhy; set but empty,
 * none. Returns the library, or NULL with f->code 0 when none is to be
 * loaded, or with *f filled when loading failed.
 */
amdsmi_lib *amdsmi_lib_open_default(bool real_tree, gw_fail *f);

void amdsmi_lib_close(amdsmi_lib *l);

/* The name it was opened by, its version ("24.7.0") and how many GPUs it lists. */
const char *amdsmi_lib_name(const amdsmi_lib *l);
const char *amdsmi_lib_version(const amdsmi_lib *l);
int amdsmi_lib_gpus(const amdsmi_lib *l);

/* Whether the library lists the GPU at bdf ("0000:0c:00.0", any case). */
bool amdsmi_lib_has(const amdsmi_lib *l, const char *bdf);

/* Read the GPU at bdf; every value the library does not give is n/a. */
void amdsmi_lib_read(const amdsmi_lib *l, const char *bdf, amdsmi_values *out);

/*
 * Fill o with what the files did not give: the energy counter (the amdgpu
 * driver has none), and the ECC totals only when RAS's files gave none.
 * Sysfs first, the library fills gaps.
 */
void amdsmi_merge(const amdsmi_values *a, gpu_values *o);

/* Read the GPU at bdf and merge it into o. */
void amdsmi_fill(const amdsmi_lib *l, const char *bdf, gpu_values *o);

/* "dddd:bb:dd.f" of a library's PCI address. */
void amdsmi_bdf_text(amdsmi_bdf_t b, char *out, size_t len);

/*
 * The version amdsmi_get_lib_version wrote into a zeroed buffer, its first
 * four 32-bit words w, read in the layout of the version it is: "24.7.0",
 * "25.3.0", "26.0.2" into text. True when gpuwhy knows its struct layouts.
 */
bool amdsmi_version_read(const uint32_t w[4], char *text, size_t len);

#endif
