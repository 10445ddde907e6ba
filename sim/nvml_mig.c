/*
 * nvml_mig.c - MIG devices of the simulated GPU: their handles and what NVML
 * answers on them (name, UUID, memory, instance ids, SM share).
 *
 * A MIG handle is a pointer into a table of its own, so an entry point
 * that only takes whole-GPU handles rejects it with INVALID_ARGUMENT, as
 * the real driver rejects most per-GPU queries on MIG handles. Those NVML
 * documents per instance (memory, BAR1, process lists) take both.
 */
#include <stdio.h>
#include <string.h>

#include "sim_lib.h"

struct sim_mig_handle {
	int gpu;  /* scenario GPU index */
	int slot; /* index into sim_gpu.mig */
};

static struct sim_mig_handle mig_handles[SIM_MAX_GPUS][SIM_MAX_MIG];

bool sim_is_mig_handle(nvmlDevice_t device)
{
	uintptr_t p = (uintptr_t)device, lo = (uintptr_t)&mig_handles[0][0];
	uintptr_t hi = (uintptr_t)(&mig_handles[0][0] + SIM_MAX_GPUS * SIM_MAX_MIG);
	return p >= lo && p < hi && (p - lo) % sizeof(struct sim_mig_handle) == 0;
}

/* Lock, then the MIG device behind a handle; NULL (lock released) when invalid or lost. */
static const sim_mig *mig_enter(nvmlDevice_t device, const void *out, nvmlReturn_t *rc,
                                struct nvmlDevice_st **parent)
{
	int slot;
	sim_time now;
	return sim_enter_mig(device, out, rc, parent, &slot, &now);
}

/* The opening of a MIG device's entry point: lock and check through mig_enter, return its
 * error, else declare the instance m and its GPU p. */
#define MIG_BEGIN(device, out)                                                                     \
	nvmlReturn_t rc_;                                                                          \
	struct nvmlDevice_st *p;                                                                   \
	const sim_mig *m = mig_enter((device), (out), &rc_, &p);                                   \
	if (!m)                                                                                    \
		return rc_;                                                                        \
	(void)p

const sim_mig *sim_enter_mig(nvmlDevice_t device, const void *out, nvmlReturn_t *rc,
                             struct nvmlDevice_st **parent, int *slot, sim_time *now)
{
	*rc = sim_enter(now);
	if (*rc != NVML_SUCCESS)
		return NULL;
	const struct sim_mig_handle *h = (const struct sim_mig_handle *)(const void *)device;
	if (!out || !sim_is_mig_handle(device) || h->gpu >= sim_g.scn->n_gpus ||
	    h->slot >= sim_g.dev[h->gpu].g->n_mig) {
		*rc = sim_leave(NVML_ERROR_INVALID_ARGUMENT);
		return NULL;
	}
	*parent = &sim_g.dev[h->gpu];
	*slot = h->slot;
	if (sim_lost(*parent, now)) {
		*rc = sim_leave(NVML_ERROR_GPU_IS_LOST);
		return NULL;
	}
	return &(*parent)->g->mig[h->slot];
}

nvmlReturn_t sim_mig_name(nvmlDevice_t device, char *name, unsigned length)
{
	MIG_BEGIN(device, name);
	char b[128];
	snprintf(b, sizeof b, "%s MIG %s", p->g->name, m->profile);
	return sim_leave(sim_copy_str(name, length, b));
}

nvmlReturn_t sim_mig_uuid(nvmlDevice_t device, char *uuid, unsigned length)
{
	MIG_BEGIN(device, uuid);
	return sim_leave(sim_copy_str(uuid, length, m->uuid));
}

/*
 * Bytes of the instance's memory: total, used (its baseline and the
 * scenario's processes on it); MIG instances reserve nothing of their own.
 */
nvmlReturn_t sim_mig_memory(nvmlDevice_t device, unsigned long long *total,
                            unsigned long long *used)
{
	nvmlReturn_t rc;
	struct nvmlDevice_st *p;
	int slot;
	sim_time now;
	const sim_mig *m = sim_enter_mig(device, total, &rc, &p, &slot, &now);
	if (!m)
		return rc;
	unsigned long long u = m->mem_used_b;
	for (int i = 0; i < sim_g.scn->n_procs; i++) {
		const sim_fproc *f = &sim_g.scn->procs[i];
		if (f->gpu == p->index && f->mig == slot && now.t >= f->start && now.t < f->end)
			u += f->used_mib * 1048576ULL;
	}
	*total = m->mem_total * 1048576ULL;
	*used = u < *total ? u : *total;
	return sim_leave(NVML_SUCCESS);
}

/*
 * BAR1 of an instance: its share of the GPU's aperture (the parent's whole
 * BAR1 when the scenario gives none), nothing mapped, as the real driver
 * answers (nvidia-smi 590: "0MiB / 24739MiB" for a 3g.40gb).
 */
nvmlReturn_t sim_mig_bar1(nvmlDevice_t device, nvmlBAR1Memory_t *bar1)
{
	MIG_BEGIN(device, bar1);
	bar1->bar1Total = (m->bar1_total ? m->bar1_total : p->g->bar1_total) * 1048576ULL;
	bar1->bar1Used = 0;
	bar1->bar1Free = bar1->bar1Total;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int *count)
{
	sim_time now;
	struct nvmlDevice_st *d;
	nvmlReturn_t rc = sim_enter_dev(device, count, &d, &now);
	if (rc != NVML_SUCCESS)
		return rc;
	if (!d->g->has_mig)
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	*count = SIM_MAX_MIG;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index,
                                                 nvmlDevice_t *migDevice)
{
	sim_time now;
	struct nvmlDevice_st *d;
	nvmlReturn_t rc = sim_enter_dev(device, migDevice, &d, &now);
	if (rc != NVML_SUCCESS)
		return rc;
	const sim_gpu *g = d->g;
	if (!g->has_mig)
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	if (!g->mig_current)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	if (index >= SIM_MAX_MIG)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	if ((int)index >= g->n_mig)
		return sim_leave(NVML_ERROR_NOT_FOUND);
	int gi = (int)(d - sim_g.dev);
	mig_handles[gi][index].gpu = gi;
	mig_handles[gi][index].slot = (int)index;
	*migDevice = (nvmlDevice_t)(void *)&mig_handles[gi][index];
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t device, unsigned int *isMigDevice)
{
	sim_time now;
	if (!isMigDevice)
		return NVML_ERROR_INVALID_ARGUMENT;
	nvmlReturn_t rc = sim_enter(&now);
	if (rc != NVML_SUCCESS)
		return rc;
	if (sim_is_mig_handle(device)) {
		*isMigDevice = 1;
		return sim_leave(NVML_SUCCESS);
	}
	if (!sim_valid_device(device))
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	*isMigDevice = 0;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int *id)
{
	MIG_BEGIN(device, id);
	*id = m->gi;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int *id)
{
	MIG_BEGIN(device, id);
	*id = m->ci;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t migDevice,
                                                          nvmlDevice_t *device)
{
	MIG_BEGIN(migDevice, device);
	*device = p;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t device, nvmlDeviceAttributes_t *attributes)
{
	if (!sim_is_mig_handle(device)) {
		/* Whole GPUs: the real driver answers too, but nothing here models SM counts. */
		sim_time now;
		struct nvmlDevice_st *d;
		nvmlReturn_t rc = sim_enter_dev(device, attributes, &d, &now);
		return rc != NVML_SUCCESS ? rc : sim_leave(NVML_ERROR_NOT_SUPPORTED);
	}
	MIG_BEGIN(device, attributes);
	memset(attributes, 0, sizeof *attributes);
	attributes->multiprocessorCount = m->sm_count;
	attributes->sharedCopyEngineCount = m->ce_count;
	attributes->sharedDecoderCount = m->dec_count;
	attributes->sharedJpegCount = m->jpg_count;
	attributes->sharedOfaCount = m->ofa_count;
	attributes->memorySizeMB = m->mem_total;
	return sim_leave(NVML_SUCCESS);
}
