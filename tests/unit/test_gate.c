/* The gate's pure parts: the fair queue, the config and keys files, batch merge and split. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>

#include <math.h>

#include "gate/batch.h"
#include "gate/route.h"
#include "util/err.h"

/* ------------------------------------------------------------ fair queue */

typedef struct {
	gate_qitem q;
	int id;
} item;

static int take_id(gate_fairq *q)
{
	gate_qitem *it = gate_fairq_peek(q);
	if (!it)
		return -1;
	gate_fairq_take(q, it);
	return ((item *)it)->id;
}

static void test_fairq_round_robin(void **state)
{
	(void)state;
	gate_fairq q;
	assert_int_equal(gate_fairq_init(&q), 0);
	gate_user *heavy = gate_fairq_user(&q, "heavy", 100, 100, 1);
	item h[10], l[2];
	for (int i = 0; i < 10; i++) {
		h[i].id = i;
		gate_fairq_push(&q, heavy, &h[i].q);
	}
	/* The light user arrives after heavy's burst and is served second. */
	gate_user *light = gate_fairq_user(&q, "light", 100, 100, 1);
	l[0].id = 100;
	l[1].id = 101;
	gate_fairq_push(&q, light, &l[0].q);
	gate_fairq_push(&q, light, &l[1].q);
	assert_int_equal(q.total, 12);
	int want[] = {0, 100, 1, 101, 2, 3, 4};
	for (size_t i = 0; i < sizeof want / sizeof *want; i++)
		assert_int_equal(take_id(&q), want[i]);
	assert_int_equal(q.total, 5);
	assert_int_equal(light->queued, 0);
	gate_fairq_free(&q);
}

static void test_fairq_weights_and_concurrency(void **state)
{
	(void)state;
	gate_fairq q;
	assert_int_equal(gate_fairq_init(&q), 0);
	gate_user *a = gate_fairq_user(&q, "a", 100, 100, 2);
	gate_user *b = gate_fairq_user(&q, "b", 1, 100, 1);
	item ia[6], ib[3];
	for (int i = 0; i < 6; i++) {
		ia[i].id = i;
		gate_fairq_push(&q, a, &ia[i].q);
	}
	for (int i = 0; i < 3; i++) {
		ib[i].id = 10 + i;
		gate_fairq_push(&q, b, &ib[i].q);
	}
	/* a has weight 2: two of a per one of b. */
	assert_int_equal(take_id(&q), 0);
	assert_int_equal(take_id(&q), 1);
	assert_int_equal(take_id(&q), 10);
	/* b at its concurrency (1 in flight) is passed over, not dropped. */
	b->inflight = 1;
	assert_int_equal(take_id(&q), 2);
	assert_int_equal(take_id(&q), 3);
	assert_int_equal(take_id(&q), 4);
	b->inflight = 0;
	assert_int_equal(take_id(&q), 11);
	/* Removing from the middle keeps FIFO order. */
	gate_fairq_remove(&q, &ia[5].q);
	assert_int_equal(a->queued, 0);
	assert_int_equal(take_id(&q), 12);
	assert_int_equal(take_id(&q), -1);
	assert_int_equal(q.total, 0);
	gate_fairq_free(&q);
}

static int collect(gate_qitem *it, void *arg)
{
	int *out = arg;
	out[++out[0]] = ((item *)it)->id;
	return 1;
}

static void test_fairq_walk(void **state)
{
	(void)state;
	gate_fairq q;
	assert_int_equal(gate_fairq_init(&q), 0);
	gate_user *a = gate_fairq_user(&q, "a", 2, 100, 1);
	gate_user *b = gate_fairq_user(&q, "b", 100, 100, 1);
	item ia[4], ib[2];
	for (int i = 0; i < 4; i++) {
		ia[i].id = i;
		gate_fairq_push(&q, a, &ia[i].q);
	}
	for (int i = 0; i < 2; i++) {
		ib[i].id = 10 + i;
		gate_fairq_push(&q, b, &ib[i].q);
	}
	int seen[16] = {0};
	gate_fairq_walk(&q, collect, seen);
	/* Round robin, and a stops at its concurrency of 2. */
	int want[] = {0, 10, 1, 11};
	assert_int_equal(seen[0], 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(seen[i + 1], want[i]);
	assert_int_equal(q.total, 6); /* walking removes nothing */
	gate_fairq_free(&q);
}

static void test_fairq_user_table(void **state)
{
	(void)state;
	gate_fairq q;
	assert_int_equal(gate_fairq_init(&q), 0);
	char name[32];
	for (int i = 0; i < GATE_MAX_USERS; i++) {
		snprintf(name, sizeof name, "u%d", i);
		gate_user *u = gate_fairq_user(&q, name, 1, 1, 1);
		assert_non_null(u);
		u->refs = 1; /* a request names it */
	}
	assert_null(gate_fairq_user(&q, "one-too-many", 1, 1, 1));
	assert_non_null(gate_fairq_user(&q, "u7", 3, 1, 1));
	assert_int_equal(gate_fairq_find(&q, "u7")->concurrency, 3);
	/* A user with nothing left gives its slot to a newcomer. */
	gate_fairq_find(&q, "u5")->refs = 0;
	gate_user *n = gate_fairq_user(&q, "newcomer", 2, 1, 1);
	assert_non_null(n);
	assert_null(gate_fairq_find(&q, "u5"));
	assert_int_equal(n->inflight, 0);
	assert_int_equal(n->concurrency, 2);
	gate_fairq_free(&q);
}

/* ---------------------------------------------------------------- config */

static void test_config_parse(void **state)
{
	(void)state;
	gate_config c;
	gate_config_defaults(&c);
	gw_fail err = {0};
	const char *ok =
	    "{\"listen\": \"127.0.0.1:9000\", \"upstreams\": [\"http://127.0.0.1:7860@0,1\","
	    " {\"url\": \"http://h:1\", \"gpu\": \"none\", \"max_inflight\": 2}],"
	    " \"limits\": {\"max_body_bytes\": 1000, \"user_concurrency\": 2,"
	    " \"user_websockets\": 0, \"websocket_idle_ms\": 5000},"
	    " \"goal\": \"throughput\", \"workers\": 3,"
	    " \"batching\": [{\"path\": \"/v1/embeddings\", \"max_batch_size\": 32}],"
	    " \"gpu\": {\"min_free_mib\": 2048}, \"allow\": [\"10.0.0.0/8\"]}";
	assert_int_equal(gate_config_parse(&c, ok, strlen(ok), &err), 0);
	assert_string_equal(c.listen, "127.0.0.1:9000");
	assert_int_equal(c.nup, 2);
	assert_int_equal(c.up[0].ngpu, 2);
	assert_int_equal(c.up[0].gpu[1], 1);
	assert_int_equal(c.up[1].ngpu, 0);
	assert_int_equal(c.up[1].max_inflight, 2);
	assert_int_equal(c.max_body_bytes, 1000);
	assert_int_equal(c.user_concurrency, 2);
	assert_int_equal(c.user_websockets, 0);
	assert_int_equal(c.websocket_idle_ms, 5000);
	assert_int_equal(c.workers, 3);
	assert_int_equal(gate_workers(&c), 3);
	assert_int_equal(c.min_free_mib, 2048);
	assert_int_equal(c.nrules, 1);
	assert_int_equal(c.rule[0].max_batch_size, 32);
	/* throughput's preferred sizes above the max are dropped */
	for (int i = 0; i < c.rule[0].npreferred; i++)
		assert_true(c.rule[0].preferred[i] <= 32);
	assert_int_equal(c.rule[0].max_queue_delay_us, 20000);
	assert_int_equal(gate_config_check(&c, &err), 0);

	const char *bad[] = {
	    "{\"limits\": {\"max_body_byte\": 1}}",       /* typo */
	    "{\"limits\": {\"max_body_bytes\": \"1M\"}}", /* wrong type */
	    "{\"goal\": \"fast\"}",
	    "{\"limits\": {\"user_websockets\": -1}}",
	    "{\"limits\": {\"websocket_idle_ms\": 0}}",
	    "{\"workers\": -1}",
	    "{\"workers\": 1000}",
	    "{\"upstreams\": [\"ftp://x\"]}",
	    "{\"upstreams\": [\"http://x/path\"]}",
	    "{\"batching\": [{\"path\": \"v1\"}]}",
	    ("{\"batching\": [{\"path\": \"/a\", \"max_batch_size\": 4, "
	     "\"preferred_batch_sizes\": [8]}]}"),
	    "{\"allow\": [\"10.0.0.0/33\"]}",
	    "{\"listen\": 1}",
	    "[1, 2]",
	    "{\"a\": 1, \"a\": 2}",
	    "{",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		gate_config d;
		gate_config_defaults(&d);
		memset(&err, 0, sizeof err);
		assert_int_equal(gate_config_parse(&d, bad[i], strlen(bad[i]), &err), -1);
		assert_int_equal(err.code, GW_EXIT_USAGE);
		assert_string_equal(err.what, "config");
		assert_true(err.why[0] != '\0' && err.why_text[0] != '\0');
		gate_config_free(&d);
	}
	gate_config_free(&c);
	gate_config_defaults(&c);
	/* By default one loop per online CPU, at most 4. */
	assert_true(gate_workers(&c) >= 1 && gate_workers(&c) <= 4);
	assert_int_equal(gate_config_check(&c, &err), -1); /* no upstream */
	assert_int_equal(err.code, GW_EXIT_USAGE);
	assert_string_equal(err.what, "gate");
	assert_string_equal(err.why, "no upstream (give --upstream URL)");
	assert_string_equal(err.hint, "see gpuwhy gate --help");
	char line[800];
	assert_string_equal(gw_fail_text(&err, line, sizeof line),
	                    "gate: no upstream (give --upstream URL) (see gpuwhy gate --help)");

	/* A fault in a list names its entry before the reason, in both wordings. */
	const char *up = "{\"upstreams\": [\"http://a:1\", \"ftp://x\"]}";
	assert_int_equal(gate_config_parse(&c, up, strlen(up), &err), -1);
	assert_string_equal(err.why, "upstreams[1]: 'ftp://x' is not an http:// or https:// URL");
	assert_string_equal(err.why_text, err.why);
	const char *al = "{\"allow\": [5]}";
	assert_int_equal(gate_config_parse(&c, al, strlen(al), &err), -1);
	assert_string_equal(err.why, "allow[0]: must be a string");
	const char *js = "{\n  \"a\": 1, \"a\": 2}";
	assert_int_equal(gate_config_parse(&c, js, strlen(js), &err), -1);
	assert_string_equal(err.what, "config");
	assert_true(!strncmp(err.why, "2:", 2));

	/* A file names itself as what failed, so the command prints "--config: FILE: why". */
	char path[] = "/tmp/gw-gate-cfg-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "{\"goal\": \"fast\"}", 16), 16);
	close(fd);
	assert_int_equal(gate_config_load(&c, path, &err), -1);
	assert_string_equal(err.what, path);
	assert_string_equal(err.why, "\"goal\" must be \"latency\" or \"throughput\"");
	assert_int_equal(gate_keys_load(&c, path, &err), -1);
	assert_string_equal(err.what, path);
	assert_string_equal(err.why, "expected {\"keys\": {\"KEY\": {\"name\": ...}}}");
	unlink(path);
	assert_int_equal(gate_config_load(&c, path, &err), -1);
	assert_string_equal(err.what, path);
	assert_string_equal(err.why, strerror(ENOENT));
}

static void test_keys_and_nets(void **state)
{
	(void)state;
	gate_config c;
	gate_config_defaults(&c);
	gw_fail err = {0};
	const char *k = "{\"keys\": {\"sk-1\": {\"name\": \"alice\", \"concurrency\": 8, "
	                "\"weight\": 3}, \"sk-2\": {}}}";
	assert_int_equal(gate_keys_parse(&c, k, strlen(k), &err), 0);
	assert_int_equal(c.nkeys, 2);
	const gate_key *a = gate_key_find(&c, "sk-1");
	assert_non_null(a);
	assert_string_equal(a->lim.name, "alice");
	assert_int_equal(a->lim.concurrency, 8);
	assert_int_equal(a->lim.weight, 3);
	assert_int_equal(gate_key_find(&c, "sk-2")->lim.weight, 1);
	assert_null(gate_key_find(&c, "sk-3"));
	const char *kb = "{\"keys\": {\"x\": {\"weight\": 0}}}";
	assert_int_equal(gate_keys_parse(&c, kb, strlen(kb), &err), -1);
	assert_string_equal(err.what, "keys file");
	assert_string_equal(err.why, "\"weight\" must be an integer from 1 to 1000");
	assert_int_equal(c.nkeys, 2); /* a bad file keeps the old keys */
	gate_config_free(&c);

	gate_net n;
	assert_int_equal(gate_parse_net("10.1.0.0/16", &n, &err), 0);
	unsigned char in[4] = {10, 1, 200, 3}, out[4] = {10, 2, 0, 1};
	assert_true(gate_net_match(&n, in, false));
	assert_false(gate_net_match(&n, out, false));
	unsigned char mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 1, 0, 9};
	assert_true(gate_net_match(&n, mapped, true));
	assert_int_equal(gate_parse_net("nonsense", &n, &err), -1);
	assert_int_equal(err.code, GW_EXIT_USAGE);
	assert_string_equal(err.what, "nonsense");
	assert_string_equal(err.why, "'nonsense' is not a numeric IPv4 or IPv6 address");
	assert_true(gate_is_loopback("127.0.0.1"));
	assert_true(gate_is_loopback("127.8.0.1"));
	assert_true(gate_is_loopback("::1"));
	assert_false(gate_is_loopback("0.0.0.0"));
	assert_false(gate_is_loopback("10.0.0.1"));

	gate_upstream_cfg u;
	assert_int_equal(gate_parse_upstream("http://127.0.0.1:11434/", &u, &err), 0);
	assert_string_equal(u.url, "http://127.0.0.1:11434");
	assert_int_equal(u.ngpu, -1);
	assert_int_equal(gate_parse_upstream("http://a:1@2", &u, &err), 0);
	assert_int_equal(u.ngpu, 1);
	assert_int_equal(u.gpu[0], 2);
	assert_int_equal(gate_parse_upstream("http://a:1@x", &u, &err), -1);
	assert_string_equal(err.what, "http://a:1@x");
	assert_string_equal(err.why, "GPU list 'x' is not indices such as 0 or 0,1");
	assert_int_equal(gate_parse_upstream("localhost:1", &u, &err), -1);
	assert_string_equal(err.what, "localhost:1");
}

/* --------------------------------------------------------------- batching */

static void test_batch_merge_split(void **state)
{
	(void)state;
	gate_batch_rule r;
	gate_rule_defaults(&r, GATE_GOAL_LATENCY, "/v1/embeddings");
	const char *b1 =
	    "{\"model\": \"m\", \"input\": [\"a\", \"b\"], \"encoding_format\": \"float\"}";
	const char *b2 = "{\"encoding_format\": \"float\", \"input\": \"c\", \"model\": \"m\"}";
	const char *b3 = "{\"model\": \"other\", \"input\": [\"d\"]}";
	json_t *r1, *r2, *r3;
	char *k1, *k2, *k3;
	assert_int_equal(gate_batch_key(&r, b1, strlen(b1), &r1, &k1), 2);
	assert_int_equal(gate_batch_key(&r, b2, strlen(b2), &r2, &k2), 1);
	assert_int_equal(gate_batch_key(&r, b3, strlen(b3), &r3, &k3), 1);
	assert_string_equal(k1, k2); /* key order does not matter */
	assert_string_not_equal(k1, k3);
	json_t *roots[2] = {r1, r2};
	char *merged = gate_batch_merge(&r, roots, 2);
	assert_non_null(merged);
	json_t *m = json_loads(merged, 0, NULL);
	json_t *in = json_object_get(m, "input");
	assert_int_equal(json_array_size(in), 3);
	assert_string_equal(json_string_value(json_array_get(in, 2)), "c");
	assert_string_equal(json_string_value(json_object_get(m, "model")), "m");
	json_decref(m);

	const char *resp =
	    "{\"object\": \"list\", \"model\": \"m\", \"data\": ["
	    "{\"index\": 0, \"embedding\": [0.5]}, {\"index\": 1, \"embedding\": [1.5]},"
	    "{\"index\": 2, \"embedding\": [2.5]}]}";
	long counts[2] = {2, 1};
	char *out[2];
	assert_int_equal(gate_batch_split(&r, resp, strlen(resp), counts, 2, out, NULL), 0);
	json_t *o1 = json_loads(out[0], 0, NULL), *o2 = json_loads(out[1], 0, NULL);
	assert_int_equal(json_array_size(json_object_get(o1, "data")), 2);
	json_t *only = json_array_get(json_object_get(o2, "data"), 0);
	assert_int_equal(json_integer_value(json_object_get(only, "index")), 0); /* renumbered */
	assert_true(json_real_value(json_array_get(json_object_get(only, "embedding"), 0)) == 2.5);
	assert_string_equal(json_string_value(json_object_get(o2, "model")), "m");
	json_decref(o1);
	json_decref(o2);
	free(out[0]);
	free(out[1]);
	/* A response with the wrong number of items is not split. */
	long wrong[2] = {2, 2};
	assert_int_equal(gate_batch_split(&r, resp, strlen(resp), wrong, 2, out, NULL), -1);
	assert_int_equal(gate_batch_split(&r, "nope", 4, counts, 2, out, NULL), -1);

	/* Not batchable: streamed, no input, not JSON. */
	json_t *rx;
	char *kx;
	const char *s1 = "{\"input\": [\"a\"], \"stream\": true}", *s2 = "{\"prompt\": \"a\"}";
	assert_int_equal(gate_batch_key(&r, s1, strlen(s1), &rx, &kx), -1);
	assert_int_equal(gate_batch_key(&r, s2, strlen(s2), &rx, &kx), -1);
	assert_int_equal(gate_batch_key(&r, "[", 1, &rx, &kx), -1);
	/* A nested pointer. */
	gate_batch_rule n = r;
	snprintf(n.input, sizeof n.input, "/inputs/0/data");
	snprintf(n.output, sizeof n.output, "/outputs/0/data");
	const char *t1 = "{\"inputs\": [{\"name\": \"x\", \"data\": [1, 2]}]}";
	const char *t2 = "{\"inputs\": [{\"name\": \"x\", \"data\": [3]}]}";
	json_t *n1, *n2;
	char *kn1, *kn2;
	assert_int_equal(gate_batch_key(&n, t1, strlen(t1), &n1, &kn1), 2);
	assert_int_equal(gate_batch_key(&n, t2, strlen(t2), &n2, &kn2), 1);
	assert_string_equal(kn1, kn2);
	json_t *nr[2] = {n1, n2};
	char *nm = gate_batch_merge(&n, nr, 2);
	assert_non_null(strstr(nm, "[1,2,3]"));
	const char *tr = "{\"outputs\": [{\"name\": \"y\", \"data\": [10, 20, 30]}]}";
	long nc[2] = {2, 1};
	char *no[2];
	assert_int_equal(gate_batch_split(&n, tr, strlen(tr), nc, 2, no, NULL), 0);
	assert_non_null(strstr(no[0], "[10,20]"));
	assert_non_null(strstr(no[1], "[30]"));
	assert_null(strstr(tr, "[10,20]")); /* the original is untouched */
	free(no[0]);
	free(no[1]);
	free(nm);
	json_decref(n1);
	json_decref(n2);
	free(kn1);
	free(kn2);
	free(merged);
	json_decref(r1);
	json_decref(r2);
	json_decref(r3);
	free(k1);
	free(k2);
	free(k3);
}

/* No member of a merged batch is told the batch's usage as its own. */
static void test_batch_usage(void **state)
{
	(void)state;
	gate_batch_rule r;
	gate_rule_defaults(&r, GATE_GOAL_LATENCY, "/v1/embeddings");
	long counts[2] = {1, 3};
	char *out[2], *usage = NULL;
	/* The batch total only: left out of each member, handed back for a header. */
	const char *total = "{\"data\": [{\"index\": 0}, {\"index\": 1}, {\"index\": 2}, "
	                    "{\"index\": 3}], \"usage\": {\"prompt_tokens\": 10, "
	                    "\"total_tokens\": 10, \"note\": \"a\\nb\\u00e9\"}}";
	assert_int_equal(gate_batch_split(&r, total, strlen(total), counts, 2, out, &usage), 0);
	for (int i = 0; i < 2; i++) {
		json_t *o = json_loads(out[i], 0, NULL);
		assert_non_null(o);
		assert_null(json_object_get(o, "usage"));
		json_decref(o);
		free(out[i]);
	}
	assert_non_null(usage);
	assert_null(strchr(usage, '\n'));
	for (const char *c = usage; *c; c++)
		assert_true((unsigned char)*c >= 0x20 && (unsigned char)*c <= 0x7e);
	json_t *u = json_loads(usage, 0, NULL);
	assert_int_equal(json_integer_value(json_object_get(u, "prompt_tokens")), 10);
	json_decref(u);
	free(usage);
	/* Per item: each member gets exactly its items' sum. */
	const char *per = "{\"data\": [{\"usage\": {\"prompt_tokens\": 1, \"total_tokens\": 1}}, "
	                  "{\"usage\": {\"prompt_tokens\": 2, \"total_tokens\": 2}}, "
	                  "{\"usage\": {\"prompt_tokens\": 3, \"total_tokens\": 4, \"x\": \"s\"}}, "
	                  "{\"usage\": {\"prompt_tokens\": 4, \"total_tokens\": 4}}], "
	                  "\"usage\": {\"prompt_tokens\": 10, \"total_tokens\": 11}}";
	assert_int_equal(gate_batch_split(&r, per, strlen(per), counts, 2, out, &usage), 0);
	json_t *a = json_loads(out[0], 0, NULL), *b = json_loads(out[1], 0, NULL);
	json_t *ua = json_object_get(a, "usage"), *ub = json_object_get(b, "usage");
	assert_int_equal(json_integer_value(json_object_get(ua, "prompt_tokens")), 1);
	assert_int_equal(json_integer_value(json_object_get(ub, "prompt_tokens")), 9);
	assert_int_equal(json_integer_value(json_object_get(ub, "total_tokens")), 10);
	json_decref(a);
	json_decref(b);
	free(out[0]);
	free(out[1]);
	free(usage);
	/* One item without its own: that member gets none. An overflowing sum: none. */
	const char *some =
	    "{\"data\": [{\"usage\": {\"prompt_tokens\": 1}}, {\"usage\": {\"prompt_tokens\": "
	    "9223372036854775807}}, {\"usage\": {\"prompt_tokens\": 1}}, {}], "
	    "\"usage\": {\"prompt_tokens\": 10}}";
	assert_int_equal(gate_batch_split(&r, some, strlen(some), counts, 2, out, &usage), 0);
	json_t *s0 = json_loads(out[0], 0, NULL), *s1 = json_loads(out[1], 0, NULL);
	assert_non_null(json_object_get(s0, "usage"));
	assert_null(json_object_get(s1, "usage")); /* only its items keep their own */
	json_decref(s0);
	json_decref(s1);
	free(out[0]);
	free(out[1]);
	free(usage);
	/* A single member is the whole batch: its answer is left as it came. */
	long one[1] = {4};
	assert_int_equal(gate_batch_split(&r, total, strlen(total), one, 1, out, &usage), 0);
	assert_non_null(strstr(out[0], "\"prompt_tokens\":10"));
	assert_null(usage);
	free(out[0]);
}

static void test_batch_choose(void **state)
{
	(void)state;
	gate_batch_rule r;
	gate_rule_defaults(&r, GATE_GOAL_LATENCY, "/x");
	r.max_batch_size = 16;
	r.npreferred = 2;
	r.preferred[0] = 4;
	r.preferred[1] = 8;
	assert_int_equal(gate_batch_choose(&r, 0, true), 0);
	assert_int_equal(gate_batch_choose(&r, 3, false), 0);   /* wait for more */
	assert_int_equal(gate_batch_choose(&r, 3, true), 3);    /* the delay is over */
	assert_int_equal(gate_batch_choose(&r, 9, false), 8);   /* the largest preferred */
	assert_int_equal(gate_batch_choose(&r, 20, false), 16); /* full */
	r.npreferred = 0;
	assert_int_equal(gate_batch_choose(&r, 9, false), 0);
	assert_int_equal(gate_batch_choose(&r, 16, false), 16);
}

/* ---------------------------------------------------------------- routing */

static void test_route(void **state)
{
	(void)state;
	gate_srv *g = calloc(1, sizeof *g);
	assert_non_null(g);
	gate_config_defaults(&g->cfg);
	g->cfg.min_free_mib = 4096;
	g->nup = 2;
	gw_fail err = {0};
	assert_int_equal(gate_parse_upstream("http://a:1@0", &g->up[0].cfg, &err), 0);
	assert_int_equal(gate_parse_upstream("http://b:1@1", &g->up[1].cfg, &err), 0);
	g->gpu_aware = true;
	g->ngpu = 2;
	for (int i = 0; i < 2; i++)
		g->gpu[i] = (gate_gpu){.index = i, .valid = true, .free_mib = 60000, .util = 10};
	gate_route_refresh(g);
	bool held;
	char why[600], why_text[600];
	/* Equal load: the GPU with less utilization wins; then in-flight share. */
	g->gpu[1].util = 5;
	gate_route_refresh(g);
	assert_int_equal(gate_route_pick(g, &held, why, why_text, sizeof why), 1);
	g->up[1].inflight = 4;
	assert_int_equal(gate_route_pick(g, &held, why, why_text, sizeof why), 0);
	/* GPU 0 short of memory: only upstream 1, with the reason kept. */
	g->gpu[0].free_mib = 1000;
	gate_route_refresh(g);
	assert_non_null(
	    strstr(g->up[0].health, "GPU 0 has 1000 MiB free, below min_free_mib 4096"));
	assert_int_equal(gate_route_pick(g, &held, why, why_text, sizeof why), 1);
	/* GPU 1 throttled by a thermal slowdown, GPU 0 lost: nothing may take work. */
	g->gpu[1].reasons_ok = true;
	g->gpu[1].reasons = 0x40;
	g->gpu[0].lost = true;
	gate_route_refresh(g);
	assert_true(g->up[0].lost);
	assert_int_equal(gate_route_pick(g, &held, why, why_text, sizeof why), -1);
	assert_true(held);
	assert_non_null(strstr(why, "GPU 0 is lost"));
	assert_non_null(strstr(why, "GPU 1 is throttled"));
	assert_non_null(strstr(why, "hw_thermal"));
	/* (without a catalogue the text is the English) */
	assert_string_equal(why_text, why);
	/* The ordinary power cap (0x4) is not a reason to hold. */
	g->gpu[1].reasons = 0x4;
	gate_route_refresh(g);
	assert_int_equal(gate_route_pick(g, &held, why, why_text, sizeof why), 1);
	/* Full is not held: the request waits for a slot. */
	g->up[1].inflight = g->cfg.max_inflight_per_up;
	assert_int_equal(gate_route_pick(g, &held, why, why_text, sizeof why), -1);
	assert_false(held);
	/* Unknown values are absent, not zero. */
	g->gpu[1].free_mib = NAN;
	g->up[1].inflight = 0;
	gate_route_refresh(g);
	assert_true(isnan(g->up[1].free_mib));
	assert_string_equal(g->up[1].health, "");
	gate_config_free(&g->cfg);
	free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fairq_round_robin),
	    cmocka_unit_test(test_fairq_weights_and_concurrency),
	    cmocka_unit_test(test_fairq_walk),
	    cmocka_unit_test(test_fairq_user_table),
	    cmocka_unit_test(test_config_parse),
	    cmocka_unit_test(test_keys_and_nets),
	    cmocka_unit_test(test_batch_merge_split),
	    cmocka_unit_test(test_batch_usage),
	    cmocka_unit_test(test_batch_choose),
	    cmocka_unit_test(test_route),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
