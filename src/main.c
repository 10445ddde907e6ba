/* main.c - global options and dispatch from the one command table. */
#include <getopt.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "util/i18n.h"
#include "util/opt.h"
#include "gpu/gpu.h"
#include "gpu/loader.h"
#include "util/err.h"
#include "util/fail.h"
#include "util/termsafe.h"

typedef struct {
	const char *name;
	gw_cmd_fn fn;
	const char *summary;
} gw_cmd;

#define GW_CMD_ENTRY(n, f, s) {n, f, s},
static const gw_cmd commands[] = {GW_COMMANDS(GW_CMD_ENTRY)};
#undef GW_CMD_ENTRY

static gw_global glob;
static bool want_version;

static const opt_def global_opts[] = {
    OPT_STRING(0, "sim", "SCENARIO", &glob.sim,
               "use the simulated GPU (a shipped scenario name or a .json path)"),
    OPT_STRING(0, "nvml", "PATH", &glob.nvml, "load this libnvidia-ml.so instead of the system's"),
    OPT_STRING(0, "gpus", "LIST", &glob.gpus,
               "only these GPUs: indices, full or short UUIDs (0,2 or GPU-8f2a)"),
    OPT_STRING(0, "lang", "LANG", &glob.lang,
               "language of messages: zh_CN or en (default: LC_ALL, LC_MESSAGES, LANG)"),
    OPT_COUNT('v', "verbose", &glob.verbose, "debug messages on stderr (repeat for more)"),
    OPT_FLAG('V', "version", &want_version, "print the version"),
    OPT_END};

#define GW_CMD_COUNT (sizeof commands / sizeof *commands)

/* The global options and the list of commands, as one table for parsing and --help. */
static const opt_cmd *main_cmd(void)
{
	static char about[4096];
	static const char *names[GW_CMD_COUNT + 1], *summaries[GW_CMD_COUNT + 1];
	static opt_cmd top = {.name = "",
	                      .usage = "[GLOBAL OPTIONS] COMMAND [OPTIONS] [ARGS]\nhelp COMMAND",
	                      .about = about,
	                      .opts = global_opts,
	                      .more =
	                          N_("`gpuwhy help COMMAND` (or `gpuwhy COMMAND --help`) describes "
	                             "a command;\n--format json gives its output as JSON where the "
	                             "output is data."),
	                      .exit1 = N_("problems found"),
	                      .max_args = -1,
	                      .stop_at_arg = true,
	                      .subs = names,
	                      .sub_summaries = summaries};
	if (!about[0]) {
		for (size_t i = 0; i < GW_CMD_COUNT; i++) {
			names[i] = commands[i].name;
			summaries[i] = commands[i].summary;
		}
		/* Built after the language is chosen: opt_help prints it as it is. */
		size_t n = (size_t)snprintf(about, sizeof about, "%s\n\n%s",
		                            _("Why is my GPU job slow? Measure, record, diagnose."),
		                            _("Commands:"));
		for (size_t i = 0; i < GW_CMD_COUNT && n < sizeof about; i++)
			n += (size_t)snprintf(about + n, sizeof about - n, "\n  %-9s %s",
			                      commands[i].name, _(commands[i].summary));
	}
	return &top;
}

static void usage(FILE *out)
{
	opt_help(main_cmd(), out);
}

static const gw_cmd *find_cmd(const char *name)
{
	for (size_t i = 0; i < GW_CMD_COUNT; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	const char *names[GW_CMD_COUNT + 1];
	for (size_t i = 0; i < GW_CMD_COUNT; i++)
		names[i] = commands[i].name;
	names[GW_CMD_COUNT] = "help";
	const char *s = opt_suggest(name, names, GW_CMD_COUNT + 1);
	char safe[GW_TERM_SAFE_LEN(64)];
	gw_term_safe(name, safe, sizeof safe);
	fputs("gpuwhy: ", stderr);
	if (s)
		fprintf(stderr, _("unknown command '%s' (did you mean '%s'?)"), safe, s);
	else
		fprintf(stderr, _("unknown command '%s' (see gpuwhy --help)"), safe);
	fputc('\n', stderr);
	return NULL;
}

/*
 * Run as `nvidia-smi` (a link named so), gpuwhy answers nvidia-smi's command
 * line: `dmon`, `pmon` and `topo` as the commands of those names, no
 * argument as nvidia-smi's table, anything else as `gpuwhy query`.
 */
/* The selection a parent gpuwhy passed down; set but empty is no selection
 * (the parent itself refuses an empty --gpus). */
static const char *inherited_gpus(void)
{
	const char *e = getenv("GPUWHY_GPUS");
	return e && *e ? e : NULL;
}

static int as_nvidia_smi(int argc, char **argv)
{
	gw_global g = {.argv0 = argv[0], .gpus = inherited_gpus()};
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

/* The last --lang among the global options (before the command), as the
 * option parser will keep it; NULL when absent. */
static const char *prescan_lang(int argc, char **argv)
{
	const char *lang = NULL;
	for (int i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strncmp(argv[i], "--lang=", 7))
			lang = argv[i] + 7;
		else if (!strcmp(argv[i], "--lang") && i + 1 < argc)
			lang = argv[++i];
		/* the other global options that take a value */
		if ((!strcmp(argv[i], "--sim") || !strcmp(argv[i], "--nvml") ||
		     !strcmp(argv[i], "--gpus")) &&
		    i + 1 < argc)
			i++;
	}
	return lang;
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
		return as_nvidia_smi(argc, argv); /* nvidia-smi's output is English */
	/* The language is chosen before parsing, so that its errors speak it. */
	const char *lang = prescan_lang(argc, argv);
	if (gw_i18n_init(lang) != 0) {
		gw_i18n_init(NULL); /* say so in the environment's language */
		char hint[600];
		snprintf(hint, sizeof hint, _("one of: %s"), gw_i18n_available());
		return gw_error(GW_EXIT_USAGE, "--lang", hint, _("no messages in '%s'"), lang);
	}
	glob.argv0 = argv[0];
	int first, rc = opt_parse(main_cmd(), argc, argv, &first);
	if (rc == OPT_HELP || rc)
		return rc == OPT_HELP ? GW_EXIT_OK : rc;
	if (want_version) {
		printf("gpuwhy %s\n", GPUWHY_VERSION);
		return GW_EXIT_OK;
	}
	gw_verbose = glob.verbose;
	/* An empty list selects nothing: refused rather than read as "all GPUs". */
	if (glob.gpus && gpu_selection_is_empty(glob.gpus))
		return gw_error(GW_EXIT_USAGE, "--gpus",
		                N_("give indices or (short) UUIDs, e.g. --gpus 0,1; leave the "
		                   "option out for all GPUs"),
		                "%s", _("empty GPU list"));
	if (first >= argc) {
		usage(stderr);
		return GW_EXIT_USAGE;
	}
	/* `gpuwhy help CMD [SUB]` is `gpuwhy CMD [SUB] --help`; `help --dump`
	 * prints the same table as JSON (opt_dump) for the man pages and the
	 * shell completion. */
	char **help_argv = NULL;
	if (!strcmp(argv[first], "help")) {
		if (first + 1 < argc && !strcmp(argv[first + 1], "--dump")) {
			opt_set_dump(true);
			first++;
		}
		if (first + 1 >= argc) {
			usage(stdout);
			return GW_EXIT_OK;
		}
		int n = argc - first - 1;
		help_argv = calloc((size_t)n + 2, sizeof *help_argv);
		if (!help_argv)
			return gw_error(GW_EXIT_ENV, "memory", NULL, "%s", _("out of memory"));
		memcpy(help_argv, argv + first + 1, (size_t)n * sizeof *help_argv);
		help_argv[n] = "--help";
		argv = help_argv;
		argc = n + 1;
		first = 0;
	}
	const gw_cmd *cmd = find_cmd(argv[first]);
	if (!cmd) {
		free(help_argv);
		return GW_EXIT_USAGE;
	}
	gw_global g = glob;

	/* --sim and --nvml go into the environment so that child processes
	 * (gpuwhy run -- gpuwhy sim train ...) see the same GPU. */
	if (g.sim || g.nvml) {
		gw_fail lf;
		if (gpu_loader_setup(g.sim, g.nvml, glob.argv0, &lf) != 0) {
			free(help_argv);
			return gw_fail_print(&lf);
		}
	}
	if (g.gpus)
		setenv("GPUWHY_GPUS", g.gpus, 1);
	else
		g.gpus = inherited_gpus();
	int sub_argc = argc - first;
	char **sub_argv = argv + first;
	optind = 0; /* reset getopt for the command (0 also re-reads GNU extensions) */
	rc = cmd->fn(sub_argc, sub_argv, &g);
	free(help_argv);
	gw_fail census;
	if (gpu_close_failure(&census))
		gw_fail_print(&census);
	return rc;
}
