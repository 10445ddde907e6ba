/*
 * doctor.h - `gpuwhy doctor`: environment checks that explain idle or
 * invisible GPUs (driver, GPU health, CUDA_VISIBLE_DEVICES, Python stacks,
 * containers, WSL, foreign load, environment variables).
 *
 * A check is a small function over three inputs, all replaceable by tests:
 *   - dr_probe: where the outside world is read (/proc, /sys, /dev, other
 *     absolute paths under fs_root, the kernel log file, the directory list
 *     searched for docker/nvidia-ctk/python, the environment lookup, access())
 *   - dr_machine: what the device layer saw (NVML state, GPUs, values,
 *     processes); filled by dr_machine_load() or built by hand in tests
 *   - dr_opts: the command-line options (--port, --need-mem, --python)
 * Each check appends one result (load.port: one per port) to a dr_report:
 * a status, what was found and, unless PASS, the fix. Facts several checks
 * share (kernel log, container/WSL detection, Python probe) are computed
 * once per dr_ctx, on first use.
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

typedef enum { DR_PASS, DR_WARN, DR_FAIL, DR_SKIP } dr_status;

const char *dr_status_name(dr_status s); /* "PASS", "WARN", "FAIL", "SKIP" */

/*
 * The language of the results. Text output speaks the user's language; JSON
 * is for machines and keeps English, so the report is built in the language
 * of the output it is for: dr_set_translate(true) before the checks run for
 * text. dr_addf and dr_fixf translate their formats; DR_("...") marks a piece
 * of a result (an argument, an appended clause) and translates it likewise.
 */
void dr_set_translate(bool on);
const char *dr_tr(const char *msgid) __attribute__((format_arg(1)));
#define DR_(s) dr_tr(s)
const char *dr_ntr(const char *one, const char *many, unsigned long n)
    __attribute__((format_arg(1), format_arg(2)));
#define DR_P(one, many, n) dr_ntr((one), (many), (unsigned long)(n))

typedef struct {
	char check[32];
	dr_status status;
	char *found; /* never NULL */
	char *fix;   /* NULL when there is nothing to do */
} dr_result;

typedef struct {
	dr_result *v;
	size_t n, cap;
} dr_report;

dr_result *dr_addf(dr_report *r, const char *check, dr_status st, const char *found_fmt, ...)
    __attribute__((format(printf, 4, 5)));
void dr_fixf(dr_result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dr_report_free(dr_report *r);
/* 1 when any check failed, else 0 (WARN does not change the exit code). */
int dr_exit_code(const dr_report *r);
void dr_print_text(FILE *f, const dr_report *r, bool color);
void dr_print_json(FILE *f, const dr_report *r);

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
} dr_probe;

/* The real system: /proc, /sys, /dev, $PATH, getenv, access, 10 s / 5 s timeouts. */
void dr_probe_default(dr_probe *p);
/* An environment lookup over a NULL-terminated array of "NAME=value" (arg). */
const char *dr_env_from_list(void *arg, const char *name);

/* ---- what the device layer saw ---- */

typedef enum {
	DR_NVML_OK,
	DR_NVML_NO_LIBRARY,    /* libnvidia-ml.so.1 not found or not loadable */
	DR_NVML_NOT_LOADED,    /* library there, kernel driver not loaded */
	DR_NVML_MISMATCH,      /* library and kernel module versions differ */
	DR_NVML_NO_PERMISSION, /* /dev/nvidia* refused */
	DR_NVML_OTHER,
} dr_nvml_state;

#define DR_PROCS_MAX 64

typedef struct {
	gpu_static st;
	bool lost;
	gpu_values v;
	bool procs_ok; /* the process list could be read */
	int nproc;
	gpu_proc procs[DR_PROCS_MAX];
} dr_gpu;

typedef struct {
	dr_nvml_state nvml;
	char error[512];    /* the device layer's message when nvml != DR_NVML_OK */
	char lib_path[512]; /* the NVML library file in use (resolved), "" when unknown */
	bool simulated;     /* the simulated GPU (--sim / GPUWHY_SIM_SCENARIO) */
	char driver[96];    /* "550.54.14", "" when unknown */
	char cuda[16];      /* highest CUDA the driver supports, "12.4", "" when unknown */
	char nvml_version[96];
	int n;       /* every GPU NVML enumerates */
	dr_gpu *gpu; /* n entries, NVML index order */
	bool has_selection;
	bool selected[GPU_MAX]; /* --gpus: only these get per-GPU checks */
} dr_machine;

/* Open NVML (all GPUs), read everything, close. A driver failure is not an
 * error here: it is recorded in m->nvml / m->error. gpus is the --gpus list
 * or NULL; returns GW_EXIT_USAGE (message printed) when it names no GPU. */
int dr_machine_load(dr_machine *m, const char *gpus);
/* dr_machine_load in a child process: a driver that hangs (a GPU fallen off the
 * bus can stall NVML for minutes) becomes a driver.nvml failure after timeout_ns. */
int dr_machine_load_guarded(dr_machine *m, const char *gpus, int64_t timeout_ns);
void dr_machine_free(dr_machine *m);
/* Tests: append a GPU with index and every value absent. */
dr_gpu *dr_machine_add_gpu(dr_machine *m);
/* Whether GPU i gets per-GPU checks (the --gpus selection). */
bool dr_gpu_selected(const dr_machine *m, int i);

/* ---- options ---- */

#define DR_PORTS_MAX 16

typedef struct {
	bool need_mem_set;
	uint64_t need_mem; /* bytes */
	int nports;
	int ports[DR_PORTS_MAX];
	const char *python; /* --python PATH, NULL: python3 (then python) on PATH */
} dr_opts;

/* ---- shared facts ---- */

typedef struct {
	bool readable;
	char source[64]; /* "/dev/kmsg", "dmesg", "journalctl -k" */
	char why[256];   /* when !readable */
	char **lines;    /* message text, timestamps and kmsg prefixes removed */
	size_t n;
} dr_klog;

typedef struct {
	bool container;
	char container_kind[32]; /* "Docker", "Podman", "Kubernetes", "containerd", "LXC", ... */
	char container_why[160]; /* the evidence */
	int wsl;                 /* 0 not WSL, 1 WSL1, 2 WSL2 */
	char kernel_release[128];
	bool pidns_known;
	bool pidns_nested;
} dr_where;

#define DR_PY_NPKG 5
#define DR_PY_NDEV 16

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
	char dev_name[DR_PY_NDEV][96];
	char dev_uuid[DR_PY_NDEV][96]; /* "GPU-..." when the framework reports it */
	char file[256];
	char extra[256]; /* framework-specific note (ONNX Runtime providers) */
	char error[512]; /* import error, CUDA init error */
} dr_pypkg;

typedef struct {
	char name[64]; /* distribution name as installed: torch, onnxruntime-gpu */
	char version[64];
	char location[256];
} dr_pydist;

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
	dr_pypkg pkg[DR_PY_NPKG];
	dr_pydist *dists;
	size_t ndists;
} dr_python;

typedef struct {
	const dr_probe *p;
	const dr_opts *o;
	const dr_machine *m;
	dr_report *r;
	bool klog_done, where_done, py_done;
	dr_klog klog;
	dr_where where;
	dr_python py;
} dr_ctx;

void dr_ctx_init(dr_ctx *c, const dr_probe *p, const dr_opts *o, const dr_machine *m, dr_report *r);
void dr_ctx_free(dr_ctx *c);
const dr_klog *dr_ctx_klog(dr_ctx *c);
const dr_where *dr_ctx_where(dr_ctx *c);
const dr_python *dr_ctx_python(dr_ctx *c);

/* ---- helpers shared by the checks (probe.c) ---- */

const char *dr_env(const dr_ctx *c, const char *name);
/* root + formatted absolute path, into out. */
void dr_pathf(char *out, size_t len, const char *root, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Whole file (at most cap bytes), NUL-terminated; NULL when unreadable. */
char *dr_slurp(const char *path, size_t cap);
bool dr_exists(const char *path);
/* "80.0 GiB" style, into out. */
const char *dr_bytes(uint64_t bytes, char *out, size_t len);
/* "12.4" -> 12040 (CUDA's integer form); -1 when not a version. */
int dr_cuda_version_int(const char *s);
/* The NVIDIA display/3D controllers on the PCI bus (sys_root/bus/pci/devices). */
int dr_pci_nvidia_gpus(const dr_probe *p, char (*bdf)[16], int max);
/* Version of the loaded nvidia kernel module ("" when none). */
bool dr_kernel_module_version(const dr_probe *p, char *out, size_t len);
/* Whether a driver is there at all: NVML loaded or an nvidia kernel module. */
bool dr_driver_present(dr_ctx *c);
/* A driver library found on the library path (dr_find_libs). */
typedef struct {
	char dir[256];    /* directory searched, without fs_root */
	char real[512];   /* resolved file */
	char version[64]; /* "550.54.14" from the file name, "" when it has none */
} dr_libfile;
/* Every SONAME.1 (e.g. "libnvidia-ml.so") in LD_LIBRARY_PATH and the usual library
 * directories under fs_root, one per resolved file, in search order. */
int dr_find_libs(const dr_probe *p, const char *soname, dr_libfile *out, int max);
/* Version in a library file name ("libnvidia-ml.so.550.54.14" -> "550.54.14"). */
bool dr_lib_version(const char *path, const char *soname, char *out, size_t len);
/* Compare PCI bus ids written differently ("00000000:3B:00.0", "0000:3b:00", "3b:00.0"). */
bool dr_same_pci(const char *a, const char *b);

/* "00000000:3B:00.0" -> "0000:3b:00.0" (the name under /sys/bus/pci/devices). */
bool dr_sysfs_bdf(const char *bus, char out[16]);
/* The PCI path from the root port down to the device bus (last entry), from sysfs;
 * just the device when sysfs does not know it. */
int dr_pci_chain(const dr_probe *p, const char *bus, char (*out)[16], int max);

/* ---- kernel log parsing (klog.c) ---- */

typedef struct {
	char bus[32]; /* as written: "0000:3b:00" */
	int xid;
	const char *text; /* the rest of the line, inside the caller's string */
} dr_xid;
bool dr_xid_parse(const char *line, dr_xid *out);
/* Short meaning of an Xid and whether it points at hardware (FAIL) rather than an app. */
const char *dr_xid_meaning(int xid, bool *hardware);

typedef struct {
	char device[16];   /* BDF the error is about ("0000:3b:00.0") */
	char reporter[16]; /* BDF of the reporting port, "" when none */
	bool uncorrected;  /* Uncorrected (Non-Fatal) or Fatal */
	bool fatal;
	bool summary; /* the port's "error received" line; the same event also has a
	                 "PCIe Bus Error" line from the device, so checks count only those */
} dr_aer;
bool dr_aer_parse(const char *line, dr_aer *out);

/* ---- CUDA_VISIBLE_DEVICES (cuda_visible.c) ---- */

#define DR_CVD_MAX GPU_MAX

typedef struct {
	const char *uuid; /* "GPU-..." */
	const char *name;
	const char *pci;     /* bus id, for PCI_BUS_ID order */
	double cc;           /* compute capability, 0 when unknown */
	double max_sm_clock; /* MHz, 0 when unknown */
	bool mig;            /* MIG mode enabled */
} dr_cvd_gpu;

typedef struct {
	bool set;                  /* the variable is set */
	int n;                     /* CUDA ordinals that result */
	int phys[DR_CVD_MAX];      /* ordinal -> index into the GPU list */
	int mig_entry[DR_CVD_MAX]; /* 1 when that ordinal is a MIG device */
	int stopped_at;            /* entry number (0-based) that stopped parsing, -1 when none */
	char stop_entry[96];
	char stop_why[160];
	bool duplicate;        /* a device listed twice: CUDA then sees none */
	int order[DR_CVD_MAX]; /* CUDA's enumeration order without the variable */
	bool order_is_pci;     /* that order equals PCI bus (NVML) order */
} dr_cvd_map;

/*
 * Resolve value (NULL = unset) the way CUDA does against gpus[0..n-1]
 * (given in NVML / PCI bus order). pci_bus_order: CUDA_DEVICE_ORDER=PCI_BUS_ID.
 */
void dr_cvd_resolve(const char *value, const dr_cvd_gpu *gpus, int n, bool pci_bus_order,
                    dr_cvd_map *out);

/* Syntax alone: does the value hide every GPU on any machine ("", "-1", "none", "NoDevFiles")? */
bool dr_cvd_hides_all(const char *value);

/* ---- the checks: one function each, in dr_checks[] order ---- */

typedef void (*dr_check_fn)(dr_ctx *c);
typedef struct {
	const char *name;
	dr_check_fn fn;
	const char *what; /* one line for --list and docs/doctor.md */
} dr_check;
extern const dr_check dr_checks[];
extern const size_t dr_ncheck;
void dr_run_all(dr_ctx *c);

void dr_check_driver_nvml(dr_ctx *c);
void dr_check_driver_version(dr_ctx *c);
void dr_check_driver_cuda(dr_ctx *c);
void dr_check_driver_mismatch(dr_ctx *c);
void dr_check_driver_devices(dr_ctx *c);
void dr_check_driver_persistence(dr_ctx *c);

void dr_check_gpus_inventory(dr_ctx *c);
void dr_check_gpus_lost(dr_ctx *c);
void dr_check_gpus_memory_errors(dr_ctx *c);
void dr_check_gpus_xid(dr_ctx *c);
void dr_check_gpus_pcie_errors(dr_ctx *c);
void dr_check_gpus_pcie_link(dr_ctx *c);
void dr_check_gpus_thermal(dr_ctx *c);
void dr_check_gpus_clocks(dr_ctx *c);
void dr_check_gpus_power_limit(dr_ctx *c);

void dr_check_cuda_visible_devices(dr_ctx *c);
void dr_check_cuda_device_order(dr_ctx *c);

void dr_check_python_interpreter(dr_ctx *c);
void dr_check_python_torch(dr_ctx *c);
void dr_check_python_jax(dr_ctx *c);
void dr_check_python_tensorflow(dr_ctx *c);
void dr_check_python_onnxruntime(dr_ctx *c);
void dr_check_python_cupy(dr_ctx *c);
void dr_check_python_duplicates(dr_ctx *c);

void dr_check_container_detect(dr_ctx *c);
void dr_check_container_docker(dr_ctx *c);
void dr_check_container_cdi(dr_ctx *c);
void dr_check_container_injection(dr_ctx *c);
void dr_check_container_pid_namespace(dr_ctx *c);

void dr_check_wsl_detect(dr_ctx *c);
void dr_check_wsl_dxg(dr_ctx *c);
void dr_check_wsl_libraries(dr_ctx *c);
void dr_check_wsl_linux_driver(dr_ctx *c);

void dr_check_load_processes(dr_ctx *c);
void dr_check_load_orphan_memory(dr_ctx *c);
void dr_check_load_ports(dr_ctx *c);
void dr_check_load_need_mem(dr_ctx *c);

void dr_check_env_gpu_hiding(dr_ctx *c);
void dr_check_env_slowdown(dr_ctx *c);

#endif
