/* cell.h - one metric of one GPU as text or JSON, shared by every face. */
#ifndef GPUWHY_GPU_CELL_H
#define GPUWHY_GPU_CELL_H

#include <stdbool.h>
#include <stddef.h>

#include "gpu/gpu.h"
#include "util/jsonw.h"

/* nvidia-smi style text; returns false (and writes "[N/A]") when absent. */
bool gpu_cell_text(const gpu_ctx *c, int i, const gpu_values *v, gpu_metric_id id, bool with_units,
                   char *out, size_t outlen);

/* JSON value: numbers as numbers, booleans for Enabled/Active/Yes, absent as null. */
void gpu_cell_json(const gpu_ctx *c, int i, const gpu_values *v, gpu_metric_id id, jsonw *w);

#endif
