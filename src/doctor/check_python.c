/* check_python.c - python.*: the interpreter, each GPU framework, duplicate installs. */
#include <stdbool.h>
#include <stdio.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "doctor/check_cuda.h"
#include "doctor/checks.h"
#include "doctor/doctor_int.h"
#include "util/i18n.h"
#include "util/strbuf.h"

void doctor_check_python_interpreter(doctor_ctx *c)
{
	const doctor_python *py = doctor_ctx_python(c);
	if (!py->found) {
		if (py->explicit_path) {
			doctor_result *r = doctor_addf(c->r, "python.interpreter", DOCTOR_FAIL,
			                               "--python %s: %s", py->exe, py->error);
			doctor_fixf(r, "give the interpreter your job runs with, e.g. --python "
			               "~/venv/bin/python");
		} else {
			doctor_result *r = doctor_addf(c->r, "python.interpreter", DOCTOR_SKIP,
			                               "no python3 or python on PATH");
			doctor_fixf(r, "pass --python PATH to check the environment your job uses");
		}
		return;
	}
	if (!py->ran) {
		doctor_result *r = doctor_addf(
		    c->r, "python.interpreter", py->explicit_path ? DOCTOR_FAIL : DOCTOR_WARN,
		    "%s did not answer the probe: %s", py->exe, py->error);
		doctor_fixf(r, "run it by hand to see why: %s -c 'import sys; print(sys.version)'",
		            py->exe);
		return;
	}
	if (py->major < 3) {
		doctor_result *r = doctor_addf(
		    c->r, "python.interpreter", DOCTOR_WARN,
		    "%s is Python %s: current GPU frameworks need Python 3", py->exe, py->version);
		doctor_fixf(r, "--python python3 (or the interpreter of your virtualenv)");
		return;
	}
	gw_strbuf have = {0};
	for (int i = 0; i < DOCTOR_PY_NPKG; i++) {
		if (!py->pkg[i].installed)
			continue;
		gw_sb_sep(&have, ", ");
		gw_sb_printf(&have, "%s", py->pkg[i].name);
	}
	doctor_addf(
	    c->r, "python.interpreter", DOCTOR_PASS, "Python %s at %s%s; %s%s", py->version,
	    py->sys_exe[0] ? py->sys_exe : py->exe, py->venv ? DOCTOR_(" (virtualenv)") : "",
	    have.len ? DOCTOR_("GPU frameworks: ")
	             : DOCTOR_("none of torch, jax, tensorflow, onnxruntime, cupy installed"),
	    gw_sb_str(&have));
	gw_sb_free(&have);
}

/* ---- one framework ---- */

typedef struct {
	int pkg; /* index into doctor_python.pkg */
	const char *check;
	const char *label;   /* how users name it */
	const char *cpu_fix; /* how to get a CUDA build */
} fw_desc;

/* The newest PyTorch wheel tag (cuXYZ) not newer than the driver's CUDA. */
static void torch_tag(int driver_cuda, char *out, size_t len)
{
	static const int tags[] = {118, 121, 124, 126, 128};
	int best = 118;
	for (size_t i = 0; i < sizeof tags / sizeof *tags; i++)
		if (tags[i] / 10 * 1000 + tags[i] % 10 * 10 <= driver_cuda)
			best = tags[i];
	snprintf(out, len, "cu%d", best);
}

static void cpu_build_fix(doctor_ctx *c, const fw_desc *f, doctor_result *r)
{
	int dc = doctor_cuda_version_int(c->m->cuda);
	if (f->pkg == 0) {
		char tag[16];
		torch_tag(dc > 0 ? dc : 12040, tag, sizeof tag);
		doctor_fixf(
		    r,
		    "pip install --force-reinstall torch --index-url "
		    "https://download.pytorch.org/whl/%s (a cuXYZ not newer than the driver's "
		    "CUDA %s)",
		    tag, c->m->cuda[0] ? c->m->cuda : DOCTOR_("version"));
	} else {
		doctor_fixf(r, "%s", DOCTOR_(f->cpu_fix));
	}
}

/* Does the machine have an NVIDIA GPU at all (usable or not)? */
static bool machine_has_gpu(doctor_ctx *c)
{
	char bdf[4][16];
	if (c->m->nvml == DOCTOR_NVML_OK)
		return c->m->n > 0;
	return doctor_pci_nvidia_gpus(c->p, bdf, 4) > 0 || doctor_driver_present(c);
}

/* How many GPUs CUDA should show this environment (after CUDA_VISIBLE_DEVICES). */
static int expected_gpus(doctor_ctx *c)
{
	const doctor_machine *m = c->m;
	if (m->nvml != DOCTOR_NVML_OK)
		return 0;
	doctor_cvd_gpu g[DOCTOR_CVD_MAX];
	int n = m->n < DOCTOR_CVD_MAX ? m->n : DOCTOR_CVD_MAX;
	for (int i = 0; i < n; i++) {
		memset(&g[i], 0, sizeof g[i]);
		g[i].uuid = m->gpu[i].st.uuid;
	}
	const char *o = doctor_env(c, "CUDA_DEVICE_ORDER");
	doctor_cvd_map map;
	doctor_cvd_resolve(doctor_env(c, "CUDA_VISIBLE_DEVICES"), g, n,
	                   o && !strcmp(o, "PCI_BUS_ID"), &map);
	return map.n;
}

static const char *devices_text(const doctor_pypkg *k, char *out, size_t len)
{
	out[0] = '\0';
	size_t used = 0;
	for (int i = 0; i < k->ndev && used < len; i++) {
		int same = 1;
		bool first = true;
		for (int j = 0; j < k->ndev; j++) {
			if (j != i && !strcmp(k->dev_name[i], k->dev_name[j])) {
				same++;
				first &= j > i;
			}
		}
		if (!first)
			continue;
		int w = snprintf(out + used, len - used, "%s%dx %s", used ? ", " : "", same,
		                 k->dev_name[i]);
		if (w < 0)
			break;
		used += (size_t)w;
	}
	return out;
}

/* Compare the CUDA a framework was built for with what the driver supports. */
static doctor_status cuda_compat(doctor_ctx *c, const fw_desc *f, const doctor_pypkg *k,
                                 gw_strbuf *found, gw_strbuf *fix)
{
	int built = doctor_cuda_version_int(k->cuda);
	int drv = doctor_cuda_version_int(c->m->cuda);
	if (built < 0 || drv < 0)
		return DOCTOR_PASS;
	bool minor_known = strchr(k->cuda, '.') != NULL;
	const char *need = doctor_driver_for_cuda(built);
	if (built / 1000 > drv / 1000) {
		gw_sb_printf(
		    found,
		    DOCTOR_("; built for CUDA %s but the driver supports at most %s, so it "
		            "cannot use the GPU"),
		    k->cuda, c->m->cuda);
		gw_sb_sep(fix, "; ");
		gw_sb_printf(
		    fix,
		    DOCTOR_("upgrade the NVIDIA driver%s%s (CUDA %s), or install a %s build for "
		            "CUDA <= %s"),
		    need ? DOCTOR_(" to >= ") : "", need ? need : "", k->cuda, f->label,
		    c->m->cuda);
		return DOCTOR_FAIL;
	}
	if (minor_known && built > drv) {
		gw_sb_printf(
		    found,
		    DOCTOR_(
		        "; built for CUDA %s, the driver supports %s: it runs through "
		        "minor-version compatibility, but PTX JIT and the newest features fail"),
		    k->cuda, c->m->cuda);
		gw_sb_sep(fix, "; ");
		gw_sb_printf(
		    fix,
		    DOCTOR_("upgrade the driver%s%s for full CUDA %s support, or use a build for "
		            "CUDA <= %s"),
		    need ? DOCTOR_(" to >= ") : "", need ? need : "", k->cuda, c->m->cuda);
		return DOCTOR_WARN;
	}
	return DOCTOR_PASS;
}

/* The import failed or hung: say which and what to try. */
static void framework_import_failed(doctor_ctx *c, const fw_desc *f, const doctor_python *py,
                                    const doctor_pypkg *k)
{
	bool slow = k->timed_out;
	doctor_result *r =
	    doctor_addf(c->r, f->check, slow ? DOCTOR_WARN : DOCTOR_FAIL, "import %s %s: %s",
	                k->name, slow ? DOCTOR_("hung") : DOCTOR_("failed"),
	                k->error[0] ? k->error : DOCTOR_("no answer"));
	if (slow)
		doctor_fixf(r,
		            "run %s -c 'import %s' by hand to see where it hangs (CUDA init, a "
		            "network filesystem)",
		            py->exe, k->name);
	else if (strstr(k->error, "libcu") || strstr(k->error, "libnv"))
		doctor_fixf(r, "the CUDA libraries it links against are missing: install the "
		               "build's CUDA runtime (pip wheels bring their own; check "
		               "LD_LIBRARY_PATH for a stray CUDA)");
	else
		doctor_fixf(r, "pip install --force-reinstall %s (in the environment of %s)",
		            k->name, py->exe);
}

/* The framework's probe result, or NULL after reporting why there is none to judge. */
static const doctor_pypkg *framework_probed(doctor_ctx *c, const fw_desc *f)
{
	const doctor_python *py = doctor_ctx_python(c);
	if (!py->ran) {
		doctor_addf(c->r, f->check, DOCTOR_SKIP,
		            "no working Python (see python.interpreter)");
		return NULL;
	}
	const doctor_pypkg *k = &py->pkg[f->pkg];
	if (!k->installed) {
		doctor_addf(c->r, f->check, DOCTOR_SKIP, "%s not installed for %s", f->label,
		            py->sys_exe[0] ? py->sys_exe : py->exe);
		return NULL;
	}
	if (py->major < 3) {
		doctor_addf(c->r, f->check, DOCTOR_SKIP, "not probed under Python %s", py->version);
		return NULL;
	}
	if (!k->probed || !k->version[0]) {
		framework_import_failed(c, f, py, k);
		return NULL;
	}
	return k;
}

/* A build that cannot use NVIDIA GPUs (CPU-only, AMD): reported here, true. */
static bool framework_wrong_build(doctor_ctx *c, const fw_desc *f, const doctor_pypkg *k,
                                  bool has_gpu, gw_strbuf *found)
{
	if (k->cpu_only) {
		if (has_gpu) {
			gw_sb_printf(found,
			             DOCTOR_(" is a CPU-only build: it will never use the GPU"));
			doctor_result *r =
			    doctor_addf(c->r, f->check, DOCTOR_FAIL, "%s", gw_sb_str(found));
			cpu_build_fix(c, f, r);
		} else {
			gw_sb_printf(
			    found,
			    DOCTOR_(" is a CPU-only build (this machine has no NVIDIA GPU)"));
			doctor_addf(c->r, f->check, DOCTOR_PASS, "%s", gw_sb_str(found));
		}
		return true;
	}
	if (k->other_gpu[0] && !k->cuda[0] && has_gpu) {
		gw_sb_printf(found, DOCTOR_(": built for AMD GPUs, this machine has NVIDIA GPUs"));
		doctor_result *r = doctor_addf(c->r, f->check, DOCTOR_FAIL, "%s", gw_sb_str(found));
		cpu_build_fix(c, f, r);
		return true;
	}
	return false;
}

/* The probe script's notes are English (pyprobe.c): its few fixed phrases are
 * put in the user's language here, where they are shown; the rest (providers'
 * names, the library's own error) is quoted as it came. */
static const char *probe_note(const char *note, char *out, size_t len)
{
	static const char providers[] = "providers: ", loads[] = "; CUDA provider library loads",
	                  noload[] = "CUDA provider cannot load: ";
	char body[600];
	if (!strncmp(note, noload, sizeof noload - 1)) {
		snprintf(out, len, DOCTOR_("CUDA provider cannot load: %s"),
		         note + sizeof noload - 1);
		return out;
	}
	if (strncmp(note, providers, sizeof providers - 1)) {
		snprintf(out, len, "%s", note);
		return out;
	}
	snprintf(body, sizeof body, "%s", note + sizeof providers - 1);
	size_t bl = strlen(body), ll = sizeof loads - 1;
	bool loaded = bl >= ll && !strcmp(body + bl - ll, loads);
	if (loaded)
		body[bl - ll] = '\0';
	snprintf(out, len, DOCTOR_("providers: %s%s"), body,
	         loaded ? DOCTOR_("; CUDA provider library loads") : "");
	return out;
}

/* ONNX Runtime cannot count GPUs without a model: its providers say it all. */
static doctor_status framework_uncounted(const doctor_pypkg *k, bool has_gpu, doctor_status st,
                                         gw_strbuf *found, gw_strbuf *fix)
{
	char note[700];
	if (k->extra[0])
		gw_sb_printf(found, "; %s", probe_note(k->extra, note, sizeof note));
	if (k->error[0] && !has_gpu) {
		gw_sb_printf(found, DOCTOR_("; %s (this machine has no NVIDIA GPU)"),
		             probe_note(k->error, note, sizeof note));
	} else if (k->error[0]) {
		gw_sb_printf(found, "; %s", probe_note(k->error, note, sizeof note));
		st = doctor_worse(st, DOCTOR_FAIL);
		gw_sb_sep(fix, "; ");
		gw_sb_printf(fix,
		             DOCTOR_("install the CUDA and cuDNN versions this build needs (the "
		                     "missing library is named above)"));
	}
	return st;
}

/* The framework sees no GPU on a machine that has some: why, as far as is known. */
static doctor_status framework_sees_none(doctor_ctx *c, const doctor_python *py,
                                         const doctor_pypkg *k, doctor_status st, gw_strbuf *found,
                                         gw_strbuf *fix)
{
	int want = expected_gpus(c);
	gw_sb_printf(found, DOCTOR_("; sees no GPU"));
	if (k->error[0])
		gw_sb_printf(found, ": %s", k->error);
	bool explained = st == DOCTOR_FAIL; /* the CUDA check already says why */
	gw_sb_sep(fix, "; ");
	if (c->m->nvml != DOCTOR_NVML_OK)
		gw_sb_printf(fix, DOCTOR_("fix the driver first (driver.nvml)"));
	else if (want == 0)
		gw_sb_printf(
		    fix, DOCTOR_("CUDA_VISIBLE_DEVICES hides every GPU (cuda.visible_devices)"));
	else if (explained)
		gw_sb_printf(fix, DOCTOR_("then it sees the GPUs"));
	else if (strstr(k->error, "too old") || strstr(k->error, "insufficient"))
		gw_sb_printf(fix, DOCTOR_("upgrade the NVIDIA driver (see driver.cuda)"));
	else
		gw_sb_printf(fix,
		             DOCTOR_("run %s -c 'import %s' and initialise CUDA by hand for the "
		                     "full error; check LD_LIBRARY_PATH for a stray libcuda.so"),
		             py->exe, k->name);
	return DOCTOR_FAIL;
}

/* The GPUs the framework sees against the ones it should. */
static doctor_status framework_gpus(doctor_ctx *c, const doctor_pypkg *k, bool has_gpu,
                                    doctor_status st, gw_strbuf *found, gw_strbuf *fix)
{
	if (c->m->simulated) {
		int n = k->gpu_count < 0 ? 0 : k->gpu_count;
		gw_sb_printf(found,
		             DOCTOR_P("; sees %d GPU (simulated GPUs are invisible to frameworks)",
		                      "; sees %d GPUs (simulated GPUs are invisible to frameworks)",
		                      n),
		             n);
		return st;
	}
	if (k->gpu_count < 0)
		return framework_uncounted(k, has_gpu, st, found, fix);
	if (!has_gpu) {
		gw_sb_printf(found, DOCTOR_("; sees no GPU (this machine has no NVIDIA GPU)"));
		return st;
	}
	if (k->gpu_count == 0)
		return framework_sees_none(c, doctor_ctx_python(c), k, st, found, fix);
	int want = expected_gpus(c);
	char devs[256];
	gw_sb_printf(found, DOCTOR_P("; sees %d GPU: %s", "; sees %d GPUs: %s", k->gpu_count),
	             k->gpu_count, devices_text(k, devs, sizeof devs));
	if (k->gpu_count < want) {
		gw_sb_printf(found, DOCTOR_(" (CUDA should show %d)"), want);
		st = doctor_worse(st, DOCTOR_WARN);
		gw_sb_sep(fix, "; ");
		gw_sb_printf(
		    fix, DOCTOR_("check the environment the job really runs with "
		                 "(CUDA_VISIBLE_DEVICES set inside the program or by a launcher)"));
	}
	return st;
}

static void check_framework(doctor_ctx *c, const fw_desc *f)
{
	const doctor_pypkg *k = framework_probed(c, f);
	if (!k)
		return;
	bool has_gpu = machine_has_gpu(c);
	gw_strbuf found = {0}, fix = {0};
	gw_sb_printf(&found, "%s %s", k->name, k->version);
	if (k->cuda[0])
		gw_sb_printf(&found, " (CUDA %s)", k->cuda);
	if (k->other_gpu[0])
		gw_sb_printf(&found, " (%s)", k->other_gpu);
	if (framework_wrong_build(c, f, k, has_gpu, &found)) {
		gw_sb_free(&found);
		return;
	}
	doctor_status st = DOCTOR_PASS;
	if (c->m->nvml == DOCTOR_NVML_OK)
		st = cuda_compat(c, f, k, &found, &fix);
	st = framework_gpus(c, k, has_gpu, st, &found, &fix);
	doctor_result *r = doctor_addf(c->r, f->check, st, "%s", gw_sb_str(&found));
	if (st != DOCTOR_PASS && fix.len)
		doctor_fixf(r, "%s", gw_sb_str(&fix));
	gw_sb_free(&found);
	gw_sb_free(&fix);
}

static const fw_desc fws[DOCTOR_PY_NPKG] = {
    {0, "python.torch", "PyTorch", NULL},
    {1, "python.jax", "JAX", "pip install -U 'jax[cuda12]'"},
    {2, "python.tensorflow", "TensorFlow",
     N_("pip install 'tensorflow[and-cuda]' (Linux; TensorFlow >= 2.11 has no GPU support on "
        "native Windows: use WSL2)")},
    {3, "python.onnxruntime", "ONNX Runtime",
     "pip uninstall -y onnxruntime onnxruntime-gpu && pip install onnxruntime-gpu"},
    {4, "python.cupy", "CuPy", "pip install cupy-cuda12x"},
};

void doctor_check_python_torch(doctor_ctx *c)
{
	check_framework(c, &fws[0]);
}

void doctor_check_python_jax(doctor_ctx *c)
{
	check_framework(c, &fws[1]);
}

void doctor_check_python_tensorflow(doctor_ctx *c)
{
	check_framework(c, &fws[2]);
}

void doctor_check_python_onnxruntime(doctor_ctx *c)
{
	check_framework(c, &fws[3]);
}

void doctor_check_python_cupy(doctor_ctx *c)
{
	check_framework(c, &fws[4]);
}

/* ---- python.duplicates ---- */

/* Which import module a distribution provides, -1 for none we track. */
static int dist_module(const char *name)
{
	static const char *const tf[] = {"tensorflow",       "tensorflow-cpu",   "tensorflow-gpu",
	                                 "tensorflow-intel", "tensorflow-macos", "tensorflow-rocm",
	                                 "tf-nightly",       "tf-nightly-cpu",   "tf-nightly-gpu"};
	if (!strcmp(name, "torch"))
		return 0;
	if (!strcmp(name, "jax"))
		return 1;
	for (size_t i = 0; i < sizeof tf / sizeof *tf; i++)
		if (!strcmp(name, tf[i]))
			return 2;
	if ((!strncmp(name, "onnxruntime", 11) &&
	     (!name[11] || !strcmp(name + 11, "-gpu") || !strcmp(name + 11, "-directml") ||
	      !strcmp(name + 11, "-openvino") || !strcmp(name + 11, "-training"))) ||
	    !strncmp(name, "ort-nightly", 11))
		return 3;
	if (!strcmp(name, "cupy") || !strncmp(name, "cupy-cuda", 9) ||
	    !strncmp(name, "cupy-rocm", 9))
		return 4;
	return -1;
}

void doctor_check_python_duplicates(doctor_ctx *c)
{
	const doctor_python *py = doctor_ctx_python(c);
	if (!py->ran) {
		doctor_addf(c->r, "python.duplicates", DOCTOR_SKIP,
		            "no working Python (see python.interpreter)");
		return;
	}
	gw_strbuf b = {0}, fix = {0}, ok = {0};
	for (int m = 0; m < DOCTOR_PY_NPKG; m++) {
		const doctor_pydist *seen[16];
		int n = 0;
		for (size_t i = 0; i < py->ndists && n < 16; i++) {
			const doctor_pydist *d = &py->dists[i];
			if (dist_module(d->name) != m)
				continue;
			bool dup = false; /* the same directory twice on sys.path */
			for (int j = 0; j < n; j++)
				dup |= !strcmp(seen[j]->name, d->name) &&
				       !strcmp(seen[j]->location, d->location);
			if (!dup)
				seen[n++] = d;
		}
		if (n == 1) {
			gw_sb_sep(&ok, ", ");
			gw_sb_printf(&ok, "%s", seen[0]->name);
		}
		if (n < 2)
			continue;
		gw_sb_sep(&b, "; ");
		gw_sb_printf(&b, DOCTOR_("%s installed %d times:"), py->pkg[m].name, n);
		for (int j = 0; j < n; j++)
			/* TRANSLATORS: ", torch 2.3.1 in /usr/lib/python3/site-packages". */
			gw_sb_printf(&b, DOCTOR_("%s %s %s in %s"), j ? "," : "", seen[j]->name,
			             seen[j]->version,
			             seen[j]->location[0] ? seen[j]->location : "?");
		if (py->pkg[m].file[0])
			gw_sb_printf(&b, DOCTOR_(" (imports from %s)"), py->pkg[m].file);
		gw_sb_sep(&fix, "; ");
		gw_sb_printf(&fix, DOCTOR_("pip uninstall -y"));
		for (int j = 0; j < n; j++) {
			bool again = false;
			for (int i = 0; i < j; i++)
				again |= !strcmp(seen[i]->name, seen[j]->name);
			if (!again)
				gw_sb_printf(&fix, " %s", seen[j]->name);
		}
		gw_sb_printf(
		    &fix,
		    DOCTOR_(" (repeat until pip finds none), then install the one build you want"));
	}
	if (b.len) {
		doctor_result *r =
		    doctor_addf(c->r, "python.duplicates", DOCTOR_WARN,
		                "%s: which one is imported depends on sys.path order, and the "
		                "packages overwrite each other's files",
		                gw_sb_str(&b));
		doctor_fixf(r, "%s; a virtualenv keeps user, system and conda site-packages apart",
		            gw_sb_str(&fix));
	} else {
		doctor_addf(c->r, "python.duplicates", DOCTOR_PASS, "%s%s",
		            ok.len ? DOCTOR_("one install each: ")
		                   : DOCTOR_("no GPU framework installed"),
		            gw_sb_str(&ok));
	}
	gw_sb_free(&b);
	gw_sb_free(&fix);
	gw_sb_free(&ok);
}
