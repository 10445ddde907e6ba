/* status_smi.h - nvidia-smi's boxed summary table for `gpuwhy status --nvidia-smi`. */
#ifndef GPUWHY_CMD_STATUS_SMI_H
#define GPUWHY_CMD_STATUS_SMI_H

#include "gpu/gpu.h"

/* Every selected GPU (vals[i] sampled) and their processes, as nvidia-smi prints them. */
void status_smi_print(gpu_ctx *c, const gpu_values *vals);

#endif
