/* gpuq.h - `gpuwhy query --query-gpu` and `--query-remapped-rows` (gpuq.c): the fields
 * asked for, their list for people (--help-query), and a sample of the selected GPUs as
 * nvidia-smi's CSV or as JSON. */
#ifndef GPUWHY_SMI_GPUQ_H
#define GPUWHY_SMI_GPUQ_H

#include <stdbool.h>
#include <stdio.h>

#include "gpu/gpu.h"
#include "smi/smi.h"

/* The field `timestamp`, which is no metric. */
#define SMI_FIELD_TIMESTAMP (-2)

/* The fields of --query-gpu, in the order asked: metric ids or SMI_FIELD_TIMESTAMP. */
typedef struct {
	int id[SMI_MAX_FIELDS];
	int n;
} smi_gpu_fields;

/* Add the fields of a comma-separated list to f. 0, or GW_EXIT_USAGE with the message
 * printed. */
int smi_gpu_fields_parse(const char *list, smi_gpu_fields *f);
/* --query-remapped-rows takes the GPU's identity and its remapped_rows.* fields only: 0, or
 * GW_EXIT_USAGE with the message printed. */
int smi_remap_fields_check(const smi_gpu_fields *f);
/* The fields for people: names, units, aliases, meanings, DCGM names (--help-query). */
void smi_gpu_fields_help(FILE *out);
/* The CSV header (units kept even with nounits); remap: the names the remapped-row query
 * gives the GPU's identity (gpu_name, ...). */
void smi_gpu_csv_header(FILE *out, const smi_gpu_fields *f, bool remap);
/* GPU i's reading v as a CSV row, with or without units. */
void smi_gpu_csv_row(FILE *out, gpu_ctx *c, int i, const gpu_values *v, const smi_gpu_fields *f,
                     bool units);
/* The selected GPUs' readings (vals[k] of sel->idx[k]) as one JSON line. */
void smi_gpu_json(FILE *out, gpu_ctx *c, const smi_sel *sel, const gpu_values *vals,
                  const smi_gpu_fields *f);

#endif
