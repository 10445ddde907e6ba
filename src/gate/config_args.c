/*
 * config_args.c - the gate's configuration from the command line: the defaults,
 * then --config FILE, then the flags, so a flag always wins; SIGHUP
 * repeats the same steps (gate_config_reload_args). Where the gate may
 * listen is checked here too: never beyond loopback by accident.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exporter/http.h"
#include "gate/config.h"
#include "gate/config_args.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/opt.h"
#include "util/parse.h"

/* ------------------------------------------------------------- settings */

/* The flags are read twice: once for --config and --goal (into a scratch
 * config), then over the defaults, the file and the goal. */
typedef struct {
	gate_config *c;
	int nup, nallow;
	const char *file, *goal;
} gate_pass;

static int bad(const opt_def *o, const char *val, const char *why)
{
	char what[300];
	snprintf(what, sizeof what, "--%s %s", o->name, val);
	return gw_error(GW_EXIT_USAGE, what, N_("see gpuwhy gate --help"), "%s", _(why));
}

/* Whole numbers into a long of gate_config, in [min, max]. */
static int g_num(const opt_def *o, const char *v, void *ctx)
{
	long long x;
	if (!gw_parse_int(v, (long long)o->min, (long long)o->max, &x)) {
		char why[100];
		snprintf(why, sizeof why, _("not a whole number from %.0f to %.0f"), o->min,
		         o->max);
		return bad(o, v, why);
	}
	*(long *)o->target = (long)x;
	return 0;
}

/* Sizes in bytes, at least min. */
static int g_size(const opt_def *o, const char *v, void *ctx)
{
	uint64_t b;
	if (!gw_parse_size_bytes(v, &b) || b == 0 || b > (1ULL << 40))
		return bad(o, v, N_("not a size such as 16M, 64K or 1048576"));
	if ((double)b < o->min)
		return bad(o, v, N_("must be at least 256 bytes"));
	if (o->max > 0 && (double)b > o->max)
		return bad(o, v,
		           N_("must be at most 31K (the HTTP library holds no more headers)"));
	*(long *)o->target = (long)b;
	return 0;
}

/* Durations in ms, rounded up, at least min ms. */
static int g_ms(const opt_def *o, const char *v, void *ctx)
{
	int64_t ns;
	if (!gw_parse_duration_ns(v, 1000000000LL, &ns) || ns <= 0)
		return bad(o, v, N_("not a duration such as 500ms, 30s or 5m"));
	long ms = (long)((ns + 999999) / 1000000);
	if (ms < o->min)
		return bad(o, v, N_("must be at least 50ms"));
	*(long *)o->target = ms;
	return 0;
}

/* Strings into the fixed arrays of gate_config (o->max is the array's size). */
static int g_str(const opt_def *o, const char *v, void *ctx)
{
	bool off = o->min > 0 && !strcmp(v, "off");
	snprintf(o->target, (size_t)o->max, "%s", off ? "" : v);
	return 0;
}

static int g_nohold(const opt_def *o, const char *v, void *ctx)
{
	((gate_pass *)ctx)->c->hold_throttled = false;
	return 0;
}

static int g_upstream(const opt_def *o, const char *v, void *ctx)
{
	gate_pass *x = ctx;
	gate_config *c = x->c;
	gw_fail err = {0};
	if (x->nup++ == 0)
		c->nup = 0; /* flags replace the file's list */
	if (c->nup == GATE_MAX_UPSTREAMS)
		return bad(o, v, N_("too many upstreams (16 at most)"));
	if (gate_parse_upstream(v, &c->up[c->nup], &err))
		return bad(o, v, err.why_text);
	c->nup++;
	return 0;
}

static int g_allow(const opt_def *o, const char *v, void *ctx)
{
	gate_pass *x = ctx;
	gate_config *c = x->c;
	gw_fail err = {0};
	if (x->nallow++ == 0)
		c->nallow = 0;
	if (c->nallow == GATE_MAX_ALLOW)
		return bad(o, v, N_("too many networks (16 at most)"));
	if (gate_parse_net(v, &c->allow[c->nallow], &err))
		return bad(o, v, err.why_text);
	c->nallow++;
	return 0;
}

static int g_keys(const opt_def *o, const char *v, void *ctx)
{
	gate_config *c = ((gate_pass *)ctx)->c;
	gw_fail err = {0};
	snprintf(c->keys_file, sizeof c->keys_file, "%s", v);
	if (gate_keys_load(c, v, &err))
		return gw_error(GW_EXIT_USAGE, "--keys", N_("see docs/gate.md for its format"),
		                "%s: %s", err.what, err.why_text);
	return 0;
}

static int g_goal(const opt_def *o, const char *v, void *ctx)
{
	if (strcmp(v, "latency") && strcmp(v, "throughput"))
		return bad(o, v, N_("must be latency or throughput"));
	((gate_pass *)ctx)->goal = v;
	return 0;
}

static int g_config(const opt_def *o, const char *v, void *ctx)
{
	((gate_pass *)ctx)->file = v;
	return 0;
}

static int g_batch(const opt_def *o, const char *v, void *ctx)
{
	gate_config *c = ((gate_pass *)ctx)->c;
	if (v[0] != '/')
		return bad(o, v, N_("a path starting with /"));
	if (c->nrules == GATE_MAX_RULES)
		return bad(o, v, N_("too many batched endpoints (8 at most)"));
	gate_rule_defaults(&c->rule[c->nrules++], c->goal, v);
	return 0;
}

/* --max-batch, --preferred and --batch-delay adjust the last --batch. */
static int g_rule(const opt_def *o, const char *v, void *ctx)
{
	gate_config *c = ((gate_pass *)ctx)->c;
	gate_batch_rule *r = c->nrules ? &c->rule[c->nrules - 1] : NULL;
	char what[64];
	snprintf(what, sizeof what, "--%s", o->name);
	if (!r)
		return gw_error(GW_EXIT_USAGE, what, N_("put it after --batch PATH"),
		                "names no batched endpoint");
	if (o->name[0] == 'm') {
		opt_def n = *o;
		n.target = &r->max_batch_size;
		int rc = g_num(&n, v, ctx);
		int k = 0;
		for (int i = 0; i < r->npreferred; i++)
			if (r->preferred[i] <= r->max_batch_size)
				r->preferred[k++] = r->preferred[i];
		r->npreferred = k;
		return rc;
	}
	if (o->name[0] == 'p') {
		r->npreferred = 0;
		char tmp[256];
		snprintf(tmp, sizeof tmp, "%s", v);
		for (char *save, *t = strtok_r(tmp, ",", &save); t;
		     t = strtok_r(NULL, ",", &save)) {
			long long x;
			if (r->npreferred == GATE_MAX_PREFERRED || !gw_parse_int(t, 1, 100000, &x))
				return bad(o, v,
				           N_("not a list of up to 8 batch sizes such as 8,16"));
			r->preferred[r->npreferred++] = (long)x;
		}
		return 0;
	}
	int64_t ns;
	if (!gw_parse_duration_ns(v, 1000LL, &ns) || ns < 0)
		return bad(o, v, N_("not a duration such as 5ms"));
	r->max_queue_delay_us = (long)(ns / 1000);
	return 0;
}

#define G_NUM(l, t, lo, hi, h) OPT_CALL(0, l, "N", g_num, h, .target = (t), .min = lo, .max = hi)
#define G_MS(l, t, h) OPT_CALL(0, l, "DUR", g_ms, h, .target = (t))
#define G_STR(l, a, t, h) OPT_CALL(0, l, a, g_str, h, .target = (t), .max = sizeof(t))

static int parse_pass(int argc, char **argv, gate_pass *x)
{
	gate_config *c = x->c;
	const opt_def opts[] = {
	    OPT_GROUP("where"),
	    OPT_CALL(0, "upstream", "URL[@GPU]", g_upstream,
	             "the server, e.g. http://127.0.0.1:11434@0 (repeat for one server per GPU; "
	             "@none: do not watch its GPU)"),
	    G_STR("listen", "ADDR:PORT", c->listen,
	          "where clients connect (default 127.0.0.1:8080)"),
	    OPT_CALL(0, "metrics-listen", "A:P", g_str,
	             "Prometheus /metrics (default 127.0.0.1:9410, off: none)",
	             .target = c->metrics_listen, .max = sizeof c->metrics_listen, .min = 1),
	    OPT_FLAG(0, "allow-remote", &c->allow_remote, "permit a non-loopback --listen ..."),
	    OPT_CALL(0, "allow", "NET", g_allow, "... for clients in NET (10.0.0.0/8; repeatable)"),
	    OPT_CALL(0, "config", "FILE", g_config,
	             "JSON settings (see docs/gate.md); flags override it"),
	    OPT_GROUP("limits"),
	    OPT_CALL(0, "max-body", "SIZE", g_size,
	             "largest request body (default 16M; 413 beyond)",
	             .target = &c->max_body_bytes),
	    OPT_CALL(0, "max-header", "SIZE", g_size,
	             "largest request headers (default 16K, at most 31K; 431 beyond)",
	             .target = &c->max_header_bytes, .min = 256, .max = GATE_MAX_HEADER_BYTES),
	    G_NUM("max-inflight", &c->max_inflight, 1, 100000,
	          "requests at all upstreams together (default 64)"),
	    G_NUM("max-inflight-per-upstream", &c->max_inflight_per_up, 1, 100000, "(default 16)"),
	    G_NUM("user-concurrency", &c->user_concurrency, 1, 100000,
	          "in flight per user (default 4)"),
	    G_NUM("user-queue", &c->user_queue, 0, 1000000,
	          "waiting per user (default 64; 429 beyond)"),
	    G_NUM("queue-size", &c->queue_size, 0, 1000000,
	          "waiting in all (default 1024; 503 beyond)"),
	    G_MS("queue-timeout", &c->queue_timeout_ms,
	         "longest wait in the queue (default 30s; 503)"),
	    G_MS("upstream-timeout", &c->upstream_timeout_ms,
	         "longest upstream answer (default 300s; 504)"),
	    G_MS("client-timeout", &c->client_timeout_ms,
	         "a client must send its request within (default 30s)"),
	    G_NUM("user-websockets", &c->user_websockets, 0, 100000,
	          "open WebSockets per user (default 16; 429 beyond)"),
	    G_MS("websocket-idle", &c->websocket_idle_ms,
	         "close a WebSocket silent this long (default 1h)"),
	    OPT_GROUP("users"),
	    OPT_CALL(0, "keys", "FILE", g_keys, "API keys with names and per-user limits"),
	    OPT_FLAG(0, "require-keys", &c->require_keys,
	             "refuse requests without a known key (401)"),
	    G_STR("user-header", "NAME", c->user_header, "another header carrying the key"),
	    OPT_GROUP("GPU"),
	    G_NUM("min-free-mib", &c->min_free_mib, 0, 1L << 30,
	          "hold new work while an upstream's GPU has less free"),
	    OPT_CALL(0, "no-hold-throttled", NULL, g_nohold,
	             "keep sending to thermally throttled GPUs"),
	    OPT_CALL(0, "gpu-interval", "DUR", g_ms, "how often the GPUs are read (default 500ms)",
	             .target = &c->gpu_interval_ms, .min = 50),
	    OPT_GROUP("batching"),
	    OPT_CALL(0, "goal", "latency|throughput", g_goal,
	             "batching defaults (short waits, small batches, or the opposite; default "
	             "latency)"),
	    OPT_CALL(0, "batch", "PATH", g_batch,
	             "batch POST PATH (list at /input, answer list at /data)"),
	    OPT_CALL(0, "max-batch", "N", g_rule, "inputs per batch", .min = 1, .max = 100000),
	    OPT_CALL(0, "preferred", "LIST", g_rule, "preferred batch sizes, e.g. 8,16"),
	    OPT_CALL(0, "batch-delay", "DUR", g_rule,
	             "longest wait for a batch to fill (e.g. 5ms)"),
	    OPT_GROUP("other"),
	    G_STR("access-log", "FILE", c->access_log,
	          "one JSON line per request (default stderr; - stdout; off)"),
	    G_NUM("workers", &c->workers, 0, GATE_MAX_WORKERS,
	          "event loops, one core each (default 0: online CPUs, at most 4)"),
	    G_MS("drain-timeout", &c->drain_timeout_ms,
	         "on SIGTERM, wait this long for requests (default 30s)"),
	    OPT_END};
	const opt_cmd oc = {
	    .name = "gate",
	    .usage = "gate --upstream URL[@GPU] [OPTIONS]",
	    .about =
	        N_("A reverse proxy for a GPU inference server (ComfyUI, Ollama, vLLM, Triton,\n"
	           "any HTTP API): size limits, per-user concurrency, a fair queue, timeouts,\n"
	           "GPU-aware admission and routing, dynamic batching, Prometheus metrics."),
	    .opts = opts,
	    .more = N_("SIGHUP reads --config and the flags again; SIGTERM drains."),
	    .ctx = x};
	int first;
	return opt_parse(&oc, argc, argv, &first);
}

int gate_config_from_args(int argc, char **argv, gate_config *c)
{
	gate_config scratch;
	gate_config_defaults(&scratch);
	gate_pass pre = {.c = &scratch};
	int rc = parse_pass(argc, argv, &pre);
	gate_config_free(&scratch);
	gate_config_defaults(c);
	if (rc)
		return rc;
	snprintf(c->metrics_listen, sizeof c->metrics_listen, "127.0.0.1:9410");
	gw_fail err = {0};
	if (pre.file && gate_config_load(c, pre.file, &err))
		return gw_error(GW_EXIT_USAGE, "--config", N_("see docs/gate.md"), "%s: %s",
		                err.what, err.why_text);
	/* --goal first: it sets the defaults the batching flags then adjust. */
	if (pre.goal)
		gate_goal_defaults(c, !strcmp(pre.goal, "throughput") ? GATE_GOAL_THROUGHPUT
		                                                      : GATE_GOAL_LATENCY);
	gate_pass x = {.c = c};
	if ((rc = parse_pass(argc, argv, &x)))
		return rc;
	if (gate_config_check(c, &err))
		return gw_fail_print(&err);
	return 0;
}

/* Loopback unless --allow-remote with an allow-list: never exposed by accident. */
static int check_exposure(const gate_config *c, const char *opt, const char *addr)
{
	exporter_listen_addr a;
	gw_fail err = {0};
	if (exporter_parse_listen(addr, &a, &err)) {
		err.why_text[199] = '\0'; /* as this line has always cut it */
		return gw_error(GW_EXIT_USAGE, addr, N_("use ADDRESS:PORT such as 127.0.0.1:8080"),
		                "%s", err.why_text);
	}
	if (gate_is_loopback(a.host))
		return 0;
	if (!c->allow_remote)
		return gw_error(GW_EXIT_USAGE, addr,
		                N_("add --allow-remote and --allow NETWORK to expose the gate"),
		                "%s is not a loopback address", opt);
	if (c->nallow == 0)
		return gw_error(GW_EXIT_USAGE, "--allow-remote",
		                N_("name the client networks with --allow NET (e.g. 10.0.0.0/8)"),
		                "needs an allow-list");
	return 0;
}

int gate_config_reload_args(void *ctx, gate_config *out)
{
	const gate_args *a = ctx;
	return gate_config_from_args(a->argc, a->argv, out);
}

int gate_config_exposure(const gate_config *c)
{
	int rc = check_exposure(c, "--listen", c->listen);
	if (!rc && c->metrics_listen[0])
		rc = check_exposure(c, "--metrics-listen", c->metrics_listen);
	return rc;
}
