/*
 * config.c - the gate's options: defaults, --goal, the JSON config file and
 * the keys file. Both files are parsed strictly (unknown keys and wrong
 * types are errors with line:column), so a typo never silently loosens a
 * limit.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate/config.h"
#include "jfield.h"
#include "util/err.h"
#include "util/i18n.h"

void gate_rule_defaults(gate_batch_rule *r, gate_goal goal, const char *path)
{
	memset(r, 0, sizeof *r);
	snprintf(r->path, sizeof r->path, "%s", path);
	snprintf(r->input, sizeof r->input, "/input");
	snprintf(r->output, sizeof r->output, "/data");
	/* The guide's trade-off: a short wait and small batches keep P99 low;
	 * a longer wait fills the GPU at the cost of latency. */
	if (goal == GATE_GOAL_THROUGHPUT) {
		r->max_batch_size = 64;
		r->npreferred = 3;
		r->preferred[0] = 16;
		r->preferred[1] = 32;
		r->preferred[2] = 64;
		r->max_queue_delay_us = 20000;
	} else {
		r->max_batch_size = 16;
		r->npreferred = 2;
		r->preferred[0] = 8;
		r->preferred[1] = 16;
		r->max_queue_delay_us = 2000;
	}
}

void gate_goal_defaults(gate_config *c, gate_goal goal)
{
	c->goal = goal;
	for (int i = 0; i < c->nrules; i++) {
		char path[256];
		snprintf(path, sizeof path, "%s", c->rule[i].path);
		gate_batch_rule keep = c->rule[i];
		gate_rule_defaults(&c->rule[i], goal, path);
		snprintf(c->rule[i].input, sizeof c->rule[i].input, "%s", keep.input);
		snprintf(c->rule[i].output, sizeof c->rule[i].output, "%s", keep.output);
	}
}

void gate_config_defaults(gate_config *c)
{
	memset(c, 0, sizeof *c);
	snprintf(c->listen, sizeof c->listen, "127.0.0.1:8080");
	c->max_body_bytes = 16L << 20;
	c->max_header_bytes = 16L << 10;
	c->max_inflight = 64;
	c->max_inflight_per_up = 16;
	c->user_concurrency = 4;
	c->user_queue = 64;
	c->queue_size = 1024;
	c->queue_timeout_ms = 30000;
	c->upstream_timeout_ms = 300000;
	c->client_timeout_ms = 30000;
	c->max_connections = 1024;
	c->drain_timeout_ms = 30000;
	c->user_websockets = 16;
	c->websocket_idle_ms = 3600000;
	c->min_free_mib = 0;
	c->hold_throttled = true;
	c->gpu_interval_ms = 500;
	c->goal = GATE_GOAL_LATENCY;
}

void gate_config_free(gate_config *c)
{
	free(c->keys);
	c->keys = NULL;
	c->nkeys = 0;
}

int gate_config_copy(gate_config *dst, const gate_config *src)
{
	*dst = *src;
	dst->keys = NULL;
	if (src->nkeys) {
		dst->keys = malloc((size_t)src->nkeys * sizeof *dst->keys);
		if (!dst->keys)
			return -1;
		memcpy(dst->keys, src->keys, (size_t)src->nkeys * sizeof *dst->keys);
	}
	return 0;
}

/* ------------------------------------------------------------ small parsers */

bool gate_is_loopback(const char *host)
{
	struct in_addr a4;
	struct in6_addr a6;
	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, host, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6);
	return false;
}

/* Name what failed, once its wording is set; returns -1. */
static int fail_what(gw_fail *f, const char *what)
{
	if (f)
		snprintf(f->what, sizeof f->what, "%s", what);
	return -1;
}

int gate_parse_net(const char *s, gate_net *out, gw_fail *err)
{
	memset(out, 0, sizeof *out);
	char host[80];
	const char *slash = strchr(s, '/');
	size_t hl = slash ? (size_t)(slash - s) : strlen(s);
	if (hl == 0 || hl >= sizeof host) {
		gw_fail_set(err, GW_EXIT_USAGE, s, NULL, N_("'%s' is not ADDRESS[/BITS]"), s);
		return -1;
	}
	memcpy(host, s, hl);
	host[hl] = '\0';
	if (inet_pton(AF_INET, host, out->addr) == 1)
		out->v6 = false;
	else if (inet_pton(AF_INET6, host, out->addr) == 1)
		out->v6 = true;
	else {
		gw_fail_set(err, GW_EXIT_USAGE, s, NULL,
		            N_("'%s' is not a numeric IPv4 or IPv6 address"), host);
		return -1;
	}
	int max = out->v6 ? 128 : 32;
	out->bits = max;
	if (slash) {
		char *end;
		errno = 0;
		long b = strtol(slash + 1, &end, 10);
		if (errno || end == slash + 1 || *end || b < 0 || b > max) {
			gw_fail_set(err, GW_EXIT_USAGE, s, NULL,
			            N_("prefix length '%s' is not 0 to %d"), slash + 1, max);
			return -1;
		}
		out->bits = (int)b;
	}
	return 0;
}

bool gate_net_match(const gate_net *n, const void *addr, bool v6)
{
	const uint8_t *a = addr;
	uint8_t mapped[4];
	/* An IPv4 client on a dual-stack socket arrives as ::ffff:a.b.c.d. */
	if (v6 && !n->v6) {
		static const uint8_t pre[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
		if (memcmp(a, pre, 12) != 0)
			return false;
		memcpy(mapped, a + 12, 4);
		a = mapped;
		v6 = false;
	}
	if (v6 != n->v6)
		return false;
	int full = n->bits / 8, rest = n->bits % 8;
	if (memcmp(a, n->addr, (size_t)full) != 0)
		return false;
	if (rest) {
		uint8_t m = (uint8_t)(0xff << (8 - rest));
		if ((a[full] & m) != (n->addr[full] & m))
			return false;
	}
	return true;
}

static int parse_gpu_list(const char *s, gate_upstream_cfg *out, gw_fail *err)
{
	snprintf(out->gpu_text, sizeof out->gpu_text, "%s", s);
	if (!strcmp(s, "none")) {
		out->ngpu = 0;
		return 0;
	}
	out->ngpu = 0;
	const char *p = s;
	while (*p) {
		char *end;
		errno = 0;
		long v = strtol(p, &end, 10);
		if (errno || end == p || v < 0 || v > 63 || (*end && *end != ',')) {
			gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL,
			            N_("GPU list '%s' is not indices such as 0 or 0,1"), s);
			return -1;
		}
		if (out->ngpu == GATE_MAX_GPUS_PER_UP) {
			gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL,
			            N_("more than %d GPUs for one upstream"), GATE_MAX_GPUS_PER_UP);
			return -1;
		}
		out->gpu[out->ngpu++] = (int)v;
		p = *end ? end + 1 : end;
	}
	if (!out->ngpu) {
		gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL, N_("empty GPU list after @"));
		return -1;
	}
	return 0;
}

int gate_parse_upstream(const char *s, gate_upstream_cfg *out, gw_fail *err)
{
	memset(out, 0, sizeof *out);
	out->ngpu = -1;
	const char *at = strrchr(s, '@');
	const char *scheme = strstr(s, "://");
	/* user@host in a URL is not a GPU list: only an @ after the authority. */
	if (at && scheme && strchr(scheme + 3, '/') && at < strchr(scheme + 3, '/'))
		at = NULL;
	size_t ul = at ? (size_t)(at - s) : strlen(s);
	if (ul >= sizeof out->url) {
		gw_fail_set(err, GW_EXIT_USAGE, s, NULL, N_("URL too long"));
		return -1;
	}
	memcpy(out->url, s, ul);
	out->url[ul] = '\0';
	if (strncmp(out->url, "http://", 7) && strncmp(out->url, "https://", 8)) {
		gw_fail_set(err, GW_EXIT_USAGE, s, NULL,
		            N_("'%s' is not an http:// or https:// URL"), out->url);
		return -1;
	}
	const char *host = strstr(out->url, "://") + 3;
	if (!*host || *host == '/' || *host == ':') {
		gw_fail_set(err, GW_EXIT_USAGE, s, NULL, N_("'%s' names no host"), out->url);
		return -1;
	}
	while (ul > 0 && out->url[ul - 1] == '/')
		out->url[--ul] = '\0';
	if (strchr(host, '/') || strchr(host, '?')) {
		gw_fail_set(err, GW_EXIT_USAGE, s, NULL,
		            N_("'%s' has a path; give only scheme://host:port"), out->url);
		return -1;
	}
	if (at && parse_gpu_list(at + 1, out, err))
		return fail_what(err, s);
	return 0;
}

const gate_key *gate_key_find(const gate_config *c, const char *key)
{
	for (int i = 0; i < c->nkeys; i++)
		if (!strcmp(c->keys[i].key, key))
			return &c->keys[i];
	return NULL;
}

/* ------------------------------------------------------------- JSON parsing */

static void set_err(gw_fail *err, const char *what, const json_error_t *je)
{
	/* Jansson's words are English only; the position is formatted here, not as a message. */
	char line[sizeof je->text + 32];
	if (je->line > 0)
		snprintf(line, sizeof line, "%d:%d: %s", je->line, je->column, je->text);
	else
		snprintf(line, sizeof line, "%s", je->text);
	gw_fail_set(err, GW_EXIT_USAGE, what, NULL, "%s", line);
}

/* Put pre before the text in buf[size], cutting its end if it no longer fits. */
static void insert_front(char *buf, size_t size, const char *pre)
{
	size_t p = strlen(pre), n = strlen(buf);
	if (p >= size)
		p = size - 1;
	if (p + n >= size)
		n = size - 1 - p;
	memmove(buf + p, buf, n);
	memcpy(buf, pre, p);
	buf[p + n] = '\0';
}

/* Put "upstreams[2]: " and the like before both wordings of why; returns -1. */
__attribute__((format(printf, 2, 3))) static int fail_prefix(gw_fail *f, const char *fmt, ...)
{
	if (!f)
		return -1;
	char pre[64];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(pre, sizeof pre, fmt, ap);
	va_end(ap);
	insert_front(f->why, sizeof f->why, pre);
	insert_front(f->why_text, sizeof f->why_text, pre);
	return -1;
}

/* The fields of the config and the keys file, checked by sim/jfield.c. */
#define BIG (1L << 40)
#define GC_I(k, m, lo, hi) JF_I(k, gate_config, m, lo, hi)
static const jf_field root_rows[] = {
    JF_S("listen", gate_config, listen),
    JF_S("metrics_listen", gate_config, metrics_listen),
    JF_B("allow_remote", gate_config, allow_remote),
    GC_I("workers", workers, 0, GATE_MAX_WORKERS),
    JF_S("access_log", gate_config, access_log),
};
static const jf_field limit_rows[] = {
    GC_I("max_body_bytes", max_body_bytes, 1, BIG),
    GC_I("max_header_bytes", max_header_bytes, 256, GATE_MAX_HEADER_BYTES),
    GC_I("max_inflight", max_inflight, 1, 100000),
    GC_I("max_inflight_per_upstream", max_inflight_per_up, 1, 100000),
    GC_I("user_concurrency", user_concurrency, 1, 100000),
    GC_I("user_queue", user_queue, 0, 1000000),
    GC_I("queue_size", queue_size, 0, 1000000),
    GC_I("queue_timeout_ms", queue_timeout_ms, 1, BIG),
    GC_I("upstream_timeout_ms", upstream_timeout_ms, 1, BIG),
    GC_I("client_timeout_ms", client_timeout_ms, 1, BIG),
    GC_I("max_connections", max_connections, 1, 1000000),
    GC_I("drain_timeout_ms", drain_timeout_ms, 0, BIG),
    GC_I("user_websockets", user_websockets, 0, 100000),
    GC_I("websocket_idle_ms", websocket_idle_ms, 1, BIG),
};
static const jf_field user_rows[] = {
    JF_S("header", gate_config, user_header),
    JF_S("keys_file", gate_config, keys_file),
    JF_B("require_keys", gate_config, require_keys),
};
static const jf_field gpu_rows[] = {
    GC_I("min_free_mib", min_free_mib, 0, 1L << 30),
    JF_B("hold_throttled", gate_config, hold_throttled),
    GC_I("interval_ms", gpu_interval_ms, 50, 60000),
};
static const jf_field rule_rows[] = {
    JF_S("path", gate_batch_rule, path),
    JF_S("input", gate_batch_rule, input),
    JF_S("output", gate_batch_rule, output),
    JF_I("max_batch_size", gate_batch_rule, max_batch_size, 1, 100000),
    JF_I("max_queue_delay_us", gate_batch_rule, max_queue_delay_us, 0, 60000000),
};
static const jf_field upstream_rows[] = {
    JF_I("max_inflight", gate_upstream_cfg, max_inflight, 1, 100000),
};
static const jf_field key_rows[] = {
    JF_S("name", gate_key_limits, name),
    JF_I("concurrency", gate_key_limits, concurrency, 1, 100000),
    JF_I("queue", gate_key_limits, queue, 0, 1000000),
    JF_I("weight", gate_key_limits, weight, 1, 1000),
};
#define ROWS(r) r, sizeof r / sizeof *r

/* Read rows from o into dst; a fault in the config's words. A NUL cuts a string, as it
 * always has here. */
static int read_rows(const jf_field *rows, size_t n, json_t *o, void *dst, gw_fail *err)
{
	const jf_field *f;
	const json_t *v;
	if (jf_read(rows, n, o, JF_NUL_CUTS, dst, &f, &v) == JF_OK)
		return 0;
	if (f->type == JF_INT)
		gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL,
		            N_("\"%s\" must be an integer from %ld to %ld"), f->key, (long)f->lo,
		            (long)f->hi);
	else if (f->type == JF_STR)
		gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL,
		            N_("\"%s\" must be a string shorter than %zu"), f->key, f->size);
	else
		gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL, N_("\"%s\" must be true or false"),
		            f->key);
	return -1;
}

/* Reject keys outside rows and more, so typos are errors. */
static int only_keys(json_t *o, const char *where, const jf_field *rows, size_t n,
                     const char *const *more, gw_fail *err)
{
	const char *k = jf_unknown(o, rows, n, more);
	if (k) {
		gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL, N_("%s: unknown key \"%s\""), where, k);
		return -1;
	}
	return 0;
}

static int parse_limits(gate_config *c, json_t *o, gw_fail *err)
{
	if (!json_is_object(o)) {
		gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL, N_("\"limits\" must be an object"));
		return -1;
	}
	if (only_keys(o, "limits", ROWS(limit_rows), NULL, err) ||
	    read_rows(ROWS(limit_rows), o, c, err))
		return -1;
	return 0;
}

static int parse_rule(gate_config *c, json_t *o, gate_batch_rule *r, gw_fail *err)
{
	static const char *const more[] = {"preferred_batch_sizes", NULL};
	if (!json_is_object(o)) {
		gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL,
		            N_("each \"batching\" entry must be an object"));
		return -1;
	}
	json_t *p = json_object_get(o, "path");
	if (!json_is_string(p) || json_string_value(p)[0] != '/') {
		gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL,
		            N_("batching: \"path\" must be a string starting with /"));
		return -1;
	}
	gate_rule_defaults(r, c->goal, json_string_value(p));
	if (only_keys(o, "batching", ROWS(rule_rows), more, err) ||
	    read_rows(ROWS(rule_rows), o, r, err))
		return -1;
	if (r->input[0] != '/' || r->output[0] != '/') {
		gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL,
		            N_("batching: \"input\" and \"output\" are JSON pointers (/input)"));
		return -1;
	}
	json_t *pref = json_object_get(o, "preferred_batch_sizes");
	if (pref) {
		if (!json_is_array(pref) || json_array_size(pref) > GATE_MAX_PREFERRED) {
			gw_fail_set(
			    err, GW_EXIT_USAGE, NULL, NULL,
			    N_("\"preferred_batch_sizes\" must be a list of at most %d sizes"),
			    GATE_MAX_PREFERRED);
			return -1;
		}
		r->npreferred = 0;
		size_t i;
		json_t *v;
		json_array_foreach(pref, i, v)
		{
			if (!json_is_integer(v) || json_integer_value(v) < 1 ||
			    json_integer_value(v) > r->max_batch_size) {
				gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL,
				            N_("preferred batch size must be an integer from 1 to "
				               "max_batch_size (%ld)"),
				            r->max_batch_size);
				return -1;
			}
			r->preferred[r->npreferred++] = (long)json_integer_value(v);
		}
	} else {
		/* The goal's preferred sizes, clipped to a smaller max_batch_size. */
		int n = 0;
		for (int i = 0; i < r->npreferred; i++)
			if (r->preferred[i] <= r->max_batch_size)
				r->preferred[n++] = r->preferred[i];
		r->npreferred = n;
	}
	return 0;
}

static int parse_upstreams(gate_config *c, json_t *a, gw_fail *err)
{
	if (!json_is_array(a) || json_array_size(a) > GATE_MAX_UPSTREAMS) {
		gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL,
		            N_("\"upstreams\" must be a list of at most %d"), GATE_MAX_UPSTREAMS);
		return -1;
	}
	c->nup = 0;
	size_t i;
	json_t *v;
	json_array_foreach(a, i, v)
	{
		gate_upstream_cfg *u = &c->up[c->nup];
		if (json_is_string(v)) {
			if (gate_parse_upstream(json_string_value(v), u, err))
				return fail_prefix(err, "upstreams[%zu]: ", i);
		} else if (json_is_object(v)) {
			static const char *const more[] = {"url", "gpu", NULL};
			json_t *url = json_object_get(v, "url"), *gpu = json_object_get(v, "gpu");
			if (only_keys(v, "upstreams", ROWS(upstream_rows), more, err))
				return -1;
			if (!json_is_string(url) ||
			    gate_parse_upstream(json_string_value(url), u, err)) {
				if (!json_is_string(url))
					gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL,
					            N_("\"url\" must be a string"));
				return fail_prefix(err, "upstreams[%zu]: ", i);
			}
			if (gpu && (!json_is_string(gpu) ||
			            parse_gpu_list(json_string_value(gpu), u, err))) {
				if (!json_is_string(gpu))
					gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL,
					            N_("\"gpu\" must be a string (\"0,1\")"));
				return fail_prefix(err, "upstreams[%zu]: ", i);
			}
			if (read_rows(ROWS(upstream_rows), v, u, err))
				return -1;
		} else {
			gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL,
			            N_("upstreams[%zu] must be a URL or an object"), i);
			return -1;
		}
		c->nup++;
	}
	return 0;
}

static int parse_allow(gate_config *c, json_t *a, gw_fail *err)
{
	if (!json_is_array(a) || json_array_size(a) > GATE_MAX_ALLOW) {
		gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL,
		            N_("\"allow\" must be a list of at most %d networks"), GATE_MAX_ALLOW);
		return -1;
	}
	c->nallow = 0;
	size_t i;
	json_t *v;
	json_array_foreach(a, i, v)
	{
		if (!json_is_string(v) ||
		    gate_parse_net(json_string_value(v), &c->allow[c->nallow], err)) {
			if (!json_is_string(v))
				gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL, N_("must be a string"));
			return fail_prefix(err, "allow[%zu]: ", i);
		}
		c->nallow++;
	}
	return 0;
}

static int parse_sections(gate_config *c, json_t *root, gw_fail *err)
{
	static const char *const more[] = {"allow", "upstreams", "limits",   "users",
	                                   "gpu",   "goal",      "batching", NULL};
	if (only_keys(root, "config", ROWS(root_rows), more, err) ||
	    read_rows(ROWS(root_rows), root, c, err))
		return -1;
	json_t *v;
	if ((v = json_object_get(root, "goal"))) {
		const char *g = json_string_value(v);
		if (!g || (strcmp(g, "latency") && strcmp(g, "throughput"))) {
			gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL,
			            N_("\"goal\" must be \"latency\" or \"throughput\""));
			return -1;
		}
		gate_goal_defaults(c, !strcmp(g, "throughput") ? GATE_GOAL_THROUGHPUT
		                                               : GATE_GOAL_LATENCY);
	}
	if ((v = json_object_get(root, "allow")) && parse_allow(c, v, err))
		return -1;
	if ((v = json_object_get(root, "upstreams")) && parse_upstreams(c, v, err))
		return -1;
	if ((v = json_object_get(root, "limits")) && parse_limits(c, v, err))
		return -1;
	if ((v = json_object_get(root, "users"))) {
		if (!json_is_object(v) || only_keys(v, "users", ROWS(user_rows), NULL, err) ||
		    read_rows(ROWS(user_rows), v, c, err)) {
			if (!json_is_object(v))
				gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL,
				            N_("\"users\" must be an object"));
			return -1;
		}
	}
	if ((v = json_object_get(root, "gpu"))) {
		if (!json_is_object(v) || only_keys(v, "gpu", ROWS(gpu_rows), NULL, err) ||
		    read_rows(ROWS(gpu_rows), v, c, err)) {
			if (!json_is_object(v))
				gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL,
				            N_("\"gpu\" must be an object"));
			return -1;
		}
	}
	if ((v = json_object_get(root, "batching"))) {
		if (!json_is_array(v) || json_array_size(v) > GATE_MAX_RULES) {
			gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL,
			            N_("\"batching\" must be a list of at most %d endpoints"),
			            GATE_MAX_RULES);
			return -1;
		}
		c->nrules = 0;
		size_t i;
		json_t *r;
		json_array_foreach(v, i, r)
		{
			if (parse_rule(c, r, &c->rule[c->nrules], err))
				return -1;
			c->nrules++;
		}
	}
	return 0;
}

int gate_config_parse(gate_config *c, const char *text, size_t len, gw_fail *err)
{
	json_error_t je;
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		set_err(err, "config", &je);
		return -1;
	}
	int rc = -1;
	if (!json_is_object(root))
		gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL, N_("the config must be a JSON object"));
	else
		rc = parse_sections(c, root, err);
	json_decref(root);
	return rc ? fail_what(err, "config") : 0;
}

static char *slurp(const char *path, size_t *len, gw_fail *err)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		gw_fail_set(err, GW_EXIT_USAGE, path, NULL, "%s", strerror(errno));
		return NULL;
	}
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	if (!buf)
		gw_fail_set(err, GW_EXIT_USAGE, path, NULL, N_("out of memory"));
	while (buf) {
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (n < cap)
			break;
		if (cap >= (64u << 20)) {
			gw_fail_set(err, GW_EXIT_USAGE, path, NULL, N_("larger than 64 MiB"));
			free(buf);
			buf = NULL;
			break;
		}
		char *nb = realloc(buf, cap * 2);
		if (!nb) {
			gw_fail_set(err, GW_EXIT_USAGE, path, NULL, N_("out of memory"));
			free(buf);
			buf = NULL;
			break;
		}
		buf = nb;
		cap *= 2;
	}
	if (buf && ferror(f)) {
		gw_fail_set(err, GW_EXIT_USAGE, path, NULL, "%s", strerror(errno));
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = n;
	return buf;
}

int gate_keys_parse(gate_config *c, const char *text, size_t len, gw_fail *err)
{
	json_error_t je;
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		set_err(err, "keys file", &je);
		return -1;
	}
	static const char *const top[] = {"keys", NULL};
	json_t *keys = json_object_get(root, "keys");
	int rc = -1;
	gate_key *arr = NULL;
	int n = 0;
	if (!json_is_object(root) || only_keys(root, "keys file", NULL, 0, top, err) ||
	    !json_is_object(keys)) {
		if (!json_is_object(root) || !json_is_object(keys))
			gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL,
			            N_("expected {\"keys\": {\"KEY\": {\"name\": ...}}}"));
		goto out;
	}
	arr = calloc(json_object_size(keys) + 1, sizeof *arr);
	if (!arr) {
		gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL, N_("out of memory"));
		goto out;
	}
	const char *k;
	json_t *v;
	json_object_foreach(keys, k, v)
	{
		gate_key *g = &arr[n];
		if (!*k || strlen(k) >= sizeof g->key) {
			gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL,
			            N_("keys: a key must be 1 to %zu characters"),
			            sizeof g->key - 1);
			goto out;
		}
		snprintf(g->key, sizeof g->key, "%s", k);
		snprintf(g->lim.name, sizeof g->lim.name, "key%d", n + 1);
		g->lim.weight = 1;
		if (!json_is_object(v)) {
			gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL,
			            N_("keys: the value of each key must be an object"));
			goto out;
		}
		if (only_keys(v, "keys", ROWS(key_rows), NULL, err) ||
		    read_rows(ROWS(key_rows), v, &g->lim, err))
			goto out;
		n++;
	}
	free(c->keys);
	c->keys = arr;
	c->nkeys = n;
	arr = NULL;
	rc = 0;
out:
	free(arr);
	json_decref(root);
	return rc ? fail_what(err, "keys file") : 0;
}

int gate_keys_load(gate_config *c, const char *path, gw_fail *err)
{
	size_t len;
	char *text = slurp(path, &len, err);
	if (!text)
		return -1;
	int rc = gate_keys_parse(c, text, len, err);
	if (rc)
		fail_what(err, path);
	free(text);
	return rc;
}

int gate_config_load(gate_config *c, const char *path, gw_fail *err)
{
	size_t len;
	char *text = slurp(path, &len, err);
	if (!text)
		return -1;
	int rc = gate_config_parse(c, text, len, err);
	free(text);
	if (rc) {
		return fail_what(err, path);
	}
	snprintf(c->config_file, sizeof c->config_file, "%s", path);
	if (c->keys_file[0])
		return gate_keys_load(c, c->keys_file, err);
	return 0;
}

int gate_workers(const gate_config *c)
{
	if (c->workers > 0)
		return (int)(c->workers < GATE_MAX_WORKERS ? c->workers : GATE_MAX_WORKERS);
	/* One loop per core, up to the point where the shared queue's lock
	 * and the upstream, not the loops, are what limits. */
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 4 ? 4 : (int)n;
}

int gate_config_check(const gate_config *c, gw_fail *err)
{
	if (c->nup == 0) {
		gw_fail_set(err, GW_EXIT_USAGE, "gate", N_("see gpuwhy gate --help"),
		            N_("no upstream (give --upstream URL)"));
		return -1;
	}
	if (c->require_keys && c->nkeys == 0) {
		gw_fail_set(err, GW_EXIT_USAGE, "gate", N_("see gpuwhy gate --help"),
		            N_("keys are required but no keys file names any"));
		return -1;
	}
	for (int i = 0; i < c->nrules; i++)
		for (int j = 0; j < c->rule[i].npreferred; j++)
			if (c->rule[i].preferred[j] > c->rule[i].max_batch_size) {
				gw_fail_set(
				    err, GW_EXIT_USAGE, "gate", N_("see gpuwhy gate --help"),
				    N_("%s: preferred batch size %ld exceeds max_batch_size %ld"),
				    c->rule[i].path, c->rule[i].preferred[j],
				    c->rule[i].max_batch_size);
				return -1;
			}
	return 0;
}
