/* exporter.c - `gpuwhy exporter`: Prometheus /metrics, a dcgm-exporter drop-in plus diagnosis. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "exporter/exporter.h"
#include "util/err.h"
#include "util/parse.h"

#define COLLECTORS_MAX_BYTES (1 << 20)

typedef struct {
	exp_server_opts server;
	int64_t interval_ns;
	exp_hostlabel host_label;
	const char *collectors_path;
	int processes;
	int counter_type; /* -1: as the defaults or the CSV say, else exp_prom_type */
	const char *kubernetes_root; /* NULL: no pod labels */
} exporter_args;

static void usage(FILE *out)
{
	/* clang-format off */
	fputs("usage: gpuwhy exporter [--listen ADDR:PORT] [--interval DURATION]\n"
	      "         [--hostname-label Hostname|hostname|none] [--collectors FILE]\n"
	      "         [--processes N] [--max-connections N] [--request-timeout SECONDS]\n"
	      "\n"
	      "Serve Prometheus metrics: dcgm-exporter's DCGM_FI_* series (same names,\n"
	      "labels and help texts) without DCGM, plus gpuwhy_* series for the host,\n"
	      "processes, throttle reasons, PCIe links and live findings.\n"
	      "\n"
	      "  --listen ADDR:PORT     where to listen (default 127.0.0.1:9400: loopback\n"
	      "                         only; 0.0.0.0:9400 exposes it on every interface;\n"
	      "                         port 0 takes any free port)\n"
	      "  --interval DURATION    sampling period (default 1s, at least 100ms); a\n"
	      "                         scrape serves the latest sample, never waits\n"
	      "  --hostname-label NAME  Hostname (default, released dcgm-exporters),\n"
	      "                         hostname (newer dcgm-exporter) or none; the value\n"
	      "                         is $NODE_NAME, else the host name\n"
	      "  --collectors FILE      a dcgm-exporter counters CSV (FIELD, prom_type,\n"
	      "                         help): export only the DCGM fields it lists\n"
	      "  --counter-type TYPE    counter or untyped: the type of the counter fields\n"
	      "                         (energy, PCIe replays, NVLink, remapped rows, ECC);\n"
	      "                         default untyped unless the CSV says counter\n"
	      "  --kubernetes           pod, namespace and container labels on the series\n"
	      "                         of GPUs and processes in Kubernetes pods (from\n"
	      "                         /proc/PID/cgroup and /var/log/containers)\n"
	      "  --kubernetes-root DIR  read proc/ and var/log/ below DIR (a DaemonSet\n"
	      "                         mounting the host's at /host); implies --kubernetes\n"
	      "  --processes N          top N processes per GPU by memory (default 5, 0..32)\n"
	      "  --max-connections N    connection cap (default 256)\n"
	      "  --request-timeout SECONDS\n"
	      "                         a connection must complete each request within\n"
	      "                         this (default 10)\n"
	      "\n"
	      "Endpoints: GET /metrics (text format 0.0.4, gzip when asked), GET /health,\n"
	      "GET / (index). Stop with Ctrl-C or SIGTERM.\n",
	      out);
	/* clang-format on */
}

static int parse_args(int argc, char **argv, exporter_args *a)
{
	static const struct option opts[] = {{"listen", required_argument, NULL, 'l'},
	                                     {"interval", required_argument, NULL, 'i'},
	                                     {"hostname-label", required_argument, NULL, 'H'},
	                                     {"collectors", required_argument, NULL, 'f'},
	                                     {"processes", required_argument, NULL, 'p'},
	                                     {"counter-type", required_argument, NULL, 'c'},
	                                     {"kubernetes", no_argument, NULL, 'k'},
	                                     {"kubernetes-root", required_argument, NULL, 'K'},
	                                     {"max-connections", required_argument, NULL, 'm'},
	                                     {"request-timeout", required_argument, NULL, 't'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	char err[160];
	long long n;
	int ch;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			if (exp_parse_listen(optarg, &a->server.addr, err, sizeof err))
				return gw_error(GW_EXIT_USAGE, "--listen",
				                "e.g. --listen 127.0.0.1:9400 or 0.0.0.0:9400",
				                "'%s': %s", optarg, err);
			break;
		case 'i':
			if (!gw_parse_duration_ns(optarg, 1000000000LL, &a->interval_ns) ||
			    a->interval_ns < 100000000LL || a->interval_ns > 3600000000000LL)
				return gw_error(GW_EXIT_USAGE, "--interval",
				                "from 100ms to 1h, e.g. --interval 1s",
				                "invalid interval '%s'", optarg);
			break;
		case 'H':
			if (!strcmp(optarg, "Hostname"))
				a->host_label = EXP_HOSTLABEL_UPPER;
			else if (!strcmp(optarg, "hostname"))
				a->host_label = EXP_HOSTLABEL_LOWER;
			else if (!strcmp(optarg, "none"))
				a->host_label = EXP_HOSTLABEL_NONE;
			else
				return gw_error(GW_EXIT_USAGE, "--hostname-label",
				                "use Hostname, hostname or none",
				                "unknown value '%s'", optarg);
			break;
		case 'f':
			a->collectors_path = optarg;
			break;
		case 'k':
			if (!a->kubernetes_root)
				a->kubernetes_root = "";
			break;
		case 'K': a->kubernetes_root = optarg; break;
		case 'c':
			if (!strcmp(optarg, "counter"))
				a->counter_type = EXP_COUNTER;
			else if (!strcmp(optarg, "untyped"))
				a->counter_type = EXP_UNTYPED;
			else
				return gw_error(GW_EXIT_USAGE, "--counter-type", "counter or untyped",
						"unknown type '%s'", optarg);
			break;
		case 'p':
			if (!gw_parse_int(optarg, 0, EXP_PROC_MAX, &n))
				return gw_error(GW_EXIT_USAGE, "--processes",
				                "a number from 0 to 32", "invalid value '%s'",
				                optarg);
			a->processes = (int)n;
			break;
		case 'm':
			if (!gw_parse_int(optarg, 1, 100000, &n))
				return gw_error(GW_EXIT_USAGE, "--max-connections",
				                "a number from 1 to 100000", "invalid value '%s'",
				                optarg);
			a->server.max_connections = (unsigned)n;
			break;
		case 't':
			if (!gw_parse_int(optarg, 1, 3600, &n))
				return gw_error(GW_EXIT_USAGE, "--request-timeout",
				                "whole seconds from 1 to 3600",
				                "invalid value '%s'", optarg);
			a->server.timeout_s = (unsigned)n;
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
		return gw_error(GW_EXIT_USAGE, argv[optind], "see gpuwhy exporter --help",
		                "unexpected argument");
	return 0;
}

/* Read and parse --collectors; unknown fields are a warning, not a failure. */
static int load_collectors(const char *path, exp_collectors *c)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return gw_error(GW_EXIT_ENV, path, "check the --collectors path", "cannot open: %s",
		                strerror(errno));
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
		return gw_error(GW_EXIT_USAGE, path, "a counters CSV is a few KB",
		                "larger than %d bytes", COLLECTORS_MAX_BYTES);
	}
	char unknown[1024], err[256];
	int rc = exp_collectors_parse(text, len, c, unknown, sizeof unknown, err, sizeof err);
	free(text);
	if (rc)
		return gw_error(GW_EXIT_USAGE, path, "rows are 'FIELD, prom_type, help'", "%s",
		                err);
	if (unknown[0])
		gw_error(0, path, "they are left out of /metrics",
		         "warning: fields gpuwhy cannot supply: %s", unknown);
	if (c->n == 0)
		gw_error(0, path, "no DCGM_FI_* series will be served",
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
		fprintf(stderr, "gpuwhy exporter: SIGHUP ignored (options and --collectors "
		                "are read at start; restart to change them)\n");
	}
}

static int serve(const exporter_args *a, const exp_collectors *collectors, const gw_global *g)
{
	gpu_ctx *gpu;
	gpu_open_opts oo = {.gpus = g->gpus};
	int rc = gpu_open(&oo, &gpu);
	if (rc)
		return rc;
	gpu_slow_thread_start(gpu);
	char host[256];
	hostname_value(host, sizeof host);
	exp_board *board = exp_board_new();
	exp_sampler *sampler = NULL;
	exp_server *server = NULL;
	exp_sampler_opts so = {
	    .interval_ns = a->interval_ns,
	    .processes = a->processes,
	    .render = {.host_label = a->host_label,
	               .hostname = host,
	               .collectors = collectors,
	               .version = GPUWHY_VERSION},
	    .findings = exp_diag_findings,
	    .proc_root = "/proc",
	    .kubernetes_root = a->kubernetes_root,
	    .host = true,
	};
	if (!board)
		rc = gw_error(GW_EXIT_ENV, "exporter", NULL, "out of memory");
	if (!rc)
		rc = exp_sampler_start(gpu, board, &so, &sampler);
	if (!rc)
		rc = exp_server_start(&a->server, board, &server);
	if (!rc) {
		const exp_listen_addr *ad = &a->server.addr;
		fprintf(
		    stderr,
		    "gpuwhy exporter: serving http://%s%s%s:%d/metrics (%d GPU%s, every %.3gs)\n",
		    ad->ipv6 ? "[" : "", ad->host, ad->ipv6 ? "]" : "", exp_server_port(server),
		    gpu_count(gpu), gpu_count(gpu) == 1 ? "" : "s", (double)a->interval_ns / 1e9);
		wait_for_stop();
	}
	exp_server_stop(server);
	exp_sampler_stop(sampler);
	exp_board_free(board);
	gpu_close(gpu);
	return rc;
}

int cmd_exporter(int argc, char **argv, const gw_global *g)
{
	exporter_args a = {
	    .interval_ns = 1000000000LL, .host_label = EXP_HOSTLABEL_UPPER, .processes = 5,
	    .counter_type = -1};
	exp_server_opts_default(&a.server);
	int rc = parse_args(argc, argv, &a);
	if (rc)
		return rc < 0 ? GW_EXIT_OK : rc;
	a.server.stale_ns = 3 * a.interval_ns > 10000000000LL ? 3 * a.interval_ns : 10000000000LL;
	a.server.version = GPUWHY_VERSION;
	exp_collectors collectors;
	if (a.collectors_path) {
		if ((rc = load_collectors(a.collectors_path, &collectors)))
			return rc;
	} else {
		exp_collectors_default(&collectors);
	}
	if (a.counter_type >= 0)
		exp_collectors_counter_type(&collectors, (exp_prom_type)a.counter_type);
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
	exp_collectors_free(&collectors);
	return rc;
}
