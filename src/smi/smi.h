/* smi.h - the nvidia-smi compatible views (src/smi/): GPU selection, -L, process and page
 * queries, -q, dmon and pmon, and the boxed summary table. The commands that print them
 * (query, dmon, pmon, status --nvidia-smi) parse their options in src/cmd/. */
#ifndef GPUWHY_SMI_SMI_H
#define GPUWHY_SMI_SMI_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu/gpu.h"

#define SMI_MAX_FIELDS 512

/* The selected GPUs (after --gpus), filtered by -i: positions into the gpu_ctx list. */
typedef struct {
	int idx[GPU_MAX];
	int n;
} smi_sel;

/*
 * -i/--id LIST: NVML indices, full or short UUIDs, PCI bus ids ("00000000:1B:00.0",
 * "0000:1b:00.0" or "1B:00.0"), comma-separated. NULL selects every GPU. Returns 0,
 * or GW_EXIT_USAGE with the message printed.
 */
int smi_select(gpu_ctx *c, const char *list, smi_sel *out);

/* "YYYY/MM/DD HH:MM:SS.mmm", nvidia-smi's timestamp. */
void smi_timestamp(double wall, char *out, size_t len);

/*
 * The next entry of a comma-separated list, as nvidia-smi reads one: spaces
 * around it dropped, empty entries skipped; NULL at the end. strtok_r's way:
 * list the first time (it is changed in place), NULL after.
 */
char *smi_list_next(char *list, char **save);

/* nvidia-smi's error for a name no query knows. */
int smi_bad_field(const char *name, const char *help);

/* --query-compute-apps / --query-retired-pages: the field list is checked first. */
typedef struct {
	int fields[64];
	int n;
} smi_fields;
int smi_apps_parse(const char *list, smi_fields *f);
int smi_pages_parse(const char *list, smi_fields *f);
void smi_apps_print(gpu_ctx *c, const smi_sel *s, const smi_fields *f, bool header, bool units);
void smi_pages_print(gpu_ctx *c, const smi_sel *s, const smi_fields *f, bool header);

/* -L: "GPU 0: NAME (UUID: GPU-...)". */
void smi_list(gpu_ctx *c, const smi_sel *s);

/* -q [-d SECTION,...]: nvidia-smi's sectioned text. sections: NULL for all. */
int smi_q_parse_sections(const char *list, unsigned *mask);
void smi_q_print(gpu_ctx *c, const smi_sel *s, unsigned mask);

/* dmon / pmon: metric groups (-s letters), cadence, count, date/time columns. */
typedef struct {
	char groups[16]; /* dmon: p u c v m e t (and g, GPM); pmon: u m */
	int64_t interval_ns;
	long long count; /* 0: until stopped */
	bool date, time; /* -o D / -o T */
} smi_mon_opts;

/* Parse -s/-o values; return 0 or GW_EXIT_USAGE with the message printed. */
int smi_mon_groups(const char *s, const char *valid, char *out, size_t outlen);
int smi_mon_dt(const char *s, smi_mon_opts *o);

/* Stream until *stop, count rows per GPU, or a write error; returns a GW_EXIT_* code. */
int smi_dmon_run(gpu_ctx *c, const smi_sel *s, const smi_mon_opts *o, volatile sig_atomic_t *stop);
int smi_pmon_run(gpu_ctx *c, const smi_sel *s, const smi_mon_opts *o, volatile sig_atomic_t *stop);

/* nvidia-smi's boxed table (table.c): every selected GPU (vals[i] sampled) and their
 * processes, for `gpuwhy status --nvidia-smi`. */
void status_smi_print(gpu_ctx *c, const gpu_values *vals);

#endif
