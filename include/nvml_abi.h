/*
 * nvml_abi.h - gpuwhy's own declarations of the NVML subset it uses.
 *
 * No nvml.h is needed at build time. Values, struct layouts and symbol names
 * are facts taken from NVIDIA's public nvml.h, "NVML VERSION: 13.3.29"
 * (NVML_API_VERSION 13), checked on x86-64. Every struct carries
 * _Static_assert on its size and field offsets so an ABI slip fails the build.
 *
 * Shared by the device layer (src/gpu/, which dlopen()s the library) and the
 * simulated GPU (sim/, which implements these entry points).
 */
#ifndef GPUWHY_NVML_ABI_H
#define GPUWHY_NVML_ABI_H

#include <stddef.h>
#include <stdint.h>

typedef int nvmlReturn_t;
enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_NO_PERMISSION = 4,
	NVML_ERROR_ALREADY_INITIALIZED = 5,
	NVML_ERROR_NOT_FOUND = 6,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_INSUFFICIENT_POWER = 8,
	NVML_ERROR_DRIVER_NOT_LOADED = 9,
	NVML_ERROR_TIMEOUT = 10,
	NVML_ERROR_IRQ_ISSUE = 11,
	NVML_ERROR_LIBRARY_NOT_FOUND = 12,
	NVML_ERROR_FUNCTION_NOT_FOUND = 13,
	NVML_ERROR_CORRUPTED_INFOROM = 14,
	NVML_ERROR_GPU_IS_LOST = 15,
	NVML_ERROR_RESET_REQUIRED = 16,
	NVML_ERROR_OPERATING_SYSTEM = 17,
	NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
	NVML_ERROR_IN_USE = 19,
	NVML_ERROR_MEMORY = 20,
	NVML_ERROR_NO_DATA = 21,
	NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22,
	NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
	NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
	NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
	NVML_ERROR_DEPRECATED = 26,
	NVML_ERROR_NOT_READY = 27,
	NVML_ERROR_GPU_NOT_FOUND = 28,
	NVML_ERROR_INVALID_STATE = 29,
	NVML_ERROR_RESET_TYPE_NOT_SUPPORTED = 30,
	NVML_ERROR_UNKNOWN = 999,
};

typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlEventSet_st *nvmlEventSet_t;
typedef struct nvmlGpmSample_st *nvmlGpmSample_t;
typedef int nvmlEnableState_t; /* NVML_FEATURE_DISABLED 0, ENABLED 1 */
enum { NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1 };

/* Buffer sizes. */
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE 80
#define NVML_DEVICE_NAME_BUFFER_SIZE 64
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_UUID_BUFFER_SIZE 80
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_DEVICE_SERIAL_BUFFER_SIZE 30
#define NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16
#define NVML_VALUE_NOT_AVAILABLE (~0ULL)
#define NVML_STRUCT_VERSION(size, ver) ((unsigned)(size) | ((unsigned)(ver) << 24U))

/* nvmlPciInfo_t (v3 layout), 68 bytes, 4-byte aligned. */
typedef struct {
	char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
	unsigned int domain;
	unsigned int bus;
	unsigned int device;
	unsigned int pciDeviceId;
	unsigned int pciSubSystemId;
	char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;
_Static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t size");
_Static_assert(offsetof(nvmlPciInfo_t, domain) == 16, "nvmlPciInfo_t.domain");
_Static_assert(offsetof(nvmlPciInfo_t, busId) == 36, "nvmlPciInfo_t.busId");

typedef struct {
	unsigned int gpu;
	unsigned int memory;
} nvmlUtilization_t;
_Static_assert(sizeof(nvmlUtilization_t) == 8, "nvmlUtilization_t size");

/* v1: used includes reserved. */
typedef struct {
	unsigned long long total;
	unsigned long long free;
	unsigned long long used;
} nvmlMemory_t;
_Static_assert(sizeof(nvmlMemory_t) == 24, "nvmlMemory_t size");

/* v2: used excludes reserved. version = nvmlMemory_v2 (0x02000028). */
typedef struct {
	unsigned int version;
	unsigned long long total;
	unsigned long long reserved;
	unsigned long long free;
	unsigned long long used;
} nvmlMemory_v2_t;
_Static_assert(sizeof(nvmlMemory_v2_t) == 40, "nvmlMemory_v2_t size");
_Static_assert(offsetof(nvmlMemory_v2_t, total) == 8, "nvmlMemory_v2_t.total");
_Static_assert(offsetof(nvmlMemory_v2_t, used) == 32, "nvmlMemory_v2_t.used");
#define nvmlMemory_v2 NVML_STRUCT_VERSION(sizeof(nvmlMemory_v2_t), 2)

typedef struct {
	unsigned long long bar1Total;
	unsigned long long bar1Free;
	unsigned long long bar1Used;
} nvmlBAR1Memory_t;
_Static_assert(sizeof(nvmlBAR1Memory_t) == 24, "nvmlBAR1Memory_t size");

/* Used by the unsuffixed nvmlDeviceGetComputeRunningProcesses. */
typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;
_Static_assert(sizeof(nvmlProcessInfo_v1_t) == 16, "nvmlProcessInfo_v1_t size");

/* Used by _v2 and _v3. MIG ids are 0xFFFFFFFF when MIG is off. */
typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
} nvmlProcessInfo_t;
_Static_assert(sizeof(nvmlProcessInfo_t) == 24, "nvmlProcessInfo_t size");
_Static_assert(offsetof(nvmlProcessInfo_t, usedGpuMemory) == 8, "nvmlProcessInfo_t.mem");
_Static_assert(offsetof(nvmlProcessInfo_t, gpuInstanceId) == 16, "nvmlProcessInfo_t.gi");

/*
 * Drivers 535.43.02 - 535.8x wrote this 32-byte layout through _v3
 * (usedGpuCcProtectedMemory appended). The device layer probes for it.
 */
typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
	unsigned long long usedGpuCcProtectedMemory;
} nvmlProcessInfo_535_t;
_Static_assert(sizeof(nvmlProcessInfo_535_t) == 32, "nvmlProcessInfo_535_t size");

/* nvmlDeviceGetTemperatureV's argument; version = nvmlTemperature_v1. */
typedef struct {
	unsigned int version;
	int sensorType; /* nvmlTemperatureSensors_t */
	int temperature;
} nvmlTemperature_t;
_Static_assert(sizeof(nvmlTemperature_t) == 12, "nvmlTemperature_t size");
_Static_assert(offsetof(nvmlTemperature_t, temperature) == 8, "nvmlTemperature_t.temperature");
#define nvmlTemperature_v1 NVML_STRUCT_VERSION(sizeof(nvmlTemperature_t), 1)

/* Confidential Computing split of the framebuffer, in KiB. */
typedef struct {
	unsigned long long protectedMemSizeKib;
	unsigned long long unprotectedMemSizeKib;
} nvmlConfComputeMemSizeInfo_t;
_Static_assert(sizeof(nvmlConfComputeMemSizeInfo_t) == 16, "nvmlConfComputeMemSizeInfo_t size");

/* Windows driver models; the query is NOT_SUPPORTED on Linux. */
typedef int nvmlDriverModel_t;
enum { NVML_DRIVER_WDDM = 0, NVML_DRIVER_WDM = 1, NVML_DRIVER_MCDM = 2 };

/*
 * Entry points gpuwhy itself does not call but other NVML programs (nvtop,
 * nvitop, gpustat, pynvml, nvidia-ml-py) look up: the simulator defines each,
 * so those programs run unchanged on it. Same X(return, symbol, (parameters)).
 */
#define NVML_PEER_ENTRY_POINTS(X)                                                                  \
	X(nvmlReturn_t, nvmlDeviceGetDriverModel_v2,                                               \
	  (nvmlDevice_t device, nvmlDriverModel_t * current, nvmlDriverModel_t * pending))         \
	X(nvmlReturn_t, nvmlDeviceGetDriverModel,                                                  \
	  (nvmlDevice_t device, nvmlDriverModel_t * current, nvmlDriverModel_t * pending))         \
	X(nvmlReturn_t, nvmlDeviceGetConfComputeMemSizeInfo,                                       \
	  (nvmlDevice_t device, nvmlConfComputeMemSizeInfo_t * memInfo))                           \
	X(nvmlReturn_t, nvmlDeviceGetTemperatureV,                                                 \
	  (nvmlDevice_t device, nvmlTemperature_t * temperature))                                  \
	X(nvmlReturn_t, nvmlDeviceGetGraphicsRunningProcesses_v2,                                  \
	  (nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_t *infos))                \
	X(nvmlReturn_t, nvmlDeviceGetGraphicsRunningProcesses,                                     \
	  (nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_v1_t *infos))             \
	X(nvmlReturn_t, nvmlDeviceGetMPSComputeRunningProcesses_v3,                                \
	  (nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_t *infos))                \
	X(nvmlReturn_t, nvmlDeviceGetMPSComputeRunningProcesses_v2,                                \
	  (nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_t *infos))                \
	X(nvmlReturn_t, nvmlDeviceGetMPSComputeRunningProcesses,                                   \
	  (nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_v1_t *infos))

typedef struct {
	unsigned int pid;
	unsigned long long timeStamp;
	unsigned int smUtil;
	unsigned int memUtil;
	unsigned int encUtil;
	unsigned int decUtil;
} nvmlProcessUtilizationSample_t;
_Static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32, "procutil size");
_Static_assert(offsetof(nvmlProcessUtilizationSample_t, smUtil) == 16, "procutil.smUtil");

typedef int nvmlValueType_t;
enum {
	NVML_VALUE_TYPE_DOUBLE = 0,
	NVML_VALUE_TYPE_UNSIGNED_INT = 1,
	NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
	NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
	NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4,
	NVML_VALUE_TYPE_SIGNED_INT = 5,
	NVML_VALUE_TYPE_UNSIGNED_SHORT = 6,
};

typedef union {
	double dVal;
	int siVal;
	unsigned int uiVal;
	unsigned long ulVal;
	unsigned long long ullVal;
	signed long long sllVal;
	unsigned short usVal;
} nvmlValue_t;
_Static_assert(sizeof(nvmlValue_t) == 8, "nvmlValue_t size");

typedef struct {
	unsigned long long timeStamp; /* microseconds */
	nvmlValue_t sampleValue;
} nvmlSample_t;
_Static_assert(sizeof(nvmlSample_t) == 16, "nvmlSample_t size");

typedef int nvmlSamplingType_t;
enum {
	NVML_TOTAL_POWER_SAMPLES = 0,
	NVML_GPU_UTILIZATION_SAMPLES = 1,
	NVML_MEMORY_UTILIZATION_SAMPLES = 2,
	NVML_ENC_UTILIZATION_SAMPLES = 3,
	NVML_DEC_UTILIZATION_SAMPLES = 4,
	NVML_PROCESSOR_CLK_SAMPLES = 5,
	NVML_MEMORY_CLK_SAMPLES = 6,
	NVML_MODULE_POWER_SAMPLES = 7,
};

typedef int nvmlPcieUtilCounter_t;
enum { NVML_PCIE_UTIL_TX_BYTES = 0, NVML_PCIE_UTIL_RX_BYTES = 1 };

typedef int nvmlGpuTopologyLevel_t;
enum {
	NVML_TOPOLOGY_INTERNAL = 0,
	NVML_TOPOLOGY_SINGLE = 10,
	NVML_TOPOLOGY_MULTIPLE = 20,
	NVML_TOPOLOGY_HOSTBRIDGE = 30,
	NVML_TOPOLOGY_NODE = 40,
	NVML_TOPOLOGY_SYSTEM = 50,
};

typedef int nvmlClockType_t;
enum { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_CLOCK_VIDEO = 3 };

typedef int nvmlClockId_t;
enum {
	NVML_CLOCK_ID_CURRENT = 0,
	NVML_CLOCK_ID_APP_CLOCK_TARGET = 1,
	NVML_CLOCK_ID_APP_CLOCK_DEFAULT = 2,
	NVML_CLOCK_ID_CUSTOMER_BOOST_MAX = 3,
};

typedef int nvmlTemperatureSensors_t;
enum { NVML_TEMPERATURE_GPU = 0 };

typedef int nvmlTemperatureThresholds_t;
enum {
	NVML_TEMPERATURE_THRESHOLD_SHUTDOWN = 0,
	NVML_TEMPERATURE_THRESHOLD_SLOWDOWN = 1,
	NVML_TEMPERATURE_THRESHOLD_MEM_MAX = 2,
	NVML_TEMPERATURE_THRESHOLD_GPU_MAX = 3,
};

typedef int nvmlPstates_t; /* 0..15 = P0..P15, 32 = unknown */
enum { NVML_PSTATE_UNKNOWN = 32 };

typedef int nvmlComputeMode_t;
enum {
	NVML_COMPUTEMODE_DEFAULT = 0,
	NVML_COMPUTEMODE_EXCLUSIVE_THREAD = 1,
	NVML_COMPUTEMODE_PROHIBITED = 2,
	NVML_COMPUTEMODE_EXCLUSIVE_PROCESS = 3,
};

typedef int nvmlMemoryErrorType_t;
enum { NVML_MEMORY_ERROR_TYPE_CORRECTED = 0, NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1 };
typedef int nvmlEccCounterType_t;
enum { NVML_VOLATILE_ECC = 0, NVML_AGGREGATE_ECC = 1 };

typedef int nvmlPageRetirementCause_t;
enum {
	NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0,
	NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 1,
};

typedef unsigned int nvmlDeviceArchitecture_t;
enum {
	NVML_DEVICE_ARCH_KEPLER = 2,
	NVML_DEVICE_ARCH_MAXWELL = 3,
	NVML_DEVICE_ARCH_PASCAL = 4,
	NVML_DEVICE_ARCH_VOLTA = 5,
	NVML_DEVICE_ARCH_TURING = 6,
	NVML_DEVICE_ARCH_AMPERE = 7,
	NVML_DEVICE_ARCH_ADA = 8,
	NVML_DEVICE_ARCH_HOPPER = 9,
	NVML_DEVICE_ARCH_BLACKWELL = 10,
};

/* Clock event (throttle) reason bits. */
#define nvmlClocksEventReasonGpuIdle 0x1ULL
#define nvmlClocksEventReasonApplicationsClocksSetting 0x2ULL
#define nvmlClocksEventReasonSwPowerCap 0x4ULL
#define nvmlClocksThrottleReasonHwSlowdown 0x8ULL
#define nvmlClocksEventReasonSyncBoost 0x10ULL
#define nvmlClocksEventReasonSwThermalSlowdown 0x20ULL
#define nvmlClocksThrottleReasonHwThermalSlowdown 0x40ULL
#define nvmlClocksThrottleReasonHwPowerBrakeSlowdown 0x80ULL
#define nvmlClocksEventReasonDisplayClockSetting 0x100ULL

/* Events. */
#define nvmlEventTypeXidCriticalError 0x8ULL
typedef struct {
	nvmlDevice_t device;
	unsigned long long eventType;
	unsigned long long eventData;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
} nvmlEventData_t;
_Static_assert(sizeof(nvmlEventData_t) == 32, "nvmlEventData_t size");

/* Field values. */
typedef struct {
	unsigned int fieldId;
	unsigned int scopeId;
	long long timestamp;
	long long latencyUsec;
	nvmlValueType_t valueType;
	nvmlReturn_t nvmlReturn;
	nvmlValue_t value;
} nvmlFieldValue_t;
_Static_assert(sizeof(nvmlFieldValue_t) == 40, "nvmlFieldValue_t size");
_Static_assert(offsetof(nvmlFieldValue_t, valueType) == 24, "nvmlFieldValue_t.valueType");
_Static_assert(offsetof(nvmlFieldValue_t, value) == 32, "nvmlFieldValue_t.value");

enum {
	NVML_FI_DEV_ECC_SBE_VOL_TOTAL = 3,
	NVML_FI_DEV_ECC_DBE_VOL_TOTAL = 4,
	NVML_FI_DEV_ECC_SBE_AGG_TOTAL = 5,
	NVML_FI_DEV_ECC_DBE_AGG_TOTAL = 6,
	NVML_FI_DEV_MEMORY_TEMP = 82,
	NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION = 83,
	NVML_FI_DEV_NVLINK_LINK_COUNT = 91,
	NVML_FI_DEV_PCIE_REPLAY_COUNTER = 94,
	NVML_FI_DEV_PCIE_REPLAY_ROLLOVER_COUNTER = 95,
	NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX = 138,
	NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX = 139,
	NVML_FI_DEV_REMAPPED_COR = 142,
	NVML_FI_DEV_REMAPPED_UNC = 143,
	NVML_FI_DEV_REMAPPED_PENDING = 144,
	NVML_FI_DEV_REMAPPED_FAILURE = 145,
	NVML_FI_DEV_PCIE_L0_TO_RECOVERY_COUNTER = 169,
	NVML_FI_DEV_PCIE_COUNT_CORRECTABLE_ERRORS = 173,
	NVML_FI_DEV_PCIE_COUNT_NAKS_RECEIVED = 174,
	NVML_FI_DEV_PCIE_COUNT_RECEIVER_ERROR = 175,
	NVML_FI_DEV_PCIE_COUNT_BAD_TLP = 176,
	NVML_FI_DEV_PCIE_COUNT_NAKS_SENT = 177,
	NVML_FI_DEV_PCIE_COUNT_BAD_DLLP = 178,
	NVML_FI_DEV_POWER_AVERAGE = 185,
	NVML_FI_DEV_POWER_INSTANT = 186,
	NVML_FI_DEV_PCIE_COUNT_TX_BYTES = 197,
	NVML_FI_DEV_PCIE_COUNT_RX_BYTES = 198,
};

/* nvmlDeviceGetNvLinkRemoteDeviceType: what is at the far end of a link. */
typedef int nvmlIntNvLinkDeviceType_t;
enum {
	NVML_NVLINK_DEVICE_TYPE_GPU = 0x00,
	NVML_NVLINK_DEVICE_TYPE_IBMNPU = 0x01,
	NVML_NVLINK_DEVICE_TYPE_SWITCH = 0x02,
	NVML_NVLINK_DEVICE_TYPE_UNKNOWN = 0xFF,
};

/* GPM (Hopper and newer). */
#define NVML_GPM_METRIC_MAX 333
#define NVML_GPM_METRICS_GET_VERSION 1
#define NVML_GPM_SUPPORT_VERSION 1
enum {
	NVML_GPM_METRIC_GRAPHICS_UTIL = 1,
	NVML_GPM_METRIC_SM_UTIL = 2,
	NVML_GPM_METRIC_SM_OCCUPANCY = 3,
	NVML_GPM_METRIC_INTEGER_UTIL = 4,
	NVML_GPM_METRIC_ANY_TENSOR_UTIL = 5,
	NVML_GPM_METRIC_DRAM_BW_UTIL = 10,
	NVML_GPM_METRIC_FP64_UTIL = 11,
	NVML_GPM_METRIC_FP32_UTIL = 12,
	NVML_GPM_METRIC_FP16_UTIL = 13,
	NVML_GPM_METRIC_PCIE_TX_PER_SEC = 20,
	NVML_GPM_METRIC_PCIE_RX_PER_SEC = 21,
	NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC = 60,
	NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC = 61,
};

typedef struct {
	unsigned int metricId;
	nvmlReturn_t nvmlReturn;
	double value;
	struct {
		char *shortName;
		char *longName;
		char *unit;
	} metricInfo;
} nvmlGpmMetric_t;
_Static_assert(sizeof(nvmlGpmMetric_t) == 40, "nvmlGpmMetric_t size");
_Static_assert(offsetof(nvmlGpmMetric_t, value) == 8, "nvmlGpmMetric_t.value");

typedef struct {
	unsigned int version;
	unsigned int numMetrics;
	nvmlGpmSample_t sample1;
	nvmlGpmSample_t sample2;
	nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;
_Static_assert(offsetof(nvmlGpmMetricsGet_t, metrics) == 24, "nvmlGpmMetricsGet_t.metrics");
_Static_assert(sizeof(nvmlGpmMetricsGet_t) == 13344, "nvmlGpmMetricsGet_t size");

typedef struct {
	unsigned int version;
	unsigned int isSupportedDevice;
} nvmlGpmSupport_t;
_Static_assert(sizeof(nvmlGpmSupport_t) == 8, "nvmlGpmSupport_t size");

/* nvmlMemoryLocation_t: where nvmlDeviceGetMemoryErrorCounter counts (DRAM == DEVICE_MEMORY). */
typedef int nvmlMemoryLocation_t;
enum {
	NVML_MEMORY_LOCATION_L1_CACHE = 0,
	NVML_MEMORY_LOCATION_L2_CACHE = 1,
	NVML_MEMORY_LOCATION_DRAM = 2,
	NVML_MEMORY_LOCATION_DEVICE_MEMORY = 2,
	NVML_MEMORY_LOCATION_REGISTER_FILE = 3,
	NVML_MEMORY_LOCATION_TEXTURE_MEMORY = 4,
	NVML_MEMORY_LOCATION_TEXTURE_SHM = 5,
	NVML_MEMORY_LOCATION_CBU = 6,
	NVML_MEMORY_LOCATION_SRAM = 7,
};

/* nvmlRowRemapperHistogramValues_t: banks by how many spare rows they have left. */
typedef struct {
	unsigned int max;
	unsigned int high;
	unsigned int partial;
	unsigned int low;
	unsigned int none;
} nvmlRowRemapperHistogramValues_t;
_Static_assert(sizeof(nvmlRowRemapperHistogramValues_t) == 20, "nvmlRowRemapperHistogramValues_t");

/* nvmlDeviceAttributes_t (nvmlDeviceGetAttributes_v2): a MIG device's share of the GPU. */
typedef struct {
	unsigned int multiprocessorCount;
	unsigned int sharedCopyEngineCount;
	unsigned int sharedDecoderCount;
	unsigned int sharedEncoderCount;
	unsigned int sharedJpegCount;
	unsigned int sharedOfaCount;
	unsigned int gpuInstanceSliceCount;
	unsigned int computeInstanceSliceCount;
	unsigned long long memorySizeMB;
} nvmlDeviceAttributes_t;
_Static_assert(sizeof(nvmlDeviceAttributes_t) == 40, "nvmlDeviceAttributes_t size");
_Static_assert(offsetof(nvmlDeviceAttributes_t, memorySizeMB) == 32, "memorySizeMB");

/*
 * Every entry point gpuwhy uses: X(return, exported symbol, (parameters)).
 * The device layer makes a function pointer of each; the simulator defines
 * each one. Versioned names are the exported symbols (dlsym needs them).
 */
#define NVML_ENTRY_POINTS(X)                                                                       \
	X(nvmlReturn_t, nvmlInit_v2, (void))                                                       \
	X(nvmlReturn_t, nvmlInit, (void))                                                          \
	X(nvmlReturn_t, nvmlShutdown, (void))                                                      \
	X(const char *, nvmlErrorString, (nvmlReturn_t result))                                    \
	X(nvmlReturn_t, nvmlSystemGetDriverVersion, (char *version, unsigned int length))          \
	X(nvmlReturn_t, nvmlSystemGetNVMLVersion, (char *version, unsigned int length))            \
	X(nvmlReturn_t, nvmlSystemGetCudaDriverVersion, (int *cudaDriverVersion))                  \
	X(nvmlReturn_t, nvmlSystemGetCudaDriverVersion_v2, (int *cudaDriverVersion))               \
	X(nvmlReturn_t, nvmlDeviceGetCount_v2, (unsigned int *deviceCount))                        \
	X(nvmlReturn_t, nvmlDeviceGetCount, (unsigned int *deviceCount))                           \
	X(nvmlReturn_t, nvmlDeviceGetHandleByIndex_v2, (unsigned int index, nvmlDevice_t *device)) \
	X(nvmlReturn_t, nvmlDeviceGetHandleByIndex, (unsigned int index, nvmlDevice_t *device))    \
	X(nvmlReturn_t, nvmlDeviceGetName, (nvmlDevice_t device, char *name, unsigned int length)) \
	X(nvmlReturn_t, nvmlDeviceGetUUID, (nvmlDevice_t device, char *uuid, unsigned int length)) \
	X(nvmlReturn_t, nvmlDeviceGetSerial,                                                       \
	  (nvmlDevice_t device, char *serial, unsigned int length))                                \
	X(nvmlReturn_t, nvmlDeviceGetVbiosVersion,                                                 \
	  (nvmlDevice_t device, char *version, unsigned int length))                               \
	X(nvmlReturn_t, nvmlDeviceGetPciInfo_v3, (nvmlDevice_t device, nvmlPciInfo_t * pci))       \
	X(nvmlReturn_t, nvmlDeviceGetPciInfo_v2, (nvmlDevice_t device, nvmlPciInfo_t * pci))       \
	X(nvmlReturn_t, nvmlDeviceGetMinorNumber, (nvmlDevice_t device, unsigned int *minor))      \
	X(nvmlReturn_t, nvmlDeviceGetIndex, (nvmlDevice_t device, unsigned int *index))            \
	X(nvmlReturn_t, nvmlDeviceGetArchitecture,                                                 \
	  (nvmlDevice_t device, nvmlDeviceArchitecture_t * arch))                                  \
	X(nvmlReturn_t, nvmlDeviceGetCudaComputeCapability,                                        \
	  (nvmlDevice_t device, int *major, int *minor))                                           \
	X(nvmlReturn_t, nvmlDeviceGetPersistenceMode,                                              \
	  (nvmlDevice_t device, nvmlEnableState_t * mode))                                         \
	X(nvmlReturn_t, nvmlDeviceGetComputeMode, (nvmlDevice_t device, nvmlComputeMode_t * mode)) \
	X(nvmlReturn_t, nvmlDeviceGetMigMode,                                                      \
	  (nvmlDevice_t device, unsigned int *currentMode, unsigned int *pendingMode))             \
	X(nvmlReturn_t, nvmlDeviceGetUtilizationRates,                                             \
	  (nvmlDevice_t device, nvmlUtilization_t * utilization))                                  \
	X(nvmlReturn_t, nvmlDeviceGetEncoderUtilization,                                           \
	  (nvmlDevice_t device, unsigned int *utilization, unsigned int *samplingPeriodUs))        \
	X(nvmlReturn_t, nvmlDeviceGetDecoderUtilization,                                           \
	  (nvmlDevice_t device, unsigned int *utilization, unsigned int *samplingPeriodUs))        \
	X(nvmlReturn_t, nvmlDeviceGetMemoryInfo_v2,                                                \
	  (nvmlDevice_t device, nvmlMemory_v2_t * memory))                                         \
	X(nvmlReturn_t, nvmlDeviceGetMemoryInfo, (nvmlDevice_t device, nvmlMemory_t * memory))     \
	X(nvmlReturn_t, nvmlDeviceGetBAR1MemoryInfo,                                               \
	  (nvmlDevice_t device, nvmlBAR1Memory_t * bar1Memory))                                    \
	X(nvmlReturn_t, nvmlDeviceGetPowerUsage, (nvmlDevice_t device, unsigned int *power))       \
	X(nvmlReturn_t, nvmlDeviceGetPowerManagementLimit,                                         \
	  (nvmlDevice_t device, unsigned int *limit))                                              \
	X(nvmlReturn_t, nvmlDeviceGetPowerManagementDefaultLimit,                                  \
	  (nvmlDevice_t device, unsigned int *defaultLimit))                                       \
	X(nvmlReturn_t, nvmlDeviceGetEnforcedPowerLimit,                                           \
	  (nvmlDevice_t device, unsigned int *limit))                                              \
	X(nvmlReturn_t, nvmlDeviceGetTotalEnergyConsumption,                                       \
	  (nvmlDevice_t device, unsigned long long *energy))                                       \
	X(nvmlReturn_t, nvmlDeviceGetTemperature,                                                  \
	  (nvmlDevice_t device, nvmlTemperatureSensors_t sensorType, unsigned int *temp))          \
	X(nvmlReturn_t, nvmlDeviceGetTemperatureThreshold,                                         \
	  (nvmlDevice_t device, nvmlTemperatureThresholds_t thresholdType, unsigned int *temp))    \
	X(nvmlReturn_t, nvmlDeviceGetFanSpeed, (nvmlDevice_t device, unsigned int *speed))         \
	X(nvmlReturn_t, nvmlDeviceGetClockInfo,                                                    \
	  (nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock))                        \
	X(nvmlReturn_t, nvmlDeviceGetMaxClockInfo,                                                 \
	  (nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock))                        \
	X(nvmlReturn_t, nvmlDeviceGetApplicationsClock,                                            \
	  (nvmlDevice_t device, nvmlClockType_t clockType, unsigned int *clockMHz))                \
	X(nvmlReturn_t, nvmlDeviceGetCurrentClocksEventReasons,                                    \
	  (nvmlDevice_t device, unsigned long long *clocksEventReasons))                           \
	X(nvmlReturn_t, nvmlDeviceGetCurrentClocksThrottleReasons,                                 \
	  (nvmlDevice_t device, unsigned long long *clocksThrottleReasons))                        \
	X(nvmlReturn_t, nvmlDeviceGetPerformanceState,                                             \
	  (nvmlDevice_t device, nvmlPstates_t * pState))                                           \
	X(nvmlReturn_t, nvmlDeviceGetCurrPcieLinkGeneration,                                       \
	  (nvmlDevice_t device, unsigned int *currLinkGen))                                        \
	X(nvmlReturn_t, nvmlDeviceGetCurrPcieLinkWidth,                                            \
	  (nvmlDevice_t device, unsigned int *currLinkWidth))                                      \
	X(nvmlReturn_t, nvmlDeviceGetMaxPcieLinkGeneration,                                        \
	  (nvmlDevice_t device, unsigned int *maxLinkGen))                                         \
	X(nvmlReturn_t, nvmlDeviceGetMaxPcieLinkWidth,                                             \
	  (nvmlDevice_t device, unsigned int *maxLinkWidth))                                       \
	X(nvmlReturn_t, nvmlDeviceGetPcieThroughput,                                               \
	  (nvmlDevice_t device, nvmlPcieUtilCounter_t counter, unsigned int *value))               \
	X(nvmlReturn_t, nvmlDeviceGetPcieReplayCounter,                                            \
	  (nvmlDevice_t device, unsigned int *value))                                              \
	X(nvmlReturn_t, nvmlDeviceGetTotalEccErrors,                                               \
	  (nvmlDevice_t device, nvmlMemoryErrorType_t errorType, nvmlEccCounterType_t counterType, \
	   unsigned long long *eccCounts))                                                         \
	X(nvmlReturn_t, nvmlDeviceGetRetiredPages,                                                 \
	  (nvmlDevice_t device, nvmlPageRetirementCause_t cause, unsigned int *pageCount,          \
	   unsigned long long *addresses))                                                         \
	X(nvmlReturn_t, nvmlDeviceGetRetiredPagesPendingStatus,                                    \
	  (nvmlDevice_t device, nvmlEnableState_t * isPending))                                    \
	X(nvmlReturn_t, nvmlDeviceGetRemappedRows,                                                 \
	  (nvmlDevice_t device, unsigned int *corrRows, unsigned int *uncRows,                     \
	   unsigned int *isPending, unsigned int *failureOccurred))                                \
	X(nvmlReturn_t, nvmlDeviceGetFieldValues,                                                  \
	  (nvmlDevice_t device, int valuesCount, nvmlFieldValue_t *values))                        \
	X(nvmlReturn_t, nvmlDeviceGetComputeRunningProcesses_v3,                                   \
	  (nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_t *infos))                \
	X(nvmlReturn_t, nvmlDeviceGetComputeRunningProcesses_v2,                                   \
	  (nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_t *infos))                \
	X(nvmlReturn_t, nvmlDeviceGetComputeRunningProcesses,                                      \
	  (nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_v1_t *infos))             \
	X(nvmlReturn_t, nvmlDeviceGetGraphicsRunningProcesses_v3,                                  \
	  (nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_t *infos))                \
	X(nvmlReturn_t, nvmlDeviceGetProcessUtilization,                                           \
	  (nvmlDevice_t device, nvmlProcessUtilizationSample_t * utilization,                      \
	   unsigned int *processSamplesCount, unsigned long long lastSeenTimeStamp))               \
	X(nvmlReturn_t, nvmlDeviceGetSamples,                                                      \
	  (nvmlDevice_t device, nvmlSamplingType_t type, unsigned long long lastSeenTimeStamp,     \
	   nvmlValueType_t *sampleValType, unsigned int *sampleCount, nvmlSample_t *samples))      \
	X(nvmlReturn_t, nvmlDeviceGetTopologyCommonAncestor,                                       \
	  (nvmlDevice_t device1, nvmlDevice_t device2, nvmlGpuTopologyLevel_t * pathInfo))         \
	X(nvmlReturn_t, nvmlDeviceGetNvLinkState,                                                  \
	  (nvmlDevice_t device, unsigned int link, nvmlEnableState_t *isActive))                   \
	X(nvmlReturn_t, nvmlDeviceGetNvLinkRemotePciInfo_v2,                                       \
	  (nvmlDevice_t device, unsigned int link, nvmlPciInfo_t *pci))                            \
	X(nvmlReturn_t, nvmlDeviceGetCpuAffinity,                                                  \
	  (nvmlDevice_t device, unsigned int cpuSetSize, unsigned long *cpuSet))                   \
	X(nvmlReturn_t, nvmlDeviceGetNumaNodeId, (nvmlDevice_t device, unsigned int *node))        \
	X(nvmlReturn_t, nvmlEventSetCreate, (nvmlEventSet_t * set))                                \
	X(nvmlReturn_t, nvmlDeviceRegisterEvents,                                                  \
	  (nvmlDevice_t device, unsigned long long eventTypes, nvmlEventSet_t set))                \
	X(nvmlReturn_t, nvmlEventSetWait_v2,                                                       \
	  (nvmlEventSet_t set, nvmlEventData_t * data, unsigned int timeoutms))                    \
	X(nvmlReturn_t, nvmlEventSetFree, (nvmlEventSet_t set))                                    \
	X(nvmlReturn_t, nvmlInitWithFlags, (unsigned int flags))                                   \
	X(nvmlReturn_t, nvmlSystemGetProcessName,                                                  \
	  (unsigned int pid, char *name, unsigned int length))                                     \
	X(nvmlReturn_t, nvmlDeviceGetHandleByUUID, (const char *uuid, nvmlDevice_t *device))       \
	X(nvmlReturn_t, nvmlDeviceGetHandleByPciBusId_v2,                                          \
	  (const char *pciBusId, nvmlDevice_t *device))                                            \
	X(nvmlReturn_t, nvmlDeviceGetPowerManagementLimitConstraints,                              \
	  (nvmlDevice_t device, unsigned int *minLimit, unsigned int *maxLimit))                   \
	X(nvmlReturn_t, nvmlDeviceGetEccMode,                                                      \
	  (nvmlDevice_t device, nvmlEnableState_t * current, nvmlEnableState_t * pending))         \
	X(nvmlReturn_t, nvmlDeviceGetClock,                                                        \
	  (nvmlDevice_t device, nvmlClockType_t clockType, nvmlClockId_t clockId,                  \
	   unsigned int *clockMHz))                                                                \
	X(nvmlReturn_t, nvmlDeviceGetGpuMaxPcieLinkGeneration,                                     \
	  (nvmlDevice_t device, unsigned int *maxLinkGenDevice))                                   \
	X(nvmlReturn_t, nvmlDeviceGetNvLinkRemoteDeviceType,                                       \
	  (nvmlDevice_t device, unsigned int link, nvmlIntNvLinkDeviceType_t *pNvLinkDeviceType))  \
	X(nvmlReturn_t, nvmlGpmQueryDeviceSupport,                                                 \
	  (nvmlDevice_t device, nvmlGpmSupport_t * gpmSupport))                                    \
	X(nvmlReturn_t, nvmlGpmSampleAlloc, (nvmlGpmSample_t * gpmSample))                         \
	X(nvmlReturn_t, nvmlGpmSampleFree, (nvmlGpmSample_t gpmSample))                            \
	X(nvmlReturn_t, nvmlGpmSampleGet, (nvmlDevice_t device, nvmlGpmSample_t gpmSample))        \
	X(nvmlReturn_t, nvmlGpmMetricsGet, (nvmlGpmMetricsGet_t * metricsGet))                     \
	X(nvmlReturn_t, nvmlDeviceGetDisplayMode,                                                  \
	  (nvmlDevice_t device, nvmlEnableState_t * display))                                      \
	X(nvmlReturn_t, nvmlDeviceGetDisplayActive,                                                \
	  (nvmlDevice_t device, nvmlEnableState_t * isActive))                                     \
	X(nvmlReturn_t, nvmlDeviceGetAccountingMode,                                               \
	  (nvmlDevice_t device, nvmlEnableState_t * mode))                                         \
	X(nvmlReturn_t, nvmlDeviceGetAccountingBufferSize,                                         \
	  (nvmlDevice_t device, unsigned int *bufferSize))                                         \
	X(nvmlReturn_t, nvmlDeviceGetJpgUtilization,                                               \
	  (nvmlDevice_t device, unsigned int *utilization, unsigned int *samplingPeriodUs))        \
	X(nvmlReturn_t, nvmlDeviceGetOfaUtilization,                                               \
	  (nvmlDevice_t device, unsigned int *utilization, unsigned int *samplingPeriodUs))        \
	X(nvmlReturn_t, nvmlDeviceGetEncoderStats,                                                 \
	  (nvmlDevice_t device, unsigned int *sessionCount, unsigned int *averageFps,              \
	   unsigned int *averageLatency))                                                          \
	X(nvmlReturn_t, nvmlDeviceGetSupportedClocksEventReasons,                                  \
	  (nvmlDevice_t device, unsigned long long *supportedClocksEventReasons))                  \
	X(nvmlReturn_t, nvmlDeviceGetMemoryErrorCounter,                                           \
	  (nvmlDevice_t device, nvmlMemoryErrorType_t errorType, nvmlEccCounterType_t counterType, \
	   nvmlMemoryLocation_t locationType, unsigned long long *count))                          \
	X(nvmlReturn_t, nvmlDeviceGetRowRemapperHistogram,                                         \
	  (nvmlDevice_t device, nvmlRowRemapperHistogramValues_t * values))                        \
	X(nvmlReturn_t, nvmlDeviceGetMaxMigDeviceCount,                                            \
	  (nvmlDevice_t device, unsigned int *count))                                              \
	X(nvmlReturn_t, nvmlDeviceGetMigDeviceHandleByIndex,                                       \
	  (nvmlDevice_t device, unsigned int index, nvmlDevice_t *migDevice))                      \
	X(nvmlReturn_t, nvmlDeviceIsMigDeviceHandle,                                               \
	  (nvmlDevice_t device, unsigned int *isMigDevice))                                        \
	X(nvmlReturn_t, nvmlDeviceGetGpuInstanceId, (nvmlDevice_t device, unsigned int *id))       \
	X(nvmlReturn_t, nvmlDeviceGetComputeInstanceId, (nvmlDevice_t device, unsigned int *id))   \
	X(nvmlReturn_t, nvmlDeviceGetDeviceHandleFromMigDeviceHandle,                              \
	  (nvmlDevice_t migDevice, nvmlDevice_t * device))                                         \
	X(nvmlReturn_t, nvmlDeviceGetAttributes_v2,                                                \
	  (nvmlDevice_t device, nvmlDeviceAttributes_t * attributes))

/*
 * The rest of NVML 13's entry points that NVML clients bind (nvidia-ml-py,
 * pynvml, nvitop, nvtop; their lists are tests/fixtures/nvml-clients/), with
 * the types they take. The simulator answers NVML_CLIENT_ENTRY_POINTS from the
 * scenario and the two NVML_UNANSWERED_* lists with NOT_SUPPORTED.
 */
enum { /* nvmlBrandType_t */
       NVML_BRAND_QUADRO = 1,
       NVML_BRAND_TESLA = 2,
       NVML_BRAND_GEFORCE = 5,
       NVML_BRAND_TITAN = 6,
       NVML_BRAND_QUADRO_RTX = 12,
       NVML_BRAND_NVIDIA_RTX = 13,
       NVML_BRAND_NVIDIA = 14,
};
enum { /* nvmlGpuP2PStatus_t and nvmlGpuP2PCapsIndex_t */
       NVML_P2P_STATUS_OK = 0,
       NVML_P2P_STATUS_NOT_SUPPORTED = 5,
       NVML_P2P_CAPS_INDEX_NVLINK = 3,
};
enum { /* nvmlNvLinkVersion_t */
       NVML_NVLINK_VERSION_2_0 = 2,
       NVML_NVLINK_VERSION_3_0 = 4,
       NVML_NVLINK_VERSION_4_0 = 6,
       NVML_NVLINK_VERSION_5_0 = 7,
};
#define NVML_POWER_SOURCE_AC 0U
#define NVML_AFFINITY_SCOPE_NODE 0U
#define NVML_AFFINITY_SCOPE_SOCKET 1U
#define nvmlEventTypeSingleBitEccError 0x1ULL
#define nvmlEventTypeDoubleBitEccError 0x2ULL
enum { /* nvmlProcessMode_t */
       NVML_PROCESS_MODE_COMPUTE = 0,
       NVML_PROCESS_MODE_GRAPHICS = 1,
       NVML_PROCESS_MODE_MPS = 2,
};

/* nvmlDeviceGetRunningProcessDetailList's entry: the 32-byte layout, protected memory last. */
typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
	unsigned long long usedGpuCcProtectedMemory;
} nvmlProcessDetail_v1_t;
_Static_assert(sizeof(nvmlProcessDetail_v1_t) == 32, "nvmlProcessDetail_v1_t size");

typedef struct {
	unsigned int version; /* nvmlProcessDetailList_v1 */
	unsigned int mode;    /* NVML_PROCESS_MODE_* */
	unsigned int numProcArrayEntries;
	nvmlProcessDetail_v1_t *procArray;
} nvmlProcessDetailList_v1_t;
typedef nvmlProcessDetailList_v1_t nvmlProcessDetailList_t;
_Static_assert(sizeof(nvmlProcessDetailList_v1_t) == 24, "nvmlProcessDetailList_v1_t size");
_Static_assert(offsetof(nvmlProcessDetailList_v1_t, procArray) == 16, "procArray");
#define nvmlProcessDetailList_v1 NVML_STRUCT_VERSION(sizeof(nvmlProcessDetailList_v1_t), 1)

typedef struct {
	unsigned long long timeStamp; /* microseconds */
	unsigned int pid;
	unsigned int smUtil;
	unsigned int memUtil;
	unsigned int encUtil;
	unsigned int decUtil;
	unsigned int jpgUtil;
	unsigned int ofaUtil;
} nvmlProcessUtilizationInfo_v1_t;
_Static_assert(sizeof(nvmlProcessUtilizationInfo_v1_t) == 40, "nvmlProcessUtilizationInfo_v1_t");

typedef struct {
	unsigned int version; /* nvmlProcessesUtilizationInfo_v1 */
	unsigned int processSamplesCount;
	unsigned long long lastSeenTimeStamp;
	nvmlProcessUtilizationInfo_v1_t *procUtilArray;
} nvmlProcessesUtilizationInfo_v1_t;
typedef nvmlProcessesUtilizationInfo_v1_t nvmlProcessesUtilizationInfo_t;
_Static_assert(sizeof(nvmlProcessesUtilizationInfo_v1_t) == 24,
               "nvmlProcessesUtilizationInfo_v1_t");
#define nvmlProcessesUtilizationInfo_v1                                                            \
	NVML_STRUCT_VERSION(sizeof(nvmlProcessesUtilizationInfo_v1_t), 1)

/* Enumerations and ids these entry points take, by their C type (an enum is an int). */
typedef int nvmlBrandType_t;
typedef int nvmlDeviceVgpuCapability_t;
typedef int nvmlEncoderType_t;
typedef int nvmlGpuOperationMode_t;
typedef int nvmlGpuP2PCapsIndex_t;
typedef int nvmlGpuP2PStatus_t;
typedef int nvmlGpuVirtualizationMode_t;
typedef int nvmlHostVgpuMode_t;
typedef int nvmlInforomObject_t;
typedef int nvmlLedColor_t;
typedef int nvmlNvLinkCapability_t;
typedef int nvmlNvLinkErrorCounter_t;
typedef int nvmlPerfPolicyType_t;
typedef int nvmlRestrictedAPI_t;
typedef int nvmlVgpuCapability_t;
typedef int nvmlVgpuDriverCapability_t;
typedef int nvmlVgpuVmIdType_t;
typedef unsigned int nvmlAffinityScope_t;
typedef unsigned int nvmlBusType_t;
typedef unsigned int nvmlFanControlPolicy_t;
typedef unsigned int nvmlPowerSource_t;
typedef unsigned int nvmlVgpuInstance_t;
typedef unsigned int nvmlVgpuTypeId_t;
typedef struct nvmlComputeInstance_st *nvmlComputeInstance_t;
typedef struct nvmlGpuInstance_st *nvmlGpuInstance_t;
typedef struct nvmlUnit_st *nvmlUnit_t;
/*
 * Structures the simulator never reads or writes (it answers these entry points
 * NOT_SUPPORTED), so only their names are needed: pointers to them have one ABI.
 */
typedef struct nvmlAccountingStats_st nvmlAccountingStats_t;
typedef struct nvmlBridgeChipHierarchy_st nvmlBridgeChipHierarchy_t;
typedef struct nvmlC2cModeInfo_v1_st nvmlC2cModeInfo_v1_t;
typedef struct nvmlClkMonStatus_st nvmlClkMonStatus_t;
typedef struct nvmlClockOffset_st nvmlClockOffset_t;
typedef struct nvmlComputeInstanceInfo_st nvmlComputeInstanceInfo_t;
typedef struct nvmlComputeInstancePlacement_st nvmlComputeInstancePlacement_t;
typedef struct nvmlComputeInstanceProfileInfo_st nvmlComputeInstanceProfileInfo_t;
typedef struct nvmlComputeInstanceProfileInfo_v2_st nvmlComputeInstanceProfileInfo_v2_t;
typedef struct nvmlConfComputeGetKeyRotationThresholdInfo_st
    nvmlConfComputeGetKeyRotationThresholdInfo_t;
typedef struct nvmlConfComputeGpuAttestationReport_st nvmlConfComputeGpuAttestationReport_t;
typedef struct nvmlConfComputeGpuCertificate_st nvmlConfComputeGpuCertificate_t;
typedef struct nvmlConfComputeSetKeyRotationThresholdInfo_st
    nvmlConfComputeSetKeyRotationThresholdInfo_t;
typedef struct nvmlConfComputeSystemCaps_st nvmlConfComputeSystemCaps_t;
typedef struct nvmlConfComputeSystemState_st nvmlConfComputeSystemState_t;
typedef struct nvmlDeviceCapabilities_st nvmlDeviceCapabilities_t;
typedef struct nvmlEccErrorCounts_st nvmlEccErrorCounts_t;
typedef struct nvmlEccSramErrorStatus_st nvmlEccSramErrorStatus_t;
typedef struct nvmlEncoderSessionInfo_st nvmlEncoderSessionInfo_t;
typedef struct nvmlExcludedDeviceInfo_st nvmlExcludedDeviceInfo_t;
typedef struct nvmlFBCSessionInfo_st nvmlFBCSessionInfo_t;
typedef struct nvmlFBCStats_st nvmlFBCStats_t;
typedef struct nvmlGpuDynamicPstatesInfo_st nvmlGpuDynamicPstatesInfo_t;
typedef struct nvmlGpuFabricInfoV_st nvmlGpuFabricInfoV_t;
typedef struct nvmlGpuFabricInfo_st nvmlGpuFabricInfo_t;
typedef struct nvmlGpuInstanceInfo_st nvmlGpuInstanceInfo_t;
typedef struct nvmlGpuInstancePlacement_st nvmlGpuInstancePlacement_t;
typedef struct nvmlGpuInstanceProfileInfo_st nvmlGpuInstanceProfileInfo_t;
typedef struct nvmlGpuInstanceProfileInfo_v2_st nvmlGpuInstanceProfileInfo_v2_t;
typedef struct nvmlGpuThermalSettings_st nvmlGpuThermalSettings_t;
typedef struct nvmlGridLicensableFeatures_st nvmlGridLicensableFeatures_t;
typedef struct nvmlHwbcEntry_st nvmlHwbcEntry_t;
typedef struct nvmlLedState_st nvmlLedState_t;
typedef struct nvmlNvLinkPowerThres_st nvmlNvLinkPowerThres_t;
typedef struct nvmlNvLinkUtilizationControl_st nvmlNvLinkUtilizationControl_t;
typedef struct nvmlPSUInfo_st nvmlPSUInfo_t;
typedef struct nvmlPciInfoExt_st nvmlPciInfoExt_t;
typedef struct nvmlPowerValue_v2_st nvmlPowerValue_v2_t;
typedef struct nvmlSystemConfComputeSettings_st nvmlSystemConfComputeSettings_t;
typedef struct nvmlSystemDriverBranchInfo_st nvmlSystemDriverBranchInfo_t;
typedef struct nvmlUnitFanSpeeds_st nvmlUnitFanSpeeds_t;
typedef struct nvmlUnitInfo_st nvmlUnitInfo_t;
typedef struct nvmlVgpuHeterogeneousMode_st nvmlVgpuHeterogeneousMode_t;
typedef struct nvmlVgpuInstanceUtilizationSample_st nvmlVgpuInstanceUtilizationSample_t;
typedef struct nvmlVgpuInstancesUtilizationInfo_st nvmlVgpuInstancesUtilizationInfo_t;
typedef struct nvmlVgpuLicenseInfo_st nvmlVgpuLicenseInfo_t;
typedef struct nvmlVgpuMetadata_st nvmlVgpuMetadata_t;
typedef struct nvmlVgpuPgpuCompatibility_st nvmlVgpuPgpuCompatibility_t;
typedef struct nvmlVgpuPgpuMetadata_st nvmlVgpuPgpuMetadata_t;
typedef struct nvmlVgpuPlacementId_st nvmlVgpuPlacementId_t;
typedef struct nvmlVgpuPlacementList_st nvmlVgpuPlacementList_t;
typedef struct nvmlVgpuProcessUtilizationSample_st nvmlVgpuProcessUtilizationSample_t;
typedef struct nvmlVgpuProcessesUtilizationInfo_st nvmlVgpuProcessesUtilizationInfo_t;
typedef struct nvmlVgpuSchedulerCapabilities_st nvmlVgpuSchedulerCapabilities_t;
typedef struct nvmlVgpuSchedulerGetState_st nvmlVgpuSchedulerGetState_t;
typedef struct nvmlVgpuSchedulerLog_st nvmlVgpuSchedulerLog_t;
typedef struct nvmlVgpuSchedulerSetState_st nvmlVgpuSchedulerSetState_t;
typedef struct nvmlVgpuTypeBar1Info_st nvmlVgpuTypeBar1Info_t;
typedef struct nvmlVgpuVersion_st nvmlVgpuVersion_t;
typedef struct nvmlViolationTime_st nvmlViolationTime_t;
#define NVML_CLIENT_ENTRY_POINTS(X)                                                                \
	X(nvmlReturn_t, nvmlDeviceGetBoardId, (nvmlDevice_t device, unsigned int *boardId))        \
	X(nvmlReturn_t, nvmlDeviceGetBrand, (nvmlDevice_t device, nvmlBrandType_t * type))         \
	X(nvmlReturn_t, nvmlDeviceGetCpuAffinityWithinScope,                                       \
	  (nvmlDevice_t device, unsigned int cpuSetSize, unsigned long *cpuSet,                    \
	   nvmlAffinityScope_t scope))                                                             \
	X(nvmlReturn_t, nvmlDeviceGetDefaultApplicationsClock,                                     \
	  (nvmlDevice_t device, nvmlClockType_t clockType, unsigned int *clockMHz))                \
	X(nvmlReturn_t, nvmlDeviceGetDefaultEccMode,                                               \
	  (nvmlDevice_t device, nvmlEnableState_t * defaultMode))                                  \
	X(nvmlReturn_t, nvmlDeviceGetFanSpeed_v2,                                                  \
	  (nvmlDevice_t device, unsigned int fan, unsigned int *speed))                            \
	X(nvmlReturn_t, nvmlDeviceGetMaxCustomerBoostClock,                                        \
	  (nvmlDevice_t device, nvmlClockType_t clockType, unsigned int *clockMHz))                \
	X(nvmlReturn_t, nvmlDeviceGetMemoryAffinity,                                               \
	  (nvmlDevice_t device, unsigned int nodeSetSize, unsigned long *nodeSet,                  \
	   nvmlAffinityScope_t scope))                                                             \
	X(nvmlReturn_t, nvmlDeviceGetMemoryBusWidth,                                               \
	  (nvmlDevice_t device, unsigned int *busWidth))                                           \
	X(nvmlReturn_t, nvmlDeviceGetMinMaxFanSpeed,                                               \
	  (nvmlDevice_t device, unsigned int *minSpeed, unsigned int *maxSpeed))                   \
	X(nvmlReturn_t, nvmlDeviceGetMultiGpuBoard,                                                \
	  (nvmlDevice_t device, unsigned int *multiGpuBool))                                       \
	X(nvmlReturn_t, nvmlDeviceGetNumFans, (nvmlDevice_t device, unsigned int *numFans))        \
	X(nvmlReturn_t, nvmlDeviceGetNvLinkVersion,                                                \
	  (nvmlDevice_t device, unsigned int link, unsigned int *version))                         \
	X(nvmlReturn_t, nvmlDeviceGetP2PStatus,                                                    \
	  (nvmlDevice_t device1, nvmlDevice_t device2, nvmlGpuP2PCapsIndex_t p2pIndex,             \
	   nvmlGpuP2PStatus_t * p2pStatus))                                                        \
	X(nvmlReturn_t, nvmlDeviceGetPciInfo, (nvmlDevice_t device, nvmlPciInfo_t * pci))          \
	X(nvmlReturn_t, nvmlDeviceGetPcieLinkMaxSpeed,                                             \
	  (nvmlDevice_t device, unsigned int *maxSpeed))                                           \
	X(nvmlReturn_t, nvmlDeviceGetPcieSpeed, (nvmlDevice_t device, unsigned int *pcieSpeed))    \
	X(nvmlReturn_t, nvmlDeviceGetPowerManagementMode,                                          \
	  (nvmlDevice_t device, nvmlEnableState_t * mode))                                         \
	X(nvmlReturn_t, nvmlDeviceGetPowerSource,                                                  \
	  (nvmlDevice_t device, nvmlPowerSource_t * powerSource))                                  \
	X(nvmlReturn_t, nvmlDeviceGetPowerState, (nvmlDevice_t device, nvmlPstates_t * pState))    \
	X(nvmlReturn_t, nvmlDeviceGetProcessesUtilizationInfo,                                     \
	  (nvmlDevice_t device, nvmlProcessesUtilizationInfo_t * procesesUtilInfo))                \
	X(nvmlReturn_t, nvmlDeviceGetRunningProcessDetailList,                                     \
	  (nvmlDevice_t device, nvmlProcessDetailList_t * plist))                                  \
	X(nvmlReturn_t, nvmlDeviceGetSupportedClocksThrottleReasons,                               \
	  (nvmlDevice_t device, unsigned long long *supportedClocksThrottleReasons))               \
	X(nvmlReturn_t, nvmlDeviceGetSupportedEventTypes,                                          \
	  (nvmlDevice_t device, unsigned long long *eventTypes))                                   \
	X(nvmlReturn_t, nvmlDeviceGetSupportedPerformanceStates,                                   \
	  (nvmlDevice_t device, nvmlPstates_t * pstates, unsigned int size))                       \
	X(nvmlReturn_t, nvmlDeviceGetTargetFanSpeed,                                               \
	  (nvmlDevice_t device, unsigned int fan, unsigned int *targetSpeed))                      \
	X(nvmlReturn_t, nvmlDeviceGetTopologyNearestGpus,                                          \
	  (nvmlDevice_t device, nvmlGpuTopologyLevel_t level, unsigned int *count,                 \
	   nvmlDevice_t *deviceArray))                                                             \
	X(nvmlReturn_t, nvmlDeviceOnSameBoard,                                                     \
	  (nvmlDevice_t device1, nvmlDevice_t device2, int *onSameBoard))                          \
	X(nvmlReturn_t, nvmlGetExcludedDeviceCount, (unsigned int *deviceCount))                   \
	X(nvmlReturn_t, nvmlGpmQueryIfStreamingEnabled,                                            \
	  (nvmlDevice_t device, unsigned int *state))                                              \
	X(nvmlReturn_t, nvmlSystemGetHicVersion,                                                   \
	  (unsigned int *hwbcCount, nvmlHwbcEntry_t *hwbcEntries))                                 \
	X(nvmlReturn_t, nvmlUnitGetCount, (unsigned int *unitCount))

#define NVML_UNANSWERED_DEVICE_ENTRY_POINTS(X)                                                     \
	X(nvmlReturn_t, nvmlDeviceClearAccountingPids, (nvmlDevice_t device))                      \
	X(nvmlReturn_t, nvmlDeviceClearCpuAffinity, (nvmlDevice_t device))                         \
	X(nvmlReturn_t, nvmlDeviceClearEccErrorCounts,                                             \
	  (nvmlDevice_t device, nvmlEccCounterType_t counterType))                                 \
	X(nvmlReturn_t, nvmlDeviceClearFieldValues,                                                \
	  (nvmlDevice_t device, int valuesCount, nvmlFieldValue_t *values))                        \
	X(nvmlReturn_t, nvmlDeviceCreateGpuInstance,                                               \
	  (nvmlDevice_t device, unsigned int profileId, nvmlGpuInstance_t *gpuInstance))           \
	X(nvmlReturn_t, nvmlDeviceCreateGpuInstanceWithPlacement,                                  \
	  (nvmlDevice_t device, unsigned int profileId,                                            \
	   const nvmlGpuInstancePlacement_t *placement, nvmlGpuInstance_t *gpuInstance))           \
	X(nvmlReturn_t, nvmlDeviceFreezeNvLinkUtilizationCounter,                                  \
	  (nvmlDevice_t device, unsigned int link, unsigned int counter,                           \
	   nvmlEnableState_t freeze))                                                              \
	X(nvmlReturn_t, nvmlDeviceGetAPIRestriction,                                               \
	  (nvmlDevice_t device, nvmlRestrictedAPI_t apiType, nvmlEnableState_t * isRestricted))    \
	X(nvmlReturn_t, nvmlDeviceGetAccountingPids,                                               \
	  (nvmlDevice_t device, unsigned int *count, unsigned int *pids))                          \
	X(nvmlReturn_t, nvmlDeviceGetAccountingStats,                                              \
	  (nvmlDevice_t device, unsigned int pid, nvmlAccountingStats_t *stats))                   \
	X(nvmlReturn_t, nvmlDeviceGetActiveVgpus,                                                  \
	  (nvmlDevice_t device, unsigned int *vgpuCount, nvmlVgpuInstance_t *vgpuInstances))       \
	X(nvmlReturn_t, nvmlDeviceGetAdaptiveClockInfoStatus,                                      \
	  (nvmlDevice_t device, unsigned int *adaptiveClockStatus))                                \
	X(nvmlReturn_t, nvmlDeviceGetAutoBoostedClocksEnabled,                                     \
	  (nvmlDevice_t device, nvmlEnableState_t * isEnabled,                                     \
	   nvmlEnableState_t * defaultIsEnabled))                                                  \
	X(nvmlReturn_t, nvmlDeviceGetBoardPartNumber,                                              \
	  (nvmlDevice_t device, char *partNumber, unsigned int length))                            \
	X(nvmlReturn_t, nvmlDeviceGetBridgeChipInfo,                                               \
	  (nvmlDevice_t device, nvmlBridgeChipHierarchy_t * bridgeHierarchy))                      \
	X(nvmlReturn_t, nvmlDeviceGetBusType, (nvmlDevice_t device, nvmlBusType_t * type))         \
	X(nvmlReturn_t, nvmlDeviceGetC2cModeInfoV,                                                 \
	  (nvmlDevice_t device, nvmlC2cModeInfo_v1_t * c2cModeInfo))                               \
	X(nvmlReturn_t, nvmlDeviceGetCapabilities,                                                 \
	  (nvmlDevice_t device, nvmlDeviceCapabilities_t * caps))                                  \
	X(nvmlReturn_t, nvmlDeviceGetClkMonStatus,                                                 \
	  (nvmlDevice_t device, nvmlClkMonStatus_t * status))                                      \
	X(nvmlReturn_t, nvmlDeviceGetClockOffsets,                                                 \
	  (nvmlDevice_t device, nvmlClockOffset_t * info))                                         \
	X(nvmlReturn_t, nvmlDeviceGetConfComputeGpuAttestationReport,                              \
	  (nvmlDevice_t device, nvmlConfComputeGpuAttestationReport_t * gpuAtstReport))            \
	X(nvmlReturn_t, nvmlDeviceGetConfComputeGpuCertificate,                                    \
	  (nvmlDevice_t device, nvmlConfComputeGpuCertificate_t * gpuCert))                        \
	X(nvmlReturn_t, nvmlDeviceGetConfComputeProtectedMemoryUsage,                              \
	  (nvmlDevice_t device, nvmlMemory_t * memory))                                            \
	X(nvmlReturn_t, nvmlDeviceGetCreatableVgpus,                                               \
	  (nvmlDevice_t device, unsigned int *vgpuCount, nvmlVgpuTypeId_t *vgpuTypeIds))           \
	X(nvmlReturn_t, nvmlDeviceGetDetailedEccErrors,                                            \
	  (nvmlDevice_t device, nvmlMemoryErrorType_t errorType, nvmlEccCounterType_t counterType, \
	   nvmlEccErrorCounts_t * eccCounts))                                                      \
	X(nvmlReturn_t, nvmlDeviceGetDynamicPstatesInfo,                                           \
	  (nvmlDevice_t device, nvmlGpuDynamicPstatesInfo_t * pDynamicPstatesInfo))                \
	X(nvmlReturn_t, nvmlDeviceGetEncoderCapacity,                                              \
	  (nvmlDevice_t device, nvmlEncoderType_t encoderQueryType,                                \
	   unsigned int *encoderCapacity))                                                         \
	X(nvmlReturn_t, nvmlDeviceGetEncoderSessions,                                              \
	  (nvmlDevice_t device, unsigned int *sessionCount,                                        \
	   nvmlEncoderSessionInfo_t *sessionInfos))                                                \
	X(nvmlReturn_t, nvmlDeviceGetFBCSessions,                                                  \
	  (nvmlDevice_t device, unsigned int *sessionCount, nvmlFBCSessionInfo_t *sessionInfo))    \
	X(nvmlReturn_t, nvmlDeviceGetFBCStats, (nvmlDevice_t device, nvmlFBCStats_t * fbcStats))   \
	X(nvmlReturn_t, nvmlDeviceGetFanControlPolicy_v2,                                          \
	  (nvmlDevice_t device, unsigned int fan, nvmlFanControlPolicy_t *policy))                 \
	X(nvmlReturn_t, nvmlDeviceGetGpcClkMinMaxVfOffset,                                         \
	  (nvmlDevice_t device, int *minOffset, int *maxOffset))                                   \
	X(nvmlReturn_t, nvmlDeviceGetGpcClkVfOffset, (nvmlDevice_t device, int *offset))           \
	X(nvmlReturn_t, nvmlDeviceGetGpuFabricInfo,                                                \
	  (nvmlDevice_t device, nvmlGpuFabricInfo_t * gpuFabricInfo))                              \
	X(nvmlReturn_t, nvmlDeviceGetGpuFabricInfoV,                                               \
	  (nvmlDevice_t device, nvmlGpuFabricInfoV_t * gpuFabricInfo))                             \
	X(nvmlReturn_t, nvmlDeviceGetGpuInstanceById,                                              \
	  (nvmlDevice_t device, unsigned int id, nvmlGpuInstance_t *gpuInstance))                  \
	X(nvmlReturn_t, nvmlDeviceGetGpuInstancePossiblePlacements_v2,                             \
	  (nvmlDevice_t device, unsigned int profileId, nvmlGpuInstancePlacement_t *placements,    \
	   unsigned int *count))                                                                   \
	X(nvmlReturn_t, nvmlDeviceGetGpuInstanceProfileInfo,                                       \
	  (nvmlDevice_t device, unsigned int profile, nvmlGpuInstanceProfileInfo_t *info))         \
	X(nvmlReturn_t, nvmlDeviceGetGpuInstanceProfileInfoV,                                      \
	  (nvmlDevice_t device, unsigned int profile, nvmlGpuInstanceProfileInfo_v2_t *info))      \
	X(nvmlReturn_t, nvmlDeviceGetGpuInstanceRemainingCapacity,                                 \
	  (nvmlDevice_t device, unsigned int profileId, unsigned int *count))                      \
	X(nvmlReturn_t, nvmlDeviceGetGpuInstances,                                                 \
	  (nvmlDevice_t device, unsigned int profileId, nvmlGpuInstance_t *gpuInstances,           \
	   unsigned int *count))                                                                   \
	X(nvmlReturn_t, nvmlDeviceGetGpuOperationMode,                                             \
	  (nvmlDevice_t device, nvmlGpuOperationMode_t * current,                                  \
	   nvmlGpuOperationMode_t * pending))                                                      \
	X(nvmlReturn_t, nvmlDeviceGetGridLicensableFeatures_v4,                                    \
	  (nvmlDevice_t device, nvmlGridLicensableFeatures_t * pGridLicensableFeatures))           \
	X(nvmlReturn_t, nvmlDeviceGetGspFirmwareMode,                                              \
	  (nvmlDevice_t device, unsigned int *isEnabled, unsigned int *defaultMode))               \
	X(nvmlReturn_t, nvmlDeviceGetGspFirmwareVersion, (nvmlDevice_t device, char *version))     \
	X(nvmlReturn_t, nvmlDeviceGetHostVgpuMode,                                                 \
	  (nvmlDevice_t device, nvmlHostVgpuMode_t * pHostVgpuMode))                               \
	X(nvmlReturn_t, nvmlDeviceGetInforomConfigurationChecksum,                                 \
	  (nvmlDevice_t device, unsigned int *checksum))                                           \
	X(nvmlReturn_t, nvmlDeviceGetInforomImageVersion,                                          \
	  (nvmlDevice_t device, char *version, unsigned int length))                               \
	X(nvmlReturn_t, nvmlDeviceGetInforomVersion,                                               \
	  (nvmlDevice_t device, nvmlInforomObject_t object, char *version, unsigned int length))   \
	X(nvmlReturn_t, nvmlDeviceGetIrqNum, (nvmlDevice_t device, unsigned int *irqNum))          \
	X(nvmlReturn_t, nvmlDeviceGetLastBBXFlushTime,                                             \
	  (nvmlDevice_t device, unsigned long long *timestamp, unsigned long *durationUs))         \
	X(nvmlReturn_t, nvmlDeviceGetMemClkMinMaxVfOffset,                                         \
	  (nvmlDevice_t device, int *minOffset, int *maxOffset))                                   \
	X(nvmlReturn_t, nvmlDeviceGetMemClkVfOffset, (nvmlDevice_t device, int *offset))           \
	X(nvmlReturn_t, nvmlDeviceGetMinMaxClockOfPState,                                          \
	  (nvmlDevice_t device, nvmlClockType_t type, nvmlPstates_t pstate,                        \
	   unsigned int *minClockMHz, unsigned int *maxClockMHz))                                  \
	X(nvmlReturn_t, nvmlDeviceGetModuleId, (nvmlDevice_t device, unsigned int *moduleId))      \
	X(nvmlReturn_t, nvmlDeviceGetNumGpuCores, (nvmlDevice_t device, unsigned int *numCores))   \
	X(nvmlReturn_t, nvmlDeviceGetNvLinkCapability,                                             \
	  (nvmlDevice_t device, unsigned int link, nvmlNvLinkCapability_t capability,              \
	   unsigned int *capResult))                                                               \
	X(nvmlReturn_t, nvmlDeviceGetNvLinkErrorCounter,                                           \
	  (nvmlDevice_t device, unsigned int link, nvmlNvLinkErrorCounter_t counter,               \
	   unsigned long long *counterValue))                                                      \
	X(nvmlReturn_t, nvmlDeviceGetNvLinkUtilizationControl,                                     \
	  (nvmlDevice_t device, unsigned int link, unsigned int counter,                           \
	   nvmlNvLinkUtilizationControl_t *control))                                               \
	X(nvmlReturn_t, nvmlDeviceGetNvLinkUtilizationCounter,                                     \
	  (nvmlDevice_t device, unsigned int link, unsigned int counter,                           \
	   unsigned long long *rxcounter, unsigned long long *txcounter))                          \
	X(nvmlReturn_t, nvmlDeviceGetPciInfoExt, (nvmlDevice_t device, nvmlPciInfoExt_t * pci))    \
	X(nvmlReturn_t, nvmlDeviceGetPgpuMetadataString,                                           \
	  (nvmlDevice_t device, char *pgpuMetadata, unsigned int *bufferSize))                     \
	X(nvmlReturn_t, nvmlDeviceGetRetiredPages_v2,                                              \
	  (nvmlDevice_t device, nvmlPageRetirementCause_t cause, unsigned int *pageCount,          \
	   unsigned long long *addresses, unsigned long long *timestamps))                         \
	X(nvmlReturn_t, nvmlDeviceGetSramEccErrorStatus,                                           \
	  (nvmlDevice_t device, nvmlEccSramErrorStatus_t * status))                                \
	X(nvmlReturn_t, nvmlDeviceGetSupportedGraphicsClocks,                                      \
	  (nvmlDevice_t device, unsigned int memoryClockMHz, unsigned int *count,                  \
	   unsigned int *clocksMHz))                                                               \
	X(nvmlReturn_t, nvmlDeviceGetSupportedMemoryClocks,                                        \
	  (nvmlDevice_t device, unsigned int *count, unsigned int *clocksMHz))                     \
	X(nvmlReturn_t, nvmlDeviceGetSupportedVgpus,                                               \
	  (nvmlDevice_t device, unsigned int *vgpuCount, nvmlVgpuTypeId_t *vgpuTypeIds))           \
	X(nvmlReturn_t, nvmlDeviceGetThermalSettings,                                              \
	  (nvmlDevice_t device, unsigned int sensorIndex,                                          \
	   nvmlGpuThermalSettings_t *pThermalSettings))                                            \
	X(nvmlReturn_t, nvmlDeviceGetVgpuCapabilities,                                             \
	  (nvmlDevice_t device, nvmlDeviceVgpuCapability_t capability, unsigned int *capResult))   \
	X(nvmlReturn_t, nvmlDeviceGetVgpuHeterogeneousMode,                                        \
	  (nvmlDevice_t device, nvmlVgpuHeterogeneousMode_t * pHeterogeneousMode))                 \
	X(nvmlReturn_t, nvmlDeviceGetVgpuInstancesUtilizationInfo,                                 \
	  (nvmlDevice_t device, nvmlVgpuInstancesUtilizationInfo_t * vgpuUtilInfo))                \
	X(nvmlReturn_t, nvmlDeviceGetVgpuMetadata,                                                 \
	  (nvmlDevice_t device, nvmlVgpuPgpuMetadata_t * pgpuMetadata, unsigned int *bufferSize))  \
	X(nvmlReturn_t, nvmlDeviceGetVgpuProcessUtilization,                                       \
	  (nvmlDevice_t device, unsigned long long lastSeenTimeStamp,                              \
	   unsigned int *vgpuProcessSamplesCount,                                                  \
	   nvmlVgpuProcessUtilizationSample_t *utilizationSamples))                                \
	X(nvmlReturn_t, nvmlDeviceGetVgpuProcessesUtilizationInfo,                                 \
	  (nvmlDevice_t device, nvmlVgpuProcessesUtilizationInfo_t * vgpuProcUtilInfo))            \
	X(nvmlReturn_t, nvmlDeviceGetVgpuSchedulerCapabilities,                                    \
	  (nvmlDevice_t device, nvmlVgpuSchedulerCapabilities_t * pCapabilities))                  \
	X(nvmlReturn_t, nvmlDeviceGetVgpuSchedulerLog,                                             \
	  (nvmlDevice_t device, nvmlVgpuSchedulerLog_t * pSchedulerLog))                           \
	X(nvmlReturn_t, nvmlDeviceGetVgpuSchedulerState,                                           \
	  (nvmlDevice_t device, nvmlVgpuSchedulerGetState_t * pSchedulerState))                    \
	X(nvmlReturn_t, nvmlDeviceGetVgpuTypeCreatablePlacements,                                  \
	  (nvmlDevice_t device, nvmlVgpuTypeId_t vgpuTypeId,                                       \
	   nvmlVgpuPlacementList_t * pPlacementList))                                              \
	X(nvmlReturn_t, nvmlDeviceGetVgpuTypeSupportedPlacements,                                  \
	  (nvmlDevice_t device, nvmlVgpuTypeId_t vgpuTypeId,                                       \
	   nvmlVgpuPlacementList_t * pPlacementList))                                              \
	X(nvmlReturn_t, nvmlDeviceGetVgpuUtilization,                                              \
	  (nvmlDevice_t device, unsigned long long lastSeenTimeStamp,                              \
	   nvmlValueType_t *sampleValType, unsigned int *vgpuInstanceSamplesCount,                 \
	   nvmlVgpuInstanceUtilizationSample_t *utilizationSamples))                               \
	X(nvmlReturn_t, nvmlDeviceGetViolationStatus,                                              \
	  (nvmlDevice_t device, nvmlPerfPolicyType_t perfPolicyType,                               \
	   nvmlViolationTime_t * violTime))                                                        \
	X(nvmlReturn_t, nvmlDeviceGetVirtualizationMode,                                           \
	  (nvmlDevice_t device, nvmlGpuVirtualizationMode_t * pVirtualMode))                       \
	X(nvmlReturn_t, nvmlDeviceResetApplicationsClocks, (nvmlDevice_t device))                  \
	X(nvmlReturn_t, nvmlDeviceResetGpuLockedClocks, (nvmlDevice_t device))                     \
	X(nvmlReturn_t, nvmlDeviceResetMemoryLockedClocks, (nvmlDevice_t device))                  \
	X(nvmlReturn_t, nvmlDeviceResetNvLinkErrorCounters,                                        \
	  (nvmlDevice_t device, unsigned int link))                                                \
	X(nvmlReturn_t, nvmlDeviceResetNvLinkUtilizationCounter,                                   \
	  (nvmlDevice_t device, unsigned int link, unsigned int counter))                          \
	X(nvmlReturn_t, nvmlDeviceSetAPIRestriction,                                               \
	  (nvmlDevice_t device, nvmlRestrictedAPI_t apiType, nvmlEnableState_t isRestricted))      \
	X(nvmlReturn_t, nvmlDeviceSetAccountingMode,                                               \
	  (nvmlDevice_t device, nvmlEnableState_t mode))                                           \
	X(nvmlReturn_t, nvmlDeviceSetApplicationsClocks,                                           \
	  (nvmlDevice_t device, unsigned int memClockMHz, unsigned int graphicsClockMHz))          \
	X(nvmlReturn_t, nvmlDeviceSetAutoBoostedClocksEnabled,                                     \
	  (nvmlDevice_t device, nvmlEnableState_t enabled))                                        \
	X(nvmlReturn_t, nvmlDeviceSetClockOffsets,                                                 \
	  (nvmlDevice_t device, nvmlClockOffset_t * info))                                         \
	X(nvmlReturn_t, nvmlDeviceSetComputeMode, (nvmlDevice_t device, nvmlComputeMode_t mode))   \
	X(nvmlReturn_t, nvmlDeviceSetConfComputeUnprotectedMemSize,                                \
	  (nvmlDevice_t device, unsigned long long sizeKiB))                                       \
	X(nvmlReturn_t, nvmlDeviceSetCpuAffinity, (nvmlDevice_t device))                           \
	X(nvmlReturn_t, nvmlDeviceSetDefaultAutoBoostedClocksEnabled,                              \
	  (nvmlDevice_t device, nvmlEnableState_t enabled, unsigned int flags))                    \
	X(nvmlReturn_t, nvmlDeviceSetDefaultFanSpeed_v2, (nvmlDevice_t device, unsigned int fan))  \
	X(nvmlReturn_t, nvmlDeviceSetDriverModel,                                                  \
	  (nvmlDevice_t device, nvmlDriverModel_t driverModel, unsigned int flags))                \
	X(nvmlReturn_t, nvmlDeviceSetEccMode, (nvmlDevice_t device, nvmlEnableState_t ecc))        \
	X(nvmlReturn_t, nvmlDeviceSetFanControlPolicy,                                             \
	  (nvmlDevice_t device, unsigned int fan, nvmlFanControlPolicy_t policy))                  \
	X(nvmlReturn_t, nvmlDeviceSetFanSpeed_v2,                                                  \
	  (nvmlDevice_t device, unsigned int fan, unsigned int speed))                             \
	X(nvmlReturn_t, nvmlDeviceSetGpcClkVfOffset, (nvmlDevice_t device, int offset))            \
	X(nvmlReturn_t, nvmlDeviceSetGpuLockedClocks,                                              \
	  (nvmlDevice_t device, unsigned int minGpuClockMHz, unsigned int maxGpuClockMHz))         \
	X(nvmlReturn_t, nvmlDeviceSetGpuOperationMode,                                             \
	  (nvmlDevice_t device, nvmlGpuOperationMode_t mode))                                      \
	X(nvmlReturn_t, nvmlDeviceSetMemClkVfOffset, (nvmlDevice_t device, int offset))            \
	X(nvmlReturn_t, nvmlDeviceSetMemoryLockedClocks,                                           \
	  (nvmlDevice_t device, unsigned int minMemClockMHz, unsigned int maxMemClockMHz))         \
	X(nvmlReturn_t, nvmlDeviceSetMigMode,                                                      \
	  (nvmlDevice_t device, unsigned int mode, nvmlReturn_t *activationStatus))                \
	X(nvmlReturn_t, nvmlDeviceSetNvLinkDeviceLowPowerThreshold,                                \
	  (nvmlDevice_t device, nvmlNvLinkPowerThres_t * info))                                    \
	X(nvmlReturn_t, nvmlDeviceSetNvLinkUtilizationControl,                                     \
	  (nvmlDevice_t device, unsigned int link, unsigned int counter,                           \
	   nvmlNvLinkUtilizationControl_t *control, unsigned int reset))                           \
	X(nvmlReturn_t, nvmlDeviceSetPersistenceMode,                                              \
	  (nvmlDevice_t device, nvmlEnableState_t mode))                                           \
	X(nvmlReturn_t, nvmlDeviceSetPowerManagementLimit,                                         \
	  (nvmlDevice_t device, unsigned int limit))                                               \
	X(nvmlReturn_t, nvmlDeviceSetPowerManagementLimit_v2,                                      \
	  (nvmlDevice_t device, nvmlPowerValue_v2_t * powerValue))                                 \
	X(nvmlReturn_t, nvmlDeviceSetTemperatureThreshold,                                         \
	  (nvmlDevice_t device, nvmlTemperatureThresholds_t thresholdType, int *temp))             \
	X(nvmlReturn_t, nvmlDeviceSetVgpuCapabilities,                                             \
	  (nvmlDevice_t device, nvmlDeviceVgpuCapability_t capability, nvmlEnableState_t state))   \
	X(nvmlReturn_t, nvmlDeviceSetVgpuHeterogeneousMode,                                        \
	  (nvmlDevice_t device, const nvmlVgpuHeterogeneousMode_t *pHeterogeneousMode))            \
	X(nvmlReturn_t, nvmlDeviceSetVgpuSchedulerState,                                           \
	  (nvmlDevice_t device, nvmlVgpuSchedulerSetState_t * pSchedulerState))                    \
	X(nvmlReturn_t, nvmlDeviceSetVirtualizationMode,                                           \
	  (nvmlDevice_t device, nvmlGpuVirtualizationMode_t virtualMode))                          \
	X(nvmlReturn_t, nvmlDeviceValidateInforom, (nvmlDevice_t device))                          \
	X(nvmlReturn_t, nvmlGpmMigSampleGet,                                                       \
	  (nvmlDevice_t device, unsigned int gpuInstanceId, nvmlGpmSample_t gpmSample))            \
	X(nvmlReturn_t, nvmlGpmSetStreamingEnabled, (nvmlDevice_t device, unsigned int state))     \
	X(nvmlReturn_t, nvmlVgpuTypeGetMaxInstances,                                               \
	  (nvmlDevice_t device, nvmlVgpuTypeId_t vgpuTypeId, unsigned int *vgpuInstanceCount))

#define NVML_UNANSWERED_ENTRY_POINTS(X)                                                            \
	X(nvmlReturn_t, nvmlComputeInstanceDestroy, (nvmlComputeInstance_t computeInstance))       \
	X(nvmlReturn_t, nvmlComputeInstanceGetInfo_v2,                                             \
	  (nvmlComputeInstance_t computeInstance, nvmlComputeInstanceInfo_t * info))               \
	X(nvmlReturn_t, nvmlDeviceDiscoverGpus, (nvmlPciInfo_t * pciInfo))                         \
	X(nvmlReturn_t, nvmlDeviceGetHandleBySerial, (const char *serial, nvmlDevice_t *device))   \
	X(nvmlReturn_t, nvmlDeviceModifyDrainState,                                                \
	  (nvmlPciInfo_t * pciInfo, nvmlEnableState_t newState))                                   \
	X(nvmlReturn_t, nvmlDeviceQueryDrainState,                                                 \
	  (nvmlPciInfo_t * pciInfo, nvmlEnableState_t * currentState))                             \
	X(nvmlReturn_t, nvmlDeviceRemoveGpu, (nvmlPciInfo_t * pciInfo))                            \
	X(nvmlReturn_t, nvmlGetExcludedDeviceInfoByIndex,                                          \
	  (unsigned int index, nvmlExcludedDeviceInfo_t *info))                                    \
	X(nvmlReturn_t, nvmlGetVgpuCompatibility,                                                  \
	  (nvmlVgpuMetadata_t * vgpuMetadata, nvmlVgpuPgpuMetadata_t * pgpuMetadata,               \
	   nvmlVgpuPgpuCompatibility_t * compatibilityInfo))                                       \
	X(nvmlReturn_t, nvmlGetVgpuDriverCapabilities,                                             \
	  (nvmlVgpuDriverCapability_t capability, unsigned int *capResult))                        \
	X(nvmlReturn_t, nvmlGetVgpuVersion,                                                        \
	  (nvmlVgpuVersion_t * supported, nvmlVgpuVersion_t * current))                            \
	X(nvmlReturn_t, nvmlGpuInstanceCreateComputeInstance,                                      \
	  (nvmlGpuInstance_t gpuInstance, unsigned int profileId,                                  \
	   nvmlComputeInstance_t *computeInstance))                                                \
	X(nvmlReturn_t, nvmlGpuInstanceCreateComputeInstanceWithPlacement,                         \
	  (nvmlGpuInstance_t gpuInstance, unsigned int profileId,                                  \
	   const nvmlComputeInstancePlacement_t *placement,                                        \
	   nvmlComputeInstance_t *computeInstance))                                                \
	X(nvmlReturn_t, nvmlGpuInstanceDestroy, (nvmlGpuInstance_t gpuInstance))                   \
	X(nvmlReturn_t, nvmlGpuInstanceGetComputeInstanceById,                                     \
	  (nvmlGpuInstance_t gpuInstance, unsigned int id,                                         \
	   nvmlComputeInstance_t *computeInstance))                                                \
	X(nvmlReturn_t, nvmlGpuInstanceGetComputeInstancePossiblePlacements,                       \
	  (nvmlGpuInstance_t gpuInstance, unsigned int profileId,                                  \
	   nvmlComputeInstancePlacement_t *placements, unsigned int *count))                       \
	X(nvmlReturn_t, nvmlGpuInstanceGetComputeInstanceProfileInfo,                              \
	  (nvmlGpuInstance_t gpuInstance, unsigned int profile, unsigned int engProfile,           \
	   nvmlComputeInstanceProfileInfo_t *info))                                                \
	X(nvmlReturn_t, nvmlGpuInstanceGetComputeInstanceProfileInfoV,                             \
	  (nvmlGpuInstance_t gpuInstance, unsigned int profile, unsigned int engProfile,           \
	   nvmlComputeInstanceProfileInfo_v2_t *info))                                             \
	X(nvmlReturn_t, nvmlGpuInstanceGetComputeInstanceRemainingCapacity,                        \
	  (nvmlGpuInstance_t gpuInstance, unsigned int profileId, unsigned int *count))            \
	X(nvmlReturn_t, nvmlGpuInstanceGetComputeInstances,                                        \
	  (nvmlGpuInstance_t gpuInstance, unsigned int profileId,                                  \
	   nvmlComputeInstance_t *computeInstances, unsigned int *count))                          \
	X(nvmlReturn_t, nvmlGpuInstanceGetInfo,                                                    \
	  (nvmlGpuInstance_t gpuInstance, nvmlGpuInstanceInfo_t * info))                           \
	X(nvmlReturn_t, nvmlSetVgpuVersion, (nvmlVgpuVersion_t * vgpuVersion))                     \
	X(nvmlReturn_t, nvmlSystemGetConfComputeCapabilities,                                      \
	  (nvmlConfComputeSystemCaps_t * capabilities))                                            \
	X(nvmlReturn_t, nvmlSystemGetConfComputeGpusReadyState, (unsigned int *isAcceptingWork))   \
	X(nvmlReturn_t, nvmlSystemGetConfComputeKeyRotationThresholdInfo,                          \
	  (nvmlConfComputeGetKeyRotationThresholdInfo_t * pKeyRotationThrInfo))                    \
	X(nvmlReturn_t, nvmlSystemGetConfComputeSettings,                                          \
	  (nvmlSystemConfComputeSettings_t * settings))                                            \
	X(nvmlReturn_t, nvmlSystemGetConfComputeState, (nvmlConfComputeSystemState_t * state))     \
	X(nvmlReturn_t, nvmlSystemGetDriverBranch,                                                 \
	  (nvmlSystemDriverBranchInfo_t * branchInfo, unsigned int length))                        \
	X(nvmlReturn_t, nvmlSystemGetNvlinkBwMode, (unsigned int *nvlinkBwMode))                   \
	X(nvmlReturn_t, nvmlSystemGetTopologyGpuSet,                                               \
	  (unsigned int cpuNumber, unsigned int *count, nvmlDevice_t *deviceArray))                \
	X(nvmlReturn_t, nvmlSystemSetConfComputeGpusReadyState, (unsigned int isAcceptingWork))    \
	X(nvmlReturn_t, nvmlSystemSetConfComputeKeyRotationThresholdInfo,                          \
	  (nvmlConfComputeSetKeyRotationThresholdInfo_t * pKeyRotationThrInfo))                    \
	X(nvmlReturn_t, nvmlSystemSetNvlinkBwMode, (unsigned int nvlinkBwMode))                    \
	X(nvmlReturn_t, nvmlUnitGetDevices,                                                        \
	  (nvmlUnit_t unit, unsigned int *deviceCount, nvmlDevice_t *devices))                     \
	X(nvmlReturn_t, nvmlUnitGetFanSpeedInfo,                                                   \
	  (nvmlUnit_t unit, nvmlUnitFanSpeeds_t * fanSpeeds))                                      \
	X(nvmlReturn_t, nvmlUnitGetHandleByIndex, (unsigned int index, nvmlUnit_t *unit))          \
	X(nvmlReturn_t, nvmlUnitGetLedState, (nvmlUnit_t unit, nvmlLedState_t * state))            \
	X(nvmlReturn_t, nvmlUnitGetPsuInfo, (nvmlUnit_t unit, nvmlPSUInfo_t * psu))                \
	X(nvmlReturn_t, nvmlUnitGetTemperature,                                                    \
	  (nvmlUnit_t unit, unsigned int type, unsigned int *temp))                                \
	X(nvmlReturn_t, nvmlUnitGetUnitInfo, (nvmlUnit_t unit, nvmlUnitInfo_t * info))             \
	X(nvmlReturn_t, nvmlUnitSetLedState, (nvmlUnit_t unit, nvmlLedColor_t color))              \
	X(nvmlReturn_t, nvmlVgpuInstanceClearAccountingPids, (nvmlVgpuInstance_t vgpuInstance))    \
	X(nvmlReturn_t, nvmlVgpuInstanceGetAccountingMode,                                         \
	  (nvmlVgpuInstance_t vgpuInstance, nvmlEnableState_t * mode))                             \
	X(nvmlReturn_t, nvmlVgpuInstanceGetAccountingPids,                                         \
	  (nvmlVgpuInstance_t vgpuInstance, unsigned int *count, unsigned int *pids))              \
	X(nvmlReturn_t, nvmlVgpuInstanceGetAccountingStats,                                        \
	  (nvmlVgpuInstance_t vgpuInstance, unsigned int pid, nvmlAccountingStats_t *stats))       \
	X(nvmlReturn_t, nvmlVgpuInstanceGetEccMode,                                                \
	  (nvmlVgpuInstance_t vgpuInstance, nvmlEnableState_t * eccMode))                          \
	X(nvmlReturn_t, nvmlVgpuInstanceGetEncoderCapacity,                                        \
	  (nvmlVgpuInstance_t vgpuInstance, unsigned int *encoderCapacity))                        \
	X(nvmlReturn_t, nvmlVgpuInstanceGetEncoderSessions,                                        \
	  (nvmlVgpuInstance_t vgpuInstance, unsigned int *sessionCount,                            \
	   nvmlEncoderSessionInfo_t *sessionInfo))                                                 \
	X(nvmlReturn_t, nvmlVgpuInstanceGetEncoderStats,                                           \
	  (nvmlVgpuInstance_t vgpuInstance, unsigned int *sessionCount, unsigned int *averageFps,  \
	   unsigned int *averageLatency))                                                          \
	X(nvmlReturn_t, nvmlVgpuInstanceGetFBCSessions,                                            \
	  (nvmlVgpuInstance_t vgpuInstance, unsigned int *sessionCount,                            \
	   nvmlFBCSessionInfo_t *sessionInfo))                                                     \
	X(nvmlReturn_t, nvmlVgpuInstanceGetFBCStats,                                               \
	  (nvmlVgpuInstance_t vgpuInstance, nvmlFBCStats_t * fbcStats))                            \
	X(nvmlReturn_t, nvmlVgpuInstanceGetFbUsage,                                                \
	  (nvmlVgpuInstance_t vgpuInstance, unsigned long long *fbUsage))                          \
	X(nvmlReturn_t, nvmlVgpuInstanceGetFrameRateLimit,                                         \
	  (nvmlVgpuInstance_t vgpuInstance, unsigned int *frameRateLimit))                         \
	X(nvmlReturn_t, nvmlVgpuInstanceGetGpuInstanceId,                                          \
	  (nvmlVgpuInstance_t vgpuInstance, unsigned int *gpuInstanceId))                          \
	X(nvmlReturn_t, nvmlVgpuInstanceGetGpuPciId,                                               \
	  (nvmlVgpuInstance_t vgpuInstance, char *vgpuPciId, unsigned int *length))                \
	X(nvmlReturn_t, nvmlVgpuInstanceGetLicenseInfo_v2,                                         \
	  (nvmlVgpuInstance_t vgpuInstance, nvmlVgpuLicenseInfo_t * licenseInfo))                  \
	X(nvmlReturn_t, nvmlVgpuInstanceGetLicenseStatus,                                          \
	  (nvmlVgpuInstance_t vgpuInstance, unsigned int *licensed))                               \
	X(nvmlReturn_t, nvmlVgpuInstanceGetMdevUUID,                                               \
	  (nvmlVgpuInstance_t vgpuInstance, char *mdevUuid, unsigned int size))                    \
	X(nvmlReturn_t, nvmlVgpuInstanceGetMetadata,                                               \
	  (nvmlVgpuInstance_t vgpuInstance, nvmlVgpuMetadata_t * vgpuMetadata,                     \
	   unsigned int *bufferSize))                                                              \
	X(nvmlReturn_t, nvmlVgpuInstanceGetPlacementId,                                            \
	  (nvmlVgpuInstance_t vgpuInstance, nvmlVgpuPlacementId_t * pPlacement))                   \
	X(nvmlReturn_t, nvmlVgpuInstanceGetType,                                                   \
	  (nvmlVgpuInstance_t vgpuInstance, nvmlVgpuTypeId_t * vgpuTypeId))                        \
	X(nvmlReturn_t, nvmlVgpuInstanceGetUUID,                                                   \
	  (nvmlVgpuInstance_t vgpuInstance, char *uuid, unsigned int size))                        \
	X(nvmlReturn_t, nvmlVgpuInstanceGetVmDriverVersion,                                        \
	  (nvmlVgpuInstance_t vgpuInstance, char *version, unsigned int length))                   \
	X(nvmlReturn_t, nvmlVgpuInstanceGetVmID,                                                   \
	  (nvmlVgpuInstance_t vgpuInstance, char *vmId, unsigned int size,                         \
	   nvmlVgpuVmIdType_t *vmIdType))                                                          \
	X(nvmlReturn_t, nvmlVgpuInstanceSetEncoderCapacity,                                        \
	  (nvmlVgpuInstance_t vgpuInstance, unsigned int encoderCapacity))                         \
	X(nvmlReturn_t, nvmlVgpuTypeGetBAR1Info,                                                   \
	  (nvmlVgpuTypeId_t vgpuTypeId, nvmlVgpuTypeBar1Info_t * bar1Info))                        \
	X(nvmlReturn_t, nvmlVgpuTypeGetCapabilities,                                               \
	  (nvmlVgpuTypeId_t vgpuTypeId, nvmlVgpuCapability_t capability, unsigned int *capResult)) \
	X(nvmlReturn_t, nvmlVgpuTypeGetClass,                                                      \
	  (nvmlVgpuTypeId_t vgpuTypeId, char *vgpuTypeClass, unsigned int *size))                  \
	X(nvmlReturn_t, nvmlVgpuTypeGetDeviceID,                                                   \
	  (nvmlVgpuTypeId_t vgpuTypeId, unsigned long long *deviceID,                              \
	   unsigned long long *subsystemID))                                                       \
	X(nvmlReturn_t, nvmlVgpuTypeGetFbReservation,                                              \
	  (nvmlVgpuTypeId_t vgpuTypeId, unsigned long long *fbReservation))                        \
	X(nvmlReturn_t, nvmlVgpuTypeGetFrameRateLimit,                                             \
	  (nvmlVgpuTypeId_t vgpuTypeId, unsigned int *frameRateLimit))                             \
	X(nvmlReturn_t, nvmlVgpuTypeGetFramebufferSize,                                            \
	  (nvmlVgpuTypeId_t vgpuTypeId, unsigned long long *fbSize))                               \
	X(nvmlReturn_t, nvmlVgpuTypeGetGpuInstanceProfileId,                                       \
	  (nvmlVgpuTypeId_t vgpuTypeId, unsigned int *gpuInstanceProfileId))                       \
	X(nvmlReturn_t, nvmlVgpuTypeGetGspHeapSize,                                                \
	  (nvmlVgpuTypeId_t vgpuTypeId, unsigned long long *gspHeapSize))                          \
	X(nvmlReturn_t, nvmlVgpuTypeGetLicense,                                                    \
	  (nvmlVgpuTypeId_t vgpuTypeId, char *vgpuTypeLicenseString, unsigned int size))           \
	X(nvmlReturn_t, nvmlVgpuTypeGetMaxInstancesPerVm,                                          \
	  (nvmlVgpuTypeId_t vgpuTypeId, unsigned int *vgpuInstanceCountPerVm))                     \
	X(nvmlReturn_t, nvmlVgpuTypeGetName,                                                       \
	  (nvmlVgpuTypeId_t vgpuTypeId, char *vgpuTypeName, unsigned int *size))                   \
	X(nvmlReturn_t, nvmlVgpuTypeGetNumDisplayHeads,                                            \
	  (nvmlVgpuTypeId_t vgpuTypeId, unsigned int *numDisplayHeads))                            \
	X(nvmlReturn_t, nvmlVgpuTypeGetResolution,                                                 \
	  (nvmlVgpuTypeId_t vgpuTypeId, unsigned int displayIndex, unsigned int *xdim,             \
	   unsigned int *ydim))

#endif
