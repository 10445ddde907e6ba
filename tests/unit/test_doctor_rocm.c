/* rocm.*: the doctor's checks for AMD GPUs, on temporary trees (test_doctor_common.h). */
#include "test_doctor_common.h"

#include "doctor/check_rocm.h"

#define LIST_TORCH                                                                                 \
	"{\"python\": \"3.11.7\", \"executable\": \"/usr/bin/python3\", \"venv\": false, "         \
	"\"modules\": {\"torch\": \"/usr/lib/python3/dist-packages/torch/__init__.py\", "          \
	"\"jax\": null, \"tensorflow\": null, \"onnxruntime\": null, \"cupy\": null}, "            \
	"\"dists\": [{\"name\": \"torch\", \"version\": \"2.5.1\", \"location\": "                 \
	"\"/usr/lib/python3/dist-packages\"}]}"

/* An AMD GPU the way amdgpu shows it, with its KFD node of gfx target version gfx. */
static void amd_card(fx_t *f, int n, unsigned gfx)
{
	char rel[256], body[256];
	snprintf(rel, sizeof rel, "sys/class/drm/card%d/device/vendor", n);
	fx_write(f, rel, "0x1002\n");
	snprintf(rel, sizeof rel, "sys/class/drm/card%d/device/device", n);
	fx_write(f, rel, "0x744c\n");
	snprintf(rel, sizeof rel, "sys/class/drm/card%d/device/uevent", n);
	snprintf(body, sizeof body, "DRIVER=amdgpu\nPCI_SLOT_NAME=0000:%02x:00.0\n", 3 + n);
	fx_write(f, rel, body);
	snprintf(rel, sizeof rel, "sys/class/kfd/kfd/topology/nodes/%d/properties", n + 1);
	snprintf(body, sizeof body, "cpu_cores_count 0\nsimd_count 192\ngfx_target_version %u\n",
	         gfx);
	fx_write(f, rel, body);
}

/* A machine with AMD GPUs of the given targets and no NVIDIA driver. */
static fx_t *amd_machine(int n, const unsigned *gfx)
{
	fx_t *f = fx_new();
	f->m.nvml = DOCTOR_NVML_NO_LIBRARY;
	fx_write(f, "sys/class/kfd/kfd/topology/nodes/0/properties",
	         "cpu_cores_count 16\ngfx_target_version 0\n");
	for (int i = 0; i < n; i++)
		amd_card(f, i, gfx[i]);
	fx_write(f, "dev/kfd", "");
	fx_write(f, "dev/dri/card0", "");
	fx_write(f, "dev/dri/renderD128", "");
	return f;
}

static const unsigned GFX1100[] = {110000, 110000};

static void no_amd_gpu(void **state)
{
	(void)state;
	fx_t *f = fx_new();
	fx_nvml_ok(f);
	doctor_check_fn fns[] = {doctor_check_rocm_devices,
	                         doctor_check_rocm_torch,
	                         doctor_check_rocm_visible_devices,
	                         doctor_check_rocm_gfx_override,
	                         doctor_check_rocm_apps,
	                         doctor_check_rocm_faults};
	for (size_t i = 0; i < sizeof fns / sizeof *fns; i++)
		fx_expect(fx_run(f, fns[i]), DOCTOR_SKIP, "no AMD GPU", NULL);
	/* an Intel GPU is no AMD GPU */
	fx_write(f, "sys/class/drm/card0/device/vendor", "0x8086\n");
	fx_expect(fx_run(f, doctor_check_rocm_devices), DOCTOR_SKIP, "no AMD GPU", NULL);
	fx_free(f);
}

static void devices_outcomes(void **state)
{
	(void)state;
	fx_t *f = amd_machine(1, GFX1100);
	assert_int_equal(doctor_rocm_gpu_count(&(doctor_ctx){.p = &f->p}), 1);
	fx_expect(fx_run(f, doctor_check_rocm_devices), DOCTOR_PASS, "/dev/kfd and 1 render node",
	          NULL);
	fx_denied[0] = "/dev/kfd";
	fx_expect(fx_run(f, doctor_check_rocm_devices), DOCTOR_FAIL,
	          "/dev/kfd is not read/writable", "usermod -aG render,video");
	fx_denied[0] = "/dri/renderD128";
	fx_expect(fx_run(f, doctor_check_rocm_devices), DOCTOR_FAIL, "/dev/dri/renderD128 is not",
	          "render and video groups");
	fx_denied[0] = NULL;
	char path[PATH_MAX];
	unlink(fx_path(f, "dev/dri/renderD128", path));
	fx_expect(fx_run(f, doctor_check_rocm_devices), DOCTOR_FAIL, "/dev/dri/renderD* is missing",
	          "CONFIG_HSA_AMD");
	fx_free(f);

	/* in a container started without the devices */
	f = amd_machine(1, GFX1100);
	unlink(fx_path(f, "dev/kfd", path));
	fx_write(f, "fs/.dockerenv", "");
	fx_expect(fx_run(f, doctor_check_rocm_devices), DOCTOR_FAIL,
	          "/dev/kfd is missing in this container", "--device=/dev/kfd --device=/dev/dri");
	fx_free(f);
}

static void fake_python(fx_t *f, const char *torch_json)
{
	char script[1024];
	snprintf(script, sizeof script,
	         "#!/bin/sh\n"
	         "d='%s/py'\n"
	         "[ \"$1\" = -c ] || exit 9\n"
	         "[ -f \"$d/$3.json\" ] || exit 3\n"
	         "printf '@@GPUWHY@@'; cat \"$d/$3.json\"; echo\n",
	         f->root);
	fx_exec(f, "bin/python3", script);
	fx_write(f, "py/list.json", LIST_TORCH);
	fx_write(f, "py/torch.json", torch_json);
}

static void torch_outcomes(void **state)
{
	(void)state;
	fx_t *f = amd_machine(2, GFX1100);
	fake_python(f, "{\"name\": \"torch\", \"version\": \"2.5.1+rocm6.2\", \"cuda\": null, "
	               "\"other_gpu\": \"ROCm 6.2.41133\", \"cpu_only\": false, \"gpu_count\": 2, "
	               "\"devices\": [{\"name\": \"AMD Radeon RX 7900 XTX\"}, {\"name\": \"AMD "
	               "Radeon RX 7900 XTX\"}]}");
	fx_expect(fx_run(f, doctor_check_rocm_torch), DOCTOR_PASS,
	          "PyTorch 2.5.1+rocm6.2 (ROCm 6.2.41133) sees 2 of 2 AMD GPU(s): AMD Radeon RX "
	          "7900 XTX",
	          NULL);
	fx_free(f);

	f = amd_machine(2, GFX1100);
	fake_python(f, "{\"name\": \"torch\", \"version\": \"2.5.1+rocm6.2\", \"cuda\": null, "
	               "\"other_gpu\": \"ROCm 6.2.41133\", \"cpu_only\": false, \"gpu_count\": 0, "
	               "\"devices\": []}");
	fx_expect(fx_run(f, doctor_check_rocm_torch), DOCTOR_FAIL,
	          "sees no GPU though 2 AMD GPU(s)", "rocm.devices");
	fx_free(f);

	/* the CUDA wheel on an AMD-only machine: named as the problem */
	f = amd_machine(1, GFX1100);
	fake_python(f, "{\"name\": \"torch\", \"version\": \"2.5.1+cu124\", \"cuda\": \"12.4\", "
	               "\"cpu_only\": false, \"gpu_count\": 0, \"devices\": []}");
	fx_expect(fx_run(f, doctor_check_rocm_torch), DOCTOR_FAIL,
	          "is a CUDA build (CUDA 12.4) on a machine with only AMD GPUs",
	          "--index-url https://download.pytorch.org/whl/rocm");
	fx_free(f);

	f = amd_machine(1, GFX1100);
	fake_python(f, "{\"name\": \"torch\", \"version\": \"2.5.1+cpu\", \"cuda\": null, "
	               "\"cpu_only\": true, \"gpu_count\": 0, \"devices\": []}");
	fx_expect(fx_run(f, doctor_check_rocm_torch), DOCTOR_FAIL, "CPU-only build", "whl/rocm");
	fx_free(f);

	/* both vendors: a CUDA build serves the NVIDIA GPUs */
	f = amd_machine(1, GFX1100);
	fx_nvml_ok(f);
	fx_gpu(f, "NVIDIA H100 80GB HBM3", "GPU-1", "00000000:3B:00.0");
	fake_python(f,
	            "{\"name\": \"torch\", \"version\": \"2.5.1+cu124\", \"cuda\": \"12.4\", "
	            "\"cpu_only\": false, \"gpu_count\": 1, \"devices\": [{\"name\": \"H100\"}]}");
	fx_expect(fx_run(f, doctor_check_rocm_torch), DOCTOR_PASS, "uses the NVIDIA GPUs here",
	          NULL);
	fx_free(f);

	/* no PyTorch */
	f = amd_machine(1, GFX1100);
	fx_expect(fx_run(f, doctor_check_rocm_torch), DOCTOR_SKIP, "PyTorch is not installed",
	          NULL);
	fx_free(f);
}

static const doctor_result *vis(const char *const *env)
{
	static fx_t *f;
	if (f)
		fx_free(f);
	f = amd_machine(2, GFX1100);
	for (; *env; env++)
		fx_env(f, *env);
	return fx_run(f, doctor_check_rocm_visible_devices);
}

static void visible_devices_outcomes(void **state)
{
	(void)state;
	fx_expect(vis((const char *[]){NULL}), DOCTOR_PASS, "programs see all 2", NULL);
	fx_expect(vis((const char *[]){"HIP_VISIBLE_DEVICES=1", NULL}), DOCTOR_PASS,
	          "HIP programs see 1 of 2", NULL);
	fx_expect(vis((const char *[]){"HIP_VISIBLE_DEVICES=2", NULL}), DOCTOR_FAIL,
	          "HIP_VISIBLE_DEVICES=\"2\" names GPU 2, but this machine has only 2", "0 to 1");
	/* HIP counts within what ROCr leaves */
	fx_expect(vis((const char *[]){"ROCR_VISIBLE_DEVICES=1", "HIP_VISIBLE_DEVICES=1", NULL}),
	          DOCTOR_FAIL, "but ROCR_VISIBLE_DEVICES leaves only 1", "0 to 0");
	fx_expect(vis((const char *[]){"ROCR_VISIBLE_DEVICES=GPU-2c1e6a4f8b0d3e57", NULL}),
	          DOCTOR_PASS, "HIP programs see 1 of 2", NULL);
	fx_expect(vis((const char *[]){"ROCR_VISIBLE_DEVICES=", NULL}), DOCTOR_FAIL,
	          "ROCR_VISIBLE_DEVICES=\"\" hides every AMD GPU", "unset ROCR_VISIBLE_DEVICES");
	/* CUDA_VISIBLE_DEVICES is HIP's too */
	fx_expect(vis((const char *[]){"CUDA_VISIBLE_DEVICES=-1", NULL}), DOCTOR_FAIL,
	          "CUDA_VISIBLE_DEVICES=\"-1\" hides every AMD GPU", NULL);
	fx_expect(vis((const char *[]){"HIP_VISIBLE_DEVICES=0", "CUDA_VISIBLE_DEVICES=1", NULL}),
	          DOCTOR_WARN, "differ", "unset the other");
	fx_expect(vis((const char *[]){"HIP_VISIBLE_DEVICES=GPU-2c1e", NULL}), DOCTOR_WARN,
	          "HIP takes indices only", NULL);
	vis((const char *[]){NULL});
}

static void mixed_vendors_cvd(void **state)
{
	(void)state;
	fx_t *f = amd_machine(1, GFX1100);
	fx_nvml_ok(f);
	fx_gpu(f, "NVIDIA H100 80GB HBM3", "GPU-1", "00000000:3B:00.0");
	fx_env(f, "CUDA_VISIBLE_DEVICES=0");
	fx_expect(fx_run(f, doctor_check_rocm_visible_devices), DOCTOR_WARN,
	          "selects NVIDIA GPUs for CUDA programs and AMD GPUs for HIP programs",
	          "ROCR_VISIBLE_DEVICES or HIP_VISIBLE_DEVICES");
	fx_free(f);
}

static const doctor_result *gfx(int n, const unsigned *v, const char *ov)
{
	static fx_t *f;
	if (f)
		fx_free(f);
	f = NULL;
	if (n < 0)
		return NULL;
	f = amd_machine(n, v);
	if (ov)
		fx_env(f, ov);
	return fx_run(f, doctor_check_rocm_gfx_override);
}

static void gfx_override_outcomes(void **state)
{
	(void)state;
	char name[16], want[16];
	assert_int_equal(doctor_rocm_gfx_support(90010, name, sizeof name, want, sizeof want), 0);
	assert_string_equal(name, "gfx90a");
	assert_int_equal(doctor_rocm_gfx_support(100302, name, sizeof name, want, sizeof want), 1);
	assert_string_equal(name, "gfx1032");
	assert_string_equal(want, "10.3.0");
	assert_int_equal(doctor_rocm_gfx_support(110003, name, sizeof name, want, sizeof want), 1);
	assert_string_equal(want, "11.0.0");
	assert_int_equal(doctor_rocm_gfx_support(110501, name, sizeof name, want, sizeof want), -1);

	static const unsigned rx6700[] = {100301}, mixed[] = {100301, 110000}, apu[] = {110501};
	fx_expect(gfx(1, rx6700, NULL), DOCTOR_FAIL,
	          "gfx1031 is not on ROCm's list: its kernels load only with "
	          "HSA_OVERRIDE_GFX_VERSION=10.3.0",
	          "export HSA_OVERRIDE_GFX_VERSION=10.3.0");
	fx_expect(gfx(1, rx6700, "HSA_OVERRIDE_GFX_VERSION=11.0.0"), DOCTOR_FAIL, "(set: 11.0.0)",
	          "10.3.0");
	fx_expect(gfx(1, rx6700, "HSA_OVERRIDE_GFX_VERSION=10.3.0"), DOCTOR_PASS,
	          "gfx1031: runs with HSA_OVERRIDE_GFX_VERSION=10.3.0", NULL);
	fx_expect(gfx(1, GFX1100, NULL), DOCTOR_PASS, "gfx1100: no override needed", NULL);
	fx_expect(gfx(1, GFX1100, "HSA_OVERRIDE_GFX_VERSION=10.3.0"), DOCTOR_WARN,
	          "but gfx1100 runs without it", "unset HSA_OVERRIDE_GFX_VERSION");
	fx_expect(gfx(2, mixed, "HSA_OVERRIDE_GFX_VERSION=10.3.0"), DOCTOR_WARN,
	          "applies to every GPU (gfx1031, gfx1100)", "ROCR_VISIBLE_DEVICES");
	fx_expect(gfx(1, apu, NULL), DOCTOR_PASS, "gfx1151: not in gpuwhy's table", NULL);
	/* no KFD topology */
	fx_t *f = amd_machine(1, GFX1100);
	char path[PATH_MAX];
	unlink(fx_path(f, "sys/class/kfd/kfd/topology/nodes/1/properties", path));
	fx_expect(fx_run(f, doctor_check_rocm_gfx_override), DOCTOR_SKIP,
	          "no GPU in the KFD topology", NULL);
	fx_free(f);
	gfx(-1, NULL, NULL);
}

static void proc_app(fx_t *f, unsigned pid, const char *argv, size_t n, bool kfd, bool fds)
{
	char rel[128];
	snprintf(rel, sizeof rel, "proc/%u/cmdline", pid);
	fx_write_n(f, rel, argv, n);
	if (!fds)
		return;
	snprintf(rel, sizeof rel, "proc/%u/fd/0", pid);
	fx_symlink(f, rel, "/dev/null");
	snprintf(rel, sizeof rel, "proc/%u/fd/7", pid);
	fx_symlink(f, rel, kfd ? "/dev/kfd" : "/dev/dri/renderD128");
}

static void apps_outcomes(void **state)
{
	(void)state;
	fx_t *f = amd_machine(1, GFX1100);
	fx_expect(fx_run(f, doctor_check_rocm_apps), DOCTOR_SKIP, "neither ComfyUI nor Ollama",
	          NULL);
	static const char ollama[] = "/usr/local/bin/ollama\0serve";
	proc_app(f, 812, ollama, sizeof ollama, true, true);
	fx_expect(fx_run(f, doctor_check_rocm_apps), DOCTOR_PASS,
	          "Ollama (PID 812) uses the AMD GPU", NULL);
	static const char comfy[] = "python3\0/home/u/ComfyUI/main.py\0--listen";
	proc_app(f, 4242, comfy, sizeof comfy, false, true);
	fx_expect(fx_run(f, doctor_check_rocm_apps), DOCTOR_WARN,
	          "ComfyUI (PID 4242) has no /dev/kfd open: it runs on the CPU",
	          "ROCm build of PyTorch in ComfyUI's environment");
	fx_free(f);

	f = amd_machine(1, GFX1100);
	proc_app(f, 812, ollama, sizeof ollama, false, true);
	fx_expect(fx_run(f, doctor_check_rocm_apps), DOCTOR_WARN,
	          "Ollama (PID 812) has no /dev/kfd open", "HSA_OVERRIDE_GFX_VERSION");
	fx_free(f);

	/* another user's Ollama: its fd directory cannot be read */
	f = amd_machine(1, GFX1100);
	proc_app(f, 812, ollama, sizeof ollama, false, false);
	fx_expect(fx_run(f, doctor_check_rocm_apps), DOCTOR_SKIP, "is another user's", NULL);
	fx_free(f);
}

static void faults_outcomes(void **state)
{
	(void)state;
	fx_t *f = amd_machine(1, GFX1100);
	/* the kernel log not readable */
	fx_expect(fx_run(f, doctor_check_rocm_faults), DOCTOR_SKIP, NULL, "dmesg_restrict");
	fx_free(f);

	f = amd_machine(1, GFX1100);
	fx_write(f, "kmsg", "[    3.1] [drm] amdgpu kernel modesetting enabled.\n");
	fx_expect(fx_run(f, doctor_check_rocm_faults), DOCTOR_PASS, "no amdgpu ring timeouts",
	          NULL);
	fx_free(f);

	f = amd_machine(1, GFX1100);
	fx_write(f, "kmsg",
	         "[ 10.5] amdgpu 0000:03:00.0: amdgpu: ring gfx_0.0.0 timeout, signaled seq=5, "
	         "emitted seq=7\n"
	         "[ 10.6] amdgpu 0000:03:00.0: amdgpu: GPU reset begin!\n"
	         "[ 12.0] amdgpu 0000:03:00.0: amdgpu: GPU reset(1) succeeded!\n");
	fx_expect(fx_run(f, doctor_check_rocm_faults), DOCTOR_WARN,
	          "0000:03:00.0: 1 ring timeout(s) (first: gfx_0.0.0), 1 GPU reset(s), 0 failed",
	          "the process is named on the line after");
	fx_free(f);

	/* the shapes of several kernels, one reset that failed */
	f = amd_machine(1, GFX1100);
	fx_copy(f, "kmsg", FIXTURES_DIR "/host/kmsg/amdgpu.txt");
	const doctor_result *r = fx_run(f, doctor_check_rocm_faults);
	fx_expect(r, DOCTOR_FAIL,
	          "0000:08:00.0: 1 ring timeout(s) (first: comp_1.1.0), 1 GPU reset(s), 1 failed",
	          "reboot");
	assert_non_null(strstr(r->found, "a GPU the line does not name: 1 ring timeout(s) (first: "
	                                 "gfx_0.0.0), 0 GPU reset(s), 0 failed"));
	assert_non_null(
	    strstr(r->found, "0000:0c:00.0: 0 ring timeout(s) (first: -), 1 GPU reset(s)"));
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(no_amd_gpu),        cmocka_unit_test(devices_outcomes),
	    cmocka_unit_test(torch_outcomes),    cmocka_unit_test(visible_devices_outcomes),
	    cmocka_unit_test(mixed_vendors_cvd), cmocka_unit_test(gfx_override_outcomes),
	    cmocka_unit_test(apps_outcomes),     cmocka_unit_test(faults_outcomes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
