/*
 * doctor.h - `gpuwhy doctor`: environment checks that explain idle or
 * invisible GPUs (driver, GPU health, CUDA_VISIBLE_DEVICES, Python stacks,
 * containers, WSL, foreign load, environment variables).
 *
 * A check is a small function over three inputs, all replaceable by tests:
 *   - doctor_probe: where the outside world is read (/proc, /sys, /dev, other
 *     absolute paths under fs_root, the kernel log file, the directory list
 *     searched for docker/nvidia-ctk/python, the environment lookup, access())
 *   - doctor_machine: what the device layer saw (NVML state, GPUs, values,
 *     processes); filled by doctor_machine_load() or built by hand in tests
 *   - doctor_opts: the command-line options (--port, --need-mem, --python)
 * Each check appends one result (load.port: one per port) to a doctor_report:
 * a status, what was found and, unless PASS, the fix. Facts several checks
 * share (kernel log, container/WSL detection, Python probe) are computed
 * once per doctor_ctx, on first use.
 */
#ifndef GPUWHY_DOCTOR_DOCTOR_H
#define GPUWHY_DOCTOR_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gpu/gpu.h"
#include "util/strbuf.h"

/* ---- results ---- */

typedef enum { DOCTOR_PASS, DOCTOR_WARN, DOCTOR_FAIL, DOCTOR_SKIP } doctor_status;

const char *doctor_status_name(doctor_status s); /* "PASS", "WARN", "FAIL", "SKIP" */

/*
 * The language of the results. Text output speaks the user's language; JSON
 * is for machines and keeps English, so the report is built in the language
 * of the output it is for: doctor_set_translate(true) before the checks run for
 * text. doctor_addf and doctor_fixf translate their formats; DOCTOR_("...") marks a piece
 * of a result (an argument, an appended clause) and translates it likewise.
 */
void doctor_set_translate(bool on);
const char *doctor_tr(const char *msgid) __attribute__((format_arg(1)));
#define DOCTOR_(s) doctor_tr(s)
const char *doctor_ntr(const char *one, const char *many, unsigned long n)
    __attribute__((format_arg(1), format_arg(2)));
#define DOCTOR_P(one, many, n) doctor_ntr((one), (many), (unsigned long)(n))

typedef struct {
	char check[32];
	doctor_status status;
	char *found; /* never NULL */
	char *fix;   /* NULL when there is nothing to do */
} doctor_result;

typedef struct {
	doctor_result *v;
	size_t n, cap;
} doctor_report;

doctor_result *doctor_addf(doctor_report *r, const char *check, doctor_status st,
                           const char *found_fmt, ...) __attribute__((format(printf, 4, 5)));
void doctor_fixf(doctor_result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void doctor_report_free(doctor_report *r);
/* 1 when any check failed, else 0 (WARN does not change the exit code). */
int doctor_exit_code(const doctor_report *r);
void doctor_print_text(FILE *f, const doctor_report *r, bool color);
void doctor_print_json(FILE *f, const doctor_report *r);

/* ---- probes ---- */

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
} doctor_probe;

/* The real system: /proc, /sys, /dev, $PATH, getenv, access, 10 s / 5 s timeouts. */
void doctor_probe_default(doctor_probe *p);
/* An environment lookup over a NULL-terminated array of "NAME=value" (arg). */
const char *doctor_env_from_list(void *arg, const char *name);

/* ---- what the device layer saw ---- */

typedef enum {
	DOCTOR_NVML_OK,
	DOCTOR_NVML_NO_LIBRARY,    /* libnvidia-ml.so.1 not found or not loadable */
	DOCTOR_NVML_NOT_LOADED,    /* library there, kernel driver not loaded */
	DOCTOR_NVML_MISMATCH,      /* library and kernel module versions differ */
	DOCTOR_NVML_NO_PERMISSION, /* /dev/nvidia* refused */
	DOCTOR_NVML_OTHER,
} doctor_nvml_state;

#define DOCTOR_PROCS_MAX 64

typedef struct {
	gpu_static st;
	bool lost;
	gpu_values v;
	bool procs_ok; /* the process list could be read */
	int nproc;
	gpu_proc procs[DOCTOR_PROCS_MAX];
} doctor_gpu;

typedef struct {
	doctor_nvml_state nvml;
	char error[512];    /* the device layer's message when nvml != DOCTOR_NVML_OK */
	char lib_path[512]; /* the NVML library file in use (resolved), "" when unknown */
	bool simulated;     /* the simulated GPU (--sim / GPUWHY_SIM_SCENARIO) */
	char driver[96];    /* "550.54.14", "" when unknown */
	char cuda[16];      /* highest CUDA the driver supports, "12.4", "" when unknown */
	char nvml_version[96];
	int n;           /* every GPU NVML enumerates */
	doctor_gpu *gpu; /* n entries, NVML index order */
	bool has_selection;
	bool selected[GPU_MAX]; /* --gpus: only these get per-GPU checks */
} doctor_machine;

/* Open NVML (all GPUs), read everything, close. A driver failure is not an
 * error here: it is recorded in m->nvml / m->error. gpus is the --gpus list
 * or NULL; returns GW_EXIT_USAGE (message printed) when it names no GPU. */
int doctor_machine_load(doctor_machine *m, const char *gpus);
/* doctor_machine_load in a child process: a driver that hangs (a GPU fallen off the
 * bus can stall NVML for minutes) becomes a driver.nvml failure after timeout_ns. */
int doctor_machine_load_guarded(doctor_machine *m, const char *gpus, int64_t timeout_ns);
void doctor_machine_free(doctor_machine *m);
/* Tests: append a GPU with index and every value absent. */
doctor_gpu *doctor_machine_add_gpu(doctor_machine *m);
/* Whether GPU i gets per-GPU checks (the --gpus selection). */
bool doctor_gpu_selected(const doctor_machine *m, int i);

/* ---- options ---- */

#define DOCTOR_PORTS_MAX 16

typedef struct {
	bool need_mem_set;
	uint64_t need_mem; /* bytes */
	int nports;
	int ports[DOCTOR_PORTS_MAX];
	const char *python; /* --python PATH, NULL: python3 (then python) on PATH */
} doctor_opts;

/* ---- shared facts ---- */

typedef struct {
	bool readable;
	char source[64]; /* "/dev/kmsg", "dmesg", "journalctl -k" */
	char why[256];   /* when !readable */
	char **lines;    /* message text, timestamps and kmsg prefixes removed */
	size_t n;
} doctor_klog;

typedef struct {
	bool container;
	char container_kind[32]; /* "Docker", "Podman", "Kubernetes", "containerd", "LXC", ... */
	char container_why[160]; /* the evidence */
	int wsl;                 /* 0 not WSL, 1 WSL1, 2 WSL2 */
	char kernel_release[128];
	bool pidns_known;
	bool pidns_nested;
} doctor_where;

#define DOCTOR_PY_NPKG 5
#define DOCTOR_PY_NDEV 16

typedef struct {
	const char *name; /* import name: torch, jax, tensorflow, onnxruntime, cupy */
	bool installed;   /* the module can be found on sys.path */
	bool probed;      /* the import child gave an answer */
	bool timed_out;
	char version[64];
	char cuda[16];      /* CUDA version it was built for, "" when unknown or none */
	bool cpu_only;      /* a build without CUDA */
	char other_gpu[32]; /* "ROCm 6.0" for non-CUDA GPU builds */
	int gpu_count;      /* GPUs it sees, -1 when it cannot tell */
	int ndev;
	char dev_name[DOCTOR_PY_NDEV][96];
	char dev_uuid[DOCTOR_PY_NDEV][96]; /* "GPU-..." when the framework reports it */
	char file[256];
	char extra[256]; /* framework-specific note (ONNX Runtime providers) */
	char error[512]; /* import error, CUDA init error */
} doctor_pypkg;

typedef struct {
	char name[64]; /* distribution name as installed: torch, onnxruntime-gpu */
	char version[64];
	char location[256];
} doctor_pydist;

typedef struct {
	bool found;         /* an interpreter was found */
	bool explicit_path; /* from --python */
	char exe[512];
	bool ran; /* the listing child answered */
	char error[512];
	char version[32];
	int major;
	char sys_exe[256];
	bool venv;
	doctor_pypkg pkg[DOCTOR_PY_NPKG];
	doctor_pydist *dists;
	size_t ndists;
} doctor_python;

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

/* ---- kernel log parsing (klog.c) ---- */

typedef struct {
	char bus[32]; /* as written: "0000:3b:00" */
	int xid;
	const char *text; /* the rest of the line, inside the caller's string */
} doctor_xid;
bool doctor_xid_parse(const char *line, doctor_xid *out);
/* Short meaning of an Xid and whether it points at hardware (FAIL) rather than an app. */
const char *doctor_xid_meaning(int xid, bool *hardware);

typedef struct {
	char device[16];   /* BDF the error is about ("0000:3b:00.0") */
	char reporter[16]; /* BDF of the reporting port, "" when none */
	bool uncorrected;  /* Uncorrected (Non-Fatal) or Fatal */
	bool fatal;
	bool summary; /* the port's "error received" line; the same event also has a
	                 "PCIe Bus Error" line from the device, so checks count only those */
} doctor_aer;
bool doctor_aer_parse(const char *line, doctor_aer *out);

/* ---- CUDA_VISIBLE_DEVICES (check_cuda.c) ---- */

#define DOCTOR_CVD_MAX GPU_MAX

typedef struct {
	const char *uuid; /* "GPU-..." */
	const char *name;
	const char *pci;     /* bus id, for PCI_BUS_ID order */
	double cc;           /* compute capability, 0 when unknown */
	double max_sm_clock; /* MHz, 0 when unknown */
	bool mig;            /* MIG mode enabled */
} doctor_cvd_gpu;

typedef struct {
	bool set;                      /* the variable is set */
	int n;                         /* CUDA ordinals that result */
	int phys[DOCTOR_CVD_MAX];      /* ordinal -> index into the GPU list */
	int mig_entry[DOCTOR_CVD_MAX]; /* 1 when that ordinal is a MIG device */
	int stopped_at; /* entry number (0-based) that stopped parsing, -1 when none */
	char stop_entry[96];
	char stop_why[160];
	bool duplicate;            /* a device listed twice: CUDA then sees none */
	int order[DOCTOR_CVD_MAX]; /* CUDA's enumeration order without the variable */
	bool order_is_pci;         /* that order equals PCI bus (NVML) order */
} doctor_cvd_map;

/*
 * Resolve value (NULL = unset) the way CUDA does against gpus[0..n-1]
 * (given in NVML / PCI bus order). pci_bus_order: CUDA_DEVICE_ORDER=PCI_BUS_ID.
 */
void doctor_cvd_resolve(const char *value, const doctor_cvd_gpu *gpus, int n, bool pci_bus_order,
                        doctor_cvd_map *out);

/* Syntax alone: does the value hide every GPU on any machine ("", "-1", "none", "NoDevFiles")? */
bool doctor_cvd_hides_all(const char *value);

/* ---- the checks: one function each, in doctor_checks[] order ---- */

typedef void (*doctor_check_fn)(doctor_ctx *c);
typedef struct {
	const char *name;
	doctor_check_fn fn;
	const char *what; /* one line for --list and docs/doctor.md */
} doctor_check;
extern const doctor_check doctor_checks[];
extern const size_t doctor_ncheck;
void doctor_run_all(doctor_ctx *c);

void doctor_check_driver_nvml(doctor_ctx *c);
void doctor_check_driver_version(doctor_ctx *c);
void doctor_check_driver_cuda(doctor_ctx *c);
void doctor_check_driver_mismatch(doctor_ctx *c);
void doctor_check_driver_devices(doctor_ctx *c);
void doctor_check_driver_persistence(doctor_ctx *c);

void doctor_check_gpus_inventory(doctor_ctx *c);
void doctor_check_gpus_lost(doctor_ctx *c);
void doctor_check_gpus_memory_errors(doctor_ctx *c);
void doctor_check_gpus_xid(doctor_ctx *c);
void doctor_check_gpus_pcie_errors(doctor_ctx *c);
void doctor_check_gpus_pcie_link(doctor_ctx *c);
void doctor_check_gpus_thermal(doctor_ctx *c);
void doctor_check_gpus_clocks(doctor_ctx *c);
void doctor_check_gpus_power_limit(doctor_ctx *c);

void doctor_check_cuda_visible_devices(doctor_ctx *c);
void doctor_check_cuda_device_order(doctor_ctx *c);

void doctor_check_python_interpreter(doctor_ctx *c);
void doctor_check_python_torch(doctor_ctx *c);
void doctor_check_python_jax(doctor_ctx *c);
void doctor_check_python_tensorflow(doctor_ctx *c);
void doctor_check_python_onnxruntime(doctor_ctx *c);
void doctor_check_python_cupy(doctor_ctx *c);
void doctor_check_python_duplicates(doctor_ctx *c);

void doctor_check_container_detect(doctor_ctx *c);
void doctor_check_container_docker(doctor_ctx *c);
void doctor_check_container_cdi(doctor_ctx *c);
void doctor_check_container_injection(doctor_ctx *c);
void doctor_check_container_pid_namespace(doctor_ctx *c);

void doctor_check_wsl_detect(doctor_ctx *c);
void doctor_check_wsl_dxg(doctor_ctx *c);
void doctor_check_wsl_libraries(doctor_ctx *c);
void doctor_check_wsl_linux_driver(doctor_ctx *c);

void doctor_check_load_processes(doctor_ctx *c);
void doctor_check_load_orphan_memory(doctor_ctx *c);
void doctor_check_load_ports(doctor_ctx *c);
void doctor_check_load_need_mem(doctor_ctx *c);

void doctor_check_env_gpu_hiding(doctor_ctx *c);
void doctor_check_env_slowdown(doctor_ctx *c);

#endif
