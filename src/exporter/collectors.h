/*
 * collectors.h - which DCGM families the exporter exports: the default set or a
 * dcgm-exporter counters CSV (collectors.c).
 */
#ifndef GPUWHY_EXPORTER_COLLECTORS_H
#define GPUWHY_EXPORTER_COLLECTORS_H

#include <stddef.h>

#include "gpu/gpu.h"
#include "util/fail.h"

/* String-valued DCGM fields that become labels (dcgm-exporter's `label` rows). */
enum {
	EXPORTER_LABEL_DEV_SERIAL = 1u << 0, /* DCGM_FI_DEV_SERIAL */
	EXPORTER_LABEL_DEV_VBIOS = 1u << 1,  /* DCGM_FI_DEV_VBIOS_VERSION */
	EXPORTER_LABEL_DRIVER = 1u << 2,     /* DCGM_FI_DRIVER_VERSION */
	EXPORTER_LABEL_NVML = 1u << 3,       /* DCGM_FI_NVML_VERSION */
};

/* The TYPE line of a family. */
typedef enum { EXPORTER_GAUGE, EXPORTER_COUNTER, EXPORTER_UNTYPED } exporter_prom_type;

typedef struct {
	int order[GM__COUNT]; /* metric ids in output order */
	int n;
	exporter_prom_type type[GM__COUNT];
	char *help[GM__COUNT]; /* help text per id; NULL = the table's */
	unsigned labels;       /* EXPORTER_LABEL_* */
} exporter_collectors;

/* Every metric of the table that has a DCGM name, in table order, with the
 * table's help texts, plus the driver version label. Gauges are typed gauge;
 * the table's counters untyped (see collectors.c). */
void exporter_collectors_default(exporter_collectors *c);
/* Type every exported counter metric (energy, replays, NVLink, remapped rows, ECC) as t. */
void exporter_collectors_counter_type(exporter_collectors *c, exporter_prom_type t);
void exporter_collectors_free(exporter_collectors *c);

/*
 * Parse a dcgm-exporter counters CSV ("FIELD, prom_type, help"; '#' starts a
 * comment; blank lines ignored). Fields the table does not know are skipped
 * and listed, comma-separated, in unknown (truncated with "..." when long).
 * Returns 0, or -1 with err (when given) filled: the reason naming the line as
 * why (English; why_text in the user's language), code GW_EXIT_USAGE (malformed
 * row, prom_type other than gauge/counter/label, a numeric field given as label;
 * GW_EXIT_ENV: out of memory), what left empty for the caller, who knows the file.
 */
int exporter_collectors_parse(const char *text, size_t len, exporter_collectors *out, char *unknown,
                              size_t unknownlen, gw_fail *err);

#endif
