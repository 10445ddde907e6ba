/* checks.c - the list of checks, in the order they print. */
#include "doctor/check_rocm.h"
#include "doctor/checks.h"
#include "doctor/doctor_int.h"
#include "util/i18n.h"

const doctor_check doctor_checks[] = {
    {"driver.nvml", doctor_check_driver_nvml,
     N_("NVML loads; if not, why (no library, module not loaded, version mismatch, permissions), "
        "with the kernel module and NVIDIA GPUs on the PCI bus as evidence")},
    {"driver.version", doctor_check_driver_version, N_("driver and kernel module versions")},
    {"driver.cuda", doctor_check_driver_cuda,
     N_("the highest CUDA version the driver supports (warns below 11.8)")},
    {"driver.mismatch", doctor_check_driver_mismatch,
     N_("kernel module version vs every libnvidia-ml.so.1 on the library path (stale copies)")},
    {"driver.devices", doctor_check_driver_devices,
     N_("/dev/nvidiactl, /dev/nvidiaN, /dev/nvidia-uvm present and read/writable by this user")},
    {"driver.persistence", doctor_check_driver_persistence,
     N_("persistence mode (without it every client re-initialises the GPU)")},
    {"gpus.inventory", doctor_check_gpus_inventory,
     N_("count, names, UUIDs, memory; NVIDIA GPUs on the PCI bus the driver did not initialise")},
    {"gpus.lost", doctor_check_gpus_lost, N_("GPUs that fell off the bus or stopped answering")},
    {"gpus.memory_errors", doctor_check_gpus_memory_errors,
     N_("uncorrected ECC errors, retired pages pending, row remap pending or failed")},
    {"gpus.xid", doctor_check_gpus_xid,
     N_("Xid errors in the kernel log, per GPU, hardware (FAIL) or application (WARN)")},
    {"gpus.pcie_errors", doctor_check_gpus_pcie_errors,
     N_("PCIe AER errors on each GPU's link (kernel log) and PCIe replay counters")},
    {"gpus.pcie_link", doctor_check_gpus_pcie_link,
     N_("PCIe link width below maximum, or generation below maximum under load")},
    {"gpus.thermal", doctor_check_gpus_thermal,
     N_("temperature at or within 5 C of the slowdown threshold")},
    {"gpus.clocks", doctor_check_gpus_clocks,
     N_("clocks held down by power cap, thermal or hardware slowdown, power brake, lowered "
        "applications clocks")},
    {"gpus.power_limit", doctor_check_gpus_power_limit,
     N_("power limit below the default, or an enforced limit below the set one")},
    {"cuda.visible_devices", doctor_check_cuda_visible_devices,
     N_("CUDA_VISIBLE_DEVICES parsed like CUDA (indices, full/short UUIDs, MIG, stops at an "
        "invalid entry, duplicates hide all): the cuda:N -> GPU map")},
    {"cuda.device_order", doctor_check_cuda_device_order,
     N_("mixed GPU models without CUDA_DEVICE_ORDER=PCI_BUS_ID: CUDA's numbering differs from "
        "nvidia-smi's")},
    {"python.interpreter", doctor_check_python_interpreter,
     N_("the Python found (--python, else python3/python on PATH) and its GPU frameworks")},
    {"python.torch", doctor_check_python_torch,
     N_("PyTorch: version, CUDA build vs driver, CPU-only wheel, GPUs it sees")},
    {"python.jax", doctor_check_python_jax,
     N_("JAX: version, CUDA plugin vs driver, GPUs it sees")},
    {"python.tensorflow", doctor_check_python_tensorflow,
     N_("TensorFlow: version, CUDA build vs driver, GPUs it sees")},
    {"python.onnxruntime", doctor_check_python_onnxruntime,
     N_("ONNX Runtime: CUDA provider available and its library loadable")},
    {"python.cupy", doctor_check_python_cupy, N_("CuPy: CUDA runtime vs driver, GPUs it sees")},
    {"python.duplicates", doctor_check_python_duplicates,
     N_("the same framework installed more than once on sys.path (or CPU and GPU variants)")},
    {"container.detect", doctor_check_container_detect, N_("host or container, and which runtime")},
    {"container.docker", doctor_check_container_docker,
     N_("host: Docker has the nvidia runtime (or CDI) on a machine with NVIDIA GPUs")},
    {"container.cdi", doctor_check_container_cdi,
     N_("host: CDI specs for nvidia.com/gpu (/etc/cdi, /var/run/cdi, nvidia-ctk cdi list), stale "
        "driver version or GPU count")},
    {"container.injection", doctor_check_container_injection,
     N_("container: device nodes and driver libraries injected, NVIDIA_DRIVER_CAPABILITIES")},
    {"container.pid_namespace", doctor_check_container_pid_namespace,
     N_("nested PID namespace: NVML's host PIDs do not match /proc")},
    {"wsl.detect", doctor_check_wsl_detect, N_("WSL2 (GPU capable) or WSL1 (no GPU)")},
    {"wsl.dxg", doctor_check_wsl_dxg, N_("WSL2: /dev/dxg present and read/writable")},
    {"wsl.libraries", doctor_check_wsl_libraries,
     N_("WSL2: /usr/lib/wsl/lib/libnvidia-ml.so.1 and libcuda.so.1 from the Windows driver")},
    {"wsl.linux_driver", doctor_check_wsl_linux_driver,
     N_("WSL2: no Linux NVIDIA driver installed inside WSL")},
    {"load.processes", doctor_check_load_processes,
     N_("processes on each GPU with owner, command and memory; which GPUs are free")},
    {"load.orphan_memory", doctor_check_load_orphan_memory,
     N_("GPU memory held by gone or zombie processes, or by no listed process")},
    {"load.port", doctor_check_load_ports,
     N_("--port N: who listens on it (/proc/net/tcp{,6} socket inode -> /proc/*/fd)")},
    {"load.need_mem", doctor_check_load_need_mem,
     N_("--need-mem SIZE: which GPUs have that much free, and whether CUDA_VISIBLE_DEVICES picks "
        "them")},
    {"env.gpu_hiding", doctor_check_env_gpu_hiding,
     N_("variables that hide GPUs or force the CPU, named with the tool they affect")},
    {"env.slowdown", doctor_check_env_slowdown,
     N_("debugging switches that slow GPU work (CUDA_LAUNCH_BLOCKING, NCCL_P2P_DISABLE, ...)")},
    DOCTOR_ROCM_CHECKS,
};

const size_t doctor_ncheck = sizeof doctor_checks / sizeof *doctor_checks;

void doctor_run_all(doctor_ctx *c)
{
	for (size_t i = 0; i < doctor_ncheck; i++)
		doctor_checks[i].fn(c);
}
