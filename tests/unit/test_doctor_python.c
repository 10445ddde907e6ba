/* python.*: the interpreter, each framework against the driver, duplicates; the real probe script.
 */
#include <stdbool.h>
#include <stdio.h>
#include "test_doctor_common.h"

#include <libgen.h>

#include "util/child.h"

#define PYSITE FX_DOCTOR "/pysite"
#define H100_0 "GPU-8f2a1c3e-0000-1111-2222-333344445555"
#define H100_1 "GPU-1b7e9d00-6666-7777-8888-999900001111"

#define LIST_TORCH                                                                                 \
	"{\"python\": \"3.11.7\", \"executable\": \"/usr/bin/python3\", \"venv\": false, "         \
	"\"modules\": {\"torch\": \"/usr/lib/python3/dist-packages/torch/__init__.py\", "          \
	"\"jax\": null, \"tensorflow\": null, \"onnxruntime\": null, \"cupy\": null}, "            \
	"\"dists\": [{\"name\": \"torch\", \"version\": \"2.3.1\", \"location\": "                 \
	"\"/usr/lib/python3/dist-packages\"}]}"

/*
 * A fake python3 in bin/: `python3 -c SCRIPT MODE` prints some chatter and
 * then the marker and the JSON of py/MODE.json; py/MODE.sleep makes it hang,
 * py/MODE.fail makes it exit 1 with that file on stderr.
 */
static void fake_python(fx_t *f, const char *list_json)
{
	char script[1024];
	snprintf(script, sizeof script,
	         "#!/bin/sh\n"
	         "d='%s/py'\n"
	         "[ \"$1\" = -c ] || exit 9\n"
	         "[ -f \"$d/$3.sleep\" ] && exec sleep 30\n"
	         "if [ -f \"$d/$3.fail\" ]; then cat \"$d/$3.fail\" >&2; exit 1; fi\n"
	         "[ -f \"$d/$3.json\" ] || exit 3\n"
	         "echo 'framework chatter on stdout'\n"
	         "printf '@@GPUWHY@@'; cat \"$d/$3.json\"; echo\n",
	         f->root);
	fx_exec(f, "bin/python3", script);
	if (list_json)
		fx_write(f, "py/list.json", list_json);
}

static fx_t *gpu_machine(const char *cuda)
{
	fx_t *f = fx_new();
	fx_nvml_ok(f);
	snprintf(f->m.cuda, sizeof f->m.cuda, "%s", cuda);
	fx_gpu(f, "NVIDIA H100 80GB HBM3", H100_0, "00000000:3B:00.0");
	fx_gpu(f, "NVIDIA H100 80GB HBM3", H100_1, "00000000:5E:00.0");
	return f;
}

static void torch_answer(fx_t *f, const char *json)
{
	fake_python(f, LIST_TORCH);
	fx_write(f, "py/torch.json", json);
}

static void interpreter_outcomes(void **state)
{
	(void)state;
	fx_t *f = gpu_machine("12.4");
	fake_python(f, LIST_TORCH);
	fx_expect(fx_run(f, doctor_check_python_interpreter), DOCTOR_PASS,
	          "Python 3.11.7 at /usr/bin/python3; GPU frameworks: torch", NULL);
	fx_free(f);

	f = gpu_machine("12.4"); /* nothing on PATH */
	fx_expect(fx_run(f, doctor_check_python_interpreter), DOCTOR_SKIP,
	          "no python3 or python on PATH", "--python PATH");
	fx_expect(fx_run(f, doctor_check_python_torch), DOCTOR_SKIP, "no working Python", NULL);
	fx_expect(fx_run(f, doctor_check_python_duplicates), DOCTOR_SKIP, "no working Python",
	          NULL);
	fx_free(f);

	f = gpu_machine("12.4");
	f->o.python = "/nonexistent/venv/bin/python";
	fx_expect(fx_run(f, doctor_check_python_interpreter), DOCTOR_FAIL,
	          "--python /nonexistent/venv/bin/python: not found or not executable",
	          "--python ~/venv/bin/python");
	fx_free(f);

	f = gpu_machine("12.4");
	fake_python(f, NULL);
	fx_write(f, "py/list.fail",
	         "Fatal Python error: init_fs_encoding: failed to get the Python "
	         "codec of the filesystem encoding\n");
	fx_expect(fx_run(f, doctor_check_python_interpreter), DOCTOR_WARN,
	          "did not answer the probe: exited with status 1: Fatal Python error",
	          "-c 'import sys; print(sys.version)'");
	fx_free(f);

	f = gpu_machine("12.4"); /* the same, asked for explicitly: FAIL */
	fake_python(f, NULL);
	fx_write(f, "py/list.fail", "boom\n");
	char exe[PATH_MAX];
	f->o.python = fx_path(f, "bin/python3", exe);
	fx_expect(fx_run(f, doctor_check_python_interpreter), DOCTOR_FAIL,
	          "did not answer the probe", NULL);
	fx_free(f);

	f = gpu_machine("12.4");
	fake_python(f, "{\"python\": \"2.7.18\", \"executable\": \"/usr/bin/python\", \"modules\": "
	               "{\"torch\": \"/x/torch/__init__.py\"}, \"dists\": []}");
	fx_expect(fx_run(f, doctor_check_python_interpreter), DOCTOR_WARN, "is Python 2.7.18",
	          "--python python3");
	fx_expect(fx_run(f, doctor_check_python_torch), DOCTOR_SKIP,
	          "not probed under Python 2.7.18", NULL);
	fx_free(f);
}

static void torch_pass_and_cross_check(void **state)
{
	(void)state;
	fx_t *f = gpu_machine("12.4");
	torch_answer(
	    f, "{\"name\": \"torch\", \"version\": \"2.3.1+cu121\", \"cuda\": \"12.1\", "
	       "\"cpu_only\": false, \"gpu_count\": 2, \"devices\": [{\"name\": \"NVIDIA H100 "
	       "80GB HBM3\", \"uuid\": \"" H100_0 "\"}, {\"name\": \"NVIDIA H100 80GB HBM3\", "
	       "\"uuid\": \"" H100_1 "\"}]}");
	fx_expect(fx_run(f, doctor_check_python_torch), DOCTOR_PASS,
	          "torch 2.3.1+cu121 (CUDA 12.1); sees 2 GPUs: 2x NVIDIA H100 80GB HBM3", NULL);
	fx_expect(fx_run(f, doctor_check_cuda_visible_devices), DOCTOR_PASS, "(PyTorch agrees)",
	          NULL);
	fx_free(f);

	/* PyTorch numbers them the other way round from the prediction */
	f = gpu_machine("12.4");
	torch_answer(f, "{\"name\": \"torch\", \"version\": \"2.3.1+cu121\", \"cuda\": \"12.1\", "
	                "\"gpu_count\": 2, \"devices\": [{\"name\": \"H100\", \"uuid\": \"" H100_1
	                "\"}, {\"name\": \"H100\", \"uuid\": \"" H100_0 "\"}]}");
	fx_expect(fx_run(f, doctor_check_cuda_visible_devices), DOCTOR_WARN,
	          "but PyTorch's cuda:0 is " H100_1, "CUDA_DEVICE_ORDER=PCI_BUS_ID");
	fx_free(f);
}

static void torch_cpu_only(void **state)
{
	(void)state;
	const char *cpu = "{\"name\": \"torch\", \"version\": \"2.3.1+cpu\", \"cuda\": null, "
	                  "\"cpu_only\": true, \"gpu_count\": 0, \"devices\": []}";
	fx_t *f = gpu_machine("12.4");
	torch_answer(f, cpu);
	fx_expect(fx_run(f, doctor_check_python_torch), DOCTOR_FAIL,
	          "torch 2.3.1+cpu is a CPU-only build: it will never use the GPU",
	          "https://download.pytorch.org/whl/cu124");
	fx_free(f);

	f = gpu_machine("12.2"); /* the wheel suggested is not newer than the driver */
	torch_answer(f, cpu);
	fx_expect(fx_run(f, doctor_check_python_torch), DOCTOR_FAIL, "CPU-only", "whl/cu121");
	fx_free(f);

	f = fx_new(); /* no NVIDIA GPU at all: a CPU build is the right one */
	f->m.nvml = DOCTOR_NVML_NO_LIBRARY;
	torch_answer(f, cpu);
	fx_expect(fx_run(f, doctor_check_python_torch), DOCTOR_PASS,
	          "is a CPU-only build (this machine has no NVIDIA GPU)", NULL);
	fx_free(f);
}

static void torch_against_driver(void **state)
{
	(void)state;
	fx_t *f = gpu_machine("11.8");
	snprintf(f->m.driver, sizeof f->m.driver, "520.61.05");
	torch_answer(f,
	             "{\"name\": \"torch\", \"version\": \"2.3.1+cu121\", \"cuda\": \"12.1\", "
	             "\"gpu_count\": 0, \"devices\": [], \"warning\": \"CUDA initialization: The "
	             "NVIDIA driver on your system is too old (found version 11080).\"}");
	const doctor_result *r = fx_run(f, doctor_check_python_torch);
	fx_expect(r, DOCTOR_FAIL, "built for CUDA 12.1 but the driver supports at most 11.8",
	          "upgrade the NVIDIA driver to >= 530.30.02 (CUDA 12.1)");
	assert_non_null(strstr(r->found, "sees no GPU: CUDA initialization: The NVIDIA driver on "
	                                 "your system is too old"));
	fx_free(f);

	f = gpu_machine("12.2");
	torch_answer(f, "{\"name\": \"torch\", \"version\": \"2.4.0+cu124\", \"cuda\": \"12.4\", "
	                "\"gpu_count\": 2, \"devices\": [{\"name\": \"NVIDIA H100 80GB HBM3\"}, "
	                "{\"name\": \"NVIDIA H100 80GB HBM3\"}]}");
	fx_expect(fx_run(f, doctor_check_python_torch), DOCTOR_WARN,
	          "built for CUDA 12.4, the driver supports 12.2: it runs through minor-version "
	          "compatibility",
	          ">= 550.54.14 for full CUDA 12.4");
	fx_free(f);
}

static void torch_sees_too_few(void **state)
{
	(void)state;
	fx_t *f = gpu_machine("12.4");
	torch_answer(
	    f, "{\"name\": \"torch\", \"version\": \"2.3.1+cu121\", \"cuda\": \"12.1\", "
	       "\"gpu_count\": 0, \"devices\": [], \"error\": \"RuntimeError: No CUDA GPUs are "
	       "available\"}");
	fx_expect(fx_run(f, doctor_check_python_torch), DOCTOR_FAIL,
	          "sees no GPU: RuntimeError: No CUDA GPUs are available",
	          "initialise CUDA by hand");
	fx_free(f);

	f = gpu_machine("12.4");
	fx_env(f, "CUDA_VISIBLE_DEVICES=-1");
	torch_answer(f, "{\"name\": \"torch\", \"version\": \"2.3.1+cu121\", \"cuda\": \"12.1\", "
	                "\"gpu_count\": 0, \"devices\": []}");
	fx_expect(fx_run(f, doctor_check_python_torch), DOCTOR_FAIL, "sees no GPU",
	          "CUDA_VISIBLE_DEVICES hides every GPU");
	fx_free(f);

	f = gpu_machine("12.4");
	torch_answer(f, "{\"name\": \"torch\", \"version\": \"2.3.1+cu121\", \"cuda\": \"12.1\", "
	                "\"gpu_count\": 1, \"devices\": [{\"name\": \"NVIDIA H100 80GB HBM3\"}]}");
	fx_expect(fx_run(f, doctor_check_python_torch), DOCTOR_WARN,
	          "sees 1 GPU: 1x NVIDIA H100 80GB HBM3 "
	          "(CUDA should show 2)",
	          "CUDA_VISIBLE_DEVICES set inside the program");
	fx_free(f);

	f = gpu_machine("12.4"); /* simulated GPUs: no judgement on what torch sees */
	f->m.simulated = true;
	torch_answer(f, "{\"name\": \"torch\", \"version\": \"2.3.1+cu121\", \"cuda\": \"12.1\", "
	                "\"gpu_count\": 0, \"devices\": []}");
	fx_expect(fx_run(f, doctor_check_python_torch), DOCTOR_PASS, "simulated GPUs are invisible",
	          NULL);
	fx_free(f);
}

static void torch_import_problems(void **state)
{
	(void)state;
	fx_t *f = gpu_machine("12.4");
	torch_answer(f,
	             "{\"name\": \"torch\", \"error\": \"ImportError: libcudnn.so.8: cannot open "
	             "shared object file: No such file or directory\"}");
	fx_expect(fx_run(f, doctor_check_python_torch), DOCTOR_FAIL,
	          "import torch failed: ImportError: libcudnn.so.8",
	          "CUDA libraries it links against");
	fx_free(f);

	f = gpu_machine("12.4");
	torch_answer(f, "{\"name\": \"torch\", \"error\": \"ModuleNotFoundError: No module named "
	                "'typing_extensions'\"}");
	fx_expect(fx_run(f, doctor_check_python_torch), DOCTOR_FAIL,
	          "No module named 'typing_extensions'", "pip install --force-reinstall torch");
	fx_free(f);

	f = gpu_machine("12.4");
	fake_python(f, LIST_TORCH);
	fx_write(f, "py/torch.sleep", "");
	f->p.python_timeout_ns = 300000000LL;
	fx_expect(fx_run(f, doctor_check_python_torch), DOCTOR_WARN,
	          "import torch hung: no answer within 0.3 s", "to see where it hangs");
	fx_free(f);

	f = gpu_machine("12.4");
	fake_python(f,
	            "{\"python\": \"3.12.1\", \"executable\": \"/usr/bin/python3\", \"modules\": "
	            "{\"torch\": null}, \"dists\": []}");
	fx_expect(fx_run(f, doctor_check_python_torch), DOCTOR_SKIP, "PyTorch not installed", NULL);
	fx_free(f);
}

#define LIST_ORT                                                                                   \
	"{\"python\": \"3.11.7\", \"executable\": \"/usr/bin/python3\", \"modules\": "             \
	"{\"onnxruntime\": \"/s/onnxruntime/__init__.py\"}, \"dists\": []}"

static void onnxruntime_outcomes(void **state)
{
	(void)state;
	fx_t *f = gpu_machine("12.4");
	fake_python(f, LIST_ORT);
	fx_write(
	    f, "py/onnxruntime.json",
	    "{\"version\": \"1.18.0\", \"cuda\": \"12.2\", \"cpu_only\": false, \"gpu_count\": "
	    "-1, \"extra\": \"providers: CUDAExecutionProvider, CPUExecutionProvider; CUDA "
	    "provider library loads\"}");
	fx_expect(fx_run(f, doctor_check_python_onnxruntime), DOCTOR_PASS,
	          "onnxruntime 1.18.0 (CUDA 12.2); providers: CUDAExecutionProvider", NULL);
	fx_free(f);

	f = gpu_machine("12.4");
	fake_python(f, LIST_ORT);
	fx_write(f, "py/onnxruntime.json",
	         "{\"version\": \"1.18.0\", \"cpu_only\": true, \"gpu_count\": -1, \"extra\": "
	         "\"providers: AzureExecutionProvider, CPUExecutionProvider\"}");
	fx_expect(fx_run(f, doctor_check_python_onnxruntime), DOCTOR_FAIL, "is a CPU-only build",
	          "pip install onnxruntime-gpu");
	fx_free(f);

	f = gpu_machine("12.4");
	fake_python(f, LIST_ORT);
	fx_write(f, "py/onnxruntime.json",
	         "{\"version\": \"1.18.0\", \"cuda\": \"12.2\", \"gpu_count\": -1, \"extra\": "
	         "\"providers: CUDAExecutionProvider, CPUExecutionProvider\", \"error\": \"CUDA "
	         "provider cannot load: libcublasLt.so.12: cannot open shared object file\"}");
	fx_expect(fx_run(f, doctor_check_python_onnxruntime), DOCTOR_FAIL, "libcublasLt.so.12",
	          "install the CUDA and cuDNN versions");
	fx_free(f);
}

static void duplicates_outcomes(void **state)
{
	(void)state;
	fx_t *f = gpu_machine("12.4");
	fake_python(f, LIST_TORCH);
	fx_expect(fx_run(f, doctor_check_python_duplicates), DOCTOR_PASS, "one install each: torch",
	          NULL);
	fx_free(f);

	f = gpu_machine("12.4");
	fake_python(
	    f, "{\"python\": \"3.11.7\", \"executable\": \"/usr/bin/python3\", \"modules\": "
	       "{\"torch\": \"/home/u/.local/lib/python3.11/site-packages/torch/__init__.py\", "
	       "\"onnxruntime\": \"/usr/lib/python3/dist-packages/onnxruntime/__init__.py\"}, "
	       "\"dists\": ["
	       "{\"name\": \"torch\", \"version\": \"2.3.1\", \"location\": "
	       "\"/home/u/.local/lib/python3.11/site-packages\"},"
	       "{\"name\": \"torch\", \"version\": \"2.3.1\", \"location\": "
	       "\"/home/u/.local/lib/python3.11/site-packages\"},"
	       "{\"name\": \"torch\", \"version\": \"2.1.0\", \"location\": "
	       "\"/usr/lib/python3/dist-packages\"},"
	       "{\"name\": \"onnxruntime\", \"version\": \"1.18.0\", \"location\": "
	       "\"/usr/lib/python3/dist-packages\"},"
	       "{\"name\": \"onnxruntime-gpu\", \"version\": \"1.18.0\", \"location\": "
	       "\"/usr/lib/python3/dist-packages\"},"
	       "{\"name\": \"torchvision\", \"version\": \"0.18.1\", \"location\": "
	       "\"/usr/lib/python3/dist-packages\"}]}");
	const doctor_result *r = fx_run(f, doctor_check_python_duplicates);
	fx_expect(
	    r, DOCTOR_WARN,
	    "torch installed 2 times: torch 2.3.1 in /home/u/.local/lib/python3.11/site-packages, "
	    "torch 2.1.0 in /usr/lib/python3/dist-packages (imports from "
	    "/home/u/.local/lib/python3.11/site-packages/torch/__init__.py)",
	    "pip uninstall -y torch (repeat");
	assert_non_null(strstr(r->found, "onnxruntime installed 2 times: onnxruntime 1.18.0"));
	assert_non_null(strstr(r->fix, "pip uninstall -y onnxruntime onnxruntime-gpu"));
	assert_null(strstr(r->found, "torchvision"));
	fx_free(f);
}

/* The other frameworks share the judgement; each outcome of each, from canned answers. */
static void other_frameworks_outcomes(void **state)
{
	(void)state;
	static const struct {
		const char *mod;
		doctor_check_fn fn;
		const char *pass, *warn, *fail, *fail_fix;
	} fw[] = {
	    {"jax", doctor_check_python_jax,
	     "{\"version\": \"0.4.30\", \"cuda\": \"12.3\", \"gpu_count\": 2, \"devices\": "
	     "[{\"name\": \"NVIDIA H100 80GB HBM3\"}, {\"name\": \"NVIDIA H100 80GB HBM3\"}]}",
	     "{\"version\": \"0.4.35\", \"cuda\": \"12.6\", \"gpu_count\": 2, \"devices\": []}",
	     "{\"version\": \"0.4.30\", \"cpu_only\": true, \"gpu_count\": 0}", "jax[cuda12]"},
	    {"tensorflow", doctor_check_python_tensorflow,
	     "{\"version\": \"2.16.1\", \"cuda\": \"12.3\", \"gpu_count\": 2, \"devices\": "
	     "[{\"name\": \"NVIDIA H100 80GB HBM3\"}, {\"name\": \"NVIDIA H100 80GB HBM3\"}]}",
	     "{\"version\": \"2.18.0\", \"cuda\": \"12.5.1\", \"gpu_count\": 2, \"devices\": []}",
	     "{\"version\": \"2.16.1\", \"cpu_only\": true, \"gpu_count\": 0}",
	     "tensorflow[and-cuda]"},
	    {"onnxruntime", doctor_check_python_onnxruntime,
	     "{\"version\": \"1.18.0\", \"cuda\": \"12.2\", \"gpu_count\": -1, \"extra\": "
	     "\"providers: CUDAExecutionProvider, CPUExecutionProvider\"}",
	     "{\"version\": \"1.20.0\", \"cuda\": \"12.6\", \"gpu_count\": -1, \"extra\": "
	     "\"providers: CUDAExecutionProvider\"}",
	     "{\"version\": \"1.18.0\", \"cpu_only\": true, \"gpu_count\": -1}",
	     "pip install onnxruntime-gpu"},
	    {"cupy", doctor_check_python_cupy,
	     "{\"version\": \"13.1.0\", \"cuda\": \"12.2\", \"gpu_count\": 2, \"devices\": "
	     "[{\"name\": \"NVIDIA H100 80GB HBM3\"}, {\"name\": \"NVIDIA H100 80GB HBM3\"}]}",
	     "{\"version\": \"13.3.0\", \"cuda\": \"12.6\", \"gpu_count\": 2, \"devices\": []}",
	     "{\"version\": \"13.1.0\", \"cuda\": \"12.2\", \"gpu_count\": 0, \"error\": "
	     "\"CUDARuntimeError: cudaErrorNoDevice: no CUDA-capable device is detected\"}",
	     "initialise CUDA by hand"},
	};
	for (size_t i = 0; i < sizeof fw / sizeof *fw; i++) {
		char list[512], rel[64];
		snprintf(
		    list, sizeof list,
		    "{\"python\": \"3.11.7\", \"executable\": \"/usr/bin/python3\", \"modules\": "
		    "{\"%s\": \"/s/%s/__init__.py\"}, \"dists\": []}",
		    fw[i].mod, fw[i].mod);
		snprintf(rel, sizeof rel, "py/%s.json", fw[i].mod);
		const char *answers[3] = {fw[i].pass, fw[i].warn, fw[i].fail};
		const doctor_status want[3] = {DOCTOR_PASS, DOCTOR_WARN, DOCTOR_FAIL};
		for (int k = 0; k < 3; k++) {
			fx_t *f = gpu_machine("12.4");
			fake_python(f, list);
			fx_write(f, rel, answers[k]);
			const doctor_result *r = fx_run(f, fw[i].fn);
			fx_expect(r, want[k], fw[i].mod,
			          k == 1   ? "for full CUDA"
			          : k == 2 ? fw[i].fail_fix
			                   : NULL);
			fx_free(f);
		}
		fx_t *f = gpu_machine("12.4");
		fake_python(f, LIST_TORCH); /* only torch installed */
		fx_expect(fx_run(f, fw[i].fn), DOCTOR_SKIP, "not installed for /usr/bin/python3",
		          NULL);
		fx_free(f);
	}
}

/* ---- the real probe script, against stand-in frameworks (tests/fixtures/doctor/pysite) ---- */

static char *real_python(void)
{
	char *py = gw_which("python3", getenv("PATH"));
	if (!py)
		return NULL;
	/* importlib.metadata needs Python 3.8 */
	char *argv[] = {py, "-c", "import sys; sys.exit(sys.version_info < (3, 8))", NULL};
	gw_child_spec spec = {.path = py, .argv = argv};
	gw_child_result r;
	gw_child_run(&spec, 20000000000LL, 256, &r);
	bool ok = gw_child_ok(&r);
	gw_child_free(&r);
	if (!ok) {
		free(py);
		return NULL;
	}
	return py;
}

static void real_script_against_stand_ins(void **state)
{
	(void)state;
	char *py = real_python();
	if (!py) {
		print_message("no python3 >= 3.8 on PATH: real probe not exercised\n");
		skip();
	}
	const char *old = getenv("PYTHONPATH");
	char *saved = old ? strdup(old) : NULL;
	setenv("PYTHONPATH", PYSITE "/site:" PYSITE "/site2", 1);
	fx_t *f = gpu_machine("12.4");
	f->o.python = py;
	f->p.path = getenv("PATH");
	doctor_ctx_init(&f->c, &f->p, &f->o, &f->m, &f->r);
	f->ctx_live = true;
	const doctor_python *p = doctor_ctx_python(&f->c);
	assert_true(p->ran);
	assert_true(p->major >= 3);
	const doctor_pypkg *t = &p->pkg[0], *j = &p->pkg[1], *tf = &p->pkg[2], *o = &p->pkg[3],
	                   *c = &p->pkg[4];
	assert_true(t->probed);
	assert_string_equal(t->version, "2.3.1+cu121");
	assert_string_equal(t->cuda, "12.1");
	assert_int_equal(t->gpu_count, 2);
	assert_string_equal(t->dev_uuid[0], H100_0);
	assert_string_equal(t->dev_name[1], "NVIDIA H100 80GB HBM3");
	assert_true(j->probed);
	assert_string_equal(j->cuda, "12");
	assert_int_equal(j->gpu_count, 0);
	assert_non_null(strstr(j->error, "Unknown backend: 'gpu' requested"));
	assert_true(tf->probed);
	assert_true(tf->cpu_only);
	assert_true(o->probed);
	assert_string_equal(o->cuda, "12.2");
	assert_non_null(strstr(o->extra, "CUDAExecutionProvider"));
	assert_non_null(strstr(o->error, "CUDA provider cannot load"));
	assert_true(c->probed);
	assert_string_equal(c->cuda, "12.2");
	assert_non_null(strstr(c->error, "cudaErrorInsufficientDriver"));

	fx_expect(fx_run(f, doctor_check_python_torch), DOCTOR_PASS, "sees 2 GPUs", NULL);
	fx_expect(fx_run(f, doctor_check_cuda_visible_devices), DOCTOR_PASS, "(PyTorch agrees)",
	          NULL);
	fx_expect(fx_run(f, doctor_check_python_jax), DOCTOR_FAIL,
	          "jax 0.4.30 (CUDA 12); sees no GPU", NULL);
	fx_expect(fx_run(f, doctor_check_python_tensorflow), DOCTOR_FAIL, "CPU-only build",
	          "tensorflow[and-cuda]");
	fx_expect(fx_run(f, doctor_check_python_onnxruntime), DOCTOR_FAIL,
	          "CUDA provider cannot load", NULL);
	fx_expect(
	    fx_run(f, doctor_check_python_cupy), DOCTOR_FAIL,
	    "cupy 13.1.0 (CUDA 12.2); sees no GPU: CUDARuntimeError: cudaErrorInsufficientDriver",
	    "upgrade the NVIDIA driver");
	fx_expect(fx_run(f, doctor_check_python_duplicates), DOCTOR_WARN, "torch installed 2 times",
	          NULL);
	fx_free(f);
	if (saved) {
		setenv("PYTHONPATH", saved, 1);
		free(saved);
	} else {
		unsetenv("PYTHONPATH");
	}
	free(py);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(interpreter_outcomes),
	    cmocka_unit_test(torch_pass_and_cross_check),
	    cmocka_unit_test(torch_cpu_only),
	    cmocka_unit_test(torch_against_driver),
	    cmocka_unit_test(torch_sees_too_few),
	    cmocka_unit_test(torch_import_problems),
	    cmocka_unit_test(onnxruntime_outcomes),
	    cmocka_unit_test(duplicates_outcomes),
	    cmocka_unit_test(other_frameworks_outcomes),
	    cmocka_unit_test(real_script_against_stand_ins),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
