/* driver.*: NVML, versions, CUDA support, library/module mismatch, device nodes, persistence. */
#include <stdbool.h>
#include <stdio.h>
#include "test_doctor_common.h"

#define MODULE_550                                                                                 \
	"NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 01:44:30 UTC "      \
	"2024\n"                                                                                   \
	"GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n"
#define MODULE_OPEN_550                                                                            \
	"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.14  Release Build  "      \
	"(dvs-builder@U16-I3-B03-4-3)  Thu Feb 22 01:25:25 UTC 2024\n"

/* An H100 on the PCI bus (sysfs) at 0000:3b:00.0. */
static void pci_gpu(fx_t *f, const char *bdf)
{
	char rel[256];
	snprintf(rel, sizeof rel, "sys/bus/pci/devices/%s/vendor", bdf);
	fx_write(f, rel, "0x10de\n");
	snprintf(rel, sizeof rel, "sys/bus/pci/devices/%s/class", bdf);
	fx_write(f, rel, "0x030200\n");
}

static void nvml_pass(void **state)
{
	(void)state;
	fx_t *f = fx_new();
	fx_nvml_ok(f);
	fx_expect(
	    fx_run(f, doctor_check_driver_nvml), DOCTOR_PASS,
	    "NVML 12.550.54.14 loaded from /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.14",
	    NULL);
	fx_free(f);
}

static void nvml_fail_no_gpu_anywhere(void **state)
{
	(void)state;
	fx_t *f = fx_new();
	f->m.nvml = DOCTOR_NVML_NO_LIBRARY;
	snprintf(f->m.error, sizeof f->m.error, "no NVIDIA driver: libnvidia-ml.so.1 not found");
	fx_write(f, "sys/bus/pci/devices/0000:00:02.0/vendor", "0x8086\n"); /* not NVIDIA */
	fx_write(f, "sys/bus/pci/devices/0000:00:02.0/class", "0x030000\n");
	const doctor_result *r = fx_run(f, doctor_check_driver_nvml);
	fx_expect(r, DOCTOR_FAIL, "libnvidia-ml.so.1 not found", "gpuwhy --sim h100x1 doctor");
	assert_non_null(strstr(r->found, "no nvidia kernel module loaded"));
	assert_non_null(strstr(r->found, "no NVIDIA GPU on the PCI bus"));
	assert_non_null(strstr(r->fix, "this machine shows no NVIDIA GPU"));
	fx_free(f);
}

static void nvml_fail_gpu_without_driver(void **state)
{
	(void)state;
	fx_t *f = fx_new();
	f->m.nvml = DOCTOR_NVML_NO_LIBRARY;
	snprintf(f->m.error, sizeof f->m.error, "no NVIDIA driver: libnvidia-ml.so.1 not found");
	pci_gpu(f, "0000:3b:00.0");
	fx_write(f, "sys/bus/pci/devices/0000:3b:00.1/vendor", "0x10de\n"); /* its audio function */
	fx_write(f, "sys/bus/pci/devices/0000:3b:00.1/class", "0x040300\n");
	const doctor_result *r = fx_run(f, doctor_check_driver_nvml);
	fx_expect(r, DOCTOR_FAIL, "NVIDIA GPU on the PCI bus: 0000:3b:00.0",
	          "install the NVIDIA driver");
	assert_null(strstr(r->found, "3b:00.1"));
	fx_free(f);
}

static void nvml_fail_module_without_libraries(void **state)
{
	(void)state;
	fx_t *f = fx_new();
	f->m.nvml = DOCTOR_NVML_NO_LIBRARY;
	snprintf(f->m.error, sizeof f->m.error, "no NVIDIA driver: libnvidia-ml.so.1 not found");
	fx_write(f, "proc/driver/nvidia/version", MODULE_OPEN_550);
	pci_gpu(f, "0000:3b:00.0");
	fx_expect(fx_run(f, doctor_check_driver_nvml), DOCTOR_FAIL,
	          "nvidia kernel module 550.54.14 loaded", "user-space libraries are missing");
	fx_free(f);
}

static void nvml_fail_states_each_have_their_fix(void **state)
{
	(void)state;
	static const struct {
		doctor_nvml_state st;
		const char *msg, *fix;
	} cases[] = {
	    {DOCTOR_NVML_MISMATCH,
	     "driver/library version mismatch: libnvidia-ml.so.1 and the "
	     "loaded kernel module differ",
	     "sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia"},
	    {DOCTOR_NVML_NO_PERMISSION, "no permission on /dev/nvidia*", "sudo usermod -aG GROUP"},
	    {DOCTOR_NVML_NOT_LOADED, "NVIDIA driver not loaded", "sudo modprobe nvidia"},
	    {DOCTOR_NVML_OTHER, "NVML init failed: Unknown Error", "run nvidia-smi"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		fx_t *f = fx_new();
		f->m.nvml = cases[i].st;
		snprintf(f->m.error, sizeof f->m.error, "%s", cases[i].msg);
		fx_expect(fx_run(f, doctor_check_driver_nvml), DOCTOR_FAIL, cases[i].msg,
		          cases[i].fix);
		fx_free(f);
	}
}

static void nvml_fail_fix_in_container_and_wsl(void **state)
{
	(void)state;
	fx_t *f = fx_new();
	f->m.nvml = DOCTOR_NVML_NO_LIBRARY;
	snprintf(f->m.error, sizeof f->m.error, "no NVIDIA driver: libnvidia-ml.so.1 not found");
	fx_write(f, "fs/.dockerenv", "");
	pci_gpu(f, "0000:3b:00.0"); /* the host's bus shows through sysfs */
	fx_expect(fx_run(f, doctor_check_driver_nvml), DOCTOR_FAIL, NULL, "docker run --gpus all");
	fx_free(f);

	f = fx_new();
	f->m.nvml = DOCTOR_NVML_NO_LIBRARY;
	snprintf(f->m.error, sizeof f->m.error, "no NVIDIA driver: libnvidia-ml.so.1 not found");
	fx_write(f, "proc/sys/kernel/osrelease", "5.15.153.1-microsoft-standard-WSL2\n");
	fx_expect(fx_run(f, doctor_check_driver_nvml), DOCTOR_FAIL, NULL,
	          "never a Linux driver inside WSL");
	fx_free(f);
}

static void version_outcomes(void **state)
{
	(void)state;
	fx_t *f = fx_new();
	fx_nvml_ok(f);
	fx_write(f, "proc/driver/nvidia/version", MODULE_550);
	fx_expect(fx_run(f, doctor_check_driver_version), DOCTOR_PASS, "driver 550.54.14", NULL);
	fx_free(f);

	f = fx_new();
	fx_nvml_ok(f);
	f->m.driver[0] = '\0';
	fx_expect(fx_run(f, doctor_check_driver_version), DOCTOR_WARN,
	          "did not report the driver version", "update the NVIDIA driver");
	fx_free(f);

	f = fx_new();
	f->m.nvml = DOCTOR_NVML_NO_LIBRARY;
	fx_expect(fx_run(f, doctor_check_driver_version), DOCTOR_SKIP, "no NVIDIA driver installed",
	          NULL);
	fx_free(f);

	f = fx_new(); /* module from sysfs only */
	f->m.nvml = DOCTOR_NVML_NO_LIBRARY;
	fx_write(f, "sys/module/nvidia/version", "535.104.05\n");
	fx_expect(fx_run(f, doctor_check_driver_version), DOCTOR_PASS, "kernel module 535.104.05",
	          NULL);
	fx_free(f);
}

static void cuda_outcomes(void **state)
{
	(void)state;
	fx_t *f = fx_new();
	fx_nvml_ok(f);
	fx_expect(fx_run(f, doctor_check_driver_cuda), DOCTOR_PASS, "supports CUDA up to 12.4",
	          NULL);
	fx_free(f);

	f = fx_new();
	fx_nvml_ok(f);
	snprintf(f->m.cuda, sizeof f->m.cuda, "11.4");
	snprintf(f->m.driver, sizeof f->m.driver, "470.82.01");
	fx_expect(fx_run(f, doctor_check_driver_cuda), DOCTOR_WARN, "supports CUDA up to 11.4",
	          ">= 520.61.05 for CUDA 11.8");
	fx_free(f);

	f = fx_new();
	fx_nvml_ok(f);
	f->m.cuda[0] = '\0';
	fx_expect(fx_run(f, doctor_check_driver_cuda), DOCTOR_WARN,
	          "did not report the CUDA version", "update the NVIDIA driver");
	fx_free(f);

	f = fx_new();
	f->m.nvml = DOCTOR_NVML_NOT_LOADED;
	fx_expect(fx_run(f, doctor_check_driver_cuda), DOCTOR_SKIP, "needs a working NVML", NULL);
	fx_free(f);
}

static void mismatch_outcomes(void **state)
{
	(void)state;
	fx_t *f = fx_new();
	fx_nvml_ok(f);
	fx_write(f, "proc/driver/nvidia/version", MODULE_550);
	fx_write(f, "fs/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.14", "");
	fx_symlink(f, "fs/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", "libnvidia-ml.so.550.54.14");
	fx_expect(
	    fx_run(f, doctor_check_driver_mismatch), DOCTOR_PASS,
	    "kernel module 550.54.14 matches libnvidia-ml 550.54.14 (/usr/lib/x86_64-linux-gnu)",
	    NULL);
	/* a stale copy from an old .run install, found first through LD_LIBRARY_PATH */
	fx_write(f, "fs/opt/old/lib/libnvidia-ml.so.535.104.05", "");
	fx_symlink(f, "fs/opt/old/lib/libnvidia-ml.so.1", "libnvidia-ml.so.535.104.05");
	fx_env(f, "LD_LIBRARY_PATH=/opt/old/lib");
	fx_expect(fx_run(f, doctor_check_driver_mismatch), DOCTOR_WARN,
	          "535.104.05 in /opt/old/lib", "remove the stale copy");
	fx_free(f);

	f = fx_new();
	f->m.nvml = DOCTOR_NVML_MISMATCH;
	fx_write(f, "proc/driver/nvidia/version", MODULE_550);
	fx_write(f, "fs/usr/lib64/libnvidia-ml.so.555.42.02", "");
	fx_symlink(f, "fs/usr/lib64/libnvidia-ml.so.1", "libnvidia-ml.so.555.42.02");
	fx_expect(fx_run(f, doctor_check_driver_mismatch), DOCTOR_FAIL,
	          "kernel module 550.54.14, libnvidia-ml 555.42.02 (/usr/lib64)", "reboot");
	fx_free(f);

	f = fx_new(); /* the library NVML loaded is not the module's version */
	fx_nvml_ok(f);
	fx_write(f, "proc/driver/nvidia/version", MODULE_550);
	snprintf(f->m.lib_path, sizeof f->m.lib_path, "/opt/x/libnvidia-ml.so.535.104.05");
	fx_expect(
	    fx_run(f, doctor_check_driver_mismatch), DOCTOR_FAIL,
	    "loaded /opt/x/libnvidia-ml.so.535.104.05 is version 535.104.05, the kernel module "
	    "is 550.54.14",
	    "remove the stale library");
	fx_free(f);

	f = fx_new(); /* a module and no libraries anywhere */
	f->m.nvml = DOCTOR_NVML_NO_LIBRARY;
	fx_write(f, "proc/driver/nvidia/version", MODULE_550);
	fx_expect(fx_run(f, doctor_check_driver_mismatch), DOCTOR_WARN,
	          "kernel module 550.54.14 loaded, but no libnvidia-ml.so.1",
	          "user-space libraries of version 550.54.14");
	fx_free(f);

	f = fx_new();
	fx_nvml_ok(f);
	fx_expect(fx_run(f, doctor_check_driver_mismatch), DOCTOR_SKIP,
	          "no nvidia kernel module loaded", NULL);
	fx_free(f);
}

static void devices_outcomes(void **state)
{
	(void)state;
	fx_t *f = fx_new();
	fx_nvml_ok(f);
	fx_gpu(f, "NVIDIA H100 80GB HBM3", "GPU-aaaa", "00000000:3B:00.0");
	fx_gpu(f, "NVIDIA H100 80GB HBM3", "GPU-bbbb", "00000000:5E:00.0");
	fx_write(f, "dev/nvidiactl", "");
	fx_write(f, "dev/nvidia0", "");
	fx_write(f, "dev/nvidia1", "");
	fx_write(f, "dev/nvidia-uvm", "");
	fx_write(f, "dev/nvidia-modeset", "");
	const doctor_result *r = fx_run(f, doctor_check_driver_devices);
	fx_expect(r, DOCTOR_PASS, "nvidiactl, nvidia0,nvidia1, nvidia-uvm present", NULL);

	fx_denied[0] = "/nvidia1";
	r = fx_run(f, doctor_check_driver_devices);
	fx_expect(r, DOCTOR_FAIL, "nvidia1 not read/writable by uid", "sudo usermod -aG");
	fx_denied[0] = NULL;

	char path[PATH_MAX];
	unlink(fx_path(f, "dev/nvidia-uvm", path));
	fx_expect(fx_run(f, doctor_check_driver_devices), DOCTOR_WARN, "nvidia-uvm missing",
	          "nvidia-modprobe -u -c 0");

	unlink(fx_path(f, "dev/nvidiactl", path));
	fx_expect(fx_run(f, doctor_check_driver_devices), DOCTOR_FAIL, "nvidiactl missing",
	          "sudo nvidia-modprobe -c 0 -u");
	fx_free(f);

	f = fx_new(); /* one node for two GPUs */
	fx_nvml_ok(f);
	fx_gpu(f, "A", "GPU-aaaa", "00000000:3B:00.0");
	fx_gpu(f, "A", "GPU-bbbb", "00000000:5E:00.0");
	fx_write(f, "dev/nvidiactl", "");
	fx_write(f, "dev/nvidia0", "");
	fx_write(f, "dev/nvidia-uvm", "");
	fx_expect(fx_run(f, doctor_check_driver_devices), DOCTOR_WARN,
	          "1 /dev/nvidiaN node for 2 GPUs", "nvidia-modprobe -c N");
	fx_free(f);

	f = fx_new();
	f->m.nvml = DOCTOR_NVML_NO_LIBRARY;
	fx_expect(fx_run(f, doctor_check_driver_devices), DOCTOR_SKIP, "no NVIDIA driver", NULL);
	fx_free(f);

	f = fx_new();
	fx_nvml_ok(f);
	fx_write(f, "proc/sys/kernel/osrelease", "5.15.153.1-microsoft-standard-WSL2\n");
	fx_expect(fx_run(f, doctor_check_driver_devices), DOCTOR_SKIP, "/dev/dxg", NULL);
	fx_free(f);
}

static void persistence_outcomes(void **state)
{
	(void)state;
	fx_t *f = fx_new();
	fx_nvml_ok(f);
	fx_gpu(f, "A", "GPU-aaaa", "00000000:3B:00.0");
	fx_gpu(f, "A", "GPU-bbbb", "00000000:5E:00.0"); /* may move the array: index it after */
	fx_set(&f->m.gpu[0], GM_PERSISTENCE, 1);
	fx_set(&f->m.gpu[1], GM_PERSISTENCE, 1);
	fx_expect(fx_run(f, doctor_check_driver_persistence), DOCTOR_PASS, "on for all 2 GPUs",
	          NULL);
	fx_set(&f->m.gpu[1], GM_PERSISTENCE, 0);
	fx_expect(fx_run(f, doctor_check_driver_persistence), DOCTOR_WARN, "off on GPU 1",
	          "nvidia-persistenced");
	/* --gpus 0 leaves GPU 1 out */
	f->m.has_selection = true;
	f->m.selected[0] = true;
	fx_expect(fx_run(f, doctor_check_driver_persistence), DOCTOR_PASS,
	          "persistence mode on for the GPU", NULL);
	fx_free(f);

	f = fx_new();
	fx_nvml_ok(f);
	fx_gpu(f, "A", "GPU-aaaa", "00000000:3B:00.0");
	fx_expect(fx_run(f, doctor_check_driver_persistence), DOCTOR_SKIP, "not reported", NULL);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(nvml_pass),
	    cmocka_unit_test(nvml_fail_no_gpu_anywhere),
	    cmocka_unit_test(nvml_fail_gpu_without_driver),
	    cmocka_unit_test(nvml_fail_module_without_libraries),
	    cmocka_unit_test(nvml_fail_states_each_have_their_fix),
	    cmocka_unit_test(nvml_fail_fix_in_container_and_wsl),
	    cmocka_unit_test(version_outcomes),
	    cmocka_unit_test(cuda_outcomes),
	    cmocka_unit_test(mismatch_outcomes),
	    cmocka_unit_test(devices_outcomes),
	    cmocka_unit_test(persistence_outcomes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
