/* doctor.c - `gpuwhy doctor`: the pre-flight checklist, one line per check. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "doctor/doctor.h"
#include "util/err.h"
#include "util/parse.h"

/* NVML on 8 GPUs without persistence mode can take tens of seconds to initialise. */
#define DOCTOR_NVML_TIMEOUT_NS (60LL * 1000000000LL)

static void usage(FILE *out)
{
	fputs(
	    "usage: gpuwhy doctor [--json] [--port N ...] [--need-mem SIZE] [--python PATH]\n"
	    "       gpuwhy doctor --list\n"
	    "\n"
	    "Checks the driver, the GPUs' health, CUDA_VISIBLE_DEVICES, Python GPU frameworks,\n"
	    "containers, WSL, other load on the GPUs and environment variables. Prints one line\n"
	    "per check: PASS, WARN, FAIL or SKIP, what was found and, unless PASS, the fix.\n"
	    "\n"
	    "  --json           a JSON array of {check, status, found, fix}\n"
	    "  --port N         who listens on TCP port N (repeatable, or N,M,...)\n"
	    "  --need-mem SIZE  which GPUs have SIZE free (12G, 512M, 20GiB)\n"
	    "  --python PATH    the Python to probe (default: python3, else python, on PATH)\n"
	    "  --list           list the checks and exit\n"
	    "\n"
	    "Every external probe has a timeout (Python 10 s each, docker/nvidia-ctk/dmesg 5 s,\n"
	    "NVML 60 s). The global --gpus LIST limits the per-GPU checks.\n"
	    "Exit status: 0 nothing failed (warnings allowed), 1 a check failed, 2 usage error.\n",
	    out);
}

static int add_ports(const char *arg, dr_opts *o)
{
	char *copy = strdup(arg), *save = NULL;
	int rc = 0;
	for (char *t = strtok_r(copy, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
		long long v;
		if (!gw_parse_int(t, 1, 65535, &v))
			rc = gw_error(GW_EXIT_USAGE, "--port", "a TCP port from 1 to 65535",
			              "invalid port '%s'", t);
		else if (o->nports >= DR_PORTS_MAX)
			rc = gw_error(GW_EXIT_USAGE, "--port", NULL, "at most %d ports",
			              DR_PORTS_MAX);
		else
			o->ports[o->nports++] = (int)v;
	}
	free(copy);
	return rc;
}

static int parse_args(int argc, char **argv, dr_opts *o, bool *json, bool *list)
{
	static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
	                                     {"port", required_argument, NULL, 'p'},
	                                     {"need-mem", required_argument, NULL, 'm'},
	                                     {"python", required_argument, NULL, 'y'},
	                                     {"list", no_argument, NULL, 'l'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	int ch, rc;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'j':
			*json = true;
			break;
		case 'p':
			if ((rc = add_ports(optarg, o)))
				return rc;
			break;
		case 'm':
			if (!gw_parse_size_bytes(optarg, &o->need_mem) || o->need_mem == 0)
				return gw_error(GW_EXIT_USAGE, "--need-mem",
				                "a size such as 20G or 512M", "invalid size '%s'",
				                optarg);
			o->need_mem_set = true;
			break;
		case 'y':
			if (!*optarg)
				return gw_error(GW_EXIT_USAGE, "--python",
				                "a path or a command name", "empty value");
			o->python = optarg;
			break;
		case 'l':
			*list = true;
			break;
		case 'h':
			usage(stdout);
			return -1;
		default:
			usage(stderr);
			return GW_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return gw_error(GW_EXIT_USAGE, argv[optind], "see gpuwhy doctor --help",
		                "unexpected argument");
	return 0;
}

int cmd_doctor(int argc, char **argv, const gw_global *g)
{
	dr_opts o;
	memset(&o, 0, sizeof o);
	bool json = false, list = false;
	int rc = parse_args(argc, argv, &o, &json, &list);
	if (rc)
		return rc < 0 ? GW_EXIT_OK : rc;
	if (list) {
		for (size_t i = 0; i < dr_ncheck; i++)
			printf("%-24s %s\n", dr_checks[i].name, dr_checks[i].what);
		return GW_EXIT_OK;
	}
	dr_machine m;
	if ((rc = dr_machine_load_guarded(&m, g->gpus, DOCTOR_NVML_TIMEOUT_NS))) {
		dr_machine_free(&m);
		return rc;
	}
	dr_probe p;
	dr_probe_default(&p);
	dr_report r = {0};
	dr_ctx c;
	dr_ctx_init(&c, &p, &o, &m, &r);
	dr_run_all(&c);
	if (json)
		dr_print_json(stdout, &r);
	else
		dr_print_text(stdout, &r, isatty(1) && !getenv("NO_COLOR"));
	rc = dr_exit_code(&r) ? GW_EXIT_PROBLEMS : GW_EXIT_OK;
	dr_ctx_free(&c);
	dr_report_free(&r);
	dr_machine_free(&m);
	return rc;
}
