/* main.c - global options and dispatch from the one command table. */
#include <getopt.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "gpu/loader.h"
#include "util/err.h"

typedef struct {
	const char *name;
	gw_cmd_fn fn;
	const char *summary;
} gw_cmd;

#define GW_CMD_ENTRY(n, f, s) {n, f, s},
static const gw_cmd commands[] = {GW_COMMANDS(GW_CMD_ENTRY)};
#undef GW_CMD_ENTRY

static void usage(FILE *out)
{
	fputs("usage: gpuwhy [GLOBAL OPTIONS] COMMAND [OPTIONS] [ARGS]\n"
	      "\n"
	      "Why is my GPU job slow? Measure, record, diagnose.\n"
	      "\n"
	      "Global options:\n"
	      "  --sim SCENARIO   use the simulated GPU (a shipped scenario name or a .json path)\n"
	      "  --nvml PATH      load this libnvidia-ml.so instead of the system's\n"
	      "  --gpus LIST      only these GPUs: indices, full or short UUIDs (0,2 or GPU-8f2a)\n"
	      "  -v, --verbose    debug messages on stderr (repeat for more)\n"
	      "  -h, --help       this help; `gpuwhy COMMAND --help` for a command\n"
	      "  -V, --version    print the version\n"
	      "\n"
	      "Commands:\n",
	      out);
	for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
		fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fputs("\nExit codes: 0 ok, 1 problems found, 2 usage error, 3 environment or I/O error.\n",
	      out);
}

/*
 * Run as `nvidia-smi` (a link named so), gpuwhy answers nvidia-smi's command
 * line: `dmon`, `pmon` and `topo` as the commands of those names, no
 * argument as nvidia-smi's table, anything else as `gpuwhy query`.
 */
static int as_nvidia_smi(int argc, char **argv)
{
	gw_global g = {.argv0 = argv[0], .gpus = getenv("GPUWHY_GPUS")};
	optind = 0;
	if (argc < 2) {
		char *args[] = {argv[0], "--nvidia-smi", NULL};
		return cmd_status(2, args, &g);
	}
	if (!strcmp(argv[1], "dmon"))
		return cmd_dmon(argc - 1, argv + 1, &g);
	if (!strcmp(argv[1], "pmon"))
		return cmd_pmon(argc - 1, argv + 1, &g);
	if (!strcmp(argv[1], "topo"))
		return cmd_topo(argc - 1, argv + 1, &g);
	return cmd_query(argc, argv, &g);
}

int main(int argc, char **argv)
{
	/* Only LC_CTYPE follows the user: numbers are always printed with '.'. */
	setlocale(LC_CTYPE, "");
	/* Past a file-size limit (ulimit -f), writes fail with EFBIG and are
	 * reported like a full disk instead of killing the process. */
	signal(SIGXFSZ, SIG_IGN);
	const char *base = strrchr(argv[0], '/');
	if (!strcmp(base ? base + 1 : argv[0], "nvidia-smi"))
		return as_nvidia_smi(argc, argv);
	gw_global g = {.argv0 = argv[0]};
	static const struct option opts[] = {
		{"sim", required_argument, NULL, 's'}, {"nvml", required_argument, NULL, 'n'},
		{"gpus", required_argument, NULL, 'g'}, {"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},      {"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0}};
	int c;
	while ((c = getopt_long(argc, argv, "+vhV", opts, NULL)) != -1) {
		switch (c) {
		case 's': g.sim = optarg; break;
		case 'n': g.nvml = optarg; break;
		case 'g': g.gpus = optarg; break;
		case 'v': g.verbose++; break;
		case 'h': usage(stdout); return GW_EXIT_OK;
		case 'V': printf("gpuwhy %s\n", GPUWHY_VERSION); return GW_EXIT_OK;
		default: usage(stderr); return GW_EXIT_USAGE;
		}
	}
	gw_verbose = g.verbose;
	if (optind >= argc) {
		usage(stderr);
		return GW_EXIT_USAGE;
	}
	const char *name = argv[optind];
	const gw_cmd *cmd = NULL;
	for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
		if (!strcmp(commands[i].name, name))
			cmd = &commands[i];
	if (!cmd)
		return gw_error(GW_EXIT_USAGE, name, "see gpuwhy --help", "unknown command");

	/* --sim and --nvml go into the environment so that child processes
	 * (gpuwhy run -- gpuwhy sim train ...) see the same GPU. */
	if (g.sim || g.nvml) {
		int rc = gpu_loader_configure(g.sim, g.nvml, argv[0]);
		if (rc)
			return rc;
	}
	if (g.gpus)
		setenv("GPUWHY_GPUS", g.gpus, 1);
	else
		g.gpus = getenv("GPUWHY_GPUS");
	int sub_argc = argc - optind;
	char **sub_argv = argv + optind;
	optind = 0; /* reset getopt for the command (0 also re-reads GNU extensions) */
	return cmd->fn(sub_argc, sub_argv, &g);
}
