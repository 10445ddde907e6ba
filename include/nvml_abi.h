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

#endif
