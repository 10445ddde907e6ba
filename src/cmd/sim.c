/* sim.c - `gpuwhy sim`: the simulated GPU's own commands. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "gpu/loader.h"
#include "util/err.h"

static void sim_usage(FILE *out)
{
	fputs("usage: gpuwhy sim list\n"
	      "\n"
	      "  list    the shipped scenarios (use one with gpuwhy --sim NAME ...)\n",
	      out);
}

static int names_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int sim_list(void)
{
	const char *dir = gpu_scenario_dir();
	if (!dir)
		return gw_error(GW_EXIT_ENV, "scenarios", "set GPUWHY_SCENARIOS",
				"no scenario directory found");
	DIR *d = opendir(dir);
	if (!d)
		return gw_error(GW_EXIT_ENV, dir, NULL, "cannot open scenario directory");
	char *names[256];
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < 256) {
		size_t len = strlen(e->d_name);
		if (len > 5 && !strcmp(e->d_name + len - 5, ".json"))
			names[n++] = strndup(e->d_name, len - 5);
	}
	closedir(d);
	qsort(names, n, sizeof *names, names_cmp);
	for (size_t i = 0; i < n; i++) {
		puts(names[i]);
		free(names[i]);
	}
	return GW_EXIT_OK;
}

int cmd_sim(int argc, char **argv, const gw_global *g)
{
	(void)g;
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		sim_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? GW_EXIT_USAGE : GW_EXIT_OK;
	}
	if (!strcmp(argv[1], "list"))
		return sim_list();
	gw_error(GW_EXIT_USAGE, argv[1], "see gpuwhy sim --help", "unknown sim subcommand");
	return GW_EXIT_USAGE;
}
