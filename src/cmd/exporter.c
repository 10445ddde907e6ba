/* exporter.c - `gpuwhy exporter`: Prometheus /metrics, a dcgm-exporter drop-in plus diagnosis. */
#include <stdbool.h>
#include <stdint.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "util/opt.h"
#include "util/i18n.h"
#include "exporter/collectors.h"
#include "exporter/exposition.h"
#include "exporter/findings.h"
#include "exporter/frame.h"
#include "exporter/http.h"
#include "exporter/page.h"
#include "exporter/publish.h"
#include "util/err.h"
#include "util/fail.h"
#include "util/i18n.h"
#include "util/parse.h"

#define COLLECTORS_MAX_BYTES (1 << 20)

typedef struct {
	exporter_server_opts server;
	int64_t interval_ns;
	exporter_hostlabel host_label;
	const char *collectors_path;
	int processes;
	int counter_type; /* -1: as the defaults or the CSV say, else exporter_prom_type */
	const char *kubernetes_root; /* NULL: no pod labels */
} exporter_args;

static int set_listen(const opt_def *o, const char *v, void *ctx)
{
	gw_fail err = {0};
	if (exporter_parse_listen(v, &((exporter_args *)ctx)->server.addr, &err)) {
		err.why_text[159] = '\0'; /* as this line has always cut it */
		return gw_error(GW_EXIT_USAGE, "--listen",
		                N_("e.g. --listen 127.0.0.1:9400 or 0.0.0.0:9400"), "'%s': %s", v,
		                err.why_text);
	}
	return 0;
}

static const char *const host_labels[] = {"Hostname", "hostname", "none",
                                          NULL}; /* exporter_hostlabel */
static const char *const counter_types[] = {"counter", "untyped", NULL};

static int parse_args(int argc, char **argv, exporter_args *a)
{
	int host_label = (int)a->host_label, counter_type = -1;
	bool kube = false;
	int max_conn = (int)a->server.max_connections, timeout_s = (int)a->server.timeout_s;
	const opt_def opts[] = {
	    OPT_CALL(0, "listen", "ADDR:PORT", set_listen,
	             "where to listen (default 127.0.0.1:9400: loopback only; 0.0.0.0:9400 "
	             "exposes it on every interface; port 0 takes any free port)"),
	    OPT_DURATION(0, "interval", "DURATION", &a->interval_ns, 0,
	                 "sampling period (default 1s, at least 100ms); a scrape serves the latest "
	                 "sample, never waits",
	                 .min = 0.1, .max = 3600, .why = N_("invalid interval '%s'"),
	                 .hint = N_("from 100ms to 1h, e.g. --interval 1s")),
	    OPT_ENUM(0, "hostname-label", "NAME", &host_label, host_labels,
	             "Hostname (default, released dcgm-exporters), hostname (newer dcgm-exporter) "
	             "or none; the value is $NODE_NAME, else the host name",
	             .why = N_("unknown value '%s'")),
	    OPT_STRING(0, "collectors", "FILE", &a->collectors_path,
	               "a dcgm-exporter counters CSV (FIELD, prom_type, help): export only the "
	               "DCGM fields it lists"),
	    OPT_ENUM(0, "counter-type", "TYPE", &counter_type, counter_types,
	             "counter or untyped: the type of the counter fields (energy, PCIe replays, "
	             "NVLink, remapped rows, ECC); default untyped unless the CSV says counter",
	             .why = N_("unknown type '%s'"), .hint = N_("counter or untyped")),
	    OPT_FLAG(0, "kubernetes", &kube,
	             "pod, namespace and container labels on the series of GPUs and processes in "
	             "Kubernetes pods (from /proc/PID/cgroup and /var/log/containers)"),
	    OPT_STRING(0, "kubernetes-root", "DIR", &a->kubernetes_root,
	               "read proc/ and var/log/ below DIR (a DaemonSet mounting the host's at "
	               "/host); implies --kubernetes"),
	    OPT_INT(0, "processes", "N", &a->processes, 0, EXPORTER_PROC_MAX,
	            "top N processes per GPU by memory (default 5, 0..32)",
	            .why = N_("invalid value '%s'"), .hint = N_("a number from 0 to 32")),
	    OPT_INT(0, "max-connections", "N", &max_conn, 1, 100000, "connection cap (default 256)",
	            .why = N_("invalid value '%s'"), .hint = N_("a number from 1 to 100000")),
	    OPT_INT(0, "request-timeout", "SECONDS", &timeout_s, 1, 3600,
	            "a connection must complete each request within this (default 10)",
	            .why = N_("invalid value '%s'"), .hint = N_("whole seconds from 1 to 3600")),
	    OPT_END};
	const opt_cmd oc = {
	    .name = "exporter",
	    .usage = "exporter [--listen ADDR:PORT] [--interval DURATION]\n"
	             "         [--hostname-label Hostname|hostname|none] [--collectors FILE]\n"
	             "         [--processes N] [--max-connections N] [--request-timeout SECONDS]",
	    .about = N_("Serve Prometheus metrics: dcgm-exporter's DCGM_FI_* series (same names,\n"
	                "labels and help texts) without DCGM, plus gpuwhy_* series for the host,\n"
	                "processes, throttle reasons, PCIe links and live findings."),
	    .opts = opts,
	    .more =
	        N_("Endpoints: GET /metrics (text format 0.0.4, gzip when asked), GET /health,\n"
	           "GET / (index). Stop with Ctrl-C or SIGTERM."),
	    .ctx = a};
	int first, rc = opt_parse(&oc, argc, argv, &first);
	if (rc)
		return rc;
	a->host_label = (exporter_hostlabel)host_label;
	if (counter_type >= 0)
		a->counter_type = counter_type ? EXPORTER_UNTYPED : EXPORTER_COUNTER;
	if (kube && !a->kubernetes_root)
		a->kubernetes_root = "";
	a->server.max_connections = (unsigned)max_conn;
	a->server.timeout_s = (unsigned)timeout_s;
	return 0;
}

/* Read and parse --collectors; unknown fields are a warning, not a failure. */
static int load_collectors(const char *path, exporter_collectors *c)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return gw_error(GW_EXIT_ENV, path, N_("check the --collectors path"),
		                "cannot open: %s", strerror(errno));
	char *text = malloc(COLLECTORS_MAX_BYTES + 1);
	if (!text) {
		fclose(f);
		return gw_error(GW_EXIT_ENV, path, NULL, "out of memory");
	}
	size_t len = fread(text, 1, COLLECTORS_MAX_BYTES + 1, f);
	bool bad = ferror(f);
	fclose(f);
	if (bad) {
		free(text);
		return gw_error(GW_EXIT_ENV, path, NULL, "read error");
	}
	if (len > COLLECTORS_MAX_BYTES) {
		free(text);
		return gw_error(GW_EXIT_USAGE, path, N_("a counters CSV is a few KB"),
		                "larger than %d bytes", COLLECTORS_MAX_BYTES);
	}
	char unknown[1024];
	gw_fail err = {0};
	int rc = exporter_collectors_parse(text, len, c, unknown, sizeof unknown, &err);
	free(text);
	if (rc) {
		err.why_text[255] = '\0'; /* as this line has always cut it */
		return gw_error(GW_EXIT_USAGE, path, N_("rows are 'FIELD, prom_type, help'"), "%s",
		                err.why_text);
	}
	if (unknown[0])
		gw_error(0, path, N_("they are left out of /metrics"),
		         "warning: fields gpuwhy cannot supply: %s", unknown);
	if (c->n == 0)
		gw_error(0, path, N_("no DCGM_FI_* series will be served"),
		         "warning: no field of this file is one gpuwhy supplies");
	return 0;
}

static void hostname_value(char *out, size_t len)
{
	const char *node = getenv("NODE_NAME"); /* as dcgm-exporter: Kubernetes' node name */
	if (node && *node) {
		snprintf(out, len, "%s", node);
		return;
	}
	if (gethostname(out, len) != 0)
		out[0] = '\0';
	out[len - 1] = '\0';
}

/* Enough descriptors for the connection cap (the default soft limit is 1024). */
static void raise_fd_limit(unsigned max_connections)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return;
	rlim_t want = (rlim_t)max_connections + 64;
	if (rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

/*
 * Block until SIGINT or SIGTERM. SIGHUP (a closed terminal, or a service
 * manager's "reload") does not stop the exporter. The options and the
 * --collectors file are read once at start and the series families of a
 * running exporter stay fixed, so it is ignored with one line saying so.
 */
static void wait_for_stop(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	for (;;) {
		int sig = 0;
		if (sigwait(&set, &sig) != 0 || sig != SIGHUP)
			return;
		fprintf(stderr, "gpuwhy exporter: %s\n",
		        _("SIGHUP ignored (options and --collectors are read at start; restart to "
		          "change them)"));
	}
}

static int serve(const exporter_args *a, const exporter_collectors *collectors, const gw_global *g)
{
	gpu_ctx *gpu;
	gw_fail gf;
	gpu_open_opts oo = {.gpus = g->gpus, .failure = &gf};
	int rc = gpu_open(&oo, &gpu);
	if (rc)
		return gw_fail_print(&gf);
	gpu_slow_thread_start(gpu);
	char host[256];
	hostname_value(host, sizeof host);
	exporter_board *board = exporter_board_new();
	exporter_publisher *sampler = NULL;
	exporter_server *server = NULL;
	exporter_publisher_opts so = {
	    .interval_ns = a->interval_ns,
	    .processes = a->processes,
	    .render = {.host_label = a->host_label,
	               .hostname = host,
	               .collectors = collectors,
	               .version = GPUWHY_VERSION},
	    .findings = exporter_diag_findings,
	    .proc_root = "/proc",
	    .kubernetes_root = a->kubernetes_root,
	    .host = true,
	};
	if (!board)
		rc = gw_error(GW_EXIT_ENV, "exporter", NULL, "out of memory");
	if (!rc)
		rc = exporter_publisher_start(gpu, board, &so, &sampler);
	if (!rc)
		rc = exporter_server_start(&a->server, board, &server);
	if (!rc) {
		const exporter_listen_addr *ad = &a->server.addr;
		int ng = gpu_count(gpu);
		fputs("gpuwhy exporter: ", stderr);
		fprintf(stderr,
		        P_("serving http://%s%s%s:%d/metrics (%d GPU, every %.3gs)",
		           "serving http://%s%s%s:%d/metrics (%d GPUs, every %.3gs)", ng),
		        ad->ipv6 ? "[" : "", ad->host, ad->ipv6 ? "]" : "",
		        exporter_server_port(server), ng, (double)a->interval_ns / 1e9);
		fputc('\n', stderr);
		wait_for_stop();
	}
	exporter_server_stop(server);
	exporter_publisher_stop(sampler);
	exporter_board_free(board);
	gpu_close(gpu);
	return rc;
}

int cmd_exporter(int argc, char **argv, const gw_global *g)
{
	exporter_args a = {.interval_ns = 1000000000LL,
	                   .host_label = EXPORTER_HOSTLABEL_UPPER,
	                   .processes = 5,
	                   .counter_type = -1};
	exporter_server_opts_default(&a.server);
	int rc = parse_args(argc, argv, &a);
	if (rc)
		return rc < 0 ? GW_EXIT_OK : rc;
	a.server.stale_ns = 3 * a.interval_ns > 10000000000LL ? 3 * a.interval_ns : 10000000000LL;
	a.server.version = GPUWHY_VERSION;
	exporter_collectors collectors;
	if (a.collectors_path) {
		if ((rc = load_collectors(a.collectors_path, &collectors)))
			return rc;
	} else {
		exporter_collectors_default(&collectors);
	}
	if (a.counter_type >= 0)
		exporter_collectors_counter_type(&collectors, (exporter_prom_type)a.counter_type);
	/* Every thread started from here on inherits the mask: only sigwait sees them. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	raise_fd_limit(a.server.max_connections);
	rc = serve(&a, &collectors, g);
	exporter_collectors_free(&collectors);
	return rc;
}
