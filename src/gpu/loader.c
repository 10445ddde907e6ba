#include "gpu/loader.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/err.h"
#include "util/selfexe.h"
#include "util/i18n.h"

static int file_exists(const char *p)
{
	return access(p, R_OK) == 0;
}

const char *gpu_sim_library(const char *argv0)
{
	static char path[PATH_MAX + 64];
	const char *env = getenv("GPUWHY_SIM_LIB");
	if (env && file_exists(env))
		return env;
	char dir[PATH_MAX];
	if (gw_self_dir(dir, sizeof dir) == 0) {
		/* build tree: build/gpuwhy + build/sim/; installed: bin/ + lib/gpuwhy/ */
		snprintf(path, sizeof path, "%s/sim/libnvidia-ml.so.1", dir);
		if (file_exists(path))
			return path;
		snprintf(path, sizeof path, "%s/../lib/gpuwhy/libnvidia-ml.so.1", dir);
		if (file_exists(path))
			return path;
	}
	(void)argv0;
	return NULL;
}

const char *gpu_scenario_dir(void)
{
	static char path[PATH_MAX + 64];
	const char *env = getenv("GPUWHY_SCENARIOS");
	if (env && file_exists(env))
		return env;
	char dir[PATH_MAX];
	if (gw_self_dir(dir, sizeof dir) == 0) {
		snprintf(path, sizeof path, "%s/../share/gpuwhy/scenarios", dir);
		if (file_exists(path))
			return path;
	}
	if (file_exists(GPUWHY_SOURCE_SCENARIOS))
		return GPUWHY_SOURCE_SCENARIOS;
	return NULL;
}

int gpu_scenario_resolve(const char *name, char *out, size_t outlen)
{
	if (strchr(name, '/') || strstr(name, ".json")) {
		if (!file_exists(name))
			return -1;
		char *real = realpath(name, NULL);
		if (!real)
			return -1;
		snprintf(out, outlen, "%s", real);
		free(real);
		return 0;
	}
	const char *dir = gpu_scenario_dir();
	if (!dir)
		return -1;
	snprintf(out, outlen, "%s/%s.json", dir, name);
	if (!file_exists(out))
		return -1;
	char *real = realpath(out, NULL);
	if (real) {
		snprintf(out, outlen, "%s", real);
		free(real);
	}
	return 0;
}

/* Fill *f as gpu_open does ("what: why (hint)") and return code. */
static int loader_fail(gw_fail *f, int code, const char *what, const char *hint, const char *why)
{
	/* why keeps English (logs); gw_fail_print shows why_text. */
	gw_fail_set(f, code, what, hint, "%s", why);
	snprintf(f->why_text, sizeof f->why_text, "%s", _(why));
	return code;
}

int gpu_loader_setup(const char *sim, const char *nvml, const char *argv0, gw_fail *f)
{
	memset(f, 0, sizeof *f);
	if (sim) {
		char scen[PATH_MAX];
		if (gpu_scenario_resolve(sim, scen, sizeof scen) != 0)
			return loader_fail(f, GW_EXIT_USAGE, sim,
			                   N_("gpuwhy sim list shows the shipped scenarios"),
			                   "no such scenario");
		const char *lib = nvml ? nvml : gpu_sim_library(argv0);
		if (!lib)
			return loader_fail(
			    f, GW_EXIT_ENV, "--sim",
			    N_("build it with make, or set GPUWHY_SIM_LIB"),
			    "simulated libnvidia-ml.so.1 not found beside the binary");
		setenv("GPUWHY_SIM_SCENARIO", scen, 1);
		setenv("GPUWHY_NVML", lib, 1);
		return 0;
	}
	if (nvml) {
		if (!file_exists(nvml))
			return loader_fail(f, GW_EXIT_ENV, nvml,
			                   N_("give the path of a libnvidia-ml.so.1"),
			                   "cannot read NVML library");
		setenv("GPUWHY_NVML", nvml, 1);
	}
	return 0;
}
