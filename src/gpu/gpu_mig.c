/* gpu_mig.c - the MIG devices of a GPU (GPU instance + compute instance), read when asked. */
#include <stdio.h>
#include <string.h>

#include "gpu/gpu_int.h"

#define MIB (1024ULL * 1024ULL)

/* NVML names a MIG device "<GPU name> MIG <profile>". */
static void mig_profile(const char *name, char *out, size_t len)
{
	const char *p = strstr(name, " MIG ");
	snprintf(out, len, "%s", p ? p + 5 : "");
}

static void read_mig_ids(gpu_ctx *c, nvmlDevice_t h, gpu_mig *m)
{
	unsigned v;
	if (c->api.nvmlDeviceGetGpuInstanceId && c->api.nvmlDeviceGetComputeInstanceId &&
	    c->api.nvmlDeviceGetGpuInstanceId(h, &m->gi) == NVML_SUCCESS &&
	    c->api.nvmlDeviceGetComputeInstanceId(h, &v) == NVML_SUCCESS) {
		m->ci = v;
		m->ids_ok = true;
	}
}

static void read_mig_attributes(gpu_ctx *c, nvmlDevice_t h, gpu_mig *m)
{
	nvmlDeviceAttributes_t a;
	if (!c->api.nvmlDeviceGetAttributes_v2 ||
	    c->api.nvmlDeviceGetAttributes_v2(h, &a) != NVML_SUCCESS)
		return;
	m->attr_ok = true;
	m->sm_count = a.multiprocessorCount;
	m->ce_count = a.sharedCopyEngineCount;
	m->dec_count = a.sharedDecoderCount;
	m->enc_count = a.sharedEncoderCount;
	m->jpg_count = a.sharedJpegCount;
	m->ofa_count = a.sharedOfaCount;
}

/*
 * A MIG device answers the GPU's own getters (name, UUID, memory): the
 * device layer's readers serve both. A failure on a MIG handle says nothing
 * about the GPU's own state, so it does not mark the GPU lost.
 */
static void read_mig(gpu_ctx *c, nvmlDevice_t h, gpu_mig *m)
{
	bool mig_lost = false;
	read_mig_ids(c, h, m);
	gpu_read_text(c->api.nvmlDeviceGetUUID, h, &mig_lost, m->uuid, sizeof m->uuid);
	if (gpu_read_text(c->api.nvmlDeviceGetName, h, &mig_lost, m->name, sizeof m->name))
		mig_profile(m->name, m->profile, sizeof m->profile);
	gpu_memory mem;
	if (gpu_read_mem(c, h, &mig_lost, &mem) == NVML_SUCCESS) {
		m->mem_ok = true;
		m->mem_total_mib = gpu_mib_up(mem.total);
		m->mem_used_mib = gpu_mib_up(mem.used);
		m->mem_free_mib = gpu_mib_up(mem.free);
		m->mem_used_b = mem.used;
		m->mem_free_b = mem.free;
		m->mem_reserved_mib = mem.reserved_ok ? gpu_mib_up(mem.reserved) : 0;
	}
	nvmlBAR1Memory_t b;
	if (c->api.nvmlDeviceGetBAR1MemoryInfo &&
	    c->api.nvmlDeviceGetBAR1MemoryInfo(h, &b) == NVML_SUCCESS) {
		m->bar1_ok = true;
		m->bar1_total_mib = (double)(b.bar1Total / MIB);
		m->bar1_used_mib = (double)(b.bar1Used / MIB);
		m->bar1_free_mib = (double)(b.bar1Free / MIB);
	}
	read_mig_attributes(c, h, m);
}

int gpu_mig_devices(gpu_ctx *c, int i, gpu_mig *out, int max)
{
	gpu_dev *d = &c->dev[i];
	unsigned cur, pend, slots;
	if (gpu_lost(d) || gpu_is_amd(d) || !c->api.nvmlDeviceGetMaxMigDeviceCount ||
	    !c->api.nvmlDeviceGetMigDeviceHandleByIndex ||
	    gpu_read_mig_mode(c, d->h, &cur, &pend) != NVML_SUCCESS || !cur ||
	    c->api.nvmlDeviceGetMaxMigDeviceCount(d->h, &slots) != NVML_SUCCESS)
		return 0;
	int n = 0;
	for (unsigned k = 0; k < slots && n < max; k++) {
		nvmlDevice_t h;
		/* empty slots answer NOT_FOUND; the devices need not be contiguous */
		if (c->api.nvmlDeviceGetMigDeviceHandleByIndex(d->h, k, &h) != NVML_SUCCESS)
			continue;
		memset(&out[n], 0, sizeof out[n]);
		out[n].index = (int)k;
		read_mig(c, h, &out[n]);
		n++;
	}
	return n;
}
