/*
 * check_rocm.c - rocm.devices, rocm.torch, rocm.visible_devices,
 * rocm.gfx_override (see check_rocm.h).
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "doctor/check_rocm.h"
#include "doctor/doctor_int.h"
#include "gpu/amdgpu.h"

#define ROCM_MAX_CARDS 16

/* The wheel index of PyTorch's ROCm builds, for the fix lines. */
#define ROCM_TORCH_INDEX "https://download.pytorch.org/whl/rocm6.2"

/* Where the AMD GPUs' files are: the simulated machine's under --sim, else the probe's. */
static const char *amd_sys(const doctor_ctx *c)
{
	return c->p->amd_sys_root ? c->p->amd_sys_root : c->p->sys_root;
}

static const char *amd_dev(const doctor_ctx *c)
{
	return c->p->amd_dev_root ? c->p->amd_dev_root : c->p->dev_root;
}

/* The root whose sys/ is the probe's sys_root: "" for "/sys", a fixture tree in tests. */
static bool rocm_root(const doctor_ctx *c, char *out, size_t len)
{
	const char *s = amd_sys(c) ? amd_sys(c) : "/sys";
	size_t n = strlen(s);
	if (n < 4 || strcmp(s + n - 4, "/sys") != 0 || n - 4 >= len)
		return false;
	memcpy(out, s, n - 4);
	out[n - 4] = '\0';
	return true;
}

static int rocm_cards(const doctor_ctx *c, amdgpu_card *cards, int max)
{
	char root[512];
	return rocm_root(c, root, sizeof root) ? amdgpu_discover(root, cards, max) : 0;
}

int doctor_rocm_gpu_count(const doctor_ctx *c)
{
	amdgpu_card cards[ROCM_MAX_CARDS];
	return rocm_cards(c, cards, ROCM_MAX_CARDS);
}

/* SKIP when there is no AMD GPU; true when the check goes on. */
static bool need_amd(doctor_ctx *c, const char *check)
{
	if (doctor_rocm_gpu_count(c) > 0)
		return true;
	doctor_addf(c->r, check, DOCTOR_SKIP, "no AMD GPU (amdgpu driver) on this machine");
	return false;
}

/* ---- rocm.devices ---- */

static bool usable(const doctor_ctx *c, const char *path)
{
	return c->p->access(path, R_OK | W_OK) == 0;
}

/* The render nodes under dev_root/dri: how many, and the first one this user cannot open. */
static int render_nodes(const doctor_ctx *c, char *denied, size_t dlen)
{
	char dir[512];
	doctor_pathf(dir, sizeof dir, amd_dev(c), "/dri");
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *e;
	denied[0] = '\0';
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "renderD", 7) != 0)
			continue;
		n++;
		char path[800];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (!denied[0] && !usable(c, path))
			snprintf(denied, dlen, "/dev/dri/%.200s", e->d_name);
	}
	closedir(d);
	return n;
}

static void devices_missing(doctor_ctx *c, const char *what, bool container)
{
	doctor_result *r;
	if (container) {
		r = doctor_addf(c->r, "rocm.devices", DOCTOR_FAIL,
		                "%s is missing in this container (%s)", what,
		                doctor_ctx_where(c)->container_kind);
		doctor_fixf(
		    r, "start the container with --device=/dev/kfd --device=/dev/dri --group-add "
		       "video --group-add render (Kubernetes: the AMD GPU device plugin, "
		       "amd.com/gpu)");
		return;
	}
	r = doctor_addf(c->r, "rocm.devices", DOCTOR_FAIL,
	                "%s is missing: the amdgpu driver offers no compute device", what);
	doctor_fixf(r,
	            "check that amdgpu loaded with its compute interface (dmesg | grep -i kfd); "
	            "the kernel needs CONFIG_HSA_AMD, and ROCm an amdgpu driver that supports this "
	            "GPU");
}

void doctor_check_rocm_devices(doctor_ctx *c)
{
	if (!need_amd(c, "rocm.devices"))
		return;
	bool container = doctor_ctx_where(c)->container;
	char kfd[512], denied[256];
	doctor_pathf(kfd, sizeof kfd, amd_dev(c), "/kfd");
	if (!doctor_exists(kfd)) {
		devices_missing(c, "/dev/kfd", container);
		return;
	}
	int nodes = render_nodes(c, denied, sizeof denied);
	if (nodes == 0) {
		devices_missing(c, "/dev/dri/renderD*", container);
		return;
	}
	const char *bad = !usable(c, kfd) ? "/dev/kfd" : denied[0] ? denied : NULL;
	if (bad) {
		doctor_result *r = doctor_addf(
		    c->r, "rocm.devices", DOCTOR_FAIL,
		    "%s is not read/writable by this user: ROCm cannot open the GPU", bad);
		doctor_fixf(
		    r, "add the user to the render and video groups (sudo usermod -aG render,video "
		       "$USER) and log in again; in a container add --group-add video --group-add "
		       "render");
		return;
	}
	doctor_addf(c->r, "rocm.devices", DOCTOR_PASS,
	            "/dev/kfd and %d render node(s) read/writable", nodes);
}

/* ---- rocm.torch ---- */

static const doctor_pypkg *torch_of(const doctor_python *py)
{
	for (int i = 0; i < DOCTOR_PY_NPKG; i++)
		if (py->pkg[i].name && !strcmp(py->pkg[i].name, "torch"))
			return &py->pkg[i];
	return NULL;
}

static bool has_nvidia(doctor_ctx *c)
{
	char bdf[4][16];
	return (c->m->nvml == DOCTOR_NVML_OK && c->m->n > 0) ||
	       doctor_pci_nvidia_gpus(c->p, bdf, 4) > 0;
}

static void torch_rocm(doctor_ctx *c, const doctor_pypkg *k, int namd)
{
	if (k->gpu_count > 0) {
		doctor_addf(c->r, "rocm.torch", DOCTOR_PASS,
		            "PyTorch %s (%s) sees %d of %d AMD GPU(s)%s%s", k->version,
		            k->other_gpu, k->gpu_count, namd, k->ndev ? ": " : "",
		            k->ndev ? k->dev_name[0] : "");
		return;
	}
	doctor_result *r = doctor_addf(c->r, "rocm.torch", DOCTOR_FAIL,
	                               "PyTorch %s (%s) sees no GPU though %d AMD GPU(s) are here",
	                               k->version, k->other_gpu, namd);
	doctor_fixf(r,
	            "see rocm.devices (access to /dev/kfd), rocm.visible_devices and "
	            "rocm.gfx_override; python -c 'import torch; print(torch.cuda.is_available())' "
	            "with AMD_LOG_LEVEL=3 says why");
}

void doctor_check_rocm_torch(doctor_ctx *c)
{
	if (!need_amd(c, "rocm.torch"))
		return;
	int namd = doctor_rocm_gpu_count(c);
	const doctor_python *py = doctor_ctx_python(c);
	const doctor_pypkg *k = py->found ? torch_of(py) : NULL;
	if (!k || !k->installed) {
		doctor_addf(c->r, "rocm.torch", DOCTOR_SKIP, "PyTorch is not installed for %s",
		            py->found ? py->exe : DOCTOR_("any Python found"));
		return;
	}
	if (!k->probed || !k->version[0]) {
		doctor_addf(c->r, "rocm.torch", DOCTOR_SKIP,
		            "PyTorch could not be imported (python.torch "
		            "says why)");
		return;
	}
	if (k->other_gpu[0] && !strncmp(k->other_gpu, "ROCm", 4)) {
		torch_rocm(c, k, namd);
		return;
	}
	if (has_nvidia(c) && !k->cpu_only) {
		doctor_addf(
		    c->r, "rocm.torch", DOCTOR_PASS,
		    "PyTorch %s is a CUDA build: it uses the NVIDIA GPUs here, not the %d AMD "
		    "GPU(s), which need a ROCm build (another environment)",
		    k->version, namd);
		return;
	}
	doctor_result *r;
	if (k->cpu_only)
		r = doctor_addf(c->r, "rocm.torch", DOCTOR_FAIL,
		                "PyTorch %s is a CPU-only build: it never uses the %d AMD GPU(s)",
		                k->version, namd);
	else
		r = doctor_addf(
		    c->r, "rocm.torch", DOCTOR_FAIL,
		    "PyTorch %s is a CUDA build (CUDA %s) on a machine with only AMD GPUs: it "
		    "runs on the CPU",
		    k->version, k->cuda[0] ? k->cuda : "?");
	doctor_fixf(r,
	            "install a ROCm build: pip install --force-reinstall torch torchvision "
	            "torchaudio --index-url %s (ROCm's version must suit the driver)",
	            ROCM_TORCH_INDEX);
}

/* ---- rocm.visible_devices ---- */

typedef struct {
	bool set, hides_all;
	int n;           /* entries */
	int max_index;   /* largest plain index, -1 when none */
	bool non_index;  /* an entry that is no index (a UUID) */
	char value[128]; /* as set, shortened */
} vis_list;

static void vis_parse(const char *v, vis_list *o)
{
	memset(o, 0, sizeof *o);
	o->max_index = -1;
	if (!v)
		return;
	o->set = true;
	snprintf(o->value, sizeof o->value, "%.100s", v);
	const char *p = v;
	while (*p) {
		const char *e = p + strcspn(p, ",");
		while (p < e && isspace((unsigned char)*p))
			p++;
		if (p < e) {
			char *end;
			long i = strtol(p, &end, 10);
			if (end == p || (end < e && !isspace((unsigned char)*end)))
				o->non_index = true;
			else if (i < 0)
				break; /* "-1": nothing from here on */
			else if (i > o->max_index)
				o->max_index = (int)(i > 1000 ? 1000 : i);
			o->n++;
		}
		p = *e ? e + 1 : e;
	}
	o->hides_all = o->n == 0;
}

/* FAIL lines for a list that hides every GPU or names one past the count; true when said. */
static bool vis_bad(doctor_ctx *c, const char *var, const vis_list *l, int avail, const char *of)
{
	doctor_result *r = NULL;
	if (l->hides_all)
		r = doctor_addf(c->r, "rocm.visible_devices", DOCTOR_FAIL,
		                "%s=\"%s\" hides every AMD GPU", var, l->value);
	else if (l->max_index >= avail)
		r = doctor_addf(c->r, "rocm.visible_devices", DOCTOR_FAIL,
		                "%s=\"%s\" names GPU %d, but %s only %d", var, l->value,
		                l->max_index, of, avail);
	if (r)
		doctor_fixf(r,
		            "unset %s, or list indices 0 to %d (rocm-smi or amd-smi list numbers "
		            "them)",
		            var, avail - 1);
	return r != NULL;
}

void doctor_check_rocm_visible_devices(doctor_ctx *c)
{
	if (!need_amd(c, "rocm.visible_devices"))
		return;
	int namd = doctor_rocm_gpu_count(c);
	vis_list rocr, hip, cuda;
	vis_parse(doctor_env(c, "ROCR_VISIBLE_DEVICES"), &rocr);
	vis_parse(doctor_env(c, "HIP_VISIBLE_DEVICES"), &hip);
	vis_parse(doctor_env(c, "CUDA_VISIBLE_DEVICES"), &cuda);
	if (rocr.set &&
	    vis_bad(c, "ROCR_VISIBLE_DEVICES", &rocr, namd, DOCTOR_("this machine has")))
		return;
	int left = rocr.set ? (rocr.n < namd ? rocr.n : namd) : namd;
	/* HIP reads HIP_VISIBLE_DEVICES, else CUDA_VISIBLE_DEVICES, counting within ROCr's list */
	const vis_list *h = hip.set ? &hip : cuda.set ? &cuda : NULL;
	const char *hv = hip.set ? "HIP_VISIBLE_DEVICES" : "CUDA_VISIBLE_DEVICES";
	if (h && vis_bad(c, hv, h, left,
	                 rocr.set ? DOCTOR_("ROCR_VISIBLE_DEVICES leaves")
	                          : DOCTOR_("this machine has")))
		return;
	doctor_result *r = NULL;
	if (hip.set && cuda.set && strcmp(hip.value, cuda.value) != 0) {
		r = doctor_addf(
		    c->r, "rocm.visible_devices", DOCTOR_WARN,
		    "HIP_VISIBLE_DEVICES=\"%s\" and CUDA_VISIBLE_DEVICES=\"%s\" differ: HIP "
		    "programs follow the first, CUDA programs and some launchers the second",
		    hip.value, cuda.value);
		doctor_fixf(
		    r, "set one list for the AMD GPUs (ROCR_VISIBLE_DEVICES on Linux) and unset "
		       "the other");
	} else if (h == &cuda && has_nvidia(c)) {
		r = doctor_addf(
		    c->r, "rocm.visible_devices", DOCTOR_WARN,
		    "CUDA_VISIBLE_DEVICES=\"%s\" selects NVIDIA GPUs for CUDA programs and AMD "
		    "GPUs for HIP programs, each counted among its own vendor's",
		    cuda.value);
		doctor_fixf(r,
		            "select the AMD GPUs with ROCR_VISIBLE_DEVICES or HIP_VISIBLE_DEVICES");
	} else if (h && h->non_index) {
		r = doctor_addf(c->r, "rocm.visible_devices", DOCTOR_WARN,
		                "%s=\"%s\" holds an entry that is no index: HIP takes indices only",
		                hv, h->value);
		doctor_fixf(r, "use indices in %s, or UUIDs in ROCR_VISIBLE_DEVICES", hv);
	}
	if (r)
		return;
	if (!rocr.set && !h)
		doctor_addf(c->r, "rocm.visible_devices", DOCTOR_PASS,
		            "no variable selects AMD GPUs: programs see all %d", namd);
	else
		doctor_addf(c->r, "rocm.visible_devices", DOCTOR_PASS,
		            "HIP programs see %d of %d AMD GPU(s)",
		            h ? (h->n < left ? h->n : left) : left, namd);
}

/* ---- rocm.gfx_override ---- */

int doctor_rocm_gfx_support(unsigned v, char *name, size_t nlen, char *want, size_t wlen)
{
	unsigned major = v / 10000, minor = v / 100 % 100, step = v % 100;
	snprintf(name, nlen, "gfx%u%x%x", major, minor, step);
	want[0] = '\0';
	static const char *const native[] = {"gfx906",  "gfx908",  "gfx90a",  "gfx940",
	                                     "gfx941",  "gfx942",  "gfx950",  "gfx1030",
	                                     "gfx1100", "gfx1101", "gfx1200", "gfx1201"};
	for (size_t i = 0; i < sizeof native / sizeof *native; i++)
		if (!strcmp(name, native[i]))
			return 0;
	/* RDNA2 and RDNA3 chips ROCm does not list run the code of their family's listed one */
	if (major == 10 && minor == 3 && step >= 1 && step <= 6) {
		snprintf(want, wlen, "10.3.0");
		return 1;
	}
	if (major == 11 && minor == 0 && (step == 2 || step == 3)) {
		snprintf(want, wlen, "11.0.0");
		return 1;
	}
	return -1;
}

static int by_value(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return (x > y) - (x < y);
}

/* gfx_target_version of every GPU node of the KFD topology (CPU nodes have 0), ascending. */
static int kfd_targets(const doctor_ctx *c, unsigned *out, int max)
{
	char dir[512];
	doctor_pathf(dir, sizeof dir, amd_sys(c), "/class/kfd/kfd/topology/nodes");
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < max) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		char path[800];
		snprintf(path, sizeof path, "%s/%s/properties", dir, e->d_name);
		char *text = doctor_slurp(path, 1 << 16);
		const char *k = text ? strstr(text, "gfx_target_version ") : NULL;
		unsigned v = k ? (unsigned)strtoul(k + strlen("gfx_target_version "), NULL, 10) : 0;
		free(text);
		if (v > 0)
			out[n++] = v;
	}
	closedir(d);
	qsort(out, (size_t)n, sizeof *out, by_value);
	return n;
}

void doctor_check_rocm_gfx_override(doctor_ctx *c)
{
	if (!need_amd(c, "rocm.gfx_override"))
		return;
	unsigned v[ROCM_MAX_CARDS];
	int n = kfd_targets(c, v, ROCM_MAX_CARDS);
	const char *ov = doctor_env(c, "HSA_OVERRIDE_GFX_VERSION");
	if (n == 0) {
		doctor_addf(c->r, "rocm.gfx_override", DOCTOR_SKIP,
		            "no GPU in the KFD topology (/sys/class/kfd): see rocm.devices");
		return;
	}
	char name[16], want[16], names[160] = "";
	int needs = -1, native = -1;
	for (int i = 0; i < n; i++) {
		int s = doctor_rocm_gfx_support(v[i], name, sizeof name, want, sizeof want);
		if (!strstr(names, name))
			snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
			         names[0] ? ", " : "", name);
		if (s == 1 && needs < 0)
			needs = i;
		if (s == 0 && native < 0)
			native = i;
	}
	doctor_result *r = NULL;
	if (needs >= 0) {
		doctor_rocm_gfx_support(v[needs], name, sizeof name, want, sizeof want);
		if (!ov || strcmp(ov, want) != 0) {
			r = doctor_addf(c->r, "rocm.gfx_override", DOCTOR_FAIL,
			                "%s is not on ROCm's list: its kernels load only with "
			                "HSA_OVERRIDE_GFX_VERSION=%s (set: %s)",
			                name, want, ov ? ov : DOCTOR_("not set"));
			doctor_fixf(
			    r,
			    "export HSA_OVERRIDE_GFX_VERSION=%s before starting the program "
			    "(Ollama: in its service's Environment=)",
			    want);
		} else if (native >= 0) {
			r = doctor_addf(
			    c->r, "rocm.gfx_override", DOCTOR_WARN,
			    "HSA_OVERRIDE_GFX_VERSION=%s applies to every GPU (%s): those ROCm "
			    "lists then run code built for another chip",
			    ov, names);
			doctor_fixf(
			    r,
			    "run on one kind of GPU per process: ROCR_VISIBLE_DEVICES=<the %s "
			    "GPUs> with the override, the others without",
			    name);
		}
	} else if (ov && native >= 0) {
		r = doctor_addf(c->r, "rocm.gfx_override", DOCTOR_WARN,
		                "HSA_OVERRIDE_GFX_VERSION=%s is set, but %s runs without it: the "
		                "override makes ROCm load code built for another chip",
		                ov, names);
		doctor_fixf(r, "unset HSA_OVERRIDE_GFX_VERSION");
	}
	if (r)
		return;
	const char *how = ov            ? DOCTOR_(": runs with HSA_OVERRIDE_GFX_VERSION=")
	                  : native >= 0 ? DOCTOR_(": no override needed")
	                                : DOCTOR_(": not in gpuwhy's table of ROCm targets");
	doctor_addf(c->r, "rocm.gfx_override", DOCTOR_PASS, "%s%s%s", names, how, ov ? ov : "");
}
