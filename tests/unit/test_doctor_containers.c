/* container.*: detection, Docker's runtime, CDI specs, injection, PID namespace; wsl.*. */
#include <stdio.h>
#include "test_doctor_common.h"

#define DOCKER FX_DOCTOR "/docker"
#define CDI FX_DOCTOR "/cdi"
#define WSL2_KERNEL "5.15.153.1-microsoft-standard-WSL2\n"

static fx_t *gpu_host(void)
{
	fx_t *f = fx_new();
	fx_nvml_ok(f);
	fx_gpu(f, "NVIDIA H100 80GB HBM3", "GPU-aaaa", "00000000:3B:00.0");
	fx_gpu(f, "NVIDIA H100 80GB HBM3", "GPU-bbbb", "00000000:5E:00.0");
	return f;
}

/* bin/docker printing a fixture (and an optional stderr line and exit status). */
static void fake_docker(fx_t *f, const char *fixture, const char *err, int status)
{
	char script[1024];
	snprintf(script, sizeof script,
	         "#!/bin/sh\n[ \"$1\" = info ] || exit 64\ncat '%s'\n%s%s%s\nexit %d\n", fixture,
	         err ? "echo '" : "", err ? err : "", err ? "' >&2" : "", status);
	fx_exec(f, "bin/docker", script);
}

static void detect_outcomes(void **state)
{
	(void)state;
	fx_t *f = fx_new();
	fx_expect(fx_run(f, doctor_check_container_detect), DOCTOR_PASS, "on the host", NULL);
	fx_free(f);

	f = fx_new();
	fx_write(f, "fs/.dockerenv", "");
	fx_expect(fx_run(f, doctor_check_container_detect), DOCTOR_PASS,
	          "inside a Docker container (/.dockerenv exists)", NULL);
	fx_free(f);

	f = fx_new();
	fx_write(f, "proc/1/cgroup",
	         "0::/kubepods.slice/kubepods-burstable.slice/cri-containerd-4f1c.scope\n");
	fx_expect(fx_run(f, doctor_check_container_detect), DOCTOR_PASS,
	          "inside a Kubernetes container", NULL);
	fx_free(f);

	f = fx_new();
	fx_env(f, "container=podman");
	fx_expect(fx_run(f, doctor_check_container_detect), DOCTOR_PASS,
	          "inside a podman container", NULL);
	fx_free(f);
}

static void docker_outcomes(void **state)
{
	(void)state;
	fx_t *f = gpu_host();
	fx_expect(fx_run(f, doctor_check_container_docker), DOCTOR_SKIP, "docker not installed",
	          NULL);
	fx_free(f);

	f = gpu_host();
	fake_docker(f, DOCKER "/info-nvidia.txt", NULL, 0);
	fx_expect(fx_run(f, doctor_check_container_docker), DOCTOR_PASS,
	          "nvidia runtime (runtimes: io.containerd.runc.v2 nvidia runc)", NULL);
	fx_free(f);

	f = gpu_host();
	fake_docker(f, DOCKER "/info-runc.txt", NULL, 0);
	fx_expect(
	    fx_run(f, doctor_check_container_docker), DOCTOR_FAIL,
	    "no nvidia runtime (runtimes: io.containerd.runc.v2 runc) and no CDI spec",
	    "sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker");
	/* with a CDI spec Docker (>= 25, CDI directories listed) can still inject GPUs */
	fx_copy(f, "fs/etc/cdi/nvidia.yaml", CDI "/nvidia.yaml");
	fx_expect(
	    fx_run(f, doctor_check_container_docker), DOCTOR_PASS,
	    "reads CDI specs (/etc/cdi/nvidia.yaml): use docker run --device nvidia.com/gpu=all",
	    NULL);
	fx_free(f);

	f = fx_new(); /* no GPU: nothing to give Docker */
	f->m.nvml = DOCTOR_NVML_NO_LIBRARY;
	fake_docker(f, DOCKER "/info-runc.txt", NULL, 0);
	fx_expect(fx_run(f, doctor_check_container_docker), DOCTOR_SKIP, "no NVIDIA GPU here",
	          NULL);
	fx_free(f);

	f = gpu_host();
	fake_docker(f, DOCKER "/info-nodaemon.txt",
	            "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the "
	            "docker daemon running?",
	            1);
	fx_expect(fx_run(f, doctor_check_container_docker), DOCTOR_WARN,
	          "cannot connect to the Docker daemon", "sudo systemctl start docker");
	fx_free(f);

	f = gpu_host();
	fake_docker(f, DOCKER "/info-nodaemon.txt",
	            "permission denied while trying to connect to the Docker daemon socket at "
	            "unix:///var/run/docker.sock",
	            1);
	fx_expect(fx_run(f, doctor_check_container_docker), DOCTOR_WARN, "permission denied",
	          "usermod -aG docker");
	fx_free(f);

	f = gpu_host(); /* a hung docker is given up on */
	fx_exec(f, "bin/docker", "#!/bin/sh\nsleep 30\n");
	f->p.tool_timeout_ns = 300000000LL;
	fx_expect(fx_run(f, doctor_check_container_docker), DOCTOR_WARN, "did not answer in time",
	          NULL);
	fx_free(f);

	f = gpu_host();
	fx_write(f, "fs/.dockerenv", "");
	fake_docker(f, DOCKER "/info-runc.txt", NULL, 0);
	fx_expect(fx_run(f, doctor_check_container_docker), DOCTOR_SKIP, "inside a container",
	          NULL);
	fx_free(f);
}

static void cdi_outcomes(void **state)
{
	(void)state;
	fx_t *f = gpu_host();
	fx_copy(f, "fs/etc/cdi/nvidia.yaml", CDI "/nvidia.yaml");
	fx_copy(f, "fs/etc/cdi/fpga.json", CDI "/other-vendor.json");
	fx_expect(fx_run(f, doctor_check_container_cdi), DOCTOR_PASS,
	          "CDI spec /etc/cdi/nvidia.yaml (generated for driver 550.54.14)", NULL);
	/* with nvidia-ctk, its device list */
	fx_exec(f, "bin/nvidia-ctk",
	        "#!/bin/sh\n[ \"$1 $2\" = 'cdi list' ] || exit 64\n"
	        "echo 'INFO[0000] Found 3 CDI devices' >&2\n"
	        "printf 'nvidia.com/gpu=0\\nnvidia.com/gpu=1\\nnvidia.com/gpu=all\\n'\n");
	fx_expect(fx_run(f, doctor_check_container_cdi), DOCTOR_PASS, ": nvidia.com/gpu=0,1,all",
	          NULL);
	fx_free(f);

	f = gpu_host(); /* the driver was upgraded after the spec was written */
	snprintf(f->m.driver, sizeof f->m.driver, "555.42.02");
	fx_copy(f, "fs/var/run/cdi/nvidia.yaml", CDI "/nvidia.yaml");
	fx_expect(fx_run(f, doctor_check_container_cdi), DOCTOR_WARN,
	          "generated for driver 550.54.14); the driver is now 555.42.02",
	          "sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml");
	fx_free(f);

	f = gpu_host(); /* a GPU more than the spec knows */
	fx_gpu(f, "NVIDIA H100 80GB HBM3", "GPU-cccc", "00000000:86:00.0");
	fx_copy(f, "fs/etc/cdi/nvidia.yaml", CDI "/nvidia.yaml");
	fx_expect(fx_run(f, doctor_check_container_cdi), DOCTOR_WARN,
	          "the spec names 2 /dev/nvidiaN, NVML sees 3 GPUs", "cdi generate");
	fx_free(f);

	f = gpu_host();
	fx_expect(fx_run(f, doctor_check_container_cdi), DOCTOR_WARN,
	          "no CDI spec for nvidia.com/gpu",
	          "install the NVIDIA Container Toolkit, then sudo nvidia-ctk cdi generate");
	fx_free(f);

	f = gpu_host();
	fx_copy(f, "fs/etc/cdi/nvidia.yaml", CDI "/nvidia.yaml");
	fx_exec(f, "bin/nvidia-ctk",
	        "#!/bin/sh\necho 'ERRO[0000] failed to initialize CDI cache: invalid spec' >&2\n"
	        "exit 1\n");
	fx_expect(fx_run(f, doctor_check_container_cdi), DOCTOR_FAIL,
	          "nvidia-ctk cdi list failed: ERRO[0000] failed to initialize CDI cache",
	          "regenerate the spec");
	fx_free(f);

	f = fx_new();
	f->m.nvml = DOCTOR_NVML_NO_LIBRARY;
	fx_expect(fx_run(f, doctor_check_container_cdi), DOCTOR_SKIP, "no NVIDIA GPU here", NULL);
	fx_free(f);

	f = gpu_host();
	fx_write(f, "fs/.dockerenv", "");
	fx_expect(fx_run(f, doctor_check_container_cdi), DOCTOR_SKIP, "CDI specs live on the host",
	          NULL);
	fx_free(f);
}

static void injection_outcomes(void **state)
{
	(void)state;
	fx_t *f = gpu_host();
	fx_expect(fx_run(f, doctor_check_container_injection), DOCTOR_SKIP, "not in a container",
	          NULL);
	fx_free(f);

	f = gpu_host();
	fx_write(f, "fs/.dockerenv", "");
	fx_write(f, "dev/nvidiactl", "");
	fx_write(f, "dev/nvidia0", "");
	fx_write(f, "dev/nvidia1", "");
	fx_env(f, "NVIDIA_VISIBLE_DEVICES=all");
	fx_env(f, "NVIDIA_DRIVER_CAPABILITIES=compute,utility");
	fx_expect(fx_run(f, doctor_check_container_injection), DOCTOR_PASS,
	          "2 GPU device nodes and driver libraries injected (NVIDIA_VISIBLE_DEVICES=all, "
	          "NVIDIA_DRIVER_CAPABILITIES=compute,utility)",
	          NULL);
	fx_free(f);

	f = gpu_host();
	fx_write(f, "fs/.dockerenv", "");
	fx_write(f, "dev/nvidiactl", "");
	fx_write(f, "dev/nvidia0", "");
	fx_env(f, "NVIDIA_DRIVER_CAPABILITIES=utility");
	fx_expect(fx_run(f, doctor_check_container_injection), DOCTOR_WARN, "lacks compute",
	          "NVIDIA_DRIVER_CAPABILITIES=compute,utility");
	fx_free(f);

	f = fx_new(); /* nothing injected, but the host has GPUs (sysfs shows the host's bus) */
	f->m.nvml = DOCTOR_NVML_NO_LIBRARY;
	fx_write(f, "fs/.dockerenv", "");
	fx_write(f, "sys/bus/pci/devices/0000:3b:00.0/vendor", "0x10de\n");
	fx_write(f, "sys/bus/pci/devices/0000:3b:00.0/class", "0x030200\n");
	fx_env(f, "NVIDIA_VISIBLE_DEVICES=void");
	fx_expect(fx_run(f, doctor_check_container_injection), DOCTOR_FAIL,
	          "no NVIDIA device nodes and no driver libraries were injected into this Docker "
	          "container (NVIDIA_VISIBLE_DEVICES=void",
	          "docker run --gpus all");
	fx_write(f, "dev/nvidiactl", "");
	fx_write(f, "dev/nvidia0", "");
	fx_expect(fx_run(f, doctor_check_container_injection), DOCTOR_FAIL,
	          "1 GPU device node but no libnvidia-ml.so.1", "NVIDIA_DRIVER_CAPABILITIES");
	fx_free(f);

	f = gpu_host(); /* libraries baked into the image, no nodes */
	fx_write(f, "fs/.dockerenv", "");
	fx_expect(fx_run(f, doctor_check_container_injection), DOCTOR_FAIL,
	          "driver libraries present but no /dev/nvidia* nodes",
	          "do not install an NVIDIA driver");
	fx_free(f);

	f = fx_new(); /* nothing injected and no GPU on the host */
	f->m.nvml = DOCTOR_NVML_NO_LIBRARY;
	fx_write(f, "fs/.dockerenv", "");
	fx_mkdirs(strcat(strcpy((char[PATH_MAX]){0}, f->root), "/sys/bus/pci/devices"));
	fx_expect(fx_run(f, doctor_check_container_injection), DOCTOR_SKIP,
	          "the host shows no NVIDIA GPU on its PCI bus", NULL);
	fx_free(f);
}

static void pid_namespace_outcomes(void **state)
{
	(void)state;
	fx_t *f = fx_new();
	fx_expect(fx_run(f, doctor_check_container_pid_namespace), DOCTOR_PASS,
	          "the host's PID namespace", NULL);
	fx_free(f);

	f = fx_new();
	fx_write(f, "proc/self/status", "Name:\tgpuwhy\nNSpid:\t81234\t7\n");
	fx_expect(fx_run(f, doctor_check_container_pid_namespace), DOCTOR_WARN,
	          "nested PID namespace", "--pid=host");
	fx_free(f);

	f = fx_new();
	fx_write(f, "proc/self/status", "Name:\tgpuwhy\nPid:\t7\n");
	fx_expect(fx_run(f, doctor_check_container_pid_namespace), DOCTOR_SKIP, "has no NSpid line",
	          NULL);
	fx_free(f);
}

/* ---- WSL ---- */

static fx_t *wsl2(void)
{
	fx_t *f = fx_new();
	fx_write(f, "proc/sys/kernel/osrelease", WSL2_KERNEL);
	fx_env(f, "WSL_DISTRO_NAME=Ubuntu-22.04");
	return f;
}

static void wsl_detect_outcomes(void **state)
{
	(void)state;
	fx_t *f = fx_new();
	fx_expect(fx_run(f, doctor_check_wsl_detect), DOCTOR_SKIP,
	          "not WSL (kernel 6.8.0-45-generic)", NULL);
	fx_expect(fx_run(f, doctor_check_wsl_dxg), DOCTOR_SKIP, "not WSL", NULL);
	fx_expect(fx_run(f, doctor_check_wsl_libraries), DOCTOR_SKIP, "not WSL", NULL);
	fx_expect(fx_run(f, doctor_check_wsl_linux_driver), DOCTOR_SKIP, "not WSL", NULL);
	fx_free(f);

	f = wsl2();
	fx_expect(fx_run(f, doctor_check_wsl_detect), DOCTOR_PASS,
	          "WSL2 (kernel 5.15.153.1-microsoft-standard-WSL2, distribution Ubuntu-22.04)",
	          NULL);
	fx_free(f);

	f = fx_new();
	fx_write(f, "proc/sys/kernel/osrelease", "4.4.0-19041-Microsoft\n");
	fx_env(f, "WSL_DISTRO_NAME=Ubuntu");
	fx_expect(fx_run(f, doctor_check_wsl_detect), DOCTOR_FAIL, "WSL1 has no GPU support",
	          "wsl --set-version Ubuntu 2");
	fx_expect(fx_run(f, doctor_check_wsl_dxg), DOCTOR_SKIP, "WSL1 has no GPU support", NULL);
	fx_free(f);
}

static void wsl_dxg_outcomes(void **state)
{
	(void)state;
	fx_t *f = wsl2();
	fx_expect(fx_run(f, doctor_check_wsl_dxg), DOCTOR_FAIL,
	          "/dev/dxg: this WSL2 kernel offers no GPU", "wsl --update");
	fx_write(f, "dev/dxg", "");
	fx_expect(fx_run(f, doctor_check_wsl_dxg), DOCTOR_PASS, "dxg present and read/writable",
	          NULL);
	fx_denied[0] = "/dxg";
	fx_expect(fx_run(f, doctor_check_wsl_dxg), DOCTOR_FAIL, "dxg not read/writable by uid",
	          "a service user such as ollama needs it too");
	fx_free(f);
}

static void wsl_libraries_outcomes(void **state)
{
	(void)state;
	fx_t *f = wsl2();
	fx_expect(
	    fx_run(f, doctor_check_wsl_libraries), DOCTOR_FAIL,
	    "no /usr/lib/wsl/lib/libnvidia-ml.so.1 (missing: libnvidia-ml.so.1, libcuda.so.1, "
	    "nvidia-smi)",
	    "install the current NVIDIA driver on Windows");
	fx_write(f, "fs/usr/lib/wsl/lib/libnvidia-ml.so.1", "");
	fx_expect(fx_run(f, doctor_check_wsl_libraries), DOCTOR_WARN,
	          "has libnvidia-ml.so.1 but lacks libcuda.so.1, nvidia-smi",
	          "update the NVIDIA driver");
	fx_write(f, "fs/usr/lib/wsl/lib/libcuda.so.1", "");
	fx_write(f, "fs/usr/lib/wsl/lib/nvidia-smi", "");
	fx_expect(fx_run(f, doctor_check_wsl_libraries), DOCTOR_PASS,
	          "has libnvidia-ml.so.1, libcuda.so.1, nvidia-smi (from the Windows driver)",
	          NULL);
	fx_nvml_ok(f); /* NVML came from a Linux driver copy instead */
	fx_expect(fx_run(f, doctor_check_wsl_libraries), DOCTOR_WARN,
	          "NVML was loaded from /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.14",
	          "wsl.linux_driver");
	fx_free(f);
}

static void wsl_linux_driver_outcomes(void **state)
{
	(void)state;
	fx_t *f = wsl2();
	fx_write(f, "fs/usr/lib/wsl/lib/libnvidia-ml.so.1", "");
	fx_write(f, "fs/usr/lib/wsl/lib/libcuda.so.1", "");
	/* ldconfig-style links into /usr/lib/wsl/lib are the Windows driver's own */
	fx_symlink(f, "fs/usr/lib/x86_64-linux-gnu/libcuda.so.1", "../wsl/lib/libcuda.so.1");
	fx_expect(fx_run(f, doctor_check_wsl_linux_driver), DOCTOR_PASS,
	          "no Linux NVIDIA driver inside WSL", NULL);
	fx_write(f, "fs/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.104.05", "");
	fx_symlink(f, "fs/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
	           "libnvidia-ml.so.535.104.05");
	fx_expect(fx_run(f, doctor_check_wsl_linux_driver), DOCTOR_FAIL,
	          "libnvidia-ml.so.1 in /usr/lib/x86_64-linux-gnu (version 535.104.05)",
	          "cuda-toolkit-12-x, never the cuda or cuda-drivers meta-packages");
	fx_free(f);

	f = wsl2();
	fx_write(f, "proc/driver/nvidia/version",
	         "NVRM version: NVIDIA UNIX x86_64 Kernel Module  "
	         "535.104.05  Sat Aug 19 01:15:15 UTC 2023\n");
	fx_expect(fx_run(f, doctor_check_wsl_linux_driver), DOCTOR_FAIL,
	          "nvidia kernel module 535.104.05", "sudo apt-get remove --purge");
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(detect_outcomes),
	    cmocka_unit_test(docker_outcomes),
	    cmocka_unit_test(cdi_outcomes),
	    cmocka_unit_test(injection_outcomes),
	    cmocka_unit_test(pid_namespace_outcomes),
	    cmocka_unit_test(wsl_detect_outcomes),
	    cmocka_unit_test(wsl_dxg_outcomes),
	    cmocka_unit_test(wsl_libraries_outcomes),
	    cmocka_unit_test(wsl_linux_driver_outcomes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
