#include "cmd/cmdopt.h"

#include <getopt.h>
#include <string.h>

#include "util/err.h"

int cmdopt_text_json(int argc, char **argv, const char *cmd, void (*usage)(FILE *), bool *json)
{
	static const struct option opts[] = {{"format", required_argument, NULL, 'f'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	*json = false;
	int ch;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'f':
			if (!strcmp(optarg, "json"))
				*json = true;
			else if (strcmp(optarg, "text"))
				return gw_error(GW_EXIT_USAGE, "--format", "use text or json",
				                "unknown format '%s'", optarg);
			break;
		case 'h':
			usage(stdout);
			return -1;
		default:
			usage(stderr);
			return GW_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		char hint[64];
		snprintf(hint, sizeof hint, "see gpuwhy %s --help", cmd);
		return gw_error(GW_EXIT_USAGE, argv[optind], hint, "unexpected argument");
	}
	return 0;
}
