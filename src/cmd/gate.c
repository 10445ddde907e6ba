/*
 * gate.c - `gpuwhy gate`: a reverse proxy in front of an inference server
 * that limits, queues fairly, batches and watches the GPU (src/gate/).
 *
 * Settings come from the defaults, then --config FILE, then the flags, so
 * a flag always wins; SIGHUP repeats the same steps and applies the result
 * (limits, keys, batching), SIGTERM drains.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "exporter/exporter.h"
#include "gate/gate.h"
#include "util/err.h"
#include "util/parse.h"

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

typedef struct {
	int argc;
	char **argv;
} gate_args;

/* SIGHUP: the same steps as at the start, into out. */
static int reload_config(void *ctx, gate_config *out)
{
	const gate_args *a = ctx;
	return build_config(a->argc, a->argv, out);
}

int cmd_gate(int argc, char **argv, const gw_global *gl)
{
	(void)gl;
	gate_config c;
	int rc = build_config(argc, argv, &c);
	if (rc == -1) {
		gate_usage(stdout);
		return GW_EXIT_OK;
	}
	if (!rc)
		rc = check_exposure(&c, "--listen", c.listen);
	if (!rc && c.metrics_listen[0])
		rc = check_exposure(&c, "--metrics-listen", c.metrics_listen);
	if (rc) {
		gate_config_free(&c);
		return rc;
	}
	gate_args a = {argc, argv};
	return gate_run(&c, reload_config, &a);
}
