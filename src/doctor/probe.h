/*
 * probe.h - where the checks read the outside world (doctor_probe), their options, the
 * context a check runs in (facts several checks share, computed once), and the helpers
 * the checks share (probe.c).
 */
#ifndef GPUWHY_DOCTOR_PROBE_H
#define GPUWHY_DOCTOR_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "doctor/klog.h"
#include "doctor/machine.h"
#include "doctor/pyprobe.h"
#include "doctor/report.h"
#include "doctor/where.h"

typedef struct {
	const char *proc_root; /* "/proc" */
	const char *sys_root;  /* "/sys" */
	const char *dev_root;  /* "/dev" */
	const char *fs_root;   /* "" : prefix of every other absolute path read (/etc/cdi, ...) */
	const char *kmsg_path; /* "/dev/kmsg"; a file of kernel log lines in tests */
	const char *path;      /* directories searched for docker, nvidia-ctk, python3, dmesg */
	const char *(*getenv)(void *arg, const char *name);
	void *env_arg;
	int (*access)(const char *path, int mode);
	int64_t python_timeout_ns; /* per Python child */
	int64_t tool_timeout_ns;   /* docker, nvidia-ctk, dmesg, journalctl */
	bool klog_tools;           /* fall back to dmesg / journalctl -k */
	const char *klog_text;     /* the kernel log itself (the simulated machine's), else NULL */
	/* The AMD GPUs' sys and dev for the ROCm checks (the simulated machine's), else NULL:
	 * sys_root and dev_root. */
	const char *amd_sys_root, *amd_dev_root;
} doctor_probe;

/* The real system: /proc, /sys, /dev, $PATH, getenv, access, 10 s / 5 s timeouts. */
void doctor_probe_default(doctor_probe *p);
/* An environment lookup over a NULL-terminated array of "NAME=value" (arg). */
const char *doctor_env_from_list(void *arg, const char *name);

/* ---- options ---- */

#define DOCTOR_PORTS_MAX 16

typedef struct {
	bool need_mem_set;
	uint64_t need_mem; /* bytes */
	int nports;
	int ports[DOCTOR_PORTS_MAX];
	const char *python; /* --python PATH, NULL: python3 (then python) on PATH */
} doctor_opts;

/* ---- the context of a check ---- */

typedef struct {
	const doctor_probe *p;
	const doctor_opts *o;
	const doctor_machine *m;
	doctor_report *r;
	bool klog_done, where_done, py_done;
	doctor_klog klog;
	doctor_where where;
	doctor_python py;
} doctor_ctx;

void doctor_ctx_init(doctor_ctx *c, const doctor_probe *p, const doctor_opts *o,
                     const doctor_machine *m, doctor_report *r);
void doctor_ctx_free(doctor_ctx *c);
const doctor_klog *doctor_ctx_klog(doctor_ctx *c);
const doctor_where *doctor_ctx_where(doctor_ctx *c);
const doctor_python *doctor_ctx_python(doctor_ctx *c);

/* ---- helpers shared by the checks (probe.c) ---- */

const char *doctor_env(const doctor_ctx *c, const char *name);
/* root + formatted absolute path, into out. */
void doctor_pathf(char *out, size_t len, const char *root, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Whole file (at most cap bytes), NUL-terminated; NULL when unreadable. */
char *doctor_slurp(const char *path, size_t cap);
bool doctor_exists(const char *path);
/* "80.0 GiB" style, into out. */
const char *doctor_bytes(uint64_t bytes, char *out, size_t len);
/* "12.4" -> 12040 (CUDA's integer form); -1 when not a version. */
int doctor_cuda_version_int(const char *s);
/* The NVIDIA display/3D controllers on the PCI bus (sys_root/bus/pci/devices). */
int doctor_pci_nvidia_gpus(const doctor_probe *p, char (*bdf)[16], int max);
/* Version of the loaded nvidia kernel module ("" when none). */
bool doctor_kernel_module_version(const doctor_probe *p, char *out, size_t len);
/* Whether a driver is there at all: NVML loaded or an nvidia kernel module. */
bool doctor_driver_present(doctor_ctx *c);
/* A driver library found on the library path (doctor_find_libs). */
typedef struct {
	char dir[256];    /* directory searched, without fs_root */
	char real[512];   /* resolved file */
	char version[64]; /* "550.54.14" from the file name, "" when it has none */
} doctor_libfile;
/* Every SONAME.1 (e.g. "libnvidia-ml.so") in LD_LIBRARY_PATH and the usual library
 * directories under fs_root, one per resolved file, in search order. */
int doctor_find_libs(const doctor_probe *p, const char *soname, doctor_libfile *out, int max);
/* Version in a library file name ("libnvidia-ml.so.550.54.14" -> "550.54.14"). */
bool doctor_lib_version(const char *path, const char *soname, char *out, size_t len);
/* Compare PCI bus ids written differently ("00000000:3B:00.0", "0000:3b:00", "3b:00.0"). */
bool doctor_same_pci(const char *a, const char *b);

/* "00000000:3B:00.0" -> "0000:3b:00.0" (the name under /sys/bus/pci/devices). */
bool doctor_sysfs_bdf(const char *bus, char out[16]);
/* The PCI path from the root port down to the device bus (last entry), from sysfs;
 * just the device when sysfs does not know it. */
int doctor_pci_chain(const doctor_probe *p, const char *bus, char (*out)[16], int max);

#endif
