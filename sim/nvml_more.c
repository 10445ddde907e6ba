/*
 * nvml_more.c - the rest of the NVML entry points that clients (nvidia-ml-py,
 * pynvml, nvitop, nvtop) bind, answered from the scenario where it holds the
 * data: brand, P-state, fans, default and boost clocks, PCIe speeds, the
 * supported reason bits, events and P-states, board, peer-to-peer and NVLink
 * facts, and the versioned process lists. Most are another view of what an
 * older entry point already answers, so they call it.
 */
#include <stdlib.h>
#include <string.h>

#include "sim_lib.h"

/* v1 layout: the first 36 bytes of v3, then four reserved words where v3 has busId. */
nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
	nvmlPciInfo_t v3;
	nvmlReturn_t rc = nvmlDeviceGetPciInfo_v3(device, pci ? &v3 : NULL);
	if (rc != NVML_SUCCESS)
		return rc;
	memcpy(pci, &v3, offsetof(nvmlPciInfo_t, busId));
	memset(pci->busId, 0, 16);
	return NVML_SUCCESS;
}

/* The brand follows the marketing name, as nvidia-smi's "Product Brand" does. */
nvmlReturn_t nvmlDeviceGetBrand(nvmlDevice_t device, nvmlBrandType_t *type)
{
	DEV_BEGIN(device, type);
	const char *n = g->name;
	if (strstr(n, "GeForce"))
		*type = NVML_BRAND_GEFORCE;
	else if (strstr(n, "TITAN"))
		*type = NVML_BRAND_TITAN;
	else if (strstr(n, "Tesla"))
		*type = NVML_BRAND_TESLA;
	else if (strstr(n, "Quadro RTX"))
		*type = NVML_BRAND_QUADRO_RTX;
	else if (strstr(n, "Quadro"))
		*type = NVML_BRAND_QUADRO;
	else if (strstr(n, "RTX"))
		*type = NVML_BRAND_NVIDIA_RTX;
	else
		*type = NVML_BRAND_NVIDIA; /* A100, H100, L4, L40S ... */
	return sim_leave(NVML_SUCCESS);
}

/* The deprecated name of nvmlDeviceGetPerformanceState. */
nvmlReturn_t nvmlDeviceGetPowerState(nvmlDevice_t device, nvmlPstates_t *pState)
{
	return nvmlDeviceGetPerformanceState(device, pState);
}

/* A board with a fan in the scenario has one; passively cooled boards say NOT_SUPPORTED. */
nvmlReturn_t nvmlDeviceGetNumFans(nvmlDevice_t device, unsigned int *numFans)
{
	DEV_BEGIN(device, numFans);
	if (!g->has_fan)
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	*numFans = 1;
	return sim_leave(NVML_SUCCESS);
}

/* Fan 0 is the board's fan; any other index names a fan that does not exist. */
static nvmlReturn_t fan_check(nvmlDevice_t device, unsigned fan, const void *out)
{
	DEV_BEGIN(device, out);
	if (!g->has_fan)
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	return sim_leave(fan == 0 ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT);
}

nvmlReturn_t nvmlDeviceGetFanSpeed_v2(nvmlDevice_t device, unsigned int fan, unsigned int *speed)
{
	nvmlReturn_t rc = fan_check(device, fan, speed);
	return rc != NVML_SUCCESS ? rc : nvmlDeviceGetFanSpeed(device, speed);
}

/* The driver's fan control aims at the speed it runs: the simulator has no lag. */
nvmlReturn_t nvmlDeviceGetTargetFanSpeed(nvmlDevice_t device, unsigned int fan,
                                         unsigned int *targetSpeed)
{
	return nvmlDeviceGetFanSpeed_v2(device, fan, targetSpeed);
}

/* The range the driver may run the fan in: from the scenario's idle speed to full. */
nvmlReturn_t nvmlDeviceGetMinMaxFanSpeed(nvmlDevice_t device, unsigned int *minSpeed,
                                         unsigned int *maxSpeed)
{
	DEV_BEGIN(device, minSpeed);
	if (!maxSpeed)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	if (!g->has_fan)
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	*minSpeed = g->fan_idle <= 0 ? 0 : (unsigned)(g->fan_idle + 0.5);
	*maxSpeed = 100;
	return sim_leave(NVML_SUCCESS);
}

/* Application clocks are never changed here, so the defaults are the scenario's. */
nvmlReturn_t nvmlDeviceGetDefaultApplicationsClock(nvmlDevice_t device, nvmlClockType_t clockType,
                                                   unsigned int *clockMHz)
{
	return nvmlDeviceGetClock(device, clockType, NVML_CLOCK_ID_APP_CLOCK_DEFAULT, clockMHz);
}

nvmlReturn_t nvmlDeviceGetMaxCustomerBoostClock(nvmlDevice_t device, nvmlClockType_t clockType,
                                                unsigned int *clockMHz)
{
	return nvmlDeviceGetClock(device, clockType, NVML_CLOCK_ID_CUSTOMER_BOOST_MAX, clockMHz);
}

/* Per-lane transfer rate of a PCIe generation, MT/s (what NVML calls MBPS). */
static unsigned lane_rate(unsigned gen)
{
	static const unsigned rate[] = {0, 2500, 5000, 8000, 16000, 32000, 64000};
	return gen < sizeof rate / sizeof rate[0] ? rate[gen] : 0;
}

nvmlReturn_t nvmlDeviceGetPcieSpeed(nvmlDevice_t device, unsigned int *pcieSpeed)
{
	unsigned gen;
	nvmlReturn_t rc = nvmlDeviceGetCurrPcieLinkGeneration(device, pcieSpeed ? &gen : NULL);
	if (rc == NVML_SUCCESS)
		*pcieSpeed = lane_rate(gen);
	return rc;
}

nvmlReturn_t nvmlDeviceGetPcieLinkMaxSpeed(nvmlDevice_t device, unsigned int *maxSpeed)
{
	unsigned gen;
	nvmlReturn_t rc = nvmlDeviceGetMaxPcieLinkGeneration(device, maxSpeed ? &gen : NULL);
	if (rc == NVML_SUCCESS)
		*maxSpeed = lane_rate(gen);
	return rc;
}

/* The deprecated name of nvmlDeviceGetSupportedClocksEventReasons. */
nvmlReturn_t nvmlDeviceGetSupportedClocksThrottleReasons(nvmlDevice_t device,
                                                         unsigned long long *supportedReasons)
{
	return nvmlDeviceGetSupportedClocksEventReasons(device, supportedReasons);
}

/* The events the simulator delivers: Xid always, ECC errors where the GPU has ECC. */
nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t device, unsigned long long *eventTypes)
{
	DEV_BEGIN(device, eventTypes);
	*eventTypes = nvmlEventTypeXidCriticalError;
	if (g->has_ecc)
		*eventTypes |= nvmlEventTypeSingleBitEccError | nvmlEventTypeDoubleBitEccError;
	return sim_leave(NVML_SUCCESS);
}

/* The P-states the GPU moves between (busy, then idle), the rest of the array unknown. */
nvmlReturn_t nvmlDeviceGetSupportedPerformanceStates(nvmlDevice_t device, nvmlPstates_t *pstates,
                                                     unsigned int size)
{
	DEV_BEGIN(device, pstates);
	unsigned n = g->busy_pstate == g->idle_pstate ? 1 : 2;
	if (size < n)
		return sim_leave(NVML_ERROR_INSUFFICIENT_SIZE);
	for (unsigned i = 0; i < size; i++)
		pstates[i] = NVML_PSTATE_UNKNOWN;
	pstates[0] = g->busy_pstate;
	if (n == 2)
		pstates[1] = g->idle_pstate;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlDeviceGetPowerSource(nvmlDevice_t device, nvmlPowerSource_t *powerSource)
{
	DEV_BEGIN(device, powerSource);
	*powerSource = NVML_POWER_SOURCE_AC;
	return sim_leave(NVML_SUCCESS);
}

/* Every simulated GPU reports its power draw and enforces a limit. */
nvmlReturn_t nvmlDeviceGetPowerManagementMode(nvmlDevice_t device, nvmlEnableState_t *mode)
{
	DEV_BEGIN(device, mode);
	*mode = NVML_FEATURE_ENABLED;
	return sim_leave(NVML_SUCCESS);
}

/* ECC mode is never changed here, so the default is the current one. */
nvmlReturn_t nvmlDeviceGetDefaultEccMode(nvmlDevice_t device, nvmlEnableState_t *defaultMode)
{
	nvmlEnableState_t pending;
	return nvmlDeviceGetEccMode(device, defaultMode, defaultMode ? &pending : NULL);
}

/* One GPU per board. */
nvmlReturn_t nvmlDeviceGetMultiGpuBoard(nvmlDevice_t device, unsigned int *multiGpuBool)
{
	DEV_BEGIN(device, multiGpuBool);
	*multiGpuBool = 0;
	return sim_leave(NVML_SUCCESS);
}

/* Unique per board, as the driver's is: derived from where the board sits on PCIe. */
nvmlReturn_t nvmlDeviceGetBoardId(nvmlDevice_t device, unsigned int *boardId)
{
	DEV_BEGIN(device, boardId);
	*boardId = g->pci.domain << 16 | g->pci.bus << 8 | g->pci.device;
	return sim_leave(NVML_SUCCESS);
}

/* Distinct GPUs are distinct boards. */
nvmlReturn_t nvmlDeviceOnSameBoard(nvmlDevice_t device1, nvmlDevice_t device2, int *onSameBoard)
{
	DEV_BEGIN(device1, onSameBoard);
	if (!sim_valid_device(device2))
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	*onSameBoard = device1 == device2;
	return sim_leave(NVML_SUCCESS);
}

/* The GPUs whose common ancestor with device is at most level, device itself left out. */
nvmlReturn_t nvmlDeviceGetTopologyNearestGpus(nvmlDevice_t device, nvmlGpuTopologyLevel_t level,
                                              unsigned int *count, nvmlDevice_t *deviceArray)
{
	unsigned n_gpus = 0;
	nvmlReturn_t rc = nvmlDeviceGetCount_v2(&n_gpus);
	if (rc != NVML_SUCCESS)
		return rc;
	if (!sim_valid_device(device) || !count)
		return NVML_ERROR_INVALID_ARGUMENT;
	unsigned n = 0;
	for (unsigned i = 0; i < n_gpus; i++) {
		nvmlDevice_t h;
		nvmlGpuTopologyLevel_t l;
		if (nvmlDeviceGetHandleByIndex_v2(i, &h) != NVML_SUCCESS || h == device)
			continue;
		rc = nvmlDeviceGetTopologyCommonAncestor(device, h, &l);
		if (rc == NVML_ERROR_GPU_IS_LOST)
			continue; /* a lost peer is not listed; device lost is said below */
		if (rc != NVML_SUCCESS)
			return rc;
		if (l <= level) {
			if (deviceArray && n < *count)
				deviceArray[n] = h;
			n++;
		}
	}
	nvmlDeviceArchitecture_t arch;
	rc = nvmlDeviceGetArchitecture(device, &arch); /* GPU_IS_LOST when device is */
	if (rc != NVML_SUCCESS)
		return rc;
	bool fits = deviceArray && n <= *count;
	*count = n;
	return fits || n == 0 ? NVML_SUCCESS : NVML_ERROR_INSUFFICIENT_SIZE;
}

/* NVLink between two GPUs: a direct link, or both on NVSwitches. */
static bool nvlinked(const sim_gpu *a, int b_index, const sim_gpu *b)
{
	bool a_sw = false, b_sw = false;
	for (int i = 0; i < a->n_links; i++) {
		if (a->links[i].up && a->links[i].remote_gpu == b_index)
			return true;
		a_sw |= a->links[i].up && a->links[i].remote_type == SIM_LINK_REMOTE_SWITCH;
	}
	for (int i = 0; i < b->n_links; i++)
		b_sw |= b->links[i].up && b->links[i].remote_type == SIM_LINK_REMOTE_SWITCH;
	return a_sw && b_sw;
}

/*
 * Peer-to-peer between two GPUs: over NVLink where they are linked; reads,
 * writes and atomics over PCIe where they share a host bridge (the driver
 * refuses P2P across the CPU's interconnect).
 */
nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t device1, nvmlDevice_t device2,
                                    nvmlGpuP2PCapsIndex_t p2pIndex, nvmlGpuP2PStatus_t *p2pStatus)
{
	nvmlGpuTopologyLevel_t l;
	nvmlReturn_t rc =
	    nvmlDeviceGetTopologyCommonAncestor(device1, device2, p2pStatus ? &l : NULL);
	if (rc != NVML_SUCCESS)
		return rc;
	if (p2pIndex < 0 || p2pIndex > 5)
		return NVML_ERROR_INVALID_ARGUMENT;
	const struct nvmlDevice_st *a = device1, *b = device2;
	bool ok;
	if (p2pIndex == NVML_P2P_CAPS_INDEX_NVLINK)
		ok = a != b && nvlinked(a->g, b->index, b->g);
	else
		ok = l <= NVML_TOPOLOGY_HOSTBRIDGE;
	*p2pStatus = ok ? NVML_P2P_STATUS_OK : NVML_P2P_STATUS_NOT_SUPPORTED;
	return NVML_SUCCESS;
}

/* The NVLink generation of the GPU's architecture. */
nvmlReturn_t nvmlDeviceGetNvLinkVersion(nvmlDevice_t device, unsigned int link,
                                        unsigned int *version)
{
	nvmlEnableState_t up;
	nvmlReturn_t rc = nvmlDeviceGetNvLinkState(device, link, version ? &up : NULL);
	if (rc != NVML_SUCCESS)
		return rc;
	const struct nvmlDevice_st *d = device;
	switch (d->g->arch) {
	case NVML_DEVICE_ARCH_VOLTA:
		*version = NVML_NVLINK_VERSION_2_0;
		break;
	case NVML_DEVICE_ARCH_AMPERE:
		*version = NVML_NVLINK_VERSION_3_0;
		break;
	case NVML_DEVICE_ARCH_HOPPER:
		*version = NVML_NVLINK_VERSION_4_0;
		break;
	default:
		*version = d->g->arch > NVML_DEVICE_ARCH_HOPPER ? NVML_NVLINK_VERSION_5_0 : 0;
	}
	return NVML_SUCCESS;
}

typedef nvmlReturn_t (*proc_list_fn)(nvmlDevice_t, unsigned *, nvmlProcessInfo_t *);

/* The versioned process list: the same processes as _v3, in the 32-byte entry. */
nvmlReturn_t nvmlDeviceGetRunningProcessDetailList(nvmlDevice_t device,
                                                   nvmlProcessDetailList_t *plist)
{
	if (!plist)
		return nvmlDeviceGetComputeRunningProcesses_v3(device, NULL, NULL);
	if (plist->version != nvmlProcessDetailList_v1)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	static const proc_list_fn by_mode[] = {nvmlDeviceGetComputeRunningProcesses_v3,
	                                       nvmlDeviceGetGraphicsRunningProcesses_v3,
	                                       nvmlDeviceGetMPSComputeRunningProcesses_v3};
	if (plist->mode > NVML_PROCESS_MODE_MPS)
		return NVML_ERROR_INVALID_ARGUMENT;
	unsigned n = 0;
	nvmlReturn_t rc = by_mode[plist->mode](device, &n, NULL);
	if (rc != NVML_SUCCESS && rc != NVML_ERROR_INSUFFICIENT_SIZE)
		return rc;
	if (n > plist->numProcArrayEntries || (n && !plist->procArray)) {
		plist->numProcArrayEntries = n;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	nvmlProcessInfo_t *v3 = calloc(n ? n : 1, sizeof *v3);
	if (!v3)
		return NVML_ERROR_MEMORY;
	rc = n ? by_mode[plist->mode](device, &n, v3) : NVML_SUCCESS;
	for (unsigned i = 0; rc == NVML_SUCCESS && i < n && i < plist->numProcArrayEntries; i++)
		plist->procArray[i] = (nvmlProcessDetail_v1_t){
		    .pid = v3[i].pid,
		    .usedGpuMemory = v3[i].usedGpuMemory,
		    .gpuInstanceId = v3[i].gpuInstanceId,
		    .computeInstanceId = v3[i].computeInstanceId,
		};
	if (rc == NVML_SUCCESS)
		plist->numProcArrayEntries = n;
	free(v3);
	return rc;
}

/* The versioned per-process utilization: the same samples, JPEG and OFA at 0. */
nvmlReturn_t nvmlDeviceGetProcessesUtilizationInfo(nvmlDevice_t device,
                                                   nvmlProcessesUtilizationInfo_t *procesesUtilInfo)
{
	nvmlProcessesUtilizationInfo_t *u = procesesUtilInfo;
	if (!u)
		return nvmlDeviceGetProcessUtilization(device, NULL, NULL, 0);
	if (u->version != nvmlProcessesUtilizationInfo_v1)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	unsigned n = 0;
	nvmlReturn_t rc = nvmlDeviceGetProcessUtilization(device, NULL, &n, u->lastSeenTimeStamp);
	if (rc != NVML_ERROR_INSUFFICIENT_SIZE && rc != NVML_SUCCESS)
		return rc;
	if (!u->procUtilArray || u->processSamplesCount < n) {
		u->processSamplesCount = n;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	nvmlProcessUtilizationSample_t *s = calloc(n ? n : 1, sizeof *s);
	if (!s)
		return NVML_ERROR_MEMORY;
	rc = nvmlDeviceGetProcessUtilization(device, s, &n, u->lastSeenTimeStamp);
	for (unsigned i = 0; rc == NVML_SUCCESS && i < n && i < u->processSamplesCount; i++)
		u->procUtilArray[i] = (nvmlProcessUtilizationInfo_v1_t){
		    .timeStamp = s[i].timeStamp,
		    .pid = s[i].pid,
		    .smUtil = s[i].smUtil,
		    .memUtil = s[i].memUtil,
		    .encUtil = s[i].encUtil,
		    .decUtil = s[i].decUtil,
		};
	if (rc == NVML_SUCCESS)
		u->processSamplesCount = n;
	free(s);
	return rc;
}

/* The simulator's CPUs of a GPU are those of its NUMA node, so both scopes agree. */
nvmlReturn_t nvmlDeviceGetCpuAffinityWithinScope(nvmlDevice_t device, unsigned int cpuSetSize,
                                                 unsigned long *cpuSet, nvmlAffinityScope_t scope)
{
	if (scope > NVML_AFFINITY_SCOPE_SOCKET)
		return NVML_ERROR_INVALID_ARGUMENT;
	return nvmlDeviceGetCpuAffinity(device, cpuSetSize, cpuSet);
}

/* The GPU's NUMA node as a node mask. */
nvmlReturn_t nvmlDeviceGetMemoryAffinity(nvmlDevice_t device, unsigned int nodeSetSize,
                                         unsigned long *nodeSet, nvmlAffinityScope_t scope)
{
	DEV_BEGIN(device, nodeSet);
	if (nodeSetSize == 0 || scope > NVML_AFFINITY_SCOPE_SOCKET)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	if (g->numa_node < 0)
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	unsigned bits = 8 * sizeof(unsigned long), node = (unsigned)g->numa_node;
	for (unsigned i = 0; i < nodeSetSize; i++)
		nodeSet[i] = i == node / bits ? 1UL << (node % bits) : 0;
	return sim_leave(NVML_SUCCESS);
}

/* The memory interface's width in bits, where the scenario gives it (memory.bus_width). */
nvmlReturn_t nvmlDeviceGetMemoryBusWidth(nvmlDevice_t device, unsigned int *busWidth)
{
	DEV_BEGIN(device, busWidth);
	if (!g->mem_bus_width)
		return sim_leave(NVML_ERROR_NOT_SUPPORTED);
	*busWidth = g->mem_bus_width;
	return sim_leave(NVML_SUCCESS);
}

/* Units (S-class enclosures) and excluded GPUs: a simulated machine has none. */
static nvmlReturn_t none_here(unsigned int *count)
{
	sim_time now;
	nvmlReturn_t rc = sim_enter(&now);
	if (rc != NVML_SUCCESS)
		return rc;
	if (!count)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	*count = 0;
	return sim_leave(NVML_SUCCESS);
}

nvmlReturn_t nvmlUnitGetCount(unsigned int *unitCount)
{
	return none_here(unitCount);
}

nvmlReturn_t nvmlGetExcludedDeviceCount(unsigned int *deviceCount)
{
	return none_here(deviceCount);
}

/* No board carries a hardware bridge chip (HIC): none to list. */
nvmlReturn_t nvmlSystemGetHicVersion(unsigned int *hwbcCount, nvmlHwbcEntry_t *hwbcEntries)
{
	(void)hwbcEntries;
	return none_here(hwbcCount);
}

/* GPM streaming (the driver sampling on its own) is off: samples are taken on request. */
nvmlReturn_t nvmlGpmQueryIfStreamingEnabled(nvmlDevice_t device, unsigned int *state)
{
	nvmlGpmSupport_t sup = {.version = NVML_GPM_SUPPORT_VERSION};
	nvmlReturn_t rc = nvmlGpmQueryDeviceSupport(device, state ? &sup : NULL);
	if (rc != NVML_SUCCESS)
		return rc;
	if (!sup.isSupportedDevice)
		return NVML_ERROR_NOT_SUPPORTED;
	*state = 0;
	return NVML_SUCCESS;
}
