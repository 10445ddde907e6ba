/*
 * amdsmi.c - AMD's SMI library through dlopen (amdsmi.h): the loader, the
 * version check, the GPUs by PCI address and the few readings gpuwhy takes
 * from it.
 */
#include "gpu/amdsmi.h"

#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "util/err.h"
#include "util/i18n.h"
#include "util/selfexe.h"
#include "util/xalloc.h"

/* The entry points: every one a pointer, NULL where the library lacks an optional one. */
#define AMDSMI_FIELD(name, params) amdsmi_status_t(*name) params;
typedef struct {
	AMDSMI_ABI_CALLS(AMDSMI_FIELD, AMDSMI_FIELD)
} amdsmi_api;
#undef AMDSMI_FIELD

typedef struct {
	char bdf[24]; /* "0000:0c:00.0"; the domain may have 48 bits */
	amdsmi_processor_handle h;
} amdsmi_gpu;

struct amdsmi_lib {
	void *dl;
	char name[PATH_MAX];
	amdsmi_api api;
	char version[48];
	amdsmi_gpu *gpus;
	int n;
};

#define AMDSMI_MAX_GPUS 256

void amdsmi_bdf_text(amdsmi_bdf_t b, char *out, size_t len)
{
	snprintf(out, len, "%04llx:%02x:%02x.%x", AMDSMI_BDF_DOMAIN(b), AMDSMI_BDF_BUS(b),
	         AMDSMI_BDF_DEVICE(b), AMDSMI_BDF_FUNCTION(b));
}

/*
 * 24.x writes year, major, minor; 25.x the same struct with major 25 and
 * year left alone (0 in a zeroed buffer; 25 accepted too); 26.x and later
 * major, minor, release from the first word. A 25 in the second word is
 * 25.x's alone: 24.x's majors are small and 26.x's minors follow 26.
 */
bool amdsmi_version_read(const uint32_t w[4], char *text, size_t len)
{
	if (w[0] == 24) {
		snprintf(text, len, "24.%u.%u", (unsigned)w[1], (unsigned)w[2]);
		return w[1] >= AMDSMI_ABI_V24_MAJOR_MIN && w[1] <= AMDSMI_ABI_V24_MAJOR_MAX;
	}
	if (w[1] == AMDSMI_ABI_V25 && (w[0] == 0 || w[0] == AMDSMI_ABI_V25)) {
		snprintf(text, len, "25.%u.%u", (unsigned)w[2], (unsigned)w[3]);
		return true;
	}
	snprintf(text, len, "%u.%u.%u", (unsigned)w[0], (unsigned)w[1], (unsigned)w[2]);
	return w[0] == AMDSMI_ABI_V26;
}

/* Resolve every entry point; false (with *f) when a required one is missing. */
static bool resolve(amdsmi_lib *l, const char *name, gw_fail *f)
{
	void *p;
#define AMDSMI_REQ(sym, params)                                                                    \
	if (!(p = dlsym(l->dl, #sym))) {                                                           \
		gw_fail_set(f, GW_EXIT_ENV, name, N_("ROCm 6.1 or newer has it"), "has no %s",     \
		            #sym);                                                                 \
		return false;                                                                      \
	}                                                                                          \
	memcpy(&l->api.sym, &p, sizeof p);
#define AMDSMI_OPT(sym, params)                                                                    \
	if ((p = dlsym(l->dl, #sym)))                                                              \
		memcpy(&l->api.sym, &p, sizeof p);
	AMDSMI_ABI_CALLS(AMDSMI_REQ, AMDSMI_OPT)
#undef AMDSMI_REQ
#undef AMDSMI_OPT
	return true;
}

/*
 * The version, read into a buffer larger than any layout and zeroed first:
 * a library of another layout writes its own fields, and gpuwhy reads on
 * only when the words it wrote are a version whose layouts it knows.
 */
static bool version_check(amdsmi_lib *l, const char *name, gw_fail *f)
{
	union {
		amdsmi_version_t v;
		uint32_t w[4];
		unsigned char room[256];
	} u;
	memset(&u, 0, sizeof u);
	amdsmi_status_t rc = l->api.amdsmi_get_lib_version(&u.v);
	if (rc != AMDSMI_STATUS_SUCCESS) {
		gw_fail_set(f, GW_EXIT_ENV, name, NULL, "amdsmi_get_lib_version failed (status %u)",
		            (unsigned)rc);
		return false;
	}
	if (!amdsmi_version_read(u.w, l->version, sizeof l->version)) {
		gw_fail_set(f, GW_EXIT_ENV, name,
		            N_("gpuwhy knows 24.5 to 24.7, 25.x and 26.x: ROCm 6.1 to 7.x"),
		            "version %s has struct layouts gpuwhy does not know: not used",
		            l->version);
		return false;
	}
	return true;
}

/* Add the GPUs of one socket to l->gpus. */
static void list_socket(amdsmi_lib *l, amdsmi_socket_handle s)
{
	uint32_t n = 0;
	if (l->api.amdsmi_get_processor_handles(s, &n, NULL) != AMDSMI_STATUS_SUCCESS || n == 0)
		return;
	if (n > AMDSMI_MAX_GPUS)
		n = AMDSMI_MAX_GPUS;
	amdsmi_processor_handle *hs = gw_xcalloc(n, sizeof *hs);
	if (l->api.amdsmi_get_processor_handles(s, &n, hs) == AMDSMI_STATUS_SUCCESS) {
		for (uint32_t k = 0; k < n && k < AMDSMI_MAX_GPUS && l->n < AMDSMI_MAX_GPUS; k++) {
			amdsmi_processor_type_t type = 0;
			amdsmi_bdf_t bdf = 0;
			if (l->api.amdsmi_get_processor_type(hs[k], &type) !=
			        AMDSMI_STATUS_SUCCESS ||
			    type != AMDSMI_PROCESSOR_TYPE_AMD_GPU ||
			    l->api.amdsmi_get_gpu_device_bdf(hs[k], &bdf) != AMDSMI_STATUS_SUCCESS)
				continue;
			amdsmi_gpu *g = &l->gpus[l->n++];
			amdsmi_bdf_text(bdf, g->bdf, sizeof g->bdf);
			g->h = hs[k];
		}
	}
	free(hs);
}

/* Every GPU of every socket (an MI300X partitioned into several is several GPUs). */
static void list_gpus(amdsmi_lib *l)
{
	l->gpus = gw_xcalloc(AMDSMI_MAX_GPUS, sizeof *l->gpus);
	uint32_t n = 0;
	if (l->api.amdsmi_get_socket_handles(&n, NULL) != AMDSMI_STATUS_SUCCESS || n == 0)
		return;
	if (n > AMDSMI_MAX_GPUS)
		n = AMDSMI_MAX_GPUS;
	amdsmi_socket_handle *ss = gw_xcalloc(n, sizeof *ss);
	if (l->api.amdsmi_get_socket_handles(&n, ss) == AMDSMI_STATUS_SUCCESS)
		for (uint32_t k = 0; k < n && k < AMDSMI_MAX_GPUS; k++)
			list_socket(l, ss[k]);
	free(ss);
}

static void *open_first(const char *const *names, size_t n, const char **which)
{
	for (size_t i = 0; i < n; i++) {
		void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		if (h) {
			*which = names[i];
			return h;
		}
	}
	return NULL;
}

amdsmi_lib *amdsmi_lib_open(const char *const *names, size_t n_names, gw_fail *f)
{
	memset(f, 0, sizeof *f);
	const char *name = n_names ? names[0] : "libamd_smi.so";
	void *dl = open_first(names, n_names, &name);
	if (!dl) {
		gw_fail_set(f, GW_EXIT_ENV, name, N_("install ROCm's amd-smi-lib for more fields"),
		            "cannot load");
		return NULL;
	}
	amdsmi_lib *l = gw_xcalloc(1, sizeof *l);
	l->dl = dl;
	snprintf(l->name, sizeof l->name, "%s", name);
	if (!resolve(l, name, f)) {
		dlclose(dl);
		free(l);
		return NULL;
	}
	amdsmi_status_t rc = l->api.amdsmi_init(AMDSMI_INIT_AMD_GPUS);
	if (rc != AMDSMI_STATUS_SUCCESS) {
		gw_fail_set(f, GW_EXIT_ENV, name, NULL, "amdsmi_init failed (status %u)",
		            (unsigned)rc);
		/* not unloaded: see amdsmi_lib_close */
		free(l);
		return NULL;
	}
	if (!version_check(l, name, f)) {
		amdsmi_lib_close(l);
		return NULL;
	}
	list_gpus(l);
	return l;
}

/* The simulated library beside the binary: build/sim/, or an install's lib/gpuwhy/. */
static bool sim_library(char *out, size_t len)
{
	char dir[PATH_MAX];
	if (gw_self_dir(dir, sizeof dir) != 0)
		return false;
	const char *where[] = {"/sim/", "/../lib/gpuwhy/"};
	for (size_t i = 0; i < sizeof where / sizeof *where; i++) {
		snprintf(out, len, "%s%s%s", dir, where[i], AMDSMI_ABI_SONAME);
		if (access(out, R_OK) == 0)
			return true;
	}
	return false;
}

amdsmi_lib *amdsmi_lib_open_default(bool real_tree, gw_fail *f)
{
	memset(f, 0, sizeof *f);
	const char *env = getenv("GPUWHY_AMDSMI");
	if (env && !*env)
		return NULL;
	if (env && !strcmp(env, "sim")) {
		char path[PATH_MAX + 64];
		if (!sim_library(path, sizeof path)) {
			gw_fail_set(f, GW_EXIT_ENV, "GPUWHY_AMDSMI=sim",
			            N_("build it with make, or give its path"),
			            "the simulated %s is not beside the binary", AMDSMI_ABI_SONAME);
			return NULL;
		}
		const char *one[] = {path};
		return amdsmi_lib_open(one, 1, f);
	}
	if (env) {
		const char *one[] = {env};
		return amdsmi_lib_open(one, 1, f);
	}
	/* A fixture or simulated tree is another machine than the one the system library sees. */
	if (!real_tree)
		return NULL;
	/* ROCm 6.1 to 6.3's soname, then the names a 6.4 or 7.x may give it */
	static const char *const sys[] = {
	    AMDSMI_ABI_SONAME,
	    "libamd_smi.so.26",
	    "libamd_smi.so.25",
	    "libamd_smi.so",
	    ("/opt/rocm/lib/" AMDSMI_ABI_SONAME), /* one name: the parentheses say so */
	    "/opt/rocm/lib/libamd_smi.so.26",
	    "/opt/rocm/lib/libamd_smi.so.25",
	    "/opt/rocm/lib/libamd_smi.so"};
	return amdsmi_lib_open(sys, sizeof sys / sizeof *sys, f);
}

void amdsmi_lib_close(amdsmi_lib *l)
{
	if (!l)
		return;
	l->api.amdsmi_shut_down();
	/* ROCm's libraries start threads and register atexit handlers: unloading them is not safe.
	 */
	free(l->gpus);
	free(l);
}

const char *amdsmi_lib_name(const amdsmi_lib *l)
{
	return l->name;
}

const char *amdsmi_lib_version(const amdsmi_lib *l)
{
	return l->version;
}

int amdsmi_lib_gpus(const amdsmi_lib *l)
{
	return l->n;
}

static amdsmi_processor_handle handle_of(const amdsmi_lib *l, const char *bdf)
{
	for (int k = 0; l && k < l->n; k++)
		if (!strcasecmp(l->gpus[k].bdf, bdf))
			return l->gpus[k].h;
	return NULL;
}

bool amdsmi_lib_has(const amdsmi_lib *l, const char *bdf)
{
	return handle_of(l, bdf) != NULL;
}

/* The energy counter in mJ; false when the library has none or fails. */
static bool read_energy(const amdsmi_lib *l, amdsmi_processor_handle h, double *mj)
{
	uint64_t e = 0, ts = 0;
	float res = 0;
	if (!l->api.amdsmi_get_energy_count ||
	    l->api.amdsmi_get_energy_count(h, &e, &res, &ts) != AMDSMI_STATUS_SUCCESS ||
	    !isfinite(res) || res <= 0)
		return false;
	/* the counter counts units of res microjoules */
	*mj = (double)e * (double)res / 1000.0;
	return true;
}

static bool read_ecc(const amdsmi_lib *l, amdsmi_processor_handle h, unsigned long long *ce,
                     unsigned long long *ue)
{
	amdsmi_error_count_t ec;
	memset(&ec, 0, sizeof ec);
	if (!l->api.amdsmi_get_gpu_total_ecc_count ||
	    l->api.amdsmi_get_gpu_total_ecc_count(h, &ec) != AMDSMI_STATUS_SUCCESS)
		return false;
	*ce = ec.correctable_count;
	*ue = ec.uncorrectable_count;
	return true;
}

void amdsmi_lib_read(const amdsmi_lib *l, const char *bdf, amdsmi_values *out)
{
	memset(out, 0, sizeof *out);
	amdsmi_processor_handle h = handle_of(l, bdf);
	if (!h)
		return;
	out->energy_ok = read_energy(l, h, &out->energy_mj);
	out->ecc_ok = read_ecc(l, h, &out->ecc_ce, &out->ecc_ue);
}

/* Set id to v unless the files already gave it. */
static void fill_one(gpu_values *o, gpu_metric_id id, double v)
{
	if (o->ok[id])
		return;
	o->v[id] = v;
	o->ok[id] = 1;
}

void amdsmi_merge(const amdsmi_values *a, gpu_values *o)
{
	if (a->energy_ok)
		fill_one(o, GM_ENERGY, a->energy_mj);
	/* both totals from one source: never RAS's corrected beside the library's uncorrected */
	if (a->ecc_ok && !o->ok[GM_ECC_CORR_VOL] && !o->ok[GM_ECC_UNCORR_VOL]) {
		fill_one(o, GM_ECC_CORR_VOL, (double)a->ecc_ce);
		fill_one(o, GM_ECC_UNCORR_VOL, (double)a->ecc_ue);
	}
}

void amdsmi_fill(const amdsmi_lib *l, const char *bdf, gpu_values *o)
{
	amdsmi_processor_handle h = handle_of(l, bdf);
	if (!h)
		return;
	/* only the calls for fields the files left open: a sample stays cheap */
	amdsmi_values a;
	memset(&a, 0, sizeof a);
	if (!o->ok[GM_ENERGY])
		a.energy_ok = read_energy(l, h, &a.energy_mj);
	if (!o->ok[GM_ECC_CORR_VOL] && !o->ok[GM_ECC_UNCORR_VOL])
		a.ecc_ok = read_ecc(l, h, &a.ecc_ce, &a.ecc_ue);
	amdsmi_merge(&a, o);
}
