/*
 * calls.h - a census of the NVML calls the device layer makes.
 *
 * With GPUWHY_NVML_CALLS=FILE in the environment (or gpu_calls_enable()),
 * every resolved NVML entry point is wrapped at load: each call is counted
 * with its return code and its time, whichever thread makes it. gpu_close()
 * writes the census to FILE as JSON ("-": a table on stderr). It answers
 * which calls a driver does not support, which fail, and what each costs,
 * without a line of the sampling code knowing about it.
 */
#ifndef GPUWHY_GPU_CALLS_H
#define GPUWHY_GPU_CALLS_H

#include <stdbool.h>
#include <stdio.h>

#include "nvml_abi.h"

typedef enum {
#define X(ret, name, args) GPU_CALL_##name,
	NVML_ENTRY_POINTS(X)
#undef X
	    GPU_CALL__COUNT
} gpu_call_id;

/* Count calls from the next load on, even without GPUWHY_NVML_CALLS. */
void gpu_calls_enable(void);
/* Whether calls are counted (enabled, or GPUWHY_NVML_CALLS set). */
bool gpu_calls_enabled(void);

/*
 * The function to store in place of entry point id: a counting wrapper of
 * `real` when counting is on, else `real` itself. NULL stays NULL (the
 * census lists the entry point as absent from the library).
 */
void *gpu_calls_wrap(gpu_call_id id, void *real);

/* Write the census as JSON: {"library": ..., "calls": [{"name", "resolved", "calls", ...}]}. */
int gpu_calls_write_json(FILE *out, const char *library);
/* Write the census as a table: one line per entry point called or absent. */
int gpu_calls_write_table(FILE *out, const char *library);
/* Write the census where GPUWHY_NVML_CALLS says (nothing when unset). 0, or -1 with errno. */
int gpu_calls_report(const char *library);

/* The NVML name of a return code ("SUCCESS", "NOT_SUPPORTED", ...), "UNKNOWN_<n>" otherwise. */
const char *gpu_calls_rc_name(int rc, char *buf, size_t len);

#endif
