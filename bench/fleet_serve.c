/*
 * fleet_serve.c - Prometheus's range query API (POST or GET /api/v1/query_range) over a
 * simulated fleet, computed point by point from the same description `gpuwhy sim fleet`
 * writes as OpenMetrics (simfleet_point), so a day of 1,000 GPUs is served without loading
 * 58 M points a metric into a TSDB. It evaluates what `gpuwhy fleet` asks, as Prometheus
 * does:
 *
 *   NAME                       a series' value at each step is its latest sample at most
 *                              5 minutes old (Prometheus 2's lookback, both ends included;
 *                              Prometheus 3 leaves out a sample exactly 5 minutes old);
 *                              series sorted by their labels
 *   NAME or (OTHER * NaN)      OTHER's series without their name, NaN, at the steps where
 *                              NAME has no series of the same labels
 *   anything else              an empty answer when it names none of the simulated metrics,
 *                              else HTTP 422 (never a wrong answer)
 *
 * bench/fleet_agree.sh checks the answers against a real Prometheus holding the same
 * OpenMetrics text. Every request's form is appended to --log, so the benchmark replays
 * exactly the same requests with curl.
 *
 * Usage: fleet_serve --port P --nodes N --gpus-per-node G --hours H --step S --start EPOCH
 *                    [--plant FILE] [--log FILE] [--cache 1]
 */
#include <ctype.h>
#include <math.h>
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fleet/fleet.h"
#include "util/strbuf.h"

#define LOOKBACK_MS 300000LL
#define MAX_VARIANTS 16

static simfleet *sf;
static simfleet_opts so;
static FILE *log_file;
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;

/* --cache: answers kept by their request's form and sent again as they are, so that a
 * measured client pays for the transfer and its own work, not for computing the answer. */
typedef struct cached {
	struct cached *next;
	char *form;
	gw_strbuf body;
	int status;
} cached;
static bool use_cache;
static cached *cache[4096];
static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;

static unsigned form_hash(const char *s)
{
	unsigned h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h % 4096;
}

static cached *cache_get(const char *form)
{
	pthread_mutex_lock(&cache_mu);
	cached *c = cache[form_hash(form)];
	while (c && strcmp(c->form, form))
		c = c->next;
	pthread_mutex_unlock(&cache_mu);
	return c;
}

static cached *cache_put(const char *form, gw_strbuf *body, int status)
{
	cached *c = calloc(1, sizeof *c);
	c->form = strdup(form);
	c->body = *body;
	c->status = status;
	*body = (gw_strbuf){0};
	pthread_mutex_lock(&cache_mu);
	unsigned h = form_hash(form);
	c->next = cache[h];
	cache[h] = c;
	pthread_mutex_unlock(&cache_mu);
	return c;
}

/* The series of one GPU told apart by their job labels: per step, whether it has a point. */
typedef struct {
	const void *job;
	char labels[1024];
	char *has;       /* [nsteps] */
	char (*val)[24]; /* [nsteps] */
} variant;

typedef struct {
	variant v[MAX_VARIANTS];
	int n;
	long nsteps;
} gpu_eval;

static long long sample_ms(long s)
{
	return llround((so.start + (double)s * so.step) * 1000.0);
}

static int variant_of(gpu_eval *e, int ni, int g, const void *job)
{
	for (int i = 0; i < e->n; i++)
		if (e->v[i].job == job)
			return i;
	char lb[1024];
	simfleet_labels(sf, ni, g, job, lb, sizeof lb);
	for (int i = 0; i < e->n; i++)
		if (!strcmp(e->v[i].labels, lb))
			return i; /* another plant, the same labels: one series */
	if (e->n == MAX_VARIANTS)
		return -1;
	variant *v = &e->v[e->n];
	v->job = job;
	memcpy(v->labels, lb, sizeof lb);
	if (!v->has) {
		v->has = calloc((size_t)e->nsteps, 1);
		v->val = calloc((size_t)e->nsteps, sizeof *v->val);
	} else
		memset(v->has, 0, (size_t)e->nsteps);
	return e->n++;
}

/* Metric m of one GPU at steps a + k*st (ms): each series' latest sample within the lookback. */
static void eval_gpu(gpu_eval *e, int ni, int g, prom_fleet_metric m, long long a, long long st)
{
	for (int i = 0; i < e->n; i++)
		memset(e->v[i].has, 0, (size_t)e->nsteps);
	e->n = 0;
	long ns = simfleet_samples(sf);
	long long t0 = sample_ms(0);
	long long step_ms = llround(so.step * 1000);
	/* the first sample inside the first step's lookback */
	long s = (a - LOOKBACK_MS - t0) / step_ms - 1;
	if (s < 0)
		s = 0;
	long last[MAX_VARIANTS];
	char lastval[MAX_VARIANTS][24];
	for (int i = 0; i < MAX_VARIANTS; i++)
		last[i] = -1;
	for (long k = 0; k < e->nsteps; k++) {
		long long t = a + k * st;
		for (; s < ns && sample_ms(s) <= t; s++) {
			char val[24];
			const void *job;
			if (!simfleet_point(sf, ni, g, s, m, val, sizeof val, &job))
				continue;
			int i = variant_of(e, ni, g, job);
			if (i < 0)
				continue;
			last[i] = s;
			memcpy(lastval[i], val, sizeof val);
		}
		for (int i = 0; i < e->n; i++)
			if (last[i] >= 0 && sample_ms(last[i]) >= t - LOOKBACK_MS) {
				e->v[i].has[k] = 1;
				memcpy(e->v[i].val[k], lastval[i], sizeof lastval[i]);
			}
	}
}

/* One series of the answer: its sort key (Prometheus orders a matrix by its labels) and JSON. */
typedef struct {
	char *key;
	gw_strbuf json;
} out_series;

typedef struct {
	out_series *s;
	int n, cap;
} answer;

typedef struct {
	char name[64], value[256];
} label;

static int label_cmp(const void *a, const void *b)
{
	return strcmp(((const label *)a)->name, ((const label *)b)->name);
}

static void put_time(gw_strbuf *b, long long ms)
{
	if (ms % 1000 == 0) {
		gw_sb_printf(b, "%lld", ms / 1000);
		return;
	}
	char f[8];
	snprintf(f, sizeof f, "%03lld", ms % 1000);
	for (int i = 2; i > 0 && f[i] == '0'; i--)
		f[i] = 0;
	gw_sb_printf(b, "%lld.%s", ms / 1000, f);
}

/* Prometheus's text of a value: the shortest that reads back, as the text's three decimals
 * without their trailing zeros. */
static void put_value(gw_strbuf *b, const char *v)
{
	size_t n = strlen(v);
	if (strchr(v, '.')) {
		while (n && v[n - 1] == '0')
			n--;
		if (n && v[n - 1] == '.')
			n--;
	}
	gw_sb_putc(b, '"');
	gw_sb_put(b, v, n);
	gw_sb_putc(b, '"');
}

/* A new series of the answer with labels (the text's {a="b",...}) and name (NULL: none). */
static gw_strbuf *add_series(answer *an, const char *text, const char *name)
{
	label l[32];
	int n = 0;
	memset(l, 0, sizeof l);
	if (name) {
		snprintf(l[n].name, sizeof l[n].name, "__name__");
		snprintf(l[n].value, sizeof l[n].value, "%s", name);
		n++;
	}
	for (const char *p = text + 1; *p && *p != '}' && n < 32;) {
		const char *eq = strchr(p, '='), *q = eq ? strchr(eq + 2, '"') : NULL;
		if (!eq || !q)
			break;
		snprintf(l[n].name, sizeof l[n].name, "%.*s", (int)(eq - p), p);
		snprintf(l[n].value, sizeof l[n].value, "%.*s", (int)(q - eq - 2), eq + 2);
		n++;
		p = q + 1 + (q[1] == ',');
	}
	qsort(l, (size_t)n, sizeof *l, label_cmp);
	if (an->n == an->cap) {
		an->cap = an->cap ? 2 * an->cap : 64;
		an->s = realloc(an->s, (size_t)an->cap * sizeof *an->s);
	}
	out_series *o = &an->s[an->n++];
	*o = (out_series){0};
	gw_strbuf key = {0};
	gw_sb_puts(&o->json, "{\"metric\":{");
	for (int i = 0; i < n; i++) {
		gw_sb_printf(&key, "%s\x01%s\x01", l[i].name, l[i].value);
		gw_sb_printf(&o->json, "%s\"%s\":\"%s\"", i ? "," : "", l[i].name, l[i].value);
	}
	gw_sb_puts(&o->json, "},\"values\":[");
	o->key = strdup(gw_sb_str(&key));
	gw_sb_free(&key);
	return &o->json;
}

static void add_point(gw_strbuf *b, bool first, long long t, const char *v)
{
	gw_sb_puts(b, first ? "[" : ",[");
	put_time(b, t);
	gw_sb_putc(b, ',');
	put_value(b, v);
	gw_sb_putc(b, ']');
}

static int series_cmp(const void *a, const void *b)
{
	return strcmp(((const out_series *)a)->key, ((const out_series *)b)->key);
}

/* Metric m, or with alt >= 0 "m or (alt * NaN)", over the steps, every GPU. */
static void eval(answer *an, int m, int alt, long long a, long long st, long nsteps)
{
	gpu_eval e = {.nsteps = nsteps}, x = {.nsteps = nsteps};
	const char *name = gpu_metrics[prom_fleet_metric_id((prom_fleet_metric)m)].dcgm;
	for (int ni = 0; ni < so.nodes; ni++)
		for (int g = 0; g < so.gpus_per_node; g++) {
			eval_gpu(&e, ni, g, (prom_fleet_metric)m, a, st);
			for (int i = 0; i < e.n; i++) {
				gw_strbuf *b = NULL;
				for (long k = 0; k < nsteps; k++)
					if (e.v[i].has[k]) {
						if (!b)
							b = add_series(an, e.v[i].labels, name);
						add_point(b, b->len && b->p[b->len - 1] == '[',
						          a + k * st, e.v[i].val[k]);
					}
			}
			if (alt < 0)
				continue;
			eval_gpu(&x, ni, g, (prom_fleet_metric)alt, a, st);
			for (int j = 0; j < x.n; j++) {
				gw_strbuf *b = NULL;
				int i;
				for (i = 0; i < e.n && strcmp(e.v[i].labels, x.v[j].labels); i++)
					;
				for (long k = 0; k < nsteps; k++)
					if (x.v[j].has[k] && !(i < e.n && e.v[i].has[k])) {
						if (!b)
							b = add_series(an, x.v[j].labels, NULL);
						add_point(b, b->len && b->p[b->len - 1] == '[',
						          a + k * st, "NaN");
					}
			}
		}
	for (int i = 0; i < MAX_VARIANTS; i++) {
		free(e.v[i].has), free(e.v[i].val);
		free(x.v[i].has), free(x.v[i].val);
	}
}

/* The fleet metric named exactly by s[0..n), -1 when none. */
static int metric_named(const char *s, size_t n)
{
	for (int m = 0; m < PF__COUNT; m++) {
		const char *name = gpu_metrics[prom_fleet_metric_id((prom_fleet_metric)m)].dcgm;
		if (strlen(name) == n && !strncmp(name, s, n))
			return m;
	}
	return -1;
}

/* Whether q names a metric the text holds (outside quoted strings). */
static bool names_simulated(const char *q)
{
	for (const char *p = q; *p;) {
		if (*p == '"') {
			for (p++; *p && *p != '"'; p += *p == '\\' && p[1] ? 2 : 1)
				;
			p += *p != 0;
		} else if (isalpha((unsigned char)*p) || *p == '_' || *p == ':') {
			const char *b = p;
			while (isalnum((unsigned char)*p) || *p == '_' || *p == ':')
				p++;
			size_t n = (size_t)(p - b);
			if (metric_named(b, n) >= 0)
				return true;
			if (simfleet_node_cpu(sf) && n >= 13 && !strncmp(b, "node_cpu_seconds", 16))
				return true;
		} else
			p++;
	}
	return false;
}

/* The answer's body and HTTP status for query over [start, end] at step (seconds). */
static int answer_query(const char *q, double start, double end, double step, gw_strbuf *out)
{
	char m1[128], m2[128], tail[8];
	int m = -1, alt = -1;
	if (sscanf(q, "%127[A-Za-z0-9_:]%7s", m1, tail) == 1)
		m = metric_named(m1, strlen(m1));
	else if (sscanf(q, "%127[A-Za-z0-9_:] or (%127[A-Za-z0-9_:] * NaN%7s", m1, m2, tail) == 3 &&
	         !strcmp(tail, ")")) {
		m = metric_named(m1, strlen(m1));
		alt = metric_named(m2, strlen(m2));
		if (alt < 0)
			m = -1;
	}
	if (!(step > 0) || !(end >= start)) {
		gw_sb_puts(out, "{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"bad "
		                "start, end or step\"}");
		return 400;
	}
	if (m < 0 && names_simulated(q)) {
		gw_sb_puts(out, "{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"not "
		                "evaluated by the benchmark's server\"}");
		return 422;
	}
	answer an = {0};
	long long a = llround(start * 1000), st = llround(step * 1000),
	          nsteps = (llround(end * 1000) - a) / st + 1;
	if (m >= 0)
		eval(&an, m, alt, a, st, (long)nsteps);
	qsort(an.s, (size_t)an.n, sizeof *an.s, series_cmp);
	gw_sb_puts(out, "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[");
	for (int i = 0; i < an.n; i++) {
		gw_sb_puts(out, i ? "," : "");
		gw_sb_put(out, an.s[i].json.p, an.s[i].json.len);
		gw_sb_puts(out, "]}");
		gw_sb_free(&an.s[i].json);
		free(an.s[i].key);
	}
	free(an.s);
	gw_sb_puts(out, "]}}");
	return 200;
}

static int hexval(int c)
{
	return isdigit(c) ? c - '0' : tolower(c) - 'a' + 10;
}

/* Field name of a form (a=b&c=d), percent-decoded, malloc'd; NULL when absent. */
static char *form_get(const char *form, const char *name)
{
	size_t nl = strlen(name);
	for (const char *p = form; p && *p; p = strchr(p, '&') ? strchr(p, '&') + 1 : NULL) {
		if (strncmp(p, name, nl) || p[nl] != '=')
			continue;
		const char *v = p + nl + 1;
		size_t n = strcspn(v, "&");
		char *out = malloc(n + 1), *o = out;
		for (size_t i = 0; i < n; i++) {
			if (v[i] == '+')
				*o++ = ' ';
			else if (v[i] == '%' && i + 2 < n + 1 &&
			         isxdigit((unsigned char)v[i + 1]) &&
			         isxdigit((unsigned char)v[i + 2])) {
				*o++ = (char)(hexval(v[i + 1]) * 16 + hexval(v[i + 2]));
				i += 2;
			} else
				*o++ = v[i];
		}
		*o = 0;
		return out;
	}
	return NULL;
}

static enum MHD_Result get_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                               const char *value)
{
	gw_strbuf *b = cls;
	(void)kind;
	gw_sb_printf(b, "%s%s=", b->len ? "&" : "", key);
	for (const char *p = value ? value : ""; *p; p++)
		if (isalnum((unsigned char)*p) || strchr("-_.~", *p))
			gw_sb_putc(b, *p);
		else
			gw_sb_printf(b, "%%%02X", (unsigned char)*p);
	return MHD_YES;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *data,
                              size_t *size, void **con)
{
	(void)cls, (void)version;
	gw_strbuf *form = *con;
	if (!form) {
		*con = calloc(1, sizeof(gw_strbuf));
		return MHD_YES;
	}
	if (*size) {
		gw_sb_put(form, data, *size);
		*size = 0;
		return MHD_YES;
	}
	if (!strcmp(method, "GET"))
		MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, get_arg, form);
	gw_strbuf body = {0};
	int status = 404;
	const char *f = gw_sb_str(form);
	cached *hit = NULL;
	if (!strcmp(url, "/api/v1/query_range")) {
		if (log_file) {
			pthread_mutex_lock(&log_mu);
			fprintf(log_file, "%s\n", f);
			fflush(log_file);
			pthread_mutex_unlock(&log_mu);
		}
		hit = use_cache ? cache_get(f) : NULL;
		if (!hit) {
			char *q = form_get(f, "query"), *a = form_get(f, "start"),
			     *b = form_get(f, "end"), *st = form_get(f, "step");
			status = answer_query(q ? q : "", a ? atof(a) : NAN, b ? atof(b) : NAN,
			                      st ? atof(st) : NAN, &body);
			free(q), free(a), free(b), free(st);
			if (use_cache)
				hit = cache_put(f, &body, status);
		}
	} else if (!strcmp(url, "/-/ready"))
		status = 200, gw_sb_puts(&body, "ready\n");
	struct MHD_Response *r =
	    hit ? MHD_create_response_from_buffer(hit->body.len, hit->body.p,
	                                          MHD_RESPMEM_PERSISTENT)
	        : MHD_create_response_from_buffer(body.len, body.p, MHD_RESPMEM_MUST_FREE);
	MHD_add_response_header(r, "Content-Type", "application/json");
	enum MHD_Result ret = MHD_queue_response(c, (unsigned)(hit ? hit->status : status), r);
	MHD_destroy_response(r);
	return ret;
}

static void done(void *cls, struct MHD_Connection *c, void **con, enum MHD_RequestTerminationCode t)
{
	(void)cls, (void)c, (void)t;
	if (*con) {
		gw_sb_free(*con);
		free(*con);
	}
	*con = NULL;
}

int main(int argc, char **argv)
{
	int port = 0;
	so = (simfleet_opts){.nodes = 4, .gpus_per_node = 8, .hours = 6, .step = 15};
	for (int i = 1; i + 1 < argc; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];
		if (!strcmp(k, "--port"))
			port = atoi(v);
		else if (!strcmp(k, "--nodes"))
			so.nodes = atoi(v);
		else if (!strcmp(k, "--gpus-per-node"))
			so.gpus_per_node = atoi(v);
		else if (!strcmp(k, "--hours"))
			so.hours = atof(v);
		else if (!strcmp(k, "--step"))
			so.step = atof(v);
		else if (!strcmp(k, "--start"))
			so.start = atof(v);
		else if (!strcmp(k, "--plant"))
			so.plant = v;
		else if (!strcmp(k, "--cache"))
			use_cache = atoi(v) != 0;
		else if (!strcmp(k, "--log"))
			log_file = fopen(v, "w");
		else {
			fprintf(stderr, "fleet_serve: unknown option %s\n", k);
			return 2;
		}
	}
	gw_fail err = {0};
	if (!port || !(sf = simfleet_open(&so, &err))) {
		fprintf(stderr, "fleet_serve: %s\n", port ? err.why : "--port missing");
		return 2;
	}
	/* the signals waited for below, blocked before the server's threads inherit the mask */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK); /* loopback only */
	struct MHD_Daemon *d = MHD_start_daemon(
	    MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD, (uint16_t)port, NULL,
	    NULL, handle, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
	    MHD_OPTION_NOTIFY_COMPLETED, done, NULL, MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "fleet_serve: cannot listen on 127.0.0.1:%d\n", port);
		return 3;
	}
	int sig;
	sigwait(&set, &sig);
	MHD_stop_daemon(d);
	simfleet_close(sf);
	if (log_file)
		fclose(log_file);
	return 0;
}
