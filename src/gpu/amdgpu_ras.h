/*
 * amdgpu_ras.h - RAS error counts of an AMD GPU: DEV/ras/BLOCK_err_count
 * (umc, gfx, sdma, mmhub, xgmi_wafl, ...), each "ue: N\nce: N\n" with a
 * "de: N" (deferred) line on newer kernels' umc. Counts since the driver
 * loaded: the meaning of NVIDIA's volatile ECC counters (uncorrectable ~
 * double-bit, correctable ~ single-bit). Boards without RAS (most Radeon
 * cards, APUs) have no ras directory: absent, never 0.
 *
 * Implemented by amdgpu_ras.c.
 */
#ifndef GPUWHY_GPU_AMDGPU_RAS_H
#define GPUWHY_GPU_AMDGPU_RAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AMDGPU_RAS_MAX_BLOCKS 24

typedef struct {
	char name[24]; /* "umc" */
	uint64_t ue, ce;
} amdgpu_ras_block;

typedef struct {
	uint64_t ue, ce; /* summed over the blocks that parsed */
	int nblocks;     /* sorted by name */
	amdgpu_ras_block blocks[AMDGPU_RAS_MAX_BLOCKS];
} amdgpu_ras;

/* One *_err_count file's text; false unless both the ue and the ce line parse. */
bool amdgpu_ras_parse(const char *text, size_t len, uint64_t *ue, uint64_t *ce);

/* Every DEV_PATH/ras/NAME_err_count; false when no file parses (no RAS). */
bool amdgpu_ras_read(const char *dev_path, amdgpu_ras *out);

#endif
