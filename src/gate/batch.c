/*
 * batch.c - dynamic batching's JSON work: the key that decides which
 * requests may share a batch, merging their input lists, splitting the
 * response list back, and how many inputs to send now (Triton's rules:
 * max_batch_size, preferred sizes, max_queue_delay).
 *
 * Paths into the body are RFC 6901 JSON pointers ("/input", "/inputs/0").
 */
#include <stdlib.h>
#include <string.h>

#include "gate/batch.h"
#include "gate/config.h"
#include "util/jsonw.h"

/* Decode one pointer token (~1 is /, ~0 is ~) into out. */
static const char *next_token(const char *p, char *out, size_t outlen)
{
	size_t n = 0;
	p++; /* the leading '/' */
	while (*p && *p != '/') {
		char ch = *p++;
		if (ch == '~' && (*p == '0' || *p == '1'))
			ch = *p++ == '0' ? '~' : '/';
		if (n + 1 < outlen)
			out[n++] = ch;
	}
	out[n] = '\0';
	return p;
}

static json_t *child(json_t *v, const char *tok)
{
	if (json_is_object(v))
		return json_object_get(v, tok);
	if (json_is_array(v)) {
		char *end;
		unsigned long i = strtoul(tok, &end, 10);
		if (!*tok || *end || (tok[0] == '0' && tok[1]))
			return NULL;
		return json_array_get(v, i);
	}
	return NULL;
}

/* The container holding the pointer's target and the last token. */
static json_t *resolve_parent(json_t *root, const char *ptr, char *last, size_t lastlen)
{
	if (ptr[0] != '/')
		return NULL;
	json_t *v = root;
	const char *p = ptr;
	for (;;) {
		p = next_token(p, last, lastlen);
		if (!*p)
			return v;
		v = child(v, last);
		if (!v)
			return NULL;
	}
}

static json_t *resolve(json_t *root, const char *ptr, json_t **parent, char *last, size_t ll)
{
	json_t *par = resolve_parent(root, ptr, last, ll);
	if (parent)
		*parent = par;
	return par ? child(par, last) : NULL;
}

static int replace(json_t *parent, const char *tok, json_t *val)
{
	if (json_is_object(parent))
		return json_object_set_new(parent, tok, val);
	if (json_is_array(parent))
		return json_array_set_new(parent, strtoul(tok, NULL, 10), val);
	json_decref(val);
	return -1;
}

long gate_batch_key(const gate_batch_rule *rule, const char *body, size_t len, json_t **root,
                    char **key)
{
	*root = NULL;
	*key = NULL;
	json_t *r = json_loadb(body, len, 0, NULL);
	if (!r)
		return -1;
	/* A streamed answer cannot be split: it goes through on its own. */
	json_t *stream = json_is_object(r) ? json_object_get(r, "stream") : NULL;
	char last[256];
	json_t *parent, *in = resolve(r, rule->input, &parent, last, sizeof last);
	long n = -1;
	if (json_is_true(stream) || !in)
		n = -1;
	else if (json_is_array(in))
		n = (long)json_array_size(in);
	else if (json_is_string(in) || json_is_number(in))
		n = 1;
	if (n < 1) {
		json_decref(r);
		return -1;
	}
	json_t *rest = json_deep_copy(r);
	json_t *rp = rest ? resolve_parent(rest, rule->input, last, sizeof last) : NULL;
	if (rp)
		replace(rp, last, json_null());
	char *k = jsonw_tree_text(rest, 0, JSONW_TREE_SORT_KEYS);
	json_decref(rest);
	if (!k) {
		json_decref(r);
		return -1;
	}
	*root = r;
	*key = k;
	return n;
}

char *gate_batch_merge(const gate_batch_rule *rule, json_t *const *roots, int n)
{
	if (n < 1)
		return NULL;
	json_t *all = json_array();
	char last[256];
	for (int i = 0; i < n && all; i++) {
		json_t *in = resolve(roots[i], rule->input, NULL, last, sizeof last);
		if (json_is_array(in))
			json_array_extend(all, in);
		else if (in)
			json_array_append(all, in);
	}
	json_t *m = json_deep_copy(roots[0]);
	json_t *parent = m ? resolve_parent(m, rule->input, last, sizeof last) : NULL;
	char *out = NULL;
	if (parent && all && replace(parent, last, json_incref(all)) == 0)
		out = jsonw_tree_text(m, 0, 0);
	json_decref(all);
	json_decref(m);
	return out;
}

/*
 * The sum of the items' own "usage" objects (their integer fields), or
 * NULL when an item has none or a sum overflows: then the member's share
 * of the batch's usage is not known.
 */
static json_t *items_usage(json_t *list, size_t off, long count)
{
	json_t *sum = json_object();
	for (long j = 0; j < count && sum; j++) {
		json_t *it = json_array_get(list, off + (size_t)j);
		json_t *u = json_is_object(it) ? json_object_get(it, "usage") : NULL;
		if (!json_is_object(u)) {
			json_decref(sum);
			return NULL;
		}
		const char *k;
		json_t *v;
		json_object_foreach(u, k, v)
		{
			if (!json_is_integer(v))
				continue;
			json_t *have = json_object_get(sum, k);
			json_int_t t;
			if (__builtin_add_overflow(have ? json_integer_value(have) : 0,
			                           json_integer_value(v), &t)) {
				json_decref(sum);
				return NULL;
			}
			json_object_set_new(sum, k, json_integer(t));
		}
	}
	return sum;
}

/*
 * The batch's "usage" counts every member's inputs: no member's own. A
 * member gets the sum of its items' own usage where the upstream gives it
 * per item, else no "usage" at all (the batch's goes in a header).
 */
static void member_usage(json_t *copy, json_t *list, size_t off, long count)
{
	if (!json_is_object(copy) || !json_object_get(copy, "usage"))
		return;
	json_t *own = items_usage(list, off, count);
	if (own)
		json_object_set_new(copy, "usage", own);
	else
		json_object_del(copy, "usage");
}

/* Member i's share of the response: the same document with its slice of the list. */
static char *member_body(json_t *root, const gate_batch_rule *rule, json_t *list, size_t off,
                         long count, bool shared)
{
	json_t *slice = json_array();
	for (long j = 0; j < count && slice; j++) {
		json_t *it = json_array_get(list, off + (size_t)j);
		if (json_is_object(it) && json_is_integer(json_object_get(it, "index"))) {
			json_t *c = json_copy(it);
			json_object_set_new(c, "index", json_integer(j));
			json_array_append_new(slice, c);
		} else {
			json_array_append(slice, it);
		}
	}
	json_t *copy = json_copy(root);
	char last[256];
	json_t *parent = copy ? resolve_parent(copy, rule->output, last, sizeof last) : NULL;
	/* The pointer may go through nested containers: copy them on the way. */
	if (parent && parent != copy) {
		json_decref(copy);
		copy = json_deep_copy(root);
		parent = copy ? resolve_parent(copy, rule->output, last, sizeof last) : NULL;
	}
	if (shared && copy)
		member_usage(copy, list, off, count);
	char *out = NULL;
	if (parent && slice && replace(parent, last, json_incref(slice)) == 0)
		out = jsonw_tree_text(copy, 0, 0);
	json_decref(slice);
	json_decref(copy);
	return out;
}

/* The batch's own "usage" as one ASCII line of JSON, or NULL. */
static char *batch_usage(json_t *root)
{
	json_t *u = json_is_object(root) ? json_object_get(root, "usage") : NULL;
	return jsonw_tree_text(u, 0, JSONW_TREE_ASCII);
}

int gate_batch_split(const gate_batch_rule *rule, const char *body, size_t len, const long *counts,
                     int n, char **out, char **usage)
{
	for (int i = 0; i < n; i++)
		out[i] = NULL;
	if (usage)
		*usage = NULL;
	json_t *root = json_loadb(body, len, 0, NULL);
	char last[256];
	json_t *list = root ? resolve(root, rule->output, NULL, last, sizeof last) : NULL;
	size_t total = 0;
	for (int i = 0; i < n; i++)
		total += counts[i] > 0 ? (size_t)counts[i] : 0;
	if (!json_is_array(list) || json_array_size(list) != total) {
		json_decref(root);
		return -1;
	}
	size_t off = 0;
	for (int i = 0; i < n; i++) {
		out[i] = member_body(root, rule, list, off, counts[i], n > 1);
		off += (size_t)counts[i];
		if (!out[i]) {
			for (int j = 0; j < i; j++) {
				free(out[j]);
				out[j] = NULL;
			}
			json_decref(root);
			return -1;
		}
	}
	if (usage && n > 1)
		*usage = batch_usage(root);
	json_decref(root);
	return 0;
}

long gate_batch_choose(const gate_batch_rule *rule, long avail, bool delay_expired)
{
	if (avail <= 0)
		return 0;
	if (avail >= rule->max_batch_size)
		return rule->max_batch_size;
	long best = 0, largest = 0;
	for (int i = 0; i < rule->npreferred; i++) {
		long p = rule->preferred[i];
		if (p > largest)
			largest = p;
		if (p <= avail && p > best)
			best = p;
	}
	/* The largest preferred size is as good as a full batch. */
	if (largest && best == largest)
		return best;
	if (!delay_expired)
		return 0;
	return avail;
}
