/*
 * gpu.c - the device layer's front door: load NVML, open and close, the
 * table of selected GPUs and their static facts. Readers, sampling,
 * processes, topology, --gpus and MIG live in the gpu_*.c files beside it.
 */
#include "gpu/gpu.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/calls.h"
#include "gpu/gpu_int.h"
#include "util/err.h"
#include "util/timeutil.h"
#include "util/i18n.h"

#define DEFAULT_SLOW_PERIOD_NS 5000000000LL

/* ---- errors as data ---- */

/* Where gpu_open's failure goes: the caller's or gpu_open's own. */
typedef struct {
	gw_fail *err;
	gpu_fail_kind *kind;
} open_dest;

/* Fill *d->err with why the open failed ("what: why (hint)") and return code. */
static int open_fail(const open_dest *d, gpu_fail_kind kind, int code, const char *what,
                     const char *hint, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static int open_fail(const open_dest *d, gpu_fail_kind kind, int code, const char *what,
                     const char *hint, const char *fmt, ...)
{
	/* why in English (logs, doctor's data), why_text in the user's language for
	 * gw_fail_print. */
	char why[384];
	va_list ap, aq;
	va_start(ap, fmt);
	va_copy(aq, ap);
	vsnprintf(why, sizeof why, fmt, ap);
	*d->kind = kind;
	gw_fail_set(d->err, code, what, hint, "%s", why);
	vsnprintf(d->err->why_text, sizeof d->err->why_text, _(fmt), aq);
	va_end(aq);
	va_end(ap);
	return code;
}

/* A phrase in place of an input ("no NVIDIA driver") is said in the user's
 * language too (an input, a path or a name, is printed as given). */
static int phrase_fail(int code, const open_dest *d)
{
	snprintf(d->err->what_text, sizeof d->err->what_text, "%s", _(d->err->what));
	return code;
}

/* The census gpu_close could not write, until a face takes it. */
static pthread_mutex_t close_mu = PTHREAD_MUTEX_INITIALIZER;
static gw_fail close_fail;

bool gpu_close_failure(gw_fail *out)
{
	pthread_mutex_lock(&close_mu);
	bool have = close_fail.code != 0;
	if (have) {
		*out = close_fail;
		close_fail.code = 0;
	}
	pthread_mutex_unlock(&close_mu);
	return have;
}

const char *gpu_err_text(const char *(*error_string)(nvmlReturn_t), int rc, char *buf, size_t len)
{
	const char *s = error_string ? error_string(rc) : NULL;
	if (s)
		return s;
	if (len == 0)
		return "NVML error";
	snprintf(buf, len, "NVML error %d", rc);
	return buf;
}

const char *gpu_nvml_error(const gpu_ctx *c, int rc, char *buf, size_t len)
{
	return gpu_err_text(c ? c->api.nvmlErrorString : NULL, rc, buf, len);
}

/* ---- static facts ---- */

static void cpuset_to_ranges(const unsigned long *set, unsigned words, char *out, size_t outlen)
{
	size_t n = 0;
	out[0] = '\0';
	unsigned bits = words * (unsigned)(8 * sizeof(unsigned long));
	for (unsigned b = 0; b < bits;) {
		if (!(set[b / (8 * sizeof(unsigned long))] &
		      (1UL << (b % (8 * sizeof(unsigned long)))))) {
			b++;
			continue;
		}
		unsigned e = b;
		while (e + 1 < bits && (set[(e + 1) / (8 * sizeof(unsigned long))] &
		                        (1UL << ((e + 1) % (8 * sizeof(unsigned long))))))
			e++;
		int w = (e == b) ? snprintf(out + n, outlen - n, "%s%u", n ? "," : "", b)
		                 : snprintf(out + n, outlen - n, "%s%u-%u", n ? "," : "", b, e);
		if (w < 0 || (size_t)w >= outlen - n)
			return;
		n += (size_t)w;
		b = e + 1;
	}
}

/* PCI identity: _v3 first, then _v2. */
static void read_pci(gpu_ctx *c, nvmlDevice_t h, bool *lost, gpu_static *s)
{
	nvmlPciInfo_t pci;
	memset(&pci, 0, sizeof pci);
	nvmlReturn_t rc = NVML_ERROR_FUNCTION_NOT_FOUND;
	if (c->api.nvmlDeviceGetPciInfo_v3)
		rc = c->api.nvmlDeviceGetPciInfo_v3(h, &pci);
	if (rc != NVML_SUCCESS && c->api.nvmlDeviceGetPciInfo_v2)
		rc = c->api.nvmlDeviceGetPciInfo_v2(h, &pci);
	if (!gpu_rc_ok(lost, rc))
		return;
	snprintf(s->pci_bus_id, sizeof s->pci_bus_id, "%.31s", pci.busId);
	s->pci_ok = true;
	s->pci_domain = pci.domain;
	s->pci_bus = pci.bus;
	s->pci_device = pci.device;
	s->pci_device_id = pci.pciDeviceId;
	s->pci_subsystem_id = pci.pciSubSystemId;
}

/* Where the GPU sits: architecture, GPM support, NUMA node, CPU affinity. */
static void read_placement(gpu_ctx *c, nvmlDevice_t h, bool *lost, gpu_static *s)
{
	nvmlDeviceArchitecture_t arch;
	if (c->api.nvmlDeviceGetArchitecture &&
	    gpu_rc_ok(lost, c->api.nvmlDeviceGetArchitecture(h, &arch)))
		s->arch = arch;
	nvmlGpmSupport_t gs = {.version = NVML_GPM_SUPPORT_VERSION};
	if (c->api.nvmlGpmQueryDeviceSupport && c->api.nvmlGpmSampleAlloc &&
	    c->api.nvmlGpmSampleGet && c->api.nvmlGpmMetricsGet &&
	    gpu_rc_ok(lost, c->api.nvmlGpmQueryDeviceSupport(h, &gs)) && gs.isSupportedDevice)
		s->gpm_supported = true;
	unsigned node;
	if (c->api.nvmlDeviceGetNumaNodeId &&
	    gpu_rc_ok(lost, c->api.nvmlDeviceGetNumaNodeId(h, &node))) {
		s->numa_ok = true;
		s->numa_node = (int)node;
	}
	unsigned long set[16];
	memset(set, 0, sizeof set);
	if (c->api.nvmlDeviceGetCpuAffinity &&
	    gpu_rc_ok(lost, c->api.nvmlDeviceGetCpuAffinity(h, 16, set)))
		cpuset_to_ranges(set, 16, s->cpu_affinity, sizeof s->cpu_affinity);
}

/* A GPU as enumerated, before selection: no locks, so it may be copied. */
typedef struct {
	nvmlDevice_t h;
	gpu_static st;
	bool lost;
	const amdgpu_card *amd; /* an AMD GPU: no NVML handle */
} gpu_probe;

static void read_static(gpu_ctx *c, gpu_probe *p, unsigned index)
{
	gpu_static *s = &p->st;
	s->index = (int)index;
	gpu_read_text(c->api.nvmlDeviceGetName, p->h, &p->lost, s->name, sizeof s->name);
	gpu_read_text(c->api.nvmlDeviceGetUUID, p->h, &p->lost, s->uuid, sizeof s->uuid);
	gpu_read_text(c->api.nvmlDeviceGetSerial, p->h, &p->lost, s->serial, sizeof s->serial);
	gpu_read_text(c->api.nvmlDeviceGetVbiosVersion, p->h, &p->lost, s->vbios, sizeof s->vbios);
	read_pci(c, p->h, &p->lost, s);
	read_placement(c, p->h, &p->lost, s);
}

/*
 * Every GPU NVML counts, with its static facts (a GPU without a handle is
 * lost), then the AMD GPUs in PCI order: indices go on after NVIDIA's.
 */
static gpu_probe *probe_all(gpu_ctx *c, unsigned count, unsigned n_amd)
{
	gpu_probe *all = calloc(count + n_amd ? count + n_amd : 1, sizeof *all);
	if (!all)
		return NULL;
	for (unsigned k = 0; k < n_amd; k++) {
		all[count + k].amd = &c->amd.cards[k];
		gpu_amd_static(c, (int)k, (int)(count + k), &all[count + k].st);
		all[count + k].st.vendor_index = (int)k;
	}
	for (unsigned i = 0; i < count; i++) {
		snprintf(all[i].st.vendor, sizeof all[i].st.vendor, "nvidia");
		all[i].st.vendor_index = (int)i;
		nvmlReturn_t nr = c->api.nvmlDeviceGetHandleByIndex_v2
		                      ? c->api.nvmlDeviceGetHandleByIndex_v2(i, &all[i].h)
		                      : c->api.nvmlDeviceGetHandleByIndex(i, &all[i].h);
		if (nr != NVML_SUCCESS) {
			all[i].lost = true;
			all[i].st.index = (int)i;
			continue;
		}
		read_static(c, &all[i], i);
	}
	return all;
}

/* The indices --gpus selects among the probes (all of them without --gpus;
 * an empty list is an error, not "all"). */
static int select_probes(const gpu_probe *all, int count, const char *list, int *sel, int *nsel,
                         const open_dest *f)
{
	*nsel = count;
	for (int i = 0; i < count; i++)
		sel[i] = i;
	if (!list)
		return 0;
	gpu_ident *ids = calloc(count ? (size_t)count : 1, sizeof *ids);
	if (!ids)
		return open_fail(f, GPU_FAIL_OTHER, GW_EXIT_ENV, "memory", NULL, "out of memory");
	for (int i = 0; i < count; i++)
		snprintf(ids[i].uuid, sizeof ids[i].uuid, "%s", all[i].st.uuid);
	char err[256];
	*nsel = gpu_parse_selection(list, ids, count, sel, GPU_MAX, err, sizeof err);
	free(ids);
	if (*nsel < 0)
		return open_fail(f, GPU_FAIL_SELECTION, GW_EXIT_USAGE, "--gpus",
		                 N_("use indices or (short) UUIDs from gpuwhy status"), "%s", err);
	return 0;
}

/*
 * The selected GPUs, built where they will live: their mutexes are
 * initialised once, in place, and the structs are never copied after.
 */
static int place_devices(gpu_ctx *c, const gpu_probe *all, const int *sel, int nsel)
{
	c->dev = calloc(nsel ? (size_t)nsel : 1, sizeof *c->dev);
	if (!c->dev)
		return -1;
	for (int k = 0; k < nsel; k++) {
		gpu_dev *d = &c->dev[k];
		d->h = all[sel[k]].h;
		d->st = all[sel[k]].st;
		d->lost = all[sel[k]].lost;
		d->amd = all[sel[k]].amd;
		pthread_mutex_init(&d->mu, NULL);
		pthread_mutex_init(&d->slow_mu, NULL);
		c->n = k + 1;
	}
	return 0;
}

/* GPM buffers, the STATIC cache and a first reading of every rate. */
static void prepare_devices(gpu_ctx *c)
{
	for (int k = 0; k < c->n; k++) {
		gpu_dev *d = &c->dev[k];
		if (gpu_lost(d) || gpu_is_amd(d))
			continue;
		if (d->st.gpm_supported) {
			d->gpm_req = calloc(1, sizeof *d->gpm_req);
			if (!d->gpm_req ||
			    c->api.nvmlGpmSampleAlloc(&d->gpm_prev) != NVML_SUCCESS ||
			    c->api.nvmlGpmSampleAlloc(&d->gpm_cur) != NVML_SUCCESS)
				d->st.gpm_supported = false;
		}
		gpu_values tmp;
		memset(&tmp, 0, sizeof tmp);
		gpu_run_readers(c, d, RK_STATIC, &tmp);
		gpu_cache_store(d, RK_STATIC, &tmp);
		gpu_prime_rates(c, d);
	}
}

/* ---- open / close ---- */

static void register_xid(gpu_ctx *c)
{
	if (!c->nvml_up || !c->api.nvmlEventSetCreate || !c->api.nvmlDeviceRegisterEvents ||
	    !c->api.nvmlEventSetWait_v2 || !c->api.nvmlEventSetFree ||
	    c->api.nvmlEventSetCreate(&c->xid_set) != NVML_SUCCESS) {
		c->xid_set = NULL;
		return;
	}
	bool any = false;
	for (int k = 0; k < c->n; k++) {
		gpu_dev *d = &c->dev[k];
		if (gpu_lost(d) || gpu_is_amd(d))
			continue;
		d->xid_ok = c->api.nvmlDeviceRegisterEvents(d->h, nvmlEventTypeXidCriticalError,
		                                            c->xid_set) == NVML_SUCCESS;
		any |= d->xid_ok;
	}
	if (!any) {
		c->api.nvmlEventSetFree(c->xid_set);
		c->xid_set = NULL;
	}
}

static int load_library(gpu_ctx *c, const open_dest *o)
{
	const char *want = getenv("GPUWHY_NVML");
	const char *tries[] = {want, want ? NULL : "libnvidia-ml.so.1",
	                       want ? NULL : "libnvidia-ml.so"};
	char first_err[256] = "";
	for (int i = 0; i < 3; i++) {
		if (!tries[i])
			continue;
		c->lib = dlopen(tries[i], RTLD_NOW | RTLD_LOCAL);
		if (c->lib) {
			snprintf(c->lib_path, sizeof c->lib_path, "%s", tries[i]);
			break;
		}
		if (!first_err[0]) {
			const char *e = dlerror();
			snprintf(first_err, sizeof first_err, "%s", e ? e : "dlopen failed");
		}
	}
	if (!c->lib) {
		if (want)
			return open_fail(o, GPU_FAIL_NO_LIBRARY, GW_EXIT_ENV, want,
			                 N_("check --nvml / GPUWHY_NVML"),
			                 "cannot load NVML library: %s", first_err);
		return phrase_fail(open_fail(o, GPU_FAIL_NO_LIBRARY, GW_EXIT_ENV,
		                             N_("no NVIDIA driver"),
		                             N_("try --sim h100x1 to explore on a simulated GPU"),
		                             "libnvidia-ml.so.1 not found"),
		                   o);
	}
#define X(ret, name, args)                                                                         \
	*(void **)(&c->api.name) = gpu_calls_wrap(GPU_CALL_##name, dlsym(c->lib, #name));
	NVML_ENTRY_POINTS(X)
#undef X
	if (!(c->api.nvmlInit_v2 || c->api.nvmlInit) ||
	    !(c->api.nvmlDeviceGetCount_v2 || c->api.nvmlDeviceGetCount) ||
	    !(c->api.nvmlDeviceGetHandleByIndex_v2 || c->api.nvmlDeviceGetHandleByIndex) ||
	    !c->api.nvmlErrorString)
		return open_fail(o, GPU_FAIL_BAD_LIBRARY, GW_EXIT_ENV, c->lib_path,
		                 N_("is it a real libnvidia-ml.so.1?"),
		                 "library lacks the NVML entry points gpuwhy needs");
	return 0;
}

static int init_error(gpu_ctx *c, nvmlReturn_t rc, const open_dest *o)
{
	char buf[32];
	const char *scen = getenv("GPUWHY_SIM_SCENARIO");
	if (scen && *scen)
		return open_fail(o, GPU_FAIL_SIMULATOR, GW_EXIT_ENV, scen,
		                 N_("fix the scenario (its error is above)"),
		                 "the simulated GPU did not start: %s",
		                 gpu_nvml_error(c, rc, buf, sizeof buf));
	switch (rc) {
	case NVML_ERROR_DRIVER_NOT_LOADED:
		return open_fail(o, GPU_FAIL_NOT_LOADED, GW_EXIT_ENV, "NVIDIA driver not loaded",
		                 N_("load the kernel module (modprobe nvidia) or check dmesg"),
		                 "NVML could not talk to the driver");
	case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
		return open_fail(
		    o, GPU_FAIL_MISMATCH, GW_EXIT_ENV, "driver/library version mismatch",
		    N_("reboot, or reload the nvidia kernel modules after the driver upgrade"),
		    "libnvidia-ml.so.1 and the loaded kernel module differ");
	case NVML_ERROR_NO_PERMISSION:
		return open_fail(
		    o, GPU_FAIL_NO_PERMISSION, GW_EXIT_ENV, "no permission on /dev/nvidia*",
		    N_("add your user to the group that owns /dev/nvidia* (ls -l /dev/nvidia*)"),
		    "NVML was refused access to the GPU devices");
	default:
		return phrase_fail(open_fail(o, GPU_FAIL_OTHER, GW_EXIT_ENV, N_("NVML init failed"),
		                             N_("gpuwhy doctor explains more"), "%s",
		                             gpu_nvml_error(c, rc, buf, sizeof buf)),
		                   o);
	}
}

static void read_system(gpu_ctx *c)
{
	if (c->api.nvmlSystemGetDriverVersion &&
	    c->api.nvmlSystemGetDriverVersion(c->driver, sizeof c->driver) != NVML_SUCCESS)
		c->driver[0] = '\0';
	if (c->api.nvmlSystemGetNVMLVersion &&
	    c->api.nvmlSystemGetNVMLVersion(c->nvml_version, sizeof c->nvml_version) !=
	        NVML_SUCCESS)
		c->nvml_version[0] = '\0';
	int v = 0;
	nvmlReturn_t rc = NVML_ERROR_FUNCTION_NOT_FOUND;
	if (c->api.nvmlSystemGetCudaDriverVersion_v2)
		rc = c->api.nvmlSystemGetCudaDriverVersion_v2(&v);
	if (rc != NVML_SUCCESS && c->api.nvmlSystemGetCudaDriverVersion)
		rc = c->api.nvmlSystemGetCudaDriverVersion(&v);
	if (rc == NVML_SUCCESS && v > 0)
		snprintf(c->cuda, sizeof c->cuda, "%d.%d", v / 1000, (v % 1000) / 10);
}

static gpu_ctx *ctx_new(const gpu_open_opts *opts)
{
	gpu_ctx *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	pthread_mutex_init(&c->stop_mu, NULL);
	pthread_cond_init(&c->stop_cv, NULL);
	pthread_mutex_init(&c->xid_mu, NULL);
	c->slow_period_ns =
	    opts && opts->slow_period_ns > 0 ? opts->slow_period_ns : DEFAULT_SLOW_PERIOD_NS;
	c->pcie_min_ns = GPU_RATE_WINDOW_NS;
	return c;
}

/* Before nvmlInit succeeded: nothing to shut down, no census to write. */
static void ctx_free_unstarted(gpu_ctx *c)
{
	if (c->lib)
		dlclose(c->lib);
	pthread_mutex_destroy(&c->stop_mu);
	pthread_cond_destroy(&c->stop_cv);
	pthread_mutex_destroy(&c->xid_mu);
	free(c);
}

/* Load the library and initialise NVML. */
static int start_nvml(gpu_ctx *c, const open_dest *f)
{
	int rc = load_library(c, f);
	if (rc)
		return rc;
	nvmlReturn_t nr = c->api.nvmlInit_v2 ? c->api.nvmlInit_v2() : c->api.nvmlInit();
	if (nr != NVML_SUCCESS)
		return init_error(c, nr, f);
	c->nvml_up = true;
	read_system(c);
	*(void **)&c->sim_work_rate = dlsym(c->lib, "gpuwhySimWorkRate");
	*(void **)&c->sim_proc_info = dlsym(c->lib, "gpuwhySimProcessInfo");
	return 0;
}

/*
 * NVML, and the AMD GPUs of the amdgpu driver. A machine without NVIDIA's
 * library or driver is no failure when it has AMD GPUs: NVML stays unloaded.
 */
static int start_vendors(gpu_ctx *c, const open_dest *f)
{
	int n_amd = gpu_amd_discover(c);
	int rc = start_nvml(c, f);
	bool no_nvidia = *f->kind == GPU_FAIL_NO_LIBRARY || *f->kind == GPU_FAIL_NOT_LOADED;
	if (!rc || n_amd == 0 || !no_nvidia || getenv("GPUWHY_NVML"))
		return rc;
	if (c->lib)
		dlclose(c->lib);
	c->lib = NULL;
	memset(&c->api, 0, sizeof c->api);
	memset(f->err, 0, sizeof *f->err);
	*f->kind = GPU_FAIL_NONE;
	snprintf(c->driver, sizeof c->driver, "%s", c->amd.driver);
	return 0;
}

/* Count, probe, select and place the GPUs, then take their first readings. */
static int open_devices(gpu_ctx *c, const gpu_open_opts *opts, const open_dest *f)
{
	char buf[32];
	unsigned count = 0;
	nvmlReturn_t nr = NVML_SUCCESS;
	if (c->nvml_up)
		nr = c->api.nvmlDeviceGetCount_v2 ? c->api.nvmlDeviceGetCount_v2(&count)
		                                  : c->api.nvmlDeviceGetCount(&count);
	if (nr != NVML_SUCCESS)
		return open_fail(f, GPU_FAIL_OTHER, GW_EXIT_ENV, "NVML",
		                 N_("gpuwhy doctor explains more"), "cannot count GPUs: %s",
		                 gpu_nvml_error(c, nr, buf, sizeof buf));
	if (count > GPU_MAX)
		count = GPU_MAX;
	unsigned n_amd = (unsigned)c->amd.n;
	if (count + n_amd > GPU_MAX)
		n_amd = GPU_MAX - count;
	if (count == 0 && n_amd > 0) {
		/* NVML without NVIDIA GPUs (a simulated AMD machine): the driver is amdgpu */
		snprintf(c->driver, sizeof c->driver, "%s", c->amd.driver);
		c->cuda[0] = '\0';
	}
	gpu_probe *all = probe_all(c, count, n_amd);
	if (!all)
		return open_fail(f, GPU_FAIL_OTHER, GW_EXIT_ENV, "memory", NULL, "out of memory");
	c->n_all = (int)(count + n_amd);
	int sel[GPU_MAX], nsel;
	int rc = select_probes(all, c->n_all, opts ? opts->gpus : NULL, sel, &nsel, f);
	if (!rc && place_devices(c, all, sel, nsel) != 0)
		rc = open_fail(f, GPU_FAIL_OTHER, GW_EXIT_ENV, "memory", NULL, "out of memory");
	free(all);
	if (rc)
		return rc;
	prepare_devices(c);
	register_xid(c);
	return 0;
}

int gpu_open(const gpu_open_opts *opts, gpu_ctx **out)
{
	gw_fail own_err;
	gpu_fail_kind own_kind;
	open_dest dest = {opts && opts->failure ? opts->failure : &own_err,
	                  opts && opts->fail_kind ? opts->fail_kind : &own_kind};
	const open_dest *f = &dest;
	memset(f->err, 0, sizeof *f->err);
	*f->kind = GPU_FAIL_NONE;
	int rc;
	gpu_ctx *c = ctx_new(opts);
	if (!c) {
		rc = open_fail(f, GPU_FAIL_OTHER, GW_EXIT_ENV, "memory", NULL, "out of memory");
	} else if ((rc = start_vendors(c, f)) != 0) {
		gpu_amd_close(c);
		ctx_free_unstarted(c);
	} else if ((rc = open_devices(c, opts, f)) != 0) {
		gpu_close(c);
	} else {
		c->opened_ns = gw_mono_ns();
		*out = c;
		return 0;
	}
	return rc;
}

void gpu_close(gpu_ctx *c)
{
	if (!c)
		return;
	gpu_slow_thread_stop(c);
	for (int k = 0; k < c->n; k++) {
		gpu_dev *d = &c->dev[k];
		if (d->gpm_prev && c->api.nvmlGpmSampleFree)
			c->api.nvmlGpmSampleFree(d->gpm_prev);
		if (d->gpm_cur && c->api.nvmlGpmSampleFree)
			c->api.nvmlGpmSampleFree(d->gpm_cur);
		free(d->gpm_req);
		pthread_mutex_destroy(&d->mu);
		pthread_mutex_destroy(&d->slow_mu);
	}
	if (c->xid_set)
		c->api.nvmlEventSetFree(c->xid_set);
	if (c->nvml_up && c->api.nvmlShutdown)
		c->api.nvmlShutdown();
	gpu_amd_close(c);
	if (gpu_calls_report(c->lib_path) != 0) {
		int e = errno;
		pthread_mutex_lock(&close_mu);
		gw_fail_set(&close_fail, GW_EXIT_ENV, getenv("GPUWHY_NVML_CALLS"),
		            N_("set GPUWHY_NVML_CALLS to a writable file, or - for stderr"),
		            "cannot write the NVML call census: %s", strerror(e));
		pthread_mutex_unlock(&close_mu);
	}
	free(c->dev);
	ctx_free_unstarted(c);
}

int gpu_count(const gpu_ctx *c)
{
	return c->n;
}

int gpu_count_all(const gpu_ctx *c)
{
	return c->n_all;
}

const gpu_static *gpu_static_info(const gpu_ctx *c, int i)
{
	return &c->dev[i].st;
}

const char *gpu_driver_version(const gpu_ctx *c)
{
	return c->driver;
}

const char *gpu_cuda_driver_version(const gpu_ctx *c)
{
	return c->cuda;
}

const char *gpu_nvml_version(const gpu_ctx *c)
{
	return c->nvml_version;
}

const char *gpu_library_path(const gpu_ctx *c)
{
	return c->lib_path;
}

bool gpu_is_lost(const gpu_ctx *c, int i)
{
	return gpu_lost(&c->dev[i]);
}

const char *gpu_metric_text(const gpu_ctx *c, int i, gpu_metric_id id)
{
	const gpu_static *s = &c->dev[i].st;
	const char *t = NULL;
	if (gpu_is_amd(&c->dev[i]) && (id == GM_DRIVER || id == GM_CUDA_DRIVER))
		t = id == GM_DRIVER ? c->amd.driver : NULL;
	else
		switch (id) {
		case GM_NAME:
			t = s->name;
			break;
		case GM_UUID:
			t = s->uuid;
			break;
		case GM_SERIAL:
			t = s->serial;
			break;
		case GM_PCI_BUS_ID:
			t = s->pci_bus_id;
			break;
		case GM_VBIOS:
			t = s->vbios;
			break;
		case GM_DRIVER:
			t = c->driver;
			break;
		case GM_CUDA_DRIVER:
			t = c->cuda;
			break;
		default:
			return NULL;
		}
	return t && *t ? t : NULL;
}

int gpu_read_memory(gpu_ctx *c, int i, gpu_memory *out)
{
	gpu_dev *d = &c->dev[i];
	if (gpu_is_amd(d))
		return gpu_amd_read_memory(c, d, out);
	if (gpu_lost(d)) {
		memset(out, 0, sizeof *out);
		return NVML_ERROR_GPU_IS_LOST;
	}
	return gpu_read_mem(c, d->h, &d->lost, out);
}

int gpu_sim_work_rate(gpu_ctx *c, int i, unsigned pid, double *clock_share, double *sm_share,
                      double *h2d_bytes_per_s)
{
	gpu_dev *d = &c->dev[i];
	if (!c->sim_work_rate || gpu_is_amd(d))
		return -1; /* no simulated AMD library answers how fast work runs */
	if (gpu_lost(d))
		return NVML_ERROR_GPU_IS_LOST;
	nvmlReturn_t rc = c->sim_work_rate(d->h, pid, clock_share, sm_share, h2d_bytes_per_s);
	gpu_ok(d, rc);
	return rc;
}
