/*
 * gate.c - `gpuwhy gate`: a reverse proxy in front of an inference server
 * that limits, queues fairly, batches and watches the GPU (src/gate/).
 *
 * Settings come from the defaults, then --config FILE, then the flags, so
 * a flag always wins; SIGHUP repeats the same steps and applies the result
 * (limits, keys, batching), SIGTERM drains.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "exporter/exporter.h"
#include "gate/gate_int.h"
#include "util/err.h"
#include "util/parse.h"
#include "util/timeutil.h"

static void gate_usage(FILE *out)
{
	fputs("usage: gpuwhy gate --upstream URL[@GPU] [OPTIONS]\n"
	      "\n"
	      "A reverse proxy for a GPU inference server (ComfyUI, Ollama, vLLM, Triton,\n"
	      "any HTTP API): size limits, per-user concurrency, a fair queue, timeouts,\n"
	      "GPU-aware admission and routing, dynamic batching, Prometheus metrics.\n"
	      "\n"
	      "where\n"
	      "  --upstream URL[@GPU]   the server, e.g. http://127.0.0.1:11434@0 (repeat for one\n"
	      "                         server per GPU; @none: do not watch its GPU)\n"
	      "  --listen ADDR:PORT     where clients connect (default 127.0.0.1:8080)\n"
	      "  --metrics-listen A:P   Prometheus /metrics (default 127.0.0.1:9410, off: none)\n"
	      "  --allow-remote         permit a non-loopback --listen ...\n"
	      "  --allow NET            ... for clients in NET (10.0.0.0/8; repeatable)\n"
	      "  --config FILE          JSON settings (see the README); flags override it\n"
	      "limits\n"
	      "  --max-body SIZE        largest request body (default 16M; 413 beyond)\n"
	      "  --max-header SIZE      largest request headers (default 16K; 431 beyond)\n"
	      "  --max-inflight N       requests at all upstreams together (default 64)\n"
	      "  --max-inflight-per-upstream N   (default 16)\n"
	      "  --user-concurrency N   in flight per user (default 4)\n"
	      "  --user-queue N         waiting per user (default 64; 429 beyond)\n"
	      "  --queue-size N         waiting in all (default 1024; 503 beyond)\n"
	      "  --queue-timeout DUR    longest wait in the queue (default 30s; 503)\n"
	      "  --upstream-timeout DUR longest upstream answer (default 300s; 504)\n"
	      "  --client-timeout DUR   a client must send its request within (default 30s)\n"
	      "users\n"
	      "  --keys FILE            API keys with names and per-user limits\n"
	      "  --require-keys         refuse requests without a known key (401)\n"
	      "  --user-header NAME     another header carrying the key\n"
	      "GPU\n"
	      "  --min-free-mib N       hold new work while an upstream's GPU has less free\n"
	      "  --no-hold-throttled    keep sending to thermally throttled GPUs\n"
	      "  --gpu-interval DUR     how often the GPUs are read (default 500ms)\n"
	      "batching\n"
	      "  --goal latency|throughput   batching defaults (short waits, small batches, or\n"
	      "                         the opposite; default latency)\n"
	      "  --batch PATH           batch POST PATH (list at /input, answer list at /data)\n"
	      "  --max-batch N          inputs per batch\n"
	      "  --preferred LIST       preferred batch sizes, e.g. 8,16\n"
	      "  --batch-delay DUR      longest wait for a batch to fill (e.g. 5ms)\n"
	      "other\n"
	      "  --access-log FILE      one JSON line per request (default stderr; - stdout; off)\n"
	      "  --drain-timeout DUR    on SIGTERM, wait this long for requests (default 30s)\n",
	      out);
}

enum {
	O_UPSTREAM = 256,
	O_LISTEN,
	O_METRICS,
	O_ALLOW_REMOTE,
	O_ALLOW,
	O_CONFIG,
	O_MAX_BODY,
	O_MAX_HEADER,
	O_MAX_INFLIGHT,
	O_MAX_INFLIGHT_UP,
	O_USER_CONC,
	O_USER_QUEUE,
	O_QUEUE_SIZE,
	O_QUEUE_TIMEOUT,
	O_UP_TIMEOUT,
	O_CLIENT_TIMEOUT,
	O_KEYS,
	O_REQUIRE_KEYS,
	O_USER_HEADER,
	O_MIN_FREE,
	O_NO_HOLD_THROTTLED,
	O_GPU_INTERVAL,
	O_GOAL,
	O_BATCH,
	O_MAX_BATCH,
	O_PREFERRED,
	O_BATCH_DELAY,
	O_ACCESS_LOG,
	O_DRAIN,
	O_HELP,
};

static const struct option gate_opts[] = {
    {"upstream", required_argument, NULL, O_UPSTREAM},
    {"listen", required_argument, NULL, O_LISTEN},
    {"metrics-listen", required_argument, NULL, O_METRICS},
    {"allow-remote", no_argument, NULL, O_ALLOW_REMOTE},
    {"allow", required_argument, NULL, O_ALLOW},
    {"config", required_argument, NULL, O_CONFIG},
    {"max-body", required_argument, NULL, O_MAX_BODY},
    {"max-header", required_argument, NULL, O_MAX_HEADER},
    {"max-inflight", required_argument, NULL, O_MAX_INFLIGHT},
    {"max-inflight-per-upstream", required_argument, NULL, O_MAX_INFLIGHT_UP},
    {"user-concurrency", required_argument, NULL, O_USER_CONC},
    {"user-queue", required_argument, NULL, O_USER_QUEUE},
    {"queue-size", required_argument, NULL, O_QUEUE_SIZE},
    {"queue-timeout", required_argument, NULL, O_QUEUE_TIMEOUT},
    {"upstream-timeout", required_argument, NULL, O_UP_TIMEOUT},
    {"client-timeout", required_argument, NULL, O_CLIENT_TIMEOUT},
    {"keys", required_argument, NULL, O_KEYS},
    {"require-keys", no_argument, NULL, O_REQUIRE_KEYS},
    {"user-header", required_argument, NULL, O_USER_HEADER},
    {"min-free-mib", required_argument, NULL, O_MIN_FREE},
    {"no-hold-throttled", no_argument, NULL, O_NO_HOLD_THROTTLED},
    {"gpu-interval", required_argument, NULL, O_GPU_INTERVAL},
    {"goal", required_argument, NULL, O_GOAL},
    {"batch", required_argument, NULL, O_BATCH},
    {"max-batch", required_argument, NULL, O_MAX_BATCH},
    {"preferred", required_argument, NULL, O_PREFERRED},
    {"batch-delay", required_argument, NULL, O_BATCH_DELAY},
    {"access-log", required_argument, NULL, O_ACCESS_LOG},
    {"drain-timeout", required_argument, NULL, O_DRAIN},
    {"help", no_argument, NULL, O_HELP},
    {NULL, 0, NULL, 0},
};

/* ------------------------------------------------------------- settings */

static int bad(const char *opt, const char *val, const char *why)
{
	char what[300];
	snprintf(what, sizeof what, "%s %s", opt, val);
	return gw_error(GW_EXIT_USAGE, what, "see gpuwhy gate --help", "%s", why);
}

static int num(const char *opt, const char *v, long min, long max, long *out)
{
	long long x;
	if (!gw_parse_int(v, min, max, &x)) {
		char why[100];
		snprintf(why, sizeof why, "not a whole number from %ld to %ld", min, max);
		return bad(opt, v, why);
	}
	*out = (long)x;
	return 0;
}

static int size_opt(const char *opt, const char *v, long *out)
{
	uint64_t b;
	if (!gw_parse_size_bytes(v, &b) || b == 0 || b > (1ULL << 40))
		return bad(opt, v, "not a size such as 16M, 64K or 1048576");
	*out = (long)b;
	return 0;
}

static int dur_ms(const char *opt, const char *v, long *out)
{
	int64_t ns;
	if (!gw_parse_duration_ns(v, 1000000000LL, &ns) || ns <= 0)
		return bad(opt, v, "not a duration such as 500ms, 30s or 5m");
	*out = (long)((ns + 999999) / 1000000);
	return 0;
}

static int preferred_opt(const char *v, gate_batch_rule *r)
{
	r->npreferred = 0;
	char tmp[256];
	snprintf(tmp, sizeof tmp, "%s", v);
	for (char *save, *t = strtok_r(tmp, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		long long x;
		if (r->npreferred == GATE_MAX_PREFERRED || !gw_parse_int(t, 1, 100000, &x))
			return bad("--preferred", v,
			           "not a list of up to 8 batch sizes such as 8,16");
		r->preferred[r->npreferred++] = (long)x;
	}
	return 0;
}

/* The flags over cfg (after defaults and the config file). */
static int apply_flags(int argc, char **argv, gate_config *c)
{
	optind = 0;
	int o, nup_flags = 0, nallow_flags = 0, rc = 0;
	char err[400];
	/* --goal first: it sets the defaults the batching flags then adjust
	 * (quietly: the main pass below reports unknown options once). */
	opterr = 0;
	while ((o = getopt_long(argc, argv, "", gate_opts, NULL)) != -1)
		if (o == O_GOAL) {
			if (strcmp(optarg, "latency") && strcmp(optarg, "throughput"))
				return bad("--goal", optarg, "must be latency or throughput");
			gate_goal_defaults(c, !strcmp(optarg, "throughput") ? GATE_GOAL_THROUGHPUT
			                                                    : GATE_GOAL_LATENCY);
		}
	opterr = 1;
	optind = 0;
	while (!rc && (o = getopt_long(argc, argv, "", gate_opts, NULL)) != -1) {
		gate_batch_rule *last = c->nrules ? &c->rule[c->nrules - 1] : NULL;
		switch (o) {
		case O_UPSTREAM:
			if (nup_flags == 0)
				c->nup = 0; /* flags replace the file's list */
			if (c->nup == GATE_MAX_UPSTREAMS)
				return bad("--upstream", optarg, "too many upstreams (16 at most)");
			if (gate_parse_upstream(optarg, &c->up[c->nup], err, sizeof err))
				return bad("--upstream", optarg, err);
			c->nup++;
			nup_flags++;
			break;
		case O_LISTEN:
			snprintf(c->listen, sizeof c->listen, "%s", optarg);
			break;
		case O_METRICS:
			snprintf(c->metrics_listen, sizeof c->metrics_listen, "%s",
			         strcmp(optarg, "off") ? optarg : "");
			break;
		case O_ALLOW_REMOTE:
			c->allow_remote = true;
			break;
		case O_ALLOW:
			if (nallow_flags++ == 0)
				c->nallow = 0;
			if (c->nallow == GATE_MAX_ALLOW)
				return bad("--allow", optarg, "too many networks (16 at most)");
			if (gate_parse_net(optarg, &c->allow[c->nallow], err, sizeof err))
				return bad("--allow", optarg, err);
			c->nallow++;
			break;
		case O_MAX_BODY:
			rc = size_opt("--max-body", optarg, &c->max_body_bytes);
			break;
		case O_MAX_HEADER:
			rc = size_opt("--max-header", optarg, &c->max_header_bytes);
			if (!rc && c->max_header_bytes < 256)
				rc = bad("--max-header", optarg, "must be at least 256 bytes");
			break;
		case O_MAX_INFLIGHT:
			rc = num("--max-inflight", optarg, 1, 100000, &c->max_inflight);
			break;
		case O_MAX_INFLIGHT_UP:
			rc = num("--max-inflight-per-upstream", optarg, 1, 100000,
			         &c->max_inflight_per_up);
			break;
		case O_USER_CONC:
			rc = num("--user-concurrency", optarg, 1, 100000, &c->user_concurrency);
			break;
		case O_USER_QUEUE:
			rc = num("--user-queue", optarg, 0, 1000000, &c->user_queue);
			break;
		case O_QUEUE_SIZE:
			rc = num("--queue-size", optarg, 0, 1000000, &c->queue_size);
			break;
		case O_QUEUE_TIMEOUT:
			rc = dur_ms("--queue-timeout", optarg, &c->queue_timeout_ms);
			break;
		case O_UP_TIMEOUT:
			rc = dur_ms("--upstream-timeout", optarg, &c->upstream_timeout_ms);
			break;
		case O_CLIENT_TIMEOUT:
			rc = dur_ms("--client-timeout", optarg, &c->client_timeout_ms);
			break;
		case O_DRAIN:
			rc = dur_ms("--drain-timeout", optarg, &c->drain_timeout_ms);
			break;
		case O_GPU_INTERVAL:
			rc = dur_ms("--gpu-interval", optarg, &c->gpu_interval_ms);
			if (!rc && c->gpu_interval_ms < 50)
				rc = bad("--gpu-interval", optarg, "must be at least 50ms");
			break;
		case O_KEYS:
			snprintf(c->keys_file, sizeof c->keys_file, "%s", optarg);
			if (gate_keys_load(c, optarg, err, sizeof err))
				return gw_error(GW_EXIT_USAGE, "--keys",
				                "see the README for its format", "%s", err);
			break;
		case O_REQUIRE_KEYS:
			c->require_keys = true;
			break;
		case O_USER_HEADER:
			snprintf(c->user_header, sizeof c->user_header, "%s", optarg);
			break;
		case O_MIN_FREE:
			rc = num("--min-free-mib", optarg, 0, 1L << 30, &c->min_free_mib);
			break;
		case O_NO_HOLD_THROTTLED:
			c->hold_throttled = false;
			break;
		case O_BATCH:
			if (optarg[0] != '/')
				return bad("--batch", optarg, "a path starting with /");
			if (c->nrules == GATE_MAX_RULES)
				return bad("--batch", optarg,
				           "too many batched endpoints (8 at most)");
			gate_rule_defaults(&c->rule[c->nrules++], c->goal, optarg);
			break;
		case O_MAX_BATCH:
		case O_PREFERRED:
		case O_BATCH_DELAY:
			if (!last)
				return gw_error(GW_EXIT_USAGE,
				                o == O_MAX_BATCH   ? "--max-batch"
				                : o == O_PREFERRED ? "--preferred"
				                                   : "--batch-delay",
				                "put it after --batch PATH",
				                "names no batched endpoint");
			if (o == O_MAX_BATCH) {
				rc = num("--max-batch", optarg, 1, 100000, &last->max_batch_size);
				int n = 0;
				for (int i = 0; i < last->npreferred; i++)
					if (last->preferred[i] <= last->max_batch_size)
						last->preferred[n++] = last->preferred[i];
				last->npreferred = n;
			} else if (o == O_PREFERRED) {
				rc = preferred_opt(optarg, last);
			} else {
				int64_t ns;
				if (!gw_parse_duration_ns(optarg, 1000LL, &ns) || ns < 0)
					rc = bad("--batch-delay", optarg,
					         "not a duration such as 5ms");
				else
					last->max_queue_delay_us = (long)(ns / 1000);
			}
			break;
		case O_ACCESS_LOG:
			snprintf(c->access_log, sizeof c->access_log, "%s", optarg);
			break;
		case O_CONFIG:
		case O_GOAL:
			break;
		case O_HELP:
			return -1;
		default:
			return GW_EXIT_USAGE;
		}
	}
	if (!rc && optind < argc)
		return gw_error(GW_EXIT_USAGE, argv[optind], "see gpuwhy gate --help",
		                "unexpected argument");
	return rc;
}

/* Defaults, then --config, then the flags. Returns 0, -1 (--help) or GW_EXIT_*. */
static int build_config(int argc, char **argv, gate_config *c)
{
	gate_config_defaults(c);
	snprintf(c->metrics_listen, sizeof c->metrics_listen, "127.0.0.1:9410");
	const char *file = NULL;
	optind = 0;
	opterr = 0;
	int o;
	while ((o = getopt_long(argc, argv, "", gate_opts, NULL)) != -1)
		if (o == O_CONFIG)
			file = optarg;
	opterr = 1;
	char err[700];
	if (file && gate_config_load(c, file, err, sizeof err))
		return gw_error(GW_EXIT_USAGE, "--config", "see the README's gate section", "%s",
		                err);
	int rc = apply_flags(argc, argv, c);
	if (rc)
		return rc;
	if (gate_config_check(c, err, sizeof err))
		return gw_error(GW_EXIT_USAGE, "gate", "see gpuwhy gate --help", "%s", err);
	return 0;
}

/* Loopback unless --allow-remote with an allow-list: never exposed by accident. */
static int check_exposure(const gate_config *c, const char *opt, const char *addr)
{
	exp_listen_addr a;
	char err[200];
	if (exp_parse_listen(addr, &a, err, sizeof err))
		return gw_error(GW_EXIT_USAGE, addr, "use ADDRESS:PORT such as 127.0.0.1:8080",
		                "%s", err);
	if (gate_is_loopback(a.host))
		return 0;
	if (!c->allow_remote)
		return gw_error(GW_EXIT_USAGE, addr,
		                "add --allow-remote and --allow NETWORK to expose the gate",
		                "%s is not a loopback address", opt);
	if (c->nallow == 0)
		return gw_error(GW_EXIT_USAGE, "--allow-remote",
		                "name the client networks with --allow NET (e.g. 10.0.0.0/8)",
		                "needs an allow-list");
	return 0;
}

/* ---------------------------------------------------------------- running */

static int open_log(gate_srv *g)
{
	const char *p = g->cfg.access_log;
	if (!strcmp(p, "off"))
		g->log = NULL;
	else if (!*p)
		g->log = stderr;
	else if (!strcmp(p, "-"))
		g->log = stdout;
	else {
		g->log = fopen(p, "a");
		if (!g->log)
			return gw_error(GW_EXIT_ENV, p, "check the directory and permissions",
			                "cannot open the access log: %s", strerror(errno));
		g->log_close = true;
	}
	return 0;
}

static void reload(gate_srv *g, int argc, char **argv)
{
	gate_config nc;
	int rc = build_config(argc, argv, &nc);
	if (rc) {
		fprintf(stderr, "gpuwhy gate: config not reloaded (the message above says why); "
		                "the previous settings stay\n");
		gate_config_free(&nc);
		return;
	}
	pthread_mutex_lock(&g->mu);
	bool moved = strcmp(nc.listen, g->cfg.listen) || nc.nup != g->nup ||
	             strcmp(nc.metrics_listen, g->cfg.metrics_listen);
	for (int i = 0; !moved && i < nc.nup; i++)
		moved = strcmp(nc.up[i].url, g->up[i].cfg.url) != 0;
	/* Addresses and upstreams stay as started; everything else changes now. */
	snprintf(nc.listen, sizeof nc.listen, "%s", g->cfg.listen);
	snprintf(nc.metrics_listen, sizeof nc.metrics_listen, "%s", g->cfg.metrics_listen);
	nc.nup = g->cfg.nup;
	memcpy(nc.up, g->cfg.up, sizeof nc.up);
	for (int i = 0; i < g->nup; i++)
		if (i < nc.nup)
			g->up[i].cfg.max_inflight = nc.up[i].max_inflight;
	gate_config_free(&g->cfg);
	g->cfg = nc;
	gate_route_refresh(g);
	pthread_mutex_unlock(&g->mu);
	gate_dispatch_wake(g);
	fprintf(stderr, "gpuwhy gate: config reloaded%s\n",
	        moved ? " (listen addresses and upstreams change only on restart)" : "");
}

static bool idle(gate_srv *g)
{
	pthread_mutex_lock(&g->mu);
	bool done = g->inflight_xfers == 0 && g->q.total == 0;
	pthread_mutex_unlock(&g->mu);
	return done;
}

static void drain(gate_srv *g)
{
	pthread_mutex_lock(&g->mu);
	g->draining = true;
	int64_t deadline = gw_mono_ns() + g->cfg.drain_timeout_ms * 1000000LL;
	pthread_mutex_unlock(&g->mu);
	gate_server_quiesce(g);
	fprintf(stderr, "gpuwhy gate: draining (up to %ld ms)\n", g->cfg.drain_timeout_ms);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	struct timespec tick = {0, 50000000L};
	while (!idle(g) && gw_mono_ns() < deadline)
		if (sigtimedwait(&set, NULL, &tick) > 0)
			break; /* a second signal: stop waiting */
	if (!idle(g)) {
		pthread_mutex_lock(&g->mu);
		g->abort_all = true;
		pthread_mutex_unlock(&g->mu);
		gate_dispatch_wake(g);
		for (int i = 0; i < 40 && !idle(g); i++)
			gw_sleep_ns(25000000LL);
	}
	/* Let the last answers leave before the daemon closes connections. */
	gw_sleep_ns(100000000LL);
}

static void print_start(gate_srv *g)
{
	fprintf(stderr, "gpuwhy gate: serving http://%s -> ", g->cfg.listen);
	for (int i = 0; i < g->nup; i++)
		fprintf(stderr, "%s%s%s%s", i ? ", " : "", g->up[i].cfg.url,
		        g->up[i].cfg.gpu_text[0] ? "@" : "", g->up[i].cfg.gpu_text);
	fprintf(stderr, " (port %d)\n", g->port);
	if (g->md)
		fprintf(stderr, "gpuwhy gate: metrics on http://%s/metrics (port %d)\n",
		        g->cfg.metrics_listen, g->metrics_port);
}

static int start_gpus(gate_srv *g, gate_gpuwatch **w)
{
	bool named = false, any = false;
	for (int i = 0; i < g->nup; i++) {
		named |= g->up[i].cfg.ngpu > 0;
		any |= g->up[i].cfg.ngpu != 0;
	}
	if (!any)
		return 0;
	char msg[600];
	if (gate_gpuwatch_start(g, w, msg, sizeof msg) != 0) {
		if (named)
			return gw_error(GW_EXIT_ENV, "--upstream URL@GPU",
			                "drop @GPU to run without GPU awareness",
			                "cannot read the GPUs: %s", msg);
		fprintf(stderr, "gpuwhy gate: GPUs not read (%s); admission ignores the GPU\n",
		        msg);
		return 0;
	}
	for (int i = 0; i < g->nup; i++)
		for (int k = 0; k < g->up[i].cfg.ngpu; k++) {
			bool found = false;
			for (int j = 0; j < g->ngpu; j++)
				found |= g->gpu[j].index == g->up[i].cfg.gpu[k];
			if (!found)
				return gw_error(GW_EXIT_USAGE, g->up[i].cfg.url,
				                "gpuwhy status lists them",
				                "GPU %d is not one of the %d GPUs here",
				                g->up[i].cfg.gpu[k], g->ngpu);
		}
	return 0;
}

static int serve(gate_srv *g, int argc, char **argv)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	/* Threads started from here on leave the signals to this one. */
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	gate_gpuwatch *w = NULL;
	char err[700];
	int rc = start_gpus(g, &w);
	if (rc) {
		gate_gpuwatch_stop(w);
		return rc;
	}
	if (gate_dispatch_start(g) != 0) {
		gate_gpuwatch_stop(w);
		return gw_error(GW_EXIT_ENV, "gate", NULL, "cannot start the dispatcher");
	}
	if (gate_server_start(g, err, sizeof err) != 0) {
		gate_dispatch_stop(g);
		gate_gpuwatch_stop(w);
		return gw_error(GW_EXIT_ENV, "gate", "pick another port with --listen", "%s", err);
	}
	print_start(g);
	for (;;) {
		int sig = 0;
		if (sigwait(&set, &sig) != 0)
			continue;
		if (sig == SIGHUP) {
			reload(g, argc, argv);
			continue;
		}
		break;
	}
	drain(g);
	gate_server_stop(g);
	gate_dispatch_stop(g);
	gate_gpuwatch_stop(w);
	fprintf(stderr, "gpuwhy gate: stopped\n");
	return GW_EXIT_OK;
}

int cmd_gate(int argc, char **argv, const gw_global *gl)
{
	(void)gl;
	gate_srv *g = calloc(1, sizeof *g);
	if (!g)
		return gw_error(GW_EXIT_ENV, "gate", NULL, "out of memory");
	int rc = build_config(argc, argv, &g->cfg);
	if (rc == -1) {
		gate_usage(stdout);
		free(g);
		return GW_EXIT_OK;
	}
	if (!rc)
		rc = check_exposure(&g->cfg, "--listen", g->cfg.listen);
	if (!rc && g->cfg.metrics_listen[0])
		rc = check_exposure(&g->cfg, "--metrics-listen", g->cfg.metrics_listen);
	if (!rc && gate_fairq_init(&g->q) != 0)
		rc = gw_error(GW_EXIT_ENV, "gate", NULL, "out of memory");
	if (!rc)
		rc = open_log(g);
	if (rc) {
		gate_fairq_free(&g->q);
		gate_config_free(&g->cfg);
		free(g);
		return rc;
	}
	pthread_mutex_init(&g->mu, NULL);
	g->nup = g->cfg.nup;
	for (int i = 0; i < g->nup; i++)
		g->up[i].cfg = g->cfg.up[i];
	gate_metrics_init(g);
	gate_route_refresh(g);
	g->t_start = gw_mono_ns();
	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = serve(g, argc, argv);
	curl_global_cleanup();
	if (g->log_close)
		fclose(g->log);
	gate_fairq_free(&g->q);
	gate_config_free(&g->cfg);
	pthread_mutex_destroy(&g->mu);
	free(g);
	return rc;
}
