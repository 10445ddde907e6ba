/*
 * sim_scenario.c - strict reader of scenario files (schema: docs/scenarios.md).
 *
 * jansson parses the text (rejecting duplicate keys) and reports syntax
 * errors with their position. jansson keeps no positions for values, so
 * semantic errors (unknown key, wrong type, out of range) are located by
 * walking the already-valid text again along the JSON path of the culprit.
 */
#include "sim_scenario.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nvml_abi.h"

#define MIB 1048576.0

uint64_t sim_hash(uint64_t seed, uint64_t a, uint64_t b, uint64_t c)
{
	/* splitmix64 finaliser over a running mix: cheap, well distributed. */
	uint64_t x = seed ^ 0x9E3779B97F4A7C15ULL;
	uint64_t in[3] = {a, b, c};
	for (int i = 0; i < 3; i++) {
		x += in[i] + 0x9E3779B97F4A7C15ULL;
		x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
		x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
		x ^= x >> 31;
	}
	return x;
}

static const char *const arch_names[] = {
    [NVML_DEVICE_ARCH_KEPLER] = "kepler",
    [NVML_DEVICE_ARCH_MAXWELL] = "maxwell",
    [NVML_DEVICE_ARCH_PASCAL] = "pascal",
    [NVML_DEVICE_ARCH_VOLTA] = "volta",
    [NVML_DEVICE_ARCH_TURING] = "turing",
    [NVML_DEVICE_ARCH_AMPERE] = "ampere",
    [NVML_DEVICE_ARCH_ADA] = "ada",
    [NVML_DEVICE_ARCH_HOPPER] = "hopper",
    [NVML_DEVICE_ARCH_BLACKWELL] = "blackwell",
};

const char *sim_arch_name(unsigned arch)
{
	if (arch < sizeof arch_names / sizeof *arch_names && arch_names[arch])
		return arch_names[arch];
	return "unknown";
}

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

typedef struct {
	const char *buf;
	size_t len;
	const char *file;
	char *err;
	size_t errlen;
	uint64_t seed;
} pctx;

/*
 * Report an error about path.key (key may be NULL: the object itself). Values
 * of gpus[i] may come from gpu_defaults: the message names where the text is.
 */
static bool failv(pctx *c, const char *path, const char *key, bool at_key, const char *fmt,
                  va_list ap)
{
	char full[512];
	if (key)
		snprintf(full, sizeof full, "%s%s%s", path, *path ? "." : "", key);
	else
		snprintf(full, sizeof full, "%s", path);
	size_t off = 0;
	char shown[600];
	snprintf(shown, sizeof shown, "%s", *full ? full : "(top level)");
	if (!js_locate(c->buf, c->len, full, at_key, &off) && !strncmp(full, "gpus[", 5)) {
		const char *rest = strchr(full, ']');
		char alt[560];
		snprintf(alt, sizeof alt, "gpu_defaults%s", rest ? rest + 1 : "");
		size_t off2;
		if (rest && js_locate(c->buf, c->len, alt, at_key, &off2)) {
			off = off2;
			snprintf(shown, sizeof shown, "%s (for %.*s)", alt, (int)(rest + 1 - full),
			         full);
		}
	}
	int line, col;
	line_col(c->buf, off, &line, &col);
	char msg[512];
	vsnprintf(msg, sizeof msg, fmt, ap);
	snprintf(c->err, c->errlen, "%s:%d:%d: %s: %s", c->file, line, col, shown, msg);
	return false;
}

__attribute__((format(printf, 4, 5))) static bool fail(pctx *c, const char *path, const char *key,
                                                       const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	failv(c, path, key, false, fmt, ap);
	va_end(ap);
	return false;
}

__attribute__((format(printf, 4, 5))) static bool fail_key(pctx *c, const char *path,
                                                           const char *key, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	failv(c, path, key, true, fmt, ap);
	va_end(ap);
	return false;
}

static const char *tname(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	default:
		return "null";
	}
}

/* A member, with JSON null meaning absent (null removes a gpu_defaults value). */
static json_t *member(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_null(v) ? NULL : v;
}

static bool check_keys(pctx *c, json_t *o, const char *path, const char *const *keys)
{
	const char *k;
	json_t *v;
	json_object_foreach(o, k, v)
	{
		bool known = false;
		for (const char *const *q = keys; *q && !known; q++)
			known = !strcmp(*q, k);
		if (known)
			continue;
		char list[400] = "";
		size_t used = 0;
		for (const char *const *q = keys; *q && used < sizeof list - 1; q++)
			used += (size_t)snprintf(list + used, sizeof list - used, "%s%s",
			                         q == keys ? "" : ", ", *q);
		return fail_key(c, path, k, "unknown key \"%s\" (known keys: %s)", k, list);
	}
	return true;
}

static bool missing(pctx *c, const char *path, const char *key)
{
	return fail(c, path, NULL, "missing required key \"%s\"", key);
}

static bool get_num(pctx *c, json_t *o, const char *path, const char *key, bool req, double lo,
                    double hi, double *out)
{
	json_t *v = member(o, key);
	if (!v)
		return req ? missing(c, path, key) : true;
	if (!json_is_number(v))
		return fail(c, path, key, "expected a number, got %s", tname(v));
	double d = json_number_value(v);
	if (!(d >= lo && d <= hi))
		return fail(c, path, key, "%g is out of range (%g to %g)", d, lo, hi);
	*out = d;
	return true;
}

static bool get_int(pctx *c, json_t *o, const char *path, const char *key, bool req, long long lo,
                    long long hi, long long *out)
{
	json_t *v = member(o, key);
	if (!v)
		return req ? missing(c, path, key) : true;
	if (!json_is_integer(v))
		return fail(c, path, key, "expected an integer, got %s", tname(v));
	long long d = json_integer_value(v);
	if (d < lo || d > hi)
		return fail(c, path, key, "%lld is out of range (%lld to %lld)", d, lo, hi);
	*out = d;
	return true;
}

/* Unsigned helpers on top of get_int for the many small counts. */
static bool get_uns(pctx *c, json_t *o, const char *path, const char *key, bool req, long long lo,
                    long long hi, unsigned *out)
{
	long long v = *out;
	if (!get_int(c, o, path, key, req, lo, hi, &v))
		return false;
	*out = (unsigned)v;
	return true;
}

static bool get_ull(pctx *c, json_t *o, const char *path, const char *key, bool req, long long lo,
                    long long hi, unsigned long long *out)
{
	long long v = (long long)*out;
	if (!get_int(c, o, path, key, req, lo, hi, &v))
		return false;
	*out = (unsigned long long)v;
	return true;
}

static bool get_bool(pctx *c, json_t *o, const char *path, const char *key, bool req, bool *out)
{
	json_t *v = member(o, key);
	if (!v)
		return req ? missing(c, path, key) : true;
	if (!json_is_boolean(v))
		return fail(c, path, key, "expected true or false, got %s", tname(v));
	*out = json_is_true(v);
	return true;
}

static bool get_str(pctx *c, json_t *o, const char *path, const char *key, bool req, size_t maxlen,
                    char *out, size_t outsize)
{
	json_t *v = member(o, key);
	if (!v)
		return req ? missing(c, path, key) : true;
	if (!json_is_string(v))
		return fail(c, path, key, "expected a string, got %s", tname(v));
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);
	if (n > maxlen || n >= outsize)
		return fail(c, path, key, "string is %zu bytes long, at most %zu allowed", n,
		            maxlen);
	if (strlen(s) != n)
		return fail(c, path, key, "string contains a NUL character");
	memcpy(out, s, n + 1);
	return true;
}

static bool get_enum(pctx *c, json_t *o, const char *path, const char *key, bool req,
                     const char *const *names, const int *values, int *out)
{
	char s[64] = "";
	json_t *v = member(o, key);
	if (!v)
		return req ? missing(c, path, key) : true;
	if (!json_is_string(v))
		return fail(c, path, key, "expected a string, got %s", tname(v));
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
	return fail(c, path, key, "unknown value \"%s\" (one of: %s)", s, list);
}

/* An object member: absent is fine unless required; present must be an object. */
static bool get_obj(pctx *c, json_t *o, const char *path, const char *key, bool req, json_t **out)
{
	json_t *v = member(o, key);
	*out = NULL;
	if (!v)
		return req ? missing(c, path, key) : true;
	if (!json_is_object(v))
		return fail(c, path, key, "expected an object, got %s", tname(v));
	*out = v;
	return true;
}

static bool get_arr(pctx *c, json_t *o, const char *path, const char *key, bool req, size_t max,
                    json_t **out)
{
	json_t *v = member(o, key);
	*out = NULL;
	if (!v)
		return req ? missing(c, path, key) : true;
	if (!json_is_array(v))
		return fail(c, path, key, "expected an array, got %s", tname(v));
	if (json_array_size(v) > max)
		return fail(c, path, key, "%zu entries, at most %zu allowed", json_array_size(v),
		            max);
	*out = v;
	return true;
}

/* "0x233010DE", "233010de" or an integer. */
static bool get_hex32(pctx *c, json_t *o, const char *path, const char *key, bool req,
                      unsigned *out)
{
	json_t *v = member(o, key);
	if (!v)
		return req ? missing(c, path, key) : true;
	if (json_is_integer(v)) {
		long long d = json_integer_value(v);
		if (d < 0 || d > 0xFFFFFFFFLL)
			return fail(c, path, key, "%lld does not fit in 32 bits", d);
		*out = (unsigned)d;
		return true;
	}
	if (!json_is_string(v))
		return fail(c, path, key, "expected a hex string like \"0x233010DE\", got %s",
		            tname(v));
	const char *s = json_string_value(v);
	const char *h = (!strncmp(s, "0x", 2) || !strncmp(s, "0X", 2)) ? s + 2 : s;
	size_t n = strlen(h);
	if (n == 0 || n > 8 || strspn(h, "0123456789abcdefABCDEF") != n)
		return fail(c, path, key, "\"%s\" is not a 32-bit hex number", s);
	*out = (unsigned)strtoul(h, NULL, 16);
	return true;
}

/* ---- pieces of a GPU ---- */

static bool parse_bus_id(const char *s, sim_pci *p)
{
	unsigned dom, bus, dev, fn;
	int used = 0;
	const char *colon = strchr(s, ':');
	if (!colon)
		return false;
	size_t dlen = (size_t)(colon - s);
	if ((dlen != 4 && dlen != 8) || strspn(s, "0123456789abcdefABCDEF") != dlen)
		return false;
	if (sscanf(s, "%x:%2x:%2x.%1x%n", &dom, &bus, &dev, &fn, &used) != 4 || s[used] ||
	    strlen(colon) != 8 || dev > 0x1F || fn > 7)
		return false;
	p->domain = dom;
	p->bus = bus;
	p->device = dev;
	p->function = fn;
	snprintf(p->bus_id, sizeof p->bus_id, "%08X:%02X:%02X.%X", dom, bus, dev, fn);
	snprintf(p->bus_id_legacy, sizeof p->bus_id_legacy, "%04X:%02X:%02X.%X", dom & 0xFFFF, bus,
	         dev, fn);
	return true;
}

static bool get_bus_id(pctx *c, json_t *o, const char *path, const char *key, bool req,
                       sim_pci *out)
{
	char s[40] = "";
	if (!get_str(c, o, path, key, req, 32, s, sizeof s))
		return false;
	if (!*s)
		return true;
	if (!parse_bus_id(s, out))
		return fail(
		    c, path, key,
		    "\"%s\" is not a PCI bus id like \"00000000:1B:00.0\" or \"0000:1b:00.0\"", s);
	return true;
}

static const char *const profile_keys[] = {"util",
                                           "mem_util",
                                           "enc_util",
                                           "dec_util",
                                           "sm_active",
                                           "sm_occupancy",
                                           "tensor_active",
                                           "dram_active",
                                           "fp64_active",
                                           "fp32_active",
                                           "fp16_active",
                                           "int_active",
                                           "pcie_tx_mib_s",
                                           "pcie_rx_mib_s",
                                           "nvlink_tx_mib_s",
                                           "nvlink_rx_mib_s",
                                           NULL};
_Static_assert(sizeof profile_keys / sizeof *profile_keys == SIM_M_COUNT + 1, "profile keys");

/*
 * A profile: keys not given come from dflt, except that when util is given
 * the activity keys left out are derived from it (sm_active = 0.8 * util,
 * and the pipes as fixed shares of sm_active), so `{"util": 90}` is enough
 * for a plausible busy GPU.
 */
static bool parse_profile(pctx *c, json_t *o, const char *path, const sim_profile *dflt,
                          sim_profile *out)
{
	if (!check_keys(c, o, path, profile_keys))
		return false;
	*out = *dflt;
	bool given[SIM_M_COUNT] = {false};
	for (int m = 0; m < SIM_M_COUNT; m++) {
		double v;
		bool pct = m <= SIM_M_DEC, rate = m >= SIM_M_PCIE_TX;
		double hi = pct ? 100 : rate ? 1e7 : 1;
		if (!member(o, profile_keys[m]))
			continue;
		if (!get_num(c, o, path, profile_keys[m], true, 0, hi, &v))
			return false;
		out->v[m] = pct ? v / 100.0 : rate ? v * MIB : v;
		given[m] = true;
	}
	if (given[SIM_M_UTIL]) {
		double u = out->v[SIM_M_UTIL];
		double sm = given[SIM_M_SM] ? out->v[SIM_M_SM] : 0.8 * u;
		static const struct {
			sim_metric m;
			double share;
		} derive[] = {{SIM_M_OCC, 0.5},  {SIM_M_TENSOR, 0.5}, {SIM_M_DRAM, 0.4},
		              {SIM_M_FP64, 0.0}, {SIM_M_FP32, 0.3},   {SIM_M_FP16, 0.1},
		              {SIM_M_INT, 0.1}};
		out->v[SIM_M_SM] = sm;
		for (size_t k = 0; k < sizeof derive / sizeof *derive; k++)
			if (!given[derive[k].m])
				out->v[derive[k].m] = derive[k].share * sm;
		if (!given[SIM_M_MEM_UTIL])
			out->v[SIM_M_MEM_UTIL] = out->v[SIM_M_DRAM];
	}
	/* An SM can only be active while a kernel runs, a pipe only while its SM is. */
	if (out->v[SIM_M_SM] > out->v[SIM_M_UTIL] + 1e-9)
		return fail(c, path, NULL, "sm_active %.3g exceeds util %.3g%% / 100",
		            out->v[SIM_M_SM], out->v[SIM_M_UTIL] * 100);
	for (int m = SIM_M_OCC; m <= SIM_M_INT; m++)
		if (m != SIM_M_DRAM && out->v[m] > out->v[SIM_M_SM] + 1e-9)
			return fail(c, path, profile_keys[m], "%.3g exceeds sm_active %.3g",
			            out->v[m], out->v[SIM_M_SM]);
	return true;
}

static const char *const shape_names[] = {"steady", "square", "ramp", "sine", NULL};

static bool parse_segment(pctx *c, json_t *o, const char *path, const sim_gpu *g, sim_segment *s)
{
	static const char *const keys[] = {"start_s", "end_s", "shape", "period_s", "duty",
	                                   "ramp_s",  "base",  "level", NULL};
	if (!json_is_object(o))
		return fail(c, path, NULL, "expected an object, got %s", tname(o));
	if (!check_keys(c, o, path, keys))
		return false;
	memset(s, 0, sizeof *s);
	s->end = INFINITY;
	s->duty = 0.5;
	int shape = SIM_SHAPE_STEADY;
	if (!get_num(c, o, path, "start_s", true, 0, 1e9, &s->start) ||
	    !get_num(c, o, path, "end_s", false, 0, 1e9, &s->end) ||
	    !get_enum(c, o, path, "shape", false, shape_names, NULL, &shape))
		return false;
	s->shape = (sim_shape)shape;
	if (s->end <= s->start)
		return fail(c, path, "end_s", "end_s must be after start_s (%g)", s->start);
	bool periodic = s->shape == SIM_SHAPE_SQUARE || s->shape == SIM_SHAPE_SINE;
	if (periodic && !get_num(c, o, path, "period_s", true, 0.001, 1e7, &s->period))
		return false;
	if (!periodic && member(o, "period_s"))
		return fail(c, path, "period_s", "period_s only applies to square and sine shapes");
	if (s->shape == SIM_SHAPE_SQUARE &&
	    !get_num(c, o, path, "duty", false, 0.001, 0.999, &s->duty))
		return false;
	if (s->shape != SIM_SHAPE_SQUARE && member(o, "duty"))
		return fail(c, path, "duty", "duty only applies to the square shape");
	if (s->shape == SIM_SHAPE_RAMP) {
		s->ramp = isinf(s->end) ? 0 : s->end - s->start;
		if (!get_num(c, o, path, "ramp_s", isinf(s->end), 0.001, 1e9, &s->ramp))
			return false;
	} else if (member(o, "ramp_s")) {
		return fail(c, path, "ramp_s", "ramp_s only applies to the ramp shape");
	}
	json_t *base, *level;
	char sub[300];
	if (!get_obj(c, o, path, "base", false, &base) ||
	    !get_obj(c, o, path, "level", true, &level))
		return false;
	s->base = g->idle;
	if (base) {
		snprintf(sub, sizeof sub, "%.200s.base", path);
		if (!parse_profile(c, base, sub, &g->idle, &s->base))
			return false;
	}
	snprintf(sub, sizeof sub, "%.200s.level", path);
	return parse_profile(c, level, sub, &s->base, &s->level);
}

static const char *const reason_names[] = {
    "gpu_idle",   "applications_clocks", "sw_power_cap",   "hw_slowdown",    "sync_boost",
    "sw_thermal", "hw_thermal",          "hw_power_brake", "display_clocks", NULL};
static const unsigned long long reason_bits[] = {
    nvmlClocksEventReasonGpuIdle,
    nvmlClocksEventReasonApplicationsClocksSetting,
    nvmlClocksEventReasonSwPowerCap,
    nvmlClocksThrottleReasonHwSlowdown,
    nvmlClocksEventReasonSyncBoost,
    nvmlClocksEventReasonSwThermalSlowdown,
    nvmlClocksThrottleReasonHwThermalSlowdown,
    nvmlClocksThrottleReasonHwPowerBrakeSlowdown,
    nvmlClocksEventReasonDisplayClockSetting,
};

static bool parse_reasons(pctx *c, json_t *o, const char *path, unsigned long long *out)
{
	json_t *arr;
	if (!get_arr(c, o, path, "reasons", true, 16, &arr))
		return false;
	if (json_array_size(arr) == 0)
		return fail(c, path, "reasons", "a throttle episode needs at least one reason");
	char sub[300];
	snprintf(sub, sizeof sub, "%.200s.reasons", path);
	size_t i;
	json_t *v;
	json_array_foreach(arr, i, v)
	{
		char ep[330];
		snprintf(ep, sizeof ep, "%.200s[%zu]", sub, i);
		if (!json_is_string(v))
			return fail(c, ep, NULL, "expected a reason name, got %s", tname(v));
		int k;
		for (k = 0; reason_names[k]; k++)
			if (!strcmp(reason_names[k], json_string_value(v)))
				break;
		if (!reason_names[k])
			return fail(
			    c, ep, NULL,
			    "unknown reason \"%s\" (one of: gpu_idle, applications_clocks, "
			    "sw_power_cap, hw_slowdown, sync_boost, sw_thermal, hw_thermal, "
			    "hw_power_brake, display_clocks)",
			    json_string_value(v));
		*out |= reason_bits[k];
	}
	return true;
}

static const char *const episode_kinds[] = {"throttle", "pcie_replay", "link_downtrain",
                                            "xid",      "ecc",         NULL};

static bool parse_episode(pctx *c, json_t *o, const char *path, const sim_gpu *g, sim_episode *e)
{
	static const char *const k_throttle[] = {
	    "kind",           "start_s", "end_s",   "reasons", "sm_clock_mhz",
	    "clock_drop_pct", "temp_c",  "power_w", "fan_pct", NULL};
	static const char *const k_replay[] = {"kind", "start_s", "end_s", "per_s", NULL};
	static const char *const k_down[] = {"kind", "start_s", "end_s", "gen", "width", NULL};
	static const char *const k_xid[] = {"kind", "at_s", "code", NULL};
	static const char *const k_ecc[] = {"kind", "at_s", "sbe", "dbe", NULL};
	static const char *const *const kind_keys[] = {k_throttle, k_replay, k_down, k_xid, k_ecc};
	if (!json_is_object(o))
		return fail(c, path, NULL, "expected an object, got %s", tname(o));
	memset(e, 0, sizeof *e);
	int kind = 0;
	if (!get_enum(c, o, path, "kind", true, episode_kinds, NULL, &kind))
		return false;
	e->kind = (sim_episode_kind)kind;
	if (!check_keys(c, o, path, kind_keys[kind]))
		return false;
	e->end = INFINITY;
	e->clock_drop_pct = -1;
	e->temp_c = e->power_w = e->fan_pct = NAN;
	if (e->kind == SIM_EP_XID || e->kind == SIM_EP_ECC) {
		if (!get_num(c, o, path, "at_s", true, 0, 1e9, &e->start))
			return false;
		e->end = e->start;
	} else {
		if (!get_num(c, o, path, "start_s", true, 0, 1e9, &e->start) ||
		    !get_num(c, o, path, "end_s", false, 0, 1e9, &e->end))
			return false;
		if (e->end <= e->start)
			return fail(c, path, "end_s", "end_s must be after start_s (%g)", e->start);
	}
	switch (e->kind) {
	case SIM_EP_THROTTLE:
		if (!parse_reasons(c, o, path, &e->reasons) ||
		    !get_num(c, o, path, "sm_clock_mhz", false, 1, g->clk_max_sm,
		             &e->sm_clock_mhz) ||
		    !get_num(c, o, path, "clock_drop_pct", false, 0, 100, &e->clock_drop_pct) ||
		    !get_num(c, o, path, "temp_c", false, 0, g->t_shutdown, &e->temp_c) ||
		    !get_num(c, o, path, "power_w", false, 0, g->power_max * 1.5, &e->power_w) ||
		    !get_num(c, o, path, "fan_pct", false, 0, 100, &e->fan_pct))
			return false;
		if (e->sm_clock_mhz > 0 && e->clock_drop_pct >= 0)
			return fail(c, path, "clock_drop_pct",
			            "give sm_clock_mhz or clock_drop_pct, not both");
		if (!isnan(e->fan_pct) && !g->has_fan)
			return fail(c, path, "fan_pct",
			            "this GPU has no fan (add a \"fan\" object)");
		return true;
	case SIM_EP_PCIE_REPLAY:
		return get_num(c, o, path, "per_s", true, 0.000001, 1e7, &e->per_s);
	case SIM_EP_DOWNTRAIN:
		if (!get_uns(c, o, path, "gen", true, 1, g->pcie_max_gen, &e->gen) ||
		    !get_uns(c, o, path, "width", true, 1, g->pcie_max_width, &e->width))
			return false;
		return true;
	case SIM_EP_XID:
		return get_uns(c, o, path, "code", true, 1, 1000000, &e->xid);
	case SIM_EP_ECC:
		if (!g->has_ecc)
			return fail(c, path, "kind",
			            "ECC episodes need an \"ecc\" object on the GPU");
		if (!get_uns(c, o, path, "sbe", false, 0, 1000000, &e->sbe) ||
		    !get_uns(c, o, path, "dbe", false, 0, 1000000, &e->dbe))
			return false;
		if (e->sbe + e->dbe == 0)
			return fail(c, path, NULL, "an ECC episode needs sbe or dbe above 0");
		return true;
	}
	return true;
}

/* "0-55,112-167" */
static bool parse_cpulist(const char *s, unsigned long *mask)
{
	memset(mask, 0, SIM_AFFINITY_WORDS * sizeof *mask);
	const unsigned maxcpu = SIM_AFFINITY_WORDS * 64;
	const char *p = s;
	if (!*p)
		return false;
	while (*p) {
		char *end;
		if (*p < '0' || *p > '9')
			return false;
		unsigned long a = strtoul(p, &end, 10), b = a;
		p = end;
		if (*p == '-') {
			if (p[1] < '0' || p[1] > '9')
				return false;
			b = strtoul(p + 1, &end, 10);
			p = end;
		}
		if (a > b || b >= maxcpu)
			return false;
		for (unsigned long k = a; k <= b; k++)
			mask[k / 64] |= 1UL << (k % 64);
		if (*p == ',')
			p++;
		else if (*p)
			return false;
	}
	return true;
}

static bool parse_pages(pctx *c, json_t *o, const char *path, const char *key,
                        unsigned long long *pages, int *n)
{
	json_t *arr;
	if (!get_arr(c, o, path, key, false, SIM_MAX_PAGES, &arr))
		return false;
	*n = 0;
	if (!arr)
		return true;
	size_t i;
	json_t *v;
	json_array_foreach(arr, i, v)
	{
		char ep[330];
		snprintf(ep, sizeof ep, "%.200s.%s[%zu]", path, key, i);
		unsigned long long a;
		if (json_is_integer(v) && json_integer_value(v) >= 0) {
			a = (unsigned long long)json_integer_value(v);
		} else if (json_is_string(v)) {
			const char *s = json_string_value(v);
			const char *h = (!strncmp(s, "0x", 2) || !strncmp(s, "0X", 2)) ? s + 2 : s;
			size_t len = strlen(h);
			if (!len || len > 16 || strspn(h, "0123456789abcdefABCDEF") != len)
				return fail(c, ep, NULL, "\"%s\" is not a hex page address", s);
			a = strtoull(h, NULL, 16);
		} else {
			return fail(c, ep, NULL, "expected a page address, got %s", tname(v));
		}
		pages[(*n)++] = a;
	}
	return true;
}

static bool parse_pci(pctx *c, json_t *o, const char *path, sim_gpu *g)
{
	static const char *const keys[] = {
	    "bus_id",    "device_id",   "subsystem_id",   "gen",      "width",       "max_gen",
	    "max_width", "gpu_max_gen", "replay_counter", "switches", "host_bridge", NULL};
	static const long long widths[] = {1, 2, 4, 8, 12, 16, 32};
	if (!check_keys(c, o, path, keys) || !get_bus_id(c, o, path, "bus_id", true, &g->pci) ||
	    !get_hex32(c, o, path, "device_id", true, &g->pci.device_id) ||
	    !get_hex32(c, o, path, "subsystem_id", false, &g->pci.subsystem_id) ||
	    !get_uns(c, o, path, "max_gen", true, 1, 6, &g->pcie_max_gen) ||
	    !get_uns(c, o, path, "max_width", true, 1, 32, &g->pcie_max_width))
		return false;
	g->pcie_gen = g->pcie_max_gen;
	g->pcie_width = g->pcie_max_width;
	g->pcie_gpu_max_gen = g->pcie_max_gen;
	if (!get_uns(c, o, path, "gen", false, 1, g->pcie_max_gen, &g->pcie_gen) ||
	    !get_uns(c, o, path, "width", false, 1, g->pcie_max_width, &g->pcie_width) ||
	    !get_uns(c, o, path, "gpu_max_gen", false, g->pcie_max_gen, 6, &g->pcie_gpu_max_gen) ||
	    !get_ull(c, o, path, "replay_counter", false, 0, 0xFFFFFFFFLL, &g->replay_initial))
		return false;
	const char *wkeys[] = {"width", "max_width"};
	unsigned wv[] = {g->pcie_width, g->pcie_max_width};
	for (int k = 0; k < 2; k++) {
		bool ok = false;
		for (size_t q = 0; q < sizeof widths / sizeof *widths; q++)
			ok |= widths[q] == wv[k];
		if (!ok)
			return fail(c, path, wkeys[k],
			            "%u is not a PCIe link width (1, 2, 4, 8, 12, 16, 32)", wv[k]);
	}
	long long hb = g->numa_node >= 0 ? g->numa_node : 0;
	if (!get_int(c, o, path, "host_bridge", false, 0, 1024, &hb))
		return false;
	g->host_bridge = (int)hb;
	json_t *sw;
	if (!get_arr(c, o, path, "switches", false, SIM_MAX_SWITCHES, &sw))
		return false;
	g->n_switches = 0;
	size_t i;
	json_t *v;
	json_array_foreach(sw, i, v)
	{
		char ep[330];
		snprintf(ep, sizeof ep, "%.200s.switches[%zu]", path, i);
		if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) > 31)
			return fail(c, ep, NULL, "expected a switch name (1 to 31 characters)");
		snprintf(g->switches[g->n_switches++], sizeof g->switches[0], "%s",
		         json_string_value(v));
	}
	return true;
}

static bool parse_memory(pctx *c, json_t *o, const char *path, sim_gpu *g)
{
	static const char *const keys[] = {"total_mib", "reserved_mib",  "used_mib",
	                                   "bar1_mib",  "bar1_used_mib", NULL};
	g->bar1_total = 256;
	g->bar1_used = 1;
	if (!check_keys(c, o, path, keys) ||
	    !get_ull(c, o, path, "total_mib", true, 1, 1LL << 30, &g->mem_total) ||
	    !get_ull(c, o, path, "reserved_mib", false, 0, (long long)g->mem_total - 1,
	             &g->mem_reserved) ||
	    !get_ull(c, o, path, "used_mib", false, 0, (long long)(g->mem_total - g->mem_reserved),
	             &g->mem_used) ||
	    !get_ull(c, o, path, "bar1_mib", false, 1, 1LL << 30, &g->bar1_total) ||
	    !get_ull(c, o, path, "bar1_used_mib", false, 0, (long long)g->bar1_total,
	             &g->bar1_used))
		return false;
	return true;
}

static bool parse_power(pctx *c, json_t *o, const char *path, sim_gpu *g)
{
	static const char *const keys[] = {
	    "limit_w", "default_limit_w", "min_limit_w", "max_limit_w", "idle_w", "busy_w", NULL};
	if (!check_keys(c, o, path, keys) ||
	    !get_num(c, o, path, "min_limit_w", true, 1, 10000, &g->power_min) ||
	    !get_num(c, o, path, "max_limit_w", true, g->power_min, 10000, &g->power_max) ||
	    !get_num(c, o, path, "limit_w", true, g->power_min, g->power_max, &g->power_limit))
		return false;
	g->power_default = g->power_limit;
	if (!get_num(c, o, path, "default_limit_w", false, g->power_min, g->power_max,
	             &g->power_default) ||
	    !get_num(c, o, path, "idle_w", true, 1, g->power_limit, &g->power_idle) ||
	    !get_num(c, o, path, "busy_w", true, g->power_idle, g->power_max * 1.5, &g->power_busy))
		return false;
	return true;
}

static bool parse_clocks(pctx *c, json_t *o, const char *path, sim_gpu *g)
{
	static const char *const keys[] = {"max_sm_mhz",    "max_mem_mhz",  "max_graphics_mhz",
	                                   "max_video_mhz", "idle_sm_mhz",  "idle_mem_mhz",
	                                   "busy_sm_mhz",   "applications", NULL};
	if (!check_keys(c, o, path, keys) ||
	    !get_uns(c, o, path, "max_sm_mhz", true, 1, 20000, &g->clk_max_sm) ||
	    !get_uns(c, o, path, "max_mem_mhz", true, 1, 50000, &g->clk_max_mem) ||
	    !get_uns(c, o, path, "idle_sm_mhz", true, 1, g->clk_max_sm, &g->clk_idle_sm))
		return false;
	g->clk_max_gr = g->clk_max_sm;
	g->clk_idle_mem = g->clk_max_mem;
	g->clk_busy_sm = g->clk_max_sm;
	json_t *app;
	if (!get_uns(c, o, path, "max_graphics_mhz", false, 1, 20000, &g->clk_max_gr) ||
	    !get_uns(c, o, path, "max_video_mhz", false, 1, 20000, &g->clk_max_video) ||
	    !get_uns(c, o, path, "idle_mem_mhz", false, 1, g->clk_max_mem, &g->clk_idle_mem) ||
	    !get_obj(c, o, path, "applications", false, &app))
		return false;
	if (app) {
		static const char *const akeys[] = {"graphics_mhz", "mem_mhz", NULL};
		char sub[300];
		snprintf(sub, sizeof sub, "%.200s.applications", path);
		if (!check_keys(c, app, sub, akeys) ||
		    !get_uns(c, app, sub, "graphics_mhz", true, 1, g->clk_max_gr, &g->app_gr) ||
		    !get_uns(c, app, sub, "mem_mhz", true, 1, g->clk_max_mem, &g->app_mem))
			return false;
		g->has_app_clocks = true;
		g->clk_busy_sm = g->app_gr < g->clk_max_sm ? g->app_gr : g->clk_max_sm;
	}
	return get_uns(c, o, path, "busy_sm_mhz", false, g->clk_idle_sm, g->clk_max_sm,
	               &g->clk_busy_sm);
}

static bool parse_thermal(pctx *c, json_t *o, const char *path, sim_gpu *g)
{
	static const char *const keys[] = {"idle_c",    "busy_c",    "slowdown_c",     "shutdown_c",
	                                   "gpu_max_c", "mem_max_c", "memory_delta_c", NULL};
	long long gmax = -1, mmax = -1;
	if (!check_keys(c, o, path, keys) ||
	    !get_uns(c, o, path, "shutdown_c", true, 30, 150, &g->t_shutdown) ||
	    !get_uns(c, o, path, "slowdown_c", true, 20, g->t_shutdown - 1, &g->t_slowdown) ||
	    !get_num(c, o, path, "idle_c", true, 0, g->t_shutdown - 1, &g->temp_idle) ||
	    !get_num(c, o, path, "busy_c", true, g->temp_idle, g->t_shutdown - 1, &g->temp_busy) ||
	    !get_int(c, o, path, "gpu_max_c", false, 20, g->t_shutdown, &gmax) ||
	    !get_int(c, o, path, "mem_max_c", false, 20, 150, &mmax))
		return false;
	g->t_gpu_max = (int)gmax;
	g->t_mem_max = (int)mmax;
	g->has_mem_temp = member(o, "memory_delta_c") != NULL;
	return get_num(c, o, path, "memory_delta_c", false, -50, 50, &g->mem_temp_delta);
}

static bool parse_reliability(pctx *c, json_t *gj, const char *path, sim_gpu *g)
{
	char sub[300];
	json_t *o;
	if (!get_obj(c, gj, path, "ecc", false, &o))
		return false;
	if (o) {
		static const char *const keys[] = {"enabled",       "sbe_volatile",  "dbe_volatile",
		                                   "sbe_aggregate", "dbe_aggregate", NULL};
		snprintf(sub, sizeof sub, "%.200s.ecc", path);
		g->has_ecc = g->ecc_enabled = true;
		if (!check_keys(c, o, sub, keys) ||
		    !get_bool(c, o, sub, "enabled", false, &g->ecc_enabled) ||
		    !get_ull(c, o, sub, "sbe_volatile", false, 0, 1LL << 40, &g->ecc_sbe_vol) ||
		    !get_ull(c, o, sub, "dbe_volatile", false, 0, 1LL << 40, &g->ecc_dbe_vol) ||
		    !get_ull(c, o, sub, "sbe_aggregate", false, 0, 1LL << 40, &g->ecc_sbe_agg) ||
		    !get_ull(c, o, sub, "dbe_aggregate", false, 0, 1LL << 40, &g->ecc_dbe_agg))
			return false;
		if (g->ecc_sbe_agg < g->ecc_sbe_vol || g->ecc_dbe_agg < g->ecc_dbe_vol)
			return fail(
			    c, sub, NULL,
			    "aggregate counts include the volatile ones, so cannot be lower");
	}
	if (!get_obj(c, gj, path, "retired_pages", false, &o))
		return false;
	if (o) {
		static const char *const keys[] = {"sbe", "dbe", "pending", NULL};
		snprintf(sub, sizeof sub, "%.200s.retired_pages", path);
		if (!g->has_ecc)
			return fail(c, path, "retired_pages",
			            "retired pages need an \"ecc\" object");
		g->has_retired = true;
		if (!check_keys(c, o, sub, keys) ||
		    !parse_pages(c, o, sub, "sbe", g->retired_sbe, &g->n_retired_sbe) ||
		    !parse_pages(c, o, sub, "dbe", g->retired_dbe, &g->n_retired_dbe) ||
		    !get_bool(c, o, sub, "pending", false, &g->retired_pending))
			return false;
	}
	if (!get_obj(c, gj, path, "remapped_rows", false, &o))
		return false;
	if (o) {
		static const char *const keys[] = {"correctable", "uncorrectable", "pending",
		                                   "failure", NULL};
		snprintf(sub, sizeof sub, "%.200s.remapped_rows", path);
		if (!g->has_ecc)
			return fail(c, path, "remapped_rows",
			            "remapped rows need an \"ecc\" object");
		g->has_remap = true;
		if (!check_keys(c, o, sub, keys) ||
		    !get_uns(c, o, sub, "correctable", false, 0, 100000, &g->remap_corr) ||
		    !get_uns(c, o, sub, "uncorrectable", false, 0, 100000, &g->remap_unc) ||
		    !get_bool(c, o, sub, "pending", false, &g->remap_pending) ||
		    !get_bool(c, o, sub, "failure", false, &g->remap_failure))
			return false;
	}
	return true;
}

static bool parse_nvlink(pctx *c, json_t *gj, const char *path, sim_gpu *g)
{
	json_t *arr;
	if (!get_arr(c, gj, path, "nvlink", false, SIM_MAX_LINKS, &arr))
		return false;
	if (!arr)
		return true;
	static const char *const keys[] = {"links", "gpu", "bus_id", "device_id", "state", NULL};
	static const char *const states[] = {"up", "down", NULL};
	g->has_nvlink = true;
	size_t i;
	json_t *o;
	json_array_foreach(arr, i, o)
	{
		char sub[300];
		snprintf(sub, sizeof sub, "%.200s.nvlink[%zu]", path, i);
		if (!json_is_object(o))
			return fail(c, sub, NULL, "expected an object, got %s", tname(o));
		long long links = 0, gpu = -1;
		int state = 0;
		sim_link l;
		memset(&l, 0, sizeof l);
		l.remote.device_id = 0x22A310DE; /* NVSwitch (third generation) */
		if (!check_keys(c, o, sub, keys) ||
		    !get_int(c, o, sub, "links", true, 1, SIM_MAX_LINKS, &links) ||
		    !get_int(c, o, sub, "gpu", false, 0, SIM_MAX_GPUS - 1, &gpu) ||
		    !get_bus_id(c, o, sub, "bus_id", false, &l.remote) ||
		    !get_hex32(c, o, sub, "device_id", false, &l.remote.device_id) ||
		    !get_enum(c, o, sub, "state", false, states, NULL, &state))
			return false;
		bool has_bus = member(o, "bus_id") != NULL;
		if ((gpu >= 0) == has_bus)
			return fail(c, sub, NULL,
			            "give the remote end as \"gpu\" (an index) or \"bus_id\" (an "
			            "NVSwitch)");
		if (gpu >= 0 && member(o, "device_id"))
			return fail(c, sub, "device_id", "device_id is taken from the remote GPU");
		if (gpu == g->index)
			return fail(c, sub, "gpu", "a GPU cannot link to itself");
		l.remote_gpu = (int)gpu;
		l.remote_type = gpu >= 0 ? SIM_LINK_REMOTE_GPU : SIM_LINK_REMOTE_SWITCH;
		l.up = state == 0;
		if (g->n_links + links > SIM_MAX_LINKS)
			return fail(c, sub, "links", "more than %d NVLinks on one GPU",
			            SIM_MAX_LINKS);
		for (long long k = 0; k < links; k++)
			g->links[g->n_links++] = l;
	}
	return true;
}

static bool parse_behaviour(pctx *c, json_t *gj, const char *path, sim_gpu *g)
{
	json_t *o, *arr;
	char sub[300];
	memset(&g->idle, 0, sizeof g->idle);
	if (!get_obj(c, gj, path, "idle", false, &o))
		return false;
	if (o) {
		snprintf(sub, sizeof sub, "%.200s.idle", path);
		sim_profile zero;
		memset(&zero, 0, sizeof zero);
		if (!parse_profile(c, o, sub, &zero, &g->idle))
			return false;
	}
	g->repeat = 0;
	g->lost_after = INFINITY;
	if (!get_num(c, gj, path, "repeat_s", false, 0.001, 1e9, &g->repeat) ||
	    !get_num(c, gj, path, "lost_after_s", false, 0, 1e9, &g->lost_after))
		return false;
	if (!get_arr(c, gj, path, "load", false, SIM_MAX_SEGMENTS, &arr))
		return false;
	size_t i;
	json_t *v;
	if (arr && json_array_size(arr)) {
		g->segments = calloc(json_array_size(arr), sizeof *g->segments);
		if (!g->segments)
			return fail(c, path, "load", "out of memory");
		json_array_foreach(arr, i, v)
		{
			snprintf(sub, sizeof sub, "%.200s.load[%zu]", path, i);
			sim_segment *s = &g->segments[i];
			if (!parse_segment(c, v, sub, g, s))
				return false;
			g->n_segments++;
			if (i > 0 && s->start < g->segments[i - 1].end)
				return fail(c, sub, "start_s",
				            "load segments must be in order and must not overlap "
				            "(the previous one ends at %g s)",
				            g->segments[i - 1].end);
			if (g->repeat > 0 && s->end > g->repeat && !isinf(s->end))
				return fail(c, sub, "end_s", "ends after repeat_s (%g)", g->repeat);
			if (g->repeat > 0 && s->start >= g->repeat)
				return fail(c, sub, "start_s", "starts after repeat_s (%g)",
				            g->repeat);
			if (g->repeat > 0 && isinf(s->end))
				s->end = g->repeat;
			if (s->shape == SIM_SHAPE_RAMP && s->ramp > s->end - s->start)
				s->ramp = s->end - s->start;
		}
	}
	if (!get_arr(c, gj, path, "episodes", false, SIM_MAX_EPISODES, &arr))
		return false;
	if (arr && json_array_size(arr)) {
		g->episodes = calloc(json_array_size(arr), sizeof *g->episodes);
		if (!g->episodes)
			return fail(c, path, "episodes", "out of memory");
		json_array_foreach(arr, i, v)
		{
			snprintf(sub, sizeof sub, "%.200s.episodes[%zu]", path, i);
			sim_episode *e = &g->episodes[i];
			if (!parse_episode(c, v, sub, g, e))
				return false;
			g->n_episodes++;
			if (g->repeat > 0 &&
			    (e->start >= g->repeat || (!isinf(e->end) && e->end > g->repeat)))
				return fail(c, sub, NULL, "lies outside repeat_s (%g)", g->repeat);
			if (g->repeat > 0 && isinf(e->end))
				e->end = g->repeat;
		}
	}
	return true;
}

static const char *const gpu_keys[] = {"name",
                                       "architecture",
                                       "uuid",
                                       "serial",
                                       "vbios",
                                       "pci",
                                       "minor_number",
                                       "memory",
                                       "power",
                                       "clocks",
                                       "thermal",
                                       "fan",
                                       "ecc",
                                       "retired_pages",
                                       "remapped_rows",
                                       "compute_capability",
                                       "persistence_mode",
                                       "compute_mode",
                                       "mig",
                                       "numa_node",
                                       "cpu_affinity",
                                       "nvlink",
                                       "nvenc",
                                       "nvdec",
                                       "gpm",
                                       "pstate",
                                       "util_period_ms",
                                       "noise",
                                       "idle",
                                       "load",
                                       "episodes",
                                       "repeat_s",
                                       "lost_after_s",
                                       NULL};

static bool parse_identity(pctx *c, json_t *gj, const char *path, sim_gpu *g)
{
	static const char *const archs[] = {"kepler", "maxwell", "pascal", "volta",     "turing",
	                                    "ampere", "ada",     "hopper", "blackwell", NULL};
	static const int arch_ids[] = {
	    NVML_DEVICE_ARCH_KEPLER, NVML_DEVICE_ARCH_MAXWELL, NVML_DEVICE_ARCH_PASCAL,
	    NVML_DEVICE_ARCH_VOLTA,  NVML_DEVICE_ARCH_TURING,  NVML_DEVICE_ARCH_AMPERE,
	    NVML_DEVICE_ARCH_ADA,    NVML_DEVICE_ARCH_HOPPER,  NVML_DEVICE_ARCH_BLACKWELL};
	int arch = 0;
	if (!get_str(c, gj, path, "name", true, 95, g->name, sizeof g->name) ||
	    !get_enum(c, gj, path, "architecture", true, archs, arch_ids, &arch) ||
	    !get_str(c, gj, path, "uuid", false, 79, g->uuid, sizeof g->uuid) ||
	    !get_str(c, gj, path, "serial", false, 29, g->serial, sizeof g->serial) ||
	    !get_str(c, gj, path, "vbios", true, 31, g->vbios, sizeof g->vbios))
		return false;
	g->arch = (unsigned)arch;
	if (!*g->name)
		return fail(c, path, "name", "the name cannot be empty");
	uint64_t h1 = sim_hash(c->seed, 1, (uint64_t)g->index, 0);
	uint64_t h2 = sim_hash(c->seed, 2, (uint64_t)g->index, 0);
	if (!*g->uuid)
		snprintf(g->uuid, sizeof g->uuid, "GPU-%08x-%04x-%04x-%04x-%012llx",
		         (unsigned)(h1 >> 32), (unsigned)(h1 >> 16) & 0xFFFF,
		         0x4000 | ((unsigned)h1 & 0x0FFF), 0x8000 | ((unsigned)(h2 >> 48) & 0x3FFF),
		         (unsigned long long)(h2 & 0xFFFFFFFFFFFFULL));
	else if (strncmp(g->uuid, "GPU-", 4) || strlen(g->uuid) < 8)
		return fail(c, path, "uuid", "a GPU UUID starts with \"GPU-\"");
	/* An empty serial means the board reports none (GeForce); absent means derive one. */
	g->has_serial = !member(gj, "serial") || *g->serial;
	if (!member(gj, "serial"))
		snprintf(g->serial, sizeof g->serial, "165%010llu",
		         (unsigned long long)(h2 % 10000000000ULL));
	long long minor = g->index;
	if (!get_int(c, gj, path, "minor_number", false, 0, 255, &minor))
		return false;
	g->minor = (unsigned)minor;
	json_t *cc;
	if (!get_arr(c, gj, path, "compute_capability", true, 2, &cc))
		return false;
	if (json_array_size(cc) != 2 || !json_is_integer(json_array_get(cc, 0)) ||
	    !json_is_integer(json_array_get(cc, 1)) ||
	    json_integer_value(json_array_get(cc, 0)) < 1 ||
	    json_integer_value(json_array_get(cc, 0)) > 20 ||
	    json_integer_value(json_array_get(cc, 1)) < 0 ||
	    json_integer_value(json_array_get(cc, 1)) > 9)
		return fail(c, path, "compute_capability", "expected [major, minor], like [9, 0]");
	g->cc_major = (int)json_integer_value(json_array_get(cc, 0));
	g->cc_minor = (int)json_integer_value(json_array_get(cc, 1));
	return true;
}

/* mig.devices: the MIG devices of a GPU in MIG mode (one compute instance per GPU instance). */
static bool parse_mig_devices(pctx *c, json_t *o, const char *path, sim_gpu *g)
{
	json_t *arr;
	if (!get_arr(c, o, path, "devices", false, SIM_MAX_MIG, &arr))
		return false;
	g->n_mig = 0;
	if (!arr)
		return true;
	if (!g->mig_current)
		return fail(c, path, "devices", "MIG devices need \"current\": true");
	static const char *const keys[] = {
	    "profile",  "uuid", "gpu_instance", "compute_instance", "sm_count", "copy_engines",
	    "decoders", "jpeg", "ofa",          "memory_mib",       "used_mib", "bar1_mib",
	    NULL};
	for (size_t k = 0; k < json_array_size(arr); k++) {
		json_t *d = json_array_get(arr, k);
		char sub[256];
		snprintf(sub, sizeof sub, "%.200s.devices[%zu]", path, k);
		if (!json_is_object(d))
			return fail(c, sub, NULL, "expected an object, got %s", tname(d));
		sim_mig *m = &g->mig[k];
		memset(m, 0, sizeof *m);
		if (!check_keys(c, d, sub, keys) ||
		    !get_str(c, d, sub, "profile", true, 15, m->profile, sizeof m->profile) ||
		    !get_str(c, d, sub, "uuid", true, 95, m->uuid, sizeof m->uuid) ||
		    !get_uns(c, d, sub, "gpu_instance", true, 0, 64, &m->gi) ||
		    !get_uns(c, d, sub, "compute_instance", false, 0, 64, &m->ci) ||
		    !get_uns(c, d, sub, "sm_count", true, 1, 1024, &m->sm_count) ||
		    !get_uns(c, d, sub, "copy_engines", false, 0, 64, &m->ce_count) ||
		    !get_uns(c, d, sub, "decoders", false, 0, 64, &m->dec_count) ||
		    !get_uns(c, d, sub, "jpeg", false, 0, 64, &m->jpg_count) ||
		    !get_uns(c, d, sub, "ofa", false, 0, 64, &m->ofa_count) ||
		    !get_ull(c, d, sub, "memory_mib", true, 1, 1LL << 30, &m->mem_total) ||
		    !get_ull(c, d, sub, "used_mib", false, 0, (long long)m->mem_total,
		             &m->mem_used) ||
		    !get_ull(c, d, sub, "bar1_mib", false, 0, 1LL << 30, &m->bar1_total))
			return false;
		for (size_t j = 0; j < k; j++)
			if (g->mig[j].gi == m->gi)
				return fail(c, sub, "gpu_instance",
				            "GPU instance %u is listed twice", m->gi);
		g->n_mig++;
	}
	return true;
}

static bool parse_modes(pctx *c, json_t *gj, const char *path, sim_gpu *g)
{
	static const char *const cmodes[] = {"default", "exclusive_thread", "prohibited",
	                                     "exclusive_process", NULL};
	json_t *o;
	char sub[300];
	g->persistence = true;
	g->compute_mode = NVML_COMPUTEMODE_DEFAULT;
	g->nvenc = g->nvdec = true;
	g->gpm = g->arch >= NVML_DEVICE_ARCH_HOPPER;
	long long numa = -1;
	if (!get_bool(c, gj, path, "persistence_mode", false, &g->persistence) ||
	    !get_enum(c, gj, path, "compute_mode", false, cmodes, NULL, &g->compute_mode) ||
	    !get_bool(c, gj, path, "nvenc", false, &g->nvenc) ||
	    !get_bool(c, gj, path, "nvdec", false, &g->nvdec) ||
	    !get_bool(c, gj, path, "gpm", false, &g->gpm) ||
	    !get_int(c, gj, path, "numa_node", false, 0, 1023, &numa))
		return false;
	if (g->gpm && g->arch < NVML_DEVICE_ARCH_HOPPER)
		return fail(c, path, "gpm", "GPM needs a Hopper or newer architecture");
	g->numa_node = (int)numa;
	char cpus[1024] = "";
	if (!get_str(c, gj, path, "cpu_affinity", false, sizeof cpus - 1, cpus, sizeof cpus))
		return false;
	if (*cpus) {
		if (!parse_cpulist(cpus, g->affinity))
			return fail(c, path, "cpu_affinity",
			            "\"%s\" is not a CPU list like \"0-31,64-95\" (CPUs below %d)",
			            cpus, SIM_AFFINITY_WORDS * 64);
		g->has_affinity = true;
	}
	if (!get_obj(c, gj, path, "mig", false, &o))
		return false;
	if (o) {
		static const char *const keys[] = {"current", "pending", "devices", NULL};
		snprintf(sub, sizeof sub, "%.200s.mig", path);
		g->has_mig = true;
		if (!check_keys(c, o, sub, keys) ||
		    !get_bool(c, o, sub, "current", true, &g->mig_current))
			return false;
		g->mig_pending = g->mig_current;
		if (!get_bool(c, o, sub, "pending", false, &g->mig_pending) ||
		    !parse_mig_devices(c, o, sub, g))
			return false;
	}
	if (!get_obj(c, gj, path, "fan", false, &o))
		return false;
	if (o) {
		static const char *const keys[] = {"idle_pct", "busy_pct", NULL};
		snprintf(sub, sizeof sub, "%.200s.fan", path);
		g->has_fan = true;
		if (!check_keys(c, o, sub, keys) ||
		    !get_num(c, o, sub, "idle_pct", true, 0, 100, &g->fan_idle) ||
		    !get_num(c, o, sub, "busy_pct", true, g->fan_idle, 100, &g->fan_busy))
			return false;
	}
	if (!get_obj(c, gj, path, "pstate", false, &o))
		return false;
	g->idle_pstate = g->busy_pstate = 0;
	if (o) {
		static const char *const keys[] = {"idle", "busy", NULL};
		long long idle = 0, busy = 0;
		snprintf(sub, sizeof sub, "%.200s.pstate", path);
		if (!check_keys(c, o, sub, keys) ||
		    !get_int(c, o, sub, "idle", false, 0, 15, &idle) ||
		    !get_int(c, o, sub, "busy", false, 0, idle, &busy))
			return false;
		g->idle_pstate = (int)idle;
		g->busy_pstate = (int)busy;
	}
	double period_ms = 1000.0 / 6;
	if (!get_num(c, gj, path, "util_period_ms", false, 100, 1000, &period_ms))
		return false;
	g->util_period = period_ms / 1000.0;
	if (!get_obj(c, gj, path, "noise", false, &o))
		return false;
	if (o) {
		static const char *const keys[] = {"util", "power_w", "temp_c", NULL};
		snprintf(sub, sizeof sub, "%.200s.noise", path);
		if (!check_keys(c, o, sub, keys) ||
		    !get_num(c, o, sub, "util", false, 0, 50, &g->noise_util) ||
		    !get_num(c, o, sub, "power_w", false, 0, 1000, &g->noise_power) ||
		    !get_num(c, o, sub, "temp_c", false, 0, 20, &g->noise_temp))
			return false;
	}
	return true;
}

static bool parse_gpu(pctx *c, json_t *gj, const char *path, sim_gpu *g)
{
	json_t *o;
	char sub[300];
	if (!check_keys(c, gj, path, gpu_keys) || !parse_identity(c, gj, path, g) ||
	    !parse_modes(c, gj, path, g))
		return false;
	if (!get_obj(c, gj, path, "pci", true, &o))
		return false;
	snprintf(sub, sizeof sub, "%.200s.pci", path);
	if (!parse_pci(c, o, sub, g))
		return false;
	if (!get_obj(c, gj, path, "memory", true, &o))
		return false;
	snprintf(sub, sizeof sub, "%.200s.memory", path);
	if (!parse_memory(c, o, sub, g))
		return false;
	if (!get_obj(c, gj, path, "power", true, &o))
		return false;
	snprintf(sub, sizeof sub, "%.200s.power", path);
	if (!parse_power(c, o, sub, g))
		return false;
	if (!get_obj(c, gj, path, "clocks", true, &o))
		return false;
	snprintf(sub, sizeof sub, "%.200s.clocks", path);
	if (!parse_clocks(c, o, sub, g))
		return false;
	if (!get_obj(c, gj, path, "thermal", true, &o))
		return false;
	snprintf(sub, sizeof sub, "%.200s.thermal", path);
	if (!parse_thermal(c, o, sub, g))
		return false;
	return parse_reliability(c, gj, path, g) && parse_nvlink(c, gj, path, g) &&
	       parse_behaviour(c, gj, path, g);
}

/* gpu_defaults under the GPU's own keys; objects merge key by key. */
static json_t *merge_defaults(json_t *dflt, json_t *gpu)
{
	if (!dflt)
		return json_incref(gpu);
	json_t *out = json_deep_copy(dflt);
	if (!out)
		return NULL;
	const char *k;
	json_t *v;
	json_object_foreach(gpu, k, v)
	{
		json_t *d = json_object_get(out, k);
		json_t *merged = (json_is_object(d) && json_is_object(v)) ? merge_defaults(d, v)
		                                                          : json_incref(v);
		if (!merged || json_object_set_new(out, k, merged)) {
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

static bool parse_processes(pctx *c, json_t *root, sim_scenario *s)
{
	static const char *const keys[] = {"gpu",     "pid",  "name",    "user",  "used_mib",
	                                   "sm_util", "type", "start_s", "end_s", NULL};
	static const char *const types[] = {"compute", "graphics", "compute+graphics", NULL};
	static const int type_bits[] = {SIM_PROC_COMPUTE, SIM_PROC_GRAPHICS,
	                                SIM_PROC_COMPUTE | SIM_PROC_GRAPHICS};
	json_t *arr;
	if (!get_arr(c, root, "", "processes", false, SIM_MAX_PROCS, &arr))
		return false;
	if (!arr || !json_array_size(arr))
		return true;
	s->procs = calloc(json_array_size(arr), sizeof *s->procs);
	if (!s->procs)
		return fail(c, "processes", NULL, "out of memory");
	size_t i;
	json_t *o;
	json_array_foreach(arr, i, o)
	{
		char path[64];
		snprintf(path, sizeof path, "processes[%zu]", i);
		if (!json_is_object(o))
			return fail(c, path, NULL, "expected an object, got %s", tname(o));
		sim_fproc *p = &s->procs[i];
		long long gpu = 0, pid = 0;
		p->type = SIM_PROC_COMPUTE;
		p->end = INFINITY;
		snprintf(p->name, sizeof p->name, "python3");
		if (!check_keys(c, o, path, keys) ||
		    !get_int(c, o, path, "gpu", true, 0, s->n_gpus - 1, &gpu) ||
		    !get_int(c, o, path, "pid", true, 1, 4194304, &pid) ||
		    !get_str(c, o, path, "name", false, 63, p->name, sizeof p->name) ||
		    !get_str(c, o, path, "user", false, 31, p->user, sizeof p->user) ||
		    !get_ull(c, o, path, "used_mib", true, 0, 1LL << 30, &p->used_mib) ||
		    !get_num(c, o, path, "sm_util", false, 0, 100, &p->sm_util) ||
		    !get_enum(c, o, path, "type", false, types, type_bits, &p->type) ||
		    !get_num(c, o, path, "start_s", false, 0, 1e9, &p->start) ||
		    !get_num(c, o, path, "end_s", false, 0, 1e9, &p->end))
			return false;
		if (p->end <= p->start)
			return fail(c, path, "end_s", "end_s must be after start_s (%g)", p->start);
		p->gpu = (int)gpu;
		p->pid = (unsigned)pid;
		s->n_procs++;
		for (int k = 0; k < s->n_procs - 1; k++)
			if (s->procs[k].pid == p->pid && s->procs[k].gpu == p->gpu)
				return fail(c, path, "pid", "pid %u is already listed on GPU %d",
				            p->pid, p->gpu);
		/* Everything the scenario holds at once must fit in the GPU. */
		const sim_gpu *g = &s->gpus[p->gpu];
		unsigned long long held = g->mem_reserved + g->mem_used;
		for (int k = 0; k < s->n_procs; k++)
			if (s->procs[k].gpu == p->gpu)
				held += s->procs[k].used_mib;
		if (held > g->mem_total)
			return fail(c, path, "used_mib",
			            "GPU %d would hold %llu MiB, more than its %llu MiB", p->gpu,
			            held, g->mem_total);
	}
	return true;
}

static bool parse_driver(pctx *c, json_t *root, sim_scenario *s)
{
	static const char *const keys[] = {"version", "cuda_version", "nvml_version",
	                                   "pcie_throughput_delay_ms", NULL};
	json_t *o;
	long long cuda = 0;
	if (!get_obj(c, root, "", "driver", true, &o) || !check_keys(c, o, "driver", keys) ||
	    !get_str(c, o, "driver", "version", true, 79, s->driver_version,
	             sizeof s->driver_version) ||
	    !get_int(c, o, "driver", "cuda_version", true, 1000, 99990, &cuda) ||
	    !get_str(c, o, "driver", "nvml_version", true, 79, s->nvml_version,
	             sizeof s->nvml_version))
		return false;
	s->cuda_version = (int)cuda;
	s->pcie_delay_ms = 20;
	return get_num(c, o, "driver", "pcie_throughput_delay_ms", false, 0, 1000,
	               &s->pcie_delay_ms);
}

/* NVLink ends that name a GPU take that GPU's PCI identity; ids must be unique. */
static bool cross_check(pctx *c, sim_scenario *s)
{
	for (int i = 0; i < s->n_gpus; i++) {
		sim_gpu *g = &s->gpus[i];
		char path[32];
		snprintf(path, sizeof path, "gpus[%d]", i);
		for (int l = 0; l < g->n_links; l++) {
			sim_link *lk = &g->links[l];
			if (lk->remote_gpu < 0)
				continue;
			if (lk->remote_gpu >= s->n_gpus)
				return fail(c, path, "nvlink",
				            "a link names GPU %d, but there are %d GPUs",
				            lk->remote_gpu, s->n_gpus);
			lk->remote = s->gpus[lk->remote_gpu].pci;
		}
		for (int j = 0; j < i; j++) {
			if (!strcmp(s->gpus[j].uuid, g->uuid))
				return fail(c, path, "uuid", "same UUID as gpus[%d]", j);
			if (!strcmp(s->gpus[j].pci.bus_id, g->pci.bus_id))
				return fail(c, path, "pci", "same PCI bus id as gpus[%d]", j);
		}
	}
	return true;
}

static void scenario_name(const char *file, char *out, size_t outlen)
{
	const char *b = strrchr(file, '/');
	b = b ? b + 1 : file;
	size_t n = strlen(b);
	if (n > 5 && !strcmp(b + n - 5, ".json"))
		n -= 5;
	snprintf(out, outlen, "%.*s", (int)n, b);
}

static bool parse_root(pctx *c, json_t *root, sim_scenario *s)
{
	static const char *const keys[] = {"schema",       "name", "description", "seed", "driver",
	                                   "gpu_defaults", "gpus", "processes",   NULL};
	long long schema = 0, seed = 0;
	if (!json_is_object(root))
		return fail(c, "", NULL, "a scenario is a JSON object");
	if (!check_keys(c, root, "", keys) ||
	    !get_int(c, root, "", "schema", true, 1, 1, &schema) ||
	    !get_str(c, root, "", "name", false, 63, s->name, sizeof s->name) ||
	    !get_str(c, root, "", "description", false, 255, s->description,
	             sizeof s->description) ||
	    !get_int(c, root, "", "seed", false, 0, (1LL << 53), &seed) ||
	    !parse_driver(c, root, s))
		return false;
	s->seed = (uint64_t)seed;
	c->seed = s->seed;
	if (!*s->name)
		scenario_name(c->file, s->name, sizeof s->name);
	json_t *dflt, *gpus;
	if (!get_obj(c, root, "", "gpu_defaults", false, &dflt) ||
	    !get_arr(c, root, "", "gpus", true, SIM_MAX_GPUS, &gpus))
		return false;
	if (dflt && !check_keys(c, dflt, "gpu_defaults", gpu_keys))
		return false;
	if (json_array_size(gpus) == 0)
		return fail(c, "", "gpus", "a scenario needs at least one GPU");
	s->gpus = calloc(json_array_size(gpus), sizeof *s->gpus);
	if (!s->gpus)
		return fail(c, "", "gpus", "out of memory");
	size_t i;
	json_t *gj;
	json_array_foreach(gpus, i, gj)
	{
		char path[32];
		snprintf(path, sizeof path, "gpus[%zu]", i);
		if (!json_is_object(gj))
			return fail(c, path, NULL, "expected an object, got %s", tname(gj));
		json_t *merged = merge_defaults(dflt, gj);
		if (!merged)
			return fail(c, path, NULL, "out of memory");
		s->gpus[i].index = (int)i;
		s->n_gpus = (int)i + 1;
		bool ok = parse_gpu(c, merged, path, &s->gpus[i]);
		json_decref(merged);
		if (!ok)
			return false;
	}
	return cross_check(c, s) && parse_processes(c, root, s);
}

void sim_scenario_free(sim_scenario *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->n_gpus; i++) {
		free(s->gpus[i].segments);
		free(s->gpus[i].episodes);
	}
	free(s->gpus);
	free(s->procs);
	free(s);
}

int sim_scenario_parse(const char *buf, size_t len, const char *filename, sim_scenario **out,
                       char *err, size_t errlen)
{
	*out = NULL;
	pctx c = {.buf = buf, .len = len, .file = filename, .err = err, .errlen = errlen};
	if (len > SIM_MAX_FILE_BYTES) {
		snprintf(err, errlen, "%s:1:1: file is larger than %u bytes", filename,
		         SIM_MAX_FILE_BYTES);
		return -1;
	}
	json_error_t je;
	json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		snprintf(err, errlen, "%s:%d:%d: %s", filename, je.line > 0 ? je.line : 1,
		         je.column > 0 ? je.column : 1, je.text);
		return -1;
	}
	sim_scenario *s = calloc(1, sizeof *s);
	if (!s) {
		json_decref(root);
		snprintf(err, errlen, "%s: out of memory", filename);
		return -1;
	}
	bool ok = parse_root(&c, root, s);
	json_decref(root);
	if (!ok) {
		sim_scenario_free(s);
		return -1;
	}
	*out = s;
	return 0;
}

int sim_scenario_load(const char *path, sim_scenario **out, char *err, size_t errlen)
{
	*out = NULL;
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap);
	while (buf) {
		size_t n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0 || len > SIM_MAX_FILE_BYTES)
			break;
		if (len == cap) {
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	bool rerr = ferror(f);
	fclose(f);
	if (!buf || rerr) {
		snprintf(err, errlen, "%s: %s", path, buf ? "read error" : "out of memory");
		free(buf);
		return -1;
	}
	int rc = sim_scenario_parse(buf, len, path, out, err, errlen);
	free(buf);
	return rc;
}
