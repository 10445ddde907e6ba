/*
 * amdgpu.h - AMD GPUs read through the amdgpu kernel driver alone: sysfs,
 * hwmon and DRM fdinfo, no vendor library.
 *
 * Everything is read below a root directory ("" normally, a fixture tree in
 * tests), the way host/pcitopo reads sysfs: ROOT/sys/class/drm/cardN/device.
 * Processes are read from a proc root ("/proc" normally), like host/.
 *
 * Nothing here prints. A file that is missing or does not parse leaves its
 * value absent (ok[id] == 0), never 0: APUs, older kernels and boards without
 * a sensor simply have fewer values.
 *
 * Files: amdgpu.c (discovery, one reading of a card), amdgpu_parse.c (the
 * pure text parsers: pp_dpm_*, PCIe link speed, fdinfo), amdgpu_procs.c
 * (per-process VRAM and engine time from /proc/PID/fdinfo), amdgpu_metrics.c
 * (the binary gpu_metrics table, amdgpu_metrics.h), amdgpu_ras.c (RAS error
 * counts, amdgpu_ras.h); the topology between cards is in amdgpu.c too.
 */
#ifndef GPUWHY_GPU_AMDGPU_H
#define GPUWHY_GPU_AMDGPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu/amdgpu_metrics.h"

#define AMDGPU_VENDOR_ID 0x1002u
#define AMDGPU_MAX_CARDS 64

/* One AMD GPU found in sysfs: what does not change while it is bound. */
typedef struct {
	char card[16];        /* "card0" */
	char dev_path[512];   /* ROOT/sys/class/drm/card0/device */
	char hwmon_path[600]; /* its hwmon directory, "" when it has none */
	char bdf[16];         /* "0000:03:00.0" (sysfs spelling), "" when unknown */
	unsigned vendor, device, subsys_vendor, subsys_device, revision;
	bool ids_ok;           /* device and vendor read */
	char product_name[96]; /* board name from its FRU, "" when the board has none */
	char pci_name[128];    /* from ROOT's pci.ids (amdgpu_pciids.h), "" when not there */
	char unique_id[32];    /* hex serial of the ASIC, "" when unknown */
	uint64_t xgmi_hive;    /* xgmi_hive_info/xgmi_hive_id; 0 when in no XGMI hive */
} amdgpu_card;

/* The values of one reading; units in the names' comments. */
typedef enum {
	AMD_GPU_BUSY,    /* gpu_busy_percent, % */
	AMD_MEM_BUSY,    /* mem_busy_percent: memory controller activity, % */
	AMD_VRAM_TOTAL,  /* bytes */
	AMD_VRAM_USED,   /* bytes */
	AMD_GTT_TOTAL,   /* system memory the GPU maps, bytes */
	AMD_GTT_USED,    /* bytes */
	AMD_POWER_W,     /* hwmon power1_average, else power1_input */
	AMD_POWER_CAP_W, /* hwmon power1_cap */
	AMD_TEMP_EDGE,   /* degrees C, by tempN_label */
	AMD_TEMP_JUNCTION,
	AMD_TEMP_MEM,
	AMD_FAN_RPM,      /* fan1_input */
	AMD_FAN_PCT,      /* pwm1 against pwm1_max (255 when absent), % */
	AMD_SCLK_MHZ,     /* hwmon "sclk" frequency, else the current pp_dpm_sclk level */
	AMD_MCLK_MHZ,     /* hwmon "mclk" frequency, else the current pp_dpm_mclk level */
	AMD_SCLK_MAX_MHZ, /* highest pp_dpm_sclk level */
	AMD_MCLK_MAX_MHZ, /* highest pp_dpm_mclk level */
	AMD_PCIE_GEN,     /* current_link_speed as a PCIe generation */
	AMD_PCIE_WIDTH,   /* current_link_width, lanes */
	AMD_PCIE_GEN_MAX,
	AMD_PCIE_WIDTH_MAX,
	AMD_THROTTLE_REASONS, /* gpu_metrics indep_throttle_status as gpu_reasons.h bits */
	AMD_RAS_CE,           /* RAS correctable errors since the driver loaded, all blocks */
	AMD_RAS_UE,           /* RAS uncorrectable errors, likewise */
	/*
	 * The reasons AMD_THROTTLE_REASONS speaks for, as gpu_reasons.h bits; absent:
	 * every reason it can carry (indep_throttle_status says all four at once).
	 */
	AMD_THROTTLE_KNOWN,
	AMD__COUNT
} amdgpu_field;

typedef struct {
	double v[AMD__COUNT];
	uint8_t ok[AMD__COUNT];
	/*
	 * gpu_metrics v1.6's residency counters as read (resid.ok false on other
	 * tables): one reading gives no reasons; the device layer keeps the
	 * previous one per card and sets AMD_THROTTLE_REASONS from the change
	 * (amdgpu_residency_reasons).
	 */
	amdgpu_residency resid;
} amdgpu_values;

/*
 * The AMD GPUs of ROOT/sys/class/drm: entries named cardN exactly (render
 * nodes and connectors such as card0-DP-1 are skipped) whose device has
 * vendor 0x1002, one per PCI function, sorted by PCI address. Returns the
 * count (0 when none or no sysfs).
 */
int amdgpu_discover(const char *root, amdgpu_card *out, int max);

/* One reading of every value of one card; what cannot be read is absent. */
void amdgpu_read(const amdgpu_card *c, amdgpu_values *out);

/* The name of a field ("gpu_busy_percent"), for tests and messages. */
const char *amdgpu_field_name(amdgpu_field f);

/* ---- how two cards connect ---- */

/*
 * Whether a and b are linked by XGMI (AMD's Infinity Fabric between GPUs):
 * both in one hive, the same nonzero xgmi_hive_id. The driver gives every
 * GPU of a hive that id (an MI300X platform's eight, fully connected); a GPU
 * in no hive has no xgmi_hive_info.
 */
bool amdgpu_xgmi_linked(const amdgpu_card *a, const amdgpu_card *b);

/*
 * How a and b connect over PCIe, as nvmlGpuTopologyLevel_t and computed as
 * `topo -m` places NICs (host/host_pcitopo.h: PIX, PXB, PHB, NODE, SYS from
 * the bridges of their sysfs paths below ROOT and their NUMA nodes); -1 when
 * either's place in the tree is unknown (an APU whose device is no link).
 */
int amdgpu_topo_level(const char *root, const amdgpu_card *a, const amdgpu_card *b);

/* ---- pure parsers (fuzzed: fuzz/fuzz_amdgpu_parse.c) ---- */

/* pp_dpm_sclk / pp_dpm_mclk: "0: 500Mhz\n1: 1900Mhz *\n". */
typedef struct {
	int levels;     /* lines that parsed */
	bool cur_ok;    /* a line is marked '*' */
	double cur_mhz; /* that line's clock */
	double max_mhz; /* highest clock of all levels (levels > 0) */
} amdgpu_dpm;

/* A sysfs file's text, trailing white space removed. False when it cannot be read. */
bool amdgpu_read_text(const char *path, char *buf, size_t size);
/* DIR/NAME holding one unsigned decimal (sysfs numbers), or 0x-prefixed hex when hex. */
bool amdgpu_read_num(const char *dir, const char *name, bool hex, unsigned long long *v);

/* Whether s is a non-empty run of decimal digits (a PID, a card's number). */
bool amdgpu_is_number(const char *s);

/* False when no line parses. */
bool amdgpu_parse_dpm(const char *text, size_t len, amdgpu_dpm *out);

/*
 * The PCIe generation of a link speed as sysfs writes it ("16.0 GT/s PCIe",
 * "8 GT/s", "2.5 GT/s PCIe"): 1 for 2.5 GT/s up to 7 for 128 GT/s; 0 when
 * unknown ("Unknown", a rate that is no generation's).
 */
int amdgpu_link_gen(const char *s);

/* One DRM file descriptor's fdinfo, the keys of the DRM usage-stats format. */
typedef struct {
	bool is_amdgpu; /* drm-driver: amdgpu */
	char pdev[16];  /* drm-pdev, "" when absent */
	bool client_ok; /* drm-client-id */
	uint64_t client_id;
	bool vram_ok; /* drm-memory-vram, else drm-resident-vram */
	uint64_t vram_bytes;
	bool gtt_ok; /* drm-memory-gtt, else drm-resident-gtt */
	uint64_t gtt_bytes;
	bool gfx_ok, compute_ok; /* drm-engine-gfx / drm-engine-compute, ns */
	uint64_t gfx_ns, compute_ns;
} amdgpu_fdinfo;

/* Parse one fdinfo file's text. False when it is no DRM client of amdgpu. */
bool amdgpu_parse_fdinfo(const char *text, size_t len, amdgpu_fdinfo *out);

/* ---- processes ---- */

/* One process's use of one GPU, summed over its distinct DRM clients. */
typedef struct {
	unsigned pid;
	char pdev[16]; /* the GPU, sysfs spelling */
	int clients;   /* distinct drm-client-id it holds */
	bool vram_ok, gtt_ok, gfx_ok, compute_ok;
	uint64_t vram_bytes, gtt_bytes, gfx_ns, compute_ns;
} amdgpu_proc;

/* One open DRM file: the PID that holds it and what its fdinfo says. */
typedef struct {
	unsigned pid;
	amdgpu_fdinfo info;
} amdgpu_client;

/*
 * Fold open files into processes (pure). A DRM client is counted once
 * however many descriptors refer to it (dup, fork, SCM_RIGHTS): the lowest
 * PID holding it owns it. Files of other drivers or without a client id are
 * skipped. Output sorted by PID, then PCI address. Returns the count.
 */
int amdgpu_fold_clients(const amdgpu_client *in, int n, amdgpu_proc *out, int max);

/*
 * Every amdgpu DRM client under PROC_ROOT ("/proc"): each PID's
 * fdinfo/N files, folded as above. Processes whose fdinfo cannot be read
 * (another user's) are not seen. Returns the count.
 */
int amdgpu_procs_read(const char *proc_root, amdgpu_proc *out, int max);

/* ---- the ROCm kernel driver's (KFD) per-process accounting: amdgpu_kfd.c ---- */

/* A GPU node of the KFD topology: its id and its PCI address. */
typedef struct {
	uint32_t gpu_id;
	char pdev[16]; /* sysfs spelling, "0000:9f:00.0" */
} amdgpu_kfd_node;

/*
 * A node's `properties` text: its PCI address from `domain` (0 when absent,
 * as before Linux 5.9) and `location_id` (bus << 8 | devfn; partitions of
 * one device share it). False without a location_id.
 */
bool amdgpu_parse_kfd_props(const char *text, amdgpu_kfd_node *out);

#define AMDGPU_KFD_MAX_NODES 64

/*
 * The GPU nodes of ROOT/sys/class/kfd/kfd/topology (CPU nodes have gpu_id 0).
 * They do not change while the driver is loaded: read them once.
 */
int amdgpu_kfd_nodes(const char *root, amdgpu_kfd_node *out, int max);

/*
 * VRAM per process and GPU from ROOT/sys/class/kfd/kfd/proc/PID/vram_GPUID,
 * the GPU ids those of nodes[0..nn), summed over the nodes of one device.
 * Readable by every user: processes of other users, whose fdinfo is closed,
 * are seen here with their VRAM (and no engine time, clients or GTT). Sorted
 * by PID, then PCI address.
 */
int amdgpu_kfd_procs_read(const char *root, const amdgpu_kfd_node *nodes, int nn, amdgpu_proc *out,
                          int max);

#endif
