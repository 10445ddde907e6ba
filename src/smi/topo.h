/* topo.h - `gpuwhy topo`'s views (topo.c): the GPU x GPU connections with each GPU's CPU
 * and NUMA affinity and NVLink states, as text or JSON, and nvidia-smi topo -m's
 * tab-separated matrix. */
#ifndef GPUWHY_SMI_TOPO_H
#define GPUWHY_SMI_TOPO_H

#include <stdio.h>

#include "gpu/gpu.h"

/* nvidia-smi topo -m's matrix, the NICs read from sysfs below root ("" for /). */
void smi_topo_matrix(FILE *out, gpu_ctx *c, const char *root);
/* The connections, affinities and NVLink states for people. */
void smi_topo_text(FILE *out, gpu_ctx *c);
/* The same as one JSON object. */
void smi_topo_json(FILE *out, gpu_ctx *c);

#endif
