/*
 * sim_parse.c - the scenario reader's tools: locating a JSON path in the
 * source text (jansson keeps no positions for values, so semantic errors are
 * located by walking the already-valid text again along the culprit's path),
 * errors with file, line and column, and typed getters.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jfield.h"
#include "nvml_abi.h"
#include "sim_i18n.h"
#include "sim_parse_int.h"

/* ---- locating a JSON path in the source text ---- */

typedef struct {
	const char *s;
	size_t n, i;
} jscan;

static void js_ws(jscan *j)
{
	while (j->i < j->n && (j->s[j->i] == ' ' || j->s[j->i] == '\t' || j->s[j->i] == '\r' ||
	                       j->s[j->i] == '\n'))
		j->i++;
}

static bool js_string(jscan *j)
{
	j->i++; /* opening quote */
	while (j->i < j->n) {
		char ch = j->s[j->i++];
		if (ch == '\\')
			j->i++;
		else if (ch == '"')
			return true;
	}
	return false;
}

static bool js_value(jscan *j)
{
	js_ws(j);
	if (j->i >= j->n)
		return false;
	char ch = j->s[j->i];
	if (ch == '"')
		return js_string(j);
	if (ch != '{' && ch != '[') {
		while (j->i < j->n && !strchr(",}] \t\r\n", j->s[j->i]))
			j->i++;
		return true;
	}
	int depth = 0;
	while (j->i < j->n) {
		ch = j->s[j->i];
		if (ch == '"') {
			if (!js_string(j))
				return false;
			continue;
		}
		if (ch == '{' || ch == '[')
			depth++;
		else if ((ch == '}' || ch == ']') && --depth == 0) {
			j->i++;
			return true;
		}
		j->i++;
	}
	return false;
}

/* Step into member `key` of the object at j->i. Leaves j->i at its value. */
static bool js_member(jscan *j, const char *key, size_t klen, size_t *key_off)
{
	js_ws(j);
	if (j->i >= j->n || j->s[j->i] != '{')
		return false;
	j->i++;
	for (;;) {
		js_ws(j);
		if (j->i >= j->n || j->s[j->i] != '"')
			return false;
		size_t ks = j->i;
		if (!js_string(j))
			return false;
		bool match = j->i - ks - 2 == klen && !memcmp(j->s + ks + 1, key, klen);
		js_ws(j);
		if (j->i >= j->n || j->s[j->i] != ':')
			return false;
		j->i++;
		js_ws(j);
		if (match) {
			*key_off = ks;
			return true;
		}
		if (!js_value(j))
			return false;
		js_ws(j);
		if (j->i >= j->n || j->s[j->i] != ',')
			return false;
		j->i++;
	}
}

static bool js_element(jscan *j, long idx)
{
	js_ws(j);
	if (j->i >= j->n || j->s[j->i] != '[')
		return false;
	j->i++;
	for (long k = 0;; k++) {
		js_ws(j);
		if (j->i >= j->n || j->s[j->i] == ']')
			return false;
		if (k == idx)
			return true;
		if (!js_value(j))
			return false;
		js_ws(j);
		if (j->i >= j->n || j->s[j->i] != ',')
			return false;
		j->i++;
	}
}

/*
 * Follow path ("gpus[2].power.limit_w") through the text. Returns whether
 * the whole path was found; *off is the deepest position reached (the key
 * of the last member when at_key, else its value).
 */
static bool js_locate(const char *s, size_t n, const char *path, bool at_key, size_t *off)
{
	jscan j = {s, n, 0};
	js_ws(&j);
	*off = j.i;
	const char *p = path;
	while (*p) {
		if (*p == '.')
			p++;
		size_t key_off = j.i;
		if (*p == '[') {
			char *end;
			long idx = strtol(p + 1, &end, 10);
			if (*end != ']' || !js_element(&j, idx))
				return false;
			p = end + 1;
			key_off = j.i;
		} else {
			size_t klen = strcspn(p, ".[");
			if (!js_member(&j, p, klen, &key_off))
				return false;
			p += klen;
		}
		*off = (at_key && !*p) ? key_off : j.i;
	}
	return true;
}

static void line_col(const char *s, size_t off, int *line, int *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off && s[i]; i++) {
		if (s[i] == '\n') {
			(*line)++;
			*col = 1;
		} else if (((unsigned char)s[i] & 0xC0) != 0x80) {
			(*col)++;
		}
	}
}

/* ---- parser context and error reporting ---- */

/*
 * Report an error about path.key (key may be NULL: the object itself). Values
 * of gpus[i] may come from gpu_defaults: the message names where the text is.
 * fmt is a message of the catalogue, translated here (sim_i18n.h); the
 * location, the path and the values stay as they are.
 */
static bool failv(sim_sc_ctx *c, const char *path, const char *key, bool at_key, const char *fmt,
                  va_list ap)
{
	char full[512];
	if (key)
		snprintf(full, sizeof full, "%s%s%s", path, *path ? "." : "", key);
	else
		snprintf(full, sizeof full, "%s", path);
	size_t off = 0;
	char shown[600];
	snprintf(shown, sizeof shown, "%s", *full ? full : SIM_("(top level)"));
	if (!js_locate(c->buf, c->len, full, at_key, &off) && !strncmp(full, "gpus[", 5)) {
		const char *rest = strchr(full, ']');
		char alt[560];
		snprintf(alt, sizeof alt, "gpu_defaults%s", rest ? rest + 1 : "");
		size_t off2;
		if (rest && js_locate(c->buf, c->len, alt, at_key, &off2)) {
			off = off2;
			snprintf(shown, sizeof shown, SIM_("%s (for %.*s)"), alt,
			         (int)(rest + 1 - full), full);
		}
	}
	int line, col;
	line_col(c->buf, off, &line, &col);
	char msg[512];
	vsnprintf(msg, sizeof msg, SIM_(fmt), ap);
	snprintf(c->err, c->errlen, "%s:%d:%d: %s: %s", c->file, line, col, shown, msg);
	return false;
}

__attribute__((format(printf, 4, 5))) bool sim_sc_fail(sim_sc_ctx *c, const char *path,
                                                       const char *key, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	failv(c, path, key, false, fmt, ap);
	va_end(ap);
	return false;
}

__attribute__((format(printf, 4, 5))) bool sim_sc_fail_key(sim_sc_ctx *c, const char *path,
                                                           const char *key, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	failv(c, path, key, true, fmt, ap);
	va_end(ap);
	return false;
}

const char *sim_sc_tname(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return SIM_("an object");
	case JSON_ARRAY:
		return SIM_("an array");
	case JSON_STRING:
		return SIM_("a string");
	case JSON_INTEGER:
		return SIM_("an integer");
	case JSON_REAL:
		return SIM_("a number");
	case JSON_TRUE:
	case JSON_FALSE:
		return SIM_("a boolean");
	default:
		return "null";
	}
}

/* A member, with JSON null meaning absent (null removes a gpu_defaults value). */
json_t *sim_sc_member(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_null(v) ? NULL : v;
}

bool sim_sc_check_keys(sim_sc_ctx *c, json_t *o, const char *path, const char *const *keys)
{
	const char *k = jf_unknown(o, NULL, 0, keys);
	if (k) {
		char list[400] = "";
		size_t used = 0;
		for (const char *const *q = keys; *q && used < sizeof list - 1; q++)
			used += (size_t)snprintf(list + used, sizeof list - used, "%s%s",
			                         q == keys ? "" : ", ", *q);
		return sim_sc_fail_key(c, path, k, "unknown key \"%s\" (known keys: %s)", k, list);
	}
	return true;
}

bool sim_sc_missing(sim_sc_ctx *c, const char *path, const char *key)
{
	return sim_sc_fail(c, path, NULL, "missing required key \"%s\"", key);
}

bool sim_sc_get_num(sim_sc_ctx *c, json_t *o, const char *path, const char *key, bool req,
                    double lo, double hi, double *out)
{
	const jf_field f = {.key = key, .type = JF_NUM, .dlo = lo, .dhi = hi};
	json_t *v = sim_sc_member(o, key);
	if (!v)
		return req ? sim_sc_missing(c, path, key) : true;
	jf_fault r = jf_check(&f, v);
	if (r == JF_TYPE)
		return sim_sc_fail(c, path, key, "expected a number, got %s", sim_sc_tname(v));
	if (r == JF_RANGE)
		return sim_sc_fail(c, path, key, "%g is out of range (%g to %g)",
		                   json_number_value(v), lo, hi);
	*out = json_number_value(v);
	return true;
}

bool sim_sc_get_int(sim_sc_ctx *c, json_t *o, const char *path, const char *key, bool req,
                    long long lo, long long hi, long long *out)
{
	const jf_field f = {.key = key, .type = JF_INT, .lo = lo, .hi = hi};
	json_t *v = sim_sc_member(o, key);
	if (!v)
		return req ? sim_sc_missing(c, path, key) : true;
	jf_fault r = jf_check(&f, v);
	if (r == JF_TYPE)
		return sim_sc_fail(c, path, key, "expected an integer, got %s", sim_sc_tname(v));
	long long d = json_integer_value(v);
	if (r == JF_RANGE)
		return sim_sc_fail(c, path, key, "%lld is out of range (%lld to %lld)", d, lo, hi);
	*out = d;
	return true;
}

/* Unsigned helpers on top of get_int for the many small counts. */
bool sim_sc_get_uns(sim_sc_ctx *c, json_t *o, const char *path, const char *key, bool req,
                    long long lo, long long hi, unsigned *out)
{
	long long v = *out;
	if (!sim_sc_get_int(c, o, path, key, req, lo, hi, &v))
		return false;
	*out = (unsigned)v;
	return true;
}

bool sim_sc_get_ull(sim_sc_ctx *c, json_t *o, const char *path, const char *key, bool req,
                    long long lo, long long hi, unsigned long long *out)
{
	long long v = (long long)*out;
	if (!sim_sc_get_int(c, o, path, key, req, lo, hi, &v))
		return false;
	*out = (unsigned long long)v;
	return true;
}

bool sim_sc_get_bool(sim_sc_ctx *c, json_t *o, const char *path, const char *key, bool req,
                     bool *out)
{
	const jf_field f = {.key = key, .type = JF_BOOL};
	json_t *v = sim_sc_member(o, key);
	if (!v)
		return req ? sim_sc_missing(c, path, key) : true;
	if (jf_check(&f, v) == JF_TYPE)
		return sim_sc_fail(c, path, key, "expected true or false, got %s", sim_sc_tname(v));
	*out = json_is_true(v);
	return true;
}

bool sim_sc_get_str(sim_sc_ctx *c, json_t *o, const char *path, const char *key, bool req,
                    size_t maxlen, char *out, size_t outsize)
{
	const jf_field f = {.key = key, .type = JF_STR, .hi = (long long)maxlen, .size = outsize};
	json_t *v = sim_sc_member(o, key);
	if (!v)
		return req ? sim_sc_missing(c, path, key) : true;
	switch (jf_check(&f, v)) {
	case JF_TYPE:
		return sim_sc_fail(c, path, key, "expected a string, got %s", sim_sc_tname(v));
	case JF_TOO_LONG:
		return sim_sc_fail(c, path, key, "string is %zu bytes long, at most %zu allowed",
		                   json_string_length(v), maxlen);
	case JF_NUL:
		return sim_sc_fail(c, path, key, "string contains a NUL character");
	default:
		jf_store(&f, v, out);
		return true;
	}
}

bool sim_sc_get_enum(sim_sc_ctx *c, json_t *o, const char *path, const char *key, bool req,
                     const char *const *names, const int *values, int *out)
{
	char s[64] = "";
	json_t *v = sim_sc_member(o, key);
	if (!v)
		return req ? sim_sc_missing(c, path, key) : true;
	if (!json_is_string(v))
		return sim_sc_fail(c, path, key, "expected a string, got %s", sim_sc_tname(v));
	snprintf(s, sizeof s, "%s", json_string_value(v));
	for (int i = 0; names[i]; i++)
		if (!strcmp(names[i], json_string_value(v))) {
			*out = values ? values[i] : i;
			return true;
		}
	char list[300] = "";
	size_t used = 0;
	for (int i = 0; names[i] && used < sizeof list - 1; i++)
		used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
		                         names[i]);
	return sim_sc_fail(c, path, key, "unknown value \"%s\" (one of: %s)", s, list);
}

/* An object member: absent is fine unless required; present must be an object. */
bool sim_sc_get_obj(sim_sc_ctx *c, json_t *o, const char *path, const char *key, bool req,
                    json_t **out)
{
	json_t *v = sim_sc_member(o, key);
	*out = NULL;
	if (!v)
		return req ? sim_sc_missing(c, path, key) : true;
	if (!json_is_object(v))
		return sim_sc_fail(c, path, key, "expected an object, got %s", sim_sc_tname(v));
	*out = v;
	return true;
}

bool sim_sc_get_arr(sim_sc_ctx *c, json_t *o, const char *path, const char *key, bool req,
                    size_t max, json_t **out)
{
	json_t *v = sim_sc_member(o, key);
	*out = NULL;
	if (!v)
		return req ? sim_sc_missing(c, path, key) : true;
	if (!json_is_array(v))
		return sim_sc_fail(c, path, key, "expected an array, got %s", sim_sc_tname(v));
	if (json_array_size(v) > max)
		return sim_sc_fail(c, path, key, "%zu entries, at most %zu allowed",
		                   json_array_size(v), max);
	*out = v;
	return true;
}

/* "0x233010DE", "233010de" or an integer. */
bool sim_sc_get_hex32(sim_sc_ctx *c, json_t *o, const char *path, const char *key, bool req,
                      unsigned *out)
{
	json_t *v = sim_sc_member(o, key);
	if (!v)
		return req ? sim_sc_missing(c, path, key) : true;
	if (json_is_integer(v)) {
		long long d = json_integer_value(v);
		if (d < 0 || d > 0xFFFFFFFFLL)
			return sim_sc_fail(c, path, key, "%lld does not fit in 32 bits", d);
		*out = (unsigned)d;
		return true;
	}
	if (!json_is_string(v))
		return sim_sc_fail(c, path, key,
		                   "expected a hex string like \"0x233010DE\", got %s",
		                   sim_sc_tname(v));
	const char *s = json_string_value(v);
	const char *h = (!strncmp(s, "0x", 2) || !strncmp(s, "0X", 2)) ? s + 2 : s;
	size_t n = strlen(h);
	if (n == 0 || n > 8 || strspn(h, "0123456789abcdefABCDEF") != n)
		return sim_sc_fail(c, path, key, "\"%s\" is not a 32-bit hex number", s);
	*out = (unsigned)strtoul(h, NULL, 16);
	return true;
}
