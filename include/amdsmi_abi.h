/*
 * amdsmi_abi.h - gpuwhy's own declarations of the AMD SMI library subset it uses.
 *
 * No amdsmi.h is needed at build time. Values, struct layouts and symbol
 * names are facts taken from AMD's public include/amd_smi/amdsmi.h
 * (github.com/ROCm/amdsmi, later ROCm/rocm-systems' projects/amdsmi), library
 * versions 24.5 (ROCm 6.1) to 24.7 (ROCm 6.3), 25.x (ROCm 6.4) and 26.x
 * (ROCm 7): every layout, value and signature used here is the same in all
 * of them but amdsmi_version_t itself (docs/amd.md, "amd-smi"), checked on
 * x86-64. Up to 24.x the version is year.major.minor.release and "major"
 * changes with every header change; 25.x keeps that struct but reports
 * major.minor.release (major 25, the year member no longer used); 26.x drops
 * the year member, and "major" changes with every header change that breaks
 * the ABI. gpuwhy reads structs only from a library whose version it knows
 * (amdsmi_version_read in src/gpu/amdsmi.c) and nothing from any other.
 *
 * Shared by the device layer (src/gpu/amdsmi.c, which dlopen()s the library)
 * and the simulated library (sim/amdsmi_sim.c, which implements these entry
 * points).
 */
#ifndef GPUWHY_AMDSMI_ABI_H
#define GPUWHY_AMDSMI_ABI_H

#include <stddef.h>
#include <stdint.h>

/* amdsmi_status_t: a C enum whose largest value is 0xFFFFFFFF (4 bytes, unsigned). */
typedef uint32_t amdsmi_status_t;
enum {
	AMDSMI_STATUS_SUCCESS = 0,
	AMDSMI_STATUS_INVAL = 1,
	AMDSMI_STATUS_NOT_SUPPORTED = 2,
	AMDSMI_STATUS_NOT_YET_IMPLEMENTED = 3,
	AMDSMI_STATUS_FAIL_LOAD_MODULE = 4,
	AMDSMI_STATUS_API_FAILED = 7,
	AMDSMI_STATUS_NO_PERM = 10,
	AMDSMI_STATUS_OUT_OF_RESOURCES = 15,
	AMDSMI_STATUS_INIT_ERROR = 18,
	AMDSMI_STATUS_NOT_FOUND = 31,
	AMDSMI_STATUS_NOT_INIT = 32,
	AMDSMI_STATUS_DRIVER_NOT_LOADED = 34,
	AMDSMI_STATUS_NO_DATA = 40,
	AMDSMI_STATUS_UNKNOWN_ERROR = 0xFFFFFFFFu,
};

/* amdsmi_init_flags_t (passed as uint64_t). */
enum { AMDSMI_INIT_AMD_GPUS = 1 << 1 };

/* processor_type_t. */
typedef uint32_t amdsmi_processor_type_t;
enum { AMDSMI_PROCESSOR_TYPE_AMD_GPU = 1 };

typedef void *amdsmi_processor_handle;
typedef void *amdsmi_socket_handle;

/* The library versions whose layouts are these: 24.5 to 24.7, 25.x, 26.x. */
#define AMDSMI_ABI_V24_MAJOR_MIN 5u
#define AMDSMI_ABI_V24_MAJOR_MAX 7u
#define AMDSMI_ABI_V25 25u
#define AMDSMI_ABI_V26 26u
/* The soname of ROCm 6.1 to 6.3 (SOVERSION is the first number of the version). */
#define AMDSMI_ABI_SONAME "libamd_smi.so.24"

/* amdsmi_version_t of 24.x and 25.x (25.x no longer fills year). */
typedef struct {
	uint32_t year; /* last two digits of the year: 24 */
	uint32_t major;
	uint32_t minor;
	uint32_t release;
	const char *build;
} amdsmi_version_t;
_Static_assert(sizeof(amdsmi_version_t) == 24, "amdsmi_version_t size");
_Static_assert(offsetof(amdsmi_version_t, build) == 16, "amdsmi_version_t.build");

/* amdsmi_version_t of 26.x: no year; as large, build where it was. */
typedef struct {
	uint32_t major; /* 26 */
	uint32_t minor;
	uint32_t release;
	const char *build;
} amdsmi_version26_t;
_Static_assert(sizeof(amdsmi_version26_t) == 24, "amdsmi_version26_t size");
_Static_assert(offsetof(amdsmi_version26_t, build) == 16, "amdsmi_version26_t.build");

/*
 * amdsmi_bdf_t is a union of a uint64_t and bit fields, lowest first:
 * function 3 bits, device 5, bus 8, domain 48. Read as the integer so the
 * bit-field layout of a compiler never matters.
 */
typedef uint64_t amdsmi_bdf_t;
#define AMDSMI_BDF_FUNCTION(b) ((unsigned)((b)&0x7u))
#define AMDSMI_BDF_DEVICE(b) ((unsigned)(((b) >> 3) & 0x1fu))
#define AMDSMI_BDF_BUS(b) ((unsigned)(((b) >> 8) & 0xffu))
#define AMDSMI_BDF_DOMAIN(b) ((unsigned long long)((b) >> 16))
#define AMDSMI_BDF_MAKE(dom, bus, dev, fn)                                                         \
	(((uint64_t)(dom) << 16) | ((uint64_t)((bus)&0xffu) << 8) |                                \
	 ((uint64_t)((dev)&0x1fu) << 3) | (uint64_t)((fn)&0x7u))

typedef struct {
	uint64_t correctable_count;
	uint64_t uncorrectable_count;
	uint64_t deferred_count;
	uint64_t reserved[5];
} amdsmi_error_count_t;
_Static_assert(sizeof(amdsmi_error_count_t) == 64, "amdsmi_error_count_t size");

/*
 * amdsmi_proc_info_t of 24.x only, not read yet: 26.x widens name and
 * container_name to 256 bytes and adds cu_occupancy, 25.x is not checked.
 * Reading it needs the layout of each version first.
 */
#define AMDSMI_NORMAL_STRING_LENGTH 32
typedef struct {
	char name[AMDSMI_NORMAL_STRING_LENGTH];
	uint32_t pid;
	uint64_t mem; /* bytes */
	struct {
		uint64_t gfx; /* ns */
		uint64_t enc; /* ns */
		uint32_t reserved[12];
	} engine_usage;
	struct {
		uint64_t gtt_mem; /* bytes */
		uint64_t cpu_mem;
		uint64_t vram_mem;
		uint32_t reserved[10];
	} memory_usage;
	char container_name[AMDSMI_NORMAL_STRING_LENGTH];
	uint32_t reserved[4];
} amdsmi_proc_info_t;
_Static_assert(sizeof(amdsmi_proc_info_t) == 224, "amdsmi_proc_info_t size");
_Static_assert(offsetof(amdsmi_proc_info_t, pid) == 32, "amdsmi_proc_info_t.pid");
_Static_assert(offsetof(amdsmi_proc_info_t, mem) == 40, "amdsmi_proc_info_t.mem");
_Static_assert(offsetof(amdsmi_proc_info_t, memory_usage) == 112,
               "amdsmi_proc_info_t.memory_usage");
_Static_assert(offsetof(amdsmi_proc_info_t, container_name) == 176,
               "amdsmi_proc_info_t.container_name");

/*
 * The entry points, as X(return, name, (parameters)). REQ: without it the
 * library is not used at all; OPT: without it its field is n/a.
 */
#define AMDSMI_ABI_CALLS(REQ, OPT)                                                                 \
	REQ(amdsmi_init, (uint64_t init_flags))                                                    \
	REQ(amdsmi_shut_down, (void))                                                              \
	REQ(amdsmi_get_lib_version, (amdsmi_version_t * version))                                  \
	REQ(amdsmi_get_socket_handles, (uint32_t * count, amdsmi_socket_handle * handles))         \
	REQ(amdsmi_get_processor_handles,                                                          \
	    (amdsmi_socket_handle socket, uint32_t * count, amdsmi_processor_handle * handles))    \
	REQ(amdsmi_get_processor_type,                                                             \
	    (amdsmi_processor_handle h, amdsmi_processor_type_t * type))                           \
	REQ(amdsmi_get_gpu_device_bdf, (amdsmi_processor_handle h, amdsmi_bdf_t * bdf))            \
	OPT(amdsmi_get_energy_count, (amdsmi_processor_handle h, uint64_t * energy,                \
	                              float *resolution_uj, uint64_t *timestamp_ns))               \
	OPT(amdsmi_get_gpu_total_ecc_count, (amdsmi_processor_handle h, amdsmi_error_count_t * ec))

#endif
