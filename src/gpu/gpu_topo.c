/*
 * gpu_topo.c - how the selected GPUs connect: topology levels, NVLink states
 * and counts, AMD GPUs' XGMI hives.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gpu/gpu_int.h"

int gpu_topology_level(gpu_ctx *c, int i, int j)
{
	if (i == j)
		return NVML_TOPOLOGY_INTERNAL;
	gpu_dev *a = &c->dev[i], *b = &c->dev[j];
	nvmlGpuTopologyLevel_t lvl;
	if (gpu_lost(a) || gpu_lost(b))
		return -1;
	/*
	 * Two AMD GPUs: their PCIe relation from sysfs, as NVML's levels are
	 * defined (XGMI, like NVLink for NVML, is not a level: gpu_xgmi_linked).
	 * An AMD GPU beside an NVIDIA one: unknown.
	 */
	if (gpu_is_amd(a) || gpu_is_amd(b))
		return gpu_is_amd(a) && gpu_is_amd(b)
		           ? amdgpu_topo_level(c->amd.sys_root, a->amd, b->amd)
		           : -1;
	if (!c->api.nvmlDeviceGetTopologyCommonAncestor)
		return -1;
	if (c->api.nvmlDeviceGetTopologyCommonAncestor(a->h, b->h, &lvl) != NVML_SUCCESS)
		return -1;
	return lvl;
}

int gpu_xgmi_linked(gpu_ctx *c, int i, int j)
{
	gpu_dev *a = &c->dev[i], *b = &c->dev[j];
	if (i == j || !gpu_is_amd(a) || !gpu_is_amd(b))
		return 0;
	if (gpu_lost(a) || gpu_lost(b))
		return -1;
	return amdgpu_xgmi_linked(a->amd, b->amd) ? 1 : 0;
}

int gpu_xgmi_pair(gpu_ctx *c, int i, int j)
{
	if (i == j || !gpu_is_amd(&c->dev[i]) || !gpu_is_amd(&c->dev[j]))
		return -1;
	return gpu_xgmi_linked(c, i, j);
}

/* "00000000:3B:00.0" and "0000:3b:00.0" name the same device. */
static bool same_bus_id(const char *x, const char *y)
{
	const char *cx = strchr(x, ':'), *cy = strchr(y, ':');
	if (!cx || !cy)
		return strcasecmp(x, y) == 0;
	unsigned long dx = strtoul(x, NULL, 16), dy = strtoul(y, NULL, 16);
	return dx == dy && strcasecmp(cx, cy) == 0;
}

int gpu_nvlink_states(gpu_ctx *c, int i, int *states, int max)
{
	gpu_dev *d = &c->dev[i];
	if (gpu_lost(d) || gpu_is_amd(d) || !c->api.nvmlDeviceGetNvLinkState)
		return 0;
	int n = 0;
	/* The link count differs by driver (18 or 36): ask until the driver says no. */
	for (unsigned l = 0; l < GPU_NVLINK_MAX && (int)l < max; l++) {
		nvmlEnableState_t st;
		nvmlReturn_t rc = c->api.nvmlDeviceGetNvLinkState(d->h, l, &st);
		if (rc != NVML_SUCCESS)
			break;
		states[n++] = st == NVML_FEATURE_ENABLED;
	}
	return n;
}

/* Active links of GPU i that end at an NVSwitch (-1: unknown). */
static int switch_links(gpu_ctx *c, int i, const int *states, int nl)
{
	gpu_dev *d = &c->dev[i];
	if (!c->api.nvmlDeviceGetNvLinkRemoteDeviceType)
		return -1;
	int n = 0;
	for (int l = 0; l < nl; l++) {
		nvmlIntNvLinkDeviceType_t t;
		if (states[l] &&
		    c->api.nvmlDeviceGetNvLinkRemoteDeviceType(d->h, (unsigned)l, &t) ==
		        NVML_SUCCESS &&
		    t == NVML_NVLINK_DEVICE_TYPE_SWITCH)
			n++;
	}
	return n;
}

/*
 * Links from i that reach j: direct links whose far end is j, plus, on
 * NVSwitch systems (HGX), every switch link of i when j hangs off the same
 * fabric, which is how nvidia-smi arrives at NV18 between every pair.
 */
int gpu_nvlink_count(gpu_ctx *c, int i, int j)
{
	gpu_dev *d = &c->dev[i];
	if (i == j || gpu_lost(d) || gpu_lost(&c->dev[j]))
		return 0;
	if (gpu_is_amd(d) || gpu_is_amd(&c->dev[j]))
		return -1;
	if (!c->api.nvmlDeviceGetNvLinkState || !c->api.nvmlDeviceGetNvLinkRemotePciInfo_v2)
		return -1;
	int states[GPU_NVLINK_MAX];
	int nl = gpu_nvlink_states(c, i, states, GPU_NVLINK_MAX);
	int cnt = 0;
	for (int l = 0; l < nl; l++) {
		if (!states[l])
			continue;
		nvmlPciInfo_t pci;
		memset(&pci, 0, sizeof pci);
		if (c->api.nvmlDeviceGetNvLinkRemotePciInfo_v2(d->h, (unsigned)l, &pci) ==
		        NVML_SUCCESS &&
		    same_bus_id(pci.busId, c->dev[j].st.pci_bus_id))
			cnt++;
	}
	int si = switch_links(c, i, states, nl);
	if (si > 0) {
		int sj_states[GPU_NVLINK_MAX];
		int nj = gpu_nvlink_states(c, j, sj_states, GPU_NVLINK_MAX);
		if (switch_links(c, j, sj_states, nj) > 0)
			cnt += si;
	}
	return cnt;
}
