/*
 * checks.h - `gpuwhy doctor`'s environment checks, which explain idle or invisible GPUs:
 * the list in the order they print (checks.c) and one function per check
 * (check_driver.c, check_gpus.c, check_cuda.c, check_python.c, check_containers.c,
 * check_wsl.c, check_load.c, check_env.c).
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
#ifndef GPUWHY_DOCTOR_CHECKS_H
#define GPUWHY_DOCTOR_CHECKS_H

#include <stddef.h>

#include "doctor/probe.h"

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
