/* calls.c - counting wrappers around every NVML entry point (see calls.h). */
#include "gpu/calls.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/jsonw.h"
#include "util/timeutil.h"

/* Return codes 0..RC_MAX are counted one by one; anything else (999) in the last slot. */
#define RC_MAX 31
#define RC_SLOTS (RC_MAX + 2)

typedef struct {
	bool resolved;
	uint64_t calls;
	uint64_t ns, max_ns;
	uint64_t rc[RC_SLOTS];
} call_stat;

static const char *const call_names[GPU_CALL__COUNT] = {
#define X(ret, name, args) #name,
    NVML_ENTRY_POINTS(X)
#undef X
};

static bool forced;
static void *real_fn[GPU_CALL__COUNT];
static call_stat stats[GPU_CALL__COUNT];
static pthread_mutex_t stats_mu = PTHREAD_MUTEX_INITIALIZER;

void gpu_calls_enable(void)
{
	forced = true;
}

bool gpu_calls_enabled(void)
{
	const char *e = getenv("GPUWHY_NVML_CALLS");
	return forced || (e && *e);
}

static void note(gpu_call_id id, int rc, int64_t ns)
{
	int slot = rc >= 0 && rc <= RC_MAX ? rc : RC_MAX + 1;
	pthread_mutex_lock(&stats_mu);
	call_stat *s = &stats[id];
	s->calls++;
	s->ns += (uint64_t)ns;
	if ((uint64_t)ns > s->max_ns)
		s->max_ns = (uint64_t)ns;
	s->rc[slot]++;
	pthread_mutex_unlock(&stats_mu);
}

/*
 * One wrapper per entry point, generated from the ABI list. Every NVML entry
 * point gpuwhy uses takes at most six integer or pointer arguments, which
 * the x86-64 and AArch64 calling conventions pass in registers: forwarding
 * six register-sized values reaches the real function with its arguments
 * intact, whatever its prototype, so one template serves them all.
 */
typedef uintptr_t reg;
#define RC_OF(r) ((int)_Generic((r), const char * : -1, default : (r)))
#define X(ret, name, args)                                                                         \
	static ret call_##name(reg a, reg b, reg c, reg d, reg e, reg f)                           \
	{                                                                                          \
		ret (*fn)(reg, reg, reg, reg, reg, reg);                                           \
		*(void **)&fn = real_fn[GPU_CALL_##name];                                          \
		int64_t t0 = gw_mono_ns();                                                         \
		ret r = fn(a, b, c, d, e, f);                                                      \
		note(GPU_CALL_##name, RC_OF(r), gw_mono_ns() - t0);                                \
		return r;                                                                          \
	}
NVML_ENTRY_POINTS(X)
#undef X

static void *const wrappers[GPU_CALL__COUNT] = {
#define X(ret, name, args) (void *)call_##name,
    NVML_ENTRY_POINTS(X)
#undef X
};

void *gpu_calls_wrap(gpu_call_id id, void *real)
{
	if (id < 0 || id >= GPU_CALL__COUNT || !gpu_calls_enabled())
		return real;
	pthread_mutex_lock(&stats_mu);
	stats[id].resolved = real != NULL;
	pthread_mutex_unlock(&stats_mu);
	if (!real)
		return NULL;
	real_fn[id] = real;
	return wrappers[id];
}

static const char *const rc_names[] = {
    "SUCCESS",
    "UNINITIALIZED",
    "INVALID_ARGUMENT",
    "NOT_SUPPORTED",
    "NO_PERMISSION",
    "ALREADY_INITIALIZED",
    "NOT_FOUND",
    "INSUFFICIENT_SIZE",
    "INSUFFICIENT_POWER",
    "DRIVER_NOT_LOADED",
    "TIMEOUT",
    "IRQ_ISSUE",
    "LIBRARY_NOT_FOUND",
    "FUNCTION_NOT_FOUND",
    "CORRUPTED_INFOROM",
    "GPU_IS_LOST",
    "RESET_REQUIRED",
    "OPERATING_SYSTEM",
    "LIB_RM_VERSION_MISMATCH",
    "IN_USE",
    "MEMORY",
    "NO_DATA",
    "VGPU_ECC_NOT_SUPPORTED",
    "INSUFFICIENT_RESOURCES",
    "FREQ_NOT_SUPPORTED",
    "ARGUMENT_VERSION_MISMATCH",
    "DEPRECATED",
    "NOT_READY",
    "GPU_NOT_FOUND",
    "INVALID_STATE",
    "RESET_TYPE_NOT_SUPPORTED",
};

const char *gpu_calls_rc_name(int rc, char *buf, size_t len)
{
	if (rc >= 0 && (size_t)rc < sizeof rc_names / sizeof *rc_names)
		return rc_names[rc];
	if (rc == NVML_ERROR_UNKNOWN)
		return "UNKNOWN";
	snprintf(buf, len, "UNKNOWN_%d", rc);
	return buf;
}

/* Slot k of the return-code histogram as a name: "other" for the catch-all. */
static const char *slot_name(int k, char *buf, size_t len)
{
	if (k == RC_MAX + 1)
		return "OTHER";
	return gpu_calls_rc_name(k, buf, len);
}

int gpu_calls_write_json(FILE *out, const char *library)
{
	call_stat snap[GPU_CALL__COUNT];
	pthread_mutex_lock(&stats_mu);
	memcpy(snap, stats, sizeof snap);
	pthread_mutex_unlock(&stats_mu);
	jsonw w;
	jsonw_init(&w, out, true);
	jsonw_obj_begin(&w);
	jsonw_key(&w, "library");
	jsonw_str(&w, library ? library : "");
	jsonw_key(&w, "calls");
	jsonw_arr_begin(&w);
	for (int i = 0; i < GPU_CALL__COUNT; i++) {
		const call_stat *s = &snap[i];
		jsonw_obj_begin(&w);
		jsonw_key(&w, "name");
		jsonw_str(&w, call_names[i]);
		jsonw_key(&w, "resolved");
		jsonw_bool(&w, s->resolved);
		jsonw_key(&w, "calls");
		jsonw_int(&w, (long long)s->calls);
		if (s->calls) {
			/* microseconds to the nanosecond the clock gives: 12 digits hold them */
			jsonw_key(&w, "mean_us");
			jsonw_real(&w, round((double)s->ns / (double)s->calls) / 1e3, 12);
			jsonw_key(&w, "max_us");
			jsonw_real(&w, (double)s->max_ns / 1e3, 12);
			jsonw_key(&w, "returns");
			jsonw_obj_begin(&w);
			for (int k = 0; k < RC_SLOTS; k++) {
				char buf[32];
				if (!s->rc[k])
					continue;
				jsonw_key(&w, slot_name(k, buf, sizeof buf));
				jsonw_int(&w, (long long)s->rc[k]);
			}
			jsonw_obj_end(&w);
		}
		jsonw_obj_end(&w);
	}
	jsonw_arr_end(&w);
	jsonw_obj_end(&w);
	fputc('\n', out);
	return ferror(out) ? -1 : 0;
}

int gpu_calls_write_table(FILE *out, const char *library)
{
	call_stat snap[GPU_CALL__COUNT];
	pthread_mutex_lock(&stats_mu);
	memcpy(snap, stats, sizeof snap);
	pthread_mutex_unlock(&stats_mu);
	fprintf(out, "NVML calls (%s)\n%-46s %8s %10s %10s  %s\n", library ? library : "?",
	        "entry point", "calls", "mean us", "max us", "returns");
	for (int i = 0; i < GPU_CALL__COUNT; i++) {
		const call_stat *s = &snap[i];
		if (!s->calls) {
			if (!s->resolved)
				fprintf(out, "%-46s %8s\n", call_names[i], "absent");
			continue;
		}
		fprintf(out, "%-46s %8llu %10.1f %10.1f ", call_names[i],
		        (unsigned long long)s->calls, (double)s->ns / (double)s->calls / 1e3,
		        (double)s->max_ns / 1e3);
		for (int k = 0; k < RC_SLOTS; k++) {
			char buf[32];
			if (s->rc[k])
				fprintf(out, " %s=%llu", slot_name(k, buf, sizeof buf),
				        (unsigned long long)s->rc[k]);
		}
		fputc('\n', out);
	}
	return ferror(out) ? -1 : 0;
}

int gpu_calls_report(const char *library)
{
	const char *path = getenv("GPUWHY_NVML_CALLS");
	if (!path || !*path)
		return 0;
	if (!strcmp(path, "-"))
		return gpu_calls_write_table(stderr, library);
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	int rc = gpu_calls_write_json(f, library);
	if (fclose(f) != 0)
		rc = -1;
	return rc;
}
