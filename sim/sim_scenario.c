/*
 * sim_scenario.c - strict reader of scenario files (schema: docs/scenarios.md).
 *
 * jansson parses the text (rejecting duplicate keys) and reports syntax
 * errors with their position. jansson keeps no positions for values, so
 * semantic errors (unknown key, wrong type, out of range) are located by
 * walking the already-valid text again along the JSON path of the culprit
 * (sim_parse.c). One GPU's object is read by sim_scenario_gpu.c, its
 * behaviour over time by sim_scenario_behave.c; this file reads the rest.
 */
#include "sim_scenario.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nvml_abi.h"
#include "sim_i18n.h"
#include "sim_parse_int.h"

uint64_t sim_hash(uint64_t seed, uint64_t a, uint64_t b, uint64_t c)
{
	/* splitmix64 finaliser over a running mix: cheap, well distributed. */
	uint64_t x = seed ^ 0x9E3779B97F4A7C15ULL;
	uint64_t in[3] = {a, b, c};
	for (int i = 0; i < 3; i++) {
		x += in[i] + 0x9E3779B97F4A7C15ULL;
		x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
		x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
		x ^= x >> 31;
	}
	return x;
}

static const char *const arch_names[] = {
    [NVML_DEVICE_ARCH_KEPLER] = "kepler",
    [NVML_DEVICE_ARCH_MAXWELL] = "maxwell",
    [NVML_DEVICE_ARCH_PASCAL] = "pascal",
    [NVML_DEVICE_ARCH_VOLTA] = "volta",
    [NVML_DEVICE_ARCH_TURING] = "turing",
    [NVML_DEVICE_ARCH_AMPERE] = "ampere",
    [NVML_DEVICE_ARCH_ADA] = "ada",
    [NVML_DEVICE_ARCH_HOPPER] = "hopper",
    [NVML_DEVICE_ARCH_BLACKWELL] = "blackwell",
};

const char *sim_arch_name(unsigned arch)
{
	if (arch < sizeof arch_names / sizeof *arch_names && arch_names[arch])
		return arch_names[arch];
	return "unknown";
}

/* gpu_defaults under the GPU's own keys; objects merge key by key. */
static json_t *merge_defaults(json_t *dflt, json_t *gpu)
{
	if (!dflt)
		return json_incref(gpu);
	json_t *out = json_deep_copy(dflt);
	if (!out)
		return NULL;
	const char *k;
	json_t *v;
	json_object_foreach(gpu, k, v)
	{
		json_t *d = json_object_get(out, k);
		json_t *merged = (json_is_object(d) && json_is_object(v)) ? merge_defaults(d, v)
		                                                          : json_incref(v);
		if (!merged || json_object_set_new(out, k, merged)) {
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

static bool parse_processes(sim_sc_ctx *c, json_t *root, sim_scenario *s)
{
	static const char *const keys[] = {"gpu",      "pid",        "name", "user",
	                                   "used_mib", "sm_util",    "type", "start_s",
	                                   "end_s",    "mig_device", NULL};
	static const char *const types[] = {"compute", "graphics", "compute+graphics", NULL};
	static const int type_bits[] = {SIM_PROC_COMPUTE, SIM_PROC_GRAPHICS,
	                                SIM_PROC_COMPUTE | SIM_PROC_GRAPHICS};
	json_t *arr;
	if (!sim_sc_get_arr(c, root, "", "processes", false, SIM_MAX_PROCS, &arr))
		return false;
	if (!arr || !json_array_size(arr))
		return true;
	s->procs = calloc(json_array_size(arr), sizeof *s->procs);
	if (!s->procs)
		return sim_sc_fail(c, "processes", NULL, "out of memory");
	size_t i;
	json_t *o;
	json_array_foreach(arr, i, o)
	{
		char path[64];
		snprintf(path, sizeof path, "processes[%zu]", i);
		if (!json_is_object(o))
			return sim_sc_fail(c, path, NULL, "expected an object, got %s",
			                   sim_sc_tname(o));
		sim_fproc *p = &s->procs[i];
		long long gpu = 0, pid = 0, mig = -1;
		p->type = SIM_PROC_COMPUTE;
		p->end = INFINITY;
		snprintf(p->name, sizeof p->name, "python3");
		if (!sim_sc_check_keys(c, o, path, keys) ||
		    !sim_sc_get_int(c, o, path, "gpu", true, 0, s->n_gpus - 1, &gpu) ||
		    !sim_sc_get_int(c, o, path, "pid", true, 1, 4194304, &pid) ||
		    !sim_sc_get_str(c, o, path, "name", false, 63, p->name, sizeof p->name) ||
		    !sim_sc_get_str(c, o, path, "user", false, 31, p->user, sizeof p->user) ||
		    !sim_sc_get_ull(c, o, path, "used_mib", true, 0, 1LL << 30, &p->used_mib) ||
		    !sim_sc_get_num(c, o, path, "sm_util", false, 0, 100, &p->sm_util) ||
		    !sim_sc_get_enum(c, o, path, "type", false, types, type_bits, &p->type) ||
		    !sim_sc_get_num(c, o, path, "start_s", false, 0, 1e9, &p->start) ||
		    !sim_sc_get_num(c, o, path, "end_s", false, 0, 1e9, &p->end) ||
		    !sim_sc_get_int(c, o, path, "mig_device", false, 0, SIM_MAX_MIG - 1, &mig))
			return false;
		if (mig >= s->gpus[gpu].n_mig)
			return sim_sc_fail(c, path, "mig_device", "GPU %lld has %d MIG devices",
			                   gpu, s->gpus[gpu].n_mig);
		p->mig = (int)mig;
		if (p->end <= p->start)
			return sim_sc_fail(c, path, "end_s", "end_s must be after start_s (%g)",
			                   p->start);
		p->gpu = (int)gpu;
		p->pid = (unsigned)pid;
		s->n_procs++;
		for (int k = 0; k < s->n_procs - 1; k++)
			if (s->procs[k].pid == p->pid && s->procs[k].gpu == p->gpu)
				return sim_sc_fail(c, path, "pid",
				                   "pid %u is already listed on GPU %d", p->pid,
				                   p->gpu);
		/* Everything the scenario holds at once must fit in the GPU. */
		const sim_gpu *g = &s->gpus[p->gpu];
		unsigned long long held = g->mem_reserved + g->mem_used;
		for (int k = 0; k < s->n_procs; k++)
			if (s->procs[k].gpu == p->gpu)
				held += s->procs[k].used_mib;
		if (held > g->mem_total)
			return sim_sc_fail(c, path, "used_mib",
			                   "GPU %d would hold %llu MiB, more than its %llu MiB",
			                   p->gpu, held, g->mem_total);
	}
	return true;
}

static bool parse_driver(sim_sc_ctx *c, json_t *root, sim_scenario *s)
{
	static const char *const keys[] = {"version", "cuda_version", "nvml_version",
	                                   "pcie_throughput_delay_ms", NULL};
	json_t *o;
	long long cuda = 0;
	if (!sim_sc_get_obj(c, root, "", "driver", true, &o) ||
	    !sim_sc_check_keys(c, o, "driver", keys) ||
	    !sim_sc_get_str(c, o, "driver", "version", true, 79, s->driver_version,
	                    sizeof s->driver_version) ||
	    !sim_sc_get_int(c, o, "driver", "cuda_version", true, 1000, 99990, &cuda) ||
	    !sim_sc_get_str(c, o, "driver", "nvml_version", true, 79, s->nvml_version,
	                    sizeof s->nvml_version))
		return false;
	s->cuda_version = (int)cuda;
	s->pcie_delay_ms = 20;
	return sim_sc_get_num(c, o, "driver", "pcie_throughput_delay_ms", false, 0, 1000,
	                      &s->pcie_delay_ms);
}

/* NVLink ends that name a GPU take that GPU's PCI identity; ids must be unique. */
/*
 * AMD GPUs come after every NVIDIA GPU, so NVML's indices are the scenario's
 * (NVML sees the first n_nvidia) and gpuwhy's order (NVIDIA first, then AMD)
 * is the file's. They have no NVLink, MIG or NVIDIA vendor id.
 */
static bool check_amd(sim_sc_ctx *c, sim_scenario *s, int i, const char *path)
{
	sim_gpu *g = &s->gpus[i];
	if (!g->amd) {
		if (i > 0 && s->gpus[i - 1].amd)
			return sim_sc_fail(c, path, "vendor",
			                   "NVIDIA GPUs come before the AMD GPUs in \"gpus\"");
		s->n_nvidia = i + 1;
		return true;
	}
	if ((g->pci.device_id & 0xFFFF) != 0x1002)
		return sim_sc_fail(
		    c, path, "pci",
		    "an AMD GPU's device_id ends in vendor 1002, like \"0x74A11002\"");
	if (g->has_nvlink || g->has_mig)
		return sim_sc_fail(c, path, g->has_nvlink ? "nvlink" : "mig",
		                   "an AMD GPU has no %s", g->has_nvlink ? "NVLink" : "MIG");
	for (int k = 0; k < s->n_gpus; k++)
		for (int l = 0; l < s->gpus[k].n_links; l++)
			if (s->gpus[k].links[l].remote_gpu == i)
				return sim_sc_fail(c, path, "nvlink",
				                   "gpus[%d] has an NVLink to this AMD GPU", k);
	return true;
}

static bool cross_check(sim_sc_ctx *c, sim_scenario *s)
{
	s->n_nvidia = 0;
	for (int i = 0; i < s->n_gpus; i++) {
		sim_gpu *g = &s->gpus[i];
		char path[32];
		snprintf(path, sizeof path, "gpus[%d]", i);
		if (!check_amd(c, s, i, path))
			return false;
		for (int l = 0; l < g->n_links; l++) {
			sim_link *lk = &g->links[l];
			if (lk->remote_gpu < 0)
				continue;
			if (lk->remote_gpu >= s->n_gpus)
				return sim_sc_fail(c, path, "nvlink",
				                   "a link names GPU %d, but there are %d GPUs",
				                   lk->remote_gpu, s->n_gpus);
			lk->remote = s->gpus[lk->remote_gpu].pci;
		}
		for (int j = 0; j < i; j++) {
			if (!strcmp(s->gpus[j].uuid, g->uuid))
				return sim_sc_fail(c, path, "uuid", "same UUID as gpus[%d]", j);
			if (!strcmp(s->gpus[j].pci.bus_id, g->pci.bus_id))
				return sim_sc_fail(c, path, "pci", "same PCI bus id as gpus[%d]",
				                   j);
		}
	}
	return true;
}

static void scenario_name(const char *file, char *out, size_t outlen)
{
	const char *b = strrchr(file, '/');
	b = b ? b + 1 : file;
	size_t n = strlen(b);
	if (n > 5 && !strcmp(b + n - 5, ".json"))
		n -= 5;
	snprintf(out, outlen, "%.*s", (int)n, b);
}

static bool parse_root(sim_sc_ctx *c, json_t *root, sim_scenario *s)
{
	static const char *const keys[] = {"schema",       "name", "description", "seed", "driver",
	                                   "gpu_defaults", "gpus", "processes",   NULL};
	long long schema = 0, seed = 0;
	if (!json_is_object(root))
		return sim_sc_fail(c, "", NULL, "a scenario is a JSON object");
	if (!sim_sc_check_keys(c, root, "", keys) ||
	    !sim_sc_get_int(c, root, "", "schema", true, 1, 1, &schema) ||
	    !sim_sc_get_str(c, root, "", "name", false, 63, s->name, sizeof s->name) ||
	    !sim_sc_get_str(c, root, "", "description", false, 255, s->description,
	                    sizeof s->description) ||
	    !sim_sc_get_int(c, root, "", "seed", false, 0, (1LL << 53), &seed) ||
	    !parse_driver(c, root, s))
		return false;
	s->seed = (uint64_t)seed;
	c->seed = s->seed;
	if (!*s->name)
		scenario_name(c->file, s->name, sizeof s->name);
	json_t *dflt, *gpus;
	if (!sim_sc_get_obj(c, root, "", "gpu_defaults", false, &dflt) ||
	    !sim_sc_get_arr(c, root, "", "gpus", true, SIM_MAX_GPUS, &gpus))
		return false;
	if (dflt && !sim_sc_check_keys(c, dflt, "gpu_defaults", sim_sc_gpu_keys))
		return false;
	if (json_array_size(gpus) == 0)
		return sim_sc_fail(c, "", "gpus", "a scenario needs at least one GPU");
	s->gpus = calloc(json_array_size(gpus), sizeof *s->gpus);
	if (!s->gpus)
		return sim_sc_fail(c, "", "gpus", "out of memory");
	size_t i;
	json_t *gj;
	json_array_foreach(gpus, i, gj)
	{
		char path[32];
		snprintf(path, sizeof path, "gpus[%zu]", i);
		if (!json_is_object(gj))
			return sim_sc_fail(c, path, NULL, "expected an object, got %s",
			                   sim_sc_tname(gj));
		json_t *merged = merge_defaults(dflt, gj);
		if (!merged)
			return sim_sc_fail(c, path, NULL, "out of memory");
		s->gpus[i].index = (int)i;
		s->n_gpus = (int)i + 1;
		bool ok = sim_sc_parse_gpu(c, merged, path, &s->gpus[i]);
		json_decref(merged);
		if (!ok)
			return false;
	}
	return cross_check(c, s) && parse_processes(c, root, s);
}

void sim_scenario_free(sim_scenario *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->n_gpus; i++) {
		free(s->gpus[i].segments);
		free(s->gpus[i].episodes);
	}
	free(s->gpus);
	free(s->procs);
	free(s);
}

int sim_scenario_parse(const char *buf, size_t len, const char *filename, sim_scenario **out,
                       char *err, size_t errlen)
{
	*out = NULL;
	sim_sc_ctx c = {.buf = buf, .len = len, .file = filename, .err = err, .errlen = errlen};
	if (len > SIM_MAX_FILE_BYTES) {
		snprintf(err, errlen, SIM_("%s:1:1: file is larger than %u bytes"), filename,
		         SIM_MAX_FILE_BYTES);
		return -1;
	}
	json_error_t je;
	json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		snprintf(err, errlen, SIM_("%s:%d:%d: invalid JSON: %s"), filename,
		         je.line > 0 ? je.line : 1, je.column > 0 ? je.column : 1, je.text);
		return -1;
	}
	sim_scenario *s = calloc(1, sizeof *s);
	if (!s) {
		json_decref(root);
		snprintf(err, errlen, SIM_("%s: out of memory"), filename);
		return -1;
	}
	bool ok = parse_root(&c, root, s);
	json_decref(root);
	if (!ok) {
		sim_scenario_free(s);
		return -1;
	}
	*out = s;
	return 0;
}

int sim_scenario_load(const char *path, sim_scenario **out, char *err, size_t errlen)
{
	*out = NULL;
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap);
	while (buf) {
		size_t n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0 || len > SIM_MAX_FILE_BYTES)
			break;
		if (len == cap) {
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	bool rerr = ferror(f);
	fclose(f);
	if (!buf || rerr) {
		snprintf(err, errlen, "%s: %s", path,
		         buf ? SIM_("read error") : SIM_("out of memory"));
		free(buf);
		return -1;
	}
	int rc = sim_scenario_parse(buf, len, path, out, err, errlen);
	free(buf);
	return rc;
}
