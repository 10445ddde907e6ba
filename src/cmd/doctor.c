/* doctor.c - `gpuwhy doctor`: the pre-flight checklist, one line per check. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "util/opt.h"
#include "doctor/checks.h"
#include "doctor/machine.h"
#include "doctor/probe.h"
#include "doctor/report.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/parse.h"

/* NVML on 8 GPUs without persistence mode can take tens of seconds to initialise. */
#define DOCTOR_NVML_TIMEOUT_NS (60LL * 1000000000LL)

static int add_ports(const opt_def *d, const char *arg, void *ctx)
{
	doctor_opts *o = ctx;
	char *copy = strdup(arg), *save = NULL;
	int rc = 0;
	for (char *t = strtok_r(copy, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
		long long v;
		if (!gw_parse_int(t, 1, 65535, &v))
			rc = gw_error(GW_EXIT_USAGE, "--port", N_("a TCP port from 1 to 65535"),
			              "invalid port '%s'", t);
		else if (o->nports >= DOCTOR_PORTS_MAX)
			rc = gw_error(GW_EXIT_USAGE, "--port", NULL, "at most %d ports",
			              DOCTOR_PORTS_MAX);
		else
			o->ports[o->nports++] = (int)v;
	}
	free(copy);
	return rc;
}

static int set_need_mem(const opt_def *d, const char *v, void *ctx)
{
	doctor_opts *o = ctx;
	if (!gw_parse_size_bytes(v, &o->need_mem) || o->need_mem == 0)
		return gw_error(GW_EXIT_USAGE, "--need-mem", N_("a size such as 20G or 512M"),
		                "invalid size '%s'", v);
	o->need_mem_set = true;
	return 0;
}

static int parse_args(int argc, char **argv, doctor_opts *o, bool *json, bool *list)
{
	int fmt = OPT_FMT_TEXT;
	const opt_def opts[] = {
	    OPT_FORMAT_TJ(&fmt),
	    OPT_FLAG(0, "json", json,
	             "the same as --format json: a JSON array of {check, status, "
	             "found, fix}"),
	    OPT_CALL(0, "port", "N", add_ports,
	             "who listens on TCP port N (repeatable, or N,M,...)"),
	    OPT_CALL(0, "need-mem", "SIZE", set_need_mem,
	             "which GPUs have SIZE free (12G, 512M, 20GiB)"),
	    OPT_STRING(0, "python", "PATH", &o->python,
	               "the Python to probe (default: python3, else python, on PATH)"),
	    OPT_FLAG(0, "list", list, "list the checks and exit"),
	    OPT_END};
	const opt_cmd oc = {
	    .name = "doctor",
	    .usage = "doctor [--format json] [--port N ...] [--need-mem SIZE] [--python PATH]\n"
	             "doctor --list",
	    .about = N_(
	        "Checks the driver, the GPUs' health, CUDA_VISIBLE_DEVICES, Python GPU "
	        "frameworks,\ncontainers, WSL, other load on the GPUs and environment variables. "
	        "Prints one line\nper check: PASS, WARN, FAIL or SKIP, what was found and, "
	        "unless PASS, the fix."),
	    .opts = opts,
	    .more =
	        N_("Every external probe has a timeout (Python 10 s each, docker/nvidia-ctk/dmesg "
	           "5 s,\nNVML 60 s). The global --gpus LIST limits the per-GPU checks."),
	    .exit1 = N_("a check failed (warnings allowed)"),
	    .ctx = o};
	int first, rc = opt_parse(&oc, argc, argv, &first);
	if (rc)
		return rc;
	*json |= fmt == OPT_FMT_JSON;
	if (o->python && !*o->python)
		return gw_error(GW_EXIT_USAGE, "--python", N_("a path or a command name"),
		                "empty value");
	return 0;
}

int cmd_doctor(int argc, char **argv, const gw_global *g)
{
	doctor_opts o;
	memset(&o, 0, sizeof o);
	bool json = false, list = false;
	int rc = parse_args(argc, argv, &o, &json, &list);
	if (rc)
		return rc < 0 ? GW_EXIT_OK : rc;
	if (list) {
		for (size_t i = 0; i < doctor_ncheck; i++)
			printf("%-24s %s\n", doctor_checks[i].name, _(doctor_checks[i].what));
		return GW_EXIT_OK;
	}
	/* JSON is for machines: its text stays English. */
	doctor_set_translate(!json);
	doctor_machine m;
	if ((rc = doctor_machine_load_guarded(&m, g->gpus, DOCTOR_NVML_TIMEOUT_NS))) {
		doctor_machine_free(&m);
		return rc;
	}
	doctor_probe p;
	doctor_probe_default(&p);
	/* A simulated machine's kernel log is the scenario's, never the host's. */
	char *sim_klog = m.simulated ? gpu_sim_kernel_log_text() : NULL;
	if (m.simulated)
		p.klog_text = sim_klog ? sim_klog : "";
	/* ... and so are its AMD GPUs' files, which the ROCm checks read. */
	char amd_root[512] = "", amd_sys[600], amd_dev[600];
	if (m.simulated && gpu_sim_amd_tree(amd_root, sizeof amd_root)) {
		snprintf(amd_sys, sizeof amd_sys, "%s/sys", amd_root);
		snprintf(amd_dev, sizeof amd_dev, "%s/dev", amd_root);
		p.amd_sys_root = amd_sys;
		p.amd_dev_root = amd_dev;
	}
	doctor_report r = {0};
	doctor_ctx c;
	doctor_ctx_init(&c, &p, &o, &m, &r);
	doctor_run_all(&c);
	if (json)
		doctor_print_json(stdout, &r);
	else
		doctor_print_text(stdout, &r, isatty(1) && !getenv("NO_COLOR"));
	rc = doctor_exit_code(&r) ? GW_EXIT_PROBLEMS : GW_EXIT_OK;
	doctor_ctx_free(&c);
	doctor_report_free(&r);
	doctor_machine_free(&m);
	free(sim_klog);
	gpu_sim_amd_tree_remove(amd_root);
	return rc;
}
