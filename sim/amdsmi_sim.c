/*
 * amdsmi_sim.c - the simulated libamd_smi.so.24: a scenario's AMD GPUs as
 * AMD's SMI library shows them, the entry points gpuwhy uses
 * (include/amdsmi_abi.h).
 *
 * The scenario (GPUWHY_SIM_SCENARIO), its clock (the state directory's, or
 * GPUWHY_SIM_TIME pinned) and its model (sim_model.h) are those of the
 * simulated amdgpu tree (sim_amdfs.c), so the library and the files speak of
 * the same GPUs at the same moment. Only the scenario's AMD GPUs are listed,
 * one socket each, by the scenario's PCI address.
 *
 * For the tests of a library that misbehaves: GPUWHY_SIM_AMDSMI_FAIL, a
 * comma-separated list of "init" (amdsmi_init fails), "energy", "ecc" (those
 * calls answer NOT_SUPPORTED); GPUWHY_SIM_AMDSMI_VERSION=Y.M.m reports another
 * library version, in the amdsmi_version_t layout of that version; built with AMDSMI_SIM_NO_ENERGY
 * the library has no amdsmi_get_energy_count at all.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "amdsmi_abi.h"
#include "sim_model.h"
#include "sim_scenario.h"
#include "sim_state.h"

#define SIM_AMDSMI_EXPORT __attribute__((visibility("default")))

/* Every entry point declared from the ABI's list: a definition that drifts does not compile. */
#define SIM_AMDSMI_DECL(name, params) SIM_AMDSMI_EXPORT amdsmi_status_t name params;
AMDSMI_ABI_CALLS(SIM_AMDSMI_DECL, SIM_AMDSMI_DECL)
#undef SIM_AMDSMI_DECL

/* The counter's unit, as MI300X reports it (microjoules). */
#define SIM_AMDSMI_RESOLUTION_UJ 15.3f

typedef struct {
	int g; /* index into the scenario's GPUs */
} sim_amdsmi_gpu;

static struct {
	pthread_mutex_t mu;
	int refs; /* amdsmi_init without its amdsmi_shut_down */
	sim_scenario *scn;
	sim_epoch epoch;
	bool pinned;
	double pin_t;
	sim_amdsmi_gpu gpus[SIM_MAX_GPUS];
	int n;
} S = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* Whether GPUWHY_SIM_AMDSMI_FAIL names what. */
static bool failing(const char *what)
{
	const char *v = getenv("GPUWHY_SIM_AMDSMI_FAIL");
	size_t n = strlen(what);
	for (const char *p = v; p && *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == n && !strncmp(p, what, n))
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

static double mono_s_since(int64_t origin_ns)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)((int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec - origin_ns) / 1e9;
}

/* Scenario time now, and the GPU's (held at the moment it was lost). */
static double sim_t(const sim_gpu *g)
{
	double t = S.pinned ? S.pin_t : mono_s_since(S.epoch.mono_ns);
	if (t < 0)
		t = 0;
	return t < g->lost_after ? t : g->lost_after;
}

static bool load(void)
{
	const char *path = getenv("GPUWHY_SIM_SCENARIO");
	char err[512], state[4096];
	if (!path || !*path || sim_scenario_load(path, &S.scn, err, sizeof err) != 0)
		return false;
	if (sim_state_dir(path, state, sizeof state, err, sizeof err) != 0 ||
	    sim_clock_open(state, &S.epoch, err, sizeof err) != 0) {
		sim_scenario_free(S.scn);
		S.scn = NULL;
		return false;
	}
	const char *pin = getenv("GPUWHY_SIM_TIME");
	char *end;
	S.pinned = false;
	if (pin && *pin) {
		S.pin_t = strtod(pin, &end);
		S.pinned = *end == '\0' && isfinite(S.pin_t) && S.pin_t >= 0;
	}
	S.n = 0;
	for (int g = 0; g < S.scn->n_gpus && S.n < SIM_MAX_GPUS; g++)
		if (S.scn->gpus[g].amd)
			S.gpus[S.n++].g = g;
	return true;
}

amdsmi_status_t amdsmi_init(uint64_t init_flags)
{
	if (!(init_flags & AMDSMI_INIT_AMD_GPUS) || failing("init"))
		return AMDSMI_STATUS_INIT_ERROR;
	pthread_mutex_lock(&S.mu);
	bool ok = S.refs > 0 || load();
	if (ok)
		S.refs++;
	pthread_mutex_unlock(&S.mu);
	return ok ? AMDSMI_STATUS_SUCCESS : AMDSMI_STATUS_INIT_ERROR;
}

amdsmi_status_t amdsmi_shut_down(void)
{
	pthread_mutex_lock(&S.mu);
	if (S.refs > 0 && --S.refs == 0) {
		sim_scenario_free(S.scn);
		S.scn = NULL;
		S.n = 0;
	}
	pthread_mutex_unlock(&S.mu);
	return AMDSMI_STATUS_SUCCESS;
}

/*
 * In the layout of the version it reports: 24.x year.major.minor; 25.x
 * major 25, minor, release in the same struct, year left alone; 26 and
 * later major.minor.release from the first member (amdsmi_version26_t).
 */
amdsmi_status_t amdsmi_get_lib_version(amdsmi_version_t *v)
{
	if (!v)
		return AMDSMI_STATUS_INVAL;
	unsigned y = 24, ma = 7, mi = 0;
	const char *o = getenv("GPUWHY_SIM_AMDSMI_VERSION");
	if (o && *o && sscanf(o, "%u.%u.%u", &y, &ma, &mi) != 3)
		return AMDSMI_STATUS_INVAL;
	static const char build[] = "gpuwhy simulated";
	if (y < 25) {
		*v = (amdsmi_version_t){y, ma, mi, 0, build};
	} else if (y == 25) {
		v->major = y;
		v->minor = ma;
		v->release = mi;
		v->build = build;
	} else {
		/* the same 24 bytes, another layout: as a 26.x library writes them */
		amdsmi_version26_t n = {y, ma, mi, build};
		memcpy(v, &n, sizeof n);
	}
	return AMDSMI_STATUS_SUCCESS;
}

/* The GPU a handle stands for, or NULL (not initialised, not ours). */
static const sim_gpu *gpu_of(void *h)
{
	sim_amdsmi_gpu *p = h;
	if (!S.scn || p < S.gpus || p >= S.gpus + S.n)
		return NULL;
	return &S.scn->gpus[p->g];
}

/* The two-call protocol: a NULL list asks for the count; a short list is filled and refused. */
static amdsmi_status_t list_out(uint32_t *count, void **out, void *const *items, uint32_t n)
{
	if (!count)
		return AMDSMI_STATUS_INVAL;
	if (!out) {
		*count = n;
		return AMDSMI_STATUS_SUCCESS;
	}
	uint32_t cap = *count;
	for (uint32_t k = 0; k < n && k < cap; k++)
		out[k] = items[k];
	*count = n;
	return cap < n ? AMDSMI_STATUS_OUT_OF_RESOURCES : AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_socket_handles(uint32_t *count, amdsmi_socket_handle *handles)
{
	if (!S.scn)
		return AMDSMI_STATUS_NOT_INIT;
	void *items[SIM_MAX_GPUS];
	for (int k = 0; k < S.n; k++)
		items[k] = &S.gpus[k];
	return list_out(count, handles, items, (uint32_t)S.n);
}

amdsmi_status_t amdsmi_get_processor_handles(amdsmi_socket_handle socket, uint32_t *count,
                                             amdsmi_processor_handle *handles)
{
	if (!S.scn)
		return AMDSMI_STATUS_NOT_INIT;
	if (!gpu_of(socket))
		return AMDSMI_STATUS_INVAL;
	void *one[] = {socket};
	return list_out(count, handles, one, 1);
}

amdsmi_status_t amdsmi_get_processor_type(amdsmi_processor_handle h, amdsmi_processor_type_t *type)
{
	if (!gpu_of(h) || !type)
		return AMDSMI_STATUS_INVAL;
	*type = AMDSMI_PROCESSOR_TYPE_AMD_GPU;
	return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_gpu_device_bdf(amdsmi_processor_handle h, amdsmi_bdf_t *bdf)
{
	const sim_gpu *g = gpu_of(h);
	if (!g || !bdf)
		return AMDSMI_STATUS_INVAL;
	*bdf = AMDSMI_BDF_MAKE(g->pci.domain, g->pci.bus, g->pci.device, g->pci.function);
	return AMDSMI_STATUS_SUCCESS;
}

#ifndef AMDSMI_SIM_NO_ENERGY
amdsmi_status_t amdsmi_get_energy_count(amdsmi_processor_handle h, uint64_t *energy,
                                        float *resolution_uj, uint64_t *timestamp_ns)
{
	const sim_gpu *g = gpu_of(h);
	if (!g || !energy || !resolution_uj || !timestamp_ns)
		return AMDSMI_STATUS_INVAL;
	if (failing("energy"))
		return AMDSMI_STATUS_NOT_SUPPORTED;
	double t = sim_t(g), m[SIM_M_COUNT] = {0};
	if (t > 0)
		sim_scn_integral(g, 0, t, m);
	double uj = sim_energy_j(g, t, m) * 1e6;
	*energy = (uint64_t)floor(uj / SIM_AMDSMI_RESOLUTION_UJ);
	*resolution_uj = SIM_AMDSMI_RESOLUTION_UJ;
	*timestamp_ns = (uint64_t)llround(t * 1e9);
	return AMDSMI_STATUS_SUCCESS;
}
#endif

amdsmi_status_t amdsmi_get_gpu_total_ecc_count(amdsmi_processor_handle h, amdsmi_error_count_t *ec)
{
	const sim_gpu *g = gpu_of(h);
	if (!g || !ec)
		return AMDSMI_STATUS_INVAL;
	if (!g->has_ecc || !g->ecc_enabled || failing("ecc"))
		return AMDSMI_STATUS_NOT_SUPPORTED;
	unsigned long long sv, dv, sa, da;
	sim_ecc_counts(g, sim_t(g), &sv, &dv, &sa, &da);
	memset(ec, 0, sizeof *ec);
	ec->correctable_count = sv;
	ec->uncorrectable_count = dv;
	return AMDSMI_STATUS_SUCCESS;
}
